//! Quick play end to end, against the real accounts and table services and PostgreSQL, Redis and
//! NATS: four guests with the same rules end at one table and play a hand there; a guest alone
//! gets bots after the wait and a ticket without bots expires (a manual clock, no waiting), as does
//! one with bots whose table the table service refuses for good; a cancel racing the match has
//! one outcome that both sides see; bad requests get their reason.

mod common;

use std::time::{Duration, Instant};

use common::{Guest, World, find, is_matched, one_hand, reason, uuid, variant, wait_ticket};
use okey_bots::Level;
use okey_proto::v1 as pb;
use okey_proto::v1::table_service_client::TableServiceClient;
use tonic::Code;
use tonic::transport::Channel;

/// Plays the table's match (one hand) from each guest's own seat view until it is finished.
async fn play_out(table: &str, api: &mut TableServiceClient<Channel>, seats: &[(i32, Guest)]) {
    let by_seat = |s: i32| seats.iter().find(|(seat, _)| *seat == s).map(|(_, g)| g);
    let mut bot = Level::Easy.bot();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut moves = 0;
    loop {
        assert!(Instant::now() < deadline, "the hand did not end");
        // Any seated guest sees whose turn it is.
        let (_, anyone) = &seats[0];
        let view = api
            .get_seat_view(anyone.req(pb::GetSeatViewRequest {
                table: table.to_owned(),
                view_form: pb::SeatViewForm::Unspecified as i32,
                min_version: None,
            }))
            .await
            .expect("a seated guest reads the table")
            .into_inner()
            .view
            .unwrap();
        if view.summary.as_ref().unwrap().state == pb::TableState::Finished as i32 {
            assert!(moves > 0, "nobody moved");
            return;
        }
        let Some(guest) = by_seat(view.turn_seat) else {
            panic!("seat {} has no guest", view.turn_seat);
        };
        let mine = api
            .get_seat_view(guest.req(pb::GetSeatViewRequest {
                table: table.to_owned(),
                view_form: pb::SeatViewForm::Engine as i32,
                min_version: None,
            }))
            .await
            .expect("own view")
            .into_inner()
            .view
            .unwrap();
        let engine: okey_rules::SeatView = serde_json::from_str(&mine.engine_view).unwrap();
        let command = bot.act(&engine);
        api.submit_command(guest.req(pb::SubmitCommandRequest {
            request_id: uuid(),
            table: table.to_owned(),
            command: table::grpc::command_to_proto(&command),
            expected_version: None,
            view_form: pb::SeatViewForm::Typed as i32,
        }))
        .await
        .unwrap_or_else(|e| panic!("{command:?} refused: {e:?}"));
        moves += 1;
    }
}

#[tokio::test]
async fn four_guests_with_the_same_rules_share_one_table_and_play_a_hand() {
    let Some(mut w) = World::start(&[]).await else {
        return;
    };
    let guests = w.guests(4).await;

    // Same rules written three ways: empty preset, `classic`, the seed number.
    let spellings = ["", "classic", "000", "classic"];
    let mut tickets: Vec<pb::Ticket> = Vec::new();
    for (g, preset) in guests.iter().zip(spellings) {
        if tickets.len() == 3 {
            // Three searching with the same rules: the first one has found three players.
            let first = w
                .api
                .get_ticket(guests[0].req(pb::GetTicketRequest {
                    name: tickets[0].name.clone(),
                }))
                .await
                .unwrap()
                .into_inner()
                .ticket
                .unwrap();
            assert_eq!(first.players_found, 3, "{first:?}");
        }
        tickets.push(find(&mut w.api, g, one_hand(preset), false).await.unwrap());
    }
    let fourth = Instant::now();
    let mut matched = Vec::new();
    for (g, t) in guests.iter().zip(&tickets) {
        matched
            .push(wait_ticket(&mut w.api, g, &t.name, Duration::from_secs(20), is_matched).await);
    }
    println!("fourth ticket to all four matched: {:?}", fourth.elapsed());
    let table = matched[0].table.clone();
    assert!(table.starts_with("tables/"), "{table}");
    let mut seats: Vec<i32> = matched.iter().map(|t| t.seat).collect();
    for t in &matched {
        assert_eq!(t.table, table, "every ticket at the same table");
        assert_eq!(t.players_found, 4);
    }
    seats.sort();
    assert_eq!(seats, vec![0, 1, 2, 3], "four different seats");

    // The table service seated exactly these four, and records where the table came from.
    let got = w.table(&guests[0], &table).await.unwrap();
    assert_eq!(got.origin, pb::TableOrigin::QuickPlay as i32);
    for (g, t) in guests.iter().zip(&matched) {
        let seat = &got.seats[t.seat as usize];
        assert_eq!(seat.player.as_ref().unwrap().player, g.player);
    }
    let by_seat: Vec<(i32, Guest)> = matched
        .iter()
        .zip(&guests)
        .map(|(t, g)| (t.seat, g.clone()))
        .collect();
    play_out(&table, &mut w.backends.table_client().await, &by_seat).await;

    w.stop().await;
}

