//! What the API reads from the scoring database: ledger entries, match results, standings,
//! ratings and leaderboards, each page after a keyset position (so a position stays valid while
//! rows are added), and the page tokens that carry those positions.

use chrono::{DateTime, Utc};
use okey_platform::page_token::PageTokens;
use serde::{Deserialize, Serialize};
use sqlx::{PgPool, Row};
use uuid::Uuid;

use crate::period::Period;

/// A keyset position, carried by a page token. Each list has its own kind, so a token of one
/// list is refused by another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum Position {
    /// ListLedgerEntries: entries below this id, for this parent and match filter.
    Ledger {
        parent: String,
        #[serde(rename = "m")]
        match_id: Option<Uuid>,
        below: i64,
    },
    /// ListMatchResults: matches ended before (`ended_at`, `match_id`).
    Results {
        player: String,
        #[serde(with = "micros")]
        ended_at: DateTime<Utc>,
        match_id: Uuid,
    },
    /// ListLeaderboard: rows after this one on the board it was given for.
    Board {
        /// The period's spelling (`all`, `day`, `week`, `month`) and its start.
        period: String,
        #[serde(with = "micros")]
        starts: DateTime<Utc>,
        min: u32,
        around: bool,
        key: BoardKey,
    },
    /// ListStandings: players after this one, within the period it was given for.
    Standings {
        #[serde(with = "micros")]
        from: DateTime<Utc>,
        #[serde(with = "micros")]
        to: DateTime<Utc>,
        won: i64,
        /// The mean total's bits: exact, where a decimal float's text may come back one unit in
        /// the last place off and page the same row again.
        #[serde(with = "bits")]
        mean: f64,
        played: i64,
        player: String,
    },
}

/// A float in a token, as its IEEE 754 bits.
mod bits {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(x.to_bits())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        u64::deserialize(d).map(f64::from_bits)
    }
}

/// Times in tokens, as microseconds since the epoch (PostgreSQL's precision).
mod micros {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    /// 10000-01-01, where all time's period ends. The times this server puts in tokens (periods'
    /// bounds, matches' ends) lie between the epoch and then; a time outside is not this
    /// server's, and PostgreSQL or a period's bounds could not take every one of them.
    const LATEST: i64 = 253_402_300_800_000_000;

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(t.timestamp_micros())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let micros = i64::deserialize(d)?;
        (0..=LATEST)
            .contains(&micros)
            .then(|| DateTime::from_timestamp_micros(micros))
            .flatten()
            .ok_or_else(|| serde::de::Error::custom("time out of range"))
    }
}

impl Position {
    /// The position as a page token, sealed so that no client can alter or make one.
    pub fn token(&self, tokens: &PageTokens) -> String {
        tokens.seal(&serde_json::to_vec(self).expect("positions serialize"))
    }

    /// `None` for anything this server did not give.
    pub fn from_token(token: &str, tokens: &PageTokens) -> Option<Position> {
        let bytes = tokens.open(token)?;
        let position: Position = serde_json::from_slice(&bytes).ok()?;
        position.could_be_given().then_some(position)
    }

    /// Whether this server could have given the position: counts are not negative (a page's
    /// query negates them) and names hold no NUL (PostgreSQL refuses it in text). Times are
    /// checked as they are read ([`micros`]).
    fn could_be_given(&self) -> bool {
        let (counts, names) = match self {
            Position::Ledger { parent, .. } => (vec![], vec![parent]),
            Position::Results { player, .. } => (vec![], vec![player]),
            Position::Board { period, key, .. } => (vec![key.matches], vec![period, &key.player]),
            Position::Standings {
                won,
                played,
                player,
                ..
            } => (vec![*won, *played], vec![player]),
        };
        counts.iter().all(|n| *n >= 0) && names.iter().all(|name| !name.contains('\0'))
    }
}

/// One ledger row.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryRow {
    pub entry_id: i64,
    pub event_id: Uuid,
    pub table_version: i64,
    pub match_id: Uuid,
    pub hand_number: i32,
    pub seat: i32,
    pub team: Option<i32>,
    pub player_id: Option<String>,
    pub kind: String,
    pub reason: String,
    pub points: i32,
    pub penalty_id: Option<i32>,
    pub voided_by: Option<String>,
    pub multiplier: Option<i32>,
    pub basis: Option<String>,
    pub event_time: DateTime<Utc>,
}

