//! Who sat where in a match, as the table shows it: a bot seat is listed by the table's own name
//! for that bot (`bots/{level}-{seat}`) and display name, in GetMatchResult and
//! ListMatchResults alike; matches recorded before scoring kept those names get them from their
//! table's fold when the migration runs.

mod common;

use std::time::Duration;

use common::*;
use okey_platform::auth::Role;
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use sqlx::migrate::MigrateDatabase;
use sqlx::{PgPool, Postgres};

fn admin<T>(message: T) -> tonic::Request<T> {
    req(message, "admin", &[Role::Admin])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matchs_bot_seats_are_named_and_shown_as_the_table_shows_them() {
    let Some(Scoring {
        stack,
        service: scoring,
        pool,
        ..
    }) = Scoring::start().await
    else {
        return;
    };
    // A person in seat 0 (who leaves: a bot plays the seat for them), an easy bot in seat 1 and
    // the default bots (the strongest) in the others.
    let person = uuid();
    let mut tables = stack.table_client().await;
    let table = tables
        .create_table(admin(pb::CreateTableRequest {
            request_id: uuid(),
            rules: Some(rules(1)),
            seats: vec![
                pb::SeatAssignment {
                    seat: 0,
                    occupant: Some(pb::seat_assignment::Occupant::Player(format!(
                        "players/{person}"
                    ))),
                    ..Default::default()
                },
                pb::SeatAssignment {
                    seat: 1,
                    occupant: Some(pb::seat_assignment::Occupant::Bot(
                        pb::BotLevel::Easy as i32,
                    )),
                    ..Default::default()
                },
            ],
            empty_seat_bots: Some(pb::BotLevel::Unspecified as i32),
            ..Default::default()
        }))
        .await
        .expect("table created")
        .into_inner()
        .table
        .unwrap();
    tables
        .leave_seat(req(
            pb::LeaveSeatRequest {
                request_id: uuid(),
                table: table.name.clone(),
            },
            &person,
            &[Role::Player],
        ))
        .await
        .expect("the person leaves; a bot plays for them");
    wait_for_match_end(&pool, &table.name, Duration::from_secs(120)).await;

    // The table's own word on each bot seat.
    let at_table: Vec<pb::PlayerSummary> = tables
        .get_table(admin(pb::GetTableRequest {
            name: table.name.clone(),
        }))
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .seats
        .into_iter()
        .map(|s| s.player.expect("every seat held"))
        .collect();
    let names: Vec<&str> = at_table[1..].iter().map(|p| p.player.as_str()).collect();
    assert_eq!(names, ["bots/easy-1", "bots/strong-2", "bots/strong-3"]);

    let mut api = scoring_client(scoring.port).await;
    let id = table.name.trim_start_matches("tables/");
    let result = api
        .get_match_result(req(
            pb::GetMatchResultRequest {
                name: format!("matches/{id}"),
            },
            &person,
            &[Role::Player],
        ))
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    let listed = api
        .list_match_results(req(
            pb::ListMatchResultsRequest {
                parent: "players/me".into(),
                ..Default::default()
            },
            &person,
            &[Role::Player],
        ))
        .await
        .unwrap()
        .into_inner()
        .results;
    assert_eq!(listed.len(), 1);
    for (read, seats) in [
        ("GetMatchResult", &result.seats),
        ("ListMatchResults", &listed[0].seats),
    ] {
        assert_eq!(seats[1..], at_table[1..], "{read}");
        // The seat stays its player's for the match (a bot only finished it for them).
        assert_eq!(seats[0].player, format!("players/{person}"), "{read}");
        assert!(!seats[0].bot, "{read}");
    }

    scoring.stop().await;
    pool.close().await;
    stack.stop().await;
}

#[tokio::test]
async fn matches_recorded_before_bot_names_were_kept_get_them_from_their_tables_fold() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let url = infra.unique_database_url("scoring");
    Postgres::create_database(&url).await.unwrap();
    let pool = PgPool::connect(&url).await.unwrap();
    let migrator = &scoring::startup::MIGRATOR;
    let before = migrator
        .iter()
        .rev()
        .find(|m| m.description.as_ref() == "bot names")
        .map(|m| m.version - 1)
        .expect("the migration that keeps bot names");
    migrator.run_to(before, &pool).await.unwrap();

    // Two matches as the earlier schema held them, each with its table's fold: one whose fold
    // kept the bot names, one whose fold is older than that.
    let (named, unnamed) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    for (id, tally) in [
        (
            named,
            serde_json::json!({
                "bots": [false, true, false, true],
                "bot_names": [null, "bots/easy-1", null, "bots/strong-3"],
            }),
        ),
        (
            unnamed,
            serde_json::json!({ "bots": [false, true, false, true] }),
        ),
    ] {
        sqlx::query(
            "INSERT INTO matches (match_id, origin, preset, partners, rules, seat_players,
                 seat_bots, seat_names, created_at)
             VALUES ($1, 'operator', 'classic', false, '{}',
                 ARRAY['players/a', NULL, 'players/b', NULL],
                 ARRAY[false, true, false, true], ARRAY[NULL, NULL, NULL, NULL]::text[], now())",
        )
        .bind(id)
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query("INSERT INTO table_progress (table_id, version, tally) VALUES ($1, 9, $2)")
            .bind(id)
            .bind(tally)
            .execute(&pool)
            .await
            .unwrap();
    }

    migrator.run(&pool).await.unwrap();
    let bot_names = |id| {
        sqlx::query_scalar::<_, Vec<Option<String>>>(
            "SELECT seat_bot_names FROM matches WHERE match_id = $1",
        )
        .bind(id)
        .fetch_one(&pool)
    };
    assert_eq!(
        bot_names(named).await.unwrap(),
        [
            None,
            Some("bots/easy-1".into()),
            None,
            Some("bots/strong-3".into())
        ]
    );
    assert_eq!(bot_names(unnamed).await.unwrap(), [None, None, None, None]);

    pool.close().await;
    Postgres::drop_database(&url).await.unwrap();
}
