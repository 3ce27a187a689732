//! Ratings, the period leaderboards and the standings in the scoring database, written in the
//! transaction of the `match_ended` they come from (`store` calls [`record`] for a rated match
//! and [`record_standings`] for a ranked one); the rating update itself is `skill`'s.
//!
//! Ratings are a fold of the rated matches in the order they ended (end time, then match id),
//! not in the order their events arrived: a match that arrives after one that ended later
//! (another table's events were held up) is rated from its players' ratings as they stood when
//! it ended, and every later match that involves a player whose rating that changed is rated
//! again. Each update is the same computation on the same inputs whatever the arrival order, so
//! the numbers depend on the set of rated matches alone: a rebuild, a redelivery or another
//! replica gives the same to the last bit. Rating runs under one transaction-level advisory lock,
//! so two replicas never fold at once. A match is rated once (`rated_matches` is keyed by it).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use okey_rules::Seat;
use sqlx::{Postgres, Row, Transaction};
use uuid::Uuid;

use crate::period::Period;
use crate::skill::{self, Skill};

/// The advisory lock that serialises rating across replicas ("okeyrate").
const RATING_LOCK: i64 = 0x6f6b_6579_7261_7465;

/// A rated match as it ended.
pub struct RatedMatch<'a> {
    pub match_id: Uuid,
    pub ended_at: DateTime<Utc>,
    pub partners: bool,
    pub seats: &'a [skill::Seat; 4],
    pub totals: [i64; 4],
    pub winners: &'a [Seat],
    /// The display name each seat's player sat down with, if known.
    pub names: &'a [Option<String>; 4],
}

/// A rated match as kept (for rating it again).
struct Kept {
    match_id: Uuid,
    ended_at: DateTime<Utc>,
    partners: bool,
    players: [Option<String>; 4],
    bots: [Option<i32>; 4],
    totals: [i64; 4],
}

impl Kept {
    fn read(row: &sqlx::postgres::PgRow) -> Kept {
        let players: Vec<Option<String>> = row.get("seat_players");
        let bots: Vec<Option<i32>> = row.get("bot_ratings");
        let totals: Vec<i64> = row.get("totals");
        Kept {
            match_id: row.get("match_id"),
            ended_at: row.get("ended_at"),
            partners: row.get("partners"),
            players: std::array::from_fn(|s| players.get(s).cloned().flatten()),
            bots: std::array::from_fn(|s| bots.get(s).copied().flatten()),
            totals: std::array::from_fn(|s| totals.get(s).copied().unwrap_or_default()),
        }
    }

    /// Rates it from `before` (a bot seat's entry is its fixed rating).
    fn rate(&self, before: &[Skill; 4]) -> [Skill; 4] {
        skill::rate(
            self.partners,
            &self.totals,
            before,
            self.bots.map(|b| b.is_some()),
        )
    }
}

