//! Load benchmark (not a test): N tables of four bot clients each play through gRPC (the load
//! generator of `okey_load`, which the scoring bench drives too) against the table service on this machine's PostgreSQL (fsync on) and NATS; prints commands per second and
//! p50/p99 SubmitCommand latency, then, in the same run, the raw rate of single-row inserts into
//! PostgreSQL at the same concurrency, and the ratio of the two.
//!
//! The service runs as its own process (the `table` binary, built with the bench) so that what is
//! measured is the service, not the bots' gRPC clients sharing its runtime; both still share this
//! machine's cores with PostgreSQL, NATS and Redis, so the CPU each used is printed too.
//! `--in-process` runs the service inside the bench process instead. `--pool N` sets the
//! service's PostgreSQL connections: by default those of the raw inserts, the number of tables
//! at most 16 (more only adds context switches on a small machine; commits still group).
//! `--commit-groups N` sets the service's `database.commit_groups` (group commits in flight, 2 by
//! default).
//! `--client-threads N` gives the bot clients N runtime threads (by default 1 for a closed
//! loop, where on a small machine a second client thread mostly added cross-thread wake-ups;
//! every core for a paced run, and in-process, where the service shares the runtime). `--tables-per-connection N` puts N tables'
//! players on each HTTP/2 connection (by default four connections, or one per 100 tables).
//!
//! A discard asks for no view in its answer (`SEAT_VIEW_FORM_NONE`): the turn passes, and the
//! seat whose turn comes next reads its view with `min_version` set to the version the
//! last command's answer gave (as an app following the table knows it), so a table held in
//! memory answers without a store check. `--latest-views` reads without it: every view is
//! checked against the store, as a call without `min_version` is.
//!
//! `--watch` also opens every player's `WatchTable` update stream (as the app does), counts
//! what arrives and measures each move's way to the other players: from the moment its
//! SubmitCommand is sent to the moment each other player's stream receives its first event
//! (`move -> other players' streams`). By default every bot answers at once (a closed loop: the service is saturated, and what is
//! measured is its throughput). `--think-ms N` makes each bot think about N ms before each
//! command, as players do, so the latency is measured at a load the machine carries: each pause
//! is drawn between half and one and a half of N, so the tables are not in step (with the same
//! pause everywhere, all the tables' commands arrived together every N ms, and the last of each
//! wave waited for the other 99). The raw inserts pause the same way.
//!
//! `CPU a command` splits a command's CPU between the processes that did the work (the service,
//! the bot clients, PostgreSQL's backends, NATS, Redis: each one's CPU time while playing, over
//! the commands played), and `CPU a raw insert` does the same for the raw inserts. On a noisy
//! machine these move less than the rates do, so an A/B reads them first.
//!
//! After each round's raw inserts, the gRPC floor: health checks (`grpc.health.v1.Health/Check`,
//! no store, no NATS, no Redis) at the same concurrency on the bot clients' connections, for as
//! long as the raw inserts ran, with their rate and `CPU a health check`. A command is such a
//! round trip plus its work, so this splits a command's cost between the gRPC front and the rest.
//!
//! The raw inserts' latency is printed beside the commands' (at the same concurrency a closed
//! loop's latency is concurrency / rate, whatever the work). After play stops, the bench waits
//! for the outbox to drain and prints how far JetStream publishing was behind.
//!
//! `--rounds N` alternates N times: play for `--seconds`, pause, raw inserts (at most 10 s). Each
//! round's ratio is against the raw rate measured right after it, so the machine's drift over a
//! run (other load, the disk) shows as spread between rounds instead of biasing one figure; the
//! median and range are printed with the totals.
//!
//! The service's memory (RSS) is printed with no table, with every table seated, with every
//! stream open (`--watch`; the tables wait for the bench between the two) and after play, each
//! difference per table or per stream. `--idle-secs N` sets the service's `live.idle_table_secs`
//! and, once every player has left, waits for the idle eviction and prints the memory again.
//! With `--think-ms`, a last line says whether the human-pace goals held (SubmitCommand p99 under
//! 20 ms, and with `--watch` a move reaching the other players' streams under 50 ms at p99),
//! with the tables per core.
//!
//! The run's database and JetStream stream are dropped at the end (`--keep` keeps them).
//!
//! `deploy/infra.sh up`, then `cargo bench -p table --bench load -- --tables 100 --seconds 20`
//! (add `--rounds 5` for a figure that holds on a noisy machine).

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{Running, settings_from_env, spawn_app, spawn_binary};
use okey_load::{
    CpuSplit, PAUSED, Pauses, STOPPED, TablePlay, Watched, arg, connect, flag, percentile,
    rss_bytes, table_loop,
};
use okey_platform::testing::TestInfra;
use okey_platform::{ServiceKind, Settings};
use sqlx::postgres::PgPoolOptions;
use table::outbox::Subjects;

