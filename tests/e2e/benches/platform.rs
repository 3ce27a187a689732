//! The platform load run (a bench, not a test; not in `make test`): N players sign in at accounts,
//! find tables of four through matchmaking and play at a human pace (each command after a think
//! time drawn between half and one and a half of `--think-ms`), each with its `WatchTable` stream
//! open, for `--seconds`. All four services run as their own processes from the release binaries
//! on the infrastructure of `.run/infra.env`, a fresh platform per step. Per step it prints the
//! concurrent tables, commands per second, p50/p99 from a `SubmitCommand` being sent to its first
//! event arriving on each of the other three players' streams, scoring's lag (GetLedgerStatus
//! once a second), the CPU (cores) and memory of each service, the machine's busy cores, and as a
//! baseline measured in the same run a gRPC health check's round trip to the table service.
//!
//! `cargo build --release --bins && cargo bench -p e2e --bench platform -- --players 200,400,800
//! --seconds 60` (`--think-ms 2000` by default). `--soak --seconds 3600 --sample-secs 60` plays one
//! step and prints each service's resident memory and open file descriptors every sample, then
//! their growth from the second sample (after warm-up) to the last. See `docs/performance.md`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e::platform::{Layout, Platform};
use e2e::player::{Apis, Guest, analyst_token, choose, find_table, transient, uuid, with_token};
use okey_load::{Pauses, arg, cpu_seconds, flag, percentile};
use okey_platform::testing::{TestInfra, machine_cpu};
use okey_proto::v1 as pb;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// Players whose calls and streams share one connection to each service (phones each have their
/// own; a load generator multiplexes). 100 players hold at most about 200 streams at once (a
/// WatchTicket or WatchTable stream and a call each), within a server's
/// `server.max_concurrent_streams`.
const PLAYERS_PER_CONNECTION: u64 = 100;

/// When a command was sent, by which seat, and how many other streams have yet to show it.
type Sent = (Instant, i32, u8);

/// What every player adds to while a step runs.
#[derive(Default)]
struct Shared {
    /// `(table, version)` → when the command that makes that version was sent, by which seat,
    /// and how many of the other players' streams have yet to deliver it.
    pending: Mutex<HashMap<(String, i64), Sent>>,
    /// Move → its event on another player's stream.
    latencies: Mutex<Vec<Duration>>,
    accepted: AtomicU64,
    stale: AtomicU64,
    failed: AtomicU64,
    reconnects: AtomicU64,
    stop: AtomicBool,
}

/// A seat's table as its stream tells it.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    version: i64,
    /// The seat to move; -1 between hands.
    turn: i32,
    over: bool,
}

fn playing(phase: i32) -> bool {
    matches!(
        pb::HandPhase::try_from(phase),
        Ok(pb::HandPhase::Take | pb::HandPhase::Act | pb::HandPhase::DiscardOnly)
    )
}

