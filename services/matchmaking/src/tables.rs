//! The table service as matchmaking calls it: CreateTable with the matched players already
//! seated, under the service identity (role `matchmaker`). With `grpc`, the only module that
//! knows the generated types: this one for the calls the service makes, `grpc` for those it serves.
//!
//! The claim's id is the request id, so a retry, or another replica finishing a claim whose
//! replica died, gets the first table back. A refused service token (UNAUTHENTICATED) is dropped
//! and the call retried with a fresh one; UNAVAILABLE and timeouts are retried with backoff.

use std::time::Duration;

use okey_platform::service_token::ServiceTokens;
use okey_platform::telemetry::{TracedChannel, traced};
use okey_proto::v1 as pb;
use okey_proto::v1::table_service_client::TableServiceClient;
use tonic::Code;

use crate::domain::Occupant;
use crate::store::{Claim, ClaimOrigin};
use crate::wire::{bot_level_to_proto, rules_to_proto};

/// Why a table could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// Worth retrying later (the table service or accounts is down, the token was refused).
    #[error("the table service is unavailable: {0}")]
    Unavailable(String),
    /// The table service refused the request itself; retrying will not help.
    #[error("the table service refused the table: {0}")]
    Refused(String),
}

/// A client of the table service.
#[derive(Clone)]
pub struct Tables {
    client: TableServiceClient<TracedChannel>,
    tokens: ServiceTokens,
}

impl Tables {
    /// A client of the service at `url` (connected lazily, reconnecting by itself).
    pub fn new(url: &str, tokens: ServiceTokens) -> Result<Tables, String> {
        let channel = tonic::transport::Endpoint::from_shared(url.to_owned())
            .map_err(|e| format!("matchmaking.table_url: {e}"))?
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(10))
            .connect_lazy();
        Ok(Tables {
            client: TableServiceClient::new(traced(channel, url)),
            tokens,
        })
    }

    /// Creates the claim's table (a few tries on passing failures); returns `tables/{id}`.
    pub async fn create(&self, claim: &Claim) -> Result<String, CreateError> {
        let mut wait = Duration::from_millis(100);
        let mut last = String::new();
        for _ in 0..5 {
            match self.create_once(claim).await {
                Ok(name) => return Ok(name),
                Err(CreateError::Unavailable(e)) => {
                    last = e;
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(2));
                }
                Err(e) => return Err(e),
            }
        }
        Err(CreateError::Unavailable(last))
    }

    async fn create_once(&self, claim: &Claim) -> Result<String, CreateError> {
        let request = pb::CreateTableRequest {
            request_id: claim.claim_id.to_string(),
            rules: Some(rules_to_proto(&claim.rules)),
            seats: claim
                .seats
                .iter()
                .enumerate()
                .map(|(seat, o)| {
                    let (occupant, display_name) = match o {
                        Occupant::Player { name, display_name } => (
                            pb::seat_assignment::Occupant::Player(name.clone()),
                            display_name.clone(),
                        ),
                        Occupant::Bot(level) => (
                            pb::seat_assignment::Occupant::Bot(bot_level_to_proto(*level) as i32),
                            String::new(),
                        ),
                    };
                    pb::SeatAssignment {
                        seat: seat as i32,
                        occupant: Some(occupant),
                        display_name,
                    }
                })
                .collect(),
            empty_seat_bots: None,
            origin: match claim.origin {
                ClaimOrigin::QuickPlay => pb::TableOrigin::QuickPlay,
                ClaimOrigin::PrivateRoom => pb::TableOrigin::PrivateRoom,
            } as i32,
            members: claim.members.clone(),
            spectators_allowed: Some(claim.spectators_allowed),
        };
        let (request, token) = self
            .tokens
            .request(request)
            .await
            .map_err(|e| CreateError::Unavailable(e.to_string()))?;
        match self.client.clone().create_table(request).await {
            Ok(response) => response
                .into_inner()
                .table
                .map(|t| t.name)
                .ok_or_else(|| CreateError::Refused("no table in the answer".into())),
            Err(status) => match status.code() {
                Code::Unauthenticated => {
                    self.tokens.refused(&token).await;
                    Err(CreateError::Unavailable(format!(
                        "service token refused: {}",
                        status.message()
                    )))
                }
                Code::Unavailable
                | Code::DeadlineExceeded
                | Code::Aborted
                | Code::ResourceExhausted
                | Code::Unknown
                | Code::Cancelled => Err(CreateError::Unavailable(format!(
                    "{}: {}",
                    status.code(),
                    status.message()
                ))),
                _ => Err(CreateError::Refused(format!(
                    "{}: {}",
                    status.code(),
                    status.message()
                ))),
            },
        }
    }
}
