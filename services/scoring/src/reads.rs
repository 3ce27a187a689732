//! What the API reads from the scoring database: ledger entries, match results and standings,
//! each page after a keyset position (so a position stays valid while rows are added), and the
//! page tokens that carry those positions.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Datelike, Duration, NaiveTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use sqlx::{PgPool, Row};
use uuid::Uuid;

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
    /// ListStandings: players after this one, within the period it was given for.
    Standings {
        #[serde(with = "micros")]
        from: DateTime<Utc>,
        #[serde(with = "micros")]
        to: DateTime<Utc>,
        won: i64,
        mean: f64,
        played: i64,
        player: String,
    },
}

/// Times in tokens, as microseconds since the epoch (PostgreSQL's precision).
mod micros {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(t.timestamp_micros())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let micros = i64::deserialize(d)?;
        DateTime::from_timestamp_micros(micros)
            .ok_or_else(|| serde::de::Error::custom("time out of range"))
    }
}

impl Position {
    pub fn token(&self) -> String {
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).expect("positions serialize"))
    }

    /// `None` for anything this server did not give.
    pub fn from_token(token: &str) -> Option<Position> {
        let bytes = URL_SAFE_NO_PAD.decode(token).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// The standings periods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Period {
    AllTime,
    Day,
    Week,
    Month,
}

impl Period {
    /// The current period at `now`: [from, to).
    pub fn bounds(self, now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
        let midnight = |d: chrono::NaiveDate| Utc.from_utc_datetime(&d.and_time(NaiveTime::MIN));
        let today = now.date_naive();
        match self {
            Period::AllTime => (
                DateTime::<Utc>::UNIX_EPOCH,
                Utc.with_ymd_and_hms(10_000, 1, 1, 0, 0, 0)
                    .single()
                    .expect("a valid time"),
            ),
            Period::Day => (midnight(today), midnight(today) + Duration::days(1)),
            Period::Week => {
                let monday =
                    today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
                (midnight(monday), midnight(monday) + Duration::days(7))
            }
            Period::Month => {
                let first = today.with_day(1).expect("day 1 exists");
                let next = if first.month() == 12 {
                    first
                        .with_year(first.year() + 1)
                        .and_then(|d| d.with_month(1))
                } else {
                    first.with_month(first.month() + 1)
                }
                .expect("the first of the next month exists");
                (midnight(first), midnight(next))
            }
        }
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
        "SELECT match_id, rules, seat_players, seat_bots, seat_names, ranked, started_at,
                ended_at, totals, winners, draw
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

/// The ranking of ranked matches ended in [from, to): who, place, played, won, mean total.
const STANDINGS: &str = "
    WITH s AS (
        SELECT player_id, count(*) AS played, count(*) FILTER (WHERE won) AS won,
               avg(total)::float8 AS mean
        FROM match_results
        WHERE ranked AND ended_at >= $1 AND ended_at < $2
        GROUP BY player_id
    ), r AS (
        SELECT s.*, rank() OVER (ORDER BY won DESC, mean ASC, played DESC) AS place FROM s
    )
    SELECT r.*, (SELECT display_name FROM match_results m
                 WHERE m.player_id = r.player_id AND display_name IS NOT NULL
                 ORDER BY ended_at DESC LIMIT 1) AS display_name
    FROM r";

fn standing(r: sqlx::postgres::PgRow) -> StandingRow {
    StandingRow {
        rank: r.get("place"),
        player: r.get("player_id"),
        display_name: r.get("display_name"),
        played: r.get("played"),
        won: r.get("won"),
        mean: r.get("mean"),
    }
}

/// A page of standings of [from, to), after `after` (won, mean, played, player).
pub async fn standings(
    pool: &PgPool,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    after: Option<(i64, f64, i64, String)>,
    limit: i64,
) -> Result<Vec<StandingRow>, sqlx::Error> {
    let query = format!(
        "{STANDINGS}
         WHERE $3::bigint IS NULL
            OR r.won < $3
            OR (r.won = $3 AND (r.mean > $4
                OR (r.mean = $4 AND (r.played < $5
                    OR (r.played = $5 AND r.player_id > $6)))))
         ORDER BY r.won DESC, r.mean ASC, r.played DESC, r.player_id ASC
         LIMIT $7"
    );
    let (won, mean, played, player) = match after {
        Some((w, m, p, id)) => (Some(w), Some(m), Some(p), Some(id)),
        None => (None, None, None, None),
    };
    let rows = sqlx::query(sqlx::AssertSqlSafe(query))
        .bind(from)
        .bind(to)
        .bind(won)
        .bind(mean)
        .bind(played)
        .bind(player)
        .bind(limit)
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(standing).collect())
}

/// One player's standing in [from, to), if they played a ranked match then.
pub async fn standing_of(
    pool: &PgPool,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    player: &str,
) -> Result<Option<StandingRow>, sqlx::Error> {
    let query = format!("{STANDINGS} WHERE r.player_id = $3");
    let row = sqlx::query(sqlx::AssertSqlSafe(query))
        .bind(from)
        .bind(to)
        .bind(player)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(standing))
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
    use super::*;

    #[test]
    fn periods_are_utc_day_iso_week_and_month() {
        let now = Utc.with_ymd_and_hms(2026, 12, 31, 23, 59, 0).unwrap();
        let day = Period::Day.bounds(now);
        assert_eq!(day.0, Utc.with_ymd_and_hms(2026, 12, 31, 0, 0, 0).unwrap());
        assert_eq!(day.1, Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap());
        let week = Period::Week.bounds(now);
        assert_eq!(
            week.0,
            Utc.with_ymd_and_hms(2026, 12, 28, 0, 0, 0).unwrap(),
            "a Monday"
        );
        assert_eq!(week.1, Utc.with_ymd_and_hms(2027, 1, 4, 0, 0, 0).unwrap());
        let month = Period::Month.bounds(now);
        assert_eq!(month.0, Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap());
        assert_eq!(month.1, Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap());
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
        assert_eq!(Position::from_token(&p.token()), Some(p));
        assert_eq!(Position::from_token("not a token"), None);
        assert_eq!(Position::from_token(&URL_SAFE_NO_PAD.encode(b"{}")), None);
    }
}
