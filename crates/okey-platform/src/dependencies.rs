//! Connections to PostgreSQL, NATS/JetStream and Redis: made with retry and backoff at start,
//! probed afterwards so the health status says honestly whether the service can work.

use std::future::Future;
use std::time::Duration;

use redis::aio::ConnectionManager;
use sqlx::migrate::{MigrateDatabase, Migrator};
use sqlx::postgres::{PgPool, PgPoolOptions};
use tokio::time::{Instant, sleep, timeout};

use crate::settings::{NatsAddress, NatsCredentials, Settings};

/// First wait between connection attempts; doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Longest wait between connection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Longest one readiness probe may take before the dependency counts as down.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest one connection attempt at start may take (a client that retries inside its own
/// attempt, as Redis's connection manager does on a refused password, would otherwise wait past
/// `server.startup_timeout_ms` without a word).
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// What a service needs. Each service declares it once in its `startup` module.
#[derive(Debug, Clone, Copy, Default)]
pub struct Needs {
    /// PostgreSQL, with the migrations of the service's own database.
    pub postgres: Option<&'static Migrator>,
    /// NATS with JetStream.
    pub nats: bool,
    /// NATS: the server does not deliver what this connection publishes to this connection's
    /// own subscriptions (a publisher that follows the same subjects only hears the others).
    pub nats_no_echo: bool,
    /// Redis.
    pub redis: bool,
}

/// Why start-up failed.
#[derive(Debug, thiserror::Error)]
pub enum DependencyError {
    /// A dependency did not answer before `server.startup_timeout_ms`.
    #[error("{dependency} did not become available within {waited:?}: {last_error}")]
    Unavailable {
        /// `postgres`, `nats` or `redis`.
        dependency: &'static str,
        /// How long we tried.
        waited: Duration,
        /// The last attempt's error.
        last_error: String,
    },
    /// The service's migrations failed; retrying would not help.
    #[error("database migrations failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// The connections a service holds. Cheap to clone: every field is a handle.
#[derive(Clone)]
pub struct Dependencies {
    /// PostgreSQL pool, migrated.
    pub postgres: Option<PgPool>,
    /// NATS client (reconnects by itself).
    pub nats: Option<async_nats::Client>,
    /// JetStream context over `nats`.
    pub jetstream: Option<async_nats::jetstream::Context>,
    /// Redis connection (reconnects by itself).
    pub redis: Option<ConnectionManager>,
}

impl std::fmt::Debug for Dependencies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dependencies")
            .field("postgres", &self.postgres.is_some())
            .field("nats", &self.nats.is_some())
            .field("redis", &self.redis.is_some())
            .finish()
    }
}

/// The outcome of probing every dependency once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    /// Dependencies that did not answer, with why.
    pub down: Vec<(&'static str, String)>,
}

impl Readiness {
    /// True when every dependency answered.
    pub fn is_ready(&self) -> bool {
        self.down.is_empty()
    }
}

impl Dependencies {
    /// Connects to what `needs` asks for, retrying each with backoff until
    /// `server.startup_timeout_ms`, and runs the service's migrations.
    pub async fn connect(settings: &Settings, needs: Needs) -> Result<Self, DependencyError> {
        let deadline = Instant::now() + Duration::from_millis(settings.server.startup_timeout_ms);

        let postgres = match needs.postgres {
            Some(migrator) => {
                let pool = retry("postgres", deadline, || connect_postgres(settings)).await?;
                migrate(migrator, &pool).await?;
                tracing::info!(migrations = migrator.iter().count(), "database migrated");
                Some(pool)
            }
            None => None,
        };

        let (nats, jetstream) = if needs.nats {
            let (client, js) = retry("nats", deadline, || {
                connect_nats(settings, needs.nats_no_echo)
            })
            .await?;
            (Some(client), Some(js))
        } else {
            (None, None)
        };

        let redis = if needs.redis {
            Some(retry("redis", deadline, || connect_redis(settings)).await?)
        } else {
            None
        };

        Ok(Dependencies {
            postgres,
            nats,
            jetstream,
            redis,
        })
    }

