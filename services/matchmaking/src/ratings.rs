//! The scoring service as matchmaking asks it: a player's rating (GetRating, under this service's
//! token), so a ticket searches within a window around it. Matchmaking never reads scoring's
//! database. With `grpc`, `tables` and `wire`, a module that knows the generated types.
//!
//! A rating is a preference, not a rule: when scoring does not answer in time (or no
//! `matchmaking.scoring_url` is set), the ticket searches at a new player's rating
//! ([`NEW_PLAYER_RATING`]) rather than failing, and the service logs why.

use std::time::Duration;

use okey_platform::service_token::ServiceTokens;
use okey_platform::telemetry::{TracedChannel, traced};
use okey_proto::v1 as pb;
use okey_proto::v1::scoring_service_client::ScoringServiceClient;
use tonic::Code;
use uuid::Uuid;

use crate::domain::NEW_PLAYER_RATING;

/// How long FindTable waits for a rating.
const ASK_FOR: Duration = Duration::from_millis(1500);

/// A client of the scoring service's ratings (`None` inside: none configured).
#[derive(Clone)]
pub struct Ratings {
    client: Option<ScoringServiceClient<TracedChannel>>,
    tokens: ServiceTokens,
}

impl Ratings {
    /// A client of the service at `url` (connected lazily); an empty `url` asks nobody.
    pub fn new(url: &str, tokens: ServiceTokens) -> Result<Ratings, String> {
        let client = if url.is_empty() {
            None
        } else {
            let channel = tonic::transport::Endpoint::from_shared(url.to_owned())
                .map_err(|e| format!("matchmaking.scoring_url: {e}"))?
                .connect_timeout(Duration::from_secs(1))
                .timeout(ASK_FOR)
                .connect_lazy();
            Some(ScoringServiceClient::new(traced(channel, url)))
        };
        Ok(Ratings { client, tokens })
    }

    /// `player`'s rating points, or a new player's when scoring cannot say.
    pub async fn of(&self, player: Uuid) -> i32 {
        let Some(client) = &self.client else {
            return NEW_PLAYER_RATING;
        };
        let asked = tokio::time::timeout(2 * ASK_FOR, self.ask(client, player)).await;
        match asked.unwrap_or_else(|_| Err("no answer in time".into())) {
            Ok(rating) => rating,
            Err(why) => {
                tracing::warn!(%player, %why, "no rating from scoring; the ticket searches at a new player's");
                NEW_PLAYER_RATING
            }
        }
    }

    async fn ask(
        &self,
        client: &ScoringServiceClient<TracedChannel>,
        player: Uuid,
    ) -> Result<i32, String> {
        let request = pb::GetRatingRequest {
            player: format!("players/{player}"),
        };
        let (request, token) = self
            .tokens
            .request(request)
            .await
            .map_err(|e| e.to_string())?;
        match client.clone().get_rating(request).await {
            Ok(answer) => answer
                .into_inner()
                .rating
                .map(|r| r.rating)
                .ok_or_else(|| "no rating in the answer".into()),
            Err(status) => {
                if status.code() == Code::Unauthenticated {
                    self.tokens.refused(&token).await;
                }
                Err(format!("{}: {}", status.code(), status.message()))
            }
        }
    }
}
