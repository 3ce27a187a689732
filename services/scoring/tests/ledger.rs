//! The ledger against the real table service, PostgreSQL and NATS: a five-hand match of bot seats
//! whose ledger adds up to the table's `MatchEnded` totals with every hand re-verified, read back
//! through the API with its access rules, paging and errors.

mod common;

use std::time::Duration;

use common::*;
use okey_platform::auth::Role;
use okey_proto::v1 as pb;
use okey_table::TableEvent;
use tonic::Code;
use tonic_types::StatusExt;

/// A player's requests.
struct Who(String);

impl Who {
    fn req<T>(&self, m: T) -> tonic::Request<T> {
        req(m, &self.0, &[Role::Player])
    }
}

fn reason(status: &tonic::Status) -> String {
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_five_hand_match_adds_up_to_the_tables_totals_and_every_hand_verifies() {
    let Some(Scoring {
        stack,
        service: scoring,
        pool,
        ..
    }) = Scoring::start().await
    else {
        return;
    };
    let person = uuid();
    let table = bots_match(&stack, Some(&person), rules(5)).await;
    wait_for_match_end(&pool, &table, Duration::from_secs(240)).await;

    // The table's own word: MatchEnded's totals.
    let events = stack.table_events(&table).await;
    let Some(TableEvent::MatchEnded { totals, winners }) = events.last().cloned() else {
        panic!("the match ended");
    };
    let id = uuid::Uuid::parse_str(table.trim_start_matches("tables/")).unwrap();
    for seat in 0..4 {
        let sum: Option<i64> = sqlx::query_scalar(
            "SELECT sum(points)::bigint FROM ledger_entries WHERE match_id = $1 AND seat = $2",
        )
        .bind(id)
        .bind(seat)
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(sum, Some(totals[seat as usize]), "seat {seat}");
    }
    let hands_ended = events
        .iter()
        .filter(|e| matches!(e, TableEvent::HandEnded { .. }))
        .count() as i64;
    assert!(hands_ended >= 5);
    let (hands, verified): (i64, i64) = sqlx::query_as(
        "SELECT count(*), count(*) FILTER (WHERE verified) FROM hands
         WHERE match_id = $1 AND ended_at IS NOT NULL",
    )
    .bind(id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!((hands, verified), (hands_ended, hands_ended));
    let scores: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM ledger_entries WHERE match_id = $1 AND kind = 'hand_score'",
    )
    .bind(id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(scores, 4 * hands_ended, "four hand scores per ended hand");
    let applied: i64 =
        sqlx::query_scalar("SELECT count(*) FROM applied_events WHERE table_id = $1")
            .bind(id)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(applied, events.len() as i64, "every event applied once");

    // The person's own reads: the result, the entries (paged), their standing.
    let mut api = scoring_client(scoring.port).await;
    let me = Who(person.clone());
    let result = api
        .get_match_result(me.req(pb::GetMatchResultRequest {
            name: format!("matches/{id}"),
        }))
        .await
        .expect("a player reads a match they played")
        .into_inner()
        .result
        .unwrap();
    assert_eq!(
        result.totals,
        totals.iter().map(|&t| t as i32).collect::<Vec<_>>()
    );
    assert_eq!(
        result.winners,
        winners.iter().map(|&w| i32::from(w)).collect::<Vec<_>>()
    );
    assert!(result.verified && result.ranked);
    assert_eq!(result.hands.len() as i64, hands_ended);
    assert_eq!(result.seats[0].player, format!("players/{person}"));
    assert!(result.seats[1].bot && !result.seats[0].bot);
    assert!(
        result
            .hands
            .iter()
            .all(|h| h.verified && h.seed.len() == 64)
    );

    let mut entries = Vec::new();
    let mut token = String::new();
    loop {
        let page = api
            .list_ledger_entries(me.req(pb::ListLedgerEntriesRequest {
                parent: "players/me".into(),
                page_size: 7,
                page_token: token.clone(),
                ..Default::default()
            }))
            .await
            .expect("own entries")
            .into_inner();
        assert!(page.entries.len() <= 7);
        entries.extend(page.entries);
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    let points: i64 = entries.iter().map(|e| i64::from(e.points)).sum();
    assert_eq!(
        points, totals[0],
        "the person's entries add up to seat 0's total"
    );
    let mut names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    names.dedup();
    assert_eq!(names.len(), entries.len(), "no entry twice across pages");
    assert!(
        entries
            .iter()
            .all(|e| e.seat == 0 && !e.event_id.is_empty())
    );
    let hand_scores: Vec<_> = entries
        .iter()
        .filter(|e| e.kind == pb::LedgerEntryKind::HandScore as i32)
        .collect();
    assert!(
        hand_scores.iter().all(|e| !e.basis.is_empty()),
        "{hand_scores:?}"
    );

    let results = api
        .list_match_results(me.req(pb::ListMatchResultsRequest {
            parent: "players/me".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(results.results.len(), 1);
    let standing = api
        .get_standing(me.req(pb::GetStandingRequest {
            player: "players/me".into(),
            period: pb::StandingsPeriod::Day as i32,
        }))
        .await
        .unwrap()
        .into_inner()
        .standing
        .expect("the person played a ranked match today");
    assert_eq!(standing.matches_played, 1);
    assert_eq!(standing.mean_match_total, totals[0] as f64);
    let board = api
        .list_standings(me.req(pb::ListStandingsRequest {
            period: pb::StandingsPeriod::Week as i32,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(
        board
            .standings
            .iter()
            .any(|s| s.player.as_ref().unwrap().player == format!("players/{person}"))
    );

    // Someone else: refused, or not found; an analyst reads everything.
    let other = uuid();
    let them = Who(other.clone());
    let e = api
        .get_match_result(them.req(pb::GetMatchResultRequest {
            name: format!("matches/{id}"),
        }))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (Code::NotFound, "match_not_found")
    );
    let e = api
        .list_ledger_entries(them.req(pb::ListLedgerEntriesRequest {
            parent: format!("players/{person}"),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (Code::PermissionDenied, "role_required")
    );
    let all = api
        .list_ledger_entries(req(
            pb::ListLedgerEntriesRequest {
                parent: "players/-".into(),
                r#match: format!("matches/{id}"),
                page_size: 1000,
                ..Default::default()
            },
            "analyst",
            &[Role::Analyst],
        ))
        .await
        .expect("an analyst reads every seat")
        .into_inner();
    let sum: i64 = all.entries.iter().map(|e| i64::from(e.points)).sum();
    assert_eq!(sum, totals.iter().sum::<i64>());

    // Bad input: the precise errors.
    for (request, code, why) in [
        (
            pb::ListLedgerEntriesRequest {
                parent: "players/me".into(),
                page_size: -1,
                ..Default::default()
            },
            Code::InvalidArgument,
            "invalid_page_size",
        ),
        (
            pb::ListLedgerEntriesRequest {
                parent: "players/me".into(),
                page_token: "garbage".into(),
                ..Default::default()
            },
            Code::InvalidArgument,
            "invalid_page_token",
        ),
        (
            pb::ListLedgerEntriesRequest {
                parent: "tables/x".into(),
                ..Default::default()
            },
            Code::InvalidArgument,
            "invalid_name",
        ),
        (
            pb::ListLedgerEntriesRequest {
                parent: "players/-".into(),
                ..Default::default()
            },
            Code::PermissionDenied,
            "role_required",
        ),
        // A malformed match name is invalid_name even where the parent is not the caller's to
        // read: names are checked before who may read them.
        (
            pb::ListLedgerEntriesRequest {
                parent: "players/-".into(),
                r#match: "matches/xyz".into(),
                ..Default::default()
            },
            Code::InvalidArgument,
            "invalid_name",
        ),
    ] {
        let e = api.list_ledger_entries(me.req(request)).await.unwrap_err();
        assert_eq!((e.code(), reason(&e).as_str()), (code, why));
    }
    // A ledger token is no standings token.
    let ledger_token = api
        .list_ledger_entries(me.req(pb::ListLedgerEntriesRequest {
            parent: "players/me".into(),
            page_size: 1,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .next_page_token;
    let e = api
        .list_standings(me.req(pb::ListStandingsRequest {
            page_token: ledger_token,
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(reason(&e), "invalid_page_token");

    scoring.stop().await;
    pool.close().await;
    stack.stop().await;
}

/// Standings paged one row at a time list every row once and end, whatever the means: 602/3 is
/// a mean whose decimal text did not come back to the same float, and paging stuck on its row
/// (the same row and the same token forever). A token altered in any way is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standings_page_one_row_at_a_time_to_the_end_and_tokens_cannot_be_altered() {
    let Some(Scoring {
        stack,
        service: scoring,
        pool,
        ..
    }) = Scoring::start().await
    else {
        return;
    };
    // All-time standings (period 'all' starts at the epoch), written as the projection keeps
    // them: (played, won, total_sum), means 602/3, 496/3, 200.5, 1/3 and two players equal.
    let rows: [(i64, i64, i64); 7] = [
        (3, 1, 602),
        (3, 1, 496),
        (2, 1, 401),
        (3, 0, 1),
        (3, 1, 602),
        (7, 2, 2021),
        (1, 0, 202),
    ];
    let mut players = Vec::new();
    for (played, won, total_sum) in rows {
        let player = format!("players/{}", uuid());
        sqlx::query(
            "INSERT INTO standings (period, starts, player_id, played, won, total_sum) \
             VALUES ('all', 'epoch', $1, $2, $3, $4)",
        )
        .bind(&player)
        .bind(played)
        .bind(won)
        .bind(total_sum)
        .execute(&pool)
        .await
        .unwrap();
        players.push(player);
    }

    let mut api = scoring_client(scoring.port).await;
    let me = Who(uuid());
    let page = |token: String, size: i32| pb::ListStandingsRequest {
        period: pb::StandingsPeriod::Unspecified as i32,
        page_size: size,
        page_token: token,
    };
    let whole = api
        .list_standings(me.req(page(String::new(), 500)))
        .await
        .unwrap()
        .into_inner();
    assert!(whole.next_page_token.is_empty());
    let whole: Vec<String> = whole
        .standings
        .iter()
        .map(|s| s.player.as_ref().unwrap().player.clone())
        .collect();
    let mut listed = Vec::new();
    let mut token = String::new();
    let mut tokens = Vec::new();
    loop {
        let answer = api
            .list_standings(me.req(page(token.clone(), 1)))
            .await
            .unwrap()
            .into_inner();
        listed.extend(
            answer
                .standings
                .iter()
                .map(|s| s.player.as_ref().unwrap().player.clone()),
        );
        assert!(
            listed.len() <= whole.len(),
            "paging goes past the end: {listed:?}"
        );
        if answer.next_page_token.is_empty() {
            break;
        }
        assert_ne!(
            answer.next_page_token, token,
            "a page gave back its own token"
        );
        token = answer.next_page_token;
        tokens.push(token.clone());
    }
    assert_eq!(listed, whole, "one row at a time lists what one page does");
    for player in &players {
        assert_eq!(
            listed.iter().filter(|p| *p == player).count(),
            1,
            "{player}"
        );
    }

    // Any change to a token the server gave makes it one it did not give.
    let given = &tokens[0];
    let mut altered = vec![];
    for i in [0, given.len() / 2, given.len() - 1] {
        let mut chars: Vec<char> = given.chars().collect();
        chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
        altered.push(chars.into_iter().collect::<String>());
    }
    altered.push(format!("{given}A"));
    altered.push(given[..given.len() - 2].to_owned());
    for bad in altered {
        let e = api
            .list_standings(me.req(page(bad.clone(), 1)))
            .await
            .unwrap_err();
        assert_eq!(
            (e.code(), reason(&e).as_str()),
            (Code::InvalidArgument, "invalid_page_token"),
            "{bad}"
        );
    }
    // A token keeps the period it was given for: the all-time one names no day, week or month.
    for other in [
        pb::StandingsPeriod::Day,
        pb::StandingsPeriod::Week,
        pb::StandingsPeriod::Month,
    ] {
        let e = api
            .list_standings(me.req(pb::ListStandingsRequest {
                period: other as i32,
                ..page(given.clone(), 1)
            }))
            .await
            .unwrap_err();
        assert_eq!(
            (e.code(), reason(&e).as_str()),
            (Code::InvalidArgument, "invalid_page_token"),
            "an all-time token for {other:?}"
        );
    }

    scoring.stop().await;
    pool.close().await;
    stack.stop().await;
}
