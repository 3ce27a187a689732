//! The scoring database: applying one table event in one transaction (its applied-event record,
//! the table's fold and everything the fold wrote), the poison record, and the reads the API
//! serves. The fold itself is `projection`; the re-verification `verify`.

use chrono::{DateTime, Utc};
use okey_rules::{Outcome, RuleSet};
use okey_table::{Published, Shown, TableEvent};
use sqlx::{PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use crate::projection::{self, Change, Entry, Tally};
use crate::verify::{self, Dealt, Ended, PublicPlay, Verification};

/// A table event as it arrived, read through `okey_table::Published`.
#[derive(Clone, Debug)]
pub struct Incoming {
    pub table_id: Uuid,
    pub event_id: Uuid,
    pub version: u64,
    pub time: DateTime<Utc>,
    pub published: Published,
}

/// Why a message is not a table event scoring can apply.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Unreadable {
    #[error("not a table event envelope: {0}")]
    Envelope(String),
    #[error("table {0:?} is not tables/{{uuid}}")]
    Table(String),
    #[error("event id {0:?} is not a UUID")]
    EventId(String),
    #[error("version 0")]
    Version,
    #[error("time {0:?} is not RFC 3339")]
    Time(String),
}

impl Incoming {
    /// Reads a message of the public subject.
    pub fn decode(payload: &[u8]) -> Result<Incoming, Unreadable> {
        let published =
            Published::decode(payload).map_err(|e| Unreadable::Envelope(e.to_string()))?;
        let table_id = published
            .table
            .strip_prefix("tables/")
            .and_then(|t| Uuid::parse_str(t).ok())
            .ok_or_else(|| Unreadable::Table(published.table.clone()))?;
        let event_id = Uuid::parse_str(&published.event_id)
            .map_err(|_| Unreadable::EventId(published.event_id.clone()))?;
        if published.version == 0 {
            return Err(Unreadable::Version);
        }
        let time = DateTime::parse_from_rfc3339(&published.time)
            .map_err(|_| Unreadable::Time(published.time.clone()))?
            .with_timezone(&Utc);
        Ok(Incoming {
            table_id,
            event_id,
            version: published.version,
            time,
            published,
        })
    }
}

/// What applying an event did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// Applied now (with the re-verification of a hand it ended, if any).
    Fresh { hand_verified: Option<bool> },
    /// In order but not applicable (recorded with its reason; the table moves on).
    SetAside(String),
    /// This version (or a later one) of the table was applied before: nothing changed.
    Duplicate,
    /// An earlier version of the table has not arrived yet: nothing changed, try again later.
    Early { expected: u64 },
}

