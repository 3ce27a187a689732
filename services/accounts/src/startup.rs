//! Builds the accounts service from its settings: connects what it needs, migrates its database,
//! loads (or, for a local run, generates) the signing keys, binds the gRPC host with the
//! authentication layer and mounts its API; the statistics consumer runs beside it.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use okey_platform::auth::{Access, AccessTable, AuthLayer, PublicKeySet, Role, TokenVerifier};
use okey_platform::{
    Dependencies, DependencyError, Migrator, Needs, ServerError, ServiceHost, Settings,
};
use okey_proto::v1::accounts_service_server::AccountsServiceServer;

use crate::accounts::Accounts;
use crate::grpc::AccountsApi;
use crate::keys::{KeyError, SigningKeys};
use crate::limiter::{LimitPolicy, SignInLimiter};
use crate::settings::{AccountsSettings, parse_trusted_proxies};

/// The service's own schema, `migrations/accounts`, applied at every start.
static MIGRATOR: Migrator = sqlx::migrate!("../../migrations/accounts");

/// What the service needs to be ready.
const NEEDS: Needs = Needs {
    postgres: Some(&MIGRATOR),
    nats: true,
    nats_no_echo: false,
    redis: true,
};

/// Who may call what. Sign-in, refresh, sign-out (the refresh token is the credential), service
/// tokens (the client secret is the credential) and the public keys need no access token.
pub const ACCESS: &[(&str, Access)] = &[
    ("/okey.v1.AccountsService/SignInAsGuest", Access::Public),
    ("/okey.v1.AccountsService/SignIn", Access::Public),
    ("/okey.v1.AccountsService/RefreshSession", Access::Public),
    ("/okey.v1.AccountsService/SignOut", Access::Public),
    ("/okey.v1.AccountsService/ListPublicKeys", Access::Public),
    ("/okey.v1.AccountsService/IssueServiceToken", Access::Public),
    ("/okey.v1.AccountsService/UpgradeGuest", Access::SIGNED_IN),
    ("/okey.v1.AccountsService/GetProfile", Access::SIGNED_IN),
    ("/okey.v1.AccountsService/UpdateProfile", Access::SIGNED_IN),
    ("/okey.v1.AccountsService/GetStatistics", Access::SIGNED_IN),
    (
        "/okey.v1.AccountsService/GetAccount",
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
    /// The signing keys are unusable.
    #[error(transparent)]
    Keys(#[from] KeyError),
    /// A setting of the service's own is not valid.
    #[error(transparent)]
    Settings(#[from] okey_platform::SettingsError),
}

/// The accounts service, connected and bound, ready to serve.
pub struct Application {
    host: ServiceHost,
    dependencies: Dependencies,
    subject_prefix: String,
}

impl Application {
    /// Binds the port, connects the dependencies (with retry), runs the migrations and loads the
    /// keys.
    pub async fn build(settings: &Settings) -> Result<Self, StartupError> {
        let own: AccountsSettings = settings.own()?;
        let keys = match SigningKeys::from_pem_blocks(own.tokens.signing_keys_pem.expose())? {
            Some(keys) => keys,
            None => {
                tracing::warn!(
                    "no `tokens.signing_keys_pem` configured: signing with a throwaway key; \
                     tokens stop verifying when this process exits (fine for `make run` only)"
                );
                SigningKeys::generate()?
            }
        };
        let keys = Arc::new(keys);
        tracing::info!(signing = %keys.current().kid, published = keys.all().len(), "token keys loaded");

        let host = ServiceHost::bind(&settings.server).await?;
        let dependencies = Dependencies::connect(settings, NEEDS).await?;

        // This service verifies with its own keys plus any configured public ones.
        let verifier = TokenVerifier::new(&settings.auth);
        let fixed = PublicKeySet::parse(&settings.tokens.public_keys).unwrap_or_default();
        verifier.replace_keys(
            keys.all()
                .iter()
                .map(|k| (k.kid.as_str(), k.x.as_str()))
                .chain(fixed.keys.iter().map(|k| (k.kid.as_str(), k.x.as_str()))),
        );
        let auth = AuthLayer::new(verifier, AccessTable::new(ACCESS));

        let (Some(pool), Some(redis)) = (dependencies.postgres.clone(), dependencies.redis.clone())
        else {
            unreachable!("NEEDS asks for postgres and redis");
        };
        let policy = LimitPolicy {
            guests_per_address: own.sign_in.guests_per_address,
            guest_window: std::time::Duration::from_secs(own.sign_in.guest_window_secs),
            ..LimitPolicy::default()
        };
        let limiter = SignInLimiter::new(redis, &settings.redis.key_prefix, policy);
        let accounts = Accounts::new(pool, keys, limiter, settings, &own);
        // Reading the settings already refused a malformed list.
        let trusted = parse_trusted_proxies(&own.sign_in.trusted_proxies).unwrap_or_default();
        let api = AccountsServiceServer::new(AccountsApi::new(accounts, trusted))
            .max_decoding_message_size(okey_platform::MAX_REQUEST_BYTES);
        Ok(Application {
            host: host.add_api(api).with_auth(auth),
            dependencies,
            subject_prefix: settings.nats.subject_prefix.clone(),
        })
    }

    /// The address the gRPC server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.host.local_addr()
    }

    /// Serves until `shutdown` resolves, then drains within the grace period. The statistics
    /// consumer runs meanwhile and stops with the server.
    pub async fn run_until_stopped(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), StartupError> {
        let consumer = match (&self.dependencies.jetstream, &self.dependencies.postgres) {
            (Some(jetstream), Some(pool)) => Some(tokio::spawn(crate::statistics::run(
                jetstream.clone(),
                pool.clone(),
                self.subject_prefix.clone(),
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
