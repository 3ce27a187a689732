//! The `okey.v1.AccountsService` API over gRPC: the only module of this service that knows the
//! generated (prost) types. It converts them to domain types, reads the caller that the platform's
//! authentication layer put on the request, and maps [`AccountsError`] to `tonic::Status` in one
//! place ([`to_status`]). Requests are never logged: they carry passwords and tokens.

use chrono::{DateTime, Utc};
use ipnet::IpNet;
use okey_platform::Secret;
use okey_platform::auth::{Caller, Role};
use okey_platform::fields;
use okey_platform::status::{self, Reason};
use okey_proto::v1 as pb;
use okey_proto::v1::accounts_service_server::AccountsService;
use tonic::{Request, Response, Status};
use uuid::Uuid;

use crate::accounts::{
    Account, AccountKind, Accounts, AccountsError, Profile, ProfileChange, Session,
};
use crate::limiter::client_address;

/// The AccountsService implementation.
#[derive(Clone)]
pub struct AccountsApi {
    accounts: Accounts,
    /// `sign_in.trusted_proxies`: peers whose `x-forwarded-for` names the client.
    trusted_proxies: Vec<IpNet>,
}

impl AccountsApi {
    /// The API over the service's state; calls from `trusted_proxies` are counted against the
    /// client they forward for.
    pub fn new(accounts: Accounts, trusted_proxies: Vec<IpNet>) -> Self {
        AccountsApi {
            accounts,
            trusted_proxies,
        }
    }

    /// The address the call's limits are kept for ([`client_address`]).
    fn address<T>(&self, request: &Request<T>) -> String {
        let forwarded = request
            .metadata()
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok());
        client_address(request.remote_addr(), forwarded, &self.trusted_proxies)
    }
}

/// The one mapping from domain errors to statuses (see common.proto's error model).
pub fn to_status(error: AccountsError) -> Status {
    match error {
        AccountsError::InvalidArgument {
            field,
            reason,
            message,
        } => status::invalid_argument(reason, field, message),
        e @ AccountsError::InvalidCredentials => {
            status::error(Reason::InvalidCredentials, e.to_string())
        }
        e @ (AccountsError::TooManyAttempts { retry_after }
        | AccountsError::TooManyGuests { retry_after }) => {
            status::retry_after(Reason::TooManyAttempts, retry_after, e.to_string())
        }
        e @ AccountsError::UsernameTaken => status::error(Reason::UsernameTaken, e.to_string()),
        e @ AccountsError::NotAGuest => status::error(Reason::NotAGuest, e.to_string()),
        e @ AccountsError::RefreshTokenReused => {
            status::error(Reason::RefreshTokenReused, e.to_string())
        }
        e @ (AccountsError::RefreshTokenInvalid | AccountsError::Unauthenticated) => {
            status::error(Reason::TokenInvalid, e.to_string())
        }
        e @ AccountsError::NotFound => status::error(Reason::PlayerNotFound, e.to_string()),
        e @ AccountsError::NotYours => status::error(Reason::NotYourProfile, e.to_string()),
        e @ AccountsError::InvalidClientCredentials => {
            status::error(Reason::InvalidClientCredentials, e.to_string())
        }
        e @ (AccountsError::Database(_) | AccountsError::Redis(_)) => {
            tracing::error!(error = %e, "dependency failed");
            status::error(
                Reason::DependencyUnavailable,
                "a dependency of the accounts service is unavailable; retry",
            )
        }
        e @ AccountsError::StoredAnswerUnreadable => {
            tracing::error!(error = %e, "a stored answer cannot be read");
            status::error(
                Reason::StoredAnswerUnreadable,
                format!("{e}; the request was handled once and is not played again"),
            )
        }
        e @ AccountsError::Internal(_) => {
            tracing::error!(error = %e, "internal error");
            status::internal()
        }
    }
}

