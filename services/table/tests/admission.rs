//! Who may create a table and who may sit at or watch it: the matchmaking service's identity
//! (role `matchmaker`) creates quick-play and private-room tables with the players seated, never
//! an operator's; a private room's table admits only its members to seats and, unless the host
//! allowed spectators, to reading it; every table says where it came from in its first event.

mod common;

use common::*;
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use tonic::Code;
use tonic_types::StatusExt;

fn reason(status: &tonic::Status) -> String {
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn the_matchmaker_seats_members_only_and_spectators_only_if_allowed() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let mut matchmaker = Client::new(
        channel.clone(),
        &app.settings,
        "matchmaking",
        &["matchmaker"],
    );
    let member = |n: &str| Client::new(channel.clone(), &app.settings, n, &["player"]);
    let (mut host, mut friend, mut stranger) = (member(&uuid()), member(&uuid()), member(&uuid()));
    let create = |origin: pb::TableOrigin,
                  spectators: Option<bool>,
                  seats: Vec<pb::SeatAssignment>,
                  members: Vec<String>| {
        pb::CreateTableRequest {
            request_id: uuid(),
            rules: Some(rules(1)),
            seats,
            empty_seat_bots: None,
            origin: origin as i32,
            members,
            spectators_allowed: spectators,
        }
    };
    let sit = |seat: i32, player: String| pb::SeatAssignment {
        seat,
        occupant: Some(pb::seat_assignment::Occupant::Player(player)),
        ..Default::default()
    };

    // A matchmaker may not make an operator's table, nor leave the origin out.
    for origin in [pb::TableOrigin::Operator, pb::TableOrigin::Unspecified] {
        let err = matchmaker
            .api
            .create_table(matchmaker.req(create(origin, None, vec![], vec![])))
            .await
            .unwrap_err();
        let expected = if origin == pb::TableOrigin::Operator {
            Code::PermissionDenied
        } else {
            Code::InvalidArgument
        };
        assert_eq!(err.code(), expected, "{origin:?}");
    }
    // Seating someone who is not a member is refused.
    let members = vec![host.player(), friend.player()];
    let err = matchmaker
        .api
        .create_table(matchmaker.req(create(
            pb::TableOrigin::PrivateRoom,
            Some(false),
            vec![sit(0, stranger.player())],
            members.clone(),
        )))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(reason(&err), "invalid_rules");
    let details = err.get_error_details();
    assert_eq!(
        details.bad_request().expect("BadRequest").field_violations[0].field,
        "seats[0].player",
        "the refusal names the seat, not the rules"
    );

    // A private room's table: the host seated, the friend's seat left to join, no spectators.
    let table = matchmaker
        .api
        .create_table(matchmaker.req(create(
            pb::TableOrigin::PrivateRoom,
            Some(false),
            vec![sit(0, host.player())],
            members.clone(),
        )))
        .await
        .expect("the matchmaker creates tables")
        .into_inner()
        .table
        .unwrap();
    assert_eq!(table.origin, pb::TableOrigin::PrivateRoom as i32);
    assert_eq!(table.members, members);
    assert!(!table.spectators_allowed);
    let name = table.name.clone();

    let err = stranger
        .api
        .join_seat(stranger.req(pb::JoinSeatRequest {
            request_id: uuid(),
            table: name.clone(),
            seat: Some(2),
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    assert_eq!(reason(&err), "not_table_member");
    for err in [
        stranger
            .api
            .get_table(stranger.req(pb::GetTableRequest { name: name.clone() }))
            .await
            .unwrap_err(),
        stranger
            .api
            .watch_table(stranger.req(pb::WatchTableRequest {
                table: name.clone(),
                after_version: 0,
            }))
            .await
            .map(|_| ())
            .unwrap_err(),
    ] {
        assert_eq!(err.code(), Code::PermissionDenied);
        assert_eq!(reason(&err), "not_table_member");
    }
    // Support staff read any table, as a spectator (public events only).
    let mut support = Client::new(channel.clone(), &app.settings, "support-9", &["support"]);
    support
        .api
        .get_table(support.req(pb::GetTableRequest { name: name.clone() }))
        .await
        .expect("support reads a private table without spectators");
    let mut watched = support
        .api
        .watch_table(support.req(pb::WatchTableRequest {
            table: name.clone(),
            after_version: 0,
        }))
        .await
        .expect("support watches a private table without spectators")
        .into_inner();
    let first = watched.message().await.unwrap().unwrap();
    match first.update.and_then(|u| u.kind) {
        Some(pb::table_update::Kind::Snapshot(view)) => {
            assert_eq!(view.seat, -1, "support watches as a spectator");
            assert!(view.rack.is_empty(), "a spectator sees no rack");
        }
        other => panic!("first message {other:?}"),
    }
    drop(watched);
    // Support watches; it does not play: sitting (or chatting) needs the `player` role.
    for refused in [
        support
            .api
            .join_seat(support.req(pb::JoinSeatRequest {
                request_id: uuid(),
                table: name.clone(),
                seat: None,
            }))
            .await
            .map(|_| ())
            .unwrap_err(),
        support
            .api
            .send_chat_message(support.req(pb::SendChatMessageRequest {
                request_id: uuid(),
                table: name.clone(),
                channel: pb::ChatChannel::Table as i32,
                text: "hello".into(),
            }))
            .await
            .map(|_| ())
            .unwrap_err(),
    ] {
        assert_eq!(refused.code(), Code::PermissionDenied);
        assert_eq!(reason(&refused), "role_required");
    }
    // A member not seated yet may read it and sit.
    friend
        .api
        .get_table(friend.req(pb::GetTableRequest { name: name.clone() }))
        .await
        .expect("a member reads the table");
    friend.join(&name, 2).await;

    // The first event says where the table came from.
    let mut stream = host
        .api
        .watch_table(host.req(pb::WatchTableRequest {
            table: name.clone(),
            after_version: 0,
        }))
        .await
        .unwrap()
        .into_inner();
    let _snapshot = stream.message().await.unwrap();
    drop(stream);
    let (events, _) = stored(&app.settings, &name).await;
    match &events[0].event {
        table::domain::TableEvent::TableCreated { admission, .. } => {
            assert_eq!(admission.origin, table::domain::Origin::PrivateRoom);
            assert_eq!(admission.members, members);
            assert!(!admission.spectators);
        }
        other => panic!("first event {other:?}"),
    }

    // A quick-play table admits spectators by default; an admin's table is an operator's.
    let quick = matchmaker
        .api
        .create_table(matchmaker.req(create(pb::TableOrigin::QuickPlay, None, vec![], vec![])))
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(quick.origin, pb::TableOrigin::QuickPlay as i32);
    stranger
        .api
        .get_table(stranger.req(pb::GetTableRequest { name: quick.name }))
        .await
        .expect("anyone may watch a quick-play table");
    let mut admin = Client::new(channel.clone(), &app.settings, "admin", &["admin"]);
    let operator = admin.create(rules(1)).await;
    let got = admin.table(&operator).await.unwrap();
    assert_eq!(got.origin, pb::TableOrigin::Operator as i32);
    app.stop().await;
}

#[tokio::test]
async fn a_service_token_creates_tables_but_never_sits_plays_chats_or_watches() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let mut matchmaker = Client::new(
        channel.clone(),
        &app.settings,
        "matchmaking",
        &["matchmaker"],
    );
    let mut player = Client::new(channel.clone(), &app.settings, &uuid(), &["player"]);
    // A quick-play table with every seat free: the matchmaker made it, and could sit at it if
    // the table admitted a service token as a player.
    let table = matchmaker
        .api
        .create_table(matchmaker.req(pb::CreateTableRequest {
            request_id: uuid(),
            rules: Some(rules(1)),
            origin: pb::TableOrigin::QuickPlay as i32,
            ..Default::default()
        }))
        .await
        .expect("the matchmaker creates tables")
        .into_inner()
        .table
        .unwrap()
        .name;

    let refused = |what: &str, result: Result<(), tonic::Status>| {
        let err = result.expect_err(what);
        assert_eq!(err.code(), Code::PermissionDenied, "{what}: {err:?}");
        assert_eq!(reason(&err), "role_required", "{what}: {err:?}");
    };
    let api = &mut matchmaker.api.clone();
    let m = &matchmaker;
    let t = || table.clone();
    refused(
        "JoinSeat",
        api.join_seat(m.req(pb::JoinSeatRequest {
            request_id: uuid(),
            table: t(),
            seat: Some(0),
        }))
        .await
        .map(drop),
    );
    refused(
        "LeaveSeat",
        api.leave_seat(m.req(pb::LeaveSeatRequest {
            request_id: uuid(),
            table: t(),
        }))
        .await
        .map(drop),
    );
    refused(
        "GetTable",
        api.get_table(m.req(pb::GetTableRequest { name: t() }))
            .await
            .map(drop),
    );
    refused(
        "GetSeatView",
        api.get_seat_view(m.req(pb::GetSeatViewRequest {
            table: t(),
            ..Default::default()
        }))
        .await
        .map(drop),
    );
    refused(
        "SubmitCommand",
        api.submit_command(m.req(pb::SubmitCommandRequest {
            request_id: uuid(),
            table: t(),
            ..Default::default()
        }))
        .await
        .map(drop),
    );
    refused(
        "ListLegalActions",
        api.list_legal_actions(m.req(pb::ListLegalActionsRequest { table: t() }))
            .await
            .map(drop),
    );
    refused(
        "WatchTable",
        api.watch_table(m.req(pb::WatchTableRequest {
            table: t(),
            after_version: 0,
        }))
        .await
        .map(drop),
    );
    refused(
        "SendHeartbeat",
        api.send_heartbeat(m.req(pb::SendHeartbeatRequest { table: t() }))
            .await
            .map(drop),
    );
    refused(
        "SendChatMessage",
        api.send_chat_message(m.req(pb::SendChatMessageRequest {
            request_id: uuid(),
            table: t(),
            channel: pb::ChatChannel::Table as i32,
            text: "hello".into(),
        }))
        .await
        .map(drop),
    );
    refused(
        "WatchChat",
        api.watch_chat(m.req(pb::WatchChatRequest { table: t() }))
            .await
            .map(drop),
    );

    // Nothing was taken: a player sits in seat 0, and the other seats are still free.
    player
        .api
        .join_seat(player.req(pb::JoinSeatRequest {
            request_id: uuid(),
            table: t(),
            seat: Some(0),
        }))
        .await
        .expect("seat 0 is still free");
    let got = player.table(&t()).await.unwrap();
    let seated: Vec<String> = got
        .seats
        .iter()
        .filter_map(|s| s.player.as_ref().map(|p| p.player.clone()))
        .filter(|p| !p.is_empty())
        .collect();
    assert_eq!(seated, vec![player.player()], "only the player sits");
    app.stop().await;
}

/// The creator may name the players it seats (quick play and rooms pass the names their tokens
/// carried): the seats show the names from the start, before anyone has moved; a name that does
/// not fit is refused.
#[tokio::test]
async fn players_seated_with_their_names_are_named_from_the_start() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let mut matchmaker = Client::new(
        channel.clone(),
        &app.settings,
        "matchmaking",
        &["matchmaker"],
    );
    let (ayse, mehmet) = (uuid(), uuid());
    let sit = |seat: i32, player: &str, name: &str| pb::SeatAssignment {
        seat,
        occupant: Some(pb::seat_assignment::Occupant::Player(format!(
            "players/{player}"
        ))),
        display_name: name.to_owned(),
    };
    let create = |seats: Vec<pb::SeatAssignment>| pb::CreateTableRequest {
        request_id: uuid(),
        rules: Some(rules(1)),
        seats,
        empty_seat_bots: Some(pb::BotLevel::Easy as i32),
        origin: pb::TableOrigin::QuickPlay as i32,
        ..Default::default()
    };

    for bad in [
        "x".repeat(25),
        "Ay\u{1b}şe".to_owned(),
        "\u{202E}esyA".to_owned(),
    ] {
        let err = matchmaker
            .api
            .create_table(matchmaker.req(create(vec![sit(0, &ayse, &bad)])))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{bad:?}");
        assert_eq!(reason(&err), "invalid_display_name");
    }

    let table = matchmaker
        .api
        .create_table(matchmaker.req(create(vec![sit(0, &ayse, " Ayşe "), sit(1, &mehmet, "")])))
        .await
        .expect("created")
        .into_inner()
        .table
        .unwrap();
    let mut player = Client::new(channel.clone(), &app.settings, &ayse, &["player"]);
    let seen = player
        .api
        .get_table(player.req(pb::GetTableRequest {
            name: table.name.clone(),
        }))
        .await
        .expect("a seated player reads the table")
        .into_inner()
        .table
        .unwrap();
    let names: Vec<String> = seen
        .seats
        .iter()
        .map(|s| {
            s.player
                .as_ref()
                .map(|p| p.display_name.clone())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(names[0], "Ayşe", "named at creation, before any move");
    assert_eq!(
        names[1], "",
        "no name given: nameless until the player acts"
    );
    assert!(
        !names[2].is_empty() && !names[3].is_empty(),
        "bots have names: {names:?}"
    );
}

#[tokio::test]
async fn a_player_who_left_follows_a_table_without_spectators_until_they_take_the_seat_back() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let mut admin = Client::new(channel.clone(), &app.settings, &uuid(), &["admin"]);
    let mut player = Client::new(channel.clone(), &app.settings, &uuid(), &["player"]);
    let stranger = Client::new(channel.clone(), &app.settings, &uuid(), &["player"]);
    // An operator's table: no members, no spectators; the player and three bots, so the match
    // starts at once.
    let table = admin
        .api
        .create_table(admin.req(pb::CreateTableRequest {
            request_id: uuid(),
            rules: Some(rules(1)),
            seats: vec![pb::SeatAssignment {
                seat: 0,
                occupant: Some(pb::seat_assignment::Occupant::Player(player.player())),
                ..Default::default()
            }],
            empty_seat_bots: Some(pb::BotLevel::Easy as i32),
            origin: pb::TableOrigin::Operator as i32,
            spectators_allowed: Some(false),
            ..Default::default()
        }))
        .await
        .expect("created")
        .into_inner()
        .table
        .unwrap()
        .name;
    let read = |client: &Client| {
        let (mut api, request) = (
            client.api.clone(),
            client.req(pb::GetTableRequest {
                name: table.clone(),
            }),
        );
        async move { api.get_table(request).await.map(drop) }
    };
    let watch = |client: &Client| {
        let (mut api, request) = (
            client.api.clone(),
            client.req(pb::WatchTableRequest {
                table: table.clone(),
                after_version: 0,
            }),
        );
        async move {
            let mut stream = api.watch_table(request).await?.into_inner();
            let first = stream.message().await?.expect("a first message");
            Ok::<_, tonic::Status>(first)
        }
    };
    let err = read(&stranger).await.unwrap_err();
    assert_eq!(reason(&err), "not_table_member");

    player
        .api
        .leave_seat(player.req(pb::LeaveSeatRequest {
            request_id: uuid(),
            table: table.clone(),
        }))
        .await
        .expect("left: a bot plays the seat");
    read(&player)
        .await
        .expect("the player who left reads the table");
    let first = watch(&player)
        .await
        .expect("and follows it, as a spectator");
    let Some(pb::table_update::Kind::Snapshot(view)) = first.update.and_then(|u| u.kind) else {
        panic!("a snapshot first");
    };
    assert_eq!(view.seat, -1, "a spectator's view");
    assert!(view.rack.is_empty(), "no rack");
    let err = watch(&stranger).await.unwrap_err();
    assert_eq!(reason(&err), "not_table_member", "still no one else");
}
