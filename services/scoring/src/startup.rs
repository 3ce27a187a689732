//! Builds the scoring service from its settings: connects what it needs, migrates its database,
//! binds the gRPC host and mounts its API; the ledger consumer runs beside it.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use okey_platform::auth::{Access, AccessTable, AuthLayer, Role};
use okey_platform::page_token::PageTokens;
use okey_platform::{
    Dependencies, DependencyError, Migrator, Needs, ServerError, ServiceHost, Settings,
};
use okey_proto::v1::scoring_service_server::ScoringServiceServer;

use crate::consumer::{self, Lag, Watch};
use crate::grpc::ScoringApi;
use crate::settings::ScoringSettings;

/// The service's own schema, `migrations/scoring`, applied at every start (public for the tests
/// of a migration over rows written before it).
pub static MIGRATOR: Migrator = sqlx::migrate!("../../migrations/scoring");

/// What the service needs to be ready.
const NEEDS: Needs = Needs {
    postgres: Some(&MIGRATOR),
    nats: true,
    nats_no_echo: false,
    redis: false,
};

/// Who may call what (checked by the platform's authentication layer before any handler).
/// Every RPC needs a signed-in caller; finer checks (whose data) are the handlers'.
const ACCESS: &[(&str, Access)] = &[
    ("/okey.v1.ScoringService/ListStandings", Access::SIGNED_IN),
    (
        "/okey.v1.ScoringService/ListLedgerEntries",
        Access::SIGNED_IN,
    ),
    ("/okey.v1.ScoringService/GetMatchResult", Access::SIGNED_IN),
    (
        "/okey.v1.ScoringService/ListMatchResults",
        Access::SIGNED_IN,
    ),
    ("/okey.v1.ScoringService/GetStanding", Access::SIGNED_IN),
    ("/okey.v1.ScoringService/GetRating", Access::SIGNED_IN),
    ("/okey.v1.ScoringService/ListLeaderboard", Access::SIGNED_IN),
    // The ledger's health details, for operators (admin is admitted everywhere).
    (
        "/okey.v1.ScoringService/GetLedgerStatus",
        Access::Roles(&[Role::Support, Role::Analyst]),
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
    /// A rebuild (`--rebuild`) did not run or stopped.
    #[error(transparent)]
    Rebuild(#[from] consumer::RebuildError),
    /// The page-token key could not be read or made (`page_token_key`).
    #[error("page token key: {0}")]
    PageTokenKey(sqlx::Error),
    /// The service's own settings (`[rating]`) are invalid.
    #[error("settings: {0}")]
    Settings(String),
}

/// The scoring service, connected and bound, ready to serve.
pub struct Application {
    host: ServiceHost,
    dependencies: Dependencies,
    subject_prefix: String,
    lag: Arc<Lag>,
}

impl Application {
    /// Binds the port, connects the dependencies (with retry) and runs the migrations.
    pub async fn build(settings: &Settings) -> Result<Self, StartupError> {
        let own: ScoringSettings = settings
            .own()
            .map_err(|e| StartupError::Settings(e.to_string()))?;
        let host = ServiceHost::bind(&settings.server).await?;
        let dependencies = Dependencies::connect(settings, NEEDS).await?;
        let Some(pool) = dependencies.postgres.clone() else {
            unreachable!("NEEDS asks for postgres");
        };
        let lag = Arc::new(Lag::with_gauges());
        let watch = Watch::new(
            lag.clone(),
            dependencies.jetstream.clone(),
            &settings.nats.subject_prefix,
        );
        let tokens = PageTokens::load(&pool)
            .await
            .map_err(StartupError::PageTokenKey)?;
        let api = ScoringServiceServer::new(ScoringApi::new(pool, watch, own.rating, tokens))
            .max_decoding_message_size(okey_platform::MAX_REQUEST_BYTES);
        Ok(Application {
            host: host
                .add_api(api)
                .with_auth(AuthLayer::from_settings(settings, AccessTable::new(ACCESS))),
            dependencies,
            subject_prefix: settings.nats.subject_prefix.clone(),
            lag,
        })
    }

    /// Rebuilds the ledger into the empty database of `database.url` from the table events the
    /// stream holds, then returns (the binary's `--rebuild`); no gRPC server is bound.
    pub async fn rebuild(settings: &Settings) -> Result<consumer::Rebuilt, StartupError> {
        let dependencies = Dependencies::connect(settings, NEEDS).await?;
        let (Some(jetstream), Some(pool)) = (&dependencies.jetstream, &dependencies.postgres)
        else {
            unreachable!("NEEDS asks for postgres and nats");
        };
        Ok(consumer::rebuild(jetstream, pool, &settings.nats.subject_prefix).await?)
    }

    /// The address the gRPC server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.host.local_addr()
    }

    /// How far behind play the ledger is.
    pub fn lag(&self) -> Arc<Lag> {
        self.lag.clone()
    }

    /// Serves until `shutdown` resolves, then drains within the grace period. The ledger
    /// consumer runs meanwhile and stops with the server.
    pub async fn run_until_stopped(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), StartupError> {
        let consumer = match (&self.dependencies.jetstream, &self.dependencies.postgres) {
            (Some(jetstream), Some(pool)) => Some(tokio::spawn(consumer::run(
                jetstream.clone(),
                pool.clone(),
                self.subject_prefix.clone(),
                self.lag.clone(),
            ))),
            _ => None,
        };
        let result = self
            .host
            .run_until_stopped(self.dependencies, shutdown)
            .await;
        if let Some(consumer) = consumer {
            consumer.abort();
        }
        Ok(result?)
    }
}
