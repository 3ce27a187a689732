//! Live tables against the real Redis, NATS and PostgreSQL, on a hand-moved clock: a deadline
//! played exactly once with two replicas, three expiries handing a seat to a bot and a command
//! taking it back, presence, and bots in empty seats playing whole matches.

mod common;
mod live_common;

use std::time::Duration;

use common::*;
use live_common::*;
use okey_bots::{Bot, Level};
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use table::clock::Clock;
use table::domain::TableEvent;
use table::grpc::command_to_proto;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_deadline_plays_for_the_seat_exactly_once_with_two_replicas() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let settings = live_settings(&infra, &[]);
    let clock = clock();
    let a = Replica::start(&settings, clock.clone()).await;
    let b = Replica::start(&settings, clock.clone()).await;
    let channel_a = connect(a.port).await;
    let channel_b = connect(b.port).await;

    // Three tables, created through either replica; nobody moves.
    let mut tables = Vec::new();
    for i in 0..3 {
        let channel = if i % 2 == 0 { &channel_a } else { &channel_b };
        let (table, _) = seated_table(channel.clone(), &settings, 1).await;
        tables.push(table);
    }
    // Each first turn is armed a turn from the deal. A second before that, nothing is due (a
    // sweeper claims only what its clock has reached) and nothing was played.
    let mut armed = Vec::new();
    for table in &tables {
        let version = stored(&settings, table).await.0.len() as u64;
        armed.push(wait_armed_for(&settings, table, version).await);
    }
    clock.advance(Duration::from_secs(59));
    for (table, (member, at)) in tables.iter().zip(&armed) {
        assert!(*at > clock.now_ms(), "{member} due before its turn ran out");
        let (events, _) = stored(&settings, table).await;
        assert_eq!(count(&events, is_timeout), 0, "played before the deadline");
    }
    // Past it, the server plays each seat on turn once (the timeout, a draw or not, a discard).
    // Once the next seat's deadline is armed, a full turn away on the same clock, nothing is due
    // any more, so the count below is final.
    clock.advance(Duration::from_secs(2));
    for table in &tables {
        let events = wait_for(
            &settings,
            table,
            Duration::from_secs(20),
            "the timeout and its discard",
            |e| {
                e.iter().skip_while(|e| !is_timeout(&e.event)).any(|e| {
                    matches!(
                        e.event,
                        TableEvent::Played {
                            event: okey_rules::Event::TileDiscarded { .. },
                            ..
                        }
                    )
                })
            },
        )
        .await;
        let (member, at) = wait_armed_for(&settings, table, events.len() as u64).await;
        assert!(at > clock.now_ms(), "{member} is due at once");
    }
    for table in &tables {
        let (events, _) = stored(&settings, table).await;
        assert_gap_free(&events);
        assert_eq!(count(&events, is_timeout), 1, "one timeout at {table}");
        let played: Vec<_> = events
            .iter()
            .filter(|e| e.metadata.actor == table::live::SERVER_ACTOR)
            .collect();
        assert!(
            matches!(
                played[0].event,
                TableEvent::Played {
                    event: okey_rules::Event::TurnTimedOut { .. },
                    ..
                }
            ),
            "the server's events start with the timeout"
        );
        // Draw (or not, on the first turn) and discard: the turn moved on.
        assert!(played.iter().any(|e| matches!(
            e.event,
            TableEvent::Played {
                event: okey_rules::Event::TileDiscarded { .. },
                ..
            }
        )));
    }
    a.stop().await;
    b.stop().await;
}

