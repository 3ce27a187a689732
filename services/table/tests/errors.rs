//! The error model at the table service's edge, against the real service: text the store cannot
//! hold (a NUL in any string field of any call) and bad request ids are refused before the store
//! (request ids counted in characters), a tile not in the rack is FAILED_PRECONDITION
//! `tile_not_in_rack`, and a request tonic cannot decode is INVALID_ARGUMENT `malformed_request`
//! with ErrorInfo. Nothing refused is stored.

mod common;

use common::*;
use okey_platform::testing::{TestInfra, raw_unary};
use okey_proto::v1 as pb;
use tonic::Code;
use tonic_types::StatusExt;

fn discard(tile: &str) -> pb::Command {
    pb::Command {
        command: Some(pb::command::Command::Discard(pb::DiscardCommand {
            tile: tile.to_owned(),
        })),
    }
}

fn assert_refused(status: &tonic::Status, code: Code, why: &str) {
    assert_eq!(status.code(), code, "{status:?}");
    let details = status.get_error_details();
    let info = details.error_info().expect("ErrorInfo");
    assert_eq!(info.domain, "okey.v1", "{status:?}");
    assert_eq!(info.reason, why, "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_text_and_tiles_not_held_get_the_contracts_codes_and_store_nothing() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let before = stored(&app.settings, &table).await.0.len();
    let view = clients[0].view(&table).await.unwrap();

    // A tile the first player does not hold: the request is well formed, the rack says no.
    let names = ["R", "Y", "B", "K"]
        .iter()
        .flat_map(|c| (1..=13).map(move |n| format!("{c}{n}")))
        .chain(["F".to_owned()]);
    let missing = names
        .into_iter()
        .find(|t| !view.rack.contains(t))
        .expect("22 tiles never cover all 53 kinds");
    let refused = clients[0]
        .submit(&table, &uuid(), discard(&missing))
        .await
        .unwrap_err();
    assert_refused(&refused, Code::FailedPrecondition, "tile_not_in_rack");

    let tile = view.rack[0].clone();
    // A NUL is `invalid_text` in any string field, the request id's too (see the test below).
    for bad in ["id\u{1}".to_owned(), "é".repeat(65), String::new()] {
        let refused = clients[0]
            .submit(&table, &bad, discard(&tile))
            .await
            .unwrap_err();
        assert_refused(&refused, Code::InvalidArgument, "invalid_request_id");
    }
    let say = clients[0].req(pb::SendChatMessageRequest {
        request_id: uuid(),
        table: table.clone(),
        channel: pb::ChatChannel::Table as i32,
        text: "hi\0there".into(),
    });
    let chat = clients[0].api.send_chat_message(say).await.unwrap_err();
    assert_refused(&chat, Code::InvalidArgument, "invalid_text");

    // GetTableRequest.name (field 1, a string) holding bytes that are not UTF-8.
    let undecodable = raw_unary(
        channel,
        "/okey.v1.TableService/GetTable",
        clients[0].req(vec![0x0a, 2, 0xff, 0xfe]),
    )
    .await
    .unwrap_err();
    assert_refused(&undecodable, Code::InvalidArgument, "malformed_request");

    assert_eq!(
        stored(&app.settings, &table).await.0.len(),
        before,
        "nothing refused was stored"
    );

    // 64 characters of two bytes each are a request id.
    let tile = view
        .rack
        .iter()
        .rev()
        .find(|t| **t != view.okey)
        .expect("a rack holds at most two okeys")
        .clone();
    clients[0]
        .submit(&table, &"é".repeat(64), discard(&tile))
        .await
        .expect("64 characters are a request id");
    app.stop().await;
}

/// `invalid_text` naming `field`.
fn assert_nul_refused<T: std::fmt::Debug>(answer: Result<T, tonic::Status>, field: &str) {
    let status = answer.expect_err(field);
    assert_refused(&status, Code::InvalidArgument, "invalid_text");
    let details = status.get_error_details();
    let violations = &details.bad_request().expect("BadRequest").field_violations;
    assert_eq!(violations[0].field, field, "{status:?}");
}

/// common.proto: "No string field may hold a NUL character (INVALID_ARGUMENT `invalid_text`)".
/// A NUL anywhere, nested ones included (command tiles, melds, the rule preset, a seat's player),
/// is `invalid_text` naming the field, before what else the text would be refused for
/// (`invalid_tile`, `invalid_rules`, `invalid_table`, `invalid_page_token`,
/// `invalid_request_id`), and in fields that would otherwise be served (a request id of a command
/// that would be played, the table of a LeaveSeat). Nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nul_in_any_string_field_of_any_call_is_invalid_text_and_changes_nothing() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let admin = Client::new(channel.clone(), &app.settings, "operator", &["admin"]);
    let mut support = Client::new(channel.clone(), &app.settings, "support-1", &["support"]);
    let before = stored(&app.settings, &table).await.0.len();
    let view = clients[0].view(&table).await.unwrap();
    let turn = view.turn_seat as usize;
    let rack = clients[turn].view(&table).await.unwrap().rack;
    let tile = rack[0].clone();
    let nul_table = format!("{table}\0");

    let c = &mut clients[turn];
    let submit = |request_id: &str, table: &str, command: pb::Command| {
        c.req(pb::SubmitCommandRequest {
            request_id: request_id.to_owned(),
            table: table.to_owned(),
            command: Some(command),
            expected_version: Some(view.version),
            view_form: 0,
        })
    };
    let meld = |tiles: &[&str]| pb::MeldTiles {
        tiles: tiles.iter().map(|t| (*t).to_owned()).collect(),
    };
    for (request, field) in [
        (
            submit(&uuid(), &table, discard("R7\0")),
            "command.discard.tile",
        ),
        // The tile held, with a NUL after it: not played.
        (
            submit(&uuid(), &table, discard(&format!("{tile}\0"))),
            "command.discard.tile",
        ),
        // A command that would be played, under a request id holding a NUL.
        (submit("id\0", &table, discard(&tile)), "request_id"),
        (submit(&uuid(), &nul_table, discard(&tile)), "table"),
        (
            submit(
                &uuid(),
                &table,
                pb::Command {
                    command: Some(pb::command::Command::Open(pb::OpenCommand {
                        melds: vec![meld(&["R1", "R2", "R3"]), meld(&["K7", "K8", "K9\0"])],
                    })),
                },
            ),
            "command.open.melds[1].tiles[2]",
        ),
        (
            submit(
                &uuid(),
                &table,
                pb::Command {
                    command: Some(pb::command::Command::Add(pb::AddCommand {
                        meld: 0,
                        tiles: vec!["\0".into()],
                    })),
                },
            ),
            "command.add.tiles[0]",
        ),
    ] {
        let answer = c.api.clone().submit_command(request).await;
        assert_nul_refused(answer, field);
    }
    let leave = c.req(pb::LeaveSeatRequest {
        request_id: "leave\0".into(),
        table: table.clone(),
    });
    assert_nul_refused(c.api.leave_seat(leave).await, "request_id");
    let say = c.req(pb::SendChatMessageRequest {
        request_id: "say\0".into(),
        table: table.clone(),
        channel: pb::ChatChannel::Table as i32,
        text: "hello".into(),
    });
    assert_nul_refused(c.api.send_chat_message(say).await, "request_id");
    let seed = c.req(pb::SubmitClientSeedRequest {
        request_id: uuid(),
        table: table.clone(),
        hand_number: 2,
        seed: format!("{}\0", "ab".repeat(32)),
    });
    assert_nul_refused(c.api.submit_client_seed(seed).await, "seed");
    let join = c.req(pb::JoinSeatRequest {
        request_id: uuid(),
        table: nul_table.clone(),
        seat: None,
    });
    assert_nul_refused(c.api.join_seat(join).await, "table");

    // The reads: a table name or a page token holding a NUL.
    let get = c.req(pb::GetTableRequest { name: "\0".into() });
    assert_nul_refused(c.api.get_table(get).await, "name");
    let seat_view = c.req(pb::GetSeatViewRequest {
        table: nul_table.clone(),
        ..Default::default()
    });
    assert_nul_refused(c.api.get_seat_view(seat_view).await, "table");
    let legal = c.req(pb::ListLegalActionsRequest { table: "\0".into() });
    assert_nul_refused(c.api.list_legal_actions(legal).await, "table");
    let watch = c.req(pb::WatchTableRequest {
        table: nul_table.clone(),
        after_version: 0,
    });
    assert_nul_refused(c.api.watch_table(watch).await, "table");
    let heartbeat = c.req(pb::SendHeartbeatRequest { table: "\0".into() });
    assert_nul_refused(c.api.send_heartbeat(heartbeat).await, "table");
    let chat = c.req(pb::WatchChatRequest {
        table: nul_table.clone(),
    });
    assert_nul_refused(c.api.watch_chat(chat).await, "table");
    for (request, field) in [
        (
            pb::GetHandHistoryRequest {
                table: "\0".into(),
                hand_number: 1,
                ..Default::default()
            },
            "table",
        ),
        (
            pb::GetHandHistoryRequest {
                table: table.clone(),
                hand_number: 1,
                page_size: 0,
                page_token: "a\0".into(),
            },
            "page_token",
        ),
    ] {
        let answer = support.api.get_hand_history(support.req(request)).await;
        assert_nul_refused(answer, field);
    }
    for (request, field) in [
        (
            pb::ListHandReadsRequest {
                table: nul_table.clone(),
                ..Default::default()
            },
            "table",
        ),
        (
            pb::ListHandReadsRequest {
                page_token: "a\0".into(),
                ..Default::default()
            },
            "page_token",
        ),
    ] {
        let answer = support.api.list_hand_reads(support.req(request)).await;
        assert_nul_refused(answer, field);
    }

    // CreateTable: the rule preset, a seat's player, a member.
    let create = |rules: pb::RuleSet, seats: Vec<pb::SeatAssignment>, members: Vec<String>| {
        admin.req(pb::CreateTableRequest {
            request_id: uuid(),
            rules: Some(rules),
            seats,
            members,
            ..Default::default()
        })
    };
    let preset = pb::RuleSet {
        preset: "cla\0ssic".into(),
        ..rules(1)
    };
    let player = |name: &str| pb::SeatAssignment {
        seat: 1,
        occupant: Some(pb::seat_assignment::Occupant::Player(name.to_owned())),
        ..Default::default()
    };
    let someone = format!("players/{}", uuid());
    for (request, field) in [
        (create(preset, vec![], vec![]), "rules.preset"),
        (
            create(rules(1), vec![player(&format!("{someone}\0"))], vec![]),
            "seats[0].player",
        ),
        (
            create(rules(1), vec![], vec![someone.clone(), "\0".into()]),
            "members[1]",
        ),
    ] {
        let answer = admin.api.clone().create_table(request).await;
        assert_nul_refused(answer, field);
    }

    // Nothing changed: the same version, the same stored events, the four still seated, and the
    // command refused for its request id's NUL was not played.
    let after = clients[turn].view(&table).await.unwrap();
    assert_eq!(after.version, view.version, "the table did not move");
    assert_eq!(after.rack, rack, "the rack is as it was");
    assert_eq!(stored(&app.settings, &table).await.0.len(), before);
    let seats = clients[0].table(&table).await.unwrap().seats;
    assert!(
        seats
            .iter()
            .zip(&clients)
            .all(|(seat, c)| seat.player.as_ref().is_some_and(|p| p.player == c.player())),
        "{seats:?}"
    );
    assert!(
        support
            .api
            .list_hand_reads(support.req(pb::ListHandReadsRequest::default()))
            .await
            .unwrap()
            .into_inner()
            .reads
            .iter()
            .all(|r| r.table != table),
        "no history was read"
    );
    app.stop().await;
}

