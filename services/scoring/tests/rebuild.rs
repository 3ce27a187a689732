//! The operator's rebuild: `scoring --rebuild` fills an empty database from the table events the
//! stream holds, row for row what the live service wrote (the ledger; the ratings, their changes,
//! the period scores and the standings to the last bit), while the live service goes on; a
//! database that already holds a ledger is refused and left as it was.

mod common;

use std::process::{Command, Output};
use std::time::Duration;

use common::*;
use okey_rules::{MatchLength, Preset};
use okey_table::{Admission, Origin, TableEvent};
use sqlx::PgPool;

/// Rated matches of twelve players, published as the table would (TableCreated, MatchEnded),
/// each ending 1 s after the one before, but the last published ends first; returns the tables.
async fn rated_matches(stack: &Stack) -> Vec<String> {
    let publisher = Publisher::new(stack).await;
    let players: Vec<String> = (0..12).map(|_| format!("players/{}", uuid())).collect();
    let start = chrono::Utc::now() - chrono::Duration::seconds(60);
    let mut tables = Vec::new();
    for m in 0..8usize {
        let table = uuid::Uuid::new_v4();
        let seats: [Option<String>; 4] =
            std::array::from_fn(|s| Some(players[(m * 3 + s * 5) % 12].clone()));
        let mut rules = Preset::Classic.rules();
        rules.partners = m % 2 == 1;
        rules.match_length = MatchLength::Hands(1);
        let totals: [i64; 4] = std::array::from_fn(|s| ((m * 7 + s * 13) % 5) as i64 * 20);
        let ended = if m == 7 {
            start
        } else {
            start + chrono::Duration::seconds(m as i64 + 1)
        };
        let events = [
            TableEvent::TableCreated {
                rules,
                seats,
                admission: Admission {
                    origin: Origin::QuickPlay,
                    ..Admission::default()
                },
                server_seed_sha256: None,
            },
            TableEvent::MatchEnded {
                totals,
                winners: Vec::new(),
            },
        ];
        for (v, event) in events.iter().enumerate() {
            publisher
                .at(table, v as u64 + 1, &uuid(), ended, event)
                .await;
        }
        tables.push(format!("tables/{table}"));
    }
    tables
}

/// The ratings, their changes, the period scores and the standings, as comparable text.
async fn rating_rows(pool: &PgPool) -> Vec<String> {
    let mut rows: Vec<String> = sqlx::query_scalar(
        "SELECT concat_ws('|', player_id, rating::text, uncertainty::text, points, matches, wins,
                last_ended_at)
         FROM ratings ORDER BY player_id",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    rows.extend(
        sqlx::query_scalar::<_, String>(
            "SELECT concat_ws('|', match_id, seat, player_id, rating_before::text,
                    uncertainty_before::text, rating_after::text, uncertainty_after::text)
             FROM rating_changes ORDER BY match_id, seat",
        )
        .fetch_all(pool)
        .await
        .unwrap(),
    );
    rows.extend(
        sqlx::query_scalar::<_, String>(
            "SELECT concat_ws('|', period, starts, player_id, score2, matches, wins)
             FROM period_scores ORDER BY period, starts, player_id",
        )
        .fetch_all(pool)
        .await
        .unwrap(),
    );
    rows.extend(
        sqlx::query_scalar::<_, String>(
            "SELECT concat_ws('|', period, starts, player_id, played, won, total_sum)
             FROM standings ORDER BY period, starts, player_id",
        )
        .fetch_all(pool)
        .await
        .unwrap(),
    );
    rows
}

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
    let Some(Scoring {
        stack,
        service: scoring,
        pool,
        ..
    }) = Scoring::start().await
    else {
        return;
    };
    let table = bots_match(&stack, Some(&uuid()), rules(2)).await;
    wait_for_match_end(&pool, &table, Duration::from_secs(180)).await;
    // Rated matches too (results published as the table would), the last one ending before
    // the one published before it: the live service rates it in its place and rates the later
    // one again; the rebuild gets the same numbers.
    let rated = rated_matches(&stack).await;
    for table in &rated {
        wait_for_match_end(&pool, table, Duration::from_secs(60)).await;
    }

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
    let live_ratings = rating_rows(&pool).await;
    assert!(live_ratings.len() >= 12, "{live_ratings:?}");
    assert_eq!(live_ratings, rating_rows(&rebuilt).await);

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