// The same allocator as the service binary, for the bot clients.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Waits (at most a minute) for the outbox to be empty: every event on JetStream. Returns the
/// rows there when called, those left, and how long it waited.
async fn drain_outbox(pool: &sqlx::PgPool) -> (i64, i64, Duration) {
    let backlog = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM outbox")
            .fetch_one(pool)
            .await
            .unwrap()
    };
    let unpublished = backlog().await;
    let started = Instant::now();
    let mut left = unpublished;
    while left > 0 && started.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        left = backlog().await;
    }
    (unpublished, left, started.elapsed())
}

/// Single-row inserts (one transaction each) from `concurrency` tasks for `seconds`, each task
/// pausing like a player thinking `think` ([`Pauses`]) before each insert: how many, and each
/// one's latency.
async fn raw_inserts(
    pool: &sqlx::PgPool,
    concurrency: usize,
    think: Duration,
    seconds: u64,
) -> (u64, Vec<Duration>) {
    let inserts = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for i in 0..concurrency {
        let (pool, inserts, stop) = (pool.clone(), inserts.clone(), stop.clone());
        let mut pauses = Pauses::new(think, 1_000_000 + i as u64);
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                pauses.pause().await;
                let started = Instant::now();
                sqlx::query("INSERT INTO bench_raw (payload) VALUES ($1)")
                    .bind(serde_json::json!({"type": "TileDiscarded", "seat": 1, "tile": "R7"}))
                    .execute(&pool)
                    .await
                    .unwrap();
                latencies.push(started.elapsed());
                inserts.fetch_add(1, Ordering::Relaxed);
            }
            latencies
        }));
    }
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.unwrap());
    }
    (inserts.load(Ordering::Relaxed), latencies)
}

/// The gRPC floor: health checks (`grpc.health.v1.Health/Check`, a lookup in a map: no store,
/// no NATS, no Redis, no token) from `concurrency` tasks over the bot clients' connections for
/// `seconds`, each task pausing like a player thinking `think` before each call. How many calls
/// were answered. What a call costs the machine is the least a command can cost it: a command is
/// such a round trip plus its work.
async fn health_checks(
    channels: &[tonic::transport::Channel],
    concurrency: usize,
    think: Duration,
    seconds: u64,
) -> u64 {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_client::HealthClient;
    let calls = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for i in 0..concurrency {
        let mut client = HealthClient::new(channels[i % channels.len()].clone());
        let (calls, stop) = (calls.clone(), stop.clone());
        let mut pauses = Pauses::new(think, 2_000_000 + i as u64);
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                pauses.pause().await;
                client
                    .check(HealthCheckRequest {
                        service: String::new(),
                    })
                    .await
                    .expect("the service answers its health check");
                calls.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    calls.load(Ordering::Relaxed)
}

fn main() {
    // A closed loop's bot clients on one thread by default (`--client-threads N` for more): on a
    // machine the service, PostgreSQL and NATS share, a second client worker mostly adds wake-ups
    // across threads and task switches. A paced run keeps every core, so that thousands of
    // tables' clients do not queue behind each other and add to the latencies they measure; so
    // does the in-process bench, where the service shares the runtime.
    let threads = match arg("--client-threads", 0) as usize {
        0 if flag("--in-process") || arg("--think-ms", 0) > 0 => {
            std::thread::available_parallelism().map_or(2, |n| n.get())
        }
        0 => 1,
        n => n,
    };
    let runtime = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    };
    runtime
        .expect("the bench builds its runtime")
        .block_on(bench());
}

