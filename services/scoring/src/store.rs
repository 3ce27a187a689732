//! The scoring database: applying a batch of table events in one transaction (each event's
//! applied-event record, its table's fold and everything the fold wrote; poison records), exactly
//! once and in each table's version order. The fold itself is `projection`; the re-verification
//! `okey_table::verify`; ratings and leaderboards `ratings`; the API's reads are `reads`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use okey_rules::{Outcome, RuleSet};
use okey_table::{Published, Shown, TableEvent};
use sqlx::{PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use crate::projection::{self, Change, Entry, Tally};
use crate::ratings::{self, RatedMatch};
use okey_table::verify::{self, Dealt, Ended, PublicPlay, Verification};

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

/// One message of a batch, in the order the consumer received it.
#[derive(Clone, Debug)]
pub enum Item<'a> {
    /// A readable table event and the message's bytes (kept as they came if it is early).
    Event(&'a Incoming, &'a [u8]),
    /// A message that is not a readable table event.
    Poison(Poison<'a>),
}

/// What one message of a batch did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handled {
    /// The event's own result, then those of the kept early events it made next.
    Event(Vec<Applied>),
    /// The message was set aside as unreadable (with the kept events that could follow it).
    Poison(Vec<Applied>),
}

/// A table's fold as the batch has it: read and locked once, written back once.
struct Progress {
    version: u64,
    tally: Tally,
    changed: bool,
    /// Early events of the table are kept (and may be next after this batch's events).
    early: bool,
}

/// An `applied_events` row not inserted yet (they go in with one statement).
struct AppliedRow {
    event_id: Uuid,
    table_id: Uuid,
    version: i64,
    event_type: String,
    time: DateTime<Utc>,
    payload: serde_json::Value,
    set_aside: Option<String>,
}

/// The open transaction of a batch and what it has read and not yet written.
struct Batch<'t> {
    tx: Transaction<'t, Postgres>,
    tables: HashMap<Uuid, Progress>,
    rows: Vec<AppliedRow>,
}