    /// Probes each dependency once: a query, the connection state, a PING.
    pub async fn probe(&self) -> Readiness {
        let mut down = Vec::new();
        if let Some(pool) = &self.postgres {
            let probe = sqlx::query("SELECT 1").execute(pool);
            if let Err(e) = flatten(timeout(PROBE_TIMEOUT, probe).await) {
                down.push(("postgres", e));
            }
        }
        if let Some(client) = &self.nats
            && client.connection_state() != async_nats::connection::State::Connected
        {
            down.push(("nats", "not connected".to_owned()));
        }
        if let Some(redis) = &self.redis {
            let mut conn = redis.clone();
            let ping_cmd = redis::cmd("PING");
            let ping = ping_cmd.query_async::<String>(&mut conn);
            if let Err(e) = flatten(timeout(PROBE_TIMEOUT, ping).await) {
                down.push(("redis", e));
            }
        }
        Readiness { down }
    }
}

fn flatten<T, E: std::fmt::Display>(
    result: Result<Result<T, E>, tokio::time::error::Elapsed>,
) -> Result<T, String> {
    match result {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {PROBE_TIMEOUT:?}")),
    }
}

/// Calls `attempt` until it succeeds, waiting longer after each failure, until `deadline`.
async fn retry<T, F, Fut>(
    dependency: &'static str,
    deadline: Instant,
    mut attempt: F,
) -> Result<T, DependencyError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let started = Instant::now();
    let mut backoff = FIRST_BACKOFF;
    let mut first = true;
    loop {
        // The first attempt gets its whole time even when an earlier dependency or the
        // migrations used up the start-up budget; later ones stop at the deadline.
        let left = deadline.saturating_duration_since(Instant::now());
        let limit = if first {
            ATTEMPT_TIMEOUT
        } else {
            ATTEMPT_TIMEOUT.min(left).max(Duration::from_millis(100))
        };
        first = false;
        let outcome = timeout(limit, attempt())
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {limit:?}")));
        match outcome {
            Ok(value) => {
                tracing::info!(dependency, "connected");
                return Ok(value);
            }
            Err(last_error) => {
                // The last wait is cut to what is left of the budget, so the whole of it is used
                // (one more attempt at the deadline) rather than giving up a backoff early.
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(DependencyError::Unavailable {
                        dependency,
                        waited: started.elapsed(),
                        last_error,
                    });
                }
                let wait = backoff.min(left);
                tracing::warn!(dependency, error = %last_error, retry_in = ?wait, "not available yet");
                sleep(wait).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Applies `migrator`'s migrations that `pool`'s database lacks. A database already migrated
/// further by a newer build (versions this build does not know) is accepted: migrations are
/// written to stay compatible with the release before them (docs/operations.md), so an older pod
/// that restarts during a rolling upgrade, or after `helm rollback`, still starts. A migration
/// this build knows whose applied text differs is still refused.
pub async fn migrate(
    migrator: &Migrator,
    pool: &PgPool,
) -> Result<(), sqlx::migrate::MigrateError> {
    let mut tolerant = Migrator::with_migrations(migrator.iter().cloned().collect());
    tolerant.set_ignore_missing(true);
    tolerant.run(pool).await
}

async fn connect_postgres(settings: &Settings) -> Result<PgPool, String> {
    let url = settings.database.url.expose();
    if settings.database.create_if_missing
        && !sqlx::Postgres::database_exists(url)
            .await
            .map_err(|e| e.to_string())?
    {
        sqlx::Postgres::create_database(url)
            .await
            .map_err(|e| e.to_string())?;
        tracing::info!("database created");
    }
    PgPoolOptions::new()
        .max_connections(settings.database.max_connections)
        .acquire_timeout(Duration::from_secs(5))
        .connect(url)
        .await
        .map_err(|e| e.to_string())
}

async fn connect_nats(
    settings: &Settings,
    no_echo: bool,
) -> Result<(async_nats::Client, async_nats::jetstream::Context), String> {
    // Checked when the settings were read.
    let address = NatsAddress::parse(&settings.nats.url)?;
    let mut options = async_nats::ConnectOptions::new().connection_timeout(Duration::from_secs(2));
    options = match address.credentials {
        None => options,
        Some(NatsCredentials::UserPassword(user, password)) => {
            options.user_and_password(user, password.expose().clone())
        }
        Some(NatsCredentials::Token(token)) => options.token(token.expose().clone()),
    };
    if no_echo {
        options = options.no_echo();
    }
    let client = options
        .connect(address.url.as_str())
        .await
        .map_err(|e| e.to_string())?;
    let jetstream = async_nats::jetstream::new(client.clone());
    // A server without JetStream would accept the connection and fail every publish later.
    jetstream
        .query_account()
        .await
        .map_err(|e| format!("JetStream not available: {e}"))?;
    Ok((client, jetstream))
}

async fn connect_redis(settings: &Settings) -> Result<ConnectionManager, String> {
    let client =
        redis::Client::open(settings.redis.url.expose().as_str()).map_err(|e| e.to_string())?;
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(Duration::from_secs(2)));
    ConnectionManager::new_with_config(client, config)
        .await
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    //! Start-up migrations against a database a newer build already migrated: the older build
    //! starts (rolling upgrades and `helm rollback` restart older pods on the newer schema), while
    //! a migration it knows whose applied text differs is still refused.

    use std::borrow::Cow;

    use super::*;
    use crate::testing::TestInfra;
    use sqlx::migrate::{MigrateDatabase, MigrateError, Migration, MigrationType};
    use sqlx::{Connection, SqlStr};

    fn migration(version: i64, sql: &'static str) -> Migration {
        Migration::new(
            version,
            Cow::Borrowed("test"),
            MigrationType::Simple,
            SqlStr::from_static(sql),
            false,
        )
    }

    const FIRST: &str = "CREATE TABLE things (id BIGINT PRIMARY KEY)";
    const SECOND: &str = "ALTER TABLE things ADD COLUMN name TEXT";

    #[tokio::test(start_paused = true)]
    async fn an_attempt_that_never_answers_gives_up_at_the_start_up_deadline() {
        let started = Instant::now();
        let deadline = started + Duration::from_secs(12);
        let attempts = std::cell::Cell::new(0);
        let result = retry("redis", deadline, || {
            attempts.set(attempts.get() + 1);
            std::future::pending::<Result<(), String>>()
        })
        .await;
        let Err(DependencyError::Unavailable { last_error, .. }) = result else {
            panic!("it gave up");
        };
        assert!(last_error.contains("no answer within"), "{last_error}");
        // Attempts of at most 5 s each (so a WARN at least that often), the last one cut to the
        // deadline: 0–5 s, 5.1–10.1 s, 10.3–12 s.
        let waited = started.elapsed();
        assert!(waited >= Duration::from_secs(12), "{waited:?}");
        assert!(waited < Duration::from_millis(12_200), "{waited:?}");
        assert_eq!(attempts.get(), 3);
    }

    #[tokio::test]
    async fn an_older_build_starts_on_a_database_a_newer_build_migrated() {
        let Some(infra) = TestInfra::from_env() else {
            return;
        };
        let url = infra.unique_database_url("migrate");
        sqlx::Postgres::create_database(&url).await.unwrap();
        let pool = PgPool::connect(&url).await.unwrap();

        let newer = Migrator::with_migrations(vec![migration(1, FIRST), migration(2, SECOND)]);
        migrate(&newer, &pool).await.unwrap();
        let older = Migrator::with_migrations(vec![migration(1, FIRST)]);
        // sqlx's default refuses the unknown version 2 (on a connection of its own: the refusal
        // leaves the session's migration lock taken) ...
        let mut alone = sqlx::PgConnection::connect(&url).await.unwrap();
        assert!(matches!(
            older.run(&mut alone).await,
            Err(MigrateError::VersionMissing(2))
        ));
        alone.close().await.unwrap();
        // ... a service starts, and applies nothing.
        migrate(&older, &pool).await.unwrap();
        // Running again changes nothing either.
        migrate(&newer, &pool).await.unwrap();
        let columns: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM information_schema.columns WHERE table_name = 'things'",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(columns, 2);

        // A known migration whose text changed after it was applied is refused.
        let edited = Migrator::with_migrations(vec![migration(
            1,
            "CREATE TABLE things (id INT PRIMARY KEY)",
        )]);
        assert!(matches!(
            migrate(&edited, &pool).await,
            Err(MigrateError::VersionMismatch(1))
        ));

        pool.close().await;
        sqlx::Postgres::drop_database(&url).await.unwrap();
    }
}
