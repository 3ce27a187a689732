//! The event store's group commit against real PostgreSQL: appends that arrive together are
//! stored by one statement, and when one of them cannot be stored (a taken version, a retried
//! request id) each is stored or refused on its own, exactly as without grouping.

mod common;

use common::*;
use okey_platform::testing::TestInfra;
use sqlx::types::Uuid;
use table::domain::TableEvent;
use table::ids::random_uuid;
use table::store::{Append, AppendError, Metadata, Store};

fn seat_taken(seat: u8) -> TableEvent {
    TableEvent::SeatTaken {
        seat,
        player: format!("players/p{seat}"),
        name: None,
    }
}

/// What one append asks for, owned so many can be in flight at once.
struct Ask {
    table: Uuid,
    expected: u64,
    events: Vec<TableEvent>,
    key: String,
}

async fn append(store: &Store, metadata: &Metadata, ask: &Ask) -> Result<u64, AppendError> {
    let stored = store
        .append(Append {
            table_id: ask.table,
            expected: ask.expected,
            events: &ask.events,
            metadata,
            request: Some((&ask.key, b"answer")),
            seeds: &[],
            revealed: None,
            create: None,
        })
        .await?;
    let versions: Vec<u64> = stored.iter().map(|r| r.version).collect();
    let wanted: Vec<u64> = (1..=ask.events.len() as u64)
        .map(|i| ask.expected + i)
        .collect();
    assert_eq!(versions, wanted, "stored in version order");
    assert!(
        stored.windows(2).all(|w| w[0].position < w[1].position),
        "positions follow versions"
    );
    Ok(versions.last().copied().unwrap_or(ask.expected))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_commit_stores_each_append_and_answers_each_conflict_on_its_own() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    // A database of its own, migrated like the service's, with no publisher emptying the outbox.
    let (pool, store) = store_without_publisher(&settings(&infra)).await;
    let metadata = Metadata {
        actor: "players/p0".into(),
        ..Metadata::default()
    };

    // Round 1: 40 tables, one append each (one or two events), all at once.
    let tables: Vec<Uuid> = (0..40).map(|_| random_uuid()).collect();
    let first: Vec<Ask> = tables
        .iter()
        .enumerate()
        .map(|(i, &table)| Ask {
            table,
            expected: 0,
            events: (0..1 + i % 2).map(|s| seat_taken(s as u8)).collect(),
            key: format!("first-{i}"),
        })
        .collect();
    let results =
        futures_util::future::join_all(first.iter().map(|a| append(&store, &metadata, a))).await;
    for r in &results {
        assert!(r.is_ok(), "{r:?}");
    }
    let grouped = store.grouped_appends();
    assert!(
        grouped >= 20,
        "most of 40 appends sent at once share a group commit: {grouped}"
    );

    // Round 2, all at once again: every table gets a good append, and besides
    // - tables 0..10 a racing append for the same version (taken: a conflict),
    // - tables 10..20 a retry of round 1's request id (already handled: a duplicate).
    let mut second = Vec::new();
    for (i, &table) in tables.iter().enumerate() {
        let head = 1 + (i % 2) as u64;
        second.push(Ask {
            table,
            expected: head,
            events: vec![seat_taken(3)],
            key: format!("second-{i}"),
        });
        if i < 10 {
            second.push(Ask {
                table,
                expected: head,
                events: vec![seat_taken(2), seat_taken(1)],
                key: format!("racer-{i}"),
            });
        } else if i < 20 {
            second.push(Ask {
                table,
                expected: head + 1,
                events: vec![seat_taken(2)],
                key: format!("first-{i}"),
            });
        }
    }
    let results =
        futures_util::future::join_all(second.iter().map(|a| append(&store, &metadata, a))).await;
    let (mut conflicts, mut duplicates) = (0, 0);
    for (ask, r) in second.iter().zip(&results) {
        match r {
            Ok(_) => assert!(ask.key.starts_with("second-"), "{} was stored", ask.key),
            Err(AppendError::Conflict) if ask.key.starts_with("racer-") => conflicts += 1,
            Err(AppendError::Duplicate) => {
                assert!(ask.key.starts_with("first-"), "{}", ask.key);
                duplicates += 1;
            }
            Err(e) => panic!("{}: {e:?}", ask.key),
        }
    }
    assert_eq!((conflicts, duplicates), (10, 10));

    // The log holds exactly the stored appends: 1..head+1 per table, no gap, nothing refused.
    for (i, &table) in tables.iter().enumerate() {
        let events = store.load_after(table, 0, 100).await.unwrap();
        let versions: Vec<u64> = events.iter().map(|e| e.version).collect();
        let head = 2 + (i % 2) as u64;
        assert_eq!(versions, (1..=head).collect::<Vec<_>>(), "table {i}");
        assert_eq!(events.last().unwrap().event, seat_taken(3), "table {i}");
    }
    // Every stored event is queued for the outbox, and nothing refused is.
    let (queued, stored): (i64, i64) =
        sqlx::query_as("SELECT (SELECT count(*) FROM outbox), (SELECT count(*) FROM events)")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((queued, stored), (100, 100));
    let handled: i64 = sqlx::query_scalar("SELECT count(*) FROM handled_commands")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(handled, 80);
    pool.close().await;
}
