//! `okeyctl verify` against the real table service (in-process, on the real PostgreSQL, NATS and
//! Redis): four players play a two-hand match from their own seat views; every hand verifies
//! with a player's token, through the library and through the binary; then one stored event is
//! altered in the test's own store (a drawn tile) and the binary exits 1 naming that event's
//! version and name, while the other hand still verifies.

use std::process::Command;

use okey_bots::{Bot, Level};
use okey_load::{Client, connect, engine_view, seated_table, uuid};
use okey_platform::ServiceKind;
use okey_platform::command::command_to_proto;
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;

/// Bots on each player's own view play the match to its end.
async fn play_match(table: &str, clients: &mut [Client]) {
    let mut bots: Vec<Box<dyn Bot>> = (0..4).map(|_| Level::Strong.bot()).collect();
    let mut hand = 0;
    let mut turn = clients[0].view(table).await.unwrap().turn_seat as usize;
    for _ in 0..20_000 {
        let view = clients[turn].view(table).await.unwrap();
        if view.summary.as_ref().unwrap().state == pb::TableState::Finished as i32 {
            return;
        }
        if view.hand_number != hand {
            hand = view.hand_number;
            bots = (0..4).map(|_| Level::Strong.bot()).collect();
        }
        let command = bots[turn].act(&engine_view(&view));
        let answer = clients[turn]
            .submit(table, &uuid(), command_to_proto(&command).unwrap())
            .await
            .unwrap_or_else(|e| panic!("seat {turn} {command:?} refused: {e:?}"));
        let view = answer.view.unwrap();
        if view.summary.as_ref().unwrap().state == pb::TableState::Finished as i32 {
            return;
        }
        turn = view.turn_seat as usize;
    }
    panic!("the match did not end");
}

/// `okeyctl verify` as a person runs it: (exit code, stdout).
async fn verify_binary(url: &str, token: &str, table: &str, hand: u32) -> (i32, String) {
    let (url, token, table) = (url.to_owned(), token.to_owned(), table.to_owned());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_okeyctl"))
            .args(["verify", &table, "--hand", &hand.to_string()])
            .args(["--table-url", &url])
            .env("OKEY_TOKEN", &token)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), format!("{stdout}{stderr}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hand_of_a_played_match_verifies_and_an_altered_event_is_named() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let settings = infra.settings_for(ServiceKind::Table);
    let app = table::startup::Application::build(&settings).await.unwrap();
    let port = app.local_addr().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(app.run_until_stopped(async {
        let _ = stopped.await;
    }));
    let url = format!("http://127.0.0.1:{port}");
    let channel = connect(port).await;
    let (table, mut clients) = seated_table(channel, &settings, 2).await;
    play_match(&table, &mut clients).await;
    let hands = clients[0].view(&table).await.unwrap().hand_number as u32;
    assert!(hands >= 2, "{hands} hands");

    // Every hand verifies with a player's own token (seat 1's here).
    let token = clients[1].token.clone();
    for hand in 1..=hands {
        let report = okeyctl::verify::run(&url, &token, &table, hand)
            .await
            .unwrap();
        assert_eq!(report.difference, None, "hand {hand}: {:?}", report.checked);
        for check in [
            "commitment",
            "seeds",
            "deal",
            "events",
            "penalties",
            "score",
            "totals",
        ] {
            assert!(
                report
                    .checked
                    .iter()
                    .any(|l| l.starts_with(&format!("ok  {check}"))),
                "hand {hand} does not say it checked {check}: {:?}",
                report.checked
            );
        }
    }
    // Hand 1's server seed was committed when the table was created (version 1).
    let report = okeyctl::verify::run(&url, &token, &table, 1).await.unwrap();
    assert!(
        report
            .checked
            .iter()
            .any(|l| l.contains("server seed: committed at v1 ")),
        "{:?}",
        report.checked
    );
    let (code, printed) = verify_binary(&url, &token, &table, 1).await;
    assert_eq!(code, 0, "{printed}");
    assert!(printed.contains("verified: hand 1"), "{printed}");

    // One stored event altered in the test's store: hand 1's first draw names another tile.
    let pool = sqlx::PgPool::connect(settings.database.url.expose())
        .await
        .unwrap();
    let stream = format!("table-{}", table.strip_prefix("tables/").unwrap());
    let (version, mut payload): (i64, serde_json::Value) = sqlx::query_as(
        "SELECT version, payload FROM events WHERE stream_id = $1 AND event_type = 'TileDrawn' \
         AND (payload->>'hand_number')::int = 1 ORDER BY version LIMIT 1",
    )
    .bind(&stream)
    .fetch_one(&pool)
    .await
    .unwrap();
    let drawn = payload["event"]["tile"].as_str().unwrap().to_owned();
    let other = if drawn == "F" { "R1" } else { "F" };
    payload["event"]["tile"] = serde_json::Value::from(other);
    sqlx::query("UPDATE events SET payload = $1 WHERE stream_id = $2 AND version = $3")
        .bind(&payload)
        .bind(&stream)
        .bind(version)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let (code, printed) = verify_binary(&url, &token, &table, 1).await;
    assert_eq!(code, 1, "{printed}");
    assert!(
        printed.contains(&format!(
            "not verified: the first difference is in v{version} (TileDrawn)"
        )),
        "{printed}"
    );
    assert!(printed.contains(&format!("drew {other}, but")), "{printed}");
    let report = okeyctl::verify::run(&url, &token, &table, 1).await.unwrap();
    let difference = report.difference.expect("the altered hand does not verify");
    assert_eq!(difference.version, version as u64);
    assert_eq!(difference.event, "TileDrawn");
    // The other hand is untouched and still verifies.
    let report = okeyctl::verify::run(&url, &token, &table, 2).await.unwrap();
    assert_eq!(report.difference, None);

    let _ = stop.send(());
    let _ = server.await;
}