/// The string fields of a request: text the store can hold ([`fields::text`]).
fn texts(fields: &[(&str, &str)]) -> Result<(), Status> {
    fields
        .iter()
        .try_for_each(|(field, value)| fields::text(field, value).map(drop))
}

fn caller<T>(request: &Request<T>) -> Result<Uuid, Status> {
    let caller = request
        .extensions()
        .get::<Caller>()
        .ok_or_else(|| to_status(AccountsError::Unauthenticated))?;
    caller.account()
}

/// Reads `players/{id}` or `players/me` (then `suffix`, e.g. `/statistics`). An empty name is
/// `missing_field`, any other that is not of this form `invalid_name`.
fn player_name(
    name: &str,
    suffix: &str,
    me: Result<Uuid, Status>,
    field: &'static str,
) -> Result<Uuid, Status> {
    fields::text(field, name)?;
    if name.is_empty() {
        return Err(status::invalid_argument(
            Reason::MissingField,
            field,
            format!("{field} is required: `players/{{player}}{suffix}` or `players/me{suffix}`"),
        ));
    }
    let bad = || {
        status::invalid_argument(
            Reason::InvalidName,
            field,
            format!("expected `players/{{player}}{suffix}` or `players/me{suffix}`"),
        )
    };
    let id = name
        .strip_prefix("players/")
        .and_then(|rest| rest.strip_suffix(suffix))
        .ok_or_else(bad)?;
    if id == "me" {
        return me;
    }
    okey_platform::fields::name_id(id).ok_or_else(bad)
}

fn timestamp(t: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: t.timestamp(),
        nanos: t.timestamp_subsec_nanos() as i32,
    }
}

fn role_to_proto(role: Role) -> pb::Role {
    match role {
        Role::Player => pb::Role::Player,
        Role::Support => pb::Role::Support,
        Role::Analyst => pb::Role::Analyst,
        Role::Admin => pb::Role::Admin,
        Role::Matchmaker => pb::Role::Matchmaker,
    }
}

fn account_to_proto(a: &Account) -> pb::Account {
    pb::Account {
        name: format!("players/{}", a.player_id),
        kind: match a.kind {
            AccountKind::Guest => pb::AccountKind::Guest,
            AccountKind::Permanent => pb::AccountKind::Permanent,
        } as i32,
        username: a.username.clone().unwrap_or_default(),
        roles: a.roles.iter().map(|r| role_to_proto(*r) as i32).collect(),
        create_time: Some(timestamp(a.created_at)),
    }
}

fn profile_to_proto(p: &Profile) -> pb::Profile {
    pb::Profile {
        name: format!("players/{}", p.player_id),
        display_name: p.display_name.clone(),
        avatar_ref: p.avatar_ref.clone(),
        update_time: Some(timestamp(p.updated_at)),
    }
}

fn session_to_proto(s: Session) -> pb::Session {
    pb::Session {
        access_token: s.access_token.expose().clone(),
        access_token_expire_time: Some(timestamp(s.access_expires_at)),
        refresh_token: s.refresh_token.expose().clone(),
        refresh_token_expire_time: Some(timestamp(s.refresh_expires_at)),
    }
}

