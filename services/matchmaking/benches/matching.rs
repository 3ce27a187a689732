//! Matching benchmark (not a test): how fast quick play turns a queue into tables, measured
//! against how fast the table service itself creates tables, in the same run, on this machine's
//! PostgreSQL, Redis and NATS with the real accounts, table and matchmaking services in-process
//! (as the tests run them).
//!
//! 0. A warm-up of CreateTable calls, not measured (token, connections, first tables).
//! 1. **CreateTable alone**: the table service's own rate, called with the matchmaker's client
//!    (`matchmaking::tables::Tables`: the same service token, request and retries) at the
//!    matcher's concurrency ([`CREATING_AT_ONCE`]), for as many tables as phase 2 forms.
//! 2. **Matching a queue**: `--tickets` (10,000) searching tickets of one rule set are written
//!    while no matcher runs; then a replica starts and is timed until every ticket is MATCHED
//!    (each at one of `tickets / 4` different tables): tables formed per second.
//! 3. CreateTable alone again: the machine drifts (other builds, the disk), so the ratio is
//!    against the mean of 1 and 3, and both are printed.
//! 4. **Latency**: once the machine is quiet again (the outbox and accounts' statistics consumer
//!    work off the tables of phases 1–3 for some seconds), `--groups` (100) times, four
//!    signed-in guests open tickets with the same rules through `FindTable` and follow them on
//!    `WatchTicket`; the time from sending the fourth `FindTable` to MATCHED on each of the four
//!    streams, p50 and p99 over every ticket.
//!
//! **What a table costs.** Phases 1–3 keep the machine's two cores busy, and matching is the same
//! CreateTable calls plus the matcher's own work on the same cores, so the rate ratio is below
//! 1.0 by construction. Each phase also measures the machine's busy CPU time per table (all
//! processes: the services, PostgreSQL, NATS, Redis, the kernel): matching's minus
//! CreateTable's is what the matcher costs, and CreateTable's cost over the matcher's is how many
//! times the tables CreateTable makes the matcher forms with the same CPU.
//!
//! Every table is one hand of `classic` with an hour a turn: nobody plays at them, and no turn
//! runs out (and no bot plays) while the bench runs, so each phase times only the making of
//! tables.
//!
//! Goal (issue 17): matching is never the bottleneck (the matcher forms ≥ 1.0× the tables
//! CreateTable makes, per CPU) and p99 < 100 ms.
//!
//! `deploy/infra.sh up`, then `set -a; source .run/infra.env; set +a;
//! cargo bench -p matchmaking --bench matching` (`-- --tickets 2000 --groups 50` is shorter).

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use common::{Backends, Guest, find, is_matched, mm_client, one_hand};
use matchmaking::domain::{BotLevel, Occupant};
use matchmaking::matcher::CREATING_AT_ONCE;
use matchmaking::settings::MatchmakingSettings;
use matchmaking::store::{Claim, ClaimOrigin, NewTicket, Store};
use matchmaking::tables::Tables;
use okey_platform::service_token::ServiceTokens;
use okey_platform::testing::{InProcess, TestInfra, machine_cpu};
use okey_proto::v1 as pb;
use okey_proto::v1::matchmaking_service_client::MatchmakingServiceClient;
use okey_rules::RuleSet;
use sqlx::postgres::PgPoolOptions;
use tokio::sync::Semaphore;
use tonic::codegen::tokio_stream::StreamExt;
use tonic::transport::Channel;
use uuid::Uuid;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Prints `label: done/total` about once a second until `done` reaches `total`.
fn progress(
    label: &'static str,
    done: Arc<AtomicUsize>,
    total: usize,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let start = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let n = done.load(Ordering::Relaxed);
            eprintln!(
                "  {label}: {n}/{total} ({:.0} s)",
                start.elapsed().as_secs_f64()
            );
            if n >= total {
                return;
            }
        }
    })
}

/// What CreateTable alone did.
struct Created {
    per_sec: f64,
    latencies: Vec<Duration>,
    /// The machine's busy CPU time over the phase, per table made (ms), and its busy cores.
    cpu_per_table: f64,
    busy_cores: f64,
}

/// The machine's busy CPU time since `from` (a [`machine_cpu`]), in seconds, and the cores it
/// kept busy meanwhile.
fn busy_since(from: (f64, f64)) -> (f64, f64) {
    let (busy, total) = machine_cpu();
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get()) as f64;
    let busy = busy - from.0;
    (busy, busy / (total - from.1).max(f64::EPSILON) * cores)
}

