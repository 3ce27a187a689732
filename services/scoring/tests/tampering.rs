//! What scoring does with events it should not trust: a real match published again under another
//! table with one hand's score changed is caught by the re-verification; a penalty changed where
//! the totals cannot show it (its reason) is caught at its own event; a cancelled hand voids its
//! penalties in the ledger; a message that is not a table event is set aside and the table's
//! later events still apply. The events are published on the table service's own stream, in its
//! own envelope (`okey_table::Published`).

mod common;

use std::time::Duration;

use common::*;
use okey_bots::{Bot, Level};
use okey_platform::auth::Role;
use okey_proto::v1 as pb;
use okey_rules::matches::{HandResult, Match};
use okey_rules::{
    Command, Event, Hand, HandEnd, MatchLength, Outcome, PenaltyReason, Preset, SeatView,
};
use okey_table::{Admission, TableEvent, hex, seed_hash};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_score_is_caught_and_a_cancelled_hand_voids_its_penalties() {
    let Some(Scoring {
        stack,
        service: scoring,
        pool,
        ..
    }) = Scoring::start().await
    else {
        return;
    };
    let real = bots_match(&stack, None, rules(2)).await;
    wait_for_match_end(&pool, &real, Duration::from_secs(180)).await;
    let publisher = Publisher::new(&stack).await;

    // The real match again, as another table, with the last hand's score of seat 1 (and every
    // total after it) ten points higher: consistent to anyone who only adds up.
    let events = stack.table_events(&real).await;
    let last_end = events
        .iter()
        .rposition(|e| matches!(e, TableEvent::HandEnded { .. }))
        .unwrap();
    let copy = uuid::Uuid::new_v4();
    for (i, event) in events.iter().enumerate() {
        let mut event = event.clone();
        match &mut event {
            TableEvent::HandEnded {
                end,
                result,
                totals,
                ..
            } if i == last_end => {
                end.scores[1] += 10;
                result.scores[1] += 10;
                totals[1] += 10;
            }
            TableEvent::MatchEnded { totals, .. } => totals[1] += 10,
            _ => {}
        }
        publisher.event(copy, i as u64 + 1, &event).await;
    }
    let copy_name = format!("tables/{copy}");
    wait_for_match_end(&pool, &copy_name, Duration::from_secs(60)).await;
    let hands: Vec<(bool, Option<String>)> = sqlx::query_as(
        "SELECT verified, verify_problem FROM hands WHERE match_id = $1 ORDER BY dealt_version",
    )
    .bind(copy)
    .fetch_all(&pool)
    .await
    .unwrap();
    let (last, earlier) = hands.split_last().unwrap();
    assert!(earlier.iter().all(|(v, _)| *v), "{earlier:?}");
    assert!(!last.0);
    assert!(
        last.1.as_deref().unwrap().contains("seat 1 was scored"),
        "{last:?}"
    );
    let mut api = scoring_client(scoring.port).await;
    let result = api
        .get_match_result(req(
            pb::GetMatchResultRequest {
                name: format!("matches/{copy}"),
            },
            "support",
            &[Role::Support],
        ))
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    assert!(!result.verified);
    assert!(!result.hands.last().unwrap().verified);

    // A hand cancelled after a penalty, with an unreadable message in the middle of the table.
    let cancelled = uuid::Uuid::new_v4();
    let seed = [9u8; 32];
    let deal = okey_rules::Deal::from_seed(&seed, 0);
    let end = HandEnd {
        outcome: Outcome::Cancelled,
        winner: None,
        multiplier: 1,
        scores: [0; 4],
    };
    let script = [
        TableEvent::TableCreated {
            rules: Preset::Classic.rules(),
            seats: [None, None, None, None],
            admission: Admission::default(),
            server_seed_sha256: None,
        },
        TableEvent::HandDealt {
            hand_number: 1,
            first: 0,
            indicator: deal.indicator,
            seed_sha256: seed_hash(&seed),
            seeding: None,
        },
        TableEvent::Played {
            hand_number: 1,
            event: serde_json::from_str(
                r#"{"type":"penalty_charged","id":0,"seat":2,"points":101,"reason":"discard_okey"}"#,
            )
            .unwrap(),
            first_meld: None,
            noted: Default::default(),
        },
        TableEvent::Played {
            hand_number: 1,
            event: serde_json::from_str(r#"{"type":"hand_cancelled","voided":[0]}"#).unwrap(),
            first_meld: None,
            noted: Default::default(),
        },
        TableEvent::HandEnded {
            hand_number: 1,
            end,
            result: HandResult {
                outcome: Outcome::Cancelled,
                winner: None,
                penalties: [0; 4],
                scores: [0; 4],
            },
            totals: [0; 4],
            seed: hex(&seed),
            racks: Default::default(),
            server_seed: None,
        },
    ];
    publisher.event(cancelled, 1, &script[0]).await;
    publisher.event(cancelled, 2, &script[1]).await;
    publisher
        .raw(cancelled, 3, b"{\"not\": \"an envelope\"}".to_vec())
        .await;
    for (i, event) in script.iter().enumerate().skip(2) {
        publisher.event(cancelled, i as u64 + 2, event).await;
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let rows: Vec<(String, String, i32, Option<String>)> = loop {
        let rows = sqlx::query_as(
            "SELECT kind, reason, points, voided_by FROM ledger_entries WHERE match_id = $1
             ORDER BY entry_id",
        )
        .bind(cancelled)
        .fetch_all(&pool)
        .await
        .unwrap();
        if rows.len() == 6 {
            break rows;
        }
        assert!(std::time::Instant::now() < deadline, "{rows:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        rows[..2],
        [
            ("penalty".into(), "discard_okey".into(), 101, None),
            (
                "void".into(),
                "discard_okey".into(),
                -101,
                Some("hand_cancelled".into())
            ),
        ]
    );
    assert!(
        rows[2..]
            .iter()
            .all(|r| r.0 == "hand_score" && r.1 == "cancelled" && r.2 == 0)
    );
    let (poisoned, version): (i64, Option<i64>) =
        sqlx::query_as("SELECT count(*), max(version) FROM poison_events WHERE table_id = $1")
            .bind(cancelled)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((poisoned, version), (1, Some(3)));

    scoring.stop().await;
    pool.close().await;
    stack.stop().await;
}

/// A one-hand match played by strong bots through the engine from `seed`, as the table's events,
/// where the first seat able to discard an okey before its last tile does (the engine charges
/// it `discard_okey`).
fn hand_with_an_okey_discarded(seed: [u8; 32]) -> Vec<TableEvent> {
    let mut rules = Preset::Classic.rules();
    rules.match_length = MatchLength::Hands(1);
    let deal = okey_rules::Deal::from_seed(&seed, 0);
    let mut events = vec![
        TableEvent::TableCreated {
            rules: rules.clone(),
            seats: [None, None, None, None],
            admission: Admission::default(),
            server_seed_sha256: None,
        },
        TableEvent::HandDealt {
            hand_number: 1,
            first: 0,
            indicator: deal.indicator,
            seed_sha256: seed_hash(&seed),
            seeding: None,
        },
    ];
    let mut hand = Hand::from_start(&Hand::start(rules.clone(), deal).unwrap());
    let mut bots: Vec<Box<dyn Bot>> = (0..4).map(|_| Level::Strong.bot()).collect();
    let mut charged = false;
    let end = loop {
        let seat = hand.turn.seat;
        let mut command = bots[seat as usize].act(&SeatView::of(&hand, seat));
        let okey = hand.okey.tile();
        if !charged
            && matches!(command, Command::Discard { .. })
            && hand.racks[seat as usize].contains(okey)
            && hand.racks[seat as usize].len() > 1
        {
            command = Command::Discard { tile: okey };
        }
        let played = hand
            .decide(seat, &command)
            .or_else(|_| hand.decide(seat, &Command::Timeout))
            .unwrap();
        let mut ended = None;
        for event in played {
            hand.evolve(&event);
            charged |= matches!(
                event,
                Event::PenaltyCharged {
                    reason: PenaltyReason::DiscardOkey,
                    ..
                }
            );
            match event {
                Event::HandEnded { end } => ended = Some(end),
                event => events.push(TableEvent::Played {
                    hand_number: 1,
                    event,
                    first_meld: None,
                    noted: Default::default(),
                }),
            }
        }
        if let Some(end) = ended {
            break end;
        }
    };
    assert!(charged, "seed {seed:?} gives no okey to discard");
    let result = HandResult::of(&hand).unwrap();
    let mut record = Match::new(rules, 0);
    record.record(result);
    events.push(TableEvent::HandEnded {
        hand_number: 1,
        end,
        result,
        totals: record.totals,
        seed: hex(&seed),
        racks: Default::default(),
        server_seed: None,
    });
    events.push(TableEvent::MatchEnded {
        totals: record.totals,
        winners: Vec::new(),
    });
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_penalty_changed_where_the_totals_cannot_show_it_is_caught_at_its_event() {
    let Some(Scoring {
        stack,
        service: scoring,
        pool,
        ..
    }) = Scoring::start().await
    else {
        return;
    };
    let publisher = Publisher::new(&stack).await;
    let events = hand_with_an_okey_discarded([7; 32]);
    let at = events
        .iter()
        .position(|e| {
            matches!(
                e,
                TableEvent::Played {
                    event: Event::PenaltyCharged {
                        reason: PenaltyReason::DiscardOkey,
                        ..
                    },
                    ..
                }
            )
        })
        .unwrap();
    let version = at as u64 + 1;

    // As played, then with that penalty's reason changed: the same seat, the same points, so
    // every total still adds up.
    let honest = uuid::Uuid::new_v4();
    let tampered = uuid::Uuid::new_v4();
    for (i, event) in events.iter().enumerate() {
        publisher.event(honest, i as u64 + 1, event).await;
        let mut event = event.clone();
        if let TableEvent::Played {
            event: Event::PenaltyCharged { reason, .. },
            ..
        } = &mut event
            && i == at
        {
            *reason = PenaltyReason::DiscardPlayable;
        }
        publisher.event(tampered, i as u64 + 1, &event).await;
    }
    for table in [honest, tampered] {
        wait_for_match_end(&pool, &format!("tables/{table}"), Duration::from_secs(60)).await;
    }
    let hand = |table: uuid::Uuid| {
        let pool = pool.clone();
        async move {
            sqlx::query_as::<_, (bool, Option<String>)>(
                "SELECT verified, verify_problem FROM hands WHERE match_id = $1",
            )
            .bind(table)
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    let (verified, problem) = hand(honest).await;
    assert!(verified, "{problem:?}");
    let (verified, problem) = hand(tampered).await;
    assert!(!verified);
    let problem = problem.unwrap();
    assert!(
        problem.starts_with(&format!("version {version}: the table published penalty")),
        "{problem}"
    );
    assert!(
        problem.contains("discard_playable") && problem.contains("discard_okey"),
        "{problem}"
    );
    // The ledger still records what the table published, with the event it came from.
    let reasons: Vec<String> = sqlx::query_scalar(
        "SELECT reason FROM ledger_entries
         WHERE match_id = $1 AND kind = 'penalty' AND table_version = $2",
    )
    .bind(tampered)
    .bind(version as i64)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(reasons, ["discard_playable"]);

    scoring.stop().await;
    pool.close().await;
    stack.stop().await;
}
