//! What a stream shows follows who sits where now: a player who left keeps their WatchTable and
//! WatchChat streams open while others sit down and play, and sees no tile of the new occupant
//! and no partner message of that team; a player who moved sees the new seat's. A spectator's
//! first snapshot shows the whole public table. Unknown tables cost no memory and no Redis key;
//! the cache has a bound and each caller a limit on open streams; stored data this build cannot
//! read is a precise error, not a panic.

mod common;
mod live_common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::*;
use futures_util::StreamExt;
use live_common::{create, wait_armed_for};
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use tonic::Code;
use tonic_types::StatusExt;

type Updates = tonic::Streaming<pb::WatchTableResponse>;
type Chats = tonic::Streaming<pb::WatchChatResponse>;

fn reason(status: &tonic::Status) -> String {
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_default()
}

async fn watch(c: &Client, table: &str, after_version: i64) -> Result<Updates, tonic::Status> {
    let mut api = c.api.clone();
    Ok(api
        .watch_table(c.req(pb::WatchTableRequest {
            table: table.to_owned(),
            after_version,
        }))
        .await?
        .into_inner())
}

async fn watch_chat(c: &Client, table: &str) -> Result<Chats, tonic::Status> {
    let mut api = c.api.clone();
    Ok(api
        .watch_chat(c.req(pb::WatchChatRequest {
            table: table.to_owned(),
        }))
        .await?
        .into_inner())
}

async fn say(c: &mut Client, table: &str, channel: pb::ChatChannel, text: &str) {
    let r = c.req(pb::SendChatMessageRequest {
        request_id: uuid(),
        table: table.to_owned(),
        channel: channel as i32,
        text: text.to_owned(),
    });
    c.api.send_chat_message(r).await.expect("sent");
}

async fn leave(c: &mut Client, table: &str) {
    let r = c.req(pb::LeaveSeatRequest {
        request_id: uuid(),
        table: table.to_owned(),
    });
    c.api.leave_seat(r).await.expect("left");
}

/// The next table event of `s` (heartbeats skipped), at most 10 s away.
async fn next_event(s: &mut Updates) -> (i64, pb::table_event::Event) {
    loop {
        let u = tokio::time::timeout(Duration::from_secs(10), s.message())
            .await
            .expect("an update in time")
            .expect("the stream stays open")
            .expect("an update")
            .update
            .unwrap();
        if let Some(pb::table_update::Kind::Event(e)) = u.kind {
            return (u.version, e.event.unwrap());
        }
    }
}

/// Events of `s` until one matches `until` (included).
async fn events_until(
    s: &mut Updates,
    until: impl Fn(&pb::table_event::Event) -> bool,
) -> Vec<pb::table_event::Event> {
    let mut got = Vec::new();
    loop {
        let (_, e) = next_event(s).await;
        let done = until(&e);
        got.push(e);
        if done {
            return got;
        }
    }
}

fn partner_rules() -> pb::RuleSet {
    let mut r = rules(1);
    r.partners = Some(true);
    r
}