/// [`busy_since`] per table made, in ms, and the busy cores.
fn cpu_per_table(from: (f64, f64), tables: usize) -> (f64, f64) {
    let (busy, cores) = busy_since(from);
    (busy * 1000.0 / tables as f64, cores)
}

/// Creates `n` quick-play tables of four players through `tables`, [`CREATING_AT_ONCE`] at a
/// time, as the matcher does.
async fn create_tables(tables: &Tables, rules: &RuleSet, n: usize, label: &'static str) -> Created {
    let permits = Arc::new(Semaphore::new(CREATING_AT_ONCE));
    let done = Arc::new(AtomicUsize::new(0));
    settle(label).await;
    let shown = progress(label, done.clone(), n);
    let cpu = machine_cpu();
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(n);
    for _ in 0..n {
        let permit = permits
            .clone()
            .acquire_owned()
            .await
            .expect("open semaphore");
        let claim = Claim {
            claim_id: Uuid::new_v4(),
            origin: ClaimOrigin::QuickPlay,
            rules: rules.clone(),
            seats: std::array::from_fn(|_| Occupant::Player {
                name: format!("players/{}", Uuid::new_v4()),
                display_name: String::new(),
            }),
            room_id: None,
            members: Vec::new(),
            spectators_allowed: true,
            traces: Vec::new(),
        };
        let tables = tables.clone();
        let done = done.clone();
        tasks.push(tokio::spawn(async move {
            let _permit = permit;
            let asked = Instant::now();
            tables.create(&claim).await.expect("CreateTable");
            done.fetch_add(1, Ordering::Relaxed);
            asked.elapsed()
        }));
    }
    let mut latencies = Vec::with_capacity(n);
    for t in tasks {
        latencies.push(t.await.expect("a CreateTable task"));
    }
    let elapsed = start.elapsed();
    let (cpu_per_table, busy_cores) = cpu_per_table(cpu, n);
    shown.abort();
    latencies.sort();
    Created {
        per_sec: n as f64 / elapsed.as_secs_f64(),
        latencies,
        cpu_per_table,
        busy_cores,
    }
}

/// Waits (at most a minute) until the machine keeps less than half a core busy over a second,
/// so that a phase neither pays for the backlog the one before left (the outbox publishing its
/// tables' events, accounts' statistics consumer applying them) nor is timed on it; returns how
/// long that took, in seconds.
async fn settle(before: &str) -> f64 {
    let start = Instant::now();
    loop {
        let cpu = machine_cpu();
        tokio::time::sleep(Duration::from_secs(1)).await;
        let (_, busy) = busy_since(cpu);
        if busy < 0.5 || start.elapsed() > Duration::from_secs(60) {
            return start.elapsed().as_secs_f64();
        }
        eprintln!(
            "  settling before {before}: {busy:.2} cores busy ({:.0} s)",
            start.elapsed().as_secs_f64()
        );
    }
}

