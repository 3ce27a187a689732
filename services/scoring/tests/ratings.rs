//! Ratings through the real consumer: matches with known results, published on the table
//! service's own stream in its own envelope, give exactly the ratings the `skillratings` crate
//! computes for those results in the order the matches ended — four alone, two partner teams, a
//! bot seat at its level's fixed rating, shared places — including a match that arrives after
//! one that ended later; private-room and bot tables move nothing; a match delivered again
//! (the same messages, or a copy under other message ids) changes nothing. The API shows the
//! same numbers (GetRating, ListLeaderboard). The boards' places, summed from the positions
//! triggers keep, are one more than the players ahead counted one by one, whatever was written;
//! players sharing a place are listed by player id as documented. Names and periods in requests
//! are checked (`missing_field`, `invalid_name`, `invalid_period`) before who may read them.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::*;
use okey_platform::auth::Role;
use okey_proto::v1 as pb;
use okey_proto::v1::scoring_service_client::ScoringServiceClient;
use okey_rules::{MatchLength, Preset};
use okey_table::{Admission, Origin, TableEvent};
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};
use sqlx::PgPool;
use tonic_types::StatusExt;
use uuid::Uuid;

/// A match with a known result.
#[derive(Clone)]
struct Known {
    table: Uuid,
    /// `players/{id}`, or a bot's `bots/{level}-{seat}`.
    seats: [String; 4],
    partners: bool,
    private_room: bool,
    totals: [i64; 4],
    winners: Vec<u8>,
    ended: DateTime<Utc>,
    /// Event ids of its two events (kept to deliver them again).
    ids: [String; 2],
}

impl Known {
    fn new(seats: [&str; 4], partners: bool, totals: [i64; 4], ended: DateTime<Utc>) -> Known {
        // The winners as the match decides them: lowest total (team total with partners).
        let sides: Vec<Vec<u8>> = if partners {
            vec![vec![0, 2], vec![1, 3]]
        } else {
            (0..4).map(|s| vec![s]).collect()
        };
        let side_total = |side: &Vec<u8>| side.iter().map(|&s| totals[s as usize]).sum::<i64>();
        let low = sides.iter().map(side_total).min().unwrap();
        let best: Vec<&Vec<u8>> = sides.iter().filter(|s| side_total(s) == low).collect();
        let winners = if best.len() == 1 {
            best[0].clone()
        } else {
            Vec::new()
        };
        Known {
            table: Uuid::new_v4(),
            seats: seats.map(str::to_owned),
            partners,
            private_room: false,
            totals,
            winners,
            ended,
            ids: [uuid(), uuid()],
        }
    }

    fn events(&self) -> [TableEvent; 2] {
        let mut rules = Preset::Classic.rules();
        rules.partners = self.partners;
        rules.match_length = MatchLength::Hands(1);
        let admission = if self.private_room {
            Admission {
                origin: Origin::PrivateRoom,
                members: self
                    .seats
                    .iter()
                    .filter(|s| s.starts_with("players/"))
                    .cloned()
                    .collect(),
                spectators: false,
            }
        } else {
            Admission {
                origin: Origin::QuickPlay,
                ..Admission::default()
            }
        };
        [
            TableEvent::TableCreated {
                rules,
                seats: self.seats.clone().map(Some),
                admission,
                server_seed_sha256: None,
            },
            TableEvent::MatchEnded {
                totals: self.totals,
                winners: self.winners.clone(),
            },
        ]
    }

    async fn publish(&self, publisher: &Publisher, ids: &[String; 2]) {
        for (i, event) in self.events().iter().enumerate() {
            publisher
                .at(
                    self.table,
                    i as u64 + 1,
                    &ids[i],
                    self.ended - chrono::Duration::milliseconds(1 - i as i64),
                    event,
                )
                .await;
        }
    }

    fn name(&self) -> String {
        format!("tables/{}", self.table)
    }
}