/// Applies one event, exactly once and in its table's version order.
pub async fn apply(pool: &PgPool, incoming: &Incoming) -> Result<Applied, sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO table_progress (table_id, version, tally) VALUES ($1, 0, $2)
         ON CONFLICT (table_id) DO NOTHING",
    )
    .bind(incoming.table_id)
    .bind(sqlx::types::Json(Tally::default()))
    .execute(&mut *tx)
    .await?;
    let row =
        sqlx::query("SELECT version, tally FROM table_progress WHERE table_id = $1 FOR UPDATE")
            .bind(incoming.table_id)
            .fetch_one(&mut *tx)
            .await?;
    let applied: i64 = row.get("version");
    let mut applied = applied as u64;
    // Versions whose message could not be read at all were set aside as poison: the table moves
    // on past them rather than waiting for ever.
    while incoming.version > applied + 1 {
        let poisoned: Option<i64> = sqlx::query_scalar(
            "SELECT poison_id FROM poison_events WHERE table_id = $1 AND version = $2 LIMIT 1",
        )
        .bind(incoming.table_id)
        .bind((applied + 1) as i64)
        .fetch_optional(&mut *tx)
        .await?;
        if poisoned.is_none() {
            break;
        }
        applied += 1;
    }
    if incoming.version <= applied {
        tx.rollback().await?;
        return Ok(Applied::Duplicate);
    }
    if incoming.version > applied + 1 {
        tx.rollback().await?;
        return Ok(Applied::Early {
            expected: applied + 1,
        });
    }
    let sqlx::types::Json(mut tally): sqlx::types::Json<Tally> = row.get("tally");
    let verification = match &incoming.published.event {
        Shown::Public {
            event: ended @ TableEvent::HandEnded { .. },
        } => Some(reverify(&mut tx, incoming.table_id, &tally, ended).await?),
        _ => None,
    };
    let event_type = event_type(&incoming.published.event);
    let folded = projection::fold(
        &mut tally,
        incoming.version,
        &incoming.published.event,
        verification.as_ref(),
    );
    let set_aside = folded.as_ref().err().map(ToString::to_string);
    sqlx::query(
        "INSERT INTO applied_events (event_id, table_id, version, event_type, event_time, payload,
             set_aside)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(incoming.event_id)
    .bind(incoming.table_id)
    .bind(incoming.version as i64)
    .bind(event_type)
    .bind(incoming.time)
    .bind(sqlx::types::Json(&incoming.published))
    .bind(&set_aside)
    .execute(&mut *tx)
    .await?;
    let mut hand_verified = None;
    if let Ok(changes) = &folded {
        for change in changes {
            if let Change::HandEnded { verified, .. } = change {
                hand_verified = Some(*verified);
            }
            write(&mut tx, incoming, change).await?;
        }
    }
    sqlx::query(
        "UPDATE table_progress SET version = $2, tally = $3, updated_at = now()
         WHERE table_id = $1",
    )
    .bind(incoming.table_id)
    .bind(incoming.version as i64)
    .bind(sqlx::types::Json(&tally))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(match set_aside {
        Some(reason) => Applied::SetAside(reason),
        None => Applied::Fresh { hand_verified },
    })
}

/// Keeps an event that came before an earlier version of its table, to apply it after that one.
pub async fn keep_early(
    pool: &PgPool,
    incoming: &Incoming,
    payload: &[u8],
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO early_events (table_id, version, payload) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING",
    )
    .bind(incoming.table_id)
    .bind(incoming.version as i64)
    .bind(payload)
    .execute(pool)
    .await?;
    Ok(())
}

/// Applies, in version order, the kept early events of a table that are next now; returns what
/// each did.
pub async fn apply_waiting(pool: &PgPool, table_id: Uuid) -> Result<Vec<Applied>, sqlx::Error> {
    let mut done = Vec::new();
    loop {
        let next: Option<(i64, Vec<u8>)> = sqlx::query_as(
            "SELECT e.version, e.payload FROM early_events e
             JOIN table_progress p ON p.table_id = e.table_id
             WHERE e.table_id = $1 AND e.version <= p.version + 1
             ORDER BY e.version LIMIT 1",
        )
        .bind(table_id)
        .fetch_optional(pool)
        .await?;
        let Some((version, payload)) = next else {
            return Ok(done);
        };
        // What was kept was readable when it came; it still is (same build or a later one).
        if let Ok(incoming) = Incoming::decode(&payload) {
            done.push(apply(pool, &incoming).await?);
        }
        sqlx::query("DELETE FROM early_events WHERE table_id = $1 AND version = $2")
            .bind(table_id)
            .bind(version)
            .execute(pool)
            .await?;
    }
}

