//! Private rooms and the lobby against the real accounts and table services: a room with a
//! password, joined with a wrong then the right password, friends seated as partners and started,
//! gives a table with exactly those players in those seats that nobody else may sit at or watch;
//! guesses are rate-limited (a code with a NUL is no guess), sent together too; members follow the
//! room on a stream; the host removes a member and leaving closes the room, and either retried
//! changes nothing; an unstarted room expires; public rooms are listed in the lobby; members are
//! shown by the display names their tokens carry; a started room's bots are shown as its table
//! shows them.

mod common;

use std::time::Duration;

use common::{Guest, World, reason, uuid, wait_room};
use okey_proto::v1 as pb;
use okey_proto::v1::matchmaking_service_client::MatchmakingServiceClient;
use tonic::Code;
use tonic::transport::Channel;
use tonic_types::StatusExt;

fn partners() -> pb::RuleSet {
    pb::RuleSet {
        preset: "classic".into(),
        partners: Some(true),
        ..Default::default()
    }
}

async fn create(
    api: &mut MatchmakingServiceClient<Channel>,
    host: &Guest,
    password: &str,
    public: bool,
    fill_with_bots: bool,
) -> pb::Room {
    api.create_room(host.req(pb::CreateRoomRequest {
        request_id: uuid(),
        rules: Some(partners()),
        fill_with_bots,
        bot_level: pb::BotLevel::Easy as i32,
        password: password.into(),
        public,
        spectators_allowed: false,
    }))
    .await
    .expect("room created")
    .into_inner()
    .room
    .unwrap()
}

async fn join(
    api: &mut MatchmakingServiceClient<Channel>,
    guest: &Guest,
    code: &str,
    password: &str,
) -> Result<pb::JoinRoomResponse, tonic::Status> {
    Ok(api
        .join_room(guest.req(pb::JoinRoomRequest {
            request_id: uuid(),
            code: code.into(),
            password: password.into(),
        }))
        .await?
        .into_inner())
}

fn members(room: &pb::Room) -> Vec<String> {
    room.members.iter().map(|m| m.player.clone()).collect()
}