/// Applies a batch of messages in one transaction, each event exactly once and in its table's
/// version order: a duplicate changes nothing, an early event is kept in `early_events` until
/// the version before it has been applied, a poison message is recorded (and passed over by its
/// table). Each table's fold is read and locked once (in table id order, so two replicas never
/// deadlock) and written back once; the applied-event records go in with one statement. Nothing
/// is written if any part fails: the caller acknowledges the messages only after this returns.
pub async fn apply_batch(pool: &PgPool, items: &[Item<'_>]) -> Result<Vec<Handled>, sqlx::Error> {
    let mut ids: Vec<Uuid> = items
        .iter()
        .filter_map(|item| match item {
            Item::Event(incoming, _) => Some(incoming.table_id),
            Item::Poison(poison) => poison.table_id,
        })
        .collect();
    ids.sort();
    ids.dedup();
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO table_progress (table_id, version, tally)
         SELECT t, 0, $2 FROM unnest($1::uuid[]) AS t
         ON CONFLICT (table_id) DO NOTHING",
    )
    .bind(&ids)
    .bind(sqlx::types::Json(Tally::default()))
    .execute(&mut *tx)
    .await?;
    let rows = sqlx::query(
        "SELECT table_id, version, tally FROM table_progress WHERE table_id = ANY($1)
         ORDER BY table_id FOR UPDATE",
    )
    .bind(&ids)
    .fetch_all(&mut *tx)
    .await?;
    // Read once the rows are locked, so an early event another replica kept before it
    // committed is seen.
    let early: Vec<Uuid> =
        sqlx::query_scalar("SELECT DISTINCT table_id FROM early_events WHERE table_id = ANY($1)")
            .bind(&ids)
            .fetch_all(&mut *tx)
            .await?;
    let mut tables = HashMap::with_capacity(rows.len());
    for row in rows {
        let table_id: Uuid = row.get("table_id");
        let version: i64 = row.get("version");
        let sqlx::types::Json(tally): sqlx::types::Json<Tally> = row.get("tally");
        tables.insert(
            table_id,
            Progress {
                version: version as u64,
                tally,
                changed: false,
                early: early.contains(&table_id),
            },
        );
    }
    let mut batch = Batch {
        tx,
        tables,
        rows: Vec::new(),
    };
    let mut handled = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Item::Event(incoming, payload) => {
                let mut all = vec![apply_one(&mut batch, incoming, payload).await?];
                all.extend(apply_waiting(&mut batch, incoming.table_id).await?);
                handled.push(Handled::Event(all));
            }
            Item::Poison(poison) => {
                set_aside_poison(&mut batch.tx, poison).await?;
                let waiting = match poison.table_id {
                    Some(table) => apply_waiting(&mut batch, table).await?,
                    None => Vec::new(),
                };
                handled.push(Handled::Poison(waiting));
            }
        }
    }
    flush(&mut batch).await?;
    let changed: Vec<(&Uuid, &Progress)> = batch.tables.iter().filter(|(_, p)| p.changed).collect();
    if !changed.is_empty() {
        let ids: Vec<Uuid> = changed.iter().map(|(id, _)| **id).collect();
        let versions: Vec<i64> = changed.iter().map(|(_, p)| p.version as i64).collect();
        let tallies: Vec<sqlx::types::Json<&Tally>> = changed
            .iter()
            .map(|(_, p)| sqlx::types::Json(&p.tally))
            .collect();
        sqlx::query(
            "UPDATE table_progress p SET version = u.version, tally = u.tally, updated_at = now()
             FROM unnest($1::uuid[], $2::bigint[], $3::jsonb[]) AS u (table_id, version, tally)
             WHERE p.table_id = u.table_id",
        )
        .bind(&ids)
        .bind(&versions)
        .bind(&tallies)
        .execute(&mut *batch.tx)
        .await?;
    }
    batch.tx.commit().await?;
    Ok(handled)
}

/// Applies one event (its table is locked by the batch), or keeps it when it is early.
async fn apply_one(
    batch: &mut Batch<'_>,
    incoming: &Incoming,
    payload: &[u8],
) -> Result<Applied, sqlx::Error> {
    let progress = batch
        .tables
        .get(&incoming.table_id)
        .expect("the batch locked every table it holds");
    let mut applied = progress.version;
    // Versions whose message could not be read at all were set aside as poison: the table moves
    // on past them rather than waiting for ever.
    if incoming.version > applied + 1 {
        let poisoned: Vec<i64> = sqlx::query_scalar(
            "SELECT DISTINCT version FROM poison_events
             WHERE table_id = $1 AND version > $2 AND version < $3 ORDER BY version",
        )
        .bind(incoming.table_id)
        .bind(applied as i64)
        .bind(incoming.version as i64)
        .fetch_all(&mut *batch.tx)
        .await?;
        for version in poisoned {
            if version as u64 != applied + 1 {
                break;
            }
            applied += 1;
        }
    }
    if incoming.version <= applied {
        return Ok(Applied::Duplicate);
    }
    if incoming.version > applied + 1 {
        sqlx::query(
            "INSERT INTO early_events (table_id, version, payload) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
        )
        .bind(incoming.table_id)
        .bind(incoming.version as i64)
        .bind(payload)
        .execute(&mut *batch.tx)
        .await?;
        if let Some(progress) = batch.tables.get_mut(&incoming.table_id) {
            progress.early = true;
        }
        return Ok(Applied::Early {
            expected: applied + 1,
        });
    }
    let verification = match &incoming.published.event {
        Shown::Public {
            event: ended @ TableEvent::HandEnded { .. },
        } => {
            // The re-verification reads the hand's applied events, this batch's included.
            flush(batch).await?;
            let tally = &batch.tables[&incoming.table_id].tally;
            Some(reverify(&mut batch.tx, incoming, tally, ended).await?)
        }
        _ => None,
    };
    let progress = batch
        .tables
        .get_mut(&incoming.table_id)
        .expect("the batch locked every table it holds");
    let folded = projection::fold(
        &mut progress.tally,
        incoming.version,
        &incoming.published.event,
        verification.as_ref(),
    );
    progress.version = incoming.version;
    progress.changed = true;
    let set_aside = folded.as_ref().err().map(ToString::to_string);
    batch.rows.push(AppliedRow {
        event_id: incoming.event_id,
        table_id: incoming.table_id,
        version: incoming.version as i64,
        event_type: event_type(&incoming.published.event),
        time: incoming.time,
        payload: serde_json::to_value(&incoming.published)
            .expect("a decoded envelope serializes again"),
        set_aside: set_aside.clone(),
    });
    let mut hand_verified = None;
    if let Ok(changes) = &folded {
        if !changes.is_empty() {
            // What the event writes names it (`ledger_entries.event_id` references
            // `applied_events`): its record goes in first.
            flush(batch).await?;
        }
        for change in changes {
            if let Change::HandEnded { verified, .. } = change {
                hand_verified = Some(*verified);
            }
            write(&mut batch.tx, incoming, change).await?;
        }
    }
    Ok(match set_aside {
        Some(reason) => Applied::SetAside(reason),
        None => Applied::Fresh { hand_verified },
    })
}