/// What the crate computes for `matches` (the rated ones, in the order they ended), on the
/// service's scale: start 1500 ± 500, beta 250; a bot seat at its level's fixed rating ± 100.
fn expected(matches: &[Known]) -> HashMap<String, (WengLinRating, i64, i64)> {
    let mut order: Vec<&Known> = matches.iter().collect();
    order.sort_by_key(|k| (k.ended, k.table));
    let config = WengLinConfig {
        beta: 250.0,
        uncertainty_tolerance: 0.000_001,
    };
    let mut ratings: HashMap<String, (WengLinRating, i64, i64)> = HashMap::new();
    for k in order {
        let bots = k.seats.iter().filter(|s| s.starts_with("bots/")).count();
        if k.private_room || bots > 1 {
            continue;
        }
        let skill = |seat: &String| -> WengLinRating {
            if let Some(level) = seat.strip_prefix("bots/") {
                let rating = if level.starts_with("easy") {
                    1200.0
                } else {
                    1700.0
                };
                WengLinRating {
                    rating,
                    uncertainty: 100.0,
                }
            } else {
                ratings.get(seat).map_or(
                    WengLinRating {
                        rating: 1500.0,
                        uncertainty: 500.0,
                    },
                    |r| r.0,
                )
            }
        };
        let sides: Vec<Vec<usize>> = if k.partners {
            vec![vec![0, 2], vec![1, 3]]
        } else {
            (0..4).map(|s| vec![s]).collect()
        };
        let totals: Vec<i64> = sides
            .iter()
            .map(|side| side.iter().map(|&s| k.totals[s]).sum())
            .collect();
        let teams: Vec<Vec<WengLinRating>> = sides
            .iter()
            .map(|side| side.iter().map(|&s| skill(&k.seats[s])).collect())
            .collect();
        let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
            .iter()
            .enumerate()
            .map(|(i, team)| {
                let place = 1 + totals.iter().filter(|t| **t < totals[i]).count();
                (&team[..], MultiTeamOutcome::new(place))
            })
            .collect();
        let rated = weng_lin_multi_team(&ranked, &config);
        for (side, team) in sides.iter().zip(rated) {
            for (&s, r) in side.iter().zip(team) {
                let seat = &k.seats[s];
                if seat.starts_with("players/") {
                    let won = i64::from(k.winners.contains(&(s as u8)));
                    let entry = ratings.entry(seat.clone()).or_insert((r, 0, 0));
                    *entry = (r, entry.1 + 1, entry.2 + won);
                }
            }
        }
    }
    ratings
}