fn dealt(e: &pb::table_event::Event) -> bool {
    matches!(e, pb::table_event::Event::HandStarted(_))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_follows_who_sits_where_now_not_who_sat_when_it_opened() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let person = |name: &str| {
        Client::new(
            channel.clone(),
            &app.settings,
            &format!("{name}-{}", uuid()),
            &["player"],
        )
    };
    let mut admin = Client::new(channel.clone(), &app.settings, "admin", &["admin"]);
    let table = admin.create(partner_rules()).await;
    // The leaver sits in seat 0, opens both streams, and leaves; the mover does the same from
    // seat 1 (team 1) and sits down again in seat 2 (team 0).
    let (mut leaver, mut mover) = (person("leaver"), person("mover"));
    leaver.join(&table, 0).await;
    let mut left_updates = watch(&leaver, &table, 0).await.unwrap();
    let mut left_chat = watch_chat(&leaver, &table).await.unwrap();
    leave(&mut leaver, &table).await;
    mover.join(&table, 1).await;
    let mut moved_updates = watch(&mover, &table, 0).await.unwrap();
    let mut moved_chat = watch_chat(&mover, &table).await.unwrap();
    leave(&mut mover, &table).await;
    let mut others = [person("b"), person("c"), person("d")];
    others[0].join(&table, 0).await;
    others[1].join(&table, 1).await;
    mover.join(&table, 2).await;
    others[2].join(&table, 3).await; // The table is full: the hand is dealt.

    // The leaver sees the deal without a rack, and the first draw without its tile.
    let got = events_until(&mut left_updates, dealt).await;
    let Some(pb::table_event::Event::HandStarted(deal)) = got.last() else {
        unreachable!()
    };
    assert!(deal.rack.is_empty(), "the leaver saw seat 0's new rack");
    // The mover's stream shows seat 2's own rack (the seat it holds now).
    let got = events_until(&mut moved_updates, dealt).await;
    let Some(pb::table_event::Event::HandStarted(moved_deal)) = got.last() else {
        unreachable!()
    };
    let in_view = mover.view(&table).await.unwrap();
    assert_eq!(in_view.seat, 2);
    let sorted = |tiles: &[String]| {
        let mut t = tiles.to_vec();
        t.sort();
        t
    };
    assert_eq!(sorted(&moved_deal.rack), sorted(&in_view.rack));

    // The seat on turn discards, the next one draws: the leaver sees the draw, not the tile.
    let mut at = [
        others[0].clone(),
        others[1].clone(),
        mover.clone(),
        others[2].clone(),
    ];
    let turn = others[0].view(&table).await.unwrap().turn_seat as usize;
    let first = at[turn].view(&table).await.unwrap();
    let tile = first.rack.last().unwrap().clone();
    at[turn]
        .submit(
            &table,
            &uuid(),
            pb::Command {
                command: Some(pb::command::Command::Discard(pb::DiscardCommand { tile })),
            },
        )
        .await
        .unwrap();
    let draw = pb::Command {
        command: Some(pb::command::Command::Draw(pb::DrawCommand {})),
    };
    at[(turn + 1) % 4]
        .submit(&table, &uuid(), draw)
        .await
        .unwrap();
    let got = events_until(&mut left_updates, |e| {
        matches!(e, pb::table_event::Event::TileDrawn(_))
    })
    .await;
    let Some(pb::table_event::Event::TileDrawn(drawn)) = got.last() else {
        unreachable!()
    };
    assert_eq!(drawn.seat as usize, (turn + 1) % 4);
    assert!(drawn.tile.is_empty(), "the leaver saw seat 1's draw");

    // Partner chat: team 1 first, then team 0, then the table. The leaver's chat stream ends at
    // the first message (it sits nowhere); the mover, now in team 0, reads team 0's and the
    // table's, never team 1's (it sat there when its stream opened).
    say(
        &mut others[1],
        &table,
        pb::ChatChannel::Partner,
        "team 1 secret",
    )
    .await;
    say(
        &mut others[0],
        &table,
        pb::ChatChannel::Partner,
        "team 0 secret",
    )
    .await;
    say(&mut others[2], &table, pb::ChatChannel::Table, "hello all").await;
    let ended = tokio::time::timeout(Duration::from_secs(10), left_chat.next())
        .await
        .expect("the leaver's chat stream answers")
        .expect("an error, not a silent end")
        .expect_err("no message for a player who left");
    assert_eq!(ended.code(), Code::PermissionDenied);
    assert_eq!(reason(&ended), "not_seated");
    let mut texts = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(texts.contains("team 0 secret") && texts.contains("hello all")) {
        let left = deadline.saturating_duration_since(Instant::now());
        let m = tokio::time::timeout(left, moved_chat.next())
            .await
            .unwrap_or_else(|_| panic!("the mover got {texts:?}"))
            .unwrap()
            .unwrap();
        texts.insert(m.message.unwrap().text);
    }
    assert!(!texts.contains("team 1 secret"), "{texts:?}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectators_first_snapshot_shows_the_whole_public_table() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let view = clients[0].view(&table).await.unwrap();
    let tile = view.rack.last().unwrap().clone();
    clients[0]
        .submit(
            &table,
            &uuid(),
            pb::Command {
                command: Some(pb::command::Command::Discard(pb::DiscardCommand { tile })),
            },
        )
        .await
        .unwrap();
    let seated = clients[2].view(&table).await.unwrap();
    let spectator = Client::new(channel, &app.settings, "spectator", &["player"]);
    let mut s = watch(&spectator, &table, 0).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), s.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap()
        .update
        .unwrap();
    let Some(pb::table_update::Kind::Snapshot(v)) = first.kind else {
        panic!("a snapshot first")
    };
    assert_eq!(v.seat, -1);
    assert!(v.rack.is_empty() && v.engine_view.is_empty() && v.held_side_discard.is_empty());
    assert_eq!(
        (
            v.version,
            v.hand_number,
            v.phase,
            v.turn_seat,
            v.pile_count,
            &v.indicator,
            &v.okey,
            &v.side_discard,
        ),
        (
            seated.version,
            seated.hand_number,
            seated.phase,
            seated.turn_seat,
            seated.pile_count,
            &seated.indicator,
            &seated.okey,
            &seated.side_discard,
        )
    );
    assert_ne!(v.phase, pb::HandPhase::Unspecified as i32);
    assert!(v.pile_count > 0 && !v.indicator.is_empty() && !v.okey.is_empty());
    assert_eq!(v.discards, seated.discards);
    assert_eq!(v.discards[0].tiles.len(), 1);
    assert_eq!(v.melds, seated.melds);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_time_is_the_stored_one() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let mut admin = Client::new(connect(app.port).await, &app.settings, "admin", &["admin"]);
    let request = pb::CreateTableRequest {
        request_id: uuid(),
        rules: Some(rules(1)),
        seats: vec![],
        empty_seat_bots: None,
        ..Default::default()
    };
    let created = admin
        .api
        .create_table(admin.req(request.clone()))
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    let got = admin
        .api
        .get_table(admin.req(pb::GetTableRequest {
            name: created.name.clone(),
        }))
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert!(created.create_time.is_some());
    let id = created.name.strip_prefix("tables/").unwrap();
    assert_eq!(created.r#match, format!("matches/{id}"));
    assert_eq!(got.r#match, created.r#match);
    assert_eq!(created.create_time, got.create_time);
    // A retry answers the same time.
    let again = admin
        .api
        .create_table(admin.req(request))
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(
        (again.name, again.create_time),
        (created.name, created.create_time)
    );
    app.stop().await;
}

/// Every key this deployment holds in Redis.
async fn redis_keys(infra: &TestInfra, prefix: &str) -> BTreeSet<String> {
    let redis = redis::Client::open(infra.redis_url.as_str()).unwrap();
    let mut conn = redis.get_multiplexed_async_connection().await.unwrap();
    let mut keys = BTreeSet::new();
    let mut cursor = 0u64;
    loop {
        let (next, page): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(format!("{prefix}:*"))
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut conn)
            .await
            .unwrap();
        keys.extend(page);
        if next == 0 {
            return keys;
        }
        cursor = next;
    }
}

/// One call of `kind` (0-9: every table RPC) for a table nobody created.
async fn unknown_table_call(c: &Client, kind: usize) -> tonic::Status {
    let table = format!("tables/{}", uuid());
    let mut api = c.api.clone();
    let rid = uuid();
    let result = match kind {
        0 => api
            .get_table(c.req(pb::GetTableRequest { name: table }))
            .await
            .map(drop),
        1 => api
            .get_seat_view(c.req(pb::GetSeatViewRequest {
                table,
                view_form: 0,
                min_version: None,
            }))
            .await
            .map(drop),
        2 => api
            .submit_command(c.req(pb::SubmitCommandRequest {
                request_id: rid,
                table,
                command: Some(pb::Command {
                    command: Some(pb::command::Command::Draw(pb::DrawCommand {})),
                }),
                ..Default::default()
            }))
            .await
            .map(drop),
        3 => api
            .join_seat(c.req(pb::JoinSeatRequest {
                request_id: rid,
                table,
                seat: Some(1),
            }))
            .await
            .map(drop),
        4 => api
            .leave_seat(c.req(pb::LeaveSeatRequest {
                request_id: rid,
                table,
            }))
            .await
            .map(drop),
        5 => api
            .list_legal_actions(c.req(pb::ListLegalActionsRequest { table }))
            .await
            .map(drop),
        6 => api
            .watch_table(c.req(pb::WatchTableRequest {
                table,
                after_version: 0,
            }))
            .await
            .map(drop),
        7 => api
            .send_heartbeat(c.req(pb::SendHeartbeatRequest { table }))
            .await
            .map(drop),
        8 => api
            .send_chat_message(c.req(pb::SendChatMessageRequest {
                request_id: rid,
                table,
                channel: pb::ChatChannel::Table as i32,
                text: "hi".into(),
            }))
            .await
            .map(drop),
        _ => api
            .watch_chat(c.req(pb::WatchChatRequest { table }))
            .await
            .map(drop),
    };
    result.expect_err("no such table")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_unknown_tables_leave_memory_and_redis_as_they_were() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let prefix = app.settings.redis.key_prefix.clone();
    // One real table, so the service has something in memory and in Redis (a deadline, a
    // presence record).
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let version = clients[0].view(&table).await.unwrap().version as u64;
    wait_armed_for(&app.settings, &table, version).await;
    let r = clients[0].req(pb::SendHeartbeatRequest {
        table: table.clone(),
    });
    clients[0].api.send_heartbeat(r).await.unwrap();
    let cached = app.tables.cached_tables();
    assert_eq!(cached, 1);
    let before = redis_keys(&infra, &prefix).await;

    let caller = Client::new(channel, &app.settings, "prober", &["player"]);
    const CALLS: usize = 10_000;
    const WORKERS: usize = 16;
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let caller = caller.clone();
            tokio::spawn(async move {
                let mut codes = Vec::new();
                for i in (w..CALLS).step_by(WORKERS) {
                    codes.push(unknown_table_call(&caller, i % 10).await.code());
                }
                codes
            })
        })
        .collect();
    let mut not_found = 0;
    for w in workers {
        for code in w.await.unwrap() {
            assert_eq!(code, Code::NotFound);
            not_found += 1;
        }
    }
    assert_eq!(not_found, CALLS);
    assert_eq!(
        app.tables.cached_tables(),
        cached,
        "no cache slot outlived a call"
    );
    assert_eq!(
        redis_keys(&infra, &prefix).await,
        before,
        "no Redis key was written"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_holds_at_most_its_bound_and_an_evicted_table_is_folded_again() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let s = settings_with(&infra, &[("OKEY_LIVE__MAX_CACHED_TABLES", "2")]);
    let app = spawn_app(s).await;
    let channel = connect(app.port).await;
    let mut admin = Client::new(channel, &app.settings, "admin", &["admin"]);
    let mut tables = Vec::new();
    for _ in 0..5 {
        tables.push(admin.create(rules(1)).await);
    }
    for round in 0..2 {
        for t in &tables {
            let got = admin
                .api
                .get_table(admin.req(pb::GetTableRequest { name: t.clone() }))
                .await
                .unwrap()
                .into_inner()
                .table
                .unwrap();
            assert_eq!(&got.name, t, "round {round}");
            assert!(app.tables.cached_tables() <= 2);
        }
    }
    assert_eq!(app.tables.cached_tables(), 2);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_holds_at_most_its_limit_of_open_streams() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let s = settings_with(&infra, &[("OKEY_LIVE__MAX_STREAMS_PER_CALLER", "2")]);
    let app = spawn_app(s).await;
    let channel = connect(app.port).await;
    let (table, clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let c = &clients[0];
    let first = watch(c, &table, 0).await.unwrap();
    let _second = watch_chat(c, &table).await.unwrap();
    for refused in [
        watch(c, &table, 0).await.map(drop),
        watch_chat(c, &table).await.map(drop),
    ] {
        let e = refused.expect_err("past the limit");
        assert_eq!(e.code(), Code::ResourceExhausted);
        assert_eq!(reason(&e), "too_many_streams");
        let retry = e.get_error_details().retry_info().unwrap().retry_delay;
        assert!(retry.is_some_and(|d| d > Duration::ZERO));
    }
    // Another caller has slots of its own.
    let _other = watch(&clients[1], &table, 0).await.unwrap();
    // A stream closed frees its slot (once the server has seen it close).
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match watch(c, &table, 0).await {
            Ok(_) => break,
            Err(e) if e.code() == Code::ResourceExhausted && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            Err(e) => panic!("the slot never came back: {e:?}"),
        }
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_answer_this_build_cannot_read_is_internal_not_a_panic() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel, &app.settings, 1).await;
    let view = clients[0].view(&table).await.unwrap();
    let rid = uuid();
    let discard = pb::Command {
        command: Some(pb::command::Command::Discard(pb::DiscardCommand {
            tile: view.rack.last().unwrap().clone(),
        })),
    };
    clients[0]
        .submit(&table, &rid, discard.clone())
        .await
        .unwrap();
    let pool = sqlx::PgPool::connect(app.settings.database.url.expose())
        .await
        .unwrap();
    let damaged = sqlx::query(
        "UPDATE handled_commands SET response = 'not an answer'::bytea \
         WHERE request_id = $1",
    )
    .bind(format!("{} {rid}", clients[0].player()))
    .execute(&pool)
    .await
    .unwrap();
    assert_eq!(damaged.rows_affected(), 1);
    pool.close().await;
    let e = clients[0].submit(&table, &rid, discard).await.unwrap_err();
    assert_eq!(e.code(), Code::Internal);
    assert_eq!(reason(&e), "stored_answer_unreadable");
    // The service goes on serving.
    assert!(clients[1].view(&table).await.unwrap().version > view.version);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_left_during_the_match_is_played_by_a_bot_until_its_player_joins_again() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let s = settings_with(&infra, &[("OKEY_LIVE__BOT_PACE_MS", "0")]);
    let app = spawn_app(s).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let turn = clients[0].view(&table).await.unwrap().turn_seat as usize;
    let mut updates = watch(&clients[turn], &table, 0).await.unwrap();
    leave(&mut clients[turn], &table).await;

    // The stream says a bot plays the seat, and from then on shows the table as a spectator's.
    let got = events_until(&mut updates, |e| {
        matches!(e, pb::table_event::Event::SeatLeft(_))
    })
    .await;
    let Some(pb::table_event::Event::SeatLeft(left)) = got.last() else {
        unreachable!()
    };
    assert_eq!((left.seat as usize, left.bot_substitute), (turn, true));
    // The bot plays the seat's turn at once (no deadline), and the leaver sees its discard.
    let got = events_until(
        &mut updates,
        |e| matches!(e, pb::table_event::Event::TileDiscarded(d) if d.seat as usize == turn),
    )
    .await;
    assert!(
        !got.iter()
            .any(|e| matches!(e, pb::table_event::Event::TileDrawn(d) if !d.tile.is_empty()))
    );
    let summary = clients[(turn + 1) % 4]
        .view(&table)
        .await
        .unwrap()
        .summary
        .unwrap();
    // The seat is still the leaver's (only they may take it back), played by a bot, and
    // GetTable shows them gone.
    let held = summary.seats[turn]
        .player
        .clone()
        .expect("the seat names its player");
    assert_eq!((held.player, held.bot), (clients[turn].player(), false));
    assert!(summary.seats[turn].bot_substitute);
    let watcher = &mut clients[(turn + 1) % 4];
    let read = watcher.table(&table).await.unwrap();
    let seat = &read.seats[turn];
    assert_eq!(
        (
            seat.player.as_ref().map(|p| p.player.clone()),
            seat.presence,
            seat.bot_substitute
        ),
        (
            Some(clients[turn].player()),
            pb::Presence::Gone as i32,
            true
        )
    );
    let (events, _) = stored(&app.settings, &table).await;
    assert!(
        events
            .iter()
            .any(|e| e.metadata.actor == table::live::SERVER_ACTOR)
    );

    // Not seated any more; nobody else may take the seat; its player joins again.
    let e = clients[turn].view(&table).await.unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    let mut stranger = Client::new(channel, &app.settings, "stranger", &["player"]);
    let r = stranger.req(pb::JoinSeatRequest {
        request_id: uuid(),
        table: table.clone(),
        seat: Some(turn as i32),
    });
    let e = stranger.api.join_seat(r).await.unwrap_err();
    assert_eq!(reason(&e), "table_full");
    let r = clients[turn].req(pb::JoinSeatRequest {
        request_id: uuid(),
        table: table.clone(),
        seat: None,
    });
    let back = clients[turn]
        .api
        .join_seat(r)
        .await
        .unwrap()
        .into_inner()
        .view
        .unwrap();
    assert_eq!(back.seat as usize, turn);
    assert!(!back.rack.is_empty());
    assert!(!back.summary.unwrap().seats[turn].bot_substitute);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_shows_the_display_name_its_player_sat_down_with() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let mut admin = Client::new(channel.clone(), &app.settings, "admin", &["admin"]);
    let person = || Client::new(channel.clone(), &app.settings, &uuid(), &["player"]);
    // P is seated by CreateTable (the admin's token says nothing of P's name); Q sits down.
    let (mut p, mut q) = (person(), person());
    let table = create(&mut admin, 1, false, &[p.player()], None).await;
    q.join(&table, 1).await;
    let seats = |t: pb::Table| -> Vec<String> {
        t.seats
            .into_iter()
            .map(|s| s.player.map(|p| p.display_name).unwrap_or_default())
            .collect()
    };
    let get = |c: &Client| {
        let (mut c, table) = (c.clone(), table.clone());
        async move {
            let r = c.req(pb::GetTableRequest { name: table });
            c.api
                .get_table(r)
                .await
                .unwrap()
                .into_inner()
                .table
                .unwrap()
        }
    };
    let name_of = okey_platform::testing::test_display_name;
    assert_eq!(
        seats(get(&admin).await),
        vec![String::new(), name_of(&q.id), String::new(), String::new()],
        "an unknown name is empty, never the player id"
    );
    // P joins the seat it already holds: the table learns P's name.
    p.join(&table, 0).await;
    let t = get(&q).await;
    assert_eq!(seats(t.clone())[..2], [name_of(&p.id), name_of(&q.id)]);
    assert_eq!(t.seats[0].player.as_ref().unwrap().player, p.player());
    // And once only: joining again with the same name stores nothing.
    let before = stored(&app.settings, &table).await.0.len();
    p.join(&table, 0).await;
    assert_eq!(stored(&app.settings, &table).await.0.len(), before);
    app.stop().await;
}

