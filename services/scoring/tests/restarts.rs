//! Exactly once, whatever happens: scoring killed (`kill -9`) in the middle of a match, the NATS
//! server restarted, and events delivered twice end in the same ledger, row for row, as a
//! scoring service that read the whole match undisturbed into a database of its own (the rebuild
//! of the projection: an empty schema is filled from the stream's start).
//!
//! This test runs its own NATS server (the one `deploy/infra.sh` installs, on a free port, its
//! store in a temporary directory) so that restarting it disturbs no other test.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use async_nats::jetstream::{self, consumer};
use common::*;
use futures_util::StreamExt;
use okey_platform::testing::{REQUIRE_INFRA_VAR, TestInfra, free_port};

/// The nats-server binary `deploy/infra.sh` installs.
fn nats_server() -> Option<PathBuf> {
    let tools = std::env::var("OKEY_TOOLS_DIR")
        .ok()
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools"));
    let binary = tools.join("venv/bin/nats-server");
    binary.exists().then_some(binary)
}

/// A NATS server with JetStream that can be restarted on the same port and store.
struct Nats {
    binary: PathBuf,
    port: u16,
    store: PathBuf,
    child: Option<Child>,
}

impl Nats {
    fn start(binary: PathBuf) -> Nats {
        let store = std::env::temp_dir().join(format!("okey-scoring-nats-{}", uuid()));
        std::fs::create_dir_all(&store).unwrap();
        let mut nats = Nats {
            binary,
            port: free_port(),
            store,
            child: None,
        };
        nats.spawn();
        nats
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    fn spawn(&mut self) {
        let child = Command::new(&self.binary)
            .args([
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-sd",
            ])
            .arg(&self.store)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server does not answer");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn restart(&mut self) {
        self.kill();
        self.spawn();
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.store);
    }
}

async fn hands_ended(pool: &sqlx::PgPool, table: &str) -> i64 {
    let id = uuid::Uuid::parse_str(table.trim_start_matches("tables/")).unwrap();
    sqlx::query_scalar("SELECT count(*) FROM hands WHERE match_id = $1 AND ended_at IS NOT NULL")
        .bind(id)
        .fetch_one(pool)
        .await
        .unwrap_or(0)
}

/// Publishes the first `n` messages of `table`'s public subject again, under new message ids (so JetStream
/// keeps them): each reaches the consumer a second time.
async fn publish_again(url: &str, prefix: &str, table: &str, n: usize) {
    let client = async_nats::connect(url).await.expect("nats");
    let js = jetstream::new(client);
    let id = table.trim_start_matches("tables/");
    let subject = format!("{prefix}.table.{id}.events");
    let stream = js
        .get_stream(js.stream_by_subject(subject.clone()).await.unwrap())
        .await
        .unwrap();
    let reader = stream
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: subject.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut messages = reader.messages().await.unwrap().take(n);
    while let Some(message) = messages.next().await {
        let message = message.unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Msg-Id", format!("again-{}", uuid()).as_str());
        js.publish_with_headers(subject.clone(), headers, message.payload.clone())
            .await
            .unwrap()
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_nats_restart_and_duplicates_leave_the_ledger_of_an_undisturbed_run() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let Some(binary) = nats_server() else {
        assert!(
            std::env::var(REQUIRE_INFRA_VAR).is_ok_and(|v| v != "1")
                || std::env::var(REQUIRE_INFRA_VAR).is_err(),
            "no nats-server under OKEY_TOOLS_DIR or .tools (deploy/infra.sh up installs it)"
        );
        eprintln!("skipped: no nats-server binary");
        return;
    };
    let mut nats = Nats::start(binary);
    let url = nats.url();
    // Bots a little slower than the default test pace, so the match is still on when scoring
    // is killed.
    let stack = Stack::start_with(
        &infra,
        &[
            ("OKEY_NATS__URL", url.as_str()),
            ("OKEY_LIVE__BOT_PACE_MS", "25"),
        ],
    )
    .await;
    let prefix = stack.table_settings.nats.subject_prefix.clone();
    let disturbed = stack.scoring_env.clone();
    let mut scoring = stack.scoring_binary(&disturbed);
    let pool = Stack::scoring_pool(&disturbed).await;
    let table = bots_match(&stack, Some(&uuid()), rules(5)).await;

    let deadline = Instant::now() + Duration::from_secs(120);
    while hands_ended(&pool, &table).await < 1 {
        assert!(Instant::now() < deadline, "scoring never saw a hand end");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    scoring.kill();
    nats.restart();
    let mut scoring = stack.scoring_binary(&disturbed);
    publish_again(&url, &prefix, &table, 40).await;
    wait_for_match_end(&pool, &table, Duration::from_secs(180)).await;
    // Once more, as many messages as the match has events, after the end.
    let events = stack.table_events(&table).await.len();
    publish_again(&url, &prefix, &table, events).await;

    // The disturbed service has read everything published (the copies included) when its
    // consumer has nothing pending; then compare.
    let events = events as i64;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM applied_events")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert!(applied <= events, "an event applied twice");
        let client = async_nats::connect(&url).await.unwrap();
        let js = jetstream::new(client);
        let stream = js
            .get_stream(
                js.stream_by_subject(format!("{prefix}.table.*.events"))
                    .await
                    .unwrap(),
            )
            .await
            .unwrap();
        let mut info = stream
            .get_consumer::<consumer::pull::Config>(scoring::consumer::CONSUMER)
            .await
            .unwrap();
        let info = info.info().await.unwrap();
        if applied == events && info.num_pending == 0 && info.num_ack_pending == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the copies were never all consumed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The undisturbed run, which is also the rebuild: the same stream read from its start into
    // an empty database (the service makes its durable consumer anew on an empty ledger).
    scoring.kill();
    let undisturbed = stack.fresh_scoring_env();
    let control = stack.scoring(&undisturbed).await;
    let control_pool = Stack::scoring_pool(&undisturbed).await;
    wait_for_match_end(&control_pool, &table, Duration::from_secs(180)).await;

    let rows = projection_rows(&pool, &table).await;
    assert!(rows.len() > 20);
    assert_eq!(rows, projection_rows(&control_pool, &table).await);
    let poisoned: i64 = sqlx::query_scalar("SELECT count(*) FROM poison_events")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(poisoned, 0, "a copy of an event is the event, not poison");

    control.stop().await;
    pool.close().await;
    control_pool.close().await;
    stack.stop().await;
}