/// Inserts the applied-event records the batch holds, with one statement.
async fn flush(batch: &mut Batch<'_>) -> Result<(), sqlx::Error> {
    if batch.rows.is_empty() {
        return Ok(());
    }
    let rows = std::mem::take(&mut batch.rows);
    let event_ids: Vec<Uuid> = rows.iter().map(|r| r.event_id).collect();
    let table_ids: Vec<Uuid> = rows.iter().map(|r| r.table_id).collect();
    let versions: Vec<i64> = rows.iter().map(|r| r.version).collect();
    let types: Vec<&str> = rows.iter().map(|r| r.event_type.as_str()).collect();
    let times: Vec<DateTime<Utc>> = rows.iter().map(|r| r.time).collect();
    let payloads: Vec<sqlx::types::Json<&serde_json::Value>> =
        rows.iter().map(|r| sqlx::types::Json(&r.payload)).collect();
    let set_aside: Vec<Option<&str>> = rows.iter().map(|r| r.set_aside.as_deref()).collect();
    sqlx::query(
        "INSERT INTO applied_events (event_id, table_id, version, event_type, event_time, payload,
             set_aside, applied_at)
         SELECT u.*, clock_timestamp()
         FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::text[], $5::timestamptz[],
                     $6::jsonb[], $7::text[])
              AS u (event_id, table_id, version, event_type, event_time, payload, set_aside)",
    )
    .bind(&event_ids)
    .bind(&table_ids)
    .bind(&versions)
    .bind(&types)
    .bind(&times)
    .bind(&payloads)
    .bind(&set_aside)
    .execute(&mut *batch.tx)
    .await?;
    Ok(())
}