/// Every rating row: player, rating, uncertainty, points, matches, wins.
async fn rating_rows(pool: &PgPool) -> Vec<(String, f64, f64, i32, i64, i64)> {
    sqlx::query_as(
        "SELECT player_id, rating, uncertainty, points, matches, wins FROM ratings
         ORDER BY player_id",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// The ratings equal the crate's computation for `matches`, and nobody else is rated.
async fn assert_ratings(pool: &PgPool, matches: &[Known]) {
    let expected = expected(matches);
    let rows = rating_rows(pool).await;
    assert_eq!(rows.len(), expected.len(), "{rows:?}");
    for (player, rating, uncertainty, points, played, won) in rows {
        let (want, want_played, want_won) = expected[&player];
        assert!(
            (rating - want.rating).abs() < 1e-9 && (uncertainty - want.uncertainty).abs() < 1e-9,
            "{player}: {rating} ± {uncertainty}, the crate says {} ± {}",
            want.rating,
            want.uncertainty
        );
        assert_eq!(points, want.rating.round() as i32);
        assert_eq!((played, won), (want_played, want_won), "{player}");
    }
}

fn player() -> String {
    format!("players/{}", Uuid::new_v4())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ratings_are_the_crates_for_known_results_and_a_redelivered_match_changes_nothing() {
    let Some(scoring) = Scoring::start().await else {
        return;
    };
    let publisher = Publisher::new(&scoring.stack).await;
    let people: Vec<String> = (0..9).map(|_| player()).collect();
    let [a, b, c, d, e, f, g, h, i] = std::array::from_fn(|k| people[k].as_str());
    // Ended seconds ago (this month, but for the few seconds after midnight of the 1st).
    let t0 = Utc::now() - chrono::Duration::seconds(10);
    let at = |ms: i64| t0 + chrono::Duration::milliseconds(ms);
    let mut played = vec![
        // Alone; seats 1 and 2 share second place.
        Known::new([a, b, c, d], false, [-101, 50, 50, 200], at(1_000)),
        // Partners: A and C (team total 30) beat B and E (140).
        Known::new([a, b, c, e], true, [10, 100, 20, 40], at(2_000)),
        // One bot seat (easy), which wins: rated at its fixed 1200.
        Known::new(
            [e, "bots/easy-1", b, d],
            false,
            [300, -101, 0, 50],
            at(3_000),
        ),
        // Partners with a strong bot beside D; a drawn match (equal team totals).
        Known::new([d, a, "bots/strong-2", c], true, [40, 10, 0, 30], at(4_000)),
    ];
    // Not rated: a private room's table, and a table with two bots.
    let mut room = Known::new([a, b, c, d], false, [0, 10, 20, 30], at(4_500));
    room.private_room = true;
    let bots = Known::new(
        [a, "bots/easy-1", "bots/easy-2", d],
        false,
        [0, 10, 20, 30],
        at(4_600),
    );
    for k in played.iter().chain([&room, &bots]) {
        k.publish(&publisher, &k.ids).await;
        wait_for_match_end(&scoring.pool, &k.name(), Duration::from_secs(60)).await;
    }
    assert_ratings(&scoring.pool, &played).await;
    let counted: i64 = sqlx::query_scalar("SELECT count(*) FROM rated_matches")
        .fetch_one(&scoring.pool)
        .await
        .unwrap();
    assert_eq!(
        counted, 4,
        "the private room's and the bots' tables are not rated"
    );

    // A match that ended between the first two arrives last: rated in its place, and the
    // later matches of its players rated again from there.
    let late = Known::new([a, b, d, e], false, [20, -101, 60, 60], at(1_500));
    late.publish(&publisher, &late.ids).await;
    wait_for_match_end(&scoring.pool, &late.name(), Duration::from_secs(60)).await;
    played.push(late);
    assert_ratings(&scoring.pool, &played).await;

    // Delivered again: the same messages, and a copy of them under other message ids; then a
    // match of four others, which the consumer applies after them (stream order).
    let before = rating_rows(&scoring.pool).await;
    let again = played[1].clone();
    again.publish(&publisher, &again.ids).await;
    again.publish(&publisher, &[uuid(), uuid()]).await;
    let marker = Known::new([f, g, h, i], false, [0, 10, 20, 30], at(5_000));
    marker.publish(&publisher, &marker.ids).await;
    wait_for_match_end(&scoring.pool, &marker.name(), Duration::from_secs(60)).await;
    let after: Vec<_> = rating_rows(&scoring.pool)
        .await
        .into_iter()
        .filter(|row| before.iter().any(|b| b.0 == row.0))
        .collect();
    assert_eq!(after, before, "the match delivered again changed nothing");
    played.push(marker);
    assert_ratings(&scoring.pool, &played).await;

    // The API: a player's rating and statistics, and the board.
    let mut api = scoring.client().await;
    let want = expected(&played);
    let id = a.trim_start_matches("players/");
    let mine = api
        .get_rating(req(
            pb::GetRatingRequest {
                player: "players/me".into(),
            },
            id,
            &[Role::Player],
        ))
        .await
        .expect("a player reads their own rating")
        .into_inner()
        .rating
        .unwrap();
    let (rating, matches, wins) = want[a];
    assert_eq!(mine.rating, rating.rating.round() as i32);
    assert!((mine.uncertainty - rating.uncertainty).abs() < 1e-9);
    assert_eq!((mine.matches, mine.wins), (matches, wins));
    assert!((mine.win_rate - wins as f64 / matches as f64).abs() < 1e-12);
    assert!(mine.provisional, "four matches are not enough");
    assert_eq!(
        mine.rank, None,
        "fewer than the all-time board's 10 matches"
    );
    let theirs = api
        .get_rating(req(
            pb::GetRatingRequest { player: b.into() },
            id,
            &[Role::Player],
        ))
        .await
        .expect("ratings are public")
        .into_inner()
        .rating
        .unwrap();
    assert_eq!(theirs.rating, want[b].0.rating.round() as i32);
    let newcomer = api
        .get_rating(req(
            pb::GetRatingRequest { player: player() },
            id,
            &[Role::Player],
        ))
        .await
        .unwrap()
        .into_inner()
        .rating
        .unwrap();
    assert_eq!(
        (newcomer.rating, newcomer.matches, newcomer.provisional),
        (1500, 0, true)
    );
    let bad = api
        .get_rating(req(
            pb::GetRatingRequest {
                player: "tables/x".into(),
            },
            id,
            &[Role::Player],
        ))
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
    assert_eq!(
        bad.get_error_details().error_info().unwrap().reason,
        "invalid_name"
    );

    // This month's board, around A: best first, equal results sharing a place.
    let board = api
        .list_leaderboard(req(
            pb::ListLeaderboardRequest {
                period: pb::StandingsPeriod::Month as i32,
                around_me: true,
                ..Default::default()
            },
            id,
            &[Role::Player],
        ))
        .await
        .expect("the month's board")
        .into_inner();
    let me = board.me.expect("A played rated matches this month");
    assert_eq!(me.player.as_ref().unwrap().player, a);
    assert_eq!(me.rating, rating.rating.round() as i32);
    // A: first alone (3 opponents behind), second of four (2), a partners win (2 opponents),
    // a partners draw (two halves).
    assert_eq!((me.score, me.matches), (8.0, 4));
    let ranks: Vec<i32> = board.entries.iter().map(|e| e.rank).collect();
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
    for pair in board.entries.windows(2) {
        let (x, y) = (&pair[0], &pair[1]);
        assert!(
            x.score > y.score || (x.score == y.score && x.matches <= y.matches),
            "best first: {x:?} {y:?}"
        );
        if x.score == y.score && x.matches == y.matches {
            assert_eq!(x.rank, y.rank, "equal results share a place");
        }
    }

    // The standings, kept at write time: best first, equal results sharing a place, and a
    // player's own place (GetStanding) the one the list shows.
    let standings = api
        .list_standings(req(
            pb::ListStandingsRequest {
                period: pb::StandingsPeriod::Month as i32,
                page_size: 500,
                ..Default::default()
            },
            id,
            &[Role::Player],
        ))
        .await
        .unwrap()
        .into_inner()
        .standings;
    assert!(standings.len() >= 9, "{standings:?}");
    for (n, pair) in standings.windows(2).enumerate() {
        let (x, y) = (&pair[0], &pair[1]);
        let key = |s: &pb::Standing| (-s.matches_won, s.mean_match_total, -s.matches_played);
        assert!(key(x) <= key(y), "best first: {x:?} {y:?}");
        if key(x) == key(y) {
            assert_eq!(x.rank, y.rank, "equal results share a place");
        } else {
            assert_eq!(y.rank, n as i32 + 2, "the place after a shared one skips");
        }
    }
    let own = api
        .get_standing(req(
            pb::GetStandingRequest {
                player: "players/me".into(),
                period: pb::StandingsPeriod::Month as i32,
            },
            id,
            &[Role::Player],
        ))
        .await
        .unwrap()
        .into_inner()
        .standing
        .unwrap();
    let listed = standings
        .iter()
        .find(|s| s.player.as_ref().unwrap().player == a)
        .unwrap();
    assert_eq!(&own, listed);

    scoring.stop().await;
}

/// The players at each position of a board, as the triggers keep them, beside the same counted
/// from the rows: (position, players), positions nobody holds left out.
async fn positions(
    pool: &PgPool,
    kept: &str,
    counted: &str,
) -> (Vec<(String, i64)>, Vec<(String, i64)>) {
    let read = |query: &str| {
        sqlx::query_as::<_, (String, i64)>(sqlx::AssertSqlSafe(query.to_owned())).fetch_all(pool)
    };
    (read(kept).await.unwrap(), read(counted).await.unwrap())
}

/// Every page of `board` with at least `min` matches, in order.
async fn whole_board(
    api: &mut ScoringServiceClient<tonic::transport::Channel>,
    period: pb::StandingsPeriod,
    min: u32,
) -> Vec<pb::LeaderboardEntry> {
    let mut entries = Vec::new();
    let mut token = String::new();
    loop {
        let page = api
            .list_leaderboard(req(
                pb::ListLeaderboardRequest {
                    period: period as i32,
                    page_size: 37,
                    page_token: token,
                    min_matches: min,
                    ..Default::default()
                },
                "reader",
                &[Role::Player],
            ))
            .await
            .expect("a page of the board")
            .into_inner();
        entries.extend(page.entries);
        if page.next_page_token.is_empty() {
            return entries;
        }
        token = page.next_page_token;
    }
}

/// A place is summed from the board's positions (`rating_places`, `period_places`), which
/// triggers keep in the writer's transaction. After inserts, upserts that move players (or
/// only add a match), players passing the all-time positions' cap on matches, and deletes, the
/// positions equal the rows counted; and every place ListLeaderboard and GetRating show is
/// 1 + the players ahead counted one by one, for minimums the positions keep and for ones
/// above their cap (counted instead).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn places_are_one_more_than_the_players_ahead_whatever_was_written() {
    let Some(scoring) = Scoring::start().await else {
        return;
    };
    let pool = &scoring.pool;
    let starts = scoring::period::Period::Month.bounds(Utc::now()).0;
    let ids: Vec<String> = (0..160).map(|_| player()).collect();
    // xorshift: the same writes every run.
    let mut random = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        random % n
    };
    for round in 0..14 {
        // A batch as the service writes one: each player once per statement.
        let mut batch: Vec<String> = (0..90)
            .map(|_| ids[next(ids.len() as u64) as usize].clone())
            .collect();
        batch.sort();
        batch.dedup();
        // Few distinct points, so that players share them; sometimes no new match.
        let points: Vec<i32> = batch.iter().map(|_| 1490 + next(12) as i32).collect();
        let added: Vec<i64> = batch.iter().map(|_| next(11) as i64).collect();
        sqlx::query(
            "INSERT INTO ratings (player_id, rating, uncertainty, points, matches, wins,
                 display_name, last_ended_at)
             SELECT u.p, u.points, 200, u.points, u.added, 0, NULL, now()
             FROM unnest($1::text[], $2::integer[], $3::bigint[]) AS u (p, points, added)
             ON CONFLICT (player_id) DO UPDATE SET
                 rating = EXCLUDED.rating, points = EXCLUDED.points,
                 matches = ratings.matches + EXCLUDED.matches",
        )
        .bind(&batch)
        .bind(&points)
        .bind(&added)
        .execute(pool)
        .await
        .unwrap();
        let scores: Vec<i64> = batch.iter().map(|_| next(7) as i64).collect();
        sqlx::query(
            "INSERT INTO period_scores (period, starts, player_id, score2, matches, wins)
             SELECT 'month', $3, u.p, u.score2, 1, 0
             FROM unnest($1::text[], $2::bigint[]) AS u (p, score2)
             ON CONFLICT (period, starts, player_id) DO UPDATE SET
                 score2 = period_scores.score2 + EXCLUDED.score2,
                 matches = period_scores.matches + 1",
        )
        .bind(&batch)
        .bind(&scores)
        .bind(starts)
        .execute(pool)
        .await
        .unwrap();
        if round % 3 == 2 {
            let gone: Vec<String> = (0..6)
                .map(|_| ids[next(ids.len() as u64) as usize].clone())
                .collect();
            for table in ["ratings", "period_scores"] {
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DELETE FROM {table} WHERE player_id = ANY($1)"
                )))
                .bind(&gone)
                .execute(pool)
                .await
                .unwrap();
            }
        }
        let (kept, counted) = positions(
            pool,
            "SELECT points || '/' || matches, players FROM rating_places
             WHERE players > 0 ORDER BY points, matches",
            "SELECT points || '/' || least(matches, rating_places_matches_cap()), count(*)
             FROM ratings GROUP BY points, least(matches, rating_places_matches_cap())
             ORDER BY points, least(matches, rating_places_matches_cap())",
        )
        .await;
        assert_eq!(kept, counted, "all-time positions after round {round}");
        let (kept, counted) = positions(
            pool,
            "SELECT period || starts || '/' || minus_score2 || '/' || matches, players
             FROM period_places WHERE players > 0
             ORDER BY period, starts, minus_score2, matches",
            "SELECT period || starts || '/' || -score2 || '/' || matches, count(*)
             FROM period_scores GROUP BY period, starts, -score2, matches
             ORDER BY period, starts, -score2, matches",
        )
        .await;
        assert_eq!(kept, counted, "period positions after round {round}");
    }
    let most: i64 = sqlx::query_scalar("SELECT max(matches) FROM ratings")
        .fetch_one(pool)
        .await
        .unwrap();
    assert!(
        most > 40,
        "some players passed the cap of 32 matches ({most})"
    );

    let ratings: Vec<(String, i32, i64)> =
        sqlx::query_as("SELECT player_id, points, matches FROM ratings")
            .fetch_all(pool)
            .await
            .unwrap();
    let mut api = scoring.client().await;
    // The server's floor is 10 matches; 32 is the positions' cap, 33 and 45 are counted.
    for min in [0u32, 20, 32, 33, 45] {
        let floor = i64::from(min.max(10));
        let listed: Vec<&(String, i32, i64)> = ratings.iter().filter(|r| r.2 >= floor).collect();
        let board = whole_board(&mut api, pb::StandingsPeriod::Unspecified, min).await;
        assert_eq!(board.len(), listed.len(), "everyone with {floor} matches");
        for entry in &board {
            let ahead = listed.iter().filter(|r| r.1 > entry.rating).count();
            assert_eq!(
                entry.rank,
                ahead as i32 + 1,
                "all time, {floor} matches: {entry:?}"
            );
        }
    }
    for (player, points, matches) in ratings.iter().take(40) {
        let shown = api
            .get_rating(req(
                pb::GetRatingRequest {
                    player: player.clone(),
                },
                "reader",
                &[Role::Player],
            ))
            .await
            .unwrap()
            .into_inner()
            .rating
            .unwrap();
        let ahead = ratings
            .iter()
            .filter(|r| r.2 >= 10 && r.1 > *points)
            .count();
        let want = (*matches >= 10).then_some(ahead as i32 + 1);
        assert_eq!(
            shown.rank, want,
            "{player}: {points} points, {matches} matches"
        );
    }

    let scores: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT score2, matches FROM period_scores WHERE period = 'month' AND starts = $1",
    )
    .bind(starts)
    .fetch_all(pool)
    .await
    .unwrap();
    for min in [0u32, 3, 5] {
        let floor = i64::from(min.max(1));
        let listed: Vec<&(i64, i64)> = scores.iter().filter(|s| s.1 >= floor).collect();
        let board = whole_board(&mut api, pb::StandingsPeriod::Month, min).await;
        assert_eq!(
            board.len(),
            listed.len(),
            "everyone with {floor} matches this month"
        );
        for entry in &board {
            let score2 = (entry.score * 2.0) as i64;
            let ahead = listed
                .iter()
                .filter(|s| s.0 > score2 || (s.0 == score2 && s.1 < entry.matches))
                .count();
            assert_eq!(
                entry.rank,
                ahead as i32 + 1,
                "month, {floor} matches: {entry:?}"
            );
        }
    }

    // The standings' pages too start inside shared places: few distinct results.
    let results: Vec<(i64, i64, i64)> = ids
        .iter()
        .map(|_| {
            let played = 1 + next(3) as i64;
            (played, next(played as u64 + 1) as i64, 10 * next(3) as i64)
        })
        .collect();
    sqlx::query(
        "INSERT INTO standings (period, starts, player_id, played, won, total_sum)
         SELECT 'all', 'epoch', u.p, u.played, u.won, u.total
         FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[])
              AS u (p, played, won, total)",
    )
    .bind(&ids)
    .bind(results.iter().map(|r| r.0).collect::<Vec<_>>())
    .bind(results.iter().map(|r| r.1).collect::<Vec<_>>())
    .bind(results.iter().map(|r| r.2).collect::<Vec<_>>())
    .execute(pool)
    .await
    .unwrap();
    // The standings' order, best first: more won, lower mean total, more played.
    let key = |(played, won, total): (i64, i64, i64)| (-won, total as f64 / played as f64, -played);
    let mut standings = Vec::new();
    let mut token = String::new();
    loop {
        let page = api
            .list_standings(req(
                pb::ListStandingsRequest {
                    period: pb::StandingsPeriod::Unspecified as i32,
                    page_size: 23,
                    page_token: token,
                },
                "reader",
                &[Role::Player],
            ))
            .await
            .expect("a page of the standings")
            .into_inner();
        standings.extend(page.standings);
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(standings.len(), ids.len());
    for s in &standings {
        let own = (-s.matches_won, s.mean_match_total, -s.matches_played);
        let ahead = results.iter().filter(|&&r| key(r) < own).count();
        assert_eq!(s.rank, ahead as i32 + 1, "standings: {s:?}");
    }
    scoring.stop().await;
}