/// A player seated by CreateTable (quick play, a room) who never calls JoinSeat is shown by the
/// name on their token from their first command on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_seated_by_create_table_is_named_by_their_first_command() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings_with(&infra, &[("OKEY_LIVE__BOT_PACE_MS", "0")])).await;
    let channel = connect(app.port).await;
    let mut admin = Client::new(channel.clone(), &app.settings, "admin", &["admin"]);
    let mut p = Client::new(channel, &app.settings, &uuid(), &["player"]);
    let table = create(
        &mut admin,
        1,
        false,
        &[p.player()],
        Some(pb::BotLevel::Easy),
    )
    .await;
    let name = |t: &pb::Table| t.seats[0].player.clone().unwrap().display_name;
    assert_eq!(name(&p.table(&table).await.unwrap()), "");
    // Seat 0's turn comes (the bots play at once); P plays what the table offers.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while p.view(&table).await.unwrap().turn_seat != 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "seat 0's turn comes"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let actions = p.legal_actions(&table).await.unwrap();
    let command = actions[0].command.clone().unwrap();
    p.submit(&table, &uuid(), command).await.unwrap();
    assert_eq!(
        name(&p.table(&table).await.unwrap()),
        okey_platform::testing::test_display_name(&p.id)
    );
    app.stop().await;
}

