//! Commands against the real service: a retried request id is applied once, racing commands
//! leave one winner and a precise error with a gap-free log, bad input is refused with the rule
//! named and nothing stored, and the update stream resumes from a version.

mod common;

use std::time::Duration;

use common::*;
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use tonic::Code;
use tonic_types::StatusExt;

fn draw() -> pb::Command {
    pb::Command {
        command: Some(pb::command::Command::Draw(pb::DrawCommand {})),
    }
}

fn discard(tile: &str) -> pb::Command {
    pb::Command {
        command: Some(pb::command::Command::Discard(pb::DiscardCommand {
            tile: tile.to_owned(),
        })),
    }
}

fn open(melds: &[&[&str]]) -> pb::Command {
    pb::Command {
        command: Some(pb::command::Command::Open(pb::OpenCommand {
            melds: melds
                .iter()
                .map(|m| pb::MeldTiles {
                    tiles: m.iter().map(|t| (*t).to_owned()).collect(),
                })
                .collect(),
        })),
    }
}

async fn next(s: &mut tonic::Streaming<pb::WatchTableResponse>) -> pb::TableUpdate {
    tokio::time::timeout(Duration::from_secs(10), s.message())
        .await
        .expect("an update in time")
        .unwrap()
        .unwrap()
        .update
        .unwrap()
}

/// Three rack tiles (no okey, no false joker) that are neither a run nor a set.
fn malformed_meld(view: &pb::SeatView) -> Vec<String> {
    let engine = engine_view(view);
    let tiles: Vec<_> = engine
        .rack
        .iter()
        .filter(|t| !t.is_false_joker() && !engine.okey.is_okey(**t))
        .filter_map(|t| t.printed().map(|f| (t.to_string(), f)))
        .collect();
    for a in &tiles {
        for b in &tiles {
            for c in &tiles {
                let n = [a.1.number(), b.1.number(), c.1.number()];
                if n[0] != n[1] && n[1] != n[2] && n[0] != n[2] && a.1.color != b.1.color {
                    return vec![a.0.clone(), b.0.clone(), c.0.clone()];
                }
            }
        }
    }
    panic!("a dealt rack always holds such tiles")
}

fn reason(status: &tonic::Status) -> String {
    status
        .get_error_details()
        .error_info()
        .expect("ErrorInfo")
        .reason
        .clone()
}

/// The last tile of the rack that is not an okey: discarding an okey costs a penalty (a second
/// event), and a dealt rack's last tile is one in a few percent of deals, so a test that counts
/// versions would fail on those.
fn plain_tile(view: &pb::SeatView) -> String {
    let engine = engine_view(view);
    let okey = engine.okey;
    engine
        .rack
        .iter()
        .rev()
        .find(|t| !okey.is_okey(**t))
        .expect("a rack holds at most two okeys")
        .to_string()
}