/// Ledger entries of `player` (`None`: everyone's), newest first, below `below`.
pub async fn ledger_entries(
    pool: &PgPool,
    player: Option<&str>,
    match_id: Option<Uuid>,
    below: Option<i64>,
    limit: i64,
) -> Result<Vec<EntryRow>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT entry_id, event_id, table_version, match_id, hand_number, seat, team, player_id,
                kind, reason, points, penalty_id, voided_by, multiplier, basis, event_time
         FROM ledger_entries
         WHERE ($1::text IS NULL OR player_id = $1)
           AND ($2::uuid IS NULL OR match_id = $2)
           AND ($3::bigint IS NULL OR entry_id < $3)
         ORDER BY entry_id DESC LIMIT $4",
    )
    .bind(player)
    .bind(match_id)
    .bind(below)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| EntryRow {
            entry_id: r.get("entry_id"),
            event_id: r.get("event_id"),
            table_version: r.get("table_version"),
            match_id: r.get("match_id"),
            hand_number: r.get("hand_number"),
            seat: r.get("seat"),
            team: r.get("team"),
            player_id: r.get("player_id"),
            kind: r.get("kind"),
            reason: r.get("reason"),
            points: r.get("points"),
            penalty_id: r.get("penalty_id"),
            voided_by: r.get("voided_by"),
            multiplier: r.get("multiplier"),
            basis: r.get("basis"),
            event_time: r.get("event_time"),
        })
        .collect())
}

/// A match and its ended deals.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchRow {
    pub match_id: Uuid,
    pub rules: serde_json::Value,
    pub seat_players: Vec<Option<String>>,
    pub bots: Vec<bool>,
    pub names: Vec<Option<String>>,
    /// The table's name of each seat's bot (`bots/{level}-{seat}`), where it is known.
    pub bot_names: Vec<Option<String>>,
    pub ranked: bool,
    pub started_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
    pub totals: Option<Vec<i64>>,
    pub winners: Option<Vec<i32>>,
    pub draw: Option<bool>,
    pub hands: Vec<HandRow>,
}

/// One ended deal.
#[derive(Clone, Debug, PartialEq)]
pub struct HandRow {
    pub hand_number: i32,
    pub outcome: String,
    pub winner_seat: Option<i32>,
    pub multiplier: i32,
    pub scores: Vec<i32>,
    pub penalties: Vec<i32>,
    pub totals_after: Vec<i64>,
    pub seed_sha256: String,
    pub seed: String,
    pub verified: bool,
}

/// The match, with its ended deals in order; `None` when scoring has no such match.
pub async fn match_result(pool: &PgPool, match_id: Uuid) -> Result<Option<MatchRow>, sqlx::Error> {
    let Some(r) = sqlx::query(
        "SELECT match_id, rules, seat_players, seat_bots, seat_names, seat_bot_names, ranked,
                started_at, ended_at, totals, winners, draw
         FROM matches WHERE match_id = $1",
    )
    .bind(match_id)
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let hands = sqlx::query(
        "SELECT hand_number, outcome, winner_seat, multiplier, scores, penalties, totals_after,
                seed_sha256, seed, verified
         FROM hands WHERE match_id = $1 AND ended_at IS NOT NULL ORDER BY dealt_version",
    )
    .bind(match_id)
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|h| HandRow {
        hand_number: h.get("hand_number"),
        outcome: h.get("outcome"),
        winner_seat: h.get("winner_seat"),
        multiplier: h.get::<Option<i32>, _>("multiplier").unwrap_or(1),
        scores: h.get::<Option<Vec<i32>>, _>("scores").unwrap_or_default(),
        penalties: h
            .get::<Option<Vec<i32>>, _>("penalties")
            .unwrap_or_default(),
        totals_after: h
            .get::<Option<Vec<i64>>, _>("totals_after")
            .unwrap_or_default(),
        seed_sha256: h.get("seed_sha256"),
        seed: h.get::<Option<String>, _>("seed").unwrap_or_default(),
        verified: h.get::<Option<bool>, _>("verified").unwrap_or(false),
    })
    .collect();
    Ok(Some(MatchRow {
        match_id: r.get("match_id"),
        rules: r.get("rules"),
        seat_players: r.get("seat_players"),
        bots: r.get("seat_bots"),
        names: r.get("seat_names"),
        bot_names: r.get("seat_bot_names"),
        ranked: r.get("ranked"),
        started_at: r.get("started_at"),
        ended_at: r.get("ended_at"),
        totals: r.get("totals"),
        winners: r.get("winners"),
        draw: r.get("draw"),
        hands,
    }))
}

