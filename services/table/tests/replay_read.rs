//! The replay page's JSON read (`GET /replay/v1/tables/{id}/hands/{n}` on the gRPC port, plain
//! HTTP/1.1) against the real service, PostgreSQL and NATS: the same access as GetHandHistory
//! (support any time, audited as one read; a player who sat in the hand once it has ended; others
//! refused with the same reasons, as HTTP statuses with the `common.proto` reason in a JSON body),
//! bad input refused precisely and never audited, every step equal to the engine's own fold of
//! the stored hand, the page's files served with their policy, and gRPC on the same port as
//! before.

mod common;

use common::*;
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use okey_rules::Hand;
use okey_rules::replay::narrate;
use table::domain::TableEvent;
use table::domain::history;
use table::domain::steps::HandReplay;

async fn audit_log(support: &mut Client, table: &str) -> Vec<pb::HandRead> {
    let request = support.req(pb::ListHandReadsRequest {
        table: table.to_owned(),
        page_size: 0,
        page_token: String::new(),
    });
    support
        .api
        .list_hand_reads(request)
        .await
        .expect("support lists the audit log")
        .into_inner()
        .reads
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

async fn read(port: u16, path: &str, token: Option<&str>) -> HttpAnswer {
    let auth = token.map(bearer);
    let headers: Vec<(&str, &str)> = auth
        .as_deref()
        .map(|a| vec![("Authorization", a)])
        .unwrap_or_default();
    http(port, "GET", path, &headers, None).await
}

/// The answer is a refusal: `status`, the gRPC code's name and the reason.
fn assert_refused(answer: &HttpAnswer, status: u16, code: &str, reason: &str) {
    assert_eq!(
        answer.status,
        status,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let body = answer.json();
    assert_eq!(body["error"]["code"], status, "{body}");
    assert_eq!(body["error"]["status"], code, "{body}");
    assert_eq!(body["error"]["reason"], reason, "{body}");
    assert!(
        !body["error"]["message"].as_str().unwrap().is_empty(),
        "{body}"
    );
}

fn path(table: &str, hand: &str) -> String {
    format!(
        "/replay/v1/tables/{}/hands/{hand}",
        table.strip_prefix("tables/").unwrap()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_json_read_is_get_hand_history_s_access_audit_and_engine_fold() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let port = app.port;
    let channel = connect(port).await;
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let (_other, others) = seated_table(channel.clone(), &app.settings, 1).await;
    let mut support = Client::new(channel.clone(), &app.settings, "support-7", &["support"]);
    let support_token = token(&app.settings, "support-7", &["support"]);
    let player_token = clients[1].token.clone();
    let other_token = others[0].token.clone();
    let matchmaker = token(&app.settings, "matchmaking", &["matchmaker"]);
    let mut received: Vec<Received> = (0..4).map(|_| Received::default()).collect();

    // The page itself, with its policy; the bare prefix leads to it.
    let page = http(port, "GET", "/replay/", &[], None).await;
    assert_eq!(page.status, 200);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    assert!(
        page.header("content-security-policy")
            .unwrap()
            .contains("script-src 'self'")
    );
    assert!(String::from_utf8_lossy(&page.body).contains("replay.js"));
    let js = http(port, "GET", "/replay/replay.js", &[], None).await;
    assert_eq!(js.status, 200);
    assert!(
        js.header("content-type")
            .unwrap()
            .starts_with("text/javascript")
    );
    let bare = http(port, "GET", "/replay", &[], None).await;
    assert_eq!(bare.status, 308);
    assert_eq!(bare.header("location"), Some("/replay/"));

    // Support reads the hand while it is played: one read in the audit log, live.
    play(&table, &mut clients, &mut received, |v| v.version >= 9).await;
    let live = read(port, &path(&table, "1"), Some(&support_token)).await;
    assert_eq!(live.status, 200, "{}", String::from_utf8_lossy(&live.body));
    assert_eq!(live.header("cache-control"), Some("no-store"));
    let live: HandReplay = serde_json::from_slice(&live.body).unwrap();
    assert!(!live.ended);
    assert_eq!(live.table, table);
    assert!(live.steps.iter().all(|s| s.state.scores.is_none()));
    let log = audit_log(&mut support, &table).await;
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0].reader, "players/support-7");
    assert_eq!(log[0].hand_number, 1);
    assert!(log[0].live);
    assert_eq!(log[0].from_version, live.first_version as i64);

    // Everyone else, refused as GetHandHistory refuses them; nothing refused is audited.
    let hand1 = path(&table, "1");
    assert_refused(
        &read(port, &hand1, Some(&player_token)).await,
        400,
        "FAILED_PRECONDITION",
        "hand_in_progress",
    );
    assert_refused(
        &read(port, &hand1, Some(&other_token)).await,
        403,
        "PERMISSION_DENIED",
        "not_in_hand",
    );
    assert_refused(
        &read(port, &hand1, None).await,
        401,
        "UNAUTHENTICATED",
        "token_invalid",
    );
    assert_refused(
        &read(port, &hand1, Some("not-a-token")).await,
        401,
        "UNAUTHENTICATED",
        "token_invalid",
    );
    assert_refused(
        &read(port, &hand1, Some(&matchmaker)).await,
        403,
        "PERMISSION_DENIED",
        "role_required",
    );
    let bad = [
        (
            "/replay/v1/tables/nope/hands/1".to_owned(),
            400,
            "INVALID_ARGUMENT",
            "invalid_table",
        ),
        (
            path(&table, "0"),
            400,
            "INVALID_ARGUMENT",
            "invalid_hand_number",
        ),
        (
            path(&table, "-3"),
            400,
            "INVALID_ARGUMENT",
            "invalid_hand_number",
        ),
        (
            path(&table, "99999999999999999999"),
            400,
            "INVALID_ARGUMENT",
            "invalid_hand_number",
        ),
        (
            path(&table, "x"),
            400,
            "INVALID_ARGUMENT",
            "invalid_hand_number",
        ),
        (path(&table, "99"), 404, "NOT_FOUND", "hand_not_found"),
        (
            path(&format!("tables/{}", uuid()), "1"),
            404,
            "NOT_FOUND",
            "table_not_found",
        ),
        (format!("{hand1}/more"), 404, "NOT_FOUND", ""),
        ("/replay/v1/hands".to_owned(), 404, "NOT_FOUND", ""),
        ("/replay/nothing-here".to_owned(), 404, "NOT_FOUND", ""),
    ];
    for (bad_path, status, code, reason) in &bad {
        let answer = read(port, bad_path, Some(&support_token)).await;
        assert_refused(&answer, *status, code, reason);
    }
    // Reads are GETs: another method is told so in the same JSON form.
    let posted = http(port, "POST", &hand1, &[], None).await;
    assert_refused(&posted, 405, "UNIMPLEMENTED", "");
    assert_eq!(posted.header("allow"), Some("GET, HEAD"));
    assert_eq!(audit_log(&mut support, &table).await.len(), 1);

    // To the end: the player reads it now, each step exactly the engine's fold of the stored
    // hand, told by the engine's replay, with the scores at the end.
    play(&table, &mut clients, &mut received, |_| false).await;
    let answer = read(port, &hand1, Some(&player_token)).await;
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let replay: HandReplay = serde_json::from_slice(&answer.body).unwrap();
    assert!(replay.ended);
    let (stored_events, _) = stored(&app.settings, &table).await;
    let events: Vec<TableEvent> = stored_events.iter().map(|r| r.event.clone()).collect();
    let span = history::hand_span(&events, 1).unwrap();
    assert_eq!(replay.first_version, span.first_version);
    assert_eq!(replay.last_version, span.last_version);
    let deals = history::hand_deals(
        &span.rules,
        stored_events.iter().map(|r| (r.version, &r.event)),
        1,
    )
    .unwrap();
    let engine = &deals[0];
    let told = narrate(engine);
    let engine_steps: Vec<_> = replay
        .steps
        .iter()
        .filter(|s| {
            matches!(
                events[s.version as usize - 1],
                TableEvent::HandDealt { .. }
                    | TableEvent::Played { .. }
                    | TableEvent::HandEnded { .. }
            )
        })
        .collect();
    assert_eq!(
        engine_steps.len(),
        engine.len(),
        "every engine event is a step"
    );
    for (i, step) in engine_steps.iter().enumerate() {
        let hand = Hand::replay(&engine[..=i]).unwrap();
        assert_eq!(step.told, told[i].text);
        assert_eq!(step.state.pile, hand.pile_len());
        for seat in 0..4 {
            let rack: Vec<String> = hand.racks[seat].iter().map(|t| t.to_string()).collect();
            assert_eq!(
                step.state.seats[seat].rack, rack,
                "step {} seat {seat}",
                step.step
            );
        }
    }
    let TableEvent::HandEnded { end, totals, .. } = &events[span.last_version as usize - 1] else {
        panic!("the hand ended");
    };
    let scores = replay.steps.last().unwrap().state.scores.as_ref().unwrap();
    for (seat, score) in scores.seats.iter().enumerate() {
        assert_eq!(score.hand_score, end.scores[seat]);
        assert_eq!(score.total, totals[seat]);
    }
    // Players' reads are not audited; a player of another table still never reads it.
    assert_refused(
        &read(port, &hand1, Some(&other_token)).await,
        403,
        "PERMISSION_DENIED",
        "not_in_hand",
    );
    assert_eq!(audit_log(&mut support, &table).await.len(), 1);
    // Support after the end: the second read, not live.
    let again = read(port, &hand1, Some(&support_token)).await;
    assert_eq!(again.status, 200);
    let log = audit_log(&mut support, &table).await;
    assert_eq!(log.len(), 2);
    assert!(!log[0].live && log[1].live);

    // gRPC on the same port, as before: a history page, and an unknown method still refused.
    let page = support
        .api
        .get_hand_history(support.req(pb::GetHandHistoryRequest {
            table: table.clone(),
            hand_number: 1,
            page_size: 0,
            page_token: String::new(),
        }))
        .await
        .expect("gRPC serves the history")
        .into_inner();
    assert_eq!(
        page.entries.len(),
        replay.steps.len(),
        "one step per history entry"
    );
    app.stop().await;
}
