//! Matchmaking replicas as separate processes on one PostgreSQL: 400 guests with mixed rule sets
//! over two replicas end in 100 complete tables, each ticket matched exactly once; a replica killed
//! with SIGKILL while tables are being formed, its Redis keys flushed mid-queue and the replica
//! started again lose no ticket, seat nobody twice and leave every table complete.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Backends, Guest, Replica, uuid, variant};
use okey_platform::testing::{TestInfra, connect, wait_for_health};
use okey_proto::v1 as pb;
use sqlx::{PgPool, Row};
use tokio::sync::Semaphore;
use tonic_health::pb::health_check_response::ServingStatus;

/// FindTable for every guest, spread over `ports` (guest i → port i % n), at most 32 at once. A
/// replica that does not answer is left for the next port with the same request id.
async fn find_all(guests: &[Guest], ports: Arc<std::sync::Mutex<Vec<u16>>>) {
    let gate = Arc::new(Semaphore::new(32));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, g) in guests.iter().enumerate() {
        let g = g.clone();
        let gate = gate.clone();
        let ports = ports.clone();
        tasks.spawn(async move {
            let _permit = gate.acquire().await.unwrap();
            let request = pb::FindTableRequest {
                request_id: uuid(),
                rules: Some(variant(i % 4)),
                allow_bots: false,
                bot_level: 0,
            };
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut attempt = i;
            loop {
                let port = {
                    let ports = ports.lock().unwrap();
                    ports[attempt % ports.len()]
                };
                let answered = match tonic::transport::Channel::from_shared(format!(
                    "http://127.0.0.1:{port}"
                ))
                .unwrap()
                .connect_timeout(Duration::from_secs(1))
                .connect()
                .await
                {
                    Ok(channel) => {
                        pb::matchmaking_service_client::MatchmakingServiceClient::new(channel)
                            .find_table(g.req(request.clone()))
                            .await
                            .is_ok()
                    }
                    Err(_) => false,
                };
                if answered {
                    return;
                }
                assert!(Instant::now() < deadline, "no replica opened the ticket");
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("a FindTable task");
    }
}

/// Waits until `n` tickets are matched and none is searching.
async fn wait_all_matched(pool: &PgPool, n: i64, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let (matched, other): (i64, i64) = sqlx::query_as(
            "SELECT count(*) FILTER (WHERE state = 'matched'), \
                    count(*) FILTER (WHERE state <> 'matched') FROM tickets",
        )
        .fetch_one(pool)
        .await
        .unwrap();
        if matched == n && other == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{matched} of {n} matched, {other} not"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every ticket is at exactly one table, every table has four tickets of the same rules in seats
/// 0–3 and, at the table service, exactly those players in those seats.
async fn check_exactly_once(backends: &Backends, pool: &PgPool, guests: &[Guest]) -> usize {
    let rows = sqlx::query("SELECT player_id, table_name, seat, rules_key FROM tickets")
        .fetch_all(pool)
        .await
        .unwrap();
    assert_eq!(rows.len(), guests.len(), "one ticket per guest");
    let mut tables: BTreeMap<String, Vec<(String, i32, String)>> = BTreeMap::new();
    let mut players = BTreeSet::new();
    for r in &rows {
        let player = format!("players/{}", r.get::<uuid::Uuid, _>("player_id"));
        assert!(players.insert(player.clone()), "{player} has two tickets");
        tables.entry(r.get("table_name")).or_default().push((
            player,
            r.get("seat"),
            r.get("rules_key"),
        ));
    }
    let mut api = backends.table_client().await;
    for (table, seated) in &tables {
        assert_eq!(seated.len(), 4, "{table}: {seated:?}");
        let seats: BTreeSet<i32> = seated.iter().map(|s| s.1).collect();
        assert_eq!(seats, BTreeSet::from([0, 1, 2, 3]), "{table}");
        assert!(
            seated.iter().all(|s| s.2 == seated[0].2),
            "{table}: mixed rules"
        );
        let guest = guests
            .iter()
            .find(|g| g.player == seated[0].0)
            .expect("a guest");
        let got = api
            .get_table(guest.req(pb::GetTableRequest {
                name: table.clone(),
            }))
            .await
            .expect("the table exists")
            .into_inner()
            .table
            .unwrap();
        for (player, seat, _) in seated {
            let at_table = got.seats[*seat as usize].player.as_ref().unwrap();
            assert_eq!(&at_table.player, player, "{table} seat {seat}");
            // Named from the start, by the name the player's token carried at FindTable.
            let guest = guests.iter().find(|g| &g.player == player).unwrap();
            assert!(!guest.display_name.is_empty());
            assert_eq!(
                at_table.display_name, guest.display_name,
                "{table} seat {seat}"
            );
        }
    }
    tables.len()
}

/// Waits until the replica on `port` is SERVING (its database made and migrated).
async fn serving(port: u16) {
    let channel = connect(port, Duration::from_secs(30)).await;
    wait_for_health(channel, "", ServingStatus::Serving).await;
}

async fn store(backends: &Backends) -> PgPool {
    let settings = backends.matchmaking_settings(&[]);
    // The first replica created the database; wait for it.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match PgPool::connect(settings.database.url.expose()).await {
            Ok(pool) => return pool,
            Err(e) => {
                assert!(Instant::now() < deadline, "no matchmaking database: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_hundred_guests_over_two_replicas_make_a_hundred_tables() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let backends = Backends::start(&infra).await;
    let r1 = backends.matchmaking_binary(&[]);
    serving(r1.port).await;
    let r2 = backends.matchmaking_binary(&[]);
    serving(r2.port).await;
    let guests = backends.guests(400).await;
    let started = Instant::now();
    find_all(
        &guests,
        Arc::new(std::sync::Mutex::new(vec![r1.port, r2.port])),
    )
    .await;
    let pool = store(&backends).await;
    wait_all_matched(&pool, 400, Duration::from_secs(120)).await;
    println!("400 tickets to 100 tables in {:?}", started.elapsed());
    assert_eq!(check_exactly_once(&backends, &pool, &guests).await, 100);
    drop((r1, r2));
    backends.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_formation_and_a_flushed_redis_lose_nothing() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let backends = Backends::start(&infra).await;
    let lease = [("OKEY_MATCHMAKING__CLAIM_LEASE_SECS", "1")];
    let mut r1: Replica = backends.matchmaking_binary(&lease);
    serving(r1.port).await;
    let r2 = backends.matchmaking_binary(&lease);
    serving(r2.port).await;
    let pool = store(&backends).await;
    // 48 of each of the four rule sets: twelve tables each.
    let guests = backends.guests(192).await;
    let ports = Arc::new(std::sync::Mutex::new(vec![r1.port, r2.port]));

    // Kill the first replica as soon as tables are being formed.
    let finding = tokio::spawn({
        let guests = guests.clone();
        let ports = ports.clone();
        async move { find_all(&guests, ports).await }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let claims: i64 = sqlx::query_scalar("SELECT count(*) FROM claims")
            .fetch_one(&pool)
            .await
            .unwrap();
        if claims >= 3 {
            break;
        }
        assert!(Instant::now() < deadline, "no table was being formed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    r1.kill();
    ports.lock().unwrap().retain(|p| *p != r1.port);
    // Redis loses everything of this service while tickets wait: the queue is PostgreSQL's,
    // nothing is lost. Only this test's keys are deleted (never FLUSHALL: the Redis is shared with
    // other tests and other people's runs).
    let prefix = backends
        .matchmaking_env
        .iter()
        .find(|(k, _)| k == "OKEY_REDIS__KEY_PREFIX")
        .map(|(_, v)| v.clone())
        .expect("a Redis prefix of this test's own");
    let client = redis::Client::open(infra.redis_url.as_str()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let mut cursor = 0u64;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(format!("{prefix}:*"))
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut conn)
            .await
            .unwrap();
        if !keys.is_empty() {
            redis::cmd("DEL")
                .arg(&keys)
                .query_async::<()>(&mut conn)
                .await
                .unwrap();
        }
        if next == 0 {
            break;
        }
        cursor = next;
    }
    finding.await.expect("every ticket opened");
    // The replica comes back (on another port) and the two finish what is left.
    let r1 = backends.matchmaking_binary(&lease);
    serving(r1.port).await;
    wait_all_matched(&pool, 192, Duration::from_secs(120)).await;
    assert_eq!(check_exactly_once(&backends, &pool, &guests).await, 48);
    let unfinished: i64 =
        sqlx::query_scalar("SELECT count(*) FROM claims WHERE table_name IS NULL")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(unfinished, 0);
    drop((r1, r2));
    backends.stop().await;
}

/// The claim as two replicas see it, on the store itself (no matcher runs): a group with a
/// ticket another replica's transaction holds is left out and said to be lost, the groups
/// without one are claimed, and once the other transaction ends the left-out group is claimed
/// whole by the next try. No ticket is in two claims.
#[tokio::test]
async fn a_claim_leaves_out_a_group_whose_ticket_another_replica_holds() {
    use matchmaking::domain::{BotLevel, NEW_PLAYER_RATING, Occupant, RatingWindows};
    use matchmaking::store::{NewTicket, Store};

    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let backends = Backends::start(&infra).await;
    let settings = backends.matchmaking_settings(&[]);
    // Building the replica migrates its database; it is never run, so nothing else claims.
    let _app = matchmaking::startup::Application::build(&settings)
        .await
        .expect("matchmaking builds");
    let pool = PgPool::connect(settings.database.url.expose())
        .await
        .expect("the matchmaking database");
    let store = Store::new(pool.clone());
    let rules = okey_rules::Preset::Classic.rules();
    let now = chrono::Utc::now();
    let mut tickets = Vec::new();
    for i in 0..8 {
        let ticket = store
            .open_ticket(&NewTicket {
                player_id: ::uuid::Uuid::new_v4(),
                request_id: format!("r{i}"),
                rules: rules.clone(),
                allow_bots: false,
                bot_level: BotLevel::Default,
                rating: NEW_PLAYER_RATING,
                now: now + Duration::from_millis(i),
                expires_at: now + Duration::from_secs(3600),
                // The later four were opened in a traced call; the first four were not.
                trace: if i >= 4 {
                    std::collections::BTreeMap::from([(
                        "traceparent".to_owned(),
                        format!("00-{:032x}-{:016x}-01", i + 1, i + 1),
                    )])
                } else {
                    Default::default()
                },
                display_name: format!("Player {i}"),
            })
            .await
            .expect("a ticket opens");
        tickets.push(ticket);
    }
    let key = tickets[0].rules_key.clone();
    let windows = RatingWindows::parse("0:any").unwrap();
    let lease = now + Duration::from_secs(10);

    // Another replica's claim holds the second-longest waiting ticket, of the first group.
    let mut other = pool.begin().await.unwrap();
    sqlx::query("SELECT 1 FROM tickets WHERE ticket_id = $1 FOR UPDATE")
        .bind(tickets[1].ticket_id)
        .execute(&mut *other)
        .await
        .unwrap();
    let first = store
        .claim_groups(&key, 16, now, lease, &windows)
        .await
        .unwrap();
    assert!(first.lost, "the held group is reported lost");
    assert_eq!(first.claims.len(), 1, "only the free group is claimed");
    let seated = |claims: &[matchmaking::store::Claim]| -> BTreeSet<String> {
        claims
            .iter()
            .flat_map(|c| c.seats.iter())
            .filter_map(|s| match s {
                Occupant::Player { name, .. } => Some(name.clone()),
                Occupant::Bot(_) => None,
            })
            .collect()
    };
    let players = |tickets: &[matchmaking::domain::Ticket]| -> BTreeSet<String> {
        tickets
            .iter()
            .map(|t| format!("players/{}", t.player_id))
            .collect()
    };
    assert_eq!(
        seated(&first.claims),
        players(&tickets[4..]),
        "the group of the four later tickets"
    );
    // The claim carries its tickets' trace contexts, for the span that makes its table.
    let traces: BTreeSet<String> = first.claims[0]
        .traces
        .iter()
        .map(|t| t["traceparent"].clone())
        .collect();
    assert_eq!(
        traces,
        (5..=8u64)
            .map(|i| format!("00-{i:032x}-{i:016x}-01"))
            .collect()
    );

    other.rollback().await.unwrap();
    let second = store
        .claim_groups(&key, 16, now, lease, &windows)
        .await
        .unwrap();
    assert!(!second.lost);
    assert_eq!(
        second.claims.len(),
        1,
        "the first group, whole, once nobody holds it"
    );
    assert_eq!(seated(&second.claims), players(&tickets[..4]));
    assert!(
        second.claims[0].traces.is_empty(),
        "untraced tickets link nothing"
    );
    let third = store
        .claim_groups(&key, 16, now, lease, &windows)
        .await
        .unwrap();
    assert!(
        third.claims.is_empty() && !third.lost,
        "nobody is left to claim"
    );
    let claimed: i64 = sqlx::query_scalar(
        "SELECT count(DISTINCT ticket_id) FROM tickets WHERE claim_id IS NOT NULL",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(claimed, 8);

    backends.stop().await;
}