/// Follows the table on WatchTable (reopened from the last version when it breaks), keeping whose
/// turn it is and timing the other seats' commands.
async fn follow(
    apis: Apis,
    guest: Guest,
    table: String,
    seat: i32,
    shared: Arc<Shared>,
    seen: tokio::sync::watch::Sender<Seen>,
) {
    let mut state = Seen {
        turn: -1,
        ..Seen::default()
    };
    while !shared.stop.load(Ordering::Relaxed) {
        let mut r = guest.req(pb::WatchTableRequest {
            table: table.clone(),
            after_version: state.version,
        });
        r.set_timeout(Duration::from_secs(24 * 3600));
        let mut stream = match apis.table(0).watch_table(r).await {
            Ok(s) => s.into_inner(),
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        while let Ok(Some(m)) = stream.message().await {
            let Some(update) = m.update else { continue };
            let now = Instant::now();
            match update.kind {
                Some(pb::table_update::Kind::Snapshot(view)) => {
                    state.version = update.version;
                    state.turn = if playing(view.phase) {
                        view.turn_seat
                    } else {
                        -1
                    };
                }
                Some(pb::table_update::Kind::Event(e)) => {
                    state.version = update.version;
                    use pb::table_event::Event as E;
                    match e.event {
                        Some(E::HandStarted(h)) => state.turn = h.first_seat,
                        Some(E::TileDiscarded(d)) => state.turn = (d.seat + 1) % 4,
                        Some(E::HandEnded(_)) => state.turn = -1,
                        Some(E::MatchEnded(_)) => state.over = true,
                        _ => {}
                    }
                    let key = (table.clone(), update.version);
                    let mut pending = shared.pending.lock().expect("pending");
                    if let Some((sent, by, left)) = pending.get_mut(&key)
                        && *by != seat
                    {
                        shared
                            .latencies
                            .lock()
                            .expect("latencies")
                            .push(now - *sent);
                        *left -= 1;
                        if *left == 0 {
                            pending.remove(&key);
                        }
                    }
                }
                _ => {}
            }
            let _ = seen.send(state);
            if shared.stop.load(Ordering::Relaxed) {
                return;
            }
        }
        shared.reconnects.fetch_add(1, Ordering::Relaxed);
    }
}

/// One player: signs in, finds a table, plays its seat at a human pace until the step stops.
async fn player(
    apis: Apis,
    shared: Arc<Shared>,
    think: Duration,
    seed: u64,
    matched: Arc<AtomicU64>,
) {
    let deadline = Instant::now() + Duration::from_secs(300);
    let guest = match Guest::sign_in(&apis, deadline).await {
        Ok(guest) => guest,
        Err(e) => {
            if shared.failed.fetch_add(1, Ordering::Relaxed) == 0 {
                eprintln!("a player could not sign in (the first failure of the step): {e}");
            }
            return;
        }
    };
    let rules = pb::RuleSet {
        preset: "classic".into(),
        // Longer than any step: the tables play for as long as the step lasts.
        match_length: Some(pb::MatchLength {
            length: Some(pb::match_length::Length::Hands(1000)),
        }),
        ..Default::default()
    };
    let opened = AtomicU64::new(0);
    let seating = match find_table(&apis, &guest, rules, false, deadline, &opened).await {
        Ok(seating) => seating,
        Err(e) => {
            if shared.failed.fetch_add(1, Ordering::Relaxed) == 0 {
                eprintln!("a player found no table (the first failure of the step): {e:?}");
            }
            return;
        }
    };
    matched.fetch_add(1, Ordering::Relaxed);
    let (table, seat) = (seating.table.clone(), seating.seat);
    let (tx, mut seen) = tokio::sync::watch::channel(Seen {
        turn: -1,
        ..Seen::default()
    });
    let follower = tokio::spawn(follow(
        apis.clone(),
        guest.clone(),
        table.clone(),
        seat,
        shared.clone(),
        tx,
    ));
    let mut pauses = Pauses::new(think, seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut need = 0i64;
    while !shared.stop.load(Ordering::Relaxed) {
        // Copied out at once: the borrow holds the channel's lock (and is not Send).
        let now = match tokio::time::timeout(
            Duration::from_secs(1),
            seen.wait_for(|s| s.over || (s.turn == seat && s.version >= need)),
        )
        .await
        {
            Ok(Ok(seen)) => *seen,
            _ => continue,
        };
        if now.over {
            break;
        }
        pauses.pause().await;
        let v = now.version;
        let Ok(actions) = apis
            .table(0)
            .list_legal_actions(guest.req(pb::ListLegalActionsRequest {
                table: table.clone(),
            }))
            .await
        else {
            need = v + 1;
            continue;
        };
        let actions = actions.into_inner();
        let Some(command) = (actions.version == v)
            .then(|| choose(&actions.actions, &mut rng))
            .flatten()
        else {
            need = v + 1;
            continue;
        };
        shared
            .pending
            .lock()
            .expect("pending")
            .insert((table.clone(), v + 1), (Instant::now(), seat, 3));
        let request_id = uuid();
        let mut tries = 0;
        loop {
            let r = apis
                .table(0)
                .submit_command(guest.req(pb::SubmitCommandRequest {
                    request_id: request_id.clone(),
                    table: table.clone(),
                    command: Some(command.clone()),
                    expected_version: Some(v),
                    view_form: pb::SeatViewForm::Typed as i32,
                }))
                .await;
            match r {
                Ok(r) => {
                    shared.accepted.fetch_add(1, Ordering::Relaxed);
                    need = r.into_inner().version;
                }
                Err(s) if transient(&s) && tries < 5 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
                Err(_) => {
                    shared
                        .pending
                        .lock()
                        .expect("pending")
                        .remove(&(table.clone(), v + 1));
                    shared.stale.fetch_add(1, Ordering::Relaxed);
                    need = v + 1;
                }
            }
            break;
        }
    }
    follower.abort();
}

/// `/proc/{pid}/status` VmRSS in MiB.
fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Open file descriptors of a process.
fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

fn list_arg(name: &str, default: &[u64]) -> Vec<u64> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn step(
    infra: &TestInfra,
    players: u64,
    seconds: u64,
    think: Duration,
    sample: Option<Duration>,
) {
    let layout = Layout {
        extra_env: vec![("OKEY_DATABASE__MAX_CONNECTIONS".into(), "10".into())],
        ..Layout::default()
    };
    let platform = Platform::start(&format!("load-{players}"), infra, layout).await;
    let tables: Vec<u16> = platform.tables.iter().map(|t| t.port).collect();
    let connections: Vec<Apis> = (0..players.div_ceil(PLAYERS_PER_CONNECTION).max(1))
        .map(|_| {
            Apis::new(
                platform.accounts.port,
                platform.matchmaking.port,
                &tables,
                platform.scoring.port,
            )
        })
        .collect();
    let apis = &connections[0];
    let services: Vec<(&str, u32)> = [
        ("accounts", &platform.accounts),
        ("matchmaking", &platform.matchmaking),
        ("table", &platform.tables[0]),
        ("scoring", &platform.scoring),
    ]
    .iter()
    .filter_map(|(n, p)| Some((*n, p.pid()?)))
    .collect();
    let shared = Arc::new(Shared::default());
    let matched = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    let started = Instant::now();
    for i in 0..players {
        tasks.push(tokio::spawn(player(
            connections[(i / PLAYERS_PER_CONNECTION) as usize].clone(),
            shared.clone(),
            think,
            1_000 + i,
            matched.clone(),
        )));
    }
    // Everyone seated (or given up), then a warm-up of one think time.
    let seat_deadline = Instant::now() + Duration::from_secs(300);
    while matched.load(Ordering::Relaxed) + shared.failed.load(Ordering::Relaxed) < players
        && Instant::now() < seat_deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let seated_in = started.elapsed();
    tokio::time::sleep(think * 2).await;
    shared.latencies.lock().expect("latencies").clear();
    let accepted0 = shared.accepted.load(Ordering::Relaxed);
    let cpu0: Vec<f64> = services.iter().map(|(_, pid)| cpu_seconds(*pid)).collect();
    let own0 = cpu_seconds(std::process::id());
    let machine0 = machine_cpu();
    let window = Instant::now();
    let mut lag_events = Vec::new();
    let mut lag_ms = Vec::new();
    let mut health = Vec::new();
    let mut samples: Vec<Vec<(f64, usize)>> = Vec::new();
    let mut next_sample = Instant::now();
    let analyst = analyst_token();
    let mut checker = tonic_health::pb::health_client::HealthClient::new(apis.tables[0].clone());
    while window.elapsed() < Duration::from_secs(seconds) {
        if let Ok(s) = apis
            .scoring()
            .get_ledger_status(with_token(&analyst, pb::GetLedgerStatusRequest {}))
            .await
        {
            let s = s.into_inner();
            lag_events.push(s.lag_events);
            lag_ms.push(s.lag_ms);
        }
        for _ in 0..10 {
            let t = Instant::now();
            if checker
                .check(tonic_health::pb::HealthCheckRequest {
                    service: String::new(),
                })
                .await
                .is_ok()
            {
                health.push(t.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if let Some(every) = sample
            && Instant::now() >= next_sample
        {
            next_sample += every;
            let row: Vec<(f64, usize)> = services
                .iter()
                .map(|(_, pid)| (rss_mib(*pid), fds(*pid)))
                .collect();
            println!(
                "sample t={:>5.0}s {}",
                window.elapsed().as_secs_f64(),
                services
                    .iter()
                    .zip(&row)
                    .map(|((n, _), (rss, fd))| format!("{n} {rss:.1} MiB {fd} fds"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            samples.push(row);
        }
    }
    let elapsed = window.elapsed().as_secs_f64();
    let accepted = shared.accepted.load(Ordering::Relaxed) - accepted0;
    let cpu: Vec<f64> = services
        .iter()
        .zip(&cpu0)
        .map(|((_, pid), c0)| (cpu_seconds(*pid) - c0) / elapsed)
        .collect();
    let own = (cpu_seconds(std::process::id()) - own0) / elapsed;
    let machine1 = machine_cpu();
    let busy = (machine1.0 - machine0.0) / elapsed;
    let mut latencies = shared.latencies.lock().expect("latencies").clone();
    latencies.sort();
    health.sort();
    lag_events.sort();
    lag_ms.sort();
    shared.stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.abort();
    }
    let tables_n = matched.load(Ordering::Relaxed) / 4;
    let p99 = percentile(&latencies, 0.99);
    let base99 = percentile(&health, 0.99);
    println!(
        "players {players}: tables {tables_n} (seated in {:.1} s, {} failed), {:.1} commands/s, \
         move -> other streams p50 {:.1} ms p99 {:.1} ms ({} samples), health check p50 {:.1} ms \
         p99 {:.1} ms (p99 ratio {:.1}x), scoring lag p50 {} events / {} ms, max {} events / {} ms, \
         stale {}, stream reconnects {}",
        seated_in.as_secs_f64(),
        shared.failed.load(Ordering::Relaxed),
        accepted as f64 / elapsed,
        ms(percentile(&latencies, 0.5)),
        ms(p99),
        latencies.len(),
        ms(percentile(&health, 0.5)),
        ms(base99),
        ms(p99) / ms(base99).max(0.001),
        percentile(&lag_events, 0.5),
        percentile(&lag_ms, 0.5),
        lag_events.last().copied().unwrap_or(0),
        lag_ms.last().copied().unwrap_or(0),
        shared.stale.load(Ordering::Relaxed),
        shared.reconnects.load(Ordering::Relaxed),
    );
    println!(
        "  cpu (cores): {}, load generator {own:.2}; machine busy {busy:.2} of {} cores; \
         memory: {}; p99 < 50 ms: {}; tables per busy core {:.1}",
        services
            .iter()
            .zip(&cpu)
            .map(|((n, _), c)| format!("{n} {c:.2}"))
            .collect::<Vec<_>>()
            .join(", "),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        services
            .iter()
            .map(|(n, pid)| format!("{n} {:.0} MiB", rss_mib(*pid)))
            .collect::<Vec<_>>()
            .join(", "),
        ms(p99) < 50.0,
        tables_n as f64 / busy.max(0.01),
    );
    if samples.len() >= 3 {
        let (first, last) = (&samples[1], &samples[samples.len() - 1]);
        println!(
            "  soak growth from the second sample to the last: {}",
            services
                .iter()
                .zip(first.iter().zip(last))
                .map(|((n, _), ((r0, f0), (r1, f1)))| format!(
                    "{n} memory {:+.1}% fds {:+}",
                    (r1 - r0) / r0.max(0.1) * 100.0,
                    *f1 as i64 - *f0 as i64
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    drop(platform);
}

#[tokio::main]
async fn main() {
    let Some(infra) = TestInfra::from_env() else {
        eprintln!("the infrastructure is down: deploy/infra.sh up, then source .run/infra.env");
        return;
    };
    let seconds = arg("--seconds", 60);
    let think = Duration::from_millis(arg("--think-ms", 2000));
    if flag("--soak") {
        let players = arg("--players", 200);
        let every = Duration::from_secs(arg("--sample-secs", 60));
        step(&infra, players, seconds, think, Some(every)).await;
        return;
    }
    for players in list_arg("--players", &[100, 200, 400]) {
        step(&infra, players, seconds, think, None).await;
    }
}
