//! Skill-aware quick play on a manual clock: matchmaking asks the real scoring service for each
//! new ticket's rating (GetRating with its service token; it never reads scoring's database), and
//! tickets of far-apart ratings are not matched while their windows do not reach each other —
//! four new players who arrive later meet at once, past them — and are matched once the windows
//! open; without scoring a ticket searches at a new player's rating.

mod common;

use std::time::Duration;

use chrono::Utc;
use common::*;
use matchmaking::clock::ManualClock;
use okey_platform::testing::{InProcess, TestInfra};
use okey_platform::{ServiceKind, Settings};
use okey_proto::v1 as pb;
use okey_rules::{MatchLength, Preset};
use okey_table::{Admission, Origin, Published, TableEvent};
use scoring::store::{self, Incoming, Item};
use sqlx::PgPool;

/// The real scoring service in this process, trusting the tokens accounts signs, and its
/// database.
async fn scoring(infra: &TestInfra, backends: &Backends) -> (InProcess, PgPool) {
    let mut env = infra.env_for(ServiceKind::Scoring, 0);
    env.push(("OKEY_TOKENS__PUBLIC_KEYS".into(), String::new()));
    env.push(("OKEY_TOKENS__KEYS_URL".into(), backends.accounts.url()));
    let url = env
        .iter()
        .find(|(k, _)| k == "OKEY_DATABASE__URL")
        .map(|(_, v)| v.clone())
        .unwrap();
    let settings = Settings::from_sources(ServiceKind::Scoring, None, env).unwrap();
    let app = scoring::startup::Application::build(&settings)
        .await
        .expect("scoring starts");
    let port = app.local_addr().port();
    let service = InProcess::spawn(port, |stop| app.run_until_stopped(stop));
    (service, PgPool::connect(&url).await.unwrap())
}

/// `player` plays three rated matches against new players, first each time (`won`) or last,
/// applied as scoring's consumer applies table events.
async fn rate(pool: &PgPool, player: &str, won: bool) {
    for m in 0..3 {
        let table = uuid::Uuid::new_v4();
        let mut rules = Preset::Classic.rules();
        rules.match_length = MatchLength::Hands(1);
        let seats: [Option<String>; 4] = std::array::from_fn(|s| {
            Some(if s == 0 {
                player.to_owned()
            } else {
                format!("players/{}", uuid())
            })
        });
        let totals = if won {
            [0, 100, 200, 300]
        } else {
            [300, 0, 100, 200]
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
                winners: vec![if won { 0 } else { 1 }],
            },
        ];
        let time = Utc::now() - chrono::Duration::minutes(10 - m);
        let bytes: Vec<Vec<u8>> = events
            .iter()
            .enumerate()
            .map(|(v, e)| {
                Published::public(
                    format!("tables/{table}"),
                    v as u64 + 1,
                    uuid(),
                    time.to_rfc3339(),
                    e,
                )
                .encode()
            })
            .collect();
        let incoming: Vec<Incoming> = bytes.iter().map(|b| Incoming::decode(b).unwrap()).collect();
        let items: Vec<Item<'_>> = incoming
            .iter()
            .zip(&bytes)
            .map(|(i, b)| Item::Event(i, b))
            .collect();
        store::apply_batch(pool, &items).await.expect("applied");
    }
}

