//! The `okey.v1.ScoringService` API over gRPC: the only module of this service that knows the
//! generated (prost) types; it converts them to domain types and maps domain errors to
//! `tonic::Status` in one place.
//!
//! Every RPC answers UNIMPLEMENTED (`not_implemented_yet`) for now: the contract is in place, the
//! behaviour arrives with a later scoring issue.

use okey_platform::Dependencies;
use okey_platform::status::not_implemented_yet;
use okey_proto::v1::scoring_service_server::ScoringService;
use okey_proto::v1::{
    GetMatchResultRequest, GetMatchResultResponse, ListLedgerEntriesRequest,
    ListLedgerEntriesResponse, ListMatchResultsRequest, ListMatchResultsResponse,
    ListStandingsRequest, ListStandingsResponse,
};
use tonic::{Request, Response, Status};

/// Where the RPCs of this API are going to come from.
const ARRIVES_WITH: &str = "a later scoring issue";

/// The ScoringService implementation.
#[derive(Debug, Clone)]
pub struct ScoringApi {
    /// Postgres (ledgers, results) and NATS (table events).
    #[allow(dead_code)] // Used once the RPCs are served.
    dependencies: Dependencies,
}

impl ScoringApi {
    /// An API over the service's connections.
    pub fn new(dependencies: Dependencies) -> Self {
        ScoringApi { dependencies }
    }
}

#[tonic::async_trait]
impl ScoringService for ScoringApi {
    async fn list_standings(
        &self,
        _request: Request<ListStandingsRequest>,
    ) -> Result<Response<ListStandingsResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.ScoringService/ListStandings",
            ARRIVES_WITH,
        ))
    }

    async fn list_ledger_entries(
        &self,
        _request: Request<ListLedgerEntriesRequest>,
    ) -> Result<Response<ListLedgerEntriesResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.ScoringService/ListLedgerEntries",
            ARRIVES_WITH,
        ))
    }

    async fn get_match_result(
        &self,
        _request: Request<GetMatchResultRequest>,
    ) -> Result<Response<GetMatchResultResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.ScoringService/GetMatchResult",
            ARRIVES_WITH,
        ))
    }

    async fn list_match_results(
        &self,
        _request: Request<ListMatchResultsRequest>,
    ) -> Result<Response<ListMatchResultsResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.ScoringService/ListMatchResults",
            ARRIVES_WITH,
        ))
    }
}