/// The stable name of a published event (`hand_dealt`, `played:penalty_charged`, …).
fn event_type(shown: &Shown) -> String {
    match shown {
        Shown::Dealt { .. } => "hand_dealt".into(),
        Shown::Drawn { .. } => "played:tile_drawn".into(),
        Shown::Public { event } => match event {
            TableEvent::Played { event, .. } => format!("played:{}", snake(event.name())),
            other => snake(other.name()),
        },
    }
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Re-verifies the hand `ended` ends from the events of it this service applied.
async fn reverify(
    tx: &mut Transaction<'_, Postgres>,
    table_id: Uuid,
    tally: &Tally,
    ended: &TableEvent,
) -> Result<Verification, sqlx::Error> {
    let TableEvent::HandEnded {
        end,
        result,
        totals,
        seed,
        ..
    } = ended
    else {
        unreachable!("called for hand_ended")
    };
    let (Some(rules), Some(hand)) = (&tally.rules, &tally.hand) else {
        return Ok(Verification {
            problem: Some("no hand was dealt".into()),
            bases: None,
        });
    };
    let rows: Vec<sqlx::types::Json<Published>> = sqlx::query_scalar(
        "SELECT payload FROM applied_events WHERE table_id = $1 AND version > $2
         ORDER BY version",
    )
    .bind(table_id)
    .bind(hand.dealt_version as i64)
    .fetch_all(&mut **tx)
    .await?;
    let plays: Vec<PublicPlay> = rows
        .into_iter()
        .filter_map(|sqlx::types::Json(p)| match p.event {
            Shown::Drawn { seat, .. } => Some(PublicPlay::Drawn(seat)),
            Shown::Public {
                event: TableEvent::Played { event, .. },
            } => Some(PublicPlay::Event(event)),
            _ => None,
        })
        .collect();
    let rules: &RuleSet = rules;
    let verification = verify::verify_hand(
        &Dealt {
            rules,
            first: hand.first,
            indicator: hand.indicator,
            seed_sha256: &hand.seed_sha256,
        },
        &plays,
        &Ended {
            end,
            result,
            totals,
            seed,
        },
        tally.totals,
    );
    Ok(verification)
}

async fn write(
    tx: &mut Transaction<'_, Postgres>,
    incoming: &Incoming,
    change: &Change,
) -> Result<(), sqlx::Error> {
    let match_id = incoming.table_id;
    match change {
        Change::MatchCreated {
            origin,
            rules,
            seating,
        } => {
            let origin = serde_json::to_value(origin)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "operator".into());
            sqlx::query(
                "INSERT INTO matches (match_id, origin, preset, partners, rules, seat_players,
                     seat_bots, seat_names, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(match_id)
            .bind(origin)
            .bind(rules.preset.name())
            .bind(rules.partners)
            .bind(sqlx::types::Json(rules))
            .bind(seating.players.to_vec())
            .bind(seating.bots.to_vec())
            .bind(seating.names.to_vec())
            .bind(incoming.time)
            .execute(&mut **tx)
            .await?;
        }
        Change::Seats(seating) => {
            sqlx::query(
                "UPDATE matches SET seat_players = $2, seat_bots = $3, seat_names = $4
                 WHERE match_id = $1",
            )
            .bind(match_id)
            .bind(seating.players.to_vec())
            .bind(seating.bots.to_vec())
            .bind(seating.names.to_vec())
            .execute(&mut **tx)
            .await?;
        }
        Change::HandDealt {
            number,
            dealt_version,
            first,
            indicator,
            seed_sha256,
            first_of_match,
        } => {
            sqlx::query(
                "INSERT INTO hands (match_id, dealt_version, hand_number, first_seat, indicator,
                     seed_sha256, dealt_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(match_id)
            .bind(*dealt_version as i64)
            .bind(*number as i32)
            .bind(i32::from(*first))
            .bind(indicator.to_string())
            .bind(seed_sha256)
            .bind(incoming.time)
            .execute(&mut **tx)
            .await?;
            if *first_of_match {
                sqlx::query("UPDATE matches SET started_at = $2 WHERE match_id = $1")
                    .bind(match_id)
                    .bind(incoming.time)
                    .execute(&mut **tx)
                    .await?;
            }
        }
        Change::Entry(entry) => insert_entry(tx, incoming, entry).await?,
        Change::HandEnded {
            dealt_version,
            end,
            result,
            totals,
            seed,
            verified,
            problem,
        } => {
            if let Some(problem) = problem.as_ref().filter(|_| !verified) {
                tracing::error!(
                    table = %incoming.table_id,
                    version = incoming.version,
                    dealt_version,
                    %problem,
                    "a hand does not re-verify"
                );
            }
            sqlx::query(
                "UPDATE hands SET seed = $3, outcome = $4, winner_seat = $5, multiplier = $6,
                     scores = $7, penalties = $8, totals_after = $9, verified = $10,
                     verify_problem = $11, ended_at = $12
                 WHERE match_id = $1 AND dealt_version = $2",
            )
            .bind(match_id)
            .bind(*dealt_version as i64)
            .bind(seed)
            .bind(outcome_text(end.outcome))
            .bind(end.winner.map(i32::from))
            .bind(end.multiplier)
            .bind(end.scores.to_vec())
            .bind(result.penalties.to_vec())
            .bind(totals.to_vec())
            .bind(verified)
            .bind(problem)
            .bind(incoming.time)
            .execute(&mut **tx)
            .await?;
        }
        Change::MatchEnded {
            totals,
            winners,
            seating,
            ranked,
        } => {
            let winners: Vec<i32> = winners.iter().map(|&s| i32::from(s)).collect();
            sqlx::query(
                "UPDATE matches SET ended_at = $2, totals = $3, winners = $4, draw = $5,
                     ranked = $6
                 WHERE match_id = $1",
            )
            .bind(match_id)
            .bind(incoming.time)
            .bind(totals.to_vec())
            .bind(&winners)
            .bind(winners.is_empty())
            .bind(ranked)
            .execute(&mut **tx)
            .await?;
            for (seat, player) in seating.players.iter().enumerate() {
                let Some(player) = player else { continue };
                sqlx::query(
                    "INSERT INTO match_results (match_id, player_id, seat, total, won, ranked,
                         ended_at, display_name)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(match_id)
                .bind(player)
                .bind(seat as i32)
                .bind(totals[seat])
                .bind(winners.contains(&(seat as i32)))
                .bind(ranked)
                .bind(incoming.time)
                .bind(&seating.names[seat])
                .execute(&mut **tx)
                .await?;
            }
        }
    }
    Ok(())
}

async fn insert_entry(
    tx: &mut Transaction<'_, Postgres>,
    incoming: &Incoming,
    entry: &Entry,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO ledger_entries (event_id, table_version, match_id, hand_number,
             dealt_version, seat, team, player_id, kind, reason, points, penalty_id, voided_by,
             multiplier, basis, event_time)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
    )
    .bind(incoming.event_id)
    .bind(incoming.version as i64)
    .bind(incoming.table_id)
    .bind(entry.hand_number as i32)
    .bind(entry.dealt_version as i64)
    .bind(i32::from(entry.seat))
    .bind(entry.team.map(i32::from))
    .bind(&entry.player)
    .bind(entry.kind.as_str())
    .bind(&entry.reason)
    .bind(entry.points)
    .bind(entry.penalty_id.map(|i| i as i32))
    .bind(entry.voided_by)
    .bind(entry.multiplier)
    .bind(&entry.basis)
    .bind(incoming.time)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub fn outcome_text(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Finished => "finished",
        Outcome::PileEmpty => "pile_empty",
        Outcome::Cancelled => "cancelled",
    }
}

/// A message that is not a readable table event.
#[derive(Clone, Debug)]
pub struct Poison<'a> {
    pub stream_sequence: u64,
    pub subject: &'a str,
    pub event_id: Option<&'a str>,
    pub table_id: Option<Uuid>,
    pub version: Option<u64>,
    pub reason: &'a str,
    pub payload: &'a [u8],
}

/// Keeps a message that is not a readable table event, once per stream sequence.
/// `table` and `version` come from the message's `Okey-Table` and `Okey-Version` headers, when
/// it has them, so that the table's later events do not wait for this one.
pub async fn set_aside_poison(pool: &PgPool, poison: &Poison<'_>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO poison_events (stream_sequence, subject, event_id, table_id, version, reason,
             payload)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (stream_sequence) DO NOTHING",
    )
    .bind(poison.stream_sequence as i64)
    .bind(poison.subject)
    .bind(poison.event_id)
    .bind(poison.table_id)
    .bind(poison.version.map(|v| v as i64))
    .bind(poison.reason)
    .bind(poison.payload)
    .execute(pool)
    .await?;
    Ok(())
}
