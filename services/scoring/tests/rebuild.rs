//! The operator's rebuild: `scoring --rebuild` fills an empty database from the table events the
//! stream holds, row for row what the live service wrote, while the live service goes on; a
//! database that already holds a ledger is refused and left as it was.

mod common;

use std::process::{Command, Output};
use std::time::Duration;

use common::*;
use okey_platform::testing::TestInfra;

/// Runs the binary with `--rebuild` on `env` (blocking, on a thread of its own).
async fn rebuild(env: &[(String, String)]) -> Output {
    let env = env.to_vec();
    tokio::task::spawn_blocking(move || {
        Command::new(BINARY)
            .envs(env)
            .env("OKEY_SERVER__PORT", "0")
            .arg("--rebuild")
            .output()
            .expect("the binary runs")
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rebuild_command_fills_an_empty_database_row_for_row() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let stack = Stack::start(&infra).await;
    let live = stack.scoring_env.clone();
    let scoring = stack.scoring(&live).await;
    let pool = Stack::scoring_pool(&live).await;
    let table = bots_match(&stack, Some(&uuid()), rules(2)).await;
    wait_for_match_end(&pool, &table, Duration::from_secs(180)).await;

    let empty = stack.fresh_scoring_env();
    let done = rebuild(&empty).await;
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(
        done.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(stdout.contains("rebuilt the ledger"), "{stdout}");
    let rebuilt = Stack::scoring_pool(&empty).await;
    let rows = projection_rows(&pool, &table).await;
    // Two hands: eight hand scores (and any penalties), two hands, the person's result.
    assert!(rows.len() >= 11, "{rows:?}");
    assert_eq!(rows, projection_rows(&rebuilt, &table).await);
    let applied = |pool: sqlx::PgPool| async move {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM applied_events")
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    assert_eq!(applied(pool.clone()).await, applied(rebuilt.clone()).await);

    // Into a database that holds a ledger: refused, nothing written.
    let again = rebuild(&empty).await;
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("not empty"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(rows, projection_rows(&rebuilt, &table).await);

    scoring.stop().await;
    pool.close().await;
    rebuilt.close().await;
    stack.stop().await;
}
