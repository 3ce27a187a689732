//! Helpers of the scoring tests: the real table service in-process (bots without pause) and the
//! scoring service on the same NATS subjects, in-process or as its own binary (so it can be
//! killed), with clients signed by the test key and reads of both databases.
#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use async_nats::jetstream;
use okey_platform::auth::Role;
use okey_platform::testing::{InProcess, TestInfra, connect, free_port, test_token};
use okey_platform::{ServiceKind, Settings};
use okey_proto::v1 as pb;
use okey_proto::v1::scoring_service_client::ScoringServiceClient;
use okey_proto::v1::table_service_client::TableServiceClient;
use okey_table::{Published, TableEvent};
use sqlx::PgPool;
use tonic::Request;
use tonic::transport::Channel;

pub const BINARY: &str = env!("CARGO_BIN_EXE_scoring");

/// The table service and where scoring finds its events.
pub struct Stack {
    pub infra: TestInfra,
    pub table: InProcess,
    pub table_settings: Settings,
    /// Scoring's environment (database, the table's NATS prefix), without its port.
    pub scoring_env: Vec<(String, String)>,
}

fn env_set(env: &mut Vec<(String, String)>, key: &str, value: &str) {
    env.retain(|(k, _)| k != key);
    env.push((key.to_owned(), value.to_owned()));
}

impl Stack {
    pub async fn start(infra: &TestInfra) -> Stack {
        Stack::start_with(infra, &[]).await
    }

    /// With `extra` `OKEY_…` settings for the table service (the `OKEY_NATS__…` ones for
    /// scoring too).
    pub async fn start_with(infra: &TestInfra, extra: &[(&str, &str)]) -> Stack {
        let mut env = infra.env_for(ServiceKind::Table, 0);
        for (k, v) in [
            ("OKEY_LIVE__SWEEP_INTERVAL_MS", "20"),
            ("OKEY_LIVE__BOT_PACE_MS", "0"),
            ("OKEY_TELEMETRY__LOG_FILTER", "warn"),
            ("OKEY_DATABASE__MAX_CONNECTIONS", "8"),
        ]
        .into_iter()
        .chain(extra.iter().copied())
        {
            env_set(&mut env, k, v);
        }
        let table_settings =
            Settings::from_sources(ServiceKind::Table, None, env).expect("valid table settings");
        let app = table::startup::Application::build(&table_settings)
            .await
            .expect("table starts");
        let port = app.local_addr().port();
        let table = InProcess::spawn(port, |stop| app.run_until_stopped(stop));

        let mut scoring_env = infra.env_for(ServiceKind::Scoring, 0);
        scoring_env.retain(|(k, _)| k != "OKEY_SERVER__PORT");
        env_set(
            &mut scoring_env,
            "OKEY_NATS__SUBJECT_PREFIX",
            &table_settings.nats.subject_prefix,
        );
        env_set(&mut scoring_env, "OKEY_DATABASE__MAX_CONNECTIONS", "4");
        env_set(&mut scoring_env, "OKEY_TELEMETRY__LOG_FILTER", "warn");
        for (k, v) in extra.iter().filter(|(k, _)| k.starts_with("OKEY_NATS__")) {
            env_set(&mut scoring_env, k, v);
        }
        Stack {
            infra: infra.clone(),
            table,
            table_settings,
            scoring_env,
        }
    }

    /// A second scoring service over the same events into a database of its own.
    pub fn fresh_scoring_env(&self) -> Vec<(String, String)> {
        let mut env = self.scoring_env.clone();
        env_set(
            &mut env,
            "OKEY_DATABASE__URL",
            &self.infra.unique_database_url("scoring"),
        );
        env
    }

    pub fn scoring_settings(&self, env: &[(String, String)]) -> Settings {
        let mut env = env.to_vec();
        env_set(&mut env, "OKEY_SERVER__PORT", "0");
        Settings::from_sources(ServiceKind::Scoring, None, env).expect("valid scoring settings")
    }

    /// Scoring in this process.
    pub async fn scoring(&self, env: &[(String, String)]) -> InProcess {
        let app = scoring::startup::Application::build(&self.scoring_settings(env))
            .await
            .expect("scoring starts");
        let port = app.local_addr().port();
        InProcess::spawn(port, |stop| app.run_until_stopped(stop))
    }

