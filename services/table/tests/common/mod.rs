//! Shared helpers of the table service's integration tests: test tokens, an in-process or
//! spawned service on real PostgreSQL and NATS, gRPC clients per player, bots that play from each
//! client's own seat view, and the checks against the stored events and deal seeds.
#![allow(dead_code, unused_imports)]

use std::collections::BTreeMap;
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use okey_bots::{Bot, Level};
use okey_platform::auth::Role;
use okey_platform::testing::{TestInfra, test_token};
use okey_platform::{ServiceKind, Settings};
use okey_proto::v1 as pb;
use okey_rules::{Deal, Hand, SeatView};
use sqlx::postgres::PgPool;
use table::domain::{Seed, Table, TableEvent, show};
use table::grpc::{command_to_proto, event_to_proto};
use table::store::{Recorded, Store};
// The players' clients are the load generator's (one definition for tests and benches).
pub use okey_load::{Client, connect, engine_view, rules, seated_table, uuid};

pub const BINARY: &str = env!("CARGO_BIN_EXE_table");

/// A signed access token for `player` with `roles` (`admin` or `player`), by the platform's test
/// key, which `TestInfra::env_for` makes the service trust.
pub fn token(_settings: &Settings, player: &str, roles: &[&str]) -> String {
    let roles: Vec<Role> = roles.iter().filter_map(|r| Role::parse(r)).collect();
    test_token(player, &roles)
}

/// A service running in this test process.
pub struct TestApp {
    pub port: u16,
    pub settings: Settings,
    /// The service's tables, to look at its memory.
    pub tables: table::service::Tables,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl TestApp {
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

/// Settings for a test service on its own database and subject prefix.
pub fn settings(infra: &TestInfra) -> Settings {
    infra.settings_for(ServiceKind::Table)
}

/// The service's database of `settings`, made and migrated as a start would, and a store on it
/// with no publisher emptying the outbox (nothing is published until a service starts on it).
pub async fn store_without_publisher(settings: &Settings) -> (PgPool, Store) {
    use sqlx::migrate::MigrateDatabase;
    let url = settings.database.url.expose();
    sqlx::Postgres::create_database(url).await.unwrap();
    let pool = PgPool::connect(url).await.unwrap();
    sqlx::migrate!("../../migrations/table")
        .run(&pool)
        .await
        .unwrap();
    (pool.clone(), Store::grouping(pool, 1))
}

/// [`settings`] with `extra` `OKEY_…` variables on top.
pub fn settings_with(infra: &TestInfra, extra: &[(&str, &str)]) -> Settings {
    let mut env = infra.env_for(ServiceKind::Table, 0);
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    settings_from_env(&env)
}

/// Starts the service in-process on a free port with `settings`.
pub async fn spawn_app(settings: Settings) -> TestApp {
    let app = table::startup::Application::build(&settings)
        .await
        .expect("the service starts");
    let port = app.local_addr().port();
    let tables = app.tables();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        app.run_until_stopped(async {
            let _ = stopped.await;
        })
        .await
        .expect("clean stop");
    });
    TestApp {
        port,
        settings,
        tables,
        stop: Some(stop),
        server: Some(server),
    }
}

/// Starts the service binary with `env` on `port`.
pub fn spawn_binary(env: &[(String, String)]) -> Child {
    // `OKEY_TABLE_BINARY` runs another build of the service (the A/B script's other revision).
    let binary = std::env::var("OKEY_TABLE_BINARY").unwrap_or_else(|_| BINARY.to_owned());
    Process::new(binary)
        .env("OKEY_TELEMETRY__LOG_FILTER", "warn")
        .envs(env.iter().cloned())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the binary starts")
}

/// A spawned service process, killed when dropped (also when a test panics, so no process is
/// left behind holding the test's output open).
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Settings matching an environment given to a spawned binary.
pub fn settings_from_env(env: &[(String, String)]) -> Settings {
    Settings::from_sources(ServiceKind::Table, None, env.iter().cloned()).unwrap()
}

/// Everything one client received.
#[derive(Default)]
pub struct Received {
    pub views: Vec<pb::SeatView>,
    /// `(version, event)`.
    pub events: Vec<(i64, pb::TableEvent)>,
}

impl Received {
    pub fn record(&mut self, r: &pb::SubmitCommandResponse) {
        let n = r.events.len() as i64;
        for (i, e) in r.events.iter().enumerate() {
            self.events.push((r.version - n + 1 + i as i64, e.clone()));
        }
        if let Some(v) = &r.view {
            self.views.push(v.clone());
        }
    }
}