/// Writes `n` searching tickets of `rules` (no bots, an hour to live) for new players.
async fn write_queue(store: &Store, rules: &RuleSet, n: usize) {
    let done = Arc::new(AtomicUsize::new(0));
    let shown = progress("writing the queue", done.clone(), n);
    let writers = 8;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let (store, rules, done) = (store.clone(), rules.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            for _ in (w..n).step_by(writers) {
                let now = Utc::now();
                store
                    .open_ticket(&NewTicket {
                        player_id: Uuid::new_v4(),
                        request_id: Uuid::new_v4().to_string(),
                        rules: rules.clone(),
                        allow_bots: false,
                        bot_level: BotLevel::Default,
                        rating: matchmaking::domain::NEW_PLAYER_RATING,
                        now,
                        expires_at: now + Duration::from_secs(3600),
                        trace: Default::default(),
                        display_name: String::new(),
                    })
                    .await
                    .expect("a ticket opens");
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for t in tasks {
        t.await.expect("a writer");
    }
    shown.abort();
}

/// One group of four: three guests wait on their streams, the fourth `FindTable` is sent; the
/// time from sending it to MATCHED on each stream. All four must share one table.
async fn one_group(port: u16, guests: &[Guest], rules: &pb::RuleSet) -> Vec<Duration> {
    let mut api = mm_client(port).await;
    let mut streams = Vec::new();
    for guest in &guests[..3] {
        let ticket = find(&mut api, guest, rules.clone(), false)
            .await
            .expect("FindTable");
        let mut stream = watch(&mut api, guest, ticket.name).await;
        // The ticket as it is now (searching), before the fourth comes.
        stream
            .next()
            .await
            .expect("a first ticket")
            .expect("a ticket");
        streams.push(stream);
    }
    let sent = Instant::now();
    let fourth = find(&mut api, &guests[3], rules.clone(), false)
        .await
        .expect("FindTable");
    streams.push(watch(&mut api, &guests[3], fourth.name).await);
    let waits: Vec<_> = streams
        .into_iter()
        .map(|mut stream| {
            tokio::spawn(async move {
                let deadline = sent + Duration::from_secs(30);
                loop {
                    let next = tokio::time::timeout_at(deadline.into(), stream.next())
                        .await
                        .expect("MATCHED within 30 s")
                        .expect("the stream stays open until the ticket is final")
                        .expect("a ticket");
                    let ticket = next.ticket.expect("a ticket");
                    if is_matched(&ticket) {
                        return (sent.elapsed(), ticket.table);
                    }
                }
            })
        })
        .collect();
    let mut out = Vec::new();
    let mut table = None;
    for w in waits {
        let (elapsed, at) = w.await.expect("a stream task");
        assert!(
            table.get_or_insert(at.clone()) == &at,
            "the four share one table"
        );
        out.push(elapsed);
    }
    out
}

/// `guest`'s WatchTicket stream of ticket `name`.
async fn watch(
    api: &mut MatchmakingServiceClient<Channel>,
    guest: &Guest,
    name: String,
) -> tonic::Streaming<pb::WatchTicketResponse> {
    api.watch_ticket(guest.req(pb::WatchTicketRequest { name }))
        .await
        .expect("WatchTicket")
        .into_inner()
}

#[tokio::main]
async fn main() {
    let Some(infra) = TestInfra::from_env() else {
        eprintln!("start the infrastructure (deploy/infra.sh up) and source .run/infra.env");
        std::process::exit(2);
    };
    let tickets = (arg("--tickets", 10_000) as usize / 4).max(1) * 4;
    let groups = arg("--groups", 100) as usize;
    let n_tables = tickets / 4;
    println!(
        "matching bench: {tickets} tickets ({n_tables} tables), {groups} latency groups, \
         {CREATING_AT_ONCE} tables created at once"
    );

    let backends = Backends::start(&infra).await;
    let settings = backends.matchmaking_settings(&[]);
    let own: MatchmakingSettings = settings.own().expect("matchmaking settings");
    let tables = Tables::new(
        &own.matchmaking.table_url,
        ServiceTokens::new(&settings.service_client),
    )
    .expect("a table client");
    // An hour a turn: nobody sits down at the bench's tables, so with the usual minute the
    // first ones would time out and be played to the end by bots while later phases are timed,
    // and the table service would be measured playing hands, not creating tables.
    let wire_rules = pb::RuleSet {
        turn_seconds: 3600,
        ..one_hand("classic")
    };
    let rules = matchmaking::wire::rules_from_proto(Some(&wire_rules)).expect("valid rules");

    // Warm-up, not measured: the service token, connections, the table service's first tables.
    create_tables(&tables, &rules, CREATING_AT_ONCE * 4, "warm-up").await;

    // 1. The table service's own rate.
    let before = create_tables(&tables, &rules, n_tables, "CreateTable alone (before)").await;
    println!("CreateTable alone (before): {:.1} tables/s", before.per_sec);

    // 2. A queue of `tickets`, then a replica matching it. Building the replica migrates its
    // database; its matcher runs only once it runs.
    let app = matchmaking::startup::Application::build(&settings)
        .await
        .expect("matchmaking starts");
    let port = app.local_addr().port();
    let pool = PgPoolOptions::new()
        .max_connections(8)
        .connect(settings.database.url.expose())
        .await
        .expect("the matchmaking database");
    let store = Store::new(pool.clone());
    write_queue(&store, &rules, tickets).await;
    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&pool)
                .await
                .expect("a count") as usize
        }
    };
    assert_eq!(
        count("SELECT count(*) FROM tickets WHERE state = 'searching'").await,
        tickets
    );
    settle("matching").await;
    let cpu = machine_cpu();
    let started = Instant::now();
    let mm = InProcess::spawn(port, |stop| app.run_until_stopped(stop));
    // The probe must not load the machine it measures: a scan counting 10,000 rows every 20 ms
    // is CPU the matcher and the table service do not get. Whether any ticket still searches is
    // one look into the partial index of searching tickets; the count is shown every 2 s.
    let mut shown = Instant::now();
    loop {
        let searching: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM tickets WHERE state = 'searching')")
                .fetch_one(&pool)
                .await
                .expect("a probe");
        if !searching {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "not every ticket matched in 10 minutes"
        );
        if shown.elapsed() >= Duration::from_secs(2) {
            // Counting the matched ones would read the whole table; the searching ones are in
            // a partial index that shrinks as the queue does.
            let matched =
                tickets - count("SELECT count(*) FROM tickets WHERE state = 'searching'").await;
            eprintln!(
                "  matching: {matched}/{tickets} matched ({:.0} s)",
                started.elapsed().as_secs_f64()
            );
            shown = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let matching = started.elapsed();
    let (matching_cpu, matching_cores) = cpu_per_table(cpu, n_tables);
    let matching_rate = n_tables as f64 / matching.as_secs_f64();
    assert_eq!(
        count("SELECT count(*) FROM tickets WHERE state = 'matched'").await,
        tickets,
        "every ticket matched"
    );
    let distinct = count("SELECT count(DISTINCT table_name) FROM tickets").await;
    let seats = count("SELECT count(DISTINCT (table_name, seat)) FROM tickets").await;
    assert_eq!(
        (distinct, seats),
        (n_tables, tickets),
        "each ticket once, at its own seat"
    );
    println!(
        "matching: {tickets} tickets into {n_tables} tables in {:.2} s = {matching_rate:.1} tables/s",
        matching.as_secs_f64()
    );

    // 3. The table service's rate again.
    let after = create_tables(&tables, &rules, n_tables, "CreateTable alone (after)").await;
    println!("CreateTable alone (after): {:.1} tables/s", after.per_sec);

    // 4. Latency, one group at a time on the emptied queue, once the machine has worked off
    // what the phases before left it: else the groups time that backlog, not matching.
    let settled = settle("the latency groups").await;
    let guests = backends.guests(4).await;
    let cpu = machine_cpu();
    let mut latencies = Vec::with_capacity(groups * 4);
    for g in 0..groups {
        latencies.extend(one_group(port, &guests, &wire_rules).await);
        if (g + 1) % 20 == 0 {
            eprintln!("  latency: {}/{groups} groups", g + 1);
        }
    }
    latencies.sort();
    let (_, latency_cores) = busy_since(cpu);

    let create_rate = (before.per_sec + after.per_sec) / 2.0;
    let mut create_latencies: Vec<Duration> = before
        .latencies
        .iter()
        .chain(&after.latencies)
        .copied()
        .collect();
    create_latencies.sort();
    println!();
    println!(
        "CreateTable alone:   {:.1} tables/s (before {:.1}, after {:.1}); one call p50 {:.1} ms, \
         p99 {:.1} ms at {CREATING_AT_ONCE} in flight",
        create_rate,
        before.per_sec,
        after.per_sec,
        ms(percentile(&create_latencies, 0.50)),
        ms(percentile(&create_latencies, 0.99)),
    );
    println!("matching a queue:    {matching_rate:.1} tables/s from {tickets} waiting tickets");
    println!(
        "ratio:               {:.2}× the CreateTable rate (both on this machine's cores: \
         matching is CreateTable plus the matcher)",
        matching_rate / create_rate
    );
    // What each phase cost the whole machine per table: matching is the same CreateTable calls
    // plus the matcher's own work (its statements, notifications, the listener), so the
    // difference is what the matcher costs, and the matcher keeps up with the table service
    // when its cost per table is at most CreateTable's.
    let create_cpu = (before.cpu_per_table + after.cpu_per_table) / 2.0;
    let matcher_cpu = matching_cpu - create_cpu;
    println!(
        "machine CPU a table: CreateTable alone {create_cpu:.2} ms (before {:.2}, after {:.2}; \
         {:.2}/{:.2} cores busy), matching {matching_cpu:.2} ms ({matching_cores:.2} cores busy)",
        before.cpu_per_table, after.cpu_per_table, before.busy_cores, after.busy_cores,
    );
    println!(
        "the matcher's own:   {matcher_cpu:.2} ms a table: it forms {:.2}× the tables CreateTable \
         makes with the same CPU (goal ≥ 1.0×: matching is never the bottleneck)",
        create_cpu / matcher_cpu.max(f64::EPSILON)
    );
    println!(
        "fourth FindTable → MATCHED on WatchTicket ({} tickets, {groups} groups; after {settled:.0} s \
         of settling, {latency_cores:.2} cores busy): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms \
         (goal p99 < 100 ms)",
        latencies.len(),
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.99)),
        ms(latencies.last().copied().unwrap_or_default()),
    );

    mm.stop().await;
    backends.stop().await;
}