/// Seat 0 (first player) discards a tile that is not an okey (one event, no penalty), so seat 1
/// is to take a tile.
async fn first_discard(table: &str, clients: &mut [Client]) -> pb::SubmitCommandResponse {
    let view = clients[0].view(table).await.unwrap();
    let tile = plain_tile(&view);
    clients[0]
        .submit(table, &uuid(), discard(&tile))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_request_is_applied_once_and_racing_commands_leave_one_winner() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel, &app.settings, 1).await;
    first_discard(&table, &mut clients).await;

    // The same request id twice: the first answer again, nothing applied twice.
    let rid = uuid();
    let first = clients[1].submit(&table, &rid, draw()).await.unwrap();
    let again = clients[1].submit(&table, &rid, draw()).await.unwrap();
    assert_eq!(first, again);
    let (events, _) = stored(&app.settings, &table).await;
    assert_eq!(events.len() as i64, first.version);

    // Seat 1 discards, then seat 2 sends two different draws at once: one wins, the other is
    // told precisely why.
    let tile = first.view.as_ref().unwrap().rack[0].clone();
    clients[1]
        .submit(&table, &uuid(), discard(&tile))
        .await
        .unwrap();
    // Once the table has moved on, a retry still gets the first answer (rebuilt from the
    // store at the versions it appended), and still changes nothing.
    let (before, _) = stored(&app.settings, &table).await;
    let later = clients[1].submit(&table, &rid, draw()).await.unwrap();
    assert_eq!(first, later);
    let (after, _) = stored(&app.settings, &table).await;
    assert_eq!(after.len(), before.len());
    let (mut a, mut b) = (clients[2].clone(), clients[2].clone());
    let t = table.clone();
    let (ra, rb) = tokio::join!(async { a.submit(&t, &uuid(), draw()).await }, async {
        b.submit(&table, &uuid(), draw()).await
    });
    let (ok, err) = match (ra, rb) {
        (Ok(ok), Err(err)) | (Err(err), Ok(ok)) => (ok, err),
        other => panic!("exactly one draw must win: {other:?}"),
    };
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(reason(&err), "already_took");

    // Two commands stating the same expected version: the loser gets ABORTED version_conflict.
    let version = ok.version;
    let rack = ok.view.unwrap().rack;
    let with_version = |tile: &str| pb::SubmitCommandRequest {
        request_id: uuid(),
        table: table.clone(),
        command: Some(discard(tile)),
        expected_version: Some(version),
        ..Default::default()
    };
    let (r1, r2) = (with_version(&rack[0]), with_version(&rack[1]));
    let (c1, c2) = (clients[2].clone(), clients[2].clone());
    let (x, y) = tokio::join!(
        async move {
            let mut c = c1.clone();
            c.api.submit_command(c1.req(r1)).await
        },
        async move {
            let mut c = c2.clone();
            c.api.submit_command(c2.req(r2)).await
        }
    );
    let (winner, loser) = match (x, y) {
        (Ok(w), Err(e)) | (Err(e), Ok(w)) => (w.into_inner(), e),
        other => panic!("exactly one discard must win: {other:?}"),
    };
    assert_eq!(loser.code(), Code::Aborted);
    assert_eq!(reason(&loser), "version_conflict");

    let (events, _) = stored(&app.settings, &table).await;
    assert_gap_free(&events);
    // The winner's events only (a discard may bring a penalty with it, e.g. for an okey).
    assert!(winner.version > version);
    assert_eq!(
        events.len() as i64,
        winner.version,
        "one discard after version {version}: {:?}",
        events
            .iter()
            .map(|e| (e.version, &e.metadata.actor, &e.event))
            .collect::<Vec<_>>()
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_with_the_rule_named_and_nothing_stored() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let before = stored(&app.settings, &table).await.0.len();
    let malformed = malformed_meld(&clients[0].view(&table).await.unwrap());
    let malformed: Vec<&str> = malformed.iter().map(String::as_str).collect();

    let cases: Vec<(usize, pb::Command, Code, &str)> = vec![
        (0, discard("Q99"), Code::InvalidArgument, "invalid_tile"),
        (0, discard(""), Code::InvalidArgument, "missing_field"),
        (1, draw(), Code::FailedPrecondition, "not_your_turn"),
        (0, draw(), Code::FailedPrecondition, "first_turn_no_take"),
        (
            0,
            open(&[&malformed]),
            Code::FailedPrecondition,
            "invalid_meld",
        ),
        (
            0,
            open(&[&["R1"; 2000]]),
            Code::InvalidArgument,
            "request_too_large",
        ),
        (
            0,
            pb::Command { command: None },
            Code::InvalidArgument,
            "missing_field",
        ),
    ];
    for (seat, command, code, why) in cases {
        let err = clients[seat]
            .submit(&table, &uuid(), command.clone())
            .await
            .expect_err("refused");
        assert_eq!(err.code(), code, "{command:?}: {err:?}");
        assert_eq!(reason(&err), why, "{command:?}");
    }

    // A stranger may not play; an unknown seat or table name is malformed.
    let mut stranger = Client::new(channel.clone(), &app.settings, "stranger", &["player"]);
    let err = stranger.submit(&table, &uuid(), draw()).await.unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    assert_eq!(reason(&err), "not_seated");
    let err = stranger
        .api
        .join_seat(stranger.req(pb::JoinSeatRequest {
            request_id: uuid(),
            table: table.clone(),
            seat: Some(7),
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(reason(&err), "invalid_seat");
    let err = stranger
        .submit("tables/nope", &uuid(), draw())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    // A player may not create tables.
    let err = stranger
        .api
        .create_table(stranger.req(pb::CreateTableRequest {
            request_id: uuid(),
            rules: Some(rules(1)),
            seats: vec![],
            empty_seat_bots: None,
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);

    assert_eq!(stored(&app.settings, &table).await.0.len(), before);
    app.stop().await;
}

/// A preset takes only the match lengths its seed offers: another is INVALID_ARGUMENT naming
/// `rules.match_length`, and creates nothing (a retry with an allowed length creates the table).
#[tokio::test]
async fn a_match_length_the_presets_seed_does_not_offer_is_refused_by_name() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let mut admin = Client::new(
        connect(app.port).await,
        &app.settings,
        "operator",
        &["admin"],
    );
    let request_id = uuid();
    let create = |preset: &str, hands: i32| pb::CreateTableRequest {
        request_id: request_id.clone(),
        rules: Some(pb::RuleSet {
            preset: preset.into(),
            ..rules(hands)
        }),
        seats: vec![],
        empty_seat_bots: None,
        ..Default::default()
    };
    for (preset, hands) in [("yudum", 3), ("solo", 7), ("practice", 9)] {
        let err = admin
            .api
            .create_table(admin.req(create(preset, hands)))
            .await
            .expect_err("a length the seed does not offer");
        assert_eq!(err.code(), Code::InvalidArgument, "{preset}: {err:?}");
        assert_eq!(reason(&err), "invalid_rules");
        let details = err.get_error_details();
        assert_eq!(
            details.bad_request().unwrap().field_violations[0].field,
            "rules.match_length"
        );
        assert!(err.message().contains(preset), "{}", err.message());
    }
    // Nothing was stored under that request id: the same id with a length seed 003 offers works.
    let created = admin
        .api
        .create_table(admin.req(create("solo", 9)))
        .await
        .expect("nine rounds are one of seed 003's lengths")
        .into_inner();
    let table = created.table.expect("a table");
    assert_eq!(stored(&app.settings, &table.name).await.0.len(), 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_update_stream_replays_then_follows_and_resumes_from_a_version() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel, &app.settings, 1).await;

    let watcher = clients[1].clone();
    let mut api = watcher.api.clone();
    let mut stream = api
        .watch_table(watcher.req(pb::WatchTableRequest {
            table: table.clone(),
            after_version: 0,
        }))
        .await
        .unwrap()
        .into_inner();
    let snapshot = next(&mut stream).await;
    let Some(pb::table_update::Kind::Snapshot(view)) = snapshot.kind else {
        panic!("a snapshot first")
    };
    assert_eq!(view.rack.len(), 21);
    let start = snapshot.version;

    // Live: seat 0's discard and seat 1's draw, with seat 1's own tile.
    first_discard(&table, &mut clients).await;
    let u = next(&mut stream).await;
    assert_eq!(u.version, start + 1);
    let drawn = clients[1].submit(&table, &uuid(), draw()).await.unwrap();
    let u = next(&mut stream).await;
    assert_eq!(u.version, start + 2);
    let Some(pb::table_update::Kind::Event(pb::TableEvent {
        event: Some(pb::table_event::Event::TileDrawn(d)),
    })) = u.kind
    else {
        panic!("a draw")
    };
    assert!(!d.tile.is_empty(), "seat 1 sees its own draw");
    drop(stream);

    // Seat 2 resumes from the version before the draw: exactly the draw, tile hidden.
    let other = clients[2].clone();
    let mut api = other.api.clone();
    let mut stream = api
        .watch_table(other.req(pb::WatchTableRequest {
            table: table.clone(),
            after_version: start + 1,
        }))
        .await
        .unwrap()
        .into_inner();
    let u = next(&mut stream).await;
    assert_eq!(u.version, drawn.version);
    let Some(pb::table_update::Kind::Event(pb::TableEvent {
        event: Some(pb::table_event::Event::TileDrawn(d)),
    })) = u.kind
    else {
        panic!("a draw")
    };
    assert!(d.tile.is_empty(), "seat 2 never sees seat 1's tile");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_comes_in_the_form_asked_for() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel, &app.settings, 1).await;
    let c = &mut clients[0];

    let both = c.view(&table).await.unwrap();
    assert!(!both.rack.is_empty() && !both.engine_view.is_empty());
    let typed = c.view_as(&table, pb::SeatViewForm::Typed).await.unwrap();
    assert!(typed.engine_view.is_empty());
    assert_eq!(
        (
            typed.rack.clone(),
            typed.discards.len(),
            typed.indicator.clone()
        ),
        (
            both.rack.clone(),
            both.discards.len(),
            both.indicator.clone()
        )
    );
    let engine = c.view_as(&table, pb::SeatViewForm::Engine).await.unwrap();
    assert_eq!(engine.engine_view, both.engine_view);
    assert!(engine.rack.is_empty() && engine.discards.is_empty() && engine.indicator.is_empty());
    assert_eq!(
        (engine.version, engine.seat, engine.turn_seat, engine.phase),
        (both.version, both.seat, both.turn_seat, both.phase)
    );
    assert!(both.turn_deadline.is_some());
    assert_eq!(engine.turn_deadline, both.turn_deadline);
    assert!(engine.summary.is_some());
    let rack: Vec<String> = engine_view(&engine)
        .rack
        .iter()
        .map(|t| t.to_string())
        .collect();
    assert_eq!(rack, both.rack, "the engine form holds the same rack");

    // A form this server does not know is refused, and the command is not played.
    let unknown = c
        .api
        .get_seat_view(c.req(pb::GetSeatViewRequest {
            table: table.clone(),
            view_form: 9,
            min_version: None,
        }))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::InvalidArgument);
    assert_eq!(reason(&unknown), "invalid_view_form");
    let tile = both.rack.last().unwrap().clone();
    let refused = c
        .api
        .submit_command(c.req(pb::SubmitCommandRequest {
            request_id: uuid(),
            table: table.clone(),
            command: Some(discard(&tile)),
            view_form: 9,
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "invalid_view_form");
    assert_eq!(c.view(&table).await.unwrap().version, both.version);

    // A command answers in the form it asks for.
    let played = c
        .submit_as(&table, &uuid(), discard(&tile), pb::SeatViewForm::Engine)
        .await
        .unwrap();
    let view = played.view.unwrap();
    assert!(view.rack.is_empty());
    assert_eq!(engine_view(&view).rack.len(), rack.len() - 1);
    assert_eq!(view.version, played.version);
    assert!(played.version > both.version);

    // NONE: the answer carries the version and the events, no view; a retry of it is answered
    // the same, and a retry asking for a view gets one, with nothing played twice.
    let c = &mut clients[1];
    let before = c.view_as(&table, pb::SeatViewForm::Typed).await.unwrap();
    let id = uuid();
    let drawn = c
        .submit_as(&table, &id, draw(), pb::SeatViewForm::None)
        .await
        .unwrap();
    assert!(drawn.view.is_none());
    assert_eq!(drawn.version, played.version + 1);
    assert!(
        !drawn.events.is_empty(),
        "the draw is in the answer's events"
    );
    let again = c
        .submit_as(&table, &id, draw(), pb::SeatViewForm::None)
        .await
        .unwrap();
    assert_eq!((again.version, again.view), (drawn.version, None));
    let with_view = c
        .submit_as(&table, &id, draw(), pb::SeatViewForm::Typed)
        .await
        .unwrap();
    let view = with_view.view.expect("a retry asking for a view gets one");
    assert_eq!(
        (with_view.version, view.version),
        (drawn.version, drawn.version)
    );
    assert_eq!(
        view.rack.len(),
        before.rack.len() + 1,
        "one tile drawn, once"
    );
    // GetSeatView is for the view: NONE is refused.
    let none = c
        .api
        .get_seat_view(c.req(pb::GetSeatViewRequest {
            table: table.clone(),
            view_form: pb::SeatViewForm::None as i32,
            min_version: None,
        }))
        .await
        .unwrap_err();
    assert_eq!(none.code(), Code::InvalidArgument);
    assert_eq!(reason(&none), "invalid_view_form");
}

/// `min_version` lets a server answer a view from memory. Two servers share the store but not
/// NATS (their subject prefixes differ), so B never hears of moves made through A. Asked for at
/// least the version it holds, B answers what it holds, without the move just made through A;
/// asked for A's version, or without `min_version`, it reads the store first and shows the move.
/// A version the table has not reached is OUT_OF_RANGE and a negative one INVALID_ARGUMENT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_at_a_version_held_in_memory_is_answered_without_the_store() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let a = spawn_app(settings(&infra)).await;
    let mut b_settings = a.settings.clone();
    b_settings.nats.subject_prefix = format!("{}-b", a.settings.nats.subject_prefix);
    let b = spawn_app(b_settings).await;
    let (table, mut on_a) = seated_table(connect(a.port).await, &a.settings, 1).await;
    let channel_b = connect(b.port).await;
    let mut on_b: Vec<Client> = on_a
        .iter()
        .map(|c| Client {
            api: pb::table_service_client::TableServiceClient::new(channel_b.clone()),
            ..c.clone()
        })
        .collect();
    let form = pb::SeatViewForm::Typed;
    let dealt = on_b[1].view_at_least(&table, form, None).await.unwrap();

    // Seat 0 discards through A; B holds the table as dealt.
    let discarded = first_discard(&table, &mut on_a).await.version;
    assert_eq!(discarded, dealt.version + 1);
    let held = on_b[1]
        .view_at_least(&table, form, Some(dealt.version))
        .await
        .unwrap();
    assert_eq!(
        (held.version, held.turn_seat),
        (dealt.version, 0),
        "B answers from memory"
    );
    let caught_up = on_b[1]
        .view_at_least(&table, form, Some(discarded))
        .await
        .unwrap();
    assert_eq!((caught_up.version, caught_up.turn_seat), (discarded, 1));

    // Seat 1 draws through A; a view without `min_version` reads the store.
    let drew = on_a[1]
        .submit(&table, &uuid(), draw())
        .await
        .unwrap()
        .version;
    let latest = on_b[1].view_at_least(&table, form, None).await.unwrap();
    assert_eq!(latest.version, drew);
    assert_eq!(
        latest.rack.len(),
        dealt.rack.len() + 1,
        "the drawn tile is in seat 1's rack"
    );

    // A version the table has not reached, and a negative one: refused, nothing stored.
    let ahead = on_b[1]
        .view_at_least(&table, form, Some(drew + 1))
        .await
        .unwrap_err();
    assert_eq!(ahead.code(), Code::OutOfRange);
    assert_eq!(reason(&ahead), "version_ahead");
    assert!(ahead.message().contains(&drew.to_string()), "{ahead:?}");
    let negative = on_b[1]
        .view_at_least(&table, form, Some(-1))
        .await
        .unwrap_err();
    assert_eq!(negative.code(), Code::InvalidArgument);
    assert_eq!(reason(&negative), "invalid_version");
    let (events, _) = stored(&a.settings, &table).await;
    assert_eq!(events.len() as i64, drew);
    b.stop().await;
    a.stop().await;
}

/// A seat's running total counts the in-play penalties of the hand being played as they are
/// charged, in every answer that shows it (SubmitCommand's view, GetTable), not only from the
/// hand's end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_penalty_counts_in_the_running_total_as_it_is_charged() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    // A command that costs seat 0 a penalty (a wrong opening, an okey discarded): nearly every
    // deal offers one, so a few tables are enough.
    let mut found = None;
    for _ in 0..20 {
        let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
        let c = &mut clients[0];
        let actions = c.legal_actions(&table).await.unwrap();
        if let Some(a) = actions.into_iter().find(|a| a.penalty_points > 0) {
            found = Some((table, clients, a));
            break;
        }
    }
    let (table, mut clients, action) = found.expect("a deal with a command that costs a penalty");
    let c = &mut clients[0];
    let played = c
        .submit(&table, &uuid(), action.command.clone().unwrap())
        .await
        .unwrap();
    let charged: i32 = played.penalties.iter().map(|p| p.points).sum();
    assert_eq!(charged, action.penalty_points, "{}", action.hint);
    assert!(
        action
            .hint
            .ends_with(&format!("(costs you {charged} points)")),
        "the hint says what it costs: {}",
        action.hint
    );
    let totals = |t: &pb::Table| t.seats.iter().map(|s| s.total).collect::<Vec<_>>();
    let in_answer = played.view.unwrap().summary.unwrap();
    assert_eq!(totals(&in_answer), vec![charged, 0, 0, 0]);
    let read = c.table(&table).await.unwrap();
    assert_eq!(totals(&read), vec![charged, 0, 0, 0]);
}
