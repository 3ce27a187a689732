//! `okeyctl demo` against the real accounts and table services, in-process on free ports over the
//! real PostgreSQL, NATS and Redis, with bots at pace 0: the match ends, what it prints is what the
//! event store holds, every hand file (fetched through GetHandHistory) replays, and every hand
//! passes `okeyctl verify`'s check.

use std::path::PathBuf;
use std::time::Duration;

use okey_platform::testing::{TEST_SIGNING_KEY_PEM, TestInfra};
use okey_platform::{ServiceKind, Settings};
use okey_proto::v1 as pb;
use okeyctl::demo::{Demo, score_row};
use sqlx::Row;

type Stop = tokio::sync::oneshot::Sender<()>;

/// The environment of a test service, with `overrides` replacing (or adding) variables.
fn env(
    infra: &TestInfra,
    service: ServiceKind,
    overrides: &[(&str, String)],
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = infra
        .env_for(service, 0)
        .into_iter()
        .filter(|(k, _)| !overrides.iter().any(|(o, _)| o == k))
        .collect();
    env.extend(overrides.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
    env
}

async fn spawn_accounts(env: Vec<(String, String)>) -> (u16, Stop) {
    let settings = Settings::from_sources(ServiceKind::Accounts, None, env).unwrap();
    let app = accounts::startup::Application::build(&settings)
        .await
        .unwrap();
    let port = app.local_addr().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(app.run_until_stopped(async {
        let _ = stopped.await;
    }));
    (port, stop)
}

async fn spawn_table(env: Vec<(String, String)>) -> (u16, Stop) {
    let settings = Settings::from_sources(ServiceKind::Table, None, env).unwrap();
    let app = table::startup::Application::build(&settings).await.unwrap();
    let port = app.local_addr().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(app.run_until_stopped(async {
        let _ = stopped.await;
    }));
    (port, stop)
}

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "okeyctl-demo-test-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_plays_a_match_and_prints_the_stored_totals() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    // Accounts signs with the test key (under its thumbprint `kid`); the table service trusts
    // only what accounts publishes, as in `make run`.
    let (accounts_port, stop_accounts) = spawn_accounts(env(
        &infra,
        ServiceKind::Accounts,
        &[(
            "OKEY_TOKENS__SIGNING_KEYS_PEM",
            TEST_SIGNING_KEY_PEM.to_owned(),
        )],
    ))
    .await;
    let table_env = env(
        &infra,
        ServiceKind::Table,
        &[
            ("OKEY_TOKENS__PUBLIC_KEYS", String::new()),
            (
                "OKEY_TOKENS__KEYS_URL",
                format!("http://127.0.0.1:{accounts_port}"),
            ),
            ("OKEY_LIVE__BOT_PACE_MS", "0".to_owned()),
        ],
    );
    let database_url = table_env
        .iter()
        .find(|(k, _)| k == "OKEY_DATABASE__URL")
        .map(|(_, v)| v.clone())
        .unwrap();
    let (table_port, stop_table) = spawn_table(table_env).await;

    let dir = scratch_dir();
    let key = dir.join("signing-key.pem");
    std::fs::write(&key, TEST_SIGNING_KEY_PEM).unwrap();
    let demo = Demo {
        accounts_url: format!("http://127.0.0.1:{accounts_port}"),
        table_url: format!("http://127.0.0.1:{table_port}"),
        matchmaking_url: None,
        signing_key: key,
        export: true,
        hands_dir: dir.join("hands"),
        preset: "classic".to_owned(),
        bots: pb::BotLevel::Hard,
        timeout: Duration::from_secs(45),
        progress: false,
        grpcurl: "grpcurl".to_owned(),
        okeyctl: "cargo run -q -p okeyctl --".to_owned(),
    };
    let mut out = Vec::new();
    let report = tokio::time::timeout(Duration::from_secs(55), okeyctl::demo::run(&demo, &mut out))
        .await
        .expect("the demo finishes within 55 s")
        .unwrap_or_else(|e| panic!("the demo failed: {e:#}\n{}", String::from_utf8_lossy(&out)));
    let printed = String::from_utf8(out).unwrap();

    // What the event store holds for the table.
    let pool = sqlx::PgPool::connect(&database_url).await.unwrap();
    let id = report.table.strip_prefix("tables/").unwrap();
    let rows = sqlx::query(
        "SELECT event_type, payload FROM events WHERE stream_id = $1 \
         AND event_type IN ('HandEnded', 'MatchEnded') ORDER BY version",
    )
    .bind(format!("table-{id}"))
    .fetch_all(&pool)
    .await
    .unwrap();
    let totals_of = |payload: &serde_json::Value| -> Vec<i32> {
        payload["totals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap() as i32)
            .collect()
    };
    let stored_hands: Vec<Vec<i32>> = rows
        .iter()
        .filter(|r| r.get::<String, _>("event_type") == "HandEnded")
        .map(|r| totals_of(&r.get::<serde_json::Value, _>("payload")))
        .collect();
    let matches: Vec<serde_json::Value> = rows
        .iter()
        .filter(|r| r.get::<String, _>("event_type") == "MatchEnded")
        .map(|r| r.get("payload"))
        .collect();
    assert_eq!(matches.len(), 1, "the match ended once:\n{printed}");
    let stored_final = totals_of(&matches[0]);
    let stored_winners: Vec<i32> = matches[0]["winners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap() as i32)
        .collect();

    // Classic is five hands (more if one was void and dealt again).
    assert!(stored_hands.len() >= 5, "{printed}");
    assert_eq!(report.hands.len(), stored_hands.len());
    for (hand, stored) in report.hands.iter().zip(&stored_hands) {
        assert_eq!(&hand.totals, stored, "hand {}", hand.number);
    }
    assert_eq!(report.totals, stored_final);
    assert_eq!(report.winners, stored_winners);

    // The printed running totals and final totals are the stored ones, in order.
    let printed_totals: Vec<&str> = printed
        .lines()
        .filter(|l| l.trim_start().starts_with("total "))
        .collect();
    let mut expected: Vec<String> = stored_hands.iter().map(|t| score_row("total", t)).collect();
    expected.push(score_row("total", &stored_final));
    assert_eq!(printed_totals, expected, "{printed}");
    assert!(
        printed.contains("Winner: ") || printed.contains("a draw"),
        "{printed}"
    );
    assert!(
        printed.contains("Signed in through accounts as the guest \"Demo guest\" (players/"),
        "{printed}"
    );
    // The table is introduced with who sits where, and the scores say it too.
    assert!(
        printed.contains(&format!("Table {}", &id[..8])),
        "{printed}"
    );
    for seat in 0..4 {
        assert!(printed.contains(&format!("  seat {seat}  ")), "{printed}");
    }

    // Every finished hand was written, and each replays to the scores the table announced.
    let finished: Vec<_> = report
        .hands
        .iter()
        .filter(|h| h.outcome != "cancelled")
        .collect();
    assert_eq!(report.hand_files.len(), report.hands.len());
    for (hand, file) in report.hands.iter().zip(&report.hand_files) {
        let events = okeyctl::replay::load_events(file).unwrap();
        let Some(okey_rules::Event::HandEnded { end }) = events.last() else {
            panic!("{} does not end with hand_ended", file.display());
        };
        assert_eq!(end.scores.to_vec(), hand.scores, "{}", file.display());
        // The events fold: the replay narrates every one of them.
        assert_eq!(okey_rules::replay::narrate(&events).len(), events.len());
    }
    assert!(!finished.is_empty());
    // `okeyctl verify`'s check passed on every hand of the match.
    let numbers: Vec<i32> = report.hands.iter().map(|h| h.number).collect();
    assert_eq!(report.verified, numbers, "{printed}");
    assert!(printed.contains("verified (okeyctl verify)"), "{printed}");
    // The support-token hint names this run's accounts service and key (not the defaults).
    let hint = okeyctl::demo::support_token_command(&demo);
    assert!(hint.contains(" --accounts http://127.0.0.1:"), "{hint}");
    assert!(hint.contains(" --signing-key "), "{hint}");
    assert!(printed.contains(&format!("  {hint}\n")), "{printed}");

    let _ = stop_table.send(());
    let _ = stop_accounts.send(());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_key_accounts_does_not_sign_with_is_refused() {
    let published = pb::ListPublicKeysResponse {
        keys: vec![pb::PublicKey {
            kid: "some-kid".into(),
            kty: "OKP".into(),
            crv: "Ed25519".into(),
            x: okey_platform::testing::TEST_PUBLIC_X.into(),
            alg: "EdDSA".into(),
            retire_time: None,
        }],
        issuer: "okey-accounts".into(),
        audience: "okey".into(),
    };
    // The test key is published: a token is made under its kid.
    let token = okeyctl::demo::mint_operator_token(
        TEST_SIGNING_KEY_PEM.as_bytes(),
        &published,
        Duration::from_secs(60),
    )
    .unwrap();
    let header = jsonwebtoken::decode_header(&token).unwrap();
    assert_eq!(header.kid.as_deref(), Some("some-kid"));
    // The platform's verifier accepts it, with the admin role.
    let settings =
        Settings::from_sources(ServiceKind::Table, None, Vec::<(String, String)>::new()).unwrap();
    let verifier = okey_platform::auth::TokenVerifier::new(&settings.auth);
    verifier
        .insert_ed25519_key("some-kid", okey_platform::testing::TEST_PUBLIC_X)
        .unwrap();
    let claims = verifier.verify(&token).unwrap();
    assert_eq!(claims.roles, vec!["admin".to_owned()]);
    assert_eq!(claims.sub, okeyctl::demo::OPERATOR);
    // Another key is refused before anything is created.
    let other = accounts::keys::generate_pem().unwrap();
    let error =
        okeyctl::demo::mint_operator_token(other.as_bytes(), &published, Duration::from_secs(60))
            .unwrap_err();
    assert!(
        error.to_string().contains("does not sign with this key"),
        "{error}"
    );
}

/// The printed support-token command names the run's own accounts service and signing key when
/// they are not `okeyctl token`'s defaults (moved ports, another run directory), and only then.
#[test]
fn the_support_token_hint_names_the_runs_accounts_and_key() {
    let demo = |accounts: &str, key: &str| Demo {
        accounts_url: accounts.to_owned(),
        table_url: "http://127.0.0.1:50053".to_owned(),
        matchmaking_url: None,
        signing_key: PathBuf::from(key),
        export: false,
        hands_dir: PathBuf::from(".run/demo"),
        preset: "classic".to_owned(),
        bots: pb::BotLevel::Hard,
        timeout: Duration::from_secs(1),
        progress: false,
        grpcurl: "grpcurl".to_owned(),
        okeyctl: "cargo run -q -p okeyctl --".to_owned(),
    };
    let default = okeyctl::demo::default_signing_key().to_str().unwrap();
    assert_eq!(
        okeyctl::demo::support_token_command(&demo(okeyctl::demo::DEFAULT_ACCOUNTS_URL, default)),
        "cargo run -q -p okeyctl -- token --role support"
    );
    // As deploy/demo.sh passes them with OKEY_RUN_DIR=/tmp/x and OKEY_ACCOUNTS_PORT=51051.
    assert_eq!(
        okeyctl::demo::support_token_command(&demo(
            "http://127.0.0.1:51051",
            "/tmp/x/dev-signing-key.pem"
        )),
        "cargo run -q -p okeyctl -- token --role support --accounts http://127.0.0.1:51051 \
         --signing-key /tmp/x/dev-signing-key.pem"
    );
    assert_eq!(
        okeyctl::demo::support_token_command(&demo(
            "http://127.0.0.1:50051/",
            "/tmp/my run/key.pem"
        )),
        "cargo run -q -p okeyctl -- token --role support --signing-key '/tmp/my run/key.pem'"
    );
}
