//! Ledger benchmark (not a test), in two parts; progress is printed every second.
//!
//! 1. **Keeping up with play.** The table service (in this process) under the load of
//!    `okey_load`, the generator `cargo bench -p table --bench load` plays with: `--tables` N
//!    tables of four bot clients over gRPC, at full speed. The scoring service runs as its own
//!    process (its binary) on the same NATS subjects. Measured in the same run, over the same
//!    `--seconds`: the events the table service appends per second (rows of its event store),
//!    the events the ledger applies per second (rows of `applied_events`) and their ratio (goal
//!    at least 1.0: the ledger never falls behind play); the consumer's lag while the load runs, in
//!    events (JetStream's count of public messages not yet applied, sampled every 100 ms) and in
//!    seconds (for every event of the load, its `applied_at` minus its commit time at the
//!    table), p50/p99/max; and, after play stops, how long the ledger takes to have every event.
//! 2. **ListStandings and ListLeaderboard with many players.** A new scoring database is filled
//!    with `--matches` M generated one-hand matches of four players each, from `--players` P
//!    players (each plays 4M/P matches, at other tables each time; every match is rated), their
//!    end times spread over the last 40 days in the order they are applied.
//!    Each match is the table's four events (`TableCreated`, `HandDealt`, `HandEnded`,
//!    `MatchEnded`) in the table's own envelope (`okey_table::Published`), decoded and applied
//!    in batches by `scoring::store::apply_batch`, the consumer's own path (only NATS is left
//!    out; the hands have no plays, so their re-verification marks them unverified, which
//!    standings do not read). After `VACUUM (ANALYZE)` (what autovacuum does to freshly loaded
//!    tables a minute later; left to it, it would run inside the measurement), through the real gRPC server (a scoring service in
//!    this process), per period (all time, month, week, day) `--calls` of each: ListStandings'
//!    first page of 50, GetStanding of a random player (their place), ListLeaderboard's first page
//!    and ListLeaderboard `around_me` of a random player; then 20 pages of the all-time board by
//!    token: p50/p99/max (goal p99 < 20 ms). Baselines in the same run: the per-call ranking
//!    ListStandings did before (its SQL, straight to the database), GetRating, and a random
//!    player's all-time place counted player by player as `board_rank` did before the board's
//!    positions were kept (its SQL, straight to the database).
//!
//! `deploy/infra.sh up`, then `cargo bench -p scoring --bench ledger -- --tables 20 --seconds 20`
//! (`--skip-load` or `--skip-standings` runs one part). The run's databases and stream are
//! dropped at the end.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::consumer::pull;
use chrono::Utc;
use okey_load::{PAUSED, Pauses, STOPPED, TablePlay, arg, connect, cpu_seconds, flag, table_loop};
use okey_platform::auth::Role;
use okey_platform::table_events;
use okey_platform::testing::{TestInfra, free_port, test_token};
use okey_platform::{ServiceKind, Settings};
use okey_proto::v1 as pb;
use okey_proto::v1::scoring_service_client::ScoringServiceClient;
use okey_rules::matches::HandResult;
use okey_rules::{HandEnd, MatchLength, Outcome, Preset};
use okey_table::{Admission, Published, TableEvent, hex, seed_hash};
use scoring::store::{self, Incoming, Item};
use sqlx::PgPool;

// The same allocator as the table service binary, for the service in this process.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SCORING: &str = env!("CARGO_BIN_EXE_scoring");

fn set(env: &mut Vec<(String, String)>, key: &str, value: &str) {
    env.retain(|(k, _)| k != key);
    env.push((key.to_owned(), value.to_owned()));
}

fn url_of(env: &[(String, String)]) -> String {
    env.iter()
        .find(|(k, _)| k == "OKEY_DATABASE__URL")
        .map(|(_, v)| v.clone())
        .expect("a database url")
}

