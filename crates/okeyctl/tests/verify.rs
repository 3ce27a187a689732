//! `okeyctl verify` against the real table service (in-process, on the real PostgreSQL, NATS and
//! Redis): four players play a two-hand match from their own seat views; every hand verifies
//! with a player's token, through the library and through the binary; then one stored event is
//! altered in the test's own store (a drawn tile) and the binary exits 1 naming that event's
//! version and name, while the other hand still verifies. A hand still in play is replayed and
//! exported with a support token up to its latest event, marked in play, and verify refuses it.

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
    let (code, stdout, stderr) = okeyctl(
        token,
        &[
            "verify",
            table,
            "--hand",
            &hand.to_string(),
            "--table-url",
            url,
        ],
    )
    .await;
    (code, format!("{stdout}{stderr}"))
}

/// `okeyctl <args>` with `OKEY_TOKEN=token`: (exit code, stdout, stderr).
async fn okeyctl(token: &str, args: &[&str]) -> (i32, String, String) {
    let token = token.to_owned();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_okeyctl"))
            .args(&args)
            .env("OKEY_TOKEN", &token)
            .env_remove("OKEY_TABLE_URL")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Bots on each player's own view make `moves` moves of the hand being played.
async fn play_moves(table: &str, clients: &mut [Client], moves: usize) {
    let mut bots: Vec<Box<dyn Bot>> = (0..4).map(|_| Level::Strong.bot()).collect();
    let mut turn = clients[0].view(table).await.unwrap().turn_seat as usize;
    for _ in 0..moves {
        let view = clients[turn].view(table).await.unwrap();
        let command = bots[turn].act(&engine_view(&view));
        let answer = clients[turn]
            .submit(table, &uuid(), command_to_proto(&command).unwrap())
            .await
            .unwrap_or_else(|e| panic!("seat {turn} {command:?} refused: {e:?}"));
        turn = answer.view.unwrap().turn_seat as usize;
    }
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

    // At a partners table the story ends each hand with the teams' totals, which decide it.
    let channel = connect(port).await;
    let mut admin = Client::new(channel.clone(), &settings, "admin", &["admin"]);
    let partners = admin
        .create(pb::RuleSet {
            partners: Some(true),
            ..okey_load::rules(1)
        })
        .await;
    let mut players = Vec::new();
    for seat in 0..4 {
        let mut c = Client::new(
            channel.clone(),
            &settings,
            &format!("t{seat}-{}", uuid()),
            &["player"],
        );
        c.join(&partners, seat).await;
        players.push(c);
    }
    play_match(&partners, &mut players).await;
    let (code, told, said) = okeyctl(
        &players[0].token,
        &["replay", &partners, "--hand", "1", "--table-url", &url],
    )
    .await;
    assert_eq!(code, 0, "{said}");
    let total = |seat: usize| -> i64 {
        let line = told
            .lines()
            .find(|l| l.contains(&format!("seat {seat}'s match total:")))
            .unwrap_or_else(|| panic!("seat {seat}'s total is told: {told}"));
        line.rsplit("= ")
            .next()
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    for team in 0..2 {
        let line = format!(
            "team {team} (seats {team} and {}): match total {}",
            team + 2,
            total(team) + total(team + 2)
        );
        assert!(told.contains(&line), "{line} in {told}");
    }
    let (_, classic, _) = okeyctl(
        &token,
        &["replay", &table, "--hand", "1", "--table-url", &url],
    )
    .await;
    assert!(
        !classic.contains("team 0"),
        "no teams without partners: {classic}"
    );

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_in_play_is_told_and_exported_to_support_up_to_its_latest_event_not_verified() {
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
    let (table, mut clients) = seated_table(channel.clone(), &settings, 1).await;
    play_moves(&table, &mut clients, 12).await;
    let support = Client::new(
        channel,
        &settings,
        &format!("support-{}", uuid()),
        &["support"],
    );
    let version = clients[0].table(&table).await.unwrap().version;
    let hand = clients[0].view(&table).await.unwrap().hand_number;
    assert_eq!(hand, 1);

    // The library: the hand read in play, its deal from the deal the service shows, every move.
    let fetched = okeyctl::history::fetch(&url, &support.token, &table, 1)
        .await
        .unwrap();
    assert!(!fetched.ended);
    assert_eq!(fetched.last_version(), version as u64);
    let deals = fetched.deals().unwrap();
    assert!(deals.finished.is_empty());
    let live = deals.in_play.as_ref().expect("the deal in play");
    assert!(matches!(live[0], okey_rules::Event::HandStarted { .. }));
    assert!(!okeyctl::history::has_end(live));
    assert!(live.len() > 12, "{} events", live.len());
    assert_eq!(okey_rules::replay::narrate(live).len(), live.len());

    // `okeyctl replay`: a header saying it is in play, up to which version, and no end.
    let (code, stdout, stderr) = okeyctl(
        &support.token,
        &["replay", &table, "--hand", "1", "--table-url", &url],
    )
    .await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let header = format!("hand 1 is in play: told up to version {version} of {table}");
    assert!(
        stdout.lines().next().unwrap().starts_with(&header),
        "{stdout}"
    );
    assert!(stdout.contains("HandStarted"), "{stdout}");
    assert!(!stdout.contains("HandEnded"), "{stdout}");
    assert_eq!(stdout.lines().count(), live.len() + 1, "{stdout}");
    // Told at table versions (those the ledger and the page name): the last line is the
    // version the header says.
    assert!(
        stdout
            .lines()
            .last()
            .unwrap()
            .starts_with(&format!("v{version} ")),
        "{stdout}"
    );

    // `okeyctl export-hand`: the same events, no hand_ended, said on stderr.
    let dir = std::env::temp_dir().join(format!("okeyctl-live-{}", uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("hand-1.jsonl");
    let (code, stdout, stderr) = okeyctl(
        &support.token,
        &[
            "export-hand",
            &table,
            "1",
            "--table-url",
            &url,
            "-o",
            file.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains(&header), "{stderr}");
    assert!(stderr.contains("has no hand_ended"), "{stderr}");
    let written = okeyctl::replay::load_events(&file).unwrap();
    assert_eq!(&written, live);
    // Read back, it is not taken for a finished hand.
    let (code, stdout, stderr) = okeyctl("", &["replay", file.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout
            .lines()
            .next()
            .unwrap()
            .starts_with("this hand has no end here (exported while in play"),
        "{stdout}"
    );
    assert!(!stdout.contains("HandEnded"), "{stdout}");

    // `okeyctl verify` cannot check a hand in play: it says so and checks nothing (exit 2), with
    // a support token as with a player's (who may not read it before its end).
    let (code, printed) = verify_binary(&url, &support.token, &table, 1).await;
    assert_eq!(code, 2, "{printed}");
    assert!(printed.contains("cannot verify"), "{printed}");
    assert!(printed.contains("it is in play"), "{printed}");
    assert!(!printed.contains("verified: hand 1"), "{printed}");
    let error = okeyctl::verify::run(&url, &support.token, &table, 1)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("in play"), "{error}");
    let (code, printed) = verify_binary(&url, &clients[0].token, &table, 1).await;
    assert_eq!(code, 2, "{printed}");
    assert!(
        printed.contains("hand 1 is still being played"),
        "{printed}"
    );

    // A hand never dealt is said to be so, for replay and export-hand alike.
    for args in [
        vec!["replay", table.as_str(), "--hand", "2"],
        vec!["export-hand", table.as_str(), "2"],
    ] {
        let mut args = args;
        args.extend(["--table-url", url.as_str()]);
        let (code, stdout, stderr) = okeyctl(&support.token, &args).await;
        assert_eq!(code, 2, "nothing to tell: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!("{table} hand 2 was never dealt")),
            "{stderr}"
        );
    }

    // Once the match has ended, the hand is told whole, and what was exported in play is where
    // it started.
    play_match(&table, &mut clients).await;
    let (code, stdout, stderr) = okeyctl(
        &support.token,
        &["replay", &table, "--hand", "1", "--table-url", &url],
    )
    .await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("is in play"), "{stdout}");
    let ended = okeyctl::history::fetch(&url, &support.token, &table, 1)
        .await
        .unwrap();
    assert!(ended.ended);
    // The end at its table version, then every seat's match total from 0.
    let end_version = ended.last_version();
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with(&format!("v{end_version} ")) && l.contains("HandEnded")),
        "{stdout}"
    );
    for seat in 0..4 {
        assert!(
            stdout.contains(&format!("seat {seat}'s match total: 0 + hand score")),
            "{stdout}"
        );
    }
    let finished = ended.finished_deals().unwrap();
    let whole = finished.last().unwrap();
    assert!(okeyctl::history::has_end(whole));
    assert_eq!(&whole[..written.len()], &written[..]);
    let (code, printed) = verify_binary(&url, &clients[1].token, &table, 1).await;
    assert_eq!(code, 0, "{printed}");

    std::fs::remove_dir_all(&dir).ok();
    let _ = stop.send(());
    let _ = server.await;
}
