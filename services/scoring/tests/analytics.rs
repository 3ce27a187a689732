//! The analysts' interface: every example query of docs/analytics.md runs as the read-only role
//! `okey_analyst` against a ledger filled by a real match, and the role is refused writes and
//! reads outside the `analytics` schema.

mod common;

use std::time::Duration;

use common::*;
use okey_platform::testing::TestInfra;
use sqlx::{Connection, PgConnection};

const GUIDE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../docs/analytics.md"
));

/// The ```sql blocks of the guide.
fn example_queries() -> Vec<String> {
    GUIDE
        .split("```sql\n")
        .skip(1)
        .map(|rest| {
            rest.split("```")
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned()
        })
        .collect()
}

fn denied(e: sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == "42501")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_analyst_role_runs_every_example_and_nothing_else() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let queries = example_queries();
    assert!(
        queries.len() >= 8,
        "the guide has {} examples",
        queries.len()
    );
    let stack = Stack::start(&infra).await;
    let env = stack.scoring_env.clone();
    let scoring = stack.scoring(&env).await;
    let pool = Stack::scoring_pool(&env).await;
    let person = uuid();
    let table = bots_match(&stack, Some(&person), rules(3)).await;
    wait_for_match_end(&pool, &table, Duration::from_secs(180)).await;

    let url = env
        .iter()
        .find(|(k, _)| k == "OKEY_DATABASE__URL")
        .map(|(_, v)| v.clone())
        .unwrap();
    let mut analyst = PgConnection::connect(&url).await.unwrap();
    sqlx::query("SET ROLE okey_analyst")
        .execute(&mut analyst)
        .await
        .unwrap();
    for query in &queries {
        sqlx::query(sqlx::AssertSqlSafe(query.clone()))
            .fetch_all(&mut analyst)
            .await
            .unwrap_or_else(|e| panic!("{query}\n{e}"));
    }
    // What the views show is the ledger: the person's seat adds up to its total.
    let id = uuid::Uuid::parse_str(table.trim_start_matches("tables/")).unwrap();
    let (sum, total): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT sum(points)::bigint FROM analytics.ledger WHERE match_id = $1 AND seat = 0),
                (SELECT total FROM analytics.match_results WHERE match_id = $1 AND seat = 0)",
    )
    .bind(id)
    .fetch_one(&mut analyst)
    .await
    .unwrap();
    assert_eq!(sum, total);
    let hands: i64 = sqlx::query_scalar("SELECT count(*) FROM analytics.hands WHERE match_id = $1")
        .bind(id)
        .fetch_one(&mut analyst)
        .await
        .unwrap();
    assert!(hands >= 3);

    // No writes, no reads of the service's own tables.
    for statement in [
        "INSERT INTO public.ledger_entries (event_id, table_version, match_id, hand_number,
             dealt_version, seat, kind, reason, points, event_time)
         SELECT event_id, table_version, match_id, hand_number, dealt_version, seat, kind,
             reason, points, event_time FROM analytics.ledger LIMIT 1",
        "INSERT INTO analytics.matches (match_id) VALUES (gen_random_uuid())",
        "DELETE FROM public.ledger_entries",
        "UPDATE public.hands SET verified = true",
        "SELECT count(*) FROM public.applied_events",
        "SELECT count(*) FROM public.table_progress",
        "CREATE TABLE analytics.mine (x int)",
    ] {
        let e = sqlx::query(statement)
            .execute(&mut analyst)
            .await
            .expect_err(statement);
        assert!(denied(e), "{statement}: not a permission error");
    }
    analyst.close().await.unwrap();
    scoring.stop().await;
    pool.close().await;
    stack.stop().await;
}