#[tonic::async_trait]
impl AccountsService for AccountsApi {
    async fn sign_in_as_guest(
        &self,
        request: Request<pb::SignInAsGuestRequest>,
    ) -> Result<Response<pb::SignInAsGuestResponse>, Status> {
        let address = self.address(&request);
        let r = request.into_inner();
        fields::request_id(&r.request_id)?;
        texts(&[
            ("device_id", &r.device_id),
            ("display_name", &r.display_name),
        ])?;
        let (account, session, created) = self
            .accounts
            .sign_in_as_guest(&r.request_id, &r.device_id, &r.display_name, &address)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::SignInAsGuestResponse {
            account: Some(account_to_proto(&account)),
            session: Some(session_to_proto(session)),
            created,
        }))
    }

    async fn upgrade_guest(
        &self,
        request: Request<pb::UpgradeGuestRequest>,
    ) -> Result<Response<pb::UpgradeGuestResponse>, Status> {
        let player = caller(&request)?;
        let r = request.into_inner();
        fields::request_id(&r.request_id)?;
        texts(&[("username", &r.username), ("password", &r.password)])?;
        // Left out, it is a malformed request (as in SignIn), not a bad username or password.
        fields::required("username", r.username.trim())?;
        fields::required("password", &r.password)?;
        let password = Secret::new(r.password);
        let (account, session) = self
            .accounts
            .upgrade_guest(player, &r.request_id, &r.username, &password)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::UpgradeGuestResponse {
            account: Some(account_to_proto(&account)),
            session: Some(session_to_proto(session)),
        }))
    }

    async fn sign_in(
        &self,
        request: Request<pb::SignInRequest>,
    ) -> Result<Response<pb::SignInResponse>, Status> {
        let address = self.address(&request);
        let r = request.into_inner();
        fields::request_id(&r.request_id)?;
        texts(&[
            ("username", &r.username),
            ("password", &r.password),
            ("device_id", &r.device_id),
        ])?;
        // Left out, it is a malformed request, not an attempt (nothing counts toward the limits).
        fields::required("username", r.username.trim())?;
        fields::required("password", &r.password)?;
        let password = Secret::new(r.password);
        let (account, session) = self
            .accounts
            .sign_in(&r.username, &password, &r.device_id, &address)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::SignInResponse {
            account: Some(account_to_proto(&account)),
            session: Some(session_to_proto(session)),
        }))
    }

    async fn refresh_session(
        &self,
        request: Request<pb::RefreshSessionRequest>,
    ) -> Result<Response<pb::RefreshSessionResponse>, Status> {
        let r = request.into_inner();
        fields::request_id(&r.request_id)?;
        texts(&[("refresh_token", &r.refresh_token)])?;
        // Left out, it is a malformed request (as SignIn's password), not an unknown token.
        fields::required("refresh_token", &r.refresh_token)?;
        let token = Secret::new(r.refresh_token);
        let session = self
            .accounts
            .refresh(&token, &r.request_id)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::RefreshSessionResponse {
            session: Some(session_to_proto(session)),
        }))
    }

    async fn sign_out(
        &self,
        request: Request<pb::SignOutRequest>,
    ) -> Result<Response<pb::SignOutResponse>, Status> {
        let r = request.into_inner();
        fields::request_id(&r.request_id)?;
        texts(&[("refresh_token", &r.refresh_token)])?;
        let token = Secret::new(r.refresh_token);
        self.accounts
            .sign_out(&token, r.everywhere)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::SignOutResponse {}))
    }

    async fn get_profile(
        &self,
        request: Request<pb::GetProfileRequest>,
    ) -> Result<Response<pb::GetProfileResponse>, Status> {
        let me = caller(&request);
        let player = player_name(&request.get_ref().name, "", me, "name")?;
        let account = self.accounts.account(player).await.map_err(to_status)?;
        Ok(Response::new(pb::GetProfileResponse {
            profile: Some(profile_to_proto(&account.profile())),
        }))
    }

    async fn update_profile(
        &self,
        request: Request<pb::UpdateProfileRequest>,
    ) -> Result<Response<pb::UpdateProfileResponse>, Status> {
        let me = caller(&request)?;
        let r = request.into_inner();
        fields::request_id(&r.request_id)?;
        let profile = r.profile.unwrap_or_default();
        texts(&[
            ("profile.display_name", &profile.display_name),
            ("profile.avatar_ref", &profile.avatar_ref),
        ])?;
        let player = player_name(&profile.name, "", Ok(me), "profile.name")?;
        if player != me {
            return Err(to_status(AccountsError::NotYours));
        }
        let paths = r.update_mask.map(|m| m.paths).unwrap_or_default();
        for (i, path) in paths.iter().enumerate() {
            fields::text(&format!("update_mask.paths[{i}]"), path)?;
        }
        let wants = |field: &str| paths.is_empty() || paths.iter().any(|p| p == field);
        if let Some(unknown) = paths
            .iter()
            .find(|p| *p != "display_name" && *p != "avatar_ref")
        {
            return Err(status::invalid_argument(
                Reason::InvalidUpdateMask,
                "update_mask",
                format!(
                    "cannot update `{}`: only display_name and avatar_ref",
                    fields::quoted(unknown)
                ),
            ));
        }
        let change = ProfileChange {
            display_name: wants("display_name").then_some(profile.display_name),
            avatar_ref: wants("avatar_ref").then_some(profile.avatar_ref),
        };
        let profile = self
            .accounts
            .update_profile(me, &r.request_id, change)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::UpdateProfileResponse {
            profile: Some(profile_to_proto(&profile)),
        }))
    }

    async fn get_statistics(
        &self,
        request: Request<pb::GetStatisticsRequest>,
    ) -> Result<Response<pb::GetStatisticsResponse>, Status> {
        let me = caller(&request);
        let player = player_name(&request.get_ref().name, "/statistics", me, "name")?;
        let s = self.accounts.statistics(player).await.map_err(to_status)?;
        Ok(Response::new(pb::GetStatisticsResponse {
            statistics: Some(pb::Statistics {
                name: format!("players/{}/statistics", s.player_id),
                hands_played: s.hands_played,
                hands_won: s.hands_won,
                matches_played: s.matches_played,
                matches_won: s.matches_won,
                mean_hand_score: s.mean_hand_score(),
                hands_opened: s.hands_opened,
                pair_openings: s.pair_openings,
                update_time: Some(timestamp(s.updated_at)),
            }),
        }))
    }

    async fn issue_service_token(
        &self,
        request: Request<pb::IssueServiceTokenRequest>,
    ) -> Result<Response<pb::IssueServiceTokenResponse>, Status> {
        let r = request.into_inner();
        // Left out, it is a malformed request (as SignIn's password), not unknown credentials.
        fields::required("client_id", &r.client_id)?;
        fields::required("client_secret", &r.client_secret)?;
        let secret = Secret::new(r.client_secret);
        let (token, expires_at) = self
            .accounts
            .issue_service_token(&r.client_id, &secret)
            .map_err(to_status)?;
        Ok(Response::new(pb::IssueServiceTokenResponse {
            access_token: token.expose().clone(),
            expire_time: Some(timestamp(expires_at)),
        }))
    }

    async fn list_public_keys(
        &self,
        _request: Request<pb::ListPublicKeysRequest>,
    ) -> Result<Response<pb::ListPublicKeysResponse>, Status> {
        let keys = self.accounts.keys();
        let retired = timestamp(keys.since());
        Ok(Response::new(pb::ListPublicKeysResponse {
            keys: keys
                .public_jwks()
                .into_iter()
                .enumerate()
                .map(|(i, k)| pb::PublicKey {
                    kid: k.kid,
                    kty: k.kty,
                    crv: k.crv,
                    x: k.x,
                    alg: "EdDSA".into(),
                    retire_time: (i > 0).then_some(retired),
                })
                .collect(),
            issuer: self.accounts.issuer().to_owned(),
            audience: self.accounts.audience().to_owned(),
        }))
    }

    async fn get_account(
        &self,
        request: Request<pb::GetAccountRequest>,
    ) -> Result<Response<pb::GetAccountResponse>, Status> {
        let me = caller(&request);
        let player = player_name(&request.get_ref().name, "", me, "name")?;
        let account = self.accounts.account(player).await.map_err(to_status)?;
        Ok(Response::new(pb::GetAccountResponse {
            account: Some(account_to_proto(&account)),
        }))
    }
}