/// Players sharing a place are listed in the fixed order scoring.proto gives: by player id from
/// the highest down on the all-time board, from the lowest up on a period's board; also across
/// pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_sharing_a_place_are_listed_by_player_id_as_documented() {
    let Some(scoring) = Scoring::start().await else {
        return;
    };
    let pool = &scoring.pool;
    let starts = scoring::period::Period::Month.bounds(Utc::now()).0;
    let mut ids: Vec<String> = (0..50).map(|_| player()).collect();
    sqlx::query(
        "INSERT INTO ratings (player_id, rating, uncertainty, points, matches, wins,
             display_name, last_ended_at)
         SELECT p, 1600, 200, 1600, 12, 0, NULL, now() FROM unnest($1::text[]) AS p",
    )
    .bind(&ids)
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO period_scores (period, starts, player_id, score2, matches, wins)
         SELECT 'month', $2, p, 6, 2, 1 FROM unnest($1::text[]) AS p",
    )
    .bind(&ids)
    .bind(starts)
    .execute(pool)
    .await
    .unwrap();
    ids.sort();

    let mut api = scoring.client().await;
    let listed = |board: &[pb::LeaderboardEntry]| -> Vec<String> {
        assert!(board.iter().all(|e| e.rank == 1), "one shared place");
        board
            .iter()
            .map(|e| e.player.as_ref().unwrap().player.clone())
            .collect()
    };
    let all_time = whole_board(&mut api, pb::StandingsPeriod::Unspecified, 0).await;
    let highest_first: Vec<String> = ids.iter().rev().cloned().collect();
    assert_eq!(
        listed(&all_time),
        highest_first,
        "all time: highest id first"
    );
    let month = whole_board(&mut api, pb::StandingsPeriod::Month, 0).await;
    assert_eq!(listed(&month), ids, "a month: lowest id first");
    scoring.stop().await;
}