/// Plays one command for `client` from its own view with `bot`.
async fn play_one(client: &mut Client, table: &str, bot: &mut dyn Bot, view: &pb::SeatView) {
    let command = bot.act(&engine_view(view));
    client
        .submit(table, &uuid(), command_to_proto(&command).unwrap())
        .await
        .unwrap_or_else(|e| panic!("{command:?} refused: {e:?}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_expiries_in_a_row_hand_the_seat_to_a_bot_and_the_next_command_takes_it_back() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let settings = live_settings(&infra, &[]);
    let clock = clock();
    let app = Replica::start(&settings, clock.clone()).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &settings, 3).await;
    let absent = clients[0].view(&table).await.unwrap().turn_seat as usize;
    let mut bot = Level::Strong.bot();

    // The absent seat never moves; the others play their turns as people.
    let mut expiries = 0;
    while expiries < 3 {
        let view = clients[(absent + 1) % 4].view(&table).await.unwrap();
        let turn = view.turn_seat as usize;
        if turn == absent {
            let before = view.version;
            wait_armed_for(&settings, &table, before as u64).await;
            clock.advance(PAST_A_TURN);
            wait_for(
                &settings,
                &table,
                Duration::from_secs(20),
                "a timeout",
                |e| e.len() as i64 > before,
            )
            .await;
            expiries += 1;
            if expiries < 3 {
                let table_now = clients[turn].view(&table).await.unwrap();
                let seat = &table_now.summary.unwrap().seats[absent];
                assert!(!seat.bot_substitute, "handed over after {expiries}");
            }
        } else {
            let view = clients[turn].view(&table).await.unwrap();
            play_one(&mut clients[turn], &table, bot.as_mut(), &view).await;
        }
    }
    let events = wait_for(
        &settings,
        &table,
        Duration::from_secs(10),
        "the hand-over",
        |e| count(e, |e| matches!(e, TableEvent::SeatHandedToBot { .. })) == 1,
    )
    .await;
    assert_eq!(count(&events, is_timeout), 3);
    // Each timeout says how many in a row it is, on the wire too.
    let in_a_row: Vec<i32> = events
        .iter()
        .filter(|e| is_timeout(&e.event))
        .map(|e| {
            let shown = table::domain::show(&e.event, None, |_| None);
            match table::grpc::event_to_proto(&shown, &e.table_id.to_string())
                .unwrap()
                .event
            {
                Some(pb::table_event::Event::TurnTimedOut(t)) => t.in_a_row,
                other => panic!("{other:?}"),
            }
        })
        .collect();
    assert_eq!(in_a_row, vec![1, 2, 3]);
    let handed = events
        .iter()
        .find(|e| matches!(e.event, TableEvent::SeatHandedToBot { .. }))
        .unwrap();
    assert_eq!(
        handed.event,
        TableEvent::SeatHandedToBot {
            seat: absent as u8,
            player: clients[absent].player()
        }
    );
    // The table says so: a bot plays the seat and its player is gone.
    let mut other = clients[(absent + 1) % 4].clone();
    let summary = other.table(&table).await.unwrap();
    assert!(summary.seats[absent].bot_substitute);
    assert_eq!(summary.seats[absent].presence, pb::Presence::Gone as i32);

    // The bot plays the seat's next turn by itself (no deadline needed) while the others play.
    let handed_at = handed.version;
    loop {
        let (events, _) = stored(&settings, &table).await;
        let bot_moved = events.iter().any(|e| {
            e.version > handed_at
                && e.metadata.actor == table::live::SERVER_ACTOR
                && matches!(e.event, TableEvent::Played { event: okey_rules::Event::TileDiscarded { seat, .. }, .. } if seat as usize == absent)
        });
        if bot_moved {
            break;
        }
        let view = other.view(&table).await.unwrap();
        let turn = view.turn_seat as usize;
        if turn != absent {
            let view = clients[turn].view(&table).await.unwrap();
            play_one(&mut clients[turn], &table, bot.as_mut(), &view).await;
        } else {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let expired = count(&stored(&settings, &table).await.0, is_timeout);
    assert_eq!(expired, 3, "the bot never needs a deadline");

    // A call refused as malformed or out of range changes nothing: the bot keeps the seat.
    let ahead = clients[absent].req(pb::WatchTableRequest {
        table: table.clone(),
        after_version: 1_000_000_000,
    });
    let refused = clients[absent]
        .api
        .watch_table(ahead)
        .await
        .map(|_| ())
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::OutOfRange, "{refused:?}");
    let refused = clients[absent]
        .submit(
            &table,
            &uuid(),
            pb::Command {
                command: Some(pb::command::Command::Discard(pb::DiscardCommand {
                    tile: "Z99".into(),
                })),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    let (events, _) = stored(&settings, &table).await;
    assert_eq!(
        count(&events, |e| matches!(e, TableEvent::SeatReclaimed { .. })),
        0
    );
    assert!(other.table(&table).await.unwrap().seats[absent].bot_substitute);

    // The player's next command, whatever it is, takes the seat back.
    let _ = clients[absent]
        .submit(
            &table,
            &uuid(),
            command_to_proto(&okey_rules::Command::Draw).unwrap(),
        )
        .await;
    let events = wait_for(
        &settings,
        &table,
        Duration::from_secs(10),
        "the reclaim",
        |e| count(e, |e| matches!(e, TableEvent::SeatReclaimed { .. })) == 1,
    )
    .await;
    assert_gap_free(&events);
    let view = clients[absent].view(&table).await.unwrap();
    assert!(!view.summary.unwrap().seats[absent].bot_substitute);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presence_follows_streams_heartbeats_and_time() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let settings = live_settings(&infra, &[]);
    let clock = clock();
    let app = Replica::start(&settings, clock.clone()).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &settings, 1).await;
    let presence = |t: &pb::Table, seat: usize| pb::Presence::try_from(t.seats[seat].presence);
    let observer = clients[3].clone();
    let table_now = || {
        let mut c = observer.clone();
        let name = table.clone();
        async move {
            c.api
                .get_table(c.req(pb::GetTableRequest { name }))
                .await
                .unwrap()
                .into_inner()
                .table
                .unwrap()
        }
    };
    // Sitting down is a command: the player was seen.
    let mut waited = 0;
    while presence(&table_now().await, 0) != Ok(pb::Presence::Connected) {
        waited += 1;
        assert!(waited < 200, "not connected after JoinSeat");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // An open stream: connected. Closed: away.
    let request = clients[0].req(pb::WatchTableRequest {
        table: table.clone(),
        after_version: 0,
    });
    let stream = clients[0]
        .api
        .watch_table(request)
        .await
        .unwrap()
        .into_inner();
    let mut waited = 0;
    while presence(&table_now().await, 0) != Ok(pb::Presence::Connected) {
        waited += 1;
        assert!(waited < 200, "never connected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(stream);
    let mut waited = 0;
    while presence(&table_now().await, 0) != Ok(pb::Presence::Away) {
        waited += 1;
        assert!(waited < 200, "never away after the stream closed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Not seen for longer than `live.gone_ms`: gone. A heartbeat: connected again.
    let gone_ms = settings
        .own::<table::settings::TableSettings>()
        .unwrap()
        .live
        .gone_ms;
    clock.advance(Duration::from_millis(gone_ms + 1));
    assert_eq!(presence(&table_now().await, 0), Ok(pb::Presence::Gone));
    // The records outlive `gone_ms` by days: a player long gone stays gone, never unknown.
    let redis = redis::Client::open(infra.redis_url.as_str()).unwrap();
    let mut conn = redis.get_multiplexed_async_connection().await.unwrap();
    let id = table.strip_prefix("tables/").unwrap();
    let kept: i64 = redis::cmd("PTTL")
        .arg(format!("{}:presence:{id}", settings.redis.key_prefix))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(kept > 24 * 3600 * 1000, "presence records kept {kept} ms");
    let request = clients[0].req(pb::SendHeartbeatRequest {
        table: table.clone(),
    });
    let r = clients[0]
        .api
        .send_heartbeat(request)
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.presence, pb::Presence::Connected as i32);
    assert_eq!(presence(&table_now().await, 0), Ok(pb::Presence::Connected));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_person_and_three_bots_play_a_full_match() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let settings = live_settings(&infra, &[]);
    let app = Replica::start(&settings, clock()).await;
    let channel = connect(app.port).await;
    let mut admin = Client::new(channel.clone(), &settings, "admin", &["admin"]);
    let mut person = Client::new(channel.clone(), &settings, &uuid(), &["player"]);
    let table = create(
        &mut admin,
        2,
        false,
        &[person.player()],
        Some(pb::BotLevel::Easy),
    )
    .await;
    let mut bot = Level::Strong.bot();
    let mut hand = 0;
    let mut moves = 0;
    loop {
        let view = person.view(&table).await.unwrap();
        let summary = view.summary.as_ref().unwrap();
        if summary.state == pb::TableState::Finished as i32 {
            break;
        }
        assert!(summary.seats[1].player.as_ref().unwrap().bot);
        if view.hand_number != hand {
            hand = view.hand_number;
            bot = Level::Strong.bot();
        }
        let engine = engine_view(&view);
        if view.turn_seat == 0 && engine.end.is_none() {
            let command = bot.act(&engine);
            match person
                .submit(&table, &uuid(), command_to_proto(&command).unwrap())
                .await
            {
                Ok(_) => moves += 1,
                // The hand may have ended (a bot went out) between the view and the command.
                Err(e) if e.code() == tonic::Code::FailedPrecondition => {}
                Err(e) => panic!("{command:?} refused: {e:?}"),
            }
        } else {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(moves < 2_000, "the match does not end");
    }
    let (events, seeds) = stored(&settings, &table).await;
    assert_gap_free(&events);
    assert!(check_scores(&events, &seeds) >= 2);
    assert!(match_ended(&events));
    assert_eq!(count(&events, is_timeout), 0, "nobody ran out of time");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_bots_play_a_match_with_no_person() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let settings = live_settings(&infra, &[]);
    let app = Replica::start(&settings, clock()).await;
    let channel = connect(app.port).await;
    let mut admin = Client::new(channel.clone(), &settings, "admin", &["admin"]);
    let table = create(&mut admin, 2, true, &[], Some(pb::BotLevel::Hard)).await;
    let events = wait_for(
        &settings,
        &table,
        Duration::from_secs(120),
        "the match end",
        match_ended,
    )
    .await;
    assert_gap_free(&events);
    let (_, seeds) = stored(&settings, &table).await;
    assert!(check_scores(&events, &seeds) >= 2);
    assert!(
        events
            .iter()
            .skip(2)
            .all(|e| e.metadata.actor == table::live::SERVER_ACTOR),
        "every move after the deal is the server's"
    );
    app.stop().await;
}

/// The reconciler skips a table exactly when a rebuild would change nothing: Redis is armed, or
/// freshly claimed, for the table's stored version. A newer version, a stale claim or a lost key
/// sends it to a rebuild.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_armed_for_its_version_is_settled_and_anything_else_is_rebuilt() {
    use table::deadlines::{Arming, Due, DueKind, STALE_CLAIM_MS};
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let (deadlines, conn, prefix, clock) = deadlines_of_their_own(&infra, "settled").await;
    let (table, other) = (sqlx::types::Uuid::new_v4(), sqlx::types::Uuid::new_v4());
    let now = clock.now_ms();
    let arming = Arming {
        due: Due {
            table,
            seat: 1,
            kind: DueKind::Turn { hand: 1, turn: 3 },
        },
        version: 5,
        at_ms: now + 1_000,
        bonus_ms: 0,
        cap_ms: now + 1_000,
    };
    assert!(deadlines.arm(&arming, false).await.unwrap());
    let settled = |asked: Vec<(sqlx::types::Uuid, u64)>| {
        let deadlines = deadlines.clone();
        async move { deadlines.settled(&asked).await.unwrap() }
    };
    assert_eq!(
        settled(vec![(table, 5), (table, 6), (other, 1)]).await,
        [true, false, false],
        "armed for 5: settled at 5 only; a table Redis never saw is not"
    );

    // Claimed by a sweeper: settled while the claim is fresh, rebuilt once it is stale.
    clock.advance(Duration::from_millis(1_000));
    let claimed = deadlines.claim().await.unwrap();
    assert_eq!(claimed, [arming.due]);
    assert_eq!(settled(vec![(table, 5)]).await, [true]);
    clock.advance(Duration::from_millis(STALE_CLAIM_MS));
    assert_eq!(settled(vec![(table, 5)]).await, [false]);

    // Lost from Redis (a FLUSHALL of this prefix): rebuilt.
    assert!(deadlines.arm(&arming, true).await.unwrap());
    assert_eq!(settled(vec![(table, 5)]).await, [true]);
    let mut raw = conn.clone();
    let _: () = redis::cmd("DEL")
        .arg(format!("{prefix}:table:due:{table}"))
        .arg(format!("{prefix}:table:due"))
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(settled(vec![(table, 5)]).await, [false]);

    // More tables than one round trip asks about, answered in order.
    assert!(deadlines.arm(&arming, true).await.unwrap());
    let mut many: Vec<(sqlx::types::Uuid, u64)> = (0..1_100)
        .map(|_| (sqlx::types::Uuid::new_v4(), 1))
        .collect();
    many[700] = (table, 5);
    let answers = deadlines.settled(&many).await.unwrap();
    assert_eq!(answers.len(), many.len());
    let settled_at: Vec<usize> = (0..answers.len()).filter(|i| answers[*i]).collect();
    assert_eq!(
        settled_at,
        [700],
        "only the armed table is settled, at its place"
    );
}

/// A Redis that lost its script cache (a restart; here `SCRIPT FLUSH`) answers NOSCRIPT to the
/// scripts called by their SHA1: every operation loads them and runs what was refused, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadlines_load_their_scripts_again_after_redis_lost_them() {
    use table::deadlines::{Appended, Arming, Due, DueKind};
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let (deadlines, mut raw, prefix, clock) = deadlines_of_their_own(&infra, "noscript").await;
    let (a, b) = (sqlx::types::Uuid::new_v4(), sqlx::types::Uuid::new_v4());
    let now = clock.now_ms();
    let arming = |table, version, bonus_ms| Arming {
        due: Due {
            table,
            seat: 2,
            kind: DueKind::Turn { hand: 1, turn: 7 },
        },
        version,
        at_ms: now + 1_000,
        bonus_ms,
        cap_ms: now + 60_000,
    };
    let flush = |mut raw: redis::aio::ConnectionManager| async move {
        let _: () = redis::cmd("SCRIPT")
            .arg("FLUSH")
            .query_async(&mut raw)
            .await
            .unwrap();
    };

    flush(raw.clone()).await;
    assert!(deadlines.arm(&arming(a, 5, 0), false).await.unwrap());
    assert_eq!(deadlines.settled(&[(a, 5)]).await.unwrap(), [true]);

    // A pipeline refused as a whole: each arm runs once (the bonus is added once, not twice).
    flush(raw.clone()).await;
    deadlines
        .apply_all(&[
            Appended {
                table_id: a,
                version: 6,
                arming: Some(arming(a, 6, 2_000)),
            },
            Appended {
                table_id: b,
                version: 3,
                arming: Some(arming(b, 3, 0)),
            },
            Appended {
                table_id: b,
                version: 4,
                arming: None,
            },
        ])
        .await
        .unwrap();
    let armed = deadlines.armed(a).await.unwrap().expect("a is armed");
    assert_eq!(armed.at_ms, now + 3_000, "the bonus once");
    assert_eq!(deadlines.armed(b).await.unwrap(), None, "b cleared after");

    flush(raw.clone()).await;
    clock.advance(Duration::from_millis(5_000));
    let claimed = deadlines.claim().await.unwrap();
    assert_eq!(claimed, [arming(a, 6, 0).due]);

    flush(raw.clone()).await;
    deadlines.clear(a, 7).await.unwrap();
    assert_eq!(deadlines.armed(a).await.unwrap(), None);
    let _: () = redis::cmd("DEL")
        .arg(format!("{prefix}:table:due"))
        .query_async(&mut raw)
        .await
        .unwrap();
}

/// Deadlines under a Redis key prefix of their own (`{name}-{uuid}`), on a manual clock, with a
/// connection for the test's own Redis commands.
async fn deadlines_of_their_own(
    infra: &TestInfra,
    name: &str,
) -> (
    table::deadlines::Deadlines,
    redis::aio::ConnectionManager,
    String,
    std::sync::Arc<table::clock::ManualClock>,
) {
    let redis = redis::Client::open(infra.redis_url.as_str()).unwrap();
    let conn = redis::aio::ConnectionManager::new(redis).await.unwrap();
    let prefix = format!("{name}-{}", sqlx::types::Uuid::new_v4());
    let clock = clock();
    let deadlines = table::deadlines::Deadlines::new(conn.clone(), &prefix, clock.clone());
    (deadlines, conn, prefix, clock)
}

/// The seat view says when the seat on turn runs out of time: what Redis holds for the turn,
/// the same for every seat, kept through the turn and moved on with it, in a command's answer
/// too, and the same through a replica that did not see the turn start (it reads Redis); the
/// update stream shows it on each move's last event, through either replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_carry_the_deadline_armed_for_the_turn() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let settings = live_settings(&infra, &[]);
    let clock = clock();
    let a = Replica::start(&settings, clock.clone()).await;
    let b = Replica::start(&settings, clock.clone()).await;
    let channel_b = connect(b.port).await;
    let (table, mut clients) = seated_table(connect(a.port).await, &settings, 1).await;
    let ms = |t: &Option<prost_types::Timestamp>| {
        t.as_ref()
            .map(|t| t.seconds as u64 * 1000 + t.nanos as u64 / 1_000_000)
    };
    // A stream through the replica that sees none of the moves: each move's last event
    // carries the deadline the views show at its version.
    let mut watcher = clients[0].clone();
    watcher.api = okey_proto::v1::table_service_client::TableServiceClient::new(channel_b.clone());
    let mut stream = watcher
        .api
        .clone()
        .watch_table(watcher.req(pb::WatchTableRequest {
            table: table.clone(),
            after_version: 0,
        }))
        .await
        .unwrap()
        .into_inner();
    let mut bot = okey_bots::Easy;
    let mut deadlines = Vec::new();
    let mut armed_at = std::collections::BTreeMap::new();
    let mut answered = None;
    for _ in 0..6 {
        let version = stored(&settings, &table).await.0.len() as u64;
        let (member, at) = wait_armed_for(&settings, &table, version).await;
        armed_at.insert(version, at);
        if let Some(answered) = answered {
            assert_eq!(answered, Some(at), "the command's answer at {version}");
        }
        let mut view = None;
        for client in &mut clients {
            let seen = client.view(&table).await.unwrap();
            assert_eq!(ms(&seen.turn_deadline), Some(at), "{member} at {version}");
            if seen.turn_seat == seen.seat {
                view = Some(seen);
            }
        }
        let view = view.expect("a seat is on turn");
        let mut on_b = clients[view.seat as usize].clone();
        on_b.api = okey_proto::v1::table_service_client::TableServiceClient::new(channel_b.clone());
        let seen = on_b.view(&table).await.unwrap();
        assert_eq!(ms(&seen.turn_deadline), Some(at), "through b at {version}");
        // The next command comes 5 s later on the service's clock: a new turn is due a full
        // turn from then, a draw keeps the turn's deadline (an opening may add the bonus).
        clock.advance(Duration::from_secs(5));
        let command = bot.act(&engine_view(&view));
        deadlines.push((view.seat, at, command.clone()));
        let r = clients[view.seat as usize]
            .submit(&table, &uuid(), command_to_proto(&command).unwrap())
            .await
            .unwrap_or_else(|e| panic!("{command:?} refused: {e:?}"));
        answered = Some(ms(&r.view.unwrap().turn_deadline));
    }
    for pair in deadlines.windows(2) {
        let ((seat, at, command), (next_seat, next_at, _)) = (&pair[0], &pair[1]);
        if seat != next_seat {
            assert!(next_at > at, "the next turn is due later");
        } else if matches!(command, okey_rules::Command::Draw) {
            assert_eq!(at, next_at, "a draw keeps the turn's deadline");
        } else {
            assert!(next_at >= at, "{command:?} never takes time away");
        }
    }
    assert!(
        deadlines.windows(2).any(|p| p[0].0 != p[1].0),
        "the turn moved on: {deadlines:?}"
    );
    let last = *armed_at.keys().last().unwrap();
    let mut shown = std::collections::BTreeMap::new();
    let mut snapshot = None;
    while shown.keys().last().is_none_or(|v| *v < last) {
        let update = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("the stream goes on")
            .unwrap()
            .expect("the stream is open")
            .update
            .unwrap();
        match update.kind.unwrap() {
            pb::table_update::Kind::Snapshot(view) => {
                assert_eq!(update.turn_deadline, None, "the snapshot's view carries it");
                snapshot = Some((view.version as u64, ms(&view.turn_deadline)));
            }
            pb::table_update::Kind::Event(_) => {
                shown.insert(update.version as u64, ms(&update.turn_deadline));
            }
            pb::table_update::Kind::Heartbeat(_) => {}
        }
    }
    let (first, at_first) = snapshot.expect("a snapshot first");
    assert_eq!(at_first, armed_at.get(&first).copied(), "the snapshot");
    for (version, at) in armed_at.range(first + 1..) {
        assert_eq!(shown[version], Some(*at), "the event at {version}");
    }
    for (version, at) in &shown {
        if let Some(at) = at {
            assert!(
                armed_at.get(version).is_none_or(|a| a == at),
                "a deadline at {version} is the one armed then"
            );
        }
    }
    a.stop().await;
    b.stop().await;
}