/// Applies, in version order, the kept early events of a table that are next now; returns what
/// each did.
async fn apply_waiting(batch: &mut Batch<'_>, table_id: Uuid) -> Result<Vec<Applied>, sqlx::Error> {
    let mut done = Vec::new();
    loop {
        if !batch.tables.get(&table_id).is_some_and(|p| p.early) {
            return Ok(done);
        }
        let next: Option<(i64, Vec<u8>)> = sqlx::query_as(
            "SELECT version, payload FROM early_events WHERE table_id = $1
             ORDER BY version LIMIT 1",
        )
        .bind(table_id)
        .fetch_optional(&mut *batch.tx)
        .await?;
        let Some((version, payload)) = next else {
            if let Some(progress) = batch.tables.get_mut(&table_id) {
                progress.early = false;
            }
            return Ok(done);
        };
        // What was kept was readable when it came; it still is (same build or a later one).
        if let Ok(incoming) = Incoming::decode(&payload) {
            let applied = apply_one(batch, &incoming, &payload).await?;
            if let Applied::Early { .. } = applied {
                // Still waiting for an earlier version (keeping it again changed nothing).
                return Ok(done);
            }
            done.push(applied);
        }
        sqlx::query("DELETE FROM early_events WHERE table_id = $1 AND version = $2")
            .bind(table_id)
            .bind(version)
            .execute(&mut *batch.tx)
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
    incoming: &Incoming,
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
        return Ok(Verification::failed(incoming.version, "no hand was dealt"));
    };
    let rows: Vec<sqlx::types::Json<Published>> = sqlx::query_scalar(
        "SELECT payload FROM applied_events WHERE table_id = $1 AND version > $2
         ORDER BY version",
    )
    .bind(incoming.table_id)
    .bind(hand.dealt_version as i64)
    .fetch_all(&mut **tx)
    .await?;
    let plays: Vec<(u64, PublicPlay)> = rows
        .into_iter()
        .filter_map(|sqlx::types::Json(p)| match p.event {
            Shown::Drawn { seat, .. } => Some((p.version, PublicPlay::Drawn(seat))),
            Shown::Public {
                event: TableEvent::Played { event, .. },
            } => Some((p.version, PublicPlay::Event(event))),
            _ => None,
        })
        .collect();
    let rules: &RuleSet = rules;
    let verification = verify::verify_hand(
        &Dealt {
            version: hand.dealt_version,
            rules,
            first: hand.first,
            indicator: hand.indicator,
            seed_sha256: &hand.seed_sha256,
        },
        &plays,
        &Ended {
            version: incoming.version,
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
                     seat_bots, seat_names, seat_bot_names, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            )
            .bind(match_id)
            .bind(origin)
            .bind(rules.preset.name())
            .bind(rules.partners)
            .bind(sqlx::types::Json(rules))
            .bind(seating.players.to_vec())
            .bind(seating.bots.to_vec())
            .bind(seating.names.to_vec())
            .bind(seating.bot_names.to_vec())
            .bind(incoming.time)
            .execute(&mut **tx)
            .await?;
        }
        Change::Seats(seating) => {
            sqlx::query(
                "UPDATE matches SET seat_players = $2, seat_bots = $3, seat_names = $4,
                     seat_bot_names = $5
                 WHERE match_id = $1",
            )
            .bind(match_id)
            .bind(seating.players.to_vec())
            .bind(seating.bots.to_vec())
            .bind(seating.names.to_vec())
            .bind(seating.bot_names.to_vec())
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
            winners: winner_seats,
            seating,
            ranked,
            rated,
            partners,
        } => {
            let winners: Vec<i32> = winner_seats.iter().map(|&s| i32::from(s)).collect();
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
            if *ranked {
                let results: Vec<(String, i64, bool)> = seating
                    .players
                    .iter()
                    .enumerate()
                    .filter_map(|(seat, player)| {
                        let player = player.clone()?;
                        Some((player, totals[seat], winners.contains(&(seat as i32))))
                    })
                    .collect();
                ratings::record_standings(tx, incoming.time, &results).await?;
            }
            if let Some(seats) = rated {
                ratings::record(
                    tx,
                    &RatedMatch {
                        match_id,
                        ended_at: incoming.time,
                        partners: *partners,
                        seats,
                        totals: *totals,
                        winners: winner_seats,
                        names: &seating.names,
                    },
                )
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
async fn set_aside_poison(
    tx: &mut Transaction<'_, Postgres>,
    poison: &Poison<'_>,
) -> Result<(), sqlx::Error> {
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
    .execute(&mut **tx)
    .await?;
    Ok(())
}