/// The ended matches `player` held a seat of, newest first, after `after`.
pub async fn matches_of(
    pool: &PgPool,
    player: &str,
    after: Option<(DateTime<Utc>, Uuid)>,
    limit: i64,
) -> Result<Vec<(DateTime<Utc>, Uuid)>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT ended_at, match_id FROM match_results
         WHERE player_id = $1
           AND ($2::timestamptz IS NULL OR (ended_at, match_id) < ($2, $3))
         ORDER BY ended_at DESC, match_id DESC LIMIT $4",
    )
    .bind(player)
    .bind(after.map(|a| a.0))
    .bind(after.map(|a| a.1))
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.get("ended_at"), r.get("match_id")))
        .collect())
}

/// One player's standing.
#[derive(Clone, Debug, PartialEq)]
pub struct StandingRow {
    pub rank: i64,
    pub player: String,
    pub display_name: Option<String>,
    pub played: i64,
    pub won: i64,
    pub mean: f64,
}

/// A period's standings, kept at write time (`standings`, one row per period and player), in
/// their order: matches won (more first), mean total (lower first), matches played (more first),
/// player id. `$1` the period, `$2` its start; the display name is the one the player last sat
/// down with (read for the page's rows only).
fn standings_query(condition: &str, limit: &str) -> String {
    format!(
        "SELECT s.player_id, s.played, s.won, s.mean,
                (SELECT display_name FROM match_results m
                 WHERE m.player_id = s.player_id AND display_name IS NOT NULL
                 ORDER BY ended_at DESC LIMIT 1) AS display_name
         FROM (SELECT player_id, played, won, mean, minus_won, minus_played FROM standings
               WHERE period = $1 AND starts = $2 {condition}
               ORDER BY minus_won, mean, minus_played, player_id {limit}) s
         ORDER BY s.minus_won, s.mean, s.minus_played, s.player_id"
    )
}

fn standing(r: sqlx::postgres::PgRow, rank: i64) -> StandingRow {
    StandingRow {
        rank,
        player: r.get("player_id"),
        display_name: r.get("display_name"),
        played: r.get("played"),
        won: r.get("won"),
        mean: r.get("mean"),
    }
}

/// The place of a standing: 1 + the players strictly ahead (equal results share a place).
async fn standing_rank(
    pool: &PgPool,
    period: Period,
    starts: DateTime<Utc>,
    (won, mean, played): (i64, f64, i64),
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT 1 + count(*) FROM standings
         WHERE period = $1 AND starts = $2 AND (minus_won, mean, minus_played) < ($3, $4, $5)",
    )
    .bind(period.as_str())
    .bind(starts)
    .bind(-won)
    .bind(mean)
    .bind(-played)
    .fetch_one(pool)
    .await
}

