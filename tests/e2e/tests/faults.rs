//! Faults in the middle of matches, each on a platform of its own, all at once (so the whole run
//! takes about as long as its longest fault): `kill -9` and a restart of each service in turn; two
//! table replicas with one killed; NATS stopped for 30 s and restarted; Redis flushed, then
//! restarted; PostgreSQL restarted with a fast shutdown; every link between services through a
//! proxy that adds latency, drops connections and resets them. After each, every match must have
//! finished, no ticket may be stuck, every accepted move must be in the table's log, and
//! accounts' statistics, scoring's ledger, match results and standings must agree exactly with
//! the table's own events (nothing missing, nothing counted twice). The servers a fault stops are
//! started by the test for itself, never the shared ones other tests use. Prints the table of
//! faults injected, matches completed, moves and discrepancies (which must be 0).

use std::time::Duration;

use e2e::platform::Layout;
use e2e::proxy::Faults;
use e2e::report::{Row, render, show};
use e2e::scenario::{Group, World};
use e2e::servers::{OwnNats, OwnPostgres, OwnRedis};
use okey_platform::ServiceKind;
use okey_platform::testing::TestInfra;

/// Hands per match: one is a whole match, and keeps the run short.
const HANDS: i32 = 1;

/// A fault goes in once this many more commands were accepted.
const MID_MATCH: u64 = 12;

/// Six platforms share two cores: bots a little slower than in the suite keep every process
/// answering within its deadlines.
fn paced() -> Layout {
    Layout {
        bot_pace_ms: 50,
        ..Layout::default()
    }
}

/// `infra` with `postgres` for its PostgreSQL. Every scenario has a server of its own (fsync
/// off): six platforms' commits on the shared server queued behind each other's flushes.
fn own_postgres(postgres: &OwnPostgres, infra: TestInfra) -> TestInfra {
    TestInfra {
        database_url: postgres.url(),
        ..infra
    }
}

async fn kill_each_service(infra: TestInfra) -> Row {
    let postgres = tokio::task::block_in_place(OwnPostgres::start);
    let infra = own_postgres(&postgres, infra);
    let mut world = World::start("kill-9", &infra, paced()).await;
    let mut problems = Vec::new();
    let mut faults = 0;
    for service in [
        ServiceKind::Table,
        ServiceKind::Matchmaking,
        ServiceKind::Scoring,
        ServiceKind::Accounts,
    ] {
        let tickets = world
            .progress
            .tickets
            .load(std::sync::atomic::Ordering::Relaxed);
        let moves = world.moves();
        world.play(Group::Alone, HANDS);
        if matches!(service, ServiceKind::Table) {
            world.play(Group::Four, HANDS);
            world.play(Group::Room, HANDS);
        }
        // Matchmaking dies with a ticket searching; the others with matches being played.
        let reached = if matches!(service, ServiceKind::Matchmaking) {
            world.until_tickets(tickets + 1).await
        } else {
            world.until_moves(moves + MID_MATCH).await
        };
        if let Err(e) = reached {
            problems.push(e);
            break;
        }
        world.platform.kill9_and_restart(service).await;
        faults += 1;
    }
    world
        .finish(
            "kill -9 + restart: table, matchmaking, scoring, accounts",
            faults,
            problems,
        )
        .await
}

async fn a_table_replica_killed(infra: TestInfra) -> Row {
    let postgres = tokio::task::block_in_place(OwnPostgres::start);
    let infra = own_postgres(&postgres, infra);
    let layout = Layout {
        table_replicas: 2,
        ..paced()
    };
    let mut world = World::start("replicas", &infra, layout).await;
    world.play(Group::Four, HANDS);
    world.play(Group::Alone, HANDS);
    world.play(Group::Room, HANDS);
    let mut problems = Vec::new();
    let mut faults = 0;
    match world.until_moves(MID_MATCH).await {
        // Half the players were on the second replica; they move to the first.
        Ok(()) => {
            world.platform.tables[1].kill9();
            faults += 1;
        }
        Err(e) => problems.push(e),
    }
    world
        .finish("two table replicas, one killed (kill -9)", faults, problems)
        .await
}

async fn nats_down_for_30_seconds(infra: TestInfra) -> Row {
    let postgres = tokio::task::block_in_place(OwnPostgres::start);
    let infra = own_postgres(&postgres, infra);
    let mut nats = OwnNats::start();
    let infra = TestInfra {
        nats_url: nats.url(),
        ..infra
    };
    let mut world = World::start("nats", &infra, paced()).await;
    world.play(Group::Alone, HANDS);
    world.play(Group::Four, HANDS);
    world.play(Group::Room, HANDS);
    let mut problems = Vec::new();
    let mut faults = 0;
    match world.until_moves(MID_MATCH).await {
        Ok(()) => {
            tokio::task::block_in_place(|| nats.stop());
            // The fault itself is the 30 s outage (play goes on meanwhile).
            tokio::time::sleep(Duration::from_secs(30)).await;
            tokio::task::block_in_place(|| nats.start_again());
            faults += 1;
        }
        Err(e) => problems.push(e),
    }
    let row = world
        .finish("NATS stopped for 30 s, then restarted", faults, problems)
        .await;
    drop(nats);
    row
}

