//! The table service's load generator, shared by the benches that put the table under load
//! (`cargo bench -p table --bench load`, `cargo bench -p scoring --bench ledger`): tables of four
//! bot clients, each playing from its own seat view over gRPC, paced like players or at full
//! speed, in rounds the bench starts and pauses; plus the small measuring helpers the benches
//! print with (arguments, percentiles, a process's CPU time).

pub mod client;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use okey_bots::{Bot, Easy};
use okey_platform::Settings;
use okey_proto::v1 as pb;
use okey_rules::Command;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use table::grpc::command_to_proto;

pub use client::{Client, connect, engine_view, rules, seated_table, uuid};

/// The value after `name` on the command line, or `default`.
pub fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether `name` is on the command line.
pub fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

/// CPU seconds (user + system, every thread) a process used so far, from `/proc/{pid}/stat`.
pub fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // The fields after the command name (which may hold spaces) are separated by spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line (11 and 12 after the name and state);
    // Linux counts them in USER_HZ, 100 per second.
    (ticks(11) + ticks(12)) / 100.0
}

/// CPU seconds used so far by every running process named `name` (`/proc/{pid}/comm`), e.g.
/// all of PostgreSQL's backends. A process that ended since is no longer counted.
pub fn cpu_seconds_named(name: &str) -> f64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0.0;
    };
    dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == name)
        })
        .map(cpu_seconds)
        .sum()
}

/// The CPU seconds of the processes a load run is made of, read together: this process, the
/// service's (when it runs apart), PostgreSQL's, NATS' and Redis'.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuSplit {
    pub service: f64,
    pub bench: f64,
    pub postgres: f64,
    pub nats: f64,
    pub redis: f64,
    /// Every core's busy time (`/proc/stat`), whoever used it.
    pub machine: f64,
}

impl CpuSplit {
    /// Now, with the service at `service_pid` (none: it runs in this process).
    pub fn now(service_pid: Option<u32>) -> CpuSplit {
        CpuSplit {
            service: service_pid.map_or(0.0, cpu_seconds),
            bench: cpu_seconds(std::process::id()),
            postgres: cpu_seconds_named("postgres"),
            nats: cpu_seconds_named("nats-server"),
            redis: cpu_seconds_named("redis-server"),
            machine: okey_platform::testing::machine_cpu().0,
        }
    }

    /// What was used between `earlier` and `self`.
    pub fn since(&self, earlier: &CpuSplit) -> CpuSplit {
        self.zip(earlier, |now, then| now - then)
    }

    /// The sum of two spans.
    pub fn plus(&self, other: &CpuSplit) -> CpuSplit {
        self.zip(other, |a, b| a + b)
    }

    /// `f` of each part of `self` and the same part of `other`.
    fn zip(&self, other: &CpuSplit, f: impl Fn(f64, f64) -> f64) -> CpuSplit {
        CpuSplit {
            service: f(self.service, other.service),
            bench: f(self.bench, other.bench),
            postgres: f(self.postgres, other.postgres),
            nats: f(self.nats, other.nats),
            redis: f(self.redis, other.redis),
            machine: f(self.machine, other.machine),
        }
    }