/// A page of the standings of `period` that started at `starts`, after `after` (won, mean,
/// played, player).
pub async fn standings(
    pool: &PgPool,
    period: Period,
    starts: DateTime<Utc>,
    after: Option<(i64, f64, i64, String)>,
    limit: i64,
) -> Result<Vec<StandingRow>, sqlx::Error> {
    let rows = match &after {
        None => {
            sqlx::query(sqlx::AssertSqlSafe(standings_query("", "LIMIT $3")))
                .bind(period.as_str())
                .bind(starts)
                .bind(limit)
                .fetch_all(pool)
                .await?
        }
        Some((won, mean, played, player)) => {
            let query = standings_query(
                "AND (minus_won, mean, minus_played, player_id) > ($3, $4, $5, $6)",
                "LIMIT $7",
            );
            sqlx::query(sqlx::AssertSqlSafe(query))
                .bind(period.as_str())
                .bind(starts)
                .bind(-won)
                .bind(mean)
                .bind(-played)
                .bind(player)
                .bind(limit)
                .fetch_all(pool)
                .await?
        }
    };
    let mut out: Vec<StandingRow> = Vec::with_capacity(rows.len());
    // Where the first row stands in the whole order: after every player ahead of it and every
    // player it ties with who is listed before it (a page can start inside a shared place).
    let mut first_position = 0;
    for (i, row) in rows.into_iter().enumerate() {
        let mut next = standing(row, 0);
        let key = (next.won, next.mean, next.played);
        next.rank = match out.last() {
            None => {
                let rank = standing_rank(pool, period, starts, key).await?;
                first_position =
                    rank + standing_ties_before(pool, period, starts, key, &next.player).await?;
                rank
            }
            Some(prev) if (prev.won, prev.mean, prev.played) == key => prev.rank,
            Some(_) => first_position + i as i64,
        };
        out.push(next);
    }
    Ok(out)
}

/// The players of the standings who share the place of `key` and are listed before `player`.
async fn standing_ties_before(
    pool: &PgPool,
    period: Period,
    starts: DateTime<Utc>,
    (won, mean, played): (i64, f64, i64),
    player: &str,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT count(*) FROM standings
         WHERE period = $1 AND starts = $2 AND (minus_won, mean, minus_played) = ($3, $4, $5)
           AND player_id < $6",
    )
    .bind(period.as_str())
    .bind(starts)
    .bind(-won)
    .bind(mean)
    .bind(-played)
    .bind(player)
    .fetch_one(pool)
    .await
}

/// One player's standing in `period` that started at `starts`, if they played a ranked match
/// then.
pub async fn standing_of(
    pool: &PgPool,
    period: Period,
    starts: DateTime<Utc>,
    player: &str,
) -> Result<Option<StandingRow>, sqlx::Error> {
    let query = standings_query("AND player_id = $3", "");
    let row = sqlx::query(sqlx::AssertSqlSafe(query))
        .bind(period.as_str())
        .bind(starts)
        .bind(player)
        .fetch_optional(pool)
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let mut found = standing(row, 0);
    found.rank = standing_rank(pool, period, starts, (found.won, found.mean, found.played)).await?;
    Ok(Some(found))
}

/// A leaderboard: all time (by rating), or one period's (by score) that started at `starts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Board {
    AllTime,
    Period {
        period: Period,
        starts: DateTime<Utc>,
    },
}

/// A row's place in its board's order: all time, rating points (higher first) then player id
/// (higher first); a period, minus twice the score (lower first), matches (fewer first), then
/// player id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardKey {
    #[serde(rename = "o")]
    pub order: i64,
    #[serde(rename = "n")]
    pub matches: i64,
    #[serde(rename = "p")]
    pub player: String,
}

/// One row of a leaderboard.
#[derive(Clone, Debug, PartialEq)]
pub struct BoardRow {
    pub player: String,
    pub display_name: Option<String>,
    pub points: i32,
    pub uncertainty: f64,
    pub matches: i64,
    pub wins: i64,
    /// Twice the period's score (0 all time).
    pub score2: i64,
}

impl BoardRow {
    pub fn key(&self, board: Board) -> BoardKey {
        BoardKey {
            order: match board {
                Board::AllTime => i64::from(self.points),
                Board::Period { .. } => -self.score2,
            },
            matches: self.matches,
            player: self.player.clone(),
        }
    }

    /// Whether two rows share a place on `board`.
    pub fn ties(&self, other: &BoardRow, board: Board) -> bool {
        match board {
            Board::AllTime => self.points == other.points,
            Board::Period { .. } => self.score2 == other.score2 && self.matches == other.matches,
        }
    }
}

