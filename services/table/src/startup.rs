//! Builds the table service from its settings: connects what it needs, migrates its database,
//! creates the JetStream stream, starts the outbox publisher (which also follows the other
//! replicas' events), binds the gRPC host and mounts its API and support's replay page.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use okey_platform::auth::{Access, AccessTable, AuthLayer, Role};
use okey_platform::page_token::PageTokens;
use okey_platform::{
    Dependencies, DependencyError, Migrator, Needs, ServerError, ServiceHost, Settings,
};
use okey_proto::v1::table_service_server::TableServiceServer;
use tokio::task::JoinHandle;

use crate::chat::Chat;
use crate::clock::{Clock, SystemClock};
use crate::deadlines::Deadlines;
use crate::grpc::{MAX_MESSAGE_BYTES, REPLAY_PAGE, TableApi, replay_page};
use crate::live::Live;
use crate::outbox::{self, Outbox, Subjects};
use crate::presence::Presences;
use crate::service::Tables;
use crate::settings::TableSettings;
use crate::store::Store;

/// The service's own schema, `migrations/table`, applied at every start.
static MIGRATOR: Migrator = sqlx::migrate!("../../migrations/table");

/// What the service needs to be ready.
const NEEDS: Needs = Needs {
    postgres: Some(&MIGRATOR),
    nats: true,
    nats_no_echo: false,
    redis: true,
};