/// What is malformed whatever the game state is refused as such before the table is looked at
/// (an empty opening by a seat not on turn is `no_melds`, not `not_your_turn`; a chat text over
/// the limit is `chat_too_long` however long), and CreateTable names each bad field's own reason.
/// A WatchTable snapshot says when it was taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_get_their_own_reason_whatever_the_state() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let before = stored(&app.settings, &table).await.0.len();
    let turn = clients[0].view(&table).await.unwrap().turn_seat as usize;
    let waiting = (turn + 1) % 4;
    for command in [
        pb::command::Command::Open(pb::OpenCommand { melds: vec![] }),
        pb::command::Command::Lay(pb::LayCommand { melds: vec![] }),
    ] {
        let refused = clients[waiting]
            .submit(
                &table,
                &uuid(),
                pb::Command {
                    command: Some(command),
                },
            )
            .await
            .unwrap_err();
        assert_refused(&refused, Code::InvalidArgument, "no_melds");
    }
    // A command's list of tiles names at least one, whoever sends it and whatever the state
    // (it used to be refused by the rules: `not_opened`, `cannot_add`, …).
    let no_tiles = || pb::MeldTiles { tiles: vec![] };
    for (command, field) in [
        (
            pb::command::Command::Add(pb::AddCommand {
                meld: 0,
                tiles: vec![],
            }),
            "command.add.tiles",
        ),
        (
            pb::command::Command::RetrieveOkey(pb::RetrieveOkeyCommand {
                meld: 0,
                tiles: vec![],
            }),
            "command.retrieve_okey.tiles",
        ),
        (
            pb::command::Command::Open(pb::OpenCommand {
                melds: vec![no_tiles()],
            }),
            "command.open.melds[0].tiles",
        ),
        (
            pb::command::Command::Lay(pb::LayCommand {
                melds: vec![no_tiles()],
            }),
            "command.lay.melds[0].tiles",
        ),
    ] {
        for seat in [turn, waiting] {
            let refused = clients[seat]
                .submit(
                    &table,
                    &uuid(),
                    pb::Command {
                        command: Some(command.clone()),
                    },
                )
                .await
                .unwrap_err();
            assert_refused(&refused, Code::InvalidArgument, "missing_field");
            let violations = refused
                .get_error_details()
                .bad_request()
                .unwrap()
                .field_violations
                .clone();
            assert_eq!(violations[0].field, field);
        }
    }
    let say = clients[0].req(pb::SendChatMessageRequest {
        request_id: uuid(),
        table: table.clone(),
        channel: pb::ChatChannel::Table as i32,
        text: "a".repeat(5_000),
    });
    let chat = clients[0].api.send_chat_message(say).await.unwrap_err();
    assert_refused(&chat, Code::InvalidArgument, "chat_too_long");
    assert_eq!(
        stored(&app.settings, &table).await.0.len(),
        before,
        "nothing refused was stored"
    );

    let mut admin = Client::new(channel.clone(), &app.settings, "operator", &["admin"]);
    let mut matchmaker = Client::new(channel, &app.settings, "matchmaking", &["matchmaker"]);
    let create = |seats: Vec<pb::SeatAssignment>, bots: Option<i32>, members: Vec<String>| {
        pb::CreateTableRequest {
            request_id: uuid(),
            rules: Some(rules(1)),
            seats,
            empty_seat_bots: bots,
            origin: pb::TableOrigin::Unspecified as i32,
            members,
            spectators_allowed: None,
        }
    };
    let seat = |occupant| pb::SeatAssignment {
        seat: 0,
        occupant: Some(occupant),
        ..Default::default()
    };
    use pb::seat_assignment::Occupant;
    let twice = format!("players/{}", uuid());
    for (request, why) in [
        (
            create(vec![seat(Occupant::Player("alice".into()))], None, vec![]),
            "invalid_name",
        ),
        (
            create(vec![seat(Occupant::Player(String::new()))], None, vec![]),
            "missing_field",
        ),
        (
            create(vec![seat(Occupant::Bot(99))], None, vec![]),
            "invalid_bot_level",
        ),
        (create(vec![], Some(-1), vec![]), "invalid_bot_level"),
        (
            create(vec![], None, vec!["players/a\0b".into()]),
            "invalid_text",
        ),
        // One person in two seats; one seat given twice.
        (
            create(
                vec![
                    seat(Occupant::Player(twice.clone())),
                    pb::SeatAssignment {
                        seat: 2,
                        occupant: Some(Occupant::Player(twice.clone())),
                        ..Default::default()
                    },
                ],
                None,
                vec![],
            ),
            "invalid_seat",
        ),
        (
            create(
                vec![
                    seat(Occupant::Bot(pb::BotLevel::Easy as i32)),
                    seat(Occupant::Player(twice.clone())),
                ],
                None,
                vec![],
            ),
            "invalid_seat",
        ),
        // Rules out of bounds.
        (
            pb::CreateTableRequest {
                rules: Some(pb::RuleSet {
                    turn_seconds: 3601,
                    ..rules(1)
                }),
                ..create(vec![], None, vec![])
            },
            "invalid_rules",
        ),
        (
            pb::CreateTableRequest {
                rules: Some(pb::RuleSet {
                    match_length: Some(pb::MatchLength {
                        length: Some(pb::match_length::Length::Hands(1001)),
                    }),
                    ..rules(1)
                }),
                ..create(vec![], None, vec![])
            },
            "invalid_rules",
        ),
    ]
    .into_iter()
    .chain(
        // A person is `players/{uuid}`: nothing else sits or joins.
        [
            "players/",
            "players/foo",
            "players/me",
            "players/-",
            "players/a/b",
        ]
        .into_iter()
        .flat_map(|name| {
            [
                (
                    create(vec![seat(Occupant::Player(name.into()))], None, vec![]),
                    "invalid_name",
                ),
                (create(vec![], None, vec![name.into()]), "invalid_name"),
            ]
        }),
    ) {
        let refused = admin
            .api
            .create_table(admin.req(request.clone()))
            .await
            .unwrap_err();
        assert_refused(&refused, Code::InvalidArgument, why);
    }
    let mut unknown_origin = create(vec![], None, vec![]);
    unknown_origin.origin = 99;
    let refused = matchmaker
        .api
        .create_table(matchmaker.req(unknown_origin))
        .await
        .unwrap_err();
    assert_refused(&refused, Code::InvalidArgument, "invalid_origin");

    // An empty table name is a missing field, as in every service.
    let unnamed = clients[0].req(pb::GetTableRequest {
        name: String::new(),
    });
    let refused = clients[0].api.get_table(unnamed).await.unwrap_err();
    assert_refused(&refused, Code::InvalidArgument, "missing_field");
    // A chat channel left out is missing; one this server does not know is invalid.
    for (channel, why) in [(0, "missing_field"), (7, "invalid_channel")] {
        let send = clients[0].req(pb::SendChatMessageRequest {
            request_id: uuid(),
            table: table.clone(),
            channel,
            text: "hello".into(),
        });
        let refused = clients[0].api.send_chat_message(send).await.unwrap_err();
        assert_refused(&refused, Code::InvalidArgument, why);
    }

    let watch = clients[0].req(pb::WatchTableRequest {
        table: table.clone(),
        after_version: 0,
    });
    let mut stream = clients[0]
        .api
        .watch_table(watch)
        .await
        .unwrap()
        .into_inner();
    let first = stream.message().await.unwrap().unwrap().update.unwrap();
    assert!(
        matches!(first.kind, Some(pb::table_update::Kind::Snapshot(_))),
        "{first:?}"
    );
    assert!(first.time.is_some(), "a snapshot says when it was taken");
    app.stop().await;
}