/// JoinSeat at a running match: every seat is held, so a seat named by a stranger, or another
/// seat than the one a player left, is `table_full` (`seat_taken` is for a table with seats
/// free). A JoinSeat that changed nothing (the player already sat there) is remembered like any
/// other: its retry after the player left answers as the first time and does not seat them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_seat_at_a_running_match_is_table_full_and_a_no_op_join_is_remembered() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let join = |c: &Client, request_id: &str, seat: Option<i32>| {
        let mut api = c.api.clone();
        let r = c.req(pb::JoinSeatRequest {
            request_id: request_id.to_owned(),
            table: table.clone(),
            seat,
        });
        async move { api.join_seat(r).await }
    };
    let stranger = Client::new(channel, &app.settings, "stranger", &["player"]);
    for seat in [None, Some(0), Some(3)] {
        let refused = join(&stranger, &uuid(), seat).await.unwrap_err();
        assert_eq!(refused.code(), Code::FailedPrecondition, "{seat:?}");
        assert_eq!(reason(&refused), "table_full", "{seat:?}");
    }

    // A seat not on turn (its bot, once it leaves, does not move while the test looks) joins
    // again, seated already: nothing changes, the answer is its view.
    let turn = clients[0].view(&table).await.unwrap().turn_seat as usize;
    let s = (turn + 2) % 4;
    let other = (s + 1) % 4;
    let again = uuid();
    let first = join(&clients[s], &again, None)
        .await
        .unwrap()
        .into_inner()
        .view
        .unwrap();
    assert_eq!(first.seat, s as i32);
    leave(&mut clients[s], &table).await;
    let left = clients[s].table(&table).await.unwrap();
    assert!(left.seats[s].bot_substitute, "a bot plays the seat left");
    // Another seat than the one left is refused as full too.
    let refused = join(&clients[s], &uuid(), Some(other as i32))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "table_full");
    // The retry of the no-op join is answered as the first time and seats nobody.
    let retried = join(&clients[s], &again, None)
        .await
        .unwrap()
        .into_inner()
        .view
        .unwrap();
    assert_eq!((retried.seat, retried.version), (first.seat, first.version));
    let after = clients[s].table(&table).await.unwrap();
    assert!(after.seats[s].bot_substitute, "the retry changed nothing");
    assert_eq!(after.version, left.version);
    // A new request takes the seat back.
    let back = join(&clients[s], &uuid(), None)
        .await
        .unwrap()
        .into_inner()
        .view
        .unwrap();
    assert_eq!(back.seat, s as i32);
    app.stop().await;
}