    /// `parts` (a name and its CPU seconds) per unit of work, in microseconds, then the whole
    /// machine's: `service 371 µs, …, whole machine 930 µs`.
    pub fn per(&self, units: u64, parts: &[(&'static str, f64)]) -> String {
        let us = |s: f64| s * 1e6 / units.max(1) as f64;
        let mut shown: Vec<String> = parts
            .iter()
            .map(|(name, s)| format!("{name} {:.0} µs", us(*s)))
            .collect();
        shown.push(format!("whole machine {:.0} µs", us(self.machine)));
        shown.join(", ")
    }
}

/// Resident memory of a process in bytes (`VmRSS` of `/proc/{pid}/status`; 0 when unknown).
pub fn rss_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// The `p` quantile (0..=1) of sorted values (zero when there are none).
pub fn percentile<T: Copy + Default>(sorted: &[T], p: f64) -> T {
    if sorted.is_empty() {
        return T::default();
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// A player's pauses: each drawn uniformly between half and one and a half of `think` (zero when
/// `think` is zero), from a generator of its own.
pub struct Pauses {
    think: Duration,
    rng: ChaCha8Rng,
}

impl Pauses {
    pub fn new(think: Duration, seed: u64) -> Pauses {
        Pauses {
            think,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// Sleeps for the next pause.
    pub async fn pause(&mut self) {
        if self.think.is_zero() {
            return;
        }
        let unit = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        tokio::time::sleep(self.think.mul_f64(0.5 + unit)).await;
    }
}

/// Which play phase the bench is in: the round being played (1, 2, ...), [`PAUSED`] while the
/// bench measures something else, or [`STOPPED`]. Tables wait on it without waking while paused.
pub type Phase = tokio::sync::watch::Receiver<usize>;
/// Play is paused.
pub const PAUSED: usize = 0;
/// Play is over.
pub const STOPPED: usize = usize::MAX;

/// Waits while play is paused; the round to play in, or `None` once play stops.
pub async fn playing(phase: &mut Phase) -> Option<usize> {
    let round = phase
        .wait_for(|r| *r != PAUSED)
        .await
        .map_or(STOPPED, |r| *r);
    (round != STOPPED).then_some(round)
}

/// Thinks, then waits while play is paused; the round to play in, or `None` once play stops. A
/// table that had to wait thinks again once play resumes: else every table sends its next
/// command in the instant play resumes, and a paced run's p99 measures the last of that wave.
pub async fn think_then_play(pauses: &mut Pauses, phase: &mut Phase) -> Option<usize> {
    loop {
        pauses.pause().await;
        let now = *phase.borrow();
        match now {
            STOPPED => return None,
            PAUSED => {
                playing(phase).await?;
            }
            round => return Some(round),
        }
    }
}

/// The players' update streams of a run that opens them (`TablePlay::watched`), shared by every
/// table: what arrived, and how long each move took to reach the other players.
pub struct Watched {
    /// Updates received while playing.
    pub updates: AtomicU64,
    /// Every table waits here once seated, before its players open their streams, so the bench
    /// can measure the service between the two (memory per table, then per stream). The bench
    /// waits too: make it for the number of tables plus one.
    pub seated: tokio::sync::Barrier,
    /// Move → another player's stream: for the first event of each command, the time from the
    /// moment its SubmitCommand was sent to the moment each of the other three players' streams
    /// received it.
    pub delivered: Mutex<Vec<Duration>>,
}

impl Watched {
    /// For a run of `tables` tables.
    pub fn new(tables: usize) -> Watched {
        Watched {
            updates: AtomicU64::new(0),
            seated: tokio::sync::Barrier::new(tables + 1),
            delivered: Mutex::new(Vec::new()),
        }
    }
}

/// How one table plays.
#[derive(Clone)]
pub struct TablePlay {
    /// A channel to the table service (several tables share one).
    pub channel: tonic::transport::Channel,
    /// The service's settings (the clients' tokens are for it).
    pub settings: Settings,
    /// Every table waits here once seated, so play starts everywhere at once.
    pub start: Arc<tokio::sync::Barrier>,
    pub phase: Phase,
    /// With `Some`, each player also follows the table on its update stream (see [`Watched`]).
    pub watched: Option<Arc<Watched>>,
    /// Views without `min_version`: every one checked against the store.
    pub latest_views: bool,
    /// With `Some`, a table sits down only with a permit from here: a bench of thousands of
    /// tables seats them a few at a time, so what the service holds afterwards is what the
    /// tables cost, not the high-water mark of thousands of calls at once.
    pub seating: Option<Arc<tokio::sync::Semaphore>>,
}

/// Commands sent at one table and not yet seen on every other player's stream: by the version of
/// their first event, when each was sent and by which seat.
type Sent = Arc<Mutex<BTreeMap<u64, (Instant, usize)>>>;

/// Commands a table remembers for its streams; older ones are forgotten (a stream that far
/// behind measures nothing more for them).
const SENT_KEPT: u64 = 64;

/// One table: four clients sit down, wait for every table to be ready (`start`), then play hand
/// after hand (a match of 1,000 hands) while `phase` says so; returns each command's round and
/// latency.
pub async fn table_loop(play: TablePlay, mut pauses: Pauses) -> Vec<(usize, Duration)> {
    let TablePlay {
        channel,
        settings,
        start,
        mut phase,
        watched,
        latest_views,
        seating,
    } = play;
    let permit = match &seating {
        Some(seating) => Some(seating.acquire().await.expect("never closed")),
        None => None,
    };
    let (table, mut clients) = seated_table(channel, &settings, 1000).await;
    drop(permit);
    let sent: Sent = Arc::default();
    let mut streams = Vec::new();
    if let Some(watched) = &watched {
        watched.seated.wait().await;
        // Each player also follows the table on its update stream, as the app does.
        for (seat, c) in clients.iter_mut().enumerate() {
            let mut stream = c
                .api
                .watch_table(c.req(pb::WatchTableRequest {
                    table: table.clone(),
                    after_version: 0,
                }))
                .await
                .expect("the update stream opens")
                .into_inner();
            let (watched, phase, sent) = (watched.clone(), phase.clone(), sent.clone());
            streams.push(tokio::spawn(async move {
                while let Ok(Some(message)) = stream.message().await {
                    let round = *phase.borrow();
                    if round == STOPPED {
                        break;
                    }
                    if round == PAUSED {
                        continue;
                    }
                    watched.updates.fetch_add(1, Ordering::Relaxed);
                    let Some(update) = message.update else {
                        continue;
                    };
                    if !matches!(update.kind, Some(pb::table_update::Kind::Event(_))) {
                        continue;
                    }
                    let version = update.version as u64;
                    let seen = sent.lock().expect("sent lock").get(&version).copied();
                    if let Some((at, by)) = seen
                        && by != seat
                    {
                        let latency = at.elapsed();
                        watched
                            .delivered
                            .lock()
                            .expect("delivered lock")
                            .push(latency);
                    }
                }
            }));
        }
    }
    start.wait().await;
    let mut latencies = Vec::new();
    // The easy bot keeps no memory, so one (Send) value plays every seat.
    let mut bot = Easy;
    // Bots read the engine's form of the view only (as tools written against the engine do).
    let form = pb::SeatViewForm::Engine;
    let mut turn = clients[0].view_as(&table, form).await.unwrap().turn_seat as usize;
    let mut view = clients[turn].view_as(&table, form).await.unwrap();
    loop {
        if view.summary.as_ref().unwrap().state != pb::TableState::Playing as i32 {
            break;
        }
        let command = bot.act(&engine_view(&view));
        let Some(round) = think_then_play(&mut pauses, &mut phase).await else {
            break;
        };
        let started = Instant::now();
        if watched.is_some() {
            let first = view.version as u64 + 1;
            let mut sent = sent.lock().expect("sent lock");
            sent.insert(first, (started, turn));
            // Forget what is SENT_KEPT versions old.
            *sent = sent.split_off(&first.saturating_sub(SENT_KEPT - 1));
        }
        // A discard passes the turn: the next seat reads its own view, so the discarding seat
        // asks for no view back (as an app that follows the table on its stream does).
        let passes = matches!(command, Command::Discard { .. });
        let answer_form = if passes { pb::SeatViewForm::None } else { form };
        let r = clients[turn]
            .submit_as(
                &table,
                &uuid(),
                command_to_proto(&command).unwrap(),
                answer_form,
            )
            .await
            .expect("bot commands are legal");
        latencies.push((round, started.elapsed()));
        // Like an app that follows the table, the seat that reads its view asks for at least
        // the version it knows of (with `latest_views`, for every move made before the call: a
        // store check).
        let min_version = (!latest_views).then_some(r.version);
        // Who moves next: after a discard the next seat, else the seat the answer's view names
        // (the same one, unless its command ended the hand). A seat other than the one the
        // view came from reads its own; a discard that ended the hand hands the first move of
        // the next to whoever the view read names.
        let (next, answered) = match r.view {
            Some(after) if !passes => (after.turn_seat as usize, Some(after)),
            _ => ((turn + 1) % 4, None),
        };
        view = match answered {
            Some(after) if next == turn => after,
            _ => clients[next]
                .view_at_least(&table, form, min_version)
                .await
                .unwrap(),
        };
        turn = view.turn_seat as usize;
        if turn != next {
            view = clients[turn]
                .view_at_least(&table, form, min_version)
                .await
                .unwrap();
        }
    }
    // The players close their streams as they leave.
    for stream in streams {
        stream.abort();
    }
    latencies
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_sorted_values() {
        let values: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&values, 0.0), 1);
        assert_eq!(percentile(&values, 0.5), 51);
        assert_eq!(percentile(&values, 0.99), 99);
        assert_eq!(percentile::<u64>(&[], 0.99), 0);
    }
}