/// Bots on each client's own view play until `done` says stop (checked on the acting seat's
/// view before each command) or the match ends. Returns the commands played.
pub async fn play(
    table: &str,
    clients: &mut [Client],
    received: &mut [Received],
    done: impl Fn(&pb::SeatView) -> bool,
) -> usize {
    let mut bots: Vec<Box<dyn Bot>> = (0..4).map(|_| Level::Strong.bot()).collect();
    let mut hand = 0;
    let mut turn = clients[0].view(table).await.unwrap().turn_seat as usize;
    let mut commands = 0;
    loop {
        let view = clients[turn].view(table).await.unwrap();
        received[turn].views.push(view.clone());
        let summary = view.summary.as_ref().unwrap();
        if summary.state == pb::TableState::Finished as i32 || done(&view) {
            return commands;
        }
        if view.hand_number != hand {
            hand = view.hand_number;
            bots = (0..4).map(|_| Level::Strong.bot()).collect();
        }
        let engine = engine_view(&view);
        let command = bots[turn].act(&engine);
        let r = clients[turn]
            .submit(table, &uuid(), command_to_proto(&command).unwrap())
            .await
            .unwrap_or_else(|e| panic!("seat {turn} {command:?} refused: {e:?}"));
        commands += 1;
        received[turn].record(&r);
        let v = r.view.unwrap();
        if v.summary.unwrap().state == pb::TableState::Finished as i32 {
            return commands;
        }
        turn = v.turn_seat as usize;
    }
}

/// The stored events and seeds of a table, read straight from its database.
pub async fn stored(settings: &Settings, table: &str) -> (Vec<Recorded>, BTreeMap<u32, Seed>) {
    let pool = PgPool::connect(settings.database.url.expose())
        .await
        .unwrap();
    let store = Store::new(pool.clone());
    let id = table.strip_prefix("tables/").unwrap().parse().unwrap();
    let events = store.load_after(id, 0, 100_000).await.unwrap();
    let seeds = store.seeds(id).await.unwrap();
    pool.close().await;
    (events, seeds)
}

/// Checks the log is 1..n without gaps.
pub fn assert_gap_free(events: &[Recorded]) {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.version, i as u64 + 1, "gap in the log");
    }
}

/// Checks everything each seat received against the truth folded from the store: every view is
/// exactly `SeatView::of(true hand, seat)` at its version (so no other rack, no pile order), every
/// event is what that seat may see, dealt racks match the revealed seeds.
pub fn check_received(events: &[Recorded], seeds: &BTreeMap<u32, Seed>, received: &[Received]) {
    assert_gap_free(events);
    let mut states: Vec<Option<Table>> = vec![None];
    let mut table: Option<Table> = None;
    for e in events {
        match &mut table {
            None => table = Some(Table::replay([&e.event], seeds.clone())),
            Some(t) => t.evolve(&e.event),
        }
        states.push(table.clone());
    }
    let folded = table.clone().expect("the log is not empty");
    for (seat, got) in received.iter().enumerate() {
        let seat = seat as u8;
        for v in &got.views {
            let truth = states[v.version as usize].as_ref().unwrap();
            let expected = truth.seat_view(seat).expect("a hand was dealt");
            let engine = engine_view(v);
            assert_eq!(
                engine, expected,
                "seat {seat} view at version {}",
                v.version
            );
            let rack: Vec<String> = expected.rack.iter().map(ToString::to_string).collect();
            assert_eq!(v.rack, rack);
        }
        for (version, ev) in &got.events {
            let stored = &events[*version as usize - 1].event;
            let shown = show(stored, Some(seat), |n| seeds.get(&n).copied());
            assert_eq!(
                ev,
                &event_to_proto(&shown, &events[*version as usize - 1].table_id.to_string())
                    .unwrap(),
                "seat {seat} event {version}"
            );
            match &ev.event {
                Some(pb::table_event::Event::TileDrawn(d)) if d.seat != seat as i32 => {
                    assert!(d.tile.is_empty(), "seat {seat} saw seat {}'s draw", d.seat)
                }
                Some(pb::table_event::Event::HandStarted(h)) => {
                    // Dealt from the seed derived from the stored server seed and client seeds.
                    let seed = folded
                        .deal_seed(h.hand_number as u32)
                        .expect("a dealt hand's seed");
                    let deal = Deal::from_seed(&seed, h.first_seat as u8);
                    let rack: Vec<String> = deal.racks[seat as usize]
                        .iter()
                        .map(ToString::to_string)
                        .collect();
                    assert_eq!(h.rack, rack);
                    assert_eq!(h.seed_sha256, table::domain::seed_hash(&seed));
                }
                _ => {}
            }
        }
    }
}

