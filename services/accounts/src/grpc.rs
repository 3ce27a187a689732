//! The `okey.v1.AccountsService` API over gRPC: the only module of this service that knows the
//! generated (prost) types; it converts them to domain types and maps domain errors to
//! `tonic::Status` in one place.
//!
//! Every RPC answers UNIMPLEMENTED (`not_implemented_yet`) for now: the contract is in place, the
//! behaviour arrives with issue 6 (accounts and authentication).

use okey_platform::Dependencies;
use okey_platform::status::not_implemented_yet;
use okey_proto::v1::accounts_service_server::AccountsService;
use okey_proto::v1::{
    GetProfileRequest, GetProfileResponse, GetStatisticsRequest, GetStatisticsResponse,
    ListPublicKeysRequest, ListPublicKeysResponse, RefreshSessionRequest, RefreshSessionResponse,
    SignInAsGuestRequest, SignInAsGuestResponse, SignInRequest, SignInResponse, SignOutRequest,
    SignOutResponse, UpdateProfileRequest, UpdateProfileResponse, UpgradeGuestRequest,
    UpgradeGuestResponse,
};
use tonic::{Request, Response, Status};

/// Where the RPCs of this API are going to come from.
const ARRIVES_WITH: &str = "issue 6 (accounts and authentication)";

/// The AccountsService implementation.
#[derive(Debug, Clone)]
pub struct AccountsApi {
    /// Postgres (accounts, refresh tokens), NATS (statistics from table and scoring events) and Redis (sign-in rate limits).
    #[allow(dead_code)] // Used once the RPCs are served.
    dependencies: Dependencies,
}

impl AccountsApi {
    /// An API over the service's connections.
    pub fn new(dependencies: Dependencies) -> Self {
        AccountsApi { dependencies }
    }
}

#[tonic::async_trait]
impl AccountsService for AccountsApi {
    async fn sign_in_as_guest(
        &self,
        _request: Request<SignInAsGuestRequest>,
    ) -> Result<Response<SignInAsGuestResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.AccountsService/SignInAsGuest",
            ARRIVES_WITH,
        ))
    }

    async fn upgrade_guest(
        &self,
        _request: Request<UpgradeGuestRequest>,
    ) -> Result<Response<UpgradeGuestResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.AccountsService/UpgradeGuest",
            ARRIVES_WITH,
        ))
    }

    async fn sign_in(
        &self,
        _request: Request<SignInRequest>,
    ) -> Result<Response<SignInResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.AccountsService/SignIn",
            ARRIVES_WITH,
        ))
    }

    async fn refresh_session(
        &self,
        _request: Request<RefreshSessionRequest>,
    ) -> Result<Response<RefreshSessionResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.AccountsService/RefreshSession",
            ARRIVES_WITH,
        ))
    }

    async fn sign_out(
        &self,
        _request: Request<SignOutRequest>,
    ) -> Result<Response<SignOutResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.AccountsService/SignOut",
            ARRIVES_WITH,
        ))
    }

    async fn get_profile(
        &self,
        _request: Request<GetProfileRequest>,
    ) -> Result<Response<GetProfileResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.AccountsService/GetProfile",
            ARRIVES_WITH,
        ))
    }

    async fn update_profile(
        &self,
        _request: Request<UpdateProfileRequest>,
    ) -> Result<Response<UpdateProfileResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.AccountsService/UpdateProfile",
            ARRIVES_WITH,
        ))
    }

    async fn get_statistics(
        &self,
        _request: Request<GetStatisticsRequest>,
    ) -> Result<Response<GetStatisticsResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.AccountsService/GetStatistics",
            ARRIVES_WITH,
        ))
    }

    async fn list_public_keys(
        &self,
        _request: Request<ListPublicKeysRequest>,
    ) -> Result<Response<ListPublicKeysResponse>, Status> {
        Err(not_implemented_yet(
            "okey.v1.AccountsService/ListPublicKeys",
            ARRIVES_WITH,
        ))
    }
}