/// Takes the lock every write of players' shared rows (ratings, period scores, standings) is
/// made under, until the transaction ends: one batch at a time folds ratings, and two batches
/// never wait for each other's rows (which could deadlock). Taking it again is free.
pub async fn lock(tx: &mut Transaction<'_, Postgres>) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(RATING_LOCK)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Records a rated match: its period scores, and its players' ratings in the order matches
/// ended (rating again the later matches its arrival changes). Nothing happens if it was rated
/// before.
pub async fn record(
    tx: &mut Transaction<'_, Postgres>,
    rated: &RatedMatch<'_>,
) -> Result<(), sqlx::Error> {
    lock(tx).await?;
    let players: Vec<Option<String>> = rated
        .seats
        .iter()
        .map(|s| match s {
            skill::Seat::Person(p) => Some(p.clone()),
            skill::Seat::Bot(_) => None,
        })
        .collect();
    let bots: Vec<Option<i32>> = rated
        .seats
        .iter()
        .map(|s| match s {
            skill::Seat::Person(_) => None,
            skill::Seat::Bot(level) => Some(level.rating()),
        })
        .collect();
    let winners: Vec<i32> = rated.winners.iter().map(|&s| i32::from(s)).collect();
    // The end time as stored (microseconds), so that it compares equal with itself below.
    let stored: Option<DateTime<Utc>> = sqlx::query_scalar(
        "INSERT INTO rated_matches (match_id, ended_at, partners, seat_players, bot_ratings,
             totals, winners)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (match_id) DO NOTHING
         RETURNING ended_at",
    )
    .bind(rated.match_id)
    .bind(rated.ended_at)
    .bind(rated.partners)
    .bind(&players)
    .bind(&bots)
    .bind(rated.totals.to_vec())
    .bind(&winners)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(ended_at) = stored else {
        return Ok(());
    };
    let this = Kept {
        match_id: rated.match_id,
        ended_at,
        partners: rated.partners,
        players: std::array::from_fn(|s| players[s].clone()),
        bots: std::array::from_fn(|s| bots[s]),
        totals: rated.totals,
    };
    score_periods(tx, &this, &winners).await?;

    // Each person's rating as it stood when this match ended: after their last rated match
    // that ended before it.
    let persons: Vec<String> = this.players.iter().flatten().cloned().collect();
    let standing: HashMap<String, Skill> = sqlx::query(
        "SELECT DISTINCT ON (player_id) player_id, rating_after, uncertainty_after
         FROM rating_changes
         WHERE player_id = ANY($1) AND (ended_at, match_id) < ($2, $3)
         ORDER BY player_id, ended_at DESC, match_id DESC",
    )
    .bind(&persons)
    .bind(this.ended_at)
    .bind(this.match_id)
    .fetch_all(&mut **tx)
    .await?
    .iter()
    .map(|r| {
        (
            r.get::<String, _>("player_id"),
            Skill {
                rating: r.get("rating_after"),
                uncertainty: r.get("uncertainty_after"),
            },
        )
    })
    .collect();
    let before: [Skill; 4] = std::array::from_fn(|s| match (&this.players[s], this.bots[s]) {
        (Some(p), _) => standing.get(p).copied().unwrap_or(Skill::NEW),
        (None, Some(bot)) => Skill::bot(bot),
        (None, None) => Skill::NEW,
    });
    let after = this.rate(&before);
    write_changes(tx, &this, &before, &after, true).await?;
    let mut moved: HashMap<String, Skill> = HashMap::new();
    for (s, player) in this.players.iter().enumerate() {
        if let Some(p) = player {
            moved.insert(p.clone(), after[s]);
        }
    }

    // Matches that ended after this one and were rated already (it arrived late): rate again
    // those with a player whose rating moved, in order.
    let later: Vec<Kept> = sqlx::query(
        "SELECT match_id, ended_at, partners, seat_players, bot_ratings, totals
         FROM rated_matches WHERE (ended_at, match_id) > ($1, $2)
         ORDER BY ended_at, match_id",
    )
    .bind(this.ended_at)
    .bind(this.match_id)
    .fetch_all(&mut **tx)
    .await?
    .iter()
    .map(Kept::read)
    .collect();
    for kept in later {
        if !kept.players.iter().flatten().any(|p| moved.contains_key(p)) {
            continue;
        }
        let stored: HashMap<i32, Skill> = sqlx::query(
            "SELECT seat, rating_before, uncertainty_before FROM rating_changes
             WHERE match_id = $1",
        )
        .bind(kept.match_id)
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|r| {
            (
                r.get::<i32, _>("seat"),
                Skill {
                    rating: r.get("rating_before"),
                    uncertainty: r.get("uncertainty_before"),
                },
            )
        })
        .collect();
        let before: [Skill; 4] = std::array::from_fn(|s| match (&kept.players[s], kept.bots[s]) {
            (Some(p), _) => moved
                .get(p)
                .or(stored.get(&(s as i32)))
                .copied()
                .unwrap_or(Skill::NEW),
            (None, Some(bot)) => Skill::bot(bot),
            (None, None) => Skill::NEW,
        });
        let after = kept.rate(&before);
        write_changes(tx, &kept, &before, &after, false).await?;
        for (s, player) in kept.players.iter().enumerate() {
            if let Some(p) = player {
                moved.insert(p.clone(), after[s]);
            }
        }
    }

    // Every moved player's rating; this match's players count one more match (and win).
    let ids: Vec<String> = moved.keys().cloned().collect();
    let skills: Vec<Skill> = ids.iter().map(|p| moved[p]).collect();
    let seat_of = |p: &str| this.players.iter().position(|q| q.as_deref() == Some(p));
    let played: Vec<i64> = ids
        .iter()
        .map(|p| i64::from(seat_of(p).is_some()))
        .collect();
    let won: Vec<i64> = ids
        .iter()
        .map(|p| i64::from(seat_of(p).is_some_and(|s| winners.contains(&(s as i32)))))
        .collect();
    let names: Vec<Option<String>> = ids
        .iter()
        .map(|p| seat_of(p).and_then(|s| rated.names[s].clone()))
        .collect();
    sqlx::query(
        "INSERT INTO ratings (player_id, rating, uncertainty, points, matches, wins,
             display_name, last_ended_at)
         SELECT * FROM unnest($1::text[], $2::float8[], $3::float8[], $4::integer[],
                              $5::bigint[], $6::bigint[], $7::text[], $8::timestamptz[])
         ON CONFLICT (player_id) DO UPDATE SET
             rating = EXCLUDED.rating, uncertainty = EXCLUDED.uncertainty,
             points = EXCLUDED.points, matches = ratings.matches + EXCLUDED.matches,
             wins = ratings.wins + EXCLUDED.wins,
             display_name = coalesce(EXCLUDED.display_name, ratings.display_name),
             last_ended_at = greatest(ratings.last_ended_at, EXCLUDED.last_ended_at)",
    )
    .bind(&ids)
    .bind(skills.iter().map(|s| s.rating).collect::<Vec<_>>())
    .bind(skills.iter().map(|s| s.uncertainty).collect::<Vec<_>>())
    .bind(skills.iter().map(|s| s.points()).collect::<Vec<_>>())
    .bind(&played)
    .bind(&won)
    .bind(&names)
    .bind(vec![this.ended_at; ids.len()])
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Writes (or, rating a match again, rewrites) the rating changes of a match's persons.
async fn write_changes(
    tx: &mut Transaction<'_, Postgres>,
    kept: &Kept,
    before: &[Skill; 4],
    after: &[Skill; 4],
    new: bool,
) -> Result<(), sqlx::Error> {
    let seats: Vec<usize> = (0..4).filter(|&s| kept.players[s].is_some()).collect();
    let query = if new {
        "INSERT INTO rating_changes (match_id, seat, player_id, ended_at, rating_before,
             uncertainty_before, rating_after, uncertainty_after)
         SELECT $1, u.seat, u.player_id, $2, u.rb, u.ub, u.ra, u.ua
         FROM unnest($3::integer[], $4::text[], $5::float8[], $6::float8[], $7::float8[],
                     $8::float8[]) AS u (seat, player_id, rb, ub, ra, ua)"
    } else {
        "UPDATE rating_changes c SET rating_before = u.rb, uncertainty_before = u.ub,
             rating_after = u.ra, uncertainty_after = u.ua
         FROM unnest($3::integer[], $4::text[], $5::float8[], $6::float8[], $7::float8[],
                     $8::float8[]) AS u (seat, player_id, rb, ub, ra, ua)
         WHERE c.match_id = $1 AND c.seat = u.seat AND $2::timestamptz IS NOT NULL"
    };
    sqlx::query(query)
        .bind(kept.match_id)
        .bind(kept.ended_at)
        .bind(seats.iter().map(|&s| s as i32).collect::<Vec<_>>())
        .bind(
            seats
                .iter()
                .map(|&s| kept.players[s].clone())
                .collect::<Vec<_>>(),
        )
        .bind(seats.iter().map(|&s| before[s].rating).collect::<Vec<_>>())
        .bind(
            seats
                .iter()
                .map(|&s| before[s].uncertainty)
                .collect::<Vec<_>>(),
        )
        .bind(seats.iter().map(|&s| after[s].rating).collect::<Vec<_>>())
        .bind(
            seats
                .iter()
                .map(|&s| after[s].uncertainty)
                .collect::<Vec<_>>(),
        )
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Adds the match to its players' day, week and month scores (order does not matter here: a
/// sum).
async fn score_periods(
    tx: &mut Transaction<'_, Postgres>,
    kept: &Kept,
    winners: &[i32],
) -> Result<(), sqlx::Error> {
    let mut periods = Vec::new();
    let mut starts = Vec::new();
    let mut players = Vec::new();
    let mut scores = Vec::new();
    let mut wins = Vec::new();
    for (s, player) in kept.players.iter().enumerate() {
        let Some(player) = player else { continue };
        for period in Period::PERIODIC {
            periods.push(period.as_str());
            starts.push(period.bounds(kept.ended_at).0);
            players.push(player.clone());
            scores.push(skill::score2(kept.partners, &kept.totals, s));
            wins.push(i64::from(winners.contains(&(s as i32))));
        }
    }
    sqlx::query(
        "INSERT INTO period_scores (period, starts, player_id, score2, matches, wins)
         SELECT u.period, u.starts, u.player_id, u.score2, 1, u.wins
         FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::bigint[], $5::bigint[])
              AS u (period, starts, player_id, score2, wins)
         ON CONFLICT (period, starts, player_id) DO UPDATE SET
             score2 = period_scores.score2 + EXCLUDED.score2,
             matches = period_scores.matches + 1,
             wins = period_scores.wins + EXCLUDED.wins",
    )
    .bind(&periods)
    .bind(&starts)
    .bind(&players)
    .bind(&scores)
    .bind(&wins)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Adds a ranked match's results (`players/{id}`, the seat's final total, whether it won) to