async fn points(pool: &PgPool, player: &str) -> i32 {
    sqlx::query_scalar("SELECT points FROM ratings WHERE player_id = $1")
        .bind(player)
        .fetch_one(pool)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn far_apart_ratings_are_matched_only_once_the_windows_reach_each_other() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let backends = Backends::start(&infra).await;
    let (scoring, pool) = scoring(&infra, &backends).await;
    let guests = backends.guests(8).await;
    // Two strong players (three wins each) and two weak ones (three last places).
    for (g, won) in guests[..4].iter().zip([true, true, false, false]) {
        rate(&pool, &g.player, won).await;
    }
    let high = points(&pool, &guests[0].player).await;
    let low = points(&pool, &guests[2].player).await;
    assert_eq!(high, points(&pool, &guests[1].player).await);
    assert_eq!(low, points(&pool, &guests[3].player).await);
    assert!(
        high - 1500 > 250 && 1500 - low > 250,
        "far from a new player's 1500 and from each other: {high}, {low}"
    );

    // Windows in minutes, so the real time the test takes never moves them on.
    let clock = ManualClock::new();
    let scoring_url = scoring.url();
    let mm = backends
        .matchmaking(
            &clock,
            &[
                ("OKEY_MATCHMAKING__SCORING_URL", scoring_url.as_str()),
                ("OKEY_MATCHMAKING__RATING_WINDOWS", "0:100,60:250,120:any"),
                ("OKEY_MATCHMAKING__TICKET_TTL_SECS", "3600"),
            ],
        )
        .await;
    let mut api = mm_client(mm.port).await;
    let mut far = Vec::new();
    for g in &guests[..4] {
        far.push(find(&mut api, g, one_hand("classic"), false).await.unwrap());
    }

    // At 60 s the far tickets' windows are ±250: four new players arrive and meet at once. The
    // matcher formed their table with the far tickets ahead of them in the queue, and left those.
    clock.advance(Duration::from_secs(60));
    let mut near = Vec::new();
    for g in &guests[4..] {
        near.push(find(&mut api, g, one_hand("classic"), false).await.unwrap());
    }
    let mut tables = Vec::new();
    for (g, t) in guests[4..].iter().zip(&near) {
        let t = wait_ticket(&mut api, g, &t.name, Duration::from_secs(60), is_matched).await;
        tables.push(t.table);
    }
    assert!(tables.windows(2).all(|w| w[0] == w[1]), "{tables:?}");
    for (g, t) in guests[..4].iter().zip(&far) {
        let now = api
            .get_ticket(g.req(pb::GetTicketRequest {
                name: t.name.clone(),
            }))
            .await
            .unwrap()
            .into_inner()
            .ticket
            .unwrap();
        assert_eq!(
            now.state,
            pb::TicketState::Searching as i32,
            "not matched before the window reaches the others: {now:?}"
        );
    }

    // At 120 s anyone: the four far-apart tickets make one table.
    clock.advance(Duration::from_secs(60));
    let mut tables = Vec::new();
    for (g, t) in guests[..4].iter().zip(&far) {
        let t = wait_ticket(&mut api, g, &t.name, Duration::from_secs(60), is_matched).await;
        tables.push(t.table);
    }
    assert!(tables.windows(2).all(|w| w[0] == w[1]), "{tables:?}");

    // Scoring gone: FindTable still opens the ticket, at a new player's 1500 (as matchmaking.proto
    // says), for a player whose rating is far from it, and without waiting past the 3 s bound.
    scoring.stop().await;
    let asked = std::time::Instant::now();
    let fallback = find(&mut api, &guests[0], one_hand("classic"), false)
        .await
        .expect("a ticket without scoring");
    assert!(
        asked.elapsed() < Duration::from_secs(4),
        "{:?}",
        asked.elapsed()
    );
    let id = uuid::Uuid::parse_str(fallback.name.strip_prefix("tickets/").unwrap()).unwrap();
    let mm_pool = PgPool::connect(backends.matchmaking_settings(&[]).database.url.expose())
        .await
        .unwrap();
    let rating: i32 = sqlx::query_scalar("SELECT rating FROM tickets WHERE ticket_id = $1")
        .bind(id)
        .fetch_one(&mm_pool)
        .await
        .unwrap();
    assert_eq!(
        rating, 1500,
        "searched at a new player's rating, not {high}"
    );
    mm_pool.close().await;

    mm.stop().await;
    pool.close().await;
    backends.stop().await;
}