#[tokio::test]
async fn a_guest_alone_with_bots_gets_three_bots_after_the_wait_and_one_without_expires() {
    let Some(mut w) = World::start(&[
        ("OKEY_MATCHMAKING__BOT_FILL_AFTER_SECS", "15"),
        ("OKEY_MATCHMAKING__TICKET_TTL_SECS", "120"),
    ])
    .await
    else {
        return;
    };
    let guests = w.guests(2).await;
    let alone = &guests[0];
    // Different rules, so the two never meet.
    let with_bots = find(&mut w.api, alone, one_hand("classic"), true)
        .await
        .unwrap();
    let without = find(&mut w.api, &guests[1], variant(1), false)
        .await
        .unwrap();
    let secs = |t: &pb::Ticket| {
        t.expire_time.as_ref().unwrap().seconds - t.create_time.as_ref().unwrap().seconds
    };
    assert_eq!(secs(&with_bots), 15);
    assert_eq!(secs(&without), 120);

    let mut watch = w
        .api
        .watch_ticket(alone.req(pb::WatchTicketRequest {
            name: with_bots.name.clone(),
        }))
        .await
        .unwrap()
        .into_inner();
    let first = watch.message().await.unwrap().unwrap().ticket.unwrap();
    assert_eq!(first.state, pb::TicketState::Searching as i32);

    // Nothing happens before the wait is over (the matcher ticks meanwhile, on the real clock;
    // 5 s of margin for a slow machine between the ticket's opening and this read).
    w.clock.advance(Duration::from_secs(10));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = wait_ticket(&mut w.api, alone, &with_bots.name, Duration::ZERO, |_| true).await;
    assert_eq!(t.state, pb::TicketState::Searching as i32);

    w.clock.advance(Duration::from_secs(6));
    let matched = loop {
        let t = watch
            .message()
            .await
            .unwrap()
            .expect("pushed")
            .ticket
            .unwrap();
        if is_matched(&t) {
            break t;
        }
    };
    assert_eq!(matched.players_found, 1, "bots are not players found");
    assert!(watch.message().await.unwrap().is_none(), "the stream ends");
    let got = w.table(alone, &matched.table).await.unwrap();
    let bots = got
        .seats
        .iter()
        .filter(|s| s.player.as_ref().is_some_and(|p| p.bot))
        .count();
    assert_eq!(bots, 3);
    assert_eq!(
        got.seats[matched.seat as usize]
            .player
            .as_ref()
            .unwrap()
            .player,
        alone.player
    );

    // The one without bots is still searching at 16 s or so, and expires at 120 s.
    let t = wait_ticket(
        &mut w.api,
        &guests[1],
        &without.name,
        Duration::ZERO,
        |_| true,
    )
    .await;
    assert_eq!(t.state, pb::TicketState::Searching as i32);
    w.clock.advance(Duration::from_secs(105));
    let t = wait_ticket(
        &mut w.api,
        &guests[1],
        &without.name,
        Duration::from_secs(10),
        |t| t.state != pb::TicketState::Searching as i32,
    )
    .await;
    assert_eq!(t.state, pb::TicketState::Expired as i32);
    // An expired ticket cannot be cancelled.
    let err = w
        .api
        .cancel_ticket(guests[1].req(pb::CancelTicketRequest {
            request_id: uuid(),
            name: without.name.clone(),
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(reason(&err), "ticket_closed");

    w.stop().await;
}

#[tokio::test]
async fn a_ticket_with_bots_expires_when_the_table_service_refuses_its_table_for_good() {
    let Some(infra) = okey_platform::testing::TestInfra::from_env() else {
        return;
    };
    let backends = common::Backends::start(&infra).await;
    // A "table service" that refuses every CreateTable for good: the accounts service, which
    // does not serve it.
    let clock = matchmaking::clock::ManualClock::new();
    let refusing = backends.accounts.url();
    let mm = backends
        .matchmaking(
            &clock,
            &[
                ("OKEY_MATCHMAKING__TABLE_URL", refusing.as_str()),
                ("OKEY_MATCHMAKING__BOT_FILL_AFTER_SECS", "15"),
            ],
        )
        .await;
    let mut api = common::mm_client(mm.port).await;
    let guest = &backends.guests(1).await[0];
    let ticket = find(&mut api, guest, one_hand("classic"), true)
        .await
        .unwrap();
    assert!(ticket.allow_bots);
    // The wait for bots is over: the server forms the table, the table service refuses it, and
    // the ticket is EXPIRED (as matchmaking.proto's "Expiry" says), long before its expire_time
    // would matter to a ticket without bots.
    clock.advance(Duration::from_secs(16));
    let t = wait_ticket(
        &mut api,
        guest,
        &ticket.name,
        Duration::from_secs(30),
        |t| t.state != pb::TicketState::Searching as i32,
    )
    .await;
    assert_eq!(t.state, pb::TicketState::Expired as i32, "{t:?}");
    assert!(t.table.is_empty());

    mm.stop().await;
    backends.stop().await;
}

#[tokio::test]
async fn cancel_racing_a_match_ends_in_one_state_200_times() {
    let Some(mut w) = World::start(&[]).await else {
        return;
    };
    let guests = w.guests(4).await;
    let (mut cancelled, mut closed) = (0, 0);
    for round in 0..200 {
        let rules = one_hand("classic");
        let mut open = Vec::new();
        for g in &guests[..3] {
            open.push(find(&mut w.api, g, rules.clone(), false).await.unwrap());
        }
        let (mut a, mut b) = (w.api.clone(), w.api.clone());
        let (fourth, cancel) = tokio::join!(
            find(&mut a, &guests[3], rules.clone(), false),
            b.cancel_ticket(guests[0].req(pb::CancelTicketRequest {
                request_id: uuid(),
                name: open[0].name.clone(),
            })),
        );
        let fourth = fourth.unwrap();
        match cancel {
            Ok(r) => {
                cancelled += 1;
                let t = r.into_inner().ticket.unwrap();
                assert_eq!(t.state, pb::TicketState::Cancelled as i32);
                // It stays cancelled: the other three are never matched with it.
                let again = wait_ticket(
                    &mut w.api,
                    &guests[0],
                    &open[0].name,
                    Duration::ZERO,
                    |_| true,
                )
                .await;
                assert_eq!(
                    again.state,
                    pb::TicketState::Cancelled as i32,
                    "round {round}"
                );
                for (g, t) in guests[1..3].iter().zip(&open[1..]) {
                    let t = wait_ticket(&mut w.api, g, &t.name, Duration::ZERO, |_| true).await;
                    assert_eq!(t.state, pb::TicketState::Searching as i32, "round {round}");
                }
                // Clear the queue for the next round.
                for (g, name) in guests[1..3]
                    .iter()
                    .zip(open[1..].iter().map(|t| t.name.clone()))
                    .chain([(&guests[3], fourth.name.clone())])
                {
                    w.api
                        .cancel_ticket(g.req(pb::CancelTicketRequest {
                            request_id: uuid(),
                            name,
                        }))
                        .await
                        .unwrap();
                }
            }
            Err(e) => {
                closed += 1;
                assert_eq!(e.code(), Code::FailedPrecondition, "round {round}: {e:?}");
                assert_eq!(reason(&e), "ticket_closed");
                let t = wait_ticket(
                    &mut w.api,
                    &guests[0],
                    &open[0].name,
                    Duration::from_secs(20),
                    is_matched,
                )
                .await;
                let table = w.table(&guests[0], &t.table).await.unwrap();
                assert_eq!(
                    table.seats[t.seat as usize].player.as_ref().unwrap().player,
                    guests[0].player,
                    "round {round}: matched and seated"
                );
                for (g, t) in guests[1..].iter().zip(open[1..].iter().chain([&fourth])) {
                    wait_ticket(&mut w.api, g, &t.name, Duration::from_secs(20), is_matched).await;
                }
            }
        }
    }
    println!("cancel won {cancelled} times, the match {closed} times");
    // In the store: no cancelled ticket was ever taken into a table.
    let pool = sqlx::PgPool::connect(w.backends.matchmaking_settings(&[]).database.url.expose())
        .await
        .unwrap();
    let bad: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM tickets WHERE state = 'cancelled' AND claim_id IS NOT NULL",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(bad, 0);
    w.stop().await;
}

#[tokio::test]
async fn bad_requests_get_their_reason_and_change_nothing() {
    let Some(mut w) = World::start(&[]).await else {
        return;
    };
    let guests = w.guests(2).await;
    let details = |e: &tonic::Status| {
        use tonic_types::StatusExt;
        e.get_error_details()
            .bad_request()
            .map(|b| b.field_violations[0].field.clone())
            .unwrap_or_default()
    };

    // Unknown preset, and an option combination the rules engine refuses: the field is named.
    let err = find(&mut w.api, &guests[0], one_hand("blitz"), false)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(reason(&err), "invalid_rules");
    assert_eq!(details(&err), "rules.preset");
    let zero_hands = pb::RuleSet {
        match_length: Some(pb::MatchLength {
            length: Some(pb::match_length::Length::Hands(0)),
        }),
        ..Default::default()
    };
    let err = find(&mut w.api, &guests[0], zero_hands, false)
        .await
        .unwrap_err();
    assert_eq!(reason(&err), "invalid_rules");
    assert_eq!(details(&err), "rules.match_length");

    // A retry returns the same ticket; the same rules again return it; other rules are refused.
    let request = pb::FindTableRequest {
        request_id: uuid(),
        rules: Some(one_hand("classic")),
        allow_bots: false,
        bot_level: 0,
    };
    let first = w
        .api
        .find_table(guests[0].req(request.clone()))
        .await
        .unwrap()
        .into_inner()
        .ticket
        .unwrap();
    let retry = w
        .api
        .find_table(guests[0].req(request))
        .await
        .unwrap()
        .into_inner()
        .ticket
        .unwrap();
    assert_eq!(first.name, retry.name);
    let same = find(&mut w.api, &guests[0], one_hand(""), false)
        .await
        .unwrap();
    assert_eq!(same.name, first.name);
    let err = find(&mut w.api, &guests[0], variant(1), false)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(reason(&err), "ticket_open");
    {
        use tonic_types::StatusExt;
        let details = err.get_error_details();
        assert_eq!(details.error_info().unwrap().metadata["ticket"], first.name);
        let failure = details
            .precondition_failure()
            .expect("a FAILED_PRECONDITION carries PreconditionFailure");
        assert_eq!(failure.violations[0].r#type, "rule");
    }

    // Another player's ticket does not exist for them.
    let err = w
        .api
        .get_ticket(guests[1].req(pb::GetTicketRequest {
            name: first.name.clone(),
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(reason(&err), "ticket_not_found");
    let err = w
        .api
        .cancel_ticket(guests[1].req(pb::CancelTicketRequest {
            request_id: uuid(),
            name: first.name.clone(),
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let still = wait_ticket(&mut w.api, &guests[0], &first.name, Duration::ZERO, |_| {
        true
    })
    .await;
    assert_eq!(still.state, pb::TicketState::Searching as i32);

    // Cancelling twice: the second returns the cancelled ticket.
    for _ in 0..2 {
        let t = w
            .api
            .cancel_ticket(guests[0].req(pb::CancelTicketRequest {
                request_id: uuid(),
                name: first.name.clone(),
            }))
            .await
            .unwrap()
            .into_inner()
            .ticket
            .unwrap();
        assert_eq!(t.state, pb::TicketState::Cancelled as i32);
    }

    // The presets come from the rules engine.
    let presets = w
        .api
        .list_presets(guests[0].req(pb::ListPresetsRequest {}))
        .await
        .unwrap()
        .into_inner()
        .presets;
    let names: Vec<&str> = presets.iter().map(|p| p.name.as_str()).collect();
    let engine: Vec<&str> = okey_rules::Preset::ALL.iter().map(|p| p.name()).collect();
    assert_eq!(names, engine);
    assert_eq!(presets[1].seed, "001");
    assert_eq!(
        matchmaking::wire::rules_from_proto(presets[1].rules.as_ref()).unwrap(),
        okey_rules::Preset::Yudum.rules()
    );

    w.stop().await;
}