async fn bench() {
    let tables = arg("--tables", 20) as usize;
    let seconds = arg("--seconds", 15);
    let rounds = arg("--rounds", 1).max(1) as usize;
    let think = Duration::from_millis(arg("--think-ms", 0));
    let watched = flag("--watch").then(|| Arc::new(Watched::new(tables)));
    let idle_secs = flag("--idle-secs").then(|| arg("--idle-secs", 10).max(1));
    let latest_views = flag("--latest-views");
    let Some(infra) = TestInfra::from_env() else {
        eprintln!("start the infrastructure first: deploy/infra.sh up");
        std::process::exit(2);
    };
    // PostgreSQL connections of the raw inserts: as many as the tables, at most 16 (more only
    // adds context switches on a small machine; commits still group). The service's: the same,
    // unless `--pool` says otherwise (the baseline does not change with it).
    let raw_connections = tables.clamp(4, 16);
    let connections = arg("--pool", raw_connections as u64) as usize;
    let mut env = infra.env_for(ServiceKind::Table, 0);
    env.retain(|(k, _)| k != "OKEY_DATABASE__MAX_CONNECTIONS");
    env.push((
        "OKEY_DATABASE__MAX_CONNECTIONS".into(),
        connections.to_string(),
    ));
    // Group commits in flight (the service's `database.commit_groups`).
    let commit_groups = arg("--commit-groups", 2);
    env.retain(|(k, _)| k != "OKEY_DATABASE__COMMIT_GROUPS");
    env.push((
        "OKEY_DATABASE__COMMIT_GROUPS".into(),
        commit_groups.to_string(),
    ));
    env.push(("OKEY_TELEMETRY__LOG_FILTER".into(), "warn".into()));
    if let Some(idle) = idle_secs {
        env.push(("OKEY_LIVE__IDLE_TABLE_SECS".into(), idle.to_string()));
        // The service says how many tables its idle eviction dropped.
        env.retain(|(k, _)| k != "OKEY_TELEMETRY__LOG_FILTER");
        env.push((
            "OKEY_TELEMETRY__LOG_FILTER".into(),
            "warn,table::startup=info".into(),
        ));
    }
    let in_process = flag("--in-process");
    let (app, child, port, settings) = if in_process {
        let settings = Settings::from_sources(ServiceKind::Table, None, env).unwrap();
        let app = spawn_app(settings.clone()).await;
        let port = app.port;
        (Some(app), None, port, settings)
    } else {
        let port = okey_platform::testing::free_port();
        env.retain(|(k, _)| k != "OKEY_SERVER__PORT");
        env.push(("OKEY_SERVER__PORT".into(), port.to_string()));
        let settings = settings_from_env(&env);
        (None, Some(Running(spawn_binary(&env))), port, settings)
    };
    // A few HTTP/2 connections, shared by the tables' clients: four, or one per 100 tables;
    // `--tables-per-connection N`: one per N tables (1: each table's four players on a
    // connection of their own, as four phones behind one proxy would be).
    let connections = match arg("--tables-per-connection", 0) as usize {
        0 => tables.div_ceil(100).max(4),
        n => tables.div_ceil(n),
    };
    let mut channels = Vec::new();
    for _ in 0..connections {
        channels.push(connect(port).await);
    }

    // The service creates its database as it starts: wait for it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let pool = loop {
        match PgPoolOptions::new()
            .max_connections(raw_connections as u32)
            .connect(settings.database.url.expose())
            .await
        {
            Ok(pool) => break pool,
            Err(e) if Instant::now() > deadline => panic!("cannot reach the database: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    let fsync: String = sqlx::query_scalar("SHOW fsync")
        .fetch_one(&pool)
        .await
        .unwrap();
    let sync: String = sqlx::query_scalar("SHOW synchronous_commit")
        .fetch_one(&pool)
        .await
        .unwrap();

    sqlx::query(
        "CREATE TABLE IF NOT EXISTS bench_raw (id bigserial PRIMARY KEY, payload jsonb NOT NULL)",
    )
    .execute(&pool)
    .await
    .unwrap();

    // The service's memory before any table (its pools and runtime), then once every table is
    // seated (and dealt), then with every player's stream open.
    let service_pid = child.as_ref().map(|c| c.0.id());
    let rss = || service_pid.map_or(0, rss_bytes);
    let rss_empty = rss();
    let (phase, phase_rx) = tokio::sync::watch::channel(PAUSED);
    let start = Arc::new(tokio::sync::Barrier::new(tables + 1));
    // Tables sit down 32 at a time (see `TablePlay::seating`).
    let seating = Arc::new(tokio::sync::Semaphore::new(32));
    let mut tasks = Vec::new();
    for i in 0..tables {
        let play = TablePlay {
            channel: channels[i % channels.len()].clone(),
            settings: settings.clone(),
            start: start.clone(),
            phase: phase_rx.clone(),
            watched: watched.clone(),
            latest_views,
            seating: Some(seating.clone()),
        };
        tasks.push(tokio::spawn(table_loop(play, Pauses::new(think, i as u64))));
    }
    // Every table is seated and dealt (and with `--watch`, every stream open): measure from here.
    let seat_within = Duration::from_secs(120 + tables as u64 / 20);
    let rss_seated = match &watched {
        Some(watched) => {
            tokio::time::timeout(seat_within, watched.seated.wait())
                .await
                .expect("every table is seated in time");
            // Let the last appends' work settle (outbox, deadlines) before reading memory.
            tokio::time::sleep(Duration::from_secs(1)).await;
            Some(rss())
        }
        None => None,
    };
    tokio::time::timeout(seat_within, start.wait())
        .await
        .expect("every table is seated (and its streams open) in time");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_ready = rss();
    // Without streams, seated and ready are the same moment.
    let rss_seated = rss_seated.unwrap_or(rss_ready);
    let raw_seconds = seconds.min(10);
    let progress = rounds > 1;
    let mut played = Duration::ZERO;
    let mut watched_during = 0;
    // CPU by process while playing, and while the raw inserts ran.
    let (mut cpu, mut raw_cpu) = (CpuSplit::default(), CpuSplit::default());
    let mut raw_total = 0u64;
    // The gRPC floor's calls and CPU (see `health_checks`).
    let (mut floor_cpu, mut floor_total, mut floor_rates) = (CpuSplit::default(), 0u64, Vec::new());
    // In-process, the bench also sees how many tables the service holds.
    let held = || app.as_ref().map(|a| a.tables.cached_tables());
    let (mut rss_played, mut held_played) = (0, None);
    let mut backlog_seen = Vec::new();
    let mut raw_rates = Vec::new();
    let mut raw_latencies = Vec::new();
    for round in 1..=rounds {
        // Play.
        let watched_before = watched
            .as_ref()
            .map_or(0, |w| w.updates.load(Ordering::Relaxed));
        let cpu_before = CpuSplit::now(service_pid);
        let started = Instant::now();
        phase.send_replace(round);
        tokio::time::sleep(Duration::from_secs(seconds)).await;
        phase.send_replace(PAUSED);
        if round == rounds {
            (rss_played, held_played) = (rss(), held());
        }
        played += started.elapsed();
        watched_during += watched
            .as_ref()
            .map_or(0, |w| w.updates.load(Ordering::Relaxed))
            - watched_before;
        cpu = cpu.plus(&CpuSplit::now(service_pid).since(&cpu_before));
        // Let the commands in flight finish and JetStream publishing catch up, so the raw
        // inserts have the machine to themselves.
        backlog_seen.push(drain_outbox(&pool).await);
        // The raw rate: single-row inserts (one transaction each) at the same concurrency.
        let raw_before = CpuSplit::now(service_pid);
        let (inserts, latencies) = raw_inserts(&pool, tables, think, raw_seconds).await;
        raw_cpu = raw_cpu.plus(&CpuSplit::now(service_pid).since(&raw_before));
        raw_total += inserts;
        raw_rates.push(inserts as f64 / raw_seconds as f64);
        raw_latencies.extend(latencies);
        // The gRPC floor: a round trip with no work, on the same connections.
        let floor_before = CpuSplit::now(service_pid);
        let checks = health_checks(&channels, tables, think, raw_seconds).await;
        floor_cpu = floor_cpu.plus(&CpuSplit::now(service_pid).since(&floor_before));
        floor_total += checks;
        floor_rates.push(checks as f64 / raw_seconds as f64);
        if progress {
            eprintln!("round {round}/{rounds} done");
        }
    }
    phase.send_replace(STOPPED);
    let mut by_round = vec![0usize; rounds + 1];
    let mut latencies = Vec::new();
    for t in tasks {
        for (round, latency) in t.await.unwrap() {
            by_round[round] += 1;
            latencies.push(latency);
        }
    }
    // Every player has left (streams closed): with `--idle-secs`, wait for the service's idle
    // eviction (it checks every `idle` seconds, at most every minute) and read its memory again.
    let rss_evicted = if let Some(idle) = idle_secs {
        let wait = 2 * idle.min(60) + 2;
        eprintln!("waiting {wait} s for the idle tables to leave the service's memory");
        tokio::time::sleep(Duration::from_secs(wait)).await;
        Some((rss(), held()))
    } else {
        None
    };
    let mut delivered: Vec<Duration> = watched.as_ref().map_or(Vec::new(), |w| {
        w.delivered.lock().expect("delivered lock").clone()
    });
    delivered.sort();
    latencies.sort();
    raw_latencies.sort();
    let commands = latencies.len();
    let rate = commands as f64 / played.as_secs_f64();
    let raw = raw_rates.iter().sum::<f64>() / rounds as f64;
    let (unpublished, left, drained) = backlog_seen.last().copied().unwrap_or_default();

    println!(
        "tables: {tables} (4 gRPC bot clients each, thinking {} ms, views {}), {:.1} s{}, pool {connections} (raw inserts {raw_connections}), commit groups {commit_groups}, fsync={fsync}, synchronous_commit={sync}",
        think.as_millis(),
        if latest_views {
            "checked against the store"
        } else {
            "at least the known version"
        },
        played.as_secs_f64(),
        if rounds > 1 {
            format!(
                " in {rounds} rounds of {seconds} s, each followed by {raw_seconds} s of raw inserts"
            )
        } else {
            String::new()
        }
    );
    println!("commands: {commands}, {rate:.0} commands/s");
    if watched.is_some() {
        println!(
            "update streams: {} (4 per table), {watched_during} updates received while playing",
            tables * 4
        );
    }
    let wall = played.as_secs_f64();
    println!(
        "machine while playing: {:.2} of {} cores busy",
        cpu.machine / wall,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    if in_process {
        println!(
            "CPU while playing: service and bot clients (one process) {:.1} s ({:.0}% of a core)",
            cpu.bench,
            100.0 * cpu.bench / wall
        );
    } else {
        println!(
            "CPU while playing: service {:.1} s ({:.0}% of a core), bot clients {:.1} s ({:.0}% of a core)",
            cpu.service,
            100.0 * cpu.service / wall,
            cpu.bench,
            100.0 * cpu.bench / wall
        );
    }
    let mut parts = if in_process {
        vec![("service and bot clients", cpu.bench)]
    } else {
        vec![("service", cpu.service), ("bot clients", cpu.bench)]
    };
    parts.extend([
        ("PostgreSQL", cpu.postgres),
        ("NATS", cpu.nats),
        ("Redis", cpu.redis),
    ]);
    println!("CPU a command: {}", cpu.per(commands as u64, &parts));
    println!(
        "SubmitCommand latency: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3
    );
    if watched.is_some() {
        println!(
            "move -> other players' streams: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} deliveries)",
            percentile(&delivered, 0.50).as_secs_f64() * 1e3,
            percentile(&delivered, 0.99).as_secs_f64() * 1e3,
            delivered.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
            delivered.len()
        );
    }
    if service_pid.is_some() {
        let mb = |bytes: u64| bytes as f64 / (1 << 20) as f64;
        let per = |more: u64, less: u64, n: usize| {
            more.saturating_sub(less) as f64 / n.max(1) as f64 / 1024.0
        };
        println!(
            "service memory (RSS): {:.1} MB with no table, {:.1} MB with {tables} seated ({:.1} KB a table){}, {:.1} MB after play",
            mb(rss_empty),
            mb(rss_seated),
            per(rss_seated, rss_empty, tables),
            if watched.is_some() {
                format!(
                    ", {:.1} MB with their {} streams open ({:.1} KB a stream)",
                    mb(rss_ready),
                    tables * 4,
                    per(rss_ready, rss_seated, tables * 4)
                )
            } else {
                String::new()
            },
            mb(rss_played)
        );
        if let Some((evicted, _)) = rss_evicted {
            println!(
                "service memory after every player left and the idle eviction ran: {:.1} MB ({:.1} KB a table above no table)",
                mb(evicted),
                per(evicted, rss_empty, tables)
            );
        }
    }
    if let Some(played) = held_played {
        println!(
            "tables held in the service's memory: {played} after play{}",
            match rss_evicted {
                Some((_, Some(evicted))) => format!(", {evicted} after the idle eviction"),
                _ => String::new(),
            }
        );
    }
    if !think.is_zero() {
        // The human-pace goals of the table service's load (issue 23).
        let submit_p99 = percentile(&latencies, 0.99);
        let delivered_p99 = percentile(&delivered, 0.99);
        let met = submit_p99 < Duration::from_millis(20)
            && (watched.is_none() || delivered_p99 < Duration::from_millis(50));
        println!(
            "paced goals (SubmitCommand p99 < 20 ms{}): {} at {tables} tables, {:.0} tables a core",
            if watched.is_some() {
                ", move -> streams p99 < 50 ms"
            } else {
                ""
            },
            if met { "met" } else { "missed" },
            tables as f64 / std::thread::available_parallelism().map_or(1, |n| n.get()) as f64
        );
    }
    println!(
        "JetStream: {unpublished} outbox rows when play stopped (unpublished, or acked and deleted within 100 ms); {} left after {:.0} ms",
        left,
        drained.as_secs_f64() * 1e3
    );
    println!("raw single-row inserts at concurrency {tables}: {raw:.0} inserts/s");
    println!(
        "CPU a raw insert: {}",
        raw_cpu.per(
            raw_total,
            &[("PostgreSQL", raw_cpu.postgres), ("bench", raw_cpu.bench)]
        )
    );
    println!(
        "raw insert latency: p50 {:.2} ms, p99 {:.2} ms",
        percentile(&raw_latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&raw_latencies, 0.99).as_secs_f64() * 1e3
    );
    let floor = floor_rates.iter().sum::<f64>() / rounds as f64;
    println!(
        "gRPC floor, health checks (no work) at concurrency {tables} on the same connections: {floor:.0} calls/s, {:.2} x the raw inserts",
        floor / raw
    );
    println!(
        "CPU a health check: {}",
        floor_cpu.per(
            floor_total,
            &[("service", floor_cpu.service), ("clients", floor_cpu.bench)]
        )
    );
    if rounds > 1 {
        // Each round's ratio against the raw inserts measured right after it: drift of the
        // machine (other load, the disk) over the run shows as spread, not as bias.
        let mut ratios = Vec::new();
        for round in 1..=rounds {
            let rate = by_round[round] as f64 / seconds as f64;
            let ratio = rate / raw_rates[round - 1];
            println!(
                "round {round}: {rate:.0} commands/s, raw {:.0} inserts/s, ratio {ratio:.2}; health checks {:.0}/s ({:.2} x the raw inserts)",
                raw_rates[round - 1],
                floor_rates[round - 1],
                floor_rates[round - 1] / raw_rates[round - 1]
            );
            ratios.push(ratio);
        }
        ratios.sort_by(f64::total_cmp);
        let mid = ratios.len() / 2;
        let median = if ratios.len() % 2 == 0 {
            (ratios[mid - 1] + ratios[mid]) / 2.0
        } else {
            ratios[mid]
        };
        println!(
            "ratio per round: median {median:.2}, min {:.2}, max {:.2} (goal >= 1.0)",
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
    println!(
        "ratio commands/s : inserts/s = {:.2} (goal >= 1.0)",
        rate / raw
    );
    pool.close().await;
    if let Some(app) = app {
        app.stop().await;
    }
    drop(child);
    if flag("--keep") {
        println!(
            "kept: database {}, JetStream stream {}",
            database_name(&settings),
            Subjects::new(&settings.nats.subject_prefix).stream_name()
        );
    } else {
        forget_run(&infra, &settings).await;
    }
}

/// The name of the run's database.
fn database_name(settings: &Settings) -> String {
    let url = settings.database.url.expose();
    url.rsplit('/').next().unwrap_or(url).to_owned()
}

/// Drops the database and the JetStream stream made for this run alone (hundreds of megabytes
/// after a few rounds), so that runs do not fill a developer's disk. A failure is only reported.
async fn forget_run(infra: &TestInfra, settings: &Settings) {
    let database = database_name(settings);
    let dropped = match sqlx::PgPool::connect(&infra.database_url).await {
        Ok(server) => {
            let drop = format!("DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)");
            let done = sqlx::query(sqlx::AssertSqlSafe(drop))
                .execute(&server)
                .await;
            server.close().await;
            done.map(|_| ()).map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = dropped {
        eprintln!("the run's database {database} is left behind: {e}");
    }
    let stream = Subjects::new(&settings.nats.subject_prefix).stream_name();
    let deleted = match async_nats::connect(&infra.nats_url).await {
        Ok(client) => async_nats::jetstream::new(client)
            .delete_stream(&stream)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = deleted {
        eprintln!("the run's JetStream stream {stream} is left behind: {e}");
    }
}