fn board_row(r: sqlx::postgres::PgRow) -> BoardRow {
    BoardRow {
        player: r.get("player_id"),
        display_name: r.get("display_name"),
        points: r.get("points"),
        uncertainty: r.get("uncertainty"),
        matches: r.get("matches"),
        wins: r.get("wins"),
        score2: r.get("score2"),
    }
}

const ALL_TIME_ROWS: &str = "SELECT player_id, display_name, points, uncertainty, matches, wins,
        0::bigint AS score2
    FROM ratings WHERE matches >= $1 AND $2::text IS NULL AND $3::timestamptz IS NULL";

const PERIOD_ROWS: &str = "SELECT p.player_id, r.display_name,
        coalesce(r.points, 1500) AS points, coalesce(r.uncertainty, 500) AS uncertainty,
        p.matches, p.wins, p.score2
    FROM period_scores p LEFT JOIN ratings r USING (player_id)
    WHERE p.matches >= $1 AND p.period = $2 AND p.starts = $3";

/// Which side of a key a page reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Rows after the key in the board's order (the next page).
    After,
    /// The key's own row and those after it (a page that starts at a row).
    From,
    /// Rows before the key, nearest first (those above a player).
    Before,
}

/// Up to `limit` rows of `board` with at least `min` matches on `side` of `key` (`None`: from
/// the top), in the board's order (nearest first for [`Side::Before`]).
pub async fn board_rows(
    pool: &PgPool,
    board: Board,
    min: i64,
    key: Option<&BoardKey>,
    side: Side,
    limit: i64,
) -> Result<Vec<BoardRow>, sqlx::Error> {
    // The board's order is one index range in either direction.
    let (rows, order, cmp) = match board {
        Board::AllTime => (
            ALL_TIME_ROWS,
            ("points DESC, player_id DESC", "points ASC, player_id ASC"),
            "(points, player_id)",
        ),
        Board::Period { .. } => (
            PERIOD_ROWS,
            (
                "p.minus_score2, p.matches, p.player_id",
                "p.minus_score2 DESC, p.matches DESC, p.player_id DESC",
            ),
            "(p.minus_score2, p.matches, p.player_id)",
        ),
    };
    let all_time = board == Board::AllTime;
    // "After" on the all-time board is lower (points, player_id); on a period board higher.
    let (op, order) = match (side, all_time) {
        (Side::After, true) => ("<", order.0),
        (Side::From, true) => ("<=", order.0),
        (Side::Before, true) => (">", order.1),
        (Side::After, false) => (">", order.0),
        (Side::From, false) => (">=", order.0),
        (Side::Before, false) => ("<", order.1),
    };
    let (period, starts) = match board {
        Board::AllTime => (None, None),
        Board::Period { period, starts } => (Some(period.as_str()), Some(starts)),
    };
    let rows = match (key, all_time) {
        (None, _) => {
            let query = format!("{rows} ORDER BY {order} LIMIT $4");
            sqlx::query(sqlx::AssertSqlSafe(query))
                .bind(min)
                .bind(period)
                .bind(starts)
                .bind(limit)
                .fetch_all(pool)
                .await?
        }
        (Some(key), true) => {
            let query = format!(
                "{rows} AND {cmp} {op} ($4::integer, $5::text)
                 ORDER BY {order} LIMIT $6"
            );
            sqlx::query(sqlx::AssertSqlSafe(query))
                .bind(min)
                .bind(period)
                .bind(starts)
                .bind(i32::try_from(key.order).unwrap_or(i32::MAX))
                .bind(&key.player)
                .bind(limit)
                .fetch_all(pool)
                .await?
        }
        (Some(key), false) => {
            let query = format!(
                "{rows} AND {cmp} {op} ($4::bigint, $5::bigint, $6::text)
                 ORDER BY {order} LIMIT $7"
            );
            sqlx::query(sqlx::AssertSqlSafe(query))
                .bind(min)
                .bind(period)
                .bind(starts)
                .bind(key.order)
                .bind(key.matches)
                .bind(&key.player)
                .bind(limit)
                .fetch_all(pool)
                .await?
        }
    };
    Ok(rows.into_iter().map(board_row).collect())
}