/// A database, once its service has made it.
async fn pool_of(url: &str) -> PgPool {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match PgPool::connect(url).await {
            Ok(pool) => return pool,
            Err(e) if Instant::now() > deadline => panic!("no database {url}: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

async fn count(pool: &PgPool, table: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
        .fetch_one(pool)
        .await
        .unwrap_or(0)
}

/// The scoring process, killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Messages of the public subjects the ledger's durable consumer has not applied yet.
async fn pending(js: &async_nats::jetstream::Context, subject: &str) -> Option<u64> {
    let stream = table_events::stream(js, subject).await.ok()?;
    let mut consumer = stream
        .get_consumer::<pull::Config>(scoring::consumer::CONSUMER)
        .await
        .ok()?;
    let info = consumer.info().await.ok()?;
    Some(info.num_pending + info.num_ack_pending as u64)
}

fn quantiles(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (
        okey_load::percentile(&values, 0.5),
        okey_load::percentile(&values, 0.99),
        values.last().copied().unwrap_or_default(),
    )
}

/// Part 1; returns the databases it made.
async fn keeping_up(infra: &TestInfra, tables: usize, seconds: u64) -> Vec<String> {
    let mut table_env = infra.env_for(ServiceKind::Table, 0);
    let connections = tables.clamp(4, 16);
    set(
        &mut table_env,
        "OKEY_DATABASE__MAX_CONNECTIONS",
        &connections.to_string(),
    );
    set(&mut table_env, "OKEY_TELEMETRY__LOG_FILTER", "warn");
    let table_settings = Settings::from_sources(ServiceKind::Table, None, table_env).unwrap();
    let app = table::startup::Application::build(&table_settings)
        .await
        .expect("the table service starts");
    let table_port = app.local_addr().port();
    let table_service =
        okey_platform::testing::InProcess::spawn(table_port, |stop| app.run_until_stopped(stop));
    let prefix = table_settings.nats.subject_prefix.clone();

    let mut scoring_env = infra.env_for(ServiceKind::Scoring, free_port());
    set(&mut scoring_env, "OKEY_NATS__SUBJECT_PREFIX", &prefix);
    set(&mut scoring_env, "OKEY_DATABASE__MAX_CONNECTIONS", "4");
    set(&mut scoring_env, "OKEY_TELEMETRY__LOG_FILTER", "warn");
    let scoring_process = Running(
        Command::new(SCORING)
            .envs(scoring_env.iter().cloned())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the scoring binary starts"),
    );
    let scoring_pid = scoring_process.0.id();
    let table_db = pool_of(table_settings.database.url.expose()).await;
    let scoring_db = pool_of(&url_of(&scoring_env)).await;
    let js = async_nats::jetstream::new(async_nats::connect(&infra.nats_url).await.unwrap());
    let subject = table_events::public_subject(&prefix);
    let deadline = Instant::now() + Duration::from_secs(60);
    while pending(&js, &subject).await.is_none() {
        assert!(
            Instant::now() < deadline,
            "the ledger's consumer never appeared"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut channels = Vec::new();
    for _ in 0..4 {
        channels.push(connect(table_port).await);
    }
    let (phase, phase_rx) = tokio::sync::watch::channel(PAUSED);
    let start = Arc::new(tokio::sync::Barrier::new(tables + 1));
    let mut tasks = Vec::new();
    for i in 0..tables {
        let play = TablePlay {
            channel: channels[i % channels.len()].clone(),
            settings: table_settings.clone(),
            start: start.clone(),
            phase: phase_rx.clone(),
            watched: None,
            latest_views: false,
            seating: None,
        };
        tasks.push(tokio::spawn(table_loop(
            play,
            Pauses::new(Duration::ZERO, i as u64),
        )));
    }
    tokio::time::timeout(Duration::from_secs(120), start.wait())
        .await
        .expect("every table is seated within 2 minutes");
    eprintln!("{tables} tables seated; playing for {seconds} s");

    let appended_before = count(&table_db, "events").await;
    let applied_before = count(&scoring_db, "applied_events").await;
    let cpu_before = (cpu_seconds(scoring_pid), cpu_seconds(std::process::id()));
    let load_start = Utc::now();
    let started = Instant::now();
    phase.send_replace(1);
    let mut lag_events = Vec::new();
    let mut last_print = Instant::now();
    while started.elapsed() < Duration::from_secs(seconds) {
        if let Some(p) = pending(&js, &subject).await {
            lag_events.push(p as f64);
        }
        if last_print.elapsed() >= Duration::from_secs(1) {
            last_print = Instant::now();
            let appended = count(&table_db, "events").await - appended_before;
            let applied = count(&scoring_db, "applied_events").await - applied_before;
            eprintln!(
                "  {:>4.1} s: table appended {appended}, ledger applied {applied}, {} behind",
                started.elapsed().as_secs_f64(),
                lag_events.last().copied().unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (appended_after, applied_after) = tokio::join!(
        count(&table_db, "events"),
        count(&scoring_db, "applied_events")
    );
    let played = started.elapsed().as_secs_f64();
    let load_end = Utc::now();
    phase.send_replace(STOPPED);
    let cpu = (
        cpu_seconds(scoring_pid) - cpu_before.0,
        cpu_seconds(std::process::id()) - cpu_before.1,
    );
    let mut commands = 0;
    for t in tasks {
        commands += t.await.unwrap().len();
    }
    // Every event the table stored, in the ledger.
    let stopped = Instant::now();
    let total = count(&table_db, "events").await;
    let mut caught_up = None;
    while stopped.elapsed() < Duration::from_secs(120) {
        if count(&scoring_db, "applied_events").await >= total {
            caught_up = Some(stopped.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let lag_seconds: Vec<f64> = sqlx::query_scalar(
        "SELECT extract(epoch FROM applied_at - event_time)::float8 FROM applied_events
         WHERE event_time >= $1 AND event_time < $2",
    )
    .bind(load_start)
    .bind(load_end)
    .fetch_all(&scoring_db)
    .await
    .unwrap();

    let appended = (appended_after - appended_before) as f64 / played;
    let applied = (applied_after - applied_before) as f64 / played;
    println!(
        "part 1: {tables} tables of 4 bot clients (okey_load, full speed), {played:.1} s; table service in this process, scoring as its own process"
    );
    println!(
        "table service: {commands} commands ({:.0}/s), {appended:.0} events appended/s",
        commands as f64 / played
    );
    println!("ledger: {applied:.0} events applied/s");
    println!(
        "ratio applied/s : appended/s = {:.2} (goal >= 1.0)",
        applied / appended
    );
    let (p50, p99, max) = quantiles(lag_events);
    println!("lag while playing, events not yet applied: p50 {p50:.0}, p99 {p99:.0}, max {max:.0}");
    let (p50, p99, max) = quantiles(lag_seconds);
    println!(
        "lag while playing, commit at the table to application: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        p50 * 1e3,
        p99 * 1e3,
        max * 1e3
    );
    match caught_up {
        Some(t) => println!(
            "every one of the {total} events applied {:.0} ms after play stopped",
            t.as_secs_f64() * 1e3
        ),
        None => println!("the ledger had not every event 120 s after play stopped"),
    }
    println!(
        "CPU while playing: scoring {:.1} s ({:.0}% of a core), table service and bot clients {:.1} s ({:.0}% of a core)",
        cpu.0,
        100.0 * cpu.0 / played,
        cpu.1,
        100.0 * cpu.1 / played
    );
    drop(scoring_process);
    table_service.stop().await;

    // The consumer's capacity: the same events read from a backlog (the whole stream) by
    // `scoring --rebuild` into an empty database.
    eprintln!("rebuilding the run's ledger from the stream into an empty database");
    let mut rebuild_env = scoring_env.clone();
    set(
        &mut rebuild_env,
        "OKEY_DATABASE__URL",
        &infra.unique_database_url("scoring"),
    );
    let output = Command::new(SCORING)
        .envs(rebuild_env.iter().cloned())
        .arg("--rebuild")
        .output()
        .expect("the scoring binary runs");
    let report = String::from_utf8_lossy(&output.stdout);
    let line = report
        .lines()
        .find(|l| l.starts_with("rebuilt the ledger"))
        .unwrap_or_default();
    let figures: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.parse().ok())
        .collect();
    match figures.as_slice() {
        [events, _set_aside, secs, ..] if output.status.success() && *secs > 0.0 => println!(
            "ledger capacity from a backlog (scoring --rebuild of the run's {events} events): {:.0} events/s = {:.2}x the table's append rate",
            events / secs,
            events / secs / appended
        ),
        _ => println!(
            "the rebuild failed: {report}{}",
            String::from_utf8_lossy(&output.stderr)
        ),
    }
    table_db.close().await;
    scoring_db.close().await;
    let stream = table::outbox::Subjects::new(&prefix).stream_name();
    if let Err(e) = js.delete_stream(&stream).await {
        eprintln!("the run's stream {stream} is left behind: {e}");
    }
    vec![
        table_settings.database.url.expose().to_owned(),
        url_of(&scoring_env),
        url_of(&rebuild_env),
    ]
}

/// Player `i` of the generated ledger.
fn player(i: u64) -> String {
    format!(
        "players/{}",
        uuid::Uuid::from_u128(0xbe4c_0000_0000_0000 + i as u128)
    )
}

/// The four table events of generated match `m`.
fn generated_match(
    m: u64,
    matches: u64,
    players: u64,
    now: chrono::DateTime<Utc>,
) -> Vec<(Published, String)> {
    let table = uuid::Uuid::from_u128(0x0007_ab1e_0000_0000 + m as u128);
    let mut rules = Preset::Classic.rules();
    rules.match_length = MatchLength::Hands(1);
    // Each player's matches at other tables: a bijection of seat numbers onto the players.
    let seats: [Option<String>; 4] =
        std::array::from_fn(|s| Some(player((m * 4 + s as u64) * 7919 % players)));
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&m.to_le_bytes());
    let deal = okey_rules::Deal::from_seed(&seed, 0);
    let winner = (m % 4) as u8;
    let scores: [i32; 4] = std::array::from_fn(|s| {
        if s as u8 == winner {
            -101
        } else {
            50 + ((m * 31 + s as u64 * 17) % 250) as i32
        }
    });
    let end = HandEnd {
        outcome: Outcome::Finished,
        winner: Some(winner),
        multiplier: 1,
        scores,
    };
    let totals = scores.map(i64::from);
    let events = [
        TableEvent::TableCreated {
            rules,
            seats,
            admission: Admission::default(),
            server_seed_sha256: None,
        },
        TableEvent::HandDealt {
            hand_number: 1,
            first: 0,
            indicator: deal.indicator,
            seed_sha256: seed_hash(&seed),
            seeding: None,
        },
        TableEvent::HandEnded {
            hand_number: 1,
            end,
            result: HandResult {
                outcome: Outcome::Finished,
                winner: Some(winner),
                penalties: [0; 4],
                scores,
            },
            totals,
            seed: hex(&seed),
            racks: Default::default(),
            server_seed: None,
        },
        TableEvent::MatchEnded {
            totals,
            winners: vec![winner],
        },
    ];
    // Spread over the last 40 days, so each period holds a part of them, in the order they
    // arrive (as a live stream's matches nearly are: a match that arrives after one that ended
    // later is rated again in its place, and that is not what this measures).
    let ended = now - chrono::Duration::seconds(40 * 86_400)
        + chrono::Duration::milliseconds((m * 40 * 86_400_000 / matches.max(1)) as i64);
    events
        .iter()
        .enumerate()
        .map(|(i, event)| {
            let time = ended - chrono::Duration::seconds(3 - i as i64);
            let published = Published::public(
                format!("tables/{table}"),
                i as u64 + 1,
                uuid::Uuid::from_u128(m as u128 * 4 + i as u128 + 1).to_string(),
                time.to_rfc3339(),
                event,
            );
            let bytes = String::from_utf8(published.encode()).unwrap();
            (published, bytes)
        })
        .collect()
}

/// `message` as a request with `token` (`Bearer …`).
fn with<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", token.parse().unwrap());
    request
}

/// Part 2; returns the database it made.
async fn standings(infra: &TestInfra, matches: u64, players: u64, calls: usize) -> String {
    let mut env = infra.env_for(ServiceKind::Scoring, 0);
    // Subjects nobody publishes on: this service's consumer only waits.
    set(
        &mut env,
        "OKEY_NATS__SUBJECT_PREFIX",
        &format!("bench-standings-{}", std::process::id()),
    );
    set(&mut env, "OKEY_DATABASE__MAX_CONNECTIONS", "8");
    // Every rated player on the all-time board (each plays 4M/P matches, 2 by default).
    set(&mut env, "OKEY_RATING__LEADERBOARD_MIN_MATCHES", "1");
    let url = url_of(&env);
    let settings = Settings::from_sources(ServiceKind::Scoring, None, env).unwrap();
    let app = scoring::startup::Application::build(&settings)
        .await
        .expect("scoring starts");
    let port = app.local_addr().port();
    let service =
        okey_platform::testing::InProcess::spawn(port, |stop| app.run_until_stopped(stop));
    let pool = pool_of(&url).await;

    let now = Utc::now();
    let started = Instant::now();
    let mut last_print = Instant::now();
    let per_batch = 125u64;
    let mut m = 0;
    while m < matches {
        let generated: Vec<(Published, String)> = (m..(m + per_batch).min(matches))
            .flat_map(|m| generated_match(m, matches, players, now))
            .collect();
        // Read back from the bytes, as the consumer reads a message.
        let incoming: Vec<(Incoming, &[u8])> = generated
            .iter()
            .map(|(_, bytes)| {
                (
                    Incoming::decode(bytes.as_bytes()).expect("the envelope reads"),
                    bytes.as_bytes(),
                )
            })
            .collect();
        let items: Vec<Item<'_>> = incoming
            .iter()
            .map(|(i, bytes)| Item::Event(i, bytes))
            .collect();
        store::apply_batch(&pool, &items).await.expect("applied");
        m = (m + per_batch).min(matches);
        if last_print.elapsed() >= Duration::from_secs(1) {
            last_print = Instant::now();
            eprintln!(
                "  generated {m}/{matches} matches ({:.0} events/s)",
                m as f64 * 4.0 / started.elapsed().as_secs_f64()
            );
        }
    }
    let generating = started.elapsed().as_secs_f64();
    sqlx::query("VACUUM (ANALYZE)")
        .execute(&pool)
        .await
        .unwrap();
    let (results, distinct): (i64, i64) =
        sqlx::query_as("SELECT count(*), count(DISTINCT player_id) FROM match_results")
            .fetch_one(&pool)
            .await
            .unwrap();
    println!(
        "part 2: {matches} generated matches applied through store::apply_batch in {generating:.1} s ({:.0} events/s); {results} match results of {distinct} players",
        matches as f64 * 4.0 / generating
    );

    let channel = okey_platform::testing::connect(port, Duration::from_secs(30)).await;
    let mut api = ScoringServiceClient::new(channel);
    let rated: i64 = sqlx::query_scalar("SELECT count(*) FROM ratings")
        .fetch_one(&pool)
        .await
        .unwrap();
    println!("part 2: {rated} rated players");
    let signed = |who: &str| format!("Bearer {}", test_token(who, &[Role::Player]));
    let reader = signed("bench-reader");
    // Random numbers for picking players (xorshift: the same picks every run).
    let mut random = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        random
    };

    // Baselines in the same run: the ranking the service did before (every ranked result of the
    // period aggregated per call), as one SQL statement; and GetRating, one row by its key.
    let old_standings = "
        WITH s AS (
            SELECT player_id, count(*) AS played, count(*) FILTER (WHERE won) AS won,
                   avg(total)::float8 AS mean
            FROM match_results WHERE ranked AND ended_at >= $1 AND ended_at < $2
            GROUP BY player_id
        ), r AS (SELECT s.*, rank() OVER (ORDER BY won DESC, mean ASC, played DESC) AS place
                 FROM s)
        SELECT * FROM r ORDER BY won DESC, mean ASC, played DESC, player_id LIMIT 50";
    let mut figures = Vec::new();
    for (name, period) in [
        ("all time", scoring::period::Period::AllTime),
        ("month", scoring::period::Period::Month),
    ] {
        let (from, to) = period.bounds(now);
        let mut latencies = Vec::with_capacity(calls / 4);
        for _ in 0..(calls / 4).max(5) {
            let begun = Instant::now();
            sqlx::query(old_standings)
                .bind(from)
                .bind(to)
                .fetch_all(&pool)
                .await
                .unwrap();
            latencies.push(begun.elapsed().as_secs_f64());
        }
        figures.push((
            format!("baseline: the old per-call standings SQL, {name}"),
            latencies,
        ));
    }
    let mut latencies = Vec::with_capacity(calls);
    for _ in 0..calls {
        let id = player(next() % players);
        let request = with(pb::GetRatingRequest { player: id }, &reader);
        let begun = Instant::now();
        api.get_rating(request).await.expect("a rating");
        latencies.push(begun.elapsed().as_secs_f64());
    }
    figures.push((
        "baseline: GetRating (one row by key, and its rank)".into(),
        latencies,
    ));
    let points: Vec<i32> =
        sqlx::query_scalar("SELECT points FROM ratings ORDER BY md5(player_id) LIMIT 2000")
            .fetch_all(&pool)
            .await
            .unwrap();
    let mut latencies = Vec::with_capacity(calls);
    for _ in 0..calls {
        let p = points[(next() % points.len() as u64) as usize];
        let begun = Instant::now();
        let _: i64 = sqlx::query_scalar(
            "SELECT 1 + count(*) FROM ratings WHERE matches >= 1 AND points > $1",
        )
        .bind(p)
        .fetch_one(&pool)
        .await
        .unwrap();
        latencies.push(begun.elapsed().as_secs_f64());
    }
    figures.push((
        "baseline: an all-time place counted player by player (the SQL board_rank ran before)"
            .into(),
        latencies,
    ));

    let periods = [
        ("all time", pb::StandingsPeriod::Unspecified),
        ("month", pb::StandingsPeriod::Month),
        ("week", pb::StandingsPeriod::Week),
        ("day", pb::StandingsPeriod::Day),
    ];
    for (name, period) in periods {
        // Players with a result in the period, to pick from for their own place.
        let kept = match period {
            pb::StandingsPeriod::Month => scoring::period::Period::Month,
            pb::StandingsPeriod::Week => scoring::period::Period::Week,
            pb::StandingsPeriod::Day => scoring::period::Period::Day,
            _ => scoring::period::Period::AllTime,
        };
        let present: Vec<String> = sqlx::query_scalar(
            "SELECT player_id FROM standings WHERE period = $1 AND starts = $2
             ORDER BY md5(player_id) LIMIT 2000",
        )
        .bind(kept.as_str())
        .bind(kept.bounds(Utc::now()).0)
        .fetch_all(&pool)
        .await
        .unwrap();
        println!(
            "  {name}: {} players with a result in the period",
            present.len()
        );
        if present.is_empty() {
            continue;
        }
        let mut someone = || {
            let id = &present[(next() % present.len() as u64) as usize];
            signed(id.trim_start_matches("players/"))
        };
        for around in [false, true] {
            let mut latencies = Vec::with_capacity(calls);
            let mut shown = 0;
            for i in 0..calls {
                let token = someone();
                let request = with(
                    pb::ListStandingsRequest {
                        period: period as i32,
                        page_size: 50,
                        page_token: String::new(),
                    },
                    &reader,
                );
                let own = with(
                    pb::GetStandingRequest {
                        player: "players/me".into(),
                        period: period as i32,
                    },
                    &token,
                );
                let begun = Instant::now();
                if around {
                    api.get_standing(own).await.expect("a standing");
                } else {
                    shown = api
                        .list_standings(request)
                        .await
                        .expect("standings")
                        .into_inner()
                        .standings
                        .len();
                }
                latencies.push(begun.elapsed().as_secs_f64());
                if i % 100 == 99 {
                    eprintln!("  standings {name}: {}/{calls} calls", i + 1);
                }
            }
            let what = if around {
                format!("GetStanding {name} (a random player's place)")
            } else {
                format!("ListStandings {name} (first page, {shown} rows)")
            };
            figures.push((what, latencies));
        }
        for around in [false, true] {
            let mut latencies = Vec::with_capacity(calls);
            let mut shown = 0;
            for i in 0..calls {
                let token = someone();
                let request = with(
                    pb::ListLeaderboardRequest {
                        period: period as i32,
                        page_size: 50,
                        around_me: around,
                        ..Default::default()
                    },
                    if around { &token } else { &reader },
                );
                let begun = Instant::now();
                let page = api
                    .list_leaderboard(request)
                    .await
                    .expect("a leaderboard")
                    .into_inner();
                latencies.push(begun.elapsed().as_secs_f64());
                shown = page.entries.len();
                if i % 100 == 99 {
                    eprintln!("  leaderboard {name}: {}/{calls} calls", i + 1);
                }
            }
            let what = if around {
                format!("ListLeaderboard {name} around a random player ({shown} rows)")
            } else {
                format!("ListLeaderboard {name} (first page, {shown} rows)")
            };
            figures.push((what, latencies));
        }
    }
    // Deep pages: 20 pages of the all-time board, by their tokens.
    let mut latencies = Vec::new();
    let mut token = String::new();
    for _ in 0..20 {
        let request = with(
            pb::ListLeaderboardRequest {
                page_size: 50,
                page_token: token.clone(),
                ..Default::default()
            },
            &reader,
        );
        let begun = Instant::now();
        let page = api.list_leaderboard(request).await.unwrap().into_inner();
        latencies.push(begun.elapsed().as_secs_f64());
        token = page.next_page_token;
    }
    figures.push((
        "ListLeaderboard all time, pages 1-20 by token".into(),
        latencies,
    ));

    for (what, latencies) in figures {
        let n = latencies.len();
        let (p50, p99, max) = quantiles(latencies);
        println!(
            "{what}: {n} calls, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (goal p99 < 20 ms)",
            p50 * 1e3,
            p99 * 1e3,
            max * 1e3
        );
    }
    service.stop().await;
    pool.close().await;
    url
}

/// Drops the run's databases (a failure is only reported).
async fn forget(infra: &TestInfra, urls: &[String]) {
    let Ok(server) = PgPool::connect(&infra.database_url).await else {
        eprintln!("the run's databases are left behind: {urls:?}");
        return;
    };
    for url in urls {
        let name = url.rsplit('/').next().unwrap_or(url);
        let drop = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
        if let Err(e) = sqlx::query(sqlx::AssertSqlSafe(drop))
            .execute(&server)
            .await
        {
            eprintln!("the run's database {name} is left behind: {e}");
        }
    }
    server.close().await;
}

#[tokio::main]
async fn main() {
    let Some(infra) = TestInfra::from_env() else {
        eprintln!("start the infrastructure first: deploy/infra.sh up");
        std::process::exit(2);
    };
    let mut made = Vec::new();
    if !flag("--skip-load") {
        let tables = arg("--tables", 20) as usize;
        let seconds = arg("--seconds", 20);
        made.extend(keeping_up(&infra, tables, seconds).await);
    }
    if !flag("--skip-standings") {
        let matches = arg("--matches", 50_000);
        let players = arg("--players", 100_000).max(4);
        let calls = arg("--calls", 200) as usize;
        made.push(standings(&infra, matches, players, calls).await);
    }
    forget(&infra, &made).await;
}