/// Folds the stored events of every finished hand with the engine alone and checks the scores
/// each `HandEnded` recorded, and the match totals.
pub fn check_scores(events: &[Recorded], seeds: &BTreeMap<u32, Seed>) -> usize {
    let mut hands = 0;
    let mut current: Option<Hand> = None;
    let mut rules = None;
    let mut totals = [0i64; 4];
    let mut record = None;
    for e in events {
        match &e.event {
            TableEvent::TableCreated { rules: r, .. } => {
                rules = Some(r.clone());
                record = Some(okey_rules::matches::Match::new(r.clone(), 0));
            }
            TableEvent::HandDealt {
                hand_number,
                first,
                seed_sha256,
                seeding,
                ..
            } => {
                let seed = table::domain::seeding::deal_seed(&seeds[hand_number], seeding.as_ref())
                    .unwrap();
                assert_eq!(&table::domain::seed_hash(&seed), seed_sha256);
                let start =
                    Hand::start(rules.clone().unwrap(), Deal::from_seed(&seed, *first)).unwrap();
                current = Some(Hand::from_start(&start));
            }
            TableEvent::Played { event, .. } => current.as_mut().unwrap().evolve(event),
            TableEvent::HandEnded {
                end,
                result,
                totals: t,
                seed,
                ..
            } => {
                let hand = current.as_mut().unwrap();
                hand.evolve(&okey_rules::Event::HandEnded { end: *end });
                let folded = okey_rules::matches::HandResult::of(hand).unwrap();
                assert_eq!(&folded, result);
                let record = record.as_mut().unwrap();
                record.record(folded);
                assert_eq!(&record.totals, t);
                totals = *t;
                assert_eq!(seed.len(), 64);
                hands += 1;
            }
            TableEvent::MatchEnded { totals: t, .. } => assert_eq!(t, &totals),
            _ => {}
        }
    }
    hands
}

/// One answer of [`http`].
#[derive(Debug)]
pub struct HttpAnswer {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpAnswer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
}

/// One plain HTTP/1.1 request to `127.0.0.1:port` on a connection of its own, the answer read
/// to its length (a server may keep the connection open): what a browser sends to the replay
/// page, and what WebDriver speaks. Fails after two minutes without a whole answer.
pub async fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&serde_json::Value>,
) -> HttpAnswer {
    let what = format!("{method} {path} on port {port}");
    tokio::time::timeout(
        Duration::from_secs(120),
        http_exchange(port, method, path, headers, body),
    )
    .await
    .unwrap_or_else(|_| panic!("no whole answer to {what} within two minutes"))
}

async fn http_exchange(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&serde_json::Value>,
) -> HttpAnswer {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        request.push_str("Content-Type: application/json\r\n");
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap_or_else(|e| panic!("connect to {port}: {e}"));
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    // Reads more; false at the end of the stream.
    async fn more(stream: &mut tokio::net::TcpStream, raw: &mut Vec<u8>, buf: &mut [u8]) -> bool {
        let n = stream.read(buf).await.unwrap();
        raw.extend_from_slice(&buf[..n]);
        n > 0
    }
    let split = loop {
        if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        assert!(
            more(&mut stream, &mut raw, &mut buf).await,
            "no HTTP head: {}",
            String::from_utf8_lossy(&raw)
        );
    };
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let start = split + 4;
    let body = if let Some(length) = header("content-length") {
        let length: usize = length.parse().expect("a content length");
        while raw.len() < start + length {
            assert!(
                more(&mut stream, &mut raw, &mut buf).await,
                "the body ended early"
            );
        }
        raw[start..start + length].to_vec()
    } else if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        // Chunks, to the empty one.
        let mut out = Vec::new();
        let mut at = start;
        loop {
            let line_end = loop {
                if let Some(end) = raw[at..].windows(2).position(|w| w == b"\r\n") {
                    break at + end;
                }
                assert!(
                    more(&mut stream, &mut raw, &mut buf).await,
                    "chunks ended early"
                );
            };
            let size_text = String::from_utf8_lossy(&raw[at..line_end]).into_owned();
            let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16)
                .expect("hex chunk size");
            at = line_end + 2;
            if size == 0 {
                break;
            }
            while raw.len() < at + size + 2 {
                assert!(
                    more(&mut stream, &mut raw, &mut buf).await,
                    "a chunk ended early"
                );
            }
            out.extend_from_slice(&raw[at..at + size]);
            at += size + 2;
        }
        out
    } else {
        while more(&mut stream, &mut raw, &mut buf).await {}
        raw[start..].to_vec()
    };
    HttpAnswer {
        status,
        headers,
        body,
    }
}
