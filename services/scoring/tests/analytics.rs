//! The analysts' interface: every example query of docs/analytics.md runs as the read-only role
//! `okey_analyst` against a ledger filled by a real match, the role is refused writes (temporary
//! tables included) and reads outside the `analytics` schema, and every view and column carries
//! the guide's description as a database comment.

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

/// A view of the guide: its name, what a row is, and each column's name and meaning.
type DocumentedView = (String, String, Vec<(String, String)>);

/// The guide's column tables: per view (`### `analytics.x` — what a row is`), what a row is and
/// each column's meaning, in the order of the table.
fn documented_views() -> Vec<DocumentedView> {
    GUIDE
        .split("\n### `analytics.")
        .skip(1)
        .map(|section| {
            let (view, rest) = section.split_once('`').unwrap();
            let heading = rest.lines().next().unwrap().trim_start_matches(" — ");
            let columns = rest
                .lines()
                .take_while(|l| !l.starts_with("## ") && !l.starts_with("### "))
                .filter_map(|l| {
                    let cells: Vec<&str> = l
                        .strip_prefix("| `")?
                        .strip_suffix(" |")?
                        .split(" | ")
                        .collect();
                    let (name, meaning) = (cells.first()?.strip_suffix('`')?, cells.get(2)?);
                    Some((name.to_owned(), (*meaning).to_owned()))
                })
                .collect();
            (view.to_owned(), heading.to_owned(), columns)
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

    // Every view and column says what it holds in the database (`\d+`), as the guide does.
    let views: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT c.relname::text, obj_description(c.oid, 'pg_class')
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'analytics' ORDER BY c.relname",
    )
    .fetch_all(&mut analyst)
    .await
    .unwrap();
    let columns: Vec<(String, String, Option<String>)> = sqlx::query_as(
        "SELECT c.relname::text, a.attname::text, col_description(c.oid, a.attnum)
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'analytics' AND a.attnum > 0 AND NOT a.attisdropped
         ORDER BY c.relname, a.attnum",
    )
    .fetch_all(&mut analyst)
    .await
    .unwrap();
    assert_eq!(views.len(), 7, "{views:?}");
    assert_eq!(columns.len(), 87);
    for (view, description) in &views {
        assert!(
            description.as_deref().is_some_and(|d| !d.trim().is_empty()),
            "analytics.{view} has no description"
        );
    }
    for (view, column, description) in &columns {
        assert!(
            description.as_deref().is_some_and(|d| !d.trim().is_empty()),
            "analytics.{view}.{column} has no description"
        );
    }
    let documented = documented_views();
    let mut names: Vec<&str> = documented.iter().map(|(v, _, _)| v.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        views.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>(),
        "the guide's views"
    );
    for (view, heading, rows) in &documented {
        let (_, description) = views.iter().find(|(v, _)| v == view).unwrap();
        assert!(
            description
                .as_deref()
                .unwrap()
                .to_lowercase()
                .starts_with(heading.as_str()),
            "analytics.{view}: {description:?} does not say the guide's {heading:?}"
        );
        let in_database: Vec<(&str, &str)> = columns
            .iter()
            .filter(|(v, _, _)| v == view)
            .map(|(_, c, d)| (c.as_str(), d.as_deref().unwrap()))
            .collect();
        let in_guide: Vec<(&str, &str)> =
            rows.iter().map(|(c, m)| (c.as_str(), m.as_str())).collect();
        assert_eq!(
            in_database, in_guide,
            "analytics.{view}: database comments and the guide"
        );
    }

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
        "CREATE TABLE public.mine (x int)",
        // PUBLIC's TEMPORARY, revoked on the scoring database (0009).
        "CREATE TEMP TABLE mine (x int)",
    ] {
        let e = sqlx::query(statement)
            .execute(&mut analyst)
            .await
            .expect_err(statement);
        assert!(denied(e), "{statement}: not a permission error");
    }

    // A hand being played stays hidden from the analyst's own conditions too: one that would
    // fail on its rows (a division by zero) is applied only to the rows the views show. The
    // last deal of the match is made to look unfinished, as a hand in play is.
    let (dealt_version,): (i64,) =
        sqlx::query_as("SELECT max(dealt_version) FROM public.hands WHERE match_id = $1")
            .bind(id)
            .fetch_one(&pool)
            .await
            .unwrap();
    sqlx::query(
        "UPDATE public.hands SET ended_at = NULL WHERE match_id = $1 AND dealt_version = $2",
    )
    .bind(id)
    .bind(dealt_version)
    .execute(&pool)
    .await
    .unwrap();
    for view in ["ledger", "hands", "seat_hands"] {
        let probe = format!(
            "SELECT count(*) FROM analytics.{view}
             WHERE 1 / (CASE WHEN match_id = $1 AND dealt_version = $2 THEN 0 ELSE 1 END) = 1"
        );
        let (shown,): (i64,) = sqlx::query_as(sqlx::AssertSqlSafe(probe))
            .bind(id)
            .bind(dealt_version)
            .fetch_one(&mut analyst)
            .await
            .unwrap_or_else(|e| panic!("analytics.{view} let a condition see a hidden hand: {e}"));
        assert!(shown > 0, "analytics.{view} shows the ended hands");
    }
    analyst.close().await.unwrap();
    scoring.stop().await;
    pool.close().await;
    stack.stop().await;
}
