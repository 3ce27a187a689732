//! Builds the matchmaking service from its settings: connects what it needs, migrates its database,
//! binds the gRPC host and mounts its API; the matcher and the change listener run beside it.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use okey_platform::auth::{Access, AccessTable, AuthLayer};
use okey_platform::page_token::PageTokens;
use okey_platform::service_token::ServiceTokens;
use okey_platform::{
    Dependencies, DependencyError, Migrator, Needs, ServerError, ServiceHost, Settings,
};
use okey_proto::v1::matchmaking_service_server::MatchmakingServiceServer;
use tokio::task::JoinHandle;

use crate::clock::{Clock, SystemClock};
use crate::domain::RatingWindows;
use crate::grpc::MatchmakingApi;
use crate::limiter::JoinLimiter;
use crate::matcher::{Matcher, Timing, Wake};
use crate::notices::Notices;
use crate::ratings::Ratings;
use crate::service::{Matchmaking, Timeouts};
use crate::settings::MatchmakingSettings;
use crate::store::Store;
use crate::tables::Tables;

/// The service's own schema, `migrations/matchmaking`, applied at every start.
static MIGRATOR: Migrator = sqlx::migrate!("../../migrations/matchmaking");

/// What the service needs to be ready. Not NATS: replicas hear of each other's changes through
/// PostgreSQL (`notices`), so a NATS outage leaves matchmaking SERVING.
const NEEDS: Needs = Needs {
    postgres: Some(&MIGRATOR),
    nats: false,
    nats_no_echo: false,
    redis: true,
};

/// Who may call what (checked by the platform's authentication layer before any handler).
/// Every RPC needs a signed-in person (a service token is refused: it never plays), and those
/// that take part in a game (a ticket, a room) a player: a support or analyst token may read,
/// not queue or sit. Finer checks (whose data) are the handlers'.
const ACCESS: &[(&str, Access)] = &[
    ("/okey.v1.MatchmakingService/FindTable", Access::PLAYER),
    ("/okey.v1.MatchmakingService/GetTicket", Access::PERSON),
    ("/okey.v1.MatchmakingService/WatchTicket", Access::PERSON),
    ("/okey.v1.MatchmakingService/CancelTicket", Access::PLAYER),
    ("/okey.v1.MatchmakingService/CreateRoom", Access::PLAYER),
    ("/okey.v1.MatchmakingService/JoinRoom", Access::PLAYER),
    ("/okey.v1.MatchmakingService/GetRoom", Access::PERSON),
    ("/okey.v1.MatchmakingService/LeaveRoom", Access::PLAYER),
    ("/okey.v1.MatchmakingService/StartRoom", Access::PLAYER),
    ("/okey.v1.MatchmakingService/WatchRoom", Access::PERSON),
    ("/okey.v1.MatchmakingService/SetRoomSeat", Access::PLAYER),
    (
        "/okey.v1.MatchmakingService/RemoveRoomMember",
        Access::PLAYER,
    ),
    ("/okey.v1.MatchmakingService/ListRooms", Access::PERSON),
    ("/okey.v1.MatchmakingService/ListPresets", Access::PERSON),
];

/// Why the service could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// PostgreSQL, NATS or Redis was not reachable in time, or the migrations failed.
    #[error(transparent)]
    Dependencies(#[from] DependencyError),
    /// The gRPC server could not bind or failed.
    #[error(transparent)]
    Server(#[from] ServerError),
    /// The page-token key could not be read or made (`page_token_key`).
    #[error("page token key: {0}")]
    PageTokenKey(sqlx::Error),
    /// A setting cannot be used (the message names it).
    #[error("{0}")]
    Settings(String),
}

/// The matchmaking service, connected and bound, ready to serve.
pub struct Application {
    host: ServiceHost,
    dependencies: Dependencies,
    matcher: Option<Matcher>,
}

impl Application {
    /// Binds the port, connects the dependencies (with retry) and runs the migrations.
    pub async fn build(settings: &Settings) -> Result<Self, StartupError> {
        Self::build_with_clock(settings, Arc::new(SystemClock)).await
    }

    /// [`Self::build`] reading the time from `clock` (tests move a manual one).
    pub async fn build_with_clock(
        settings: &Settings,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, StartupError> {
        let own: MatchmakingSettings = settings
            .own()
            .map_err(|e| StartupError::Settings(e.to_string()))?;
        let m = &own.matchmaking;
        if settings.service_client.id.is_empty() {
            tracing::warn!(
                "no service identity (service_client.id): tables cannot be created until one is set"
            );
        }
        let tokens = ServiceTokens::new(&settings.service_client);
        let ratings =
            Ratings::new(&m.scoring_url, tokens.clone()).map_err(StartupError::Settings)?;
        let tables = Tables::new(&m.table_url, tokens).map_err(StartupError::Settings)?;
        let windows = RatingWindows::parse(&m.rating_windows)
            .map_err(|e| StartupError::Settings(format!("matchmaking.rating_windows: {e}")))?;
        let host = ServiceHost::bind(&settings.server).await?;
        let dependencies = Dependencies::connect(settings, NEEDS).await?;
        let (Some(pool), Some(redis)) = (dependencies.postgres.clone(), dependencies.redis.clone())
        else {
            unreachable!("NEEDS asks for postgres and redis");
        };
        let page_tokens = PageTokens::load(&pool)
            .await
            .map_err(StartupError::PageTokenKey)?;
        let store = Store::new(pool);
        let wake = Wake::default();
        let timing = Timing {
            tick: Duration::from_millis(m.tick_ms),
            claim_lease: Duration::from_secs(m.claim_lease_secs),
        };
        let matcher = Matcher::new(
            store.clone(),
            tables.clone(),
            clock.clone(),
            timing,
            windows,
            wake.clone(),
        );
        let service = Matchmaking::new(
            store,
            tables,
            ratings,
            clock,
            Notices::start(settings.database.url.clone()),
            JoinLimiter::new(
                redis,
                &settings.redis.key_prefix,
                m.join_attempts,
                m.room_password_attempts,
                Duration::from_secs(m.join_window_secs),
            ),
            wake,
            Timeouts {
                bot_fill_after: Duration::from_secs(m.bot_fill_after_secs),
                ticket_ttl: Duration::from_secs(m.ticket_ttl_secs),
                room_ttl: Duration::from_secs(m.room_ttl_secs),
                claim_lease: timing.claim_lease,
            },
        );
        // common.proto: a request is at most 64 KiB; the host's shared layer answers a larger one
        // INVALID_ARGUMENT `request_too_large`.
        let api = MatchmakingServiceServer::new(MatchmakingApi::new(service, page_tokens))
            .max_decoding_message_size(okey_platform::MAX_REQUEST_BYTES);
        Ok(Application {
            host: host
                .add_api(api)
                .with_auth(AuthLayer::from_settings(settings, AccessTable::new(ACCESS))),
            dependencies,
            matcher: Some(matcher),
        })
    }

    /// The address the gRPC server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.host.local_addr()
    }

    /// Serves until `shutdown` resolves, then drains within the grace period. The matcher runs
    /// meanwhile and stops with the server (a claim it left unfinished is taken over by another
    /// replica, or by this one after a restart, when its lease ends).
    pub async fn run_until_stopped(
        mut self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), StartupError> {
        let matcher: Option<JoinHandle<()>> = self.matcher.take().map(|m| tokio::spawn(m.run()));
        let result = self
            .host
            .run_until_stopped(self.dependencies, shutdown)
            .await;
        if let Some(matcher) = matcher {
            matcher.abort();
        }
        Ok(result?)
    }
}
