//! The `okey.v1.TableService` API over gRPC: the only module of this service that knows the
//! generated (prost) types; it converts them to domain types and maps domain errors to
//! `tonic::Status` in one place.
//!
//! Every RPC answers UNIMPLEMENTED (`not_implemented_yet`) for now: the contract is in place, the
//! behaviour arrives with issue 5 (the event-sourced table service).

use okey_platform::Dependencies;
use okey_platform::status::not_implemented_yet;
use okey_proto::v1::table_service_server::TableService;
use okey_proto::v1::{
    CreateTableRequest, CreateTableResponse, GetSeatViewRequest, GetSeatViewResponse,
    GetTableRequest, GetTableResponse, JoinSeatRequest, JoinSeatResponse, LeaveSeatRequest,
    LeaveSeatResponse, ListLegalActionsRequest, ListLegalActionsResponse, SubmitCommandRequest,
    SubmitCommandResponse, WatchTableRequest, WatchTableResponse,
};
use tonic::{Request, Response, Status};

/// Where the RPCs of this API are going to come from.
const ARRIVES_WITH: &str = "issue 5 (the event-sourced table service)";

/// The TableService implementation.
#[derive(Debug, Clone)]
pub struct TableApi {
    /// Postgres (the event store), NATS (the published events) and Redis (turn deadlines, presence).
    #[allow(dead_code)] // Used once the RPCs are served.
    dependencies: Dependencies,
}

impl TableApi {
    /// An API over the service's connections.
    pub fn new(dependencies: Dependencies) -> Self {
        TableApi { dependencies }
    }
}

#[tonic::async_trait]
impl TableService for TableApi {
    async fn create_table(
        &self,
        _request: Request<CreateTableRequest>,
    ) -> Result<Response<CreateTableResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.TableService/CreateTable",
            ARRIVES_WITH,
        ))
    }

    async fn get_table(
        &self,
        _request: Request<GetTableRequest>,
    ) -> Result<Response<GetTableResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.TableService/GetTable",
            ARRIVES_WITH,
        ))
    }

    async fn join_seat(
        &self,
        _request: Request<JoinSeatRequest>,
    ) -> Result<Response<JoinSeatResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.TableService/JoinSeat",
            ARRIVES_WITH,
        ))
    }

    async fn leave_seat(
        &self,
        _request: Request<LeaveSeatRequest>,
    ) -> Result<Response<LeaveSeatResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.TableService/LeaveSeat",
            ARRIVES_WITH,
        ))
    }

    async fn get_seat_view(
        &self,
        _request: Request<GetSeatViewRequest>,
    ) -> Result<Response<GetSeatViewResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.TableService/GetSeatView",
            ARRIVES_WITH,
        ))
    }

    async fn submit_command(
        &self,
        _request: Request<SubmitCommandRequest>,
    ) -> Result<Response<SubmitCommandResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.TableService/SubmitCommand",
            ARRIVES_WITH,
        ))
    }

    async fn list_legal_actions(
        &self,
        _request: Request<ListLegalActionsRequest>,
    ) -> Result<Response<ListLegalActionsResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.TableService/ListLegalActions",
            ARRIVES_WITH,
        ))
    }

    type WatchTableStream = tonic::codegen::BoxStream<WatchTableResponse>;

    async fn watch_table(
        &self,
        _request: Request<WatchTableRequest>,
    ) -> Result<Response<Self::WatchTableStream>, Status> {
        Err(not_implemented_yet(
            "okey.v1.TableService/WatchTable",
            ARRIVES_WITH,
        ))
    }
}
