//! The `okey.v1.MatchmakingService` API over gRPC: the only module of this service that knows the
//! generated (prost) types; it converts them to domain types and maps domain errors to
//! `tonic::Status` in one place.
//!
//! Every RPC answers UNIMPLEMENTED (`not_implemented_yet`) for now: the contract is in place, the
//! behaviour arrives with a later matchmaking issue.

use okey_platform::Dependencies;
use okey_platform::status::not_implemented_yet;
use okey_proto::v1::matchmaking_service_server::MatchmakingService;
use okey_proto::v1::{
    CancelTicketRequest, CancelTicketResponse, CreateRoomRequest, CreateRoomResponse,
    FindTableRequest, FindTableResponse, GetRoomRequest, GetRoomResponse, GetTicketRequest,
    GetTicketResponse, JoinRoomRequest, JoinRoomResponse, LeaveRoomRequest, LeaveRoomResponse,
    StartRoomRequest, StartRoomResponse, WatchTicketRequest, WatchTicketResponse,
};
use tonic::{Request, Response, Status};

/// Where the RPCs of this API are going to come from.
const ARRIVES_WITH: &str = "a later matchmaking issue";

/// The MatchmakingService implementation.
#[derive(Debug, Clone)]
pub struct MatchmakingApi {
    /// Postgres (rooms, tickets), NATS and Redis (queues).
    #[allow(dead_code)] // Used once the RPCs are served.
    dependencies: Dependencies,
}

impl MatchmakingApi {
    /// An API over the service's connections.
    pub fn new(dependencies: Dependencies) -> Self {
        MatchmakingApi { dependencies }
    }
}

#[tonic::async_trait]
impl MatchmakingService for MatchmakingApi {
    async fn find_table(
        &self,
        _request: Request<FindTableRequest>,
    ) -> Result<Response<FindTableResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.MatchmakingService/FindTable",
            ARRIVES_WITH,
        ))
    }

    async fn get_ticket(
        &self,
        _request: Request<GetTicketRequest>,
    ) -> Result<Response<GetTicketResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.MatchmakingService/GetTicket",
            ARRIVES_WITH,
        ))
    }

    type WatchTicketStream = tonic::codegen::BoxStream<WatchTicketResponse>;

    async fn watch_ticket(
        &self,
        _request: Request<WatchTicketRequest>,
    ) -> Result<Response<Self::WatchTicketStream>, Status> {
        Err(not_implemented_yet(
            "okey.v1.MatchmakingService/WatchTicket",
            ARRIVES_WITH,
        ))
    }

    async fn cancel_ticket(
        &self,
        _request: Request<CancelTicketRequest>,
    ) -> Result<Response<CancelTicketResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.MatchmakingService/CancelTicket",
            ARRIVES_WITH,
        ))
    }

    async fn create_room(
        &self,
        _request: Request<CreateRoomRequest>,
    ) -> Result<Response<CreateRoomResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.MatchmakingService/CreateRoom",
            ARRIVES_WITH,
        ))
    }

    async fn join_room(
        &self,
        _request: Request<JoinRoomRequest>,
    ) -> Result<Response<JoinRoomResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.MatchmakingService/JoinRoom",
            ARRIVES_WITH,
        ))
    }

    async fn get_room(
        &self,
        _request: Request<GetRoomRequest>,
    ) -> Result<Response<GetRoomResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.MatchmakingService/GetRoom",
            ARRIVES_WITH,
        ))
    }

    async fn leave_room(
        &self,
        _request: Request<LeaveRoomRequest>,
    ) -> Result<Response<LeaveRoomResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.MatchmakingService/LeaveRoom",
            ARRIVES_WITH,
        ))
    }

    async fn start_room(
        &self,
        _request: Request<StartRoomRequest>,
    ) -> Result<Response<StartRoomResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.MatchmakingService/StartRoom",
            ARRIVES_WITH,
        ))
    }
}