    /// Scoring as its own process, killed (SIGKILL) when dropped.
    pub fn scoring_binary(&self, env: &[(String, String)]) -> Binary {
        let port = free_port();
        let child = Command::new(BINARY)
            .envs(env.iter().cloned())
            .env("OKEY_SERVER__PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the binary starts");
        Binary { port, child }
    }

    pub async fn table_client(&self) -> TableServiceClient<Channel> {
        TableServiceClient::new(connect(self.table.port, Duration::from_secs(10)).await)
    }

    /// The scoring database of `env`, once the service has made it.
    pub async fn scoring_pool(env: &[(String, String)]) -> PgPool {
        let url = env
            .iter()
            .find(|(k, _)| k == "OKEY_DATABASE__URL")
            .map(|(_, v)| v.clone())
            .expect("a database url");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match PgPool::connect(&url).await {
                Ok(pool) => return pool,
                Err(e) => {
                    assert!(Instant::now() < deadline, "no scoring database: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    /// The table service's stored events of `table` (`tables/{id}`), in version order.
    pub async fn table_events(&self, table: &str) -> Vec<TableEvent> {
        let pool = PgPool::connect(self.table_settings.database.url.expose())
            .await
            .expect("the table database");
        let id = table.trim_start_matches("tables/");
        let rows: Vec<serde_json::Value> =
            sqlx::query_scalar("SELECT payload FROM events WHERE stream_id = $1 ORDER BY version")
                .bind(format!("table-{id}"))
                .fetch_all(&pool)
                .await
                .expect("events");
        pool.close().await;
        rows.into_iter()
            .map(|v| serde_json::from_value(v).expect("a stored table event"))
            .collect()
    }

    pub async fn stop(self) {
        self.table.stop().await;
    }
}

/// A spawned scoring process.
pub struct Binary {
    pub port: u16,
    pub child: Child,
}

impl Binary {
    /// `kill -9`.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A request with a test token for `player` holding `roles`.
pub fn req<T>(message: T, player: &str, roles: &[Role]) -> Request<T> {
    let mut r = Request::new(message);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {}", test_token(player, roles))
            .parse()
            .unwrap(),
    );
    r
}

pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub fn rules(hands: i32) -> pb::RuleSet {
    pb::RuleSet {
        preset: "classic".into(),
        match_length: Some(pb::MatchLength {
            length: Some(pb::match_length::Length::Hands(hands)),
        }),
        ..Default::default()
    }
}

/// A table played by `rules_set`: `person` in seat 0 (who leaves at once, so a bot plays the seat for
/// them) and strong bots in the others; returns `tables/{id}`.
pub async fn bots_match(stack: &Stack, person: Option<&str>, rules_set: pb::RuleSet) -> String {
    let mut client = stack.table_client().await;
    let seats = person
        .map(|p| {
            vec![pb::SeatAssignment {
                seat: 0,
                occupant: Some(pb::seat_assignment::Occupant::Player(format!(
                    "players/{p}"
                ))),
                ..Default::default()
            }]
        })
        .unwrap_or_default();
    let table = client
        .create_table(req(
            pb::CreateTableRequest {
                request_id: uuid(),
                rules: Some(rules_set),
                seats,
                empty_seat_bots: Some(pb::BotLevel::Hard as i32),
                ..Default::default()
            },
            "admin",
            &[Role::Admin],
        ))
        .await
        .expect("table created")
        .into_inner()
        .table
        .expect("a table")
        .name;
    if let Some(p) = person {
        client
            .leave_seat(req(
                pb::LeaveSeatRequest {
                    request_id: uuid(),
                    table: table.clone(),
                },
                p,
                &[Role::Player],
            ))
            .await
            .expect("the person leaves; a bot plays for them");
    }
    table
}

/// The ledger, hands and results of a match as comparable text rows (no ids or times that
/// depend on when they were written).
pub async fn projection_rows(pool: &PgPool, table: &str) -> Vec<String> {
    let id = uuid::Uuid::parse_str(table.trim_start_matches("tables/")).unwrap();
    let mut rows: Vec<String> = sqlx::query_scalar(
        "SELECT concat_ws('|', event_id, table_version, hand_number, dealt_version, seat, team,
                player_id, kind, reason, points, penalty_id, voided_by, multiplier, basis,
                event_time)
         FROM ledger_entries WHERE match_id = $1
         ORDER BY table_version, seat, kind, penalty_id",
    )
    .bind(id)
    .fetch_all(pool)
    .await
    .unwrap();
    rows.extend(
        sqlx::query_scalar::<_, String>(
            "SELECT concat_ws('|', dealt_version, hand_number, outcome, winner_seat, multiplier,
                    scores::text, penalties::text, totals_after::text, seed, verified,
                    verify_problem)
             FROM hands WHERE match_id = $1 ORDER BY dealt_version",
        )
        .bind(id)
        .fetch_all(pool)
        .await
        .unwrap(),
    );
    rows.extend(
        sqlx::query_scalar::<_, String>(
            "SELECT concat_ws('|', player_id, seat, total, won, ranked, ended_at)
             FROM match_results WHERE match_id = $1 ORDER BY seat",
        )
        .bind(id)
        .fetch_all(pool)
        .await
        .unwrap(),
    );
    rows
}

/// Waits (at most `within`) until scoring has recorded the end of `table`'s match.
pub async fn wait_for_match_end(pool: &PgPool, table: &str, within: Duration) {
    let id = uuid::Uuid::parse_str(table.trim_start_matches("tables/")).unwrap();
    let deadline = Instant::now() + within;
    loop {
        let ended: Option<bool> =
            sqlx::query_scalar("SELECT ended_at IS NOT NULL FROM matches WHERE match_id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await
                .unwrap_or(None);
        if ended == Some(true) {
            return;
        }
        assert!(Instant::now() < deadline, "scoring never saw {table} end");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub async fn scoring_client(port: u16) -> ScoringServiceClient<Channel> {
    ScoringServiceClient::new(connect(port, Duration::from_secs(30)).await)
}

/// The usual set-up of a scoring test: the table service, scoring in this process on its
/// events, and scoring's database.
pub struct Scoring {
    pub stack: Stack,
    /// Scoring's environment.
    pub env: Vec<(String, String)>,
    pub service: InProcess,
    pub pool: PgPool,
}

impl Scoring {
    /// `None` without the test infrastructure (`.run/infra.env`).
    pub async fn start() -> Option<Scoring> {
        let infra = TestInfra::from_env()?;
        let stack = Stack::start(&infra).await;
        let env = stack.scoring_env.clone();
        let service = stack.scoring(&env).await;
        let pool = Stack::scoring_pool(&env).await;
        Some(Scoring {
            stack,
            env,
            service,
            pool,
        })
    }

    pub async fn client(&self) -> ScoringServiceClient<Channel> {
        scoring_client(self.service.port).await
    }

    pub async fn stop(self) {
        self.service.stop().await;
        self.pool.close().await;
        self.stack.stop().await;
    }
}

/// Publishes table events on the table service's own stream, in its own envelope, as the table
/// would (for events no real table produced).
pub struct Publisher {
    js: jetstream::Context,
    prefix: String,
}

impl Publisher {
    pub async fn new(stack: &Stack) -> Publisher {
        let client = async_nats::connect(&stack.infra.nats_url).await.unwrap();
        Publisher {
            js: jetstream::new(client),
            prefix: stack.table_settings.nats.subject_prefix.clone(),
        }
    }

    pub async fn raw(&self, table: uuid::Uuid, version: u64, payload: Vec<u8>) {
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Msg-Id", uuid().as_str());
        headers.insert("Okey-Table", table.to_string().as_str());
        headers.insert("Okey-Version", version.to_string().as_str());
        self.js
            .publish_with_headers(
                format!("{}.table.{table}.events", self.prefix),
                headers,
                payload.into(),
            )
            .await
            .unwrap()
            .await
            .unwrap();
    }

    /// `event` as version `version` of `table`, stored now.
    pub async fn event(&self, table: uuid::Uuid, version: u64, event: &TableEvent) {
        self.at(table, version, &uuid(), chrono::Utc::now(), event)
            .await;
    }

    /// `event` as version `version` of `table`, with its event id and the time it was stored.
    pub async fn at(
        &self,
        table: uuid::Uuid,
        version: u64,
        event_id: &str,
        time: chrono::DateTime<chrono::Utc>,
        event: &TableEvent,
    ) {
        let published = Published::public(
            format!("tables/{table}"),
            version,
            event_id.to_owned(),
            time.to_rfc3339(),
            event,
        );
        self.raw(table, version, published.encode()).await;
    }
}