/// the standings of all time and of the day, ISO week and month it ended in (a sum: the order
/// matches arrive in does not matter).
pub async fn record_standings(
    tx: &mut Transaction<'_, Postgres>,
    ended_at: DateTime<Utc>,
    results: &[(String, i64, bool)],
) -> Result<(), sqlx::Error> {
    lock(tx).await?;
    // One row per player even if a player held two seats (one statement may not touch a row
    // twice).
    let mut per_player: Vec<(String, i64, i64, i64)> = Vec::new();
    for (player, total, won) in results {
        match per_player.iter_mut().find(|p| &p.0 == player) {
            Some(p) => {
                p.1 += 1;
                p.2 += i64::from(*won);
                p.3 += total;
            }
            None => per_player.push((player.clone(), 1, i64::from(*won), *total)),
        }
    }
    let mut periods = Vec::new();
    let mut starts = Vec::new();
    let mut players = Vec::new();
    let mut played = Vec::new();
    let mut won = Vec::new();
    let mut totals = Vec::new();
    for (player, p, w, t) in &per_player {
        for period in [Period::AllTime, Period::Day, Period::Week, Period::Month] {
            periods.push(period.as_str());
            starts.push(period.bounds(ended_at).0);
            players.push(player.clone());
            played.push(*p);
            won.push(*w);
            totals.push(*t);
        }
    }
    sqlx::query(
        "INSERT INTO standings (period, starts, player_id, played, won, total_sum)
         SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::bigint[],
                              $5::bigint[], $6::bigint[])
         ON CONFLICT (period, starts, player_id) DO UPDATE SET
             played = standings.played + EXCLUDED.played,
             won = standings.won + EXCLUDED.won,
             total_sum = standings.total_sum + EXCLUDED.total_sum",
    )
    .bind(&periods)
    .bind(&starts)
    .bind(&players)
    .bind(&played)
    .bind(&won)
    .bind(&totals)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