/// The place of `row` on `board` among players with at least `min` matches: 1 + those ahead of
/// it (equal results share a place). The players ahead are summed from the board's positions
/// (`rating_places`, `period_places`: players per position, kept by triggers; see
/// `migrations/scoring/0006_places.sql`), not counted one by one; an all-time board that asks for
/// more matches than the positions keep counts its players.
pub async fn board_rank(
    pool: &PgPool,
    board: Board,
    min: i64,
    row: &BoardRow,
) -> Result<i64, sqlx::Error> {
    match board {
        Board::AllTime => {
            sqlx::query_scalar(
                "SELECT 1 + CASE WHEN $1 <= rating_places_matches_cap()
                    THEN (SELECT coalesce(sum(players), 0)::bigint FROM rating_places
                          WHERE matches >= $1 AND points > $2)
                    ELSE (SELECT count(*) FROM ratings WHERE matches >= $1 AND points > $2)
                 END",
            )
            .bind(min)
            .bind(row.points)
            .fetch_one(pool)
            .await
        }
        Board::Period { period, starts } => {
            sqlx::query_scalar(
                "SELECT 1 + coalesce(sum(players), 0)::bigint FROM period_places
                 WHERE period = $1 AND starts = $2 AND matches >= $3
                   AND (minus_score2, matches) < ($4, $5)",
            )
            .bind(period.as_str())
            .bind(starts)
            .bind(min)
            .bind(-row.score2)
            .bind(row.matches)
            .fetch_one(pool)
            .await
        }
    }
}

/// The players listed on `board` (at least `min` matches) who share the place of `row` and are
/// listed before it: `board_rank` plus these is where `row` stands in the board's order.
pub async fn board_ties_before(
    pool: &PgPool,
    board: Board,
    min: i64,
    row: &BoardRow,
) -> Result<i64, sqlx::Error> {
    match board {
        // Best first, then player ids from the last.
        Board::AllTime => {
            sqlx::query_scalar(
                "SELECT count(*) FROM ratings
                 WHERE matches >= $1 AND points = $2 AND player_id > $3",
            )
            .bind(min)
            .bind(row.points)
            .bind(&row.player)
            .fetch_one(pool)
            .await
        }
        Board::Period { period, starts } => {
            sqlx::query_scalar(
                "SELECT count(*) FROM period_scores
                 WHERE period = $1 AND starts = $2 AND matches >= $3
                   AND minus_score2 = $4 AND matches = $5 AND player_id < $6",
            )
            .bind(period.as_str())
            .bind(starts)
            .bind(min)
            .bind(-row.score2)
            .bind(row.matches)
            .bind(&row.player)
            .fetch_one(pool)
            .await
        }
    }
}

/// `player`'s row on `board`, if listed there (at least `min` matches).
pub async fn board_row_of(
    pool: &PgPool,
    board: Board,
    min: i64,
    player: &str,
) -> Result<Option<BoardRow>, sqlx::Error> {
    let row = match board {
        Board::AllTime => {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "{ALL_TIME_ROWS} AND player_id = $4"
            )))
            .bind(min)
            .bind(None::<&str>)
            .bind(None::<DateTime<Utc>>)
            .bind(player)
            .fetch_optional(pool)
            .await?
        }
        Board::Period { period, starts } => {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "{PERIOD_ROWS} AND p.player_id = $4"
            )))
            .bind(min)
            .bind(period.as_str())
            .bind(starts)
            .bind(player)
            .fetch_optional(pool)
            .await?
        }
    };
    Ok(row.map(board_row))
}

/// A player's rating as kept.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingRow {
    pub player: String,
    pub display_name: Option<String>,
    pub rating: f64,
    pub uncertainty: f64,
    pub points: i32,
    pub matches: i64,
    pub wins: i64,
    pub last_ended_at: DateTime<Utc>,
}

