//! The error model at the table service's edge, against the real service: text the store cannot
//! hold and bad request ids are refused before the store (request ids counted in characters), a
//! tile not in the rack is FAILED_PRECONDITION `tile_not_in_rack`, and a request tonic cannot
//! decode is INVALID_ARGUMENT `malformed_request` with ErrorInfo. Nothing refused is stored.

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
    for bad in ["id\0".to_owned(), "é".repeat(65), String::new()] {
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
    };
    use pb::seat_assignment::Occupant;
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