/// A player's name is checked before who may read it: empty is `missing_field`, anything but
/// `players/{uuid}` or `players/me` (`players/-` where everyone is meant) `invalid_name`, for
/// every RPC and every caller; a period this server does not know is `invalid_period`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_and_periods_are_checked_before_who_may_read() {
    let Some(scoring) = Scoring::start().await else {
        return;
    };
    let mut api = scoring.client().await;
    let me = Uuid::new_v4();
    struct Player(String);
    impl Player {
        fn req<T>(&self, m: T) -> tonic::Request<T> {
            req(m, &self.0, &[Role::Player])
        }
    }
    let caller = Player(me.to_string());
    let why = |e: tonic::Status| {
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
        e.get_error_details().error_info().unwrap().reason.clone()
    };

    for (name, want) in [
        ("", "missing_field"),
        ("players/", "invalid_name"),
        ("players/foo", "invalid_name"),
        ("players/-", "invalid_name"),
        ("tables/x", "invalid_name"),
    ] {
        let rating = api
            .get_rating(caller.req(pb::GetRatingRequest {
                player: name.into(),
            }))
            .await
            .unwrap_err();
        assert_eq!(why(rating), want, "GetRating {name:?}");
        let standing = api
            .get_standing(caller.req(pb::GetStandingRequest {
                player: name.into(),
                period: pb::StandingsPeriod::Day as i32,
            }))
            .await
            .unwrap_err();
        assert_eq!(why(standing), want, "GetStanding {name:?}");
        let results = api
            .list_match_results(caller.req(pb::ListMatchResultsRequest {
                parent: name.into(),
                ..Default::default()
            }))
            .await
            .unwrap_err();
        assert_eq!(why(results), want, "ListMatchResults {name:?}");
    }
    // Someone else's ledger: a malformed name is still the name's error, not the role's.
    for (name, want) in [
        ("", "missing_field"),
        ("players/foo", "invalid_name"),
        ("players/me/x", "invalid_name"),
    ] {
        let entries = api
            .list_ledger_entries(caller.req(pb::ListLedgerEntriesRequest {
                parent: name.into(),
                ..Default::default()
            }))
            .await
            .unwrap_err();
        assert_eq!(why(entries), want, "ListLedgerEntries {name:?}");
    }
    let other = api
        .list_ledger_entries(caller.req(pb::ListLedgerEntriesRequest {
            parent: player(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(other.code(), tonic::Code::PermissionDenied);
    // A staff token whose subject is no player account has no `players/me`.
    let not_found = |e: tonic::Status| {
        assert_eq!(e.code(), tonic::Code::NotFound, "{e:?}");
        e.get_error_details().error_info().unwrap().reason.clone()
    };
    let me_name = || "players/me".to_owned();
    let rating = api
        .get_rating(req(
            pb::GetRatingRequest { player: me_name() },
            "okeyctl-support",
            &[Role::Support],
        ))
        .await
        .unwrap_err();
    assert_eq!(not_found(rating), "player_not_found");
    let entries = api
        .list_ledger_entries(req(
            pb::ListLedgerEntriesRequest {
                parent: me_name(),
                ..Default::default()
            },
            "okeyctl-support",
            &[Role::Support],
        ))
        .await
        .unwrap_err();
    assert_eq!(not_found(entries), "player_not_found");
    for (name, want) in [("", "missing_field"), ("matches/x", "invalid_name")] {
        let result = api
            .get_match_result(caller.req(pb::GetMatchResultRequest { name: name.into() }))
            .await
            .unwrap_err();
        assert_eq!(why(result), want, "GetMatchResult {name:?}");
    }

    // A player's UUID in capitals is the same player, named as accounts names them.
    let loud = format!("players/{}", me.to_string().to_uppercase());
    let rating = api
        .get_rating(caller.req(pb::GetRatingRequest {
            player: loud.clone(),
        }))
        .await
        .expect("a UUID in capitals")
        .into_inner()
        .rating
        .unwrap();
    assert_eq!(rating.player.unwrap().player, format!("players/{me}"));
    api.list_match_results(caller.req(pb::ListMatchResultsRequest {
        parent: loud,
        ..Default::default()
    }))
    .await
    .expect("the caller's own results, however the UUID is written");

    // Periods: unspecified is all time; a value the enum does not list is refused.
    let unknown = 99;
    let standings = api
        .list_standings(caller.req(pb::ListStandingsRequest {
            period: unknown,
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(why(standings), "invalid_period");
    let board = api
        .list_leaderboard(caller.req(pb::ListLeaderboardRequest {
            period: unknown,
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(why(board), "invalid_period");
    let standing = api
        .get_standing(caller.req(pb::GetStandingRequest {
            player: "players/me".into(),
            period: unknown,
        }))
        .await
        .unwrap_err();
    assert_eq!(why(standing), "invalid_period");
    api.list_leaderboard(caller.req(pb::ListLeaderboardRequest {
        period: pb::StandingsPeriod::Unspecified as i32,
        ..Default::default()
    }))
    .await
    .expect("unspecified is the all-time board");
    scoring.stop().await;
}