/// `player`'s rating; `None` before their first rated match.
pub async fn rating_of(pool: &PgPool, player: &str) -> Result<Option<RatingRow>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT player_id, display_name, rating, uncertainty, points, matches, wins,
                last_ended_at
         FROM ratings WHERE player_id = $1",
    )
    .bind(player)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| RatingRow {
        player: r.get("player_id"),
        display_name: r.get("display_name"),
        rating: r.get("rating"),
        uncertainty: r.get("uncertainty"),
        points: r.get("points"),
        matches: r.get("matches"),
        wins: r.get("wins"),
        last_ended_at: r.get("last_ended_at"),
    }))
}

/// Messages set aside as unreadable, and hands whose re-verification found a difference.
pub async fn ledger_counts(pool: &PgPool) -> Result<(i64, i64), sqlx::Error> {
    sqlx::query_as(
        "SELECT (SELECT count(*) FROM poison_events),
                (SELECT count(*) FROM hands WHERE verified = false)",
    )
    .fetch_one(pool)
    .await
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn tokens() -> PageTokens {
        PageTokens::with_key([3; 32])
    }

    #[test]
    fn tokens_round_trip_and_anything_else_is_refused() {
        let p = Position::Standings {
            from: Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap(),
            to: Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap(),
            won: 3,
            mean: 1.0 / 3.0,
            played: 7,
            player: "players/x".into(),
        };
        assert_eq!(
            Position::from_token(&p.token(&tokens()), &tokens()),
            Some(p)
        );
        assert_eq!(Position::from_token("not a token", &tokens()), None);
        assert_eq!(Position::from_token(&tokens().seal(b"{}"), &tokens()), None);
        // The position's JSON alone (as tokens were before they were sealed) is not a token.
        let unsealed = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            br#"{"k":"ledger","parent":"players/-","m":null,"below":5}"#,
        );
        assert_eq!(Position::from_token(&unsealed, &tokens()), None);
    }

    /// A mean whose shortest decimal text does not parse back to the same float with every
    /// parser (602/3 did not with serde_json's default): the token keeps it exact, so the next
    /// page starts after that row, not at it again.
    #[test]
    fn a_mean_comes_back_from_a_token_to_the_bit() {
        for (sum, played) in [
            (602.0, 3.0),
            (496.0, 3.0),
            (1.0, 3.0),
            (2021.0, 7.0),
            (1e6 + 1.0, 9.0),
        ] {
            let mean: f64 = sum / played;
            let p = Position::Standings {
                from: Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap(),
                to: Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap(),
                won: 1,
                mean,
                played: 3,
                player: "players/x".into(),
            };
            match Position::from_token(&p.token(&tokens()), &tokens()) {
                Some(Position::Standings { mean: back, .. }) => {
                    assert_eq!(back.to_bits(), mean.to_bits(), "{sum}/{played}")
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn tokens_with_values_this_server_never_gives_are_refused() {
        // Sealed with the server's key, as a bug could give them: still refused.
        let token = |json: &str| tokens().seal(json.as_bytes());
        for json in [
            // Before the epoch (-100000-01-01: PostgreSQL cannot hold it).
            r#"{"k":"standings","from":-3217862419200000000,"to":0,"won":0,"mean":0,"played":0,"player":"players/x"}"#,
            // Days before chrono's last date (a month's bounds cannot be computed).
            r#"{"k":"board","period":"month","starts":8210265408000000000,"min":1,"around":false,"key":{"o":0,"n":0,"p":"players/x"}}"#,
            // A count that cannot be negated.
            r#"{"k":"standings","from":0,"to":0,"won":-9223372036854775808,"mean":0,"played":0,"player":"players/x"}"#,
            // A NUL in a name.
            r#"{"k":"board","period":"all","starts":0,"min":1,"around":false,"key":{"o":0,"n":0,"p":"a\u0000b"}}"#,
            r#"{"k":"results","player":"players/\u0000","ended_at":0,"match_id":"6a1f2d3c-4b5e-4f60-8a71-92b3c4d5e6f7"}"#,
        ] {
            assert_eq!(
                Position::from_token(&token(json), &tokens()),
                None,
                "{json}"
            );
        }
        let board = r#"{"k":"board","period":"all","starts":0,"min":1,"around":false,"key":{"o":-5,"n":0,"p":"players/x"}}"#;
        assert!(Position::from_token(&token(board), &tokens()).is_some());
    }
}