/// Who may call what (checked by the platform's authentication layer before any handler).
/// CreateTable is for the matchmaking service's identity (role `matchmaker`) and tools (role
/// `admin`), the audit log of hand reads for support; sitting, playing and chatting need a
/// player; reading and watching a signed-in person, so a service token cannot sit, play, chat or
/// watch, and a support or analyst token watches without playing.
const ACCESS: &[(&str, Access)] = &[
    (
        "/okey.v1.TableService/CreateTable",
        Access::Roles(&[Role::Admin, Role::Matchmaker]),
    ),
    ("/okey.v1.TableService/GetTable", Access::PERSON),
    ("/okey.v1.TableService/JoinSeat", Access::PLAYER),
    ("/okey.v1.TableService/LeaveSeat", Access::PLAYER),
    ("/okey.v1.TableService/GetSeatView", Access::PERSON),
    ("/okey.v1.TableService/SubmitCommand", Access::PLAYER),
    ("/okey.v1.TableService/ListLegalActions", Access::PLAYER),
    ("/okey.v1.TableService/WatchTable", Access::PERSON),
    ("/okey.v1.TableService/SendHeartbeat", Access::PLAYER),
    ("/okey.v1.TableService/SendChatMessage", Access::PLAYER),
    ("/okey.v1.TableService/WatchChat", Access::PERSON),
    ("/okey.v1.TableService/SubmitClientSeed", Access::PLAYER),
    // Who may read which hand is decided per hand (support any, a player theirs once ended).
    ("/okey.v1.TableService/GetHandHistory", Access::PERSON),
    (
        "/okey.v1.TableService/ListHandReads",
        Access::Roles(&[Role::Support]),
    ),
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
    /// The JetStream stream could not be created.
    #[error("cannot create the JetStream stream: {0}")]
    Stream(String),
    /// A setting of the service's own is not valid.
    #[error(transparent)]
    Settings(#[from] okey_platform::SettingsError),
    /// The operating system refused the outbox publisher's thread.
    #[error("cannot start the outbox publisher's thread: {0}")]
    Publisher(#[source] std::io::Error),
    /// The page-token key could not be read or made (`page_token_key`).
    #[error("page token key: {0}")]
    PageTokenKey(#[source] sqlx::Error),
}

/// The table service, connected and bound, ready to serve.
pub struct Application {
    host: ServiceHost,
    dependencies: Dependencies,
    tasks: Vec<JoinHandle<()>>,
    tables: Tables,
}

impl Application {
    /// Binds the port, connects the dependencies (with retry), runs the migrations, creates the
    /// JetStream stream and starts the outbox publisher.
    pub async fn build(settings: &Settings) -> Result<Self, StartupError> {
        Self::build_with_clock(settings, Arc::new(SystemClock)).await
    }

    /// [`Self::build`] with the clock turn deadlines, presence and chat times are read from
    /// (tests pass a [`crate::clock::ManualClock`]).
    pub async fn build_with_clock(
        settings: &Settings,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, StartupError> {
        let own: TableSettings = settings.own()?;
        let host = ServiceHost::bind(&settings.server).await?;
        let dependencies = Dependencies::connect(settings, NEEDS).await?;
        let pool = dependencies.postgres.clone().expect("postgres is needed");
        let js = dependencies.jetstream.clone().expect("nats is needed");
        let client = dependencies.nats.clone().expect("nats is needed");
        let subjects = Subjects::new(&settings.nats.subject_prefix);
        let max_age = Duration::from_secs(settings.nats.events_max_age_secs);
        outbox::ensure_stream(&js, &subjects, max_age)
            .await
            .map_err(|e| StartupError::Stream(e.to_string()))?;

        let redis = dependencies.redis.clone().expect("redis is needed");
        let key_prefix = &settings.redis.key_prefix;

        let tokens = PageTokens::load(&pool)
            .await
            .map_err(StartupError::PageTokenKey)?;
        let store = Store::grouping(pool.clone(), own.database.commit_groups as usize);
        let (outbox, outbox_queue) = Outbox::new();
        let deadlines = Deadlines::new(redis.clone(), key_prefix, clock.clone());
        let (live, live_tasks) = Live::new(deadlines, own.live.clone());
        let tables = Tables::new(store.clone(), outbox)
            .with_observer(Arc::new(live.clone()))
            .with_max_cached(usize::try_from(own.live.max_cached_tables).unwrap_or(usize::MAX))
            .with_stream_recheck(Duration::from_millis(own.live.stream_recheck_ms));
        let presences = Presences::new(redis.clone(), key_prefix, clock.clone(), own.live.clone());
        let chat = Chat::new(
            pool,
            redis,
            client,
            &settings.nats.subject_prefix,
            key_prefix,
            clock,
            own.live.clone(),
        );
        outbox::start(
            settings,
            &MIGRATOR,
            subjects,
            outbox_queue,
            Arc::new(tables.sightings()),
        )
        .map_err(StartupError::Publisher)?;
        let idle = {
            let tables = tables.clone();
            let idle = Duration::from_secs(own.live.idle_table_secs);
            async move {
                let mut every = tokio::time::interval(idle.min(Duration::from_secs(60)));
                loop {
                    every.tick().await;
                    let evicted = tables.evict_idle(idle);
                    if evicted > 0 {
                        tracing::info!(evicted, "idle tables left memory");
                    }
                }
            }
        };
        let tasks = vec![
            tokio::spawn(idle),
            tokio::spawn(tables.clone().run_rechecks()),
            tokio::spawn(live.run(tables.clone(), live_tasks)),
            tokio::spawn(chat.clone().run_retention()),
        ];
        let api = TableServiceServer::new(
            TableApi::new(tables.clone(), tokens)
                .with_live(presences, chat)
                .with_stream_limit(own.live.max_streams_per_caller),
        )
        .max_decoding_message_size(MAX_MESSAGE_BYTES);
        // One layer, so the replay page checks tokens with the very keys and access table the
        // gRPC calls are checked with.
        let auth = AuthLayer::from_settings(settings, AccessTable::new(ACCESS));
        Ok(Application {
            host: host
                .add_api(api)
                .with_http(REPLAY_PAGE, replay_page(tables.clone(), auth.clone()))
                .with_auth(auth),
            dependencies,
            tasks,
            tables,
        })
    }

    /// The tables this process serves (for tests and tools in the same process).
    pub fn tables(&self) -> Tables {
        self.tables.clone()
    }

    /// The address the gRPC server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.host.local_addr()
    }

    /// Serves until `shutdown` resolves, then drains within the grace period.
    pub async fn run_until_stopped(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), StartupError> {
        let result = self
            .host
            .run_until_stopped(self.dependencies, shutdown)
            .await;
        for task in self.tasks {
            task.abort();
        }
        Ok(result?)
    }
}
