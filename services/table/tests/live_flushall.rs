//! Redis is soft state: a `FLUSHALL` and a `SCRIPT FLUSH` in the middle of a hand (what a
//! restart without persistence does) lose every deadline and script, the service loads its
//! scripts again and rebuilds the deadlines from the event store, and the hand plays to its end. Alone in its test binary,
//! so no other test of this process loses its Redis keys.

mod common;
mod live_common;

use std::time::{Duration, Instant};

use common::*;
use live_common::*;
use okey_platform::testing::TestInfra;
use table::domain::TableEvent;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flushall_mid_hand_deadlines_come_back_and_the_hand_completes() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let settings = live_settings(&infra, &[]);
    let clock = clock();
    let app = Replica::start(&settings, clock.clone()).await;
    let channel = connect(app.port).await;
    // Four people who never move: every turn runs out, each seat goes to a bot after three.
    let (table, mut clients) = seated_table(channel.clone(), &settings, 1).await;
    let id = table.strip_prefix("tables/").unwrap().to_owned();
    let redis = redis::Client::open(infra.redis_url.as_str()).unwrap();
    let mut conn = redis.get_multiplexed_async_connection().await.unwrap();
    let due_key = format!("{}:table:due:{id}", settings.redis.key_prefix);

    for expected in 1..=2 {
        let version = stored(&settings, &table).await.0.len() as u64;
        wait_armed_for(&settings, &table, version).await;
        clock.advance(PAST_A_TURN);
        wait_for(
            &settings,
            &table,
            Duration::from_secs(20),
            "a timeout",
            |e| count(e, is_timeout) == expected,
        )
        .await;
    }
    // Wait until the next deadline is armed (not the claimed one of the last timeout), then
    // lose everything.
    let version = stored(&settings, &table).await.0.len() as u64;
    let (_, armed_at) = wait_armed_for(&settings, &table, version).await;
    let shown = shown_deadline(&mut clients, &table).await;
    assert_eq!(shown, armed_at, "the views show what is armed");
    let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut conn)
        .await
        .unwrap();
    // The reconciler puts it back from the event store: the deadline the seat was shown, not a
    // new one (a lost deadline never cuts a turn short, nor lengthens one shown).
    assert_eq!(wait_armed(&mut conn, &due_key).await, shown);
    assert_eq!(shown_deadline(&mut clients, &table).await, shown);

    // Lost again, and this time its moment passes before the reconciler comes: the seat gets a
    // full turn from the rebuild, and the views show that deadline, not the one that passed.
    let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();
    clock.advance(PAST_A_TURN);
    let started = Instant::now();
    loop {
        let rebuilt = wait_armed(&mut conn, &due_key).await;
        if shown_deadline(&mut clients, &table).await == rebuilt {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the views never showed the rebuilt deadline {rebuilt}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Keep the clock moving past every deadline until the hand (the whole match) ends.
    let started = Instant::now();
    let events = loop {
        let (events, _) = stored(&settings, &table).await;
        if match_ended(&events) {
            break events;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the hand never ended"
        );
        clock.advance(PAST_A_TURN);
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_gap_free(&events);
    let (_, seeds) = stored(&settings, &table).await;
    assert_eq!(check_scores(&events, &seeds), 1);
    assert!(count(&events, is_timeout) >= 3);
    assert!(
        count(&events, |e| matches!(e, TableEvent::SeatHandedToBot { .. })) >= 1,
        "bots finished the hand for the absent people"
    );
    app.stop().await;
}

/// The turn deadline (ms) the seat on turn is shown.
async fn shown_deadline(clients: &mut [Client], table: &str) -> u64 {
    let turn = clients[0].view(table).await.unwrap().turn_seat as usize;
    let view = clients[turn].view(table).await.unwrap();
    let at = view.turn_deadline.expect("a deadline is shown");
    at.seconds as u64 * 1000 + at.nanos as u64 / 1_000_000
}

/// When what is armed at `key` falls due (ms), once something is.
async fn wait_armed(conn: &mut redis::aio::MultiplexedConnection, key: &str) -> u64 {
    let started = Instant::now();
    loop {
        let (member, at): (Option<String>, Option<u64>) = redis::cmd("HMGET")
            .arg(key)
            .arg("member")
            .arg("at")
            .query_async(conn)
            .await
            .unwrap();
        if let (Some(_), Some(at)) = (member, at) {
            return at;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no deadline armed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
