//! What scoring does with events it should not trust: a real match published again under another
//! table with one hand's score changed is caught by the re-verification; a cancelled hand voids
//! its penalties in the ledger; a message that is not a table event is set aside and the table's
//! later events still apply. The events are published on the table service's own stream, in its
//! own envelope (`okey_table::Published`).

mod common;

use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream;
use common::*;
use okey_platform::auth::Role;
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use okey_rules::matches::HandResult;
use okey_rules::{HandEnd, Outcome, Preset};
use okey_table::{Admission, Published, TableEvent, hex, seed_hash};

struct Publisher {
    js: jetstream::Context,
    prefix: String,
}

impl Publisher {
    async fn new(stack: &Stack) -> Publisher {
        let client = async_nats::connect(&stack.infra.nats_url).await.unwrap();
        Publisher {
            js: jetstream::new(client),
            prefix: stack.table_settings.nats.subject_prefix.clone(),
        }
    }

    async fn raw(&self, table: uuid::Uuid, version: u64, payload: Vec<u8>) {
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Msg-Id", uuid().as_str());
        headers.insert("Okey-Table", table.to_string().as_str());
        headers.insert("Okey-Version", version.to_string().as_str());
        self.js
            .publish_with_headers(
                format!("{}.table.{table}.events", self.prefix),
                headers,
                payload.into(),
            )
            .await
            .unwrap()
            .await
            .unwrap();
    }

    async fn event(&self, table: uuid::Uuid, version: u64, event: &TableEvent) {
        let published = Published::public(
            format!("tables/{table}"),
            version,
            uuid(),
            chrono::Utc::now().to_rfc3339(),
            event,
        );
        self.raw(table, version, published.encode()).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_score_is_caught_and_a_cancelled_hand_voids_its_penalties() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let stack = Stack::start(&infra).await;
    let env = stack.scoring_env.clone();
    let scoring = stack.scoring(&env).await;
    let pool = Stack::scoring_pool(&env).await;
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
        },
        TableEvent::HandDealt {
            hand_number: 1,
            first: 0,
            indicator: deal.indicator,
            seed_sha256: seed_hash(&seed),
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