async fn redis_flushed_then_restarted(infra: TestInfra) -> Row {
    let postgres = tokio::task::block_in_place(OwnPostgres::start);
    let infra = own_postgres(&postgres, infra);
    let mut redis = OwnRedis::start();
    let infra = TestInfra {
        redis_url: redis.url(),
        ..infra
    };
    let mut world = World::start("redis", &infra, paced()).await;
    world.play(Group::Alone, HANDS);
    world.play(Group::Four, HANDS);
    world.play(Group::Room, HANDS);
    let mut problems = Vec::new();
    let mut faults = 0;
    match world.until_moves(MID_MATCH).await {
        Ok(()) => {
            let flushed = async {
                let client = redis::Client::open(redis.url()).map_err(|e| e.to_string())?;
                let mut conn = client
                    .get_multiplexed_async_connection()
                    .await
                    .map_err(|e| e.to_string())?;
                redis::cmd("FLUSHALL")
                    .query_async::<()>(&mut conn)
                    .await
                    .map_err(|e| e.to_string())
            }
            .await;
            match flushed {
                Ok(()) => faults += 1,
                Err(e) => problems.push(format!("FLUSHALL: {e}")),
            }
        }
        Err(e) => problems.push(e),
    }
    let moves = world.moves();
    world.play(Group::Alone, HANDS);
    match world.until_moves(moves + MID_MATCH).await {
        Ok(()) => {
            tokio::task::block_in_place(|| {
                redis.stop();
                redis.start_again();
            });
            faults += 1;
        }
        Err(e) => problems.push(e),
    }
    let row = world
        .finish("Redis FLUSHALL, then Redis restarted", faults, problems)
        .await;
    drop(redis);
    row
}

async fn postgres_restarted(infra: TestInfra) -> Row {
    let postgres = tokio::task::block_in_place(OwnPostgres::start);
    let infra = own_postgres(&postgres, infra);
    let mut world = World::start("postgres", &infra, paced()).await;
    world.play(Group::Alone, HANDS);
    world.play(Group::Four, HANDS);
    world.play(Group::Room, HANDS);
    let mut problems = Vec::new();
    let mut faults = 0;
    match world.until_moves(MID_MATCH).await {
        Ok(()) => {
            tokio::task::block_in_place(|| {
                postgres.stop_fast();
                postgres.start_again();
            });
            faults += 1;
        }
        Err(e) => problems.push(e),
    }
    let row = world
        .finish("PostgreSQL restarted (fast shutdown)", faults, problems)
        .await;
    drop(postgres);
    row
}

async fn a_bad_network_between_services(infra: TestInfra) -> Row {
    let postgres = tokio::task::block_in_place(OwnPostgres::start);
    let infra = own_postgres(&postgres, infra);
    let layout = Layout {
        proxied: Some(Faults {
            latency_ms: (0, 15),
            drop_one_in: 4,
            reset_every: Some(Duration::from_millis(700)),
        }),
        ..paced()
    };
    let mut world = World::start("proxy", &infra, layout).await;
    world.play(Group::Alone, HANDS);
    world.play(Group::Four, HANDS);
    world.play(Group::Room, HANDS);
    // The proxies' faults, counted once play and the checks are over.
    let proxies: Vec<_> = world
        .platform
        .proxies
        .iter()
        .map(|p| p.stats.clone())
        .collect();
    let mut row = world
        .finish(
            "proxy between services: 0-15 ms, 1 in 4 dropped, a reset / 0.7 s",
            0,
            Vec::new(),
        )
        .await;
    row.faults = proxies
        .iter()
        .map(|s| {
            s.dropped.load(std::sync::atomic::Ordering::Relaxed)
                + s.reset.load(std::sync::atomic::Ordering::Relaxed)
        })
        .sum();
    if row.faults == 0 {
        row.discrepancies
            .push("the proxies injected no fault: nothing was tested".into());
    }
    row
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_fault_in_the_middle_of_matches_leaves_every_record_in_agreement() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    // `OKEY_E2E_FAULTS=nats,proxy` runs only those (a developer's shortcut; all by default).
    let only = std::env::var("OKEY_E2E_FAULTS").unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || only.split(',').any(|n| n.trim() == name);
    let mut scenarios = tokio::task::JoinSet::new();
    if wanted("kill") {
        scenarios.spawn(kill_each_service(infra.clone()));
    }
    if wanted("replicas") {
        scenarios.spawn(a_table_replica_killed(infra.clone()));
    }
    if wanted("nats") {
        scenarios.spawn(nats_down_for_30_seconds(infra.clone()));
    }
    if wanted("redis") {
        scenarios.spawn(redis_flushed_then_restarted(infra.clone()));
    }
    if wanted("postgres") {
        scenarios.spawn(postgres_restarted(infra.clone()));
    }
    if wanted("proxy") {
        scenarios.spawn(a_bad_network_between_services(infra.clone()));
    }
    let mut rows = Vec::new();
    while let Some(done) = scenarios.join_next().await {
        rows.push(done.unwrap_or_else(|e| Row {
            scenario: "a scenario".into(),
            discrepancies: vec![format!("panicked: {e}")],
            ..Row::default()
        }));
    }
    rows.sort_by(|a, b| a.scenario.cmp(&b.scenario));
    let table = render(&rows);
    show(&table);
    for r in &rows {
        assert!(
            r.faults > 0,
            "{}: no fault was injected\n{table}",
            r.scenario
        );
        assert!(r.matches > 0, "{}: no match completed\n{table}", r.scenario);
    }
    assert!(
        rows.iter().all(|r| r.discrepancies.is_empty()),
        "discrepancies:\n{table}"
    );
}