#[tokio::test]
async fn friends_seated_as_partners_get_a_table_nobody_else_may_sit_at_or_watch() {
    let Some(mut w) = World::start(&[("OKEY_MATCHMAKING__JOIN_ATTEMPTS", "3")]).await else {
        return;
    };
    let g = w.guests(6).await;
    let (host, friend, a, b, stranger, guesser) = (&g[0], &g[1], &g[2], &g[3], &g[4], &g[5]);

    let room = create(&mut w.api, host, "secret-word", false, false).await;
    assert_eq!(room.code.len(), 6);
    assert!(room.has_password);
    assert_eq!(room.members.len(), 4, "always four entries");
    assert_eq!(
        members(&room),
        vec![host.player.clone(), "".into(), "".into(), "".into()]
    );
    assert_eq!(room.free_seats, 3);

    let mut watch = w
        .api
        .watch_room(host.req(pb::WatchRoomRequest {
            name: room.name.clone(),
        }))
        .await
        .unwrap()
        .into_inner();
    let first = watch.message().await.unwrap().unwrap().room.unwrap();
    assert_eq!(first.free_seats, 3);

    // Wrong password, then the right one, typed in lower case.
    let err = join(&mut w.api, friend, &room.code, "guess")
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    assert_eq!(reason(&err), "wrong_room_password");
    let joined = join(&mut w.api, friend, &room.code.to_lowercase(), "secret-word")
        .await
        .unwrap();
    assert_eq!(joined.seat, 1);
    // The host's stream hears it.
    let pushed = loop {
        let r = watch.message().await.unwrap().unwrap().room.unwrap();
        if r.free_seats == 2 {
            break r;
        }
    };
    assert_eq!(pushed.members[1].player, friend.player);
    join(&mut w.api, a, &room.code, "secret-word")
        .await
        .unwrap();

    // Not full and no bots: the start is refused.
    let start = |who: &Guest| {
        who.req(pb::StartRoomRequest {
            request_id: uuid(),
            name: room.name.clone(),
        })
    };
    let err = w.api.start_room(start(host)).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(reason(&err), "room_not_full");
    join(&mut w.api, b, &room.code, "secret-word")
        .await
        .unwrap();
    let err = join(&mut w.api, stranger, &room.code, "secret-word")
        .await
        .unwrap_err();
    assert_eq!(reason(&err), "room_full");

    // Only the host seats: the friend goes opposite the host (partners are seats 0 and 2).
    let err = w
        .api
        .set_room_seat(friend.req(pb::SetRoomSeatRequest {
            request_id: uuid(),
            name: room.name.clone(),
            player: friend.player.clone(),
            seat: 2,
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    assert_eq!(reason(&err), "not_room_host");
    let seated = w
        .api
        .set_room_seat(host.req(pb::SetRoomSeatRequest {
            request_id: uuid(),
            name: room.name.clone(),
            player: friend.player.clone(),
            seat: 2,
        }))
        .await
        .unwrap()
        .into_inner()
        .room
        .unwrap();
    let want = vec![
        host.player.clone(),
        a.player.clone(),
        friend.player.clone(),
        b.player.clone(),
    ];
    assert_eq!(members(&seated), want);

    // A stranger cannot read the room.
    let err = w
        .api
        .get_room(stranger.req(pb::GetRoomRequest {
            name: room.name.clone(),
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);

    let err = w.api.start_room(start(friend)).await.unwrap_err();
    assert_eq!(reason(&err), "not_room_host");
    let started = w
        .api
        .start_room(start(host))
        .await
        .unwrap()
        .into_inner()
        .room
        .unwrap();
    assert_eq!(started.state, pb::RoomState::Started as i32);
    assert!(started.table.starts_with("tables/"));
    // A retried start returns the same room and table.
    let again = w
        .api
        .start_room(start(host))
        .await
        .unwrap()
        .into_inner()
        .room
        .unwrap();
    assert_eq!(again.table, started.table);
    let last = loop {
        let Some(m) = watch.message().await.unwrap() else {
            panic!("the stream ended before showing the start");
        };
        let r = m.room.unwrap();
        if r.state != pb::RoomState::Open as i32 {
            break r;
        }
    };
    assert_eq!(last.state, pb::RoomState::Started as i32);
    assert!(watch.message().await.unwrap().is_none(), "the stream ends");

    // The table: exactly those players in those seats, a private room's.
    let table = w.table(friend, &started.table).await.unwrap();
    let seats: Vec<String> = table
        .seats
        .iter()
        .map(|s| s.player.as_ref().unwrap().player.clone())
        .collect();
    assert_eq!(seats, want);
    assert_eq!(table.origin, pb::TableOrigin::PrivateRoom as i32);
    assert!(table.rules.unwrap().partners.unwrap());
    // A non-member can neither sit nor watch.
    let err = w.table(stranger, &started.table).await.unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    let mut tables = w.backends.table_client().await;
    let err = tables
        .watch_table(stranger.req(pb::WatchTableRequest {
            table: started.table.clone(),
            after_version: 0,
        }))
        .await
        .map(|_| ())
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    let err = tables
        .join_seat(stranger.req(pb::JoinSeatRequest {
            request_id: uuid(),
            table: started.table.clone(),
            seat: None,
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    // Joining a started room.
    let err = join(&mut w.api, stranger, &room.code, "secret-word")
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(reason(&err), "room_started");

    // A code or password with a NUL is refused as a bad request before anything else: it is no
    // guess, and never counts toward the limit.
    for (code, password) in [("AB\0CDE", ""), (room.code.as_str(), "secret\0word")] {
        for _ in 0..4 {
            let err = join(&mut w.api, guesser, code, password).await.unwrap_err();
            assert_eq!(err.code(), Code::InvalidArgument);
            assert_eq!(reason(&err), "invalid_text");
        }
    }

    // Guessing codes is rate-limited per caller.
    for _ in 0..3 {
        let err = join(&mut w.api, guesser, "ZZZZZZ", "").await.unwrap_err();
        assert_eq!(err.code(), Code::NotFound);
        assert_eq!(reason(&err), "room_not_found");
    }
    let err = join(&mut w.api, guesser, &room.code, "secret-word")
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert_eq!(reason(&err), "too_many_attempts");
    assert!(err.get_error_details().retry_info().is_some());

    w.stop().await;
}

/// New guest accounts cost nothing, so a password's guesses are limited per room too: once the
/// room was given too many wrong passwords, by callers each within their own limit, every
/// non-member is refused (the right password too) until the window ends; members are not.
#[tokio::test]
async fn a_room_s_password_is_limited_per_room_whoever_guesses() {
    let Some(mut w) = World::start(&[
        ("OKEY_MATCHMAKING__JOIN_ATTEMPTS", "3"),
        ("OKEY_MATCHMAKING__ROOM_PASSWORD_ATTEMPTS", "4"),
    ])
    .await
    else {
        return;
    };
    let g = w.guests(7).await;
    let (host, friend, guessers, late) = (&g[0], &g[1], &g[2..6], &g[6]);
    let room = create(&mut w.api, host, "secret-word", false, false).await;
    join(&mut w.api, friend, &room.code, "secret-word")
        .await
        .unwrap();
    // Four callers, one wrong password each: each far below its own limit of 3.
    for guesser in guessers {
        let err = join(&mut w.api, guesser, &room.code, "guess-word")
            .await
            .unwrap_err();
        assert_eq!(reason(&err), "wrong_room_password");
    }
    // The room is used up: the right password is refused too, with when to try again.
    let err = join(&mut w.api, late, &room.code, "secret-word")
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert_eq!(reason(&err), "too_many_attempts");
    let retry = err
        .get_error_details()
        .retry_info()
        .unwrap()
        .retry_delay
        .unwrap();
    assert!(retry > Duration::ZERO && retry <= Duration::from_secs(60));
    // A member joining again is answered with the room, as before.
    let again = join(&mut w.api, friend, &room.code, "").await.unwrap();
    assert_eq!(again.seat, 1);
    // Another room is not limited by this one's guesses.
    let other = create(&mut w.api, late, "other-word", false, false).await;
    join(&mut w.api, &g[2], &other.code, "other-word")
        .await
        .unwrap();

    w.stop().await;
}

#[tokio::test]
async fn the_host_removes_and_leaves_rooms_expire_and_the_lobby_lists_public_ones() {
    let Some(mut w) = World::start(&[("OKEY_MATCHMAKING__ROOM_TTL_SECS", "600")]).await else {
        return;
    };
    let g = w.guests(5).await;
    let (host, friend, other, looker) = (&g[0], &g[1], &g[2], &g[3]);

    // A public room without a password, with bots for free seats.
    let public = create(&mut w.api, host, "", true, true).await;
    let joined = join(&mut w.api, friend, &public.code, "").await.unwrap();
    assert_eq!(joined.seat, 1);
    let lobby = w
        .api
        .list_rooms(looker.req(pb::ListRoomsRequest {
            page_size: 10,
            page_token: String::new(),
            preset: "classic".into(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(lobby.rooms.len(), 1);
    assert_eq!(lobby.rooms[0].name, public.name);
    assert_eq!(lobby.rooms[0].free_seats, 2);
    let none = w
        .api
        .list_rooms(looker.req(pb::ListRoomsRequest {
            page_size: 10,
            page_token: String::new(),
            preset: "yudum".into(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(none.rooms.is_empty());

    // Paged one room at a time, the lobby lists each room once, oldest first, and ends; a token
    // continues only the listing it was given for, and an altered one is refused.
    let second = create(&mut w.api, &g[4], "", true, true).await;
    let page = |token: &str, preset: &str| pb::ListRoomsRequest {
        page_size: 1,
        page_token: token.into(),
        preset: preset.into(),
    };
    let first = w
        .api
        .list_rooms(looker.req(page("", "classic")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.rooms.len(), 1);
    assert_eq!(first.rooms[0].name, public.name);
    assert!(!first.next_page_token.is_empty());
    for (token, preset) in [
        (first.next_page_token.clone(), ""),
        (first.next_page_token.clone(), "yudum"),
        (format!("{}A", first.next_page_token), "classic"),
    ] {
        let refused = w
            .api
            .list_rooms(looker.req(page(&token, preset)))
            .await
            .unwrap_err();
        assert_eq!(reason(&refused), "invalid_page_token", "{preset}");
    }
    let last = w
        .api
        .list_rooms(looker.req(page(&first.next_page_token, "classic")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(last.rooms.len(), 1);
    assert_eq!(last.rooms[0].name, second.name);
    assert!(last.next_page_token.is_empty(), "two rooms, two pages");
    let leave = pb::LeaveRoomRequest {
        request_id: uuid(),
        name: second.name.clone(),
    };
    w.api.leave_room(g[4].req(leave)).await.unwrap();

    // The host removes the friend, who can no longer read it.
    let removal = pb::RemoveRoomMemberRequest {
        request_id: uuid(),
        name: public.name.clone(),
        player: friend.player.clone(),
    };
    let after = w
        .api
        .remove_room_member(host.req(removal.clone()))
        .await
        .unwrap()
        .into_inner()
        .room
        .unwrap();
    assert_eq!(after.free_seats, 3);
    let err = w
        .api
        .get_room(friend.req(pb::GetRoomRequest {
            name: public.name.clone(),
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    // The removal retried (same request_id) returns the first answer, also once the friend is
    // back, and changes nothing: the friend stays.
    let retried = w
        .api
        .remove_room_member(host.req(removal.clone()))
        .await
        .expect("a retried removal succeeds")
        .into_inner()
        .room
        .unwrap();
    assert_eq!(retried, after);
    join(&mut w.api, friend, &public.code, "").await.unwrap();
    let retried = w
        .api
        .remove_room_member(host.req(removal))
        .await
        .expect("a retried removal succeeds")
        .into_inner()
        .room
        .unwrap();
    assert_eq!(retried, after);
    let back = wait_room(&mut w.api, friend, &public.name, Duration::ZERO, |_| true).await;
    assert_eq!(back.members[1].player, friend.player, "still in the room");
    // A new removal naming someone not in the room, or the host, is a failed precondition.
    for player in [looker, host] {
        let err = w
            .api
            .remove_room_member(host.req(pb::RemoveRoomMemberRequest {
                request_id: uuid(),
                name: public.name.clone(),
                player: player.player.clone(),
            }))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::FailedPrecondition, "{err:?}");
        assert_eq!(reason(&err), "not_room_member");
        assert!(err.get_error_details().precondition_failure().is_some());
    }

    // Leaving: the friend leaves, and the same LeaveRoom again succeeds and changes nothing (also
    // once the friend is back); leaving a room one is not in changes nothing; a room that does not
    // exist is not found.
    let leave = pb::LeaveRoomRequest {
        request_id: uuid(),
        name: public.name.clone(),
    };
    w.api.leave_room(friend.req(leave.clone())).await.unwrap();
    w.api
        .leave_room(friend.req(leave.clone()))
        .await
        .expect("a retried leave succeeds");
    join(&mut w.api, friend, &public.code, "").await.unwrap();
    w.api
        .leave_room(friend.req(leave))
        .await
        .expect("a retried leave succeeds");
    w.api
        .leave_room(looker.req(pb::LeaveRoomRequest {
            request_id: uuid(),
            name: public.name.clone(),
        }))
        .await
        .expect("leaving a room one is not in");
    let room = wait_room(&mut w.api, host, &public.name, Duration::ZERO, |_| true).await;
    assert_eq!(
        room.members[1].player, friend.player,
        "the retry changed nothing"
    );
    assert_eq!(room.state, pb::RoomState::Open as i32);
    assert_eq!(room.free_seats, 2);
    let err = w
        .api
        .leave_room(looker.req(pb::LeaveRoomRequest {
            request_id: uuid(),
            name: format!("rooms/{}", uuid()),
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(reason(&err), "room_not_found");
    w.api
        .remove_room_member(host.req(pb::RemoveRoomMemberRequest {
            request_id: uuid(),
            name: public.name.clone(),
            player: friend.player.clone(),
        }))
        .await
        .unwrap();

    // The host leaving closes it; the lobby no longer lists it.
    join(&mut w.api, other, &public.code, "").await.unwrap();
    w.api
        .leave_room(host.req(pb::LeaveRoomRequest {
            request_id: uuid(),
            name: public.name.clone(),
        }))
        .await
        .unwrap();
    let closed = w
        .api
        .get_room(other.req(pb::GetRoomRequest {
            name: public.name.clone(),
        }))
        .await
        .unwrap()
        .into_inner()
        .room
        .unwrap();
    assert_eq!(closed.state, pb::RoomState::Closed as i32);
    let err = join(&mut w.api, looker, &public.code, "")
        .await
        .unwrap_err();
    assert_eq!(reason(&err), "room_closed");
    let lobby = w
        .api
        .list_rooms(looker.req(pb::ListRoomsRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert!(lobby.rooms.is_empty());

    // An unstarted room closes when its time is up.
    let lonely = create(&mut w.api, host, "", false, true).await;
    w.clock.advance(Duration::from_secs(601));
    wait_room(
        &mut w.api,
        host,
        &lonely.name,
        Duration::from_secs(10),
        |r| r.state == pb::RoomState::Closed as i32,
    )
    .await;

    // A room with bots starts with free seats: the host and three bots.
    let with_bots = create(&mut w.api, host, "", false, true).await;
    let started = w
        .api
        .start_room(host.req(pb::StartRoomRequest {
            request_id: uuid(),
            name: with_bots.name.clone(),
        }))
        .await
        .unwrap()
        .into_inner()
        .room
        .unwrap();
    assert_eq!(started.members.iter().filter(|m| m.bot).count(), 3);
    let table = w.table(host, &started.table).await.unwrap();
    assert_eq!(
        table
            .seats
            .iter()
            .filter(|s| s.player.as_ref().unwrap().bot)
            .count(),
        3
    );

    w.stop().await;
}

#[tokio::test]
async fn members_are_shown_by_the_names_they_signed_in_with_wherever_they_sit() {
    let Some(mut w) = World::start(&[]).await else {
        return;
    };
    let g = w.backends.guests_named(&["Ayşe", "Mehmet", "Zeynep"]).await;
    let (host, friend, other) = (&g[0], &g[1], &g[2]);
    let names = |room: &pb::Room| -> Vec<String> {
        room.members
            .iter()
            .map(|m| m.display_name.clone())
            .collect()
    };

    let room = create(&mut w.api, host, "", false, true).await;
    assert_eq!(names(&room), vec!["Ayşe", "", "", ""]);
    join(&mut w.api, friend, &room.code, "").await.unwrap();
    let joined = join(&mut w.api, other, &room.code, "").await.unwrap();
    assert_eq!(
        names(&joined.room.unwrap()),
        vec!["Ayşe", "Mehmet", "Zeynep", ""]
    );
    // A name follows its member to another seat, and nobody is shown by the player id.
    let moved = w
        .api
        .set_room_seat(host.req(pb::SetRoomSeatRequest {
            request_id: uuid(),
            name: room.name.clone(),
            player: friend.player.clone(),
            seat: 2,
        }))
        .await
        .unwrap()
        .into_inner()
        .room
        .unwrap();
    assert_eq!(names(&moved), vec!["Ayşe", "Zeynep", "Mehmet", ""]);
    assert_eq!(moved.members[2].player, friend.player);
    // Started with a bot in the free seat: what every member reads says the same.
    w.api
        .start_room(host.req(pb::StartRoomRequest {
            request_id: uuid(),
            name: room.name.clone(),
        }))
        .await
        .unwrap();
    let started = wait_room(
        &mut w.api,
        other,
        &room.name,
        Duration::from_secs(20),
        |r| r.state == pb::RoomState::Started as i32,
    )
    .await;
    assert_eq!(&names(&started)[..3], &["Ayşe", "Zeynep", "Mehmet"]);
    assert!(started.members[3].bot);
    for m in &started.members[..3] {
        assert!(!m.display_name.contains(&m.player[8..]), "{m:?}");
    }

    w.stop().await;
}

#[tokio::test]
async fn a_started_rooms_bots_are_shown_as_its_table_shows_them_at_every_level() {
    let Some(mut w) = World::start(&[]).await else {
        return;
    };
    let levels = [
        pb::BotLevel::Unspecified,
        pb::BotLevel::Easy,
        pb::BotLevel::Medium,
        pb::BotLevel::Hard,
    ];
    let hosts = w
        .backends
        .guests_named(&["Ayşe", "Mehmet", "Zeynep", "Emre"])
        .await;
    for (level, host) in levels.into_iter().zip(&hosts) {
        let room = w
            .api
            .create_room(host.req(pb::CreateRoomRequest {
                request_id: uuid(),
                rules: Some(partners()),
                fill_with_bots: true,
                bot_level: level as i32,
                ..Default::default()
            }))
            .await
            .expect("room created")
            .into_inner()
            .room
            .unwrap();
        let started = w
            .api
            .start_room(host.req(pb::StartRoomRequest {
                request_id: uuid(),
                name: room.name.clone(),
            }))
            .await
            .expect("started with bots in the free seats")
            .into_inner()
            .room
            .unwrap();
        let read = w
            .api
            .get_room(host.req(pb::GetRoomRequest {
                name: room.name.clone(),
            }))
            .await
            .unwrap()
            .into_inner()
            .room
            .unwrap();
        let watched = w
            .api
            .watch_room(host.req(pb::WatchRoomRequest {
                name: room.name.clone(),
            }))
            .await
            .unwrap()
            .into_inner()
            .message()
            .await
            .unwrap()
            .expect("the room as it is")
            .room
            .unwrap();
        // The table's own word: each bot seat's name (`bots/{level}-{seat}`) and display name.
        let table = w.table(host, &started.table).await.unwrap();
        // The host is named at the table from the start, as in the room.
        let (host_at_table, host_in_room) =
            (table.seats[0].player.clone().unwrap(), &started.members[0]);
        assert_eq!(host_at_table.player, host_in_room.player);
        assert!(!host_in_room.display_name.is_empty());
        assert_eq!(host_at_table.display_name, host_in_room.display_name);
        for seat in 1..4 {
            let at_table = table.seats[seat].player.clone().expect("a bot sits there");
            assert!(
                at_table.bot && at_table.player.starts_with("bots/"),
                "{at_table:?}"
            );
            assert!(!at_table.display_name.is_empty(), "{at_table:?}");
            for (answer, room) in [
                ("StartRoom", &started),
                ("GetRoom", &read),
                ("WatchRoom", &watched),
            ] {
                assert_eq!(
                    room.members[seat], at_table,
                    "{level:?} seat {seat} in {answer}"
                );
            }
        }
        assert_eq!(read.members[0].player, host.player);
        assert!(!read.members[0].bot);
    }

    w.stop().await;
}

/// Joins that arrive together each get the lowest seat still free, or `room_full`: never an
/// UNAVAILABLE (two concurrent joins once took the same seat and the second failed on its key).
#[tokio::test]
async fn joins_at_the_same_moment_fill_the_free_seats_and_the_rest_are_told_it_is_full() {
    let Some(mut w) = World::start(&[]).await else {
        return;
    };
    let g = w
        .backends
        .guests_named(&["Host", "A", "B", "C", "D", "E", "F"])
        .await;
    for round in 0..3 {
        let room = create(&mut w.api, &g[0], "", false, true).await;
        let joins = g[1..].iter().map(|guest| {
            let mut api = w.api.clone();
            let code = room.code.clone();
            async move { join(&mut api, guest, &code, "").await }
        });
        let answers = futures_util::future::join_all(joins).await;
        let mut seated = 0;
        for answer in answers {
            match answer {
                Ok(_) => seated += 1,
                Err(e) => {
                    assert_eq!(e.code(), Code::FailedPrecondition, "round {round}: {e:?}");
                    assert_eq!(reason(&e), "room_full", "round {round}: {e:?}");
                }
            }
        }
        assert_eq!(seated, 3, "round {round}: the three free seats are taken");
        let now = w
            .api
            .get_room(g[0].req(pb::GetRoomRequest {
                name: room.name.clone(),
            }))
            .await
            .unwrap()
            .into_inner()
            .room
            .unwrap();
        assert!(now.members.iter().all(|m| !m.player.is_empty()), "{now:?}");
    }
}

/// Guesses that arrive together, each `(guest, code, password)`, all sent before any is answered;
/// the answers in the same order.
async fn burst(
    api: &MatchmakingServiceClient<Channel>,
    guesses: &[(&Guest, &str, &str)],
) -> Vec<Result<pb::JoinRoomResponse, tonic::Status>> {
    let joins = guesses.iter().map(|&(guest, code, password)| {
        let mut api = api.clone();
        async move { join(&mut api, guest, code, password).await }
    });
    futures_util::future::join_all(joins).await
}

/// How many answers were refused as `too_many_attempts` (each with when to try again), and the
/// reasons of the others (`"joined"` for a join).
fn tally(answers: &[Result<pb::JoinRoomResponse, tonic::Status>]) -> (usize, Vec<String>) {
    let mut refused = 0;
    let mut others = Vec::new();
    for answer in answers {
        match answer {
            Ok(_) => others.push("joined".to_owned()),
            Err(e) if reason(e) == "too_many_attempts" => {
                assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
                let retry = e
                    .get_error_details()
                    .retry_info()
                    .expect("RetryInfo")
                    .retry_delay
                    .expect("a delay");
                assert!(retry > Duration::ZERO, "{e:?}");
                refused += 1;
            }
            Err(e) => others.push(reason(e)),
        }
    }
    others.sort();
    (refused, others)
}

/// The limits hold when the guesses arrive together, not only one after another: each attempt is
/// counted before the password is checked (and given back when it was right), so of a burst of
/// wrong passwords or unknown codes exactly the limit are checked and the rest refused, and a
/// right password within the limit joins and does not count.
#[tokio::test]
async fn guesses_sent_together_are_limited_as_if_sent_one_after_another() {
    // The defaults (10 per caller, 30 per room), with a window no test run outlasts.
    let Some(mut w) = World::start(&[
        ("OKEY_MATCHMAKING__JOIN_ATTEMPTS", "10"),
        ("OKEY_MATCHMAKING__ROOM_PASSWORD_ATTEMPTS", "30"),
        ("OKEY_MATCHMAKING__JOIN_WINDOW_SECS", "3600"),
    ])
    .await
    else {
        return;
    };
    let g = w.guests(4).await;
    let (host, guesser, friend, prober) = (&g[0], &g[1], &g[2], &g[3]);
    let room = create(&mut w.api, host, "secret-word", false, false).await;
    let other = create(&mut w.api, host, "other-word", false, false).await;

    // One caller, 30 wrong passwords at once: 10 are checked, 20 refused.
    let guesses = vec![(guesser, room.code.as_str(), "guess-word"); 30];
    let (refused, others) = tally(&burst(&w.api, &guesses).await);
    assert_eq!(others, vec!["wrong_room_password"; 10]);
    assert_eq!(refused, 20);
    // Used up: the right password is refused too.
    let err = join(&mut w.api, guesser, &room.code, "secret-word")
        .await
        .unwrap_err();
    assert_eq!(reason(&err), "too_many_attempts");

    // Within the limit, a right password sent with wrong ones joins, and gives its attempt back:
    // 9 wrong and the right one, then one more wrong password is still checked, and no more.
    let mut guesses = vec![(friend, other.code.as_str(), "guess-word"); 9];
    guesses.push((friend, other.code.as_str(), "other-word"));
    let answers = burst(&w.api, &guesses).await;
    assert_eq!(
        answers[9].as_ref().expect("the right password joins").seat,
        1
    );
    let (refused, others) = tally(&answers);
    assert_eq!(refused, 0);
    assert_eq!(
        others
            .iter()
            .filter(|r| *r == "wrong_room_password")
            .count(),
        9
    );
    let guesses = vec![(friend, room.code.as_str(), "guess-word"); 5];
    let (refused, others) = tally(&burst(&w.api, &guesses).await);
    assert_eq!(others, vec!["wrong_room_password"]);
    assert_eq!(refused, 4);

    // Unknown codes share the caller's limit.
    let guesses = vec![(prober, "ZZZZZZ", ""); 30];
    let (refused, others) = tally(&burst(&w.api, &guesses).await);
    assert_eq!(others, vec!["room_not_found"; 10]);
    assert_eq!(refused, 20);

    // The room's own limit, whoever guesses: 40 callers, one wrong password each, at once; the
    // room has had 11 (from the guesser and the friend), so 19 more are checked and 21 refused.
    let guessers = w.guests(40).await;
    let guesses: Vec<_> = guessers
        .iter()
        .map(|guesser| (guesser, room.code.as_str(), "guess-word"))
        .collect();
    let (refused, others) = tally(&burst(&w.api, &guesses).await);
    assert_eq!(others, vec!["wrong_room_password"; 19]);
    assert_eq!(refused, 21);
    // The room is used up, for the right password of a caller within their own limit too.
    let err = join(&mut w.api, &guessers[0], &room.code, "secret-word")
        .await
        .unwrap_err();
    assert_eq!(reason(&err), "too_many_attempts");

    w.stop().await;
}
