//! The event store in PostgreSQL (`migrations/table`): one stream per table, `table-{uuid}`,
//! versions 1, 2, 3, … without gaps. An append states the version it expects; the unique
//! `(stream_id, version)` turns a race into [`AppendError::Conflict`], never an overwrite. The
//! same transaction records the client request id (`handled_commands`, answered again on a
//! retry), the deal seed of a hand it deals (`hand_seeds`, private) and queues every event for
//! the outbox publisher (table `outbox`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::postgres::PgPool;
use sqlx::types::Uuid;
use sqlx::types::chrono::{DateTime, Utc};

use crate::domain::{Seed, TableEvent};

/// Why an append did not happen.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    /// Another append took the expected version first: reload and decide again.
    #[error("the stream moved past the expected version")]
    Conflict,
    /// This request id was already handled on this stream: answer the stored response.
    #[error("the request was already handled")]
    Duplicate,
    /// The database failed.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// Who appended, when and under which trace: stored as each event's `metadata`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// `players/{id}` of the caller.
    pub actor: String,
    /// W3C trace context (`traceparent`, `tracestate`) of the call.
    #[serde(default)]
    pub trace: BTreeMap<String, String>,
    /// Payload schema version.
    pub schema: u32,
}

/// One stored event.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub position: i64,
    pub event_id: Uuid,
    pub table_id: Uuid,
    pub version: u64,
    pub event: TableEvent,
    pub metadata: Metadata,
    pub recorded_at: DateTime<Utc>,
}

/// An append: events after `expected`, with what the transaction records beside them.
pub struct Append<'a> {
    pub table_id: Uuid,
    pub expected: u64,
    pub events: &'a [TableEvent],
    pub metadata: &'a Metadata,
    /// `(request key, response to repeat)`; the key includes the caller so ids of different
    /// players never collide.
    pub request: Option<(&'a str, &'a [u8])>,
    /// A hand this append deals, with its seed.
    pub dealt: Option<(u32, Seed)>,
    /// A hand whose seed this append reveals.
    pub revealed: Option<u32>,
    /// Set when the append creates the table: its rules, for the `tables` row.
    pub create: Option<serde_json::Value>,
}

/// The stream name of a table.
pub fn stream_id(table_id: Uuid) -> String {
    format!("table-{table_id}")
}

/// A random (version 4) UUID from the OS generator.
pub fn random_uuid() -> Uuid {
    let mut bytes = [0u8; 16];
    fill_random(&mut bytes);
    sqlx::types::uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// Fills `buf` from the operating system's CSPRNG.
///
/// # Panics
/// If the OS has no randomness to give: nothing may be dealt then.
pub fn fill_random(buf: &mut [u8]) {
    use rand_core::TryRngCore;
    rand_core::OsRng
        .try_fill_bytes(buf)
        .expect("the OS random number generator works");
}

/// A fresh deal seed from the OS CSPRNG.
pub fn new_seed() -> Seed {
    let mut seed = [0u8; 32];
    fill_random(&mut seed);
    seed
}

/// The event store.
#[derive(Clone, Debug)]
pub struct Store {
    pool: PgPool,
}

fn decode(row: &sqlx::postgres::PgRow) -> Result<Recorded, sqlx::Error> {
    let stream: String = row.try_get("stream_id")?;
    let table_id = stream
        .strip_prefix("table-")
        .and_then(|id| Uuid::parse_str(id).ok())
        .unwrap_or_default();
    let payload: serde_json::Value = row.try_get("payload")?;
    let metadata: serde_json::Value = row.try_get("metadata")?;
    Ok(Recorded {
        position: row.try_get("position")?,
        event_id: row.try_get("event_id")?,
        table_id,
        version: row.try_get::<i64, _>("version")? as u64,
        event: serde_json::from_value(payload).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        metadata: serde_json::from_value(metadata).unwrap_or_default(),
        recorded_at: row.try_get("recorded_at")?,
    })
}

const COLUMNS: &str = "position, event_id, stream_id, version, payload, metadata, recorded_at";

/// One append as one statement: the parts an append needs, as data-modifying CTEs of the events'
/// `INSERT`. Parameters: `$1` table id, `$2` rules of a table being created, `$3` stream, `$4`
/// request key, `$5` actor, `$6`/`$7` first/last version, `$8` response, `$9`/`$10` hand dealt
/// and its seed, `$11` hand revealed, `$12`..`$15` the events' ids, versions, types, payloads,
/// `$16` metadata. A part the append does not need is left out of the text (not just given
/// NULLs): each part costs PostgreSQL a table and its indexes to open on every execution, and
/// most appends (a draw, a discard) need none of the optional ones. So there are up to 16
/// statement texts, each prepared once per connection.
fn append_sql(create: bool, request: bool, dealt: bool, revealed: bool) -> &'static str {
    static TEXTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let texts = TEXTS.get_or_init(|| {
        (0..16u8)
            .map(|bits| {
                let mut parts = Vec::new();
                if bits & 1 != 0 {
                    parts.push(
                        "created AS (\n    INSERT INTO tables (table_id, rules) SELECT $1, $2::jsonb\n)",
                    );
                }
                if bits & 2 != 0 {
                    parts.push(
                        "handled AS (\n    INSERT INTO handled_commands\n        \
                         (stream_id, request_id, actor, first_version, last_version, response)\n    \
                         SELECT $3, $4::text, $5, $6, $7, $8::bytea\n)",
                    );
                }
                if bits & 4 != 0 {
                    parts.push(
                        "dealt AS (\n    INSERT INTO hand_seeds (stream_id, hand_number, seed, seed_sha256)\n    \
                         SELECT $3, $9::integer, $10::bytea, sha256($10::bytea)\n)",
                    );
                }
                if bits & 8 != 0 {
                    parts.push(
                        "revealed AS (\n    UPDATE hand_seeds SET revealed_at = now()\n    \
                         WHERE stream_id = $3 AND hand_number = $11::integer\n)",
                    );
                }
                parts.push(
                    "stored AS (\n    INSERT INTO events \
                     (event_id, stream_id, version, event_type, payload, metadata, request_id)\n    \
                     SELECT u.id, $3, u.v, u.t, u.p, $16, $4::text\n    \
                     FROM UNNEST($12::uuid[], $13::bigint[], $14::text[], $15::jsonb[]) AS u(id, v, t, p)\n    \
                     RETURNING position, version, recorded_at\n)",
                );
                parts.push("queued AS (\n    INSERT INTO outbox (position) SELECT position FROM stored\n)");
                format!(
                    "WITH {}\nSELECT position, version, recorded_at FROM stored ORDER BY version",
                    parts.join(", ")
                )
            })
            .collect()
    });
    let bits = create as usize
        | (request as usize) << 1
        | (dealt as usize) << 2
        | (revealed as usize) << 3;
    &texts[bits]
}

impl Store {
    pub fn new(pool: PgPool) -> Store {
        Store { pool }
    }

    /// The pool, for probes and tests.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Events of a table after `after`, at most `limit`, in version order.
    pub async fn load_after(
        &self,
        table_id: Uuid,
        after: u64,
        limit: i64,
    ) -> Result<Vec<Recorded>, sqlx::Error> {
        let sql = format!(
            "SELECT {COLUMNS} FROM events WHERE stream_id = $1 AND version > $2 \
             ORDER BY version LIMIT $3"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(stream_id(table_id))
            .bind(after as i64)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode).collect()
    }

    /// The stored deal seeds of a table.
    pub async fn seeds(&self, table_id: Uuid) -> Result<BTreeMap<u32, Seed>, sqlx::Error> {
        let rows = sqlx::query("SELECT hand_number, seed FROM hand_seeds WHERE stream_id = $1")
            .bind(stream_id(table_id))
            .fetch_all(&self.pool)
            .await?;
        let mut seeds = BTreeMap::new();
        for row in rows {
            let n: i32 = row.try_get("hand_number")?;
            let bytes: Vec<u8> = row.try_get("seed")?;
            if let Ok(seed) = <Seed>::try_from(bytes.as_slice()) {
                seeds.insert(n as u32, seed);
            }
        }
        Ok(seeds)
    }

    /// The response stored for a request key, if it was handled.
    pub async fn handled(
        &self,
        table_id: Uuid,
        request_key: &str,
    ) -> Result<Option<Vec<u8>>, sqlx::Error> {
        sqlx::query_scalar(
            "SELECT response FROM handled_commands WHERE stream_id = $1 AND request_id = $2",
        )
        .bind(stream_id(table_id))
        .bind(request_key)
        .fetch_optional(&self.pool)
        .await
    }

    /// Appends atomically (see the module docs): one statement, so one round trip and one
    /// commit. Every part is a data-modifying CTE of the events' `INSERT`; PostgreSQL runs a
    /// statement as one transaction, so a unique violation anywhere stores nothing. Returns the
    /// events as stored (position, id, time), in version order, for the outbox publisher.
    pub async fn append(&self, append: Append<'_>) -> Result<Vec<Recorded>, AppendError> {
        let stream = stream_id(append.table_id);
        let n = append.events.len();
        let first = append.expected + 1;
        let ids: Vec<Uuid> = (0..n).map(|_| random_uuid()).collect();
        let versions: Vec<i64> = (0..n).map(|i| (first + i as u64) as i64).collect();
        let types: Vec<&str> = append.events.iter().map(TableEvent::name).collect();
        let payloads: Vec<serde_json::Value> = append
            .events
            .iter()
            .map(|e| serde_json::to_value(e).expect("events serialize"))
            .collect();
        let metadata = serde_json::to_value(append.metadata).expect("metadata serializes");
        let (key, response) = append.request.unzip();
        let (dealt_hand, seed) = append.dealt.unzip();
        let sql = append_sql(
            append.create.is_some(),
            key.is_some(),
            seed.is_some(),
            append.revealed.is_some(),
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(append.table_id)
            .bind(&append.create)
            .bind(&stream)
            .bind(key)
            .bind(&append.metadata.actor)
            .bind(first as i64)
            .bind((append.expected + n as u64) as i64)
            .bind(response)
            .bind(dealt_hand.map(|h| h as i32))
            .bind(seed.as_ref().map(|s| s.as_slice()))
            .bind(append.revealed.map(|h| h as i32))
            .bind(&ids)
            .bind(&versions)
            .bind(&types)
            .bind(&payloads)
            .bind(&metadata)
            .fetch_all(&self.pool)
            .await
            .map_err(classify)?;
        rows.iter()
            .zip(append.events.iter().zip(ids))
            .map(|(row, (event, event_id))| {
                Ok(Recorded {
                    position: row.try_get("position")?,
                    event_id,
                    table_id: append.table_id,
                    version: row.try_get::<i64, _>("version")? as u64,
                    event: event.clone(),
                    metadata: append.metadata.clone(),
                    recorded_at: row.try_get("recorded_at")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(AppendError::Database)
    }

    /// The oldest unpublished events stored at least `min_age` ago, in append order.
    pub async fn unpublished(
        &self,
        min_age: std::time::Duration,
        limit: i64,
    ) -> Result<Vec<Recorded>, sqlx::Error> {
        let sql = format!(
            "SELECT {COLUMNS} FROM outbox JOIN events USING (position) \
             WHERE recorded_at <= now() - make_interval(secs => $1) ORDER BY position LIMIT $2"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(min_age.as_secs_f64())
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode).collect()
    }

    /// The unpublished events of one table up to `version`, in version order.
    pub async fn unpublished_of(
        &self,
        table_id: Uuid,
        version: u64,
    ) -> Result<Vec<Recorded>, sqlx::Error> {
        let sql = format!(
            "SELECT {COLUMNS} FROM outbox JOIN events USING (position) \
             WHERE stream_id = $1 AND version <= $2 ORDER BY version"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(stream_id(table_id))
            .bind(version as i64)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode).collect()
    }

    /// Takes events that are on JetStream out of the outbox.
    pub async fn mark_published(&self, positions: &[i64]) -> Result<(), sqlx::Error> {
        sqlx::query("DELETE FROM outbox WHERE position = ANY($1)")
            .bind(positions)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

/// Unique violations are the store's answers: a taken version is a conflict, a known request id
/// a duplicate, a known table id a conflict too.
fn classify(error: sqlx::Error) -> AppendError {
    if let sqlx::Error::Database(db) = &error
        && db.is_unique_violation()
    {
        return match db.constraint() {
            Some("handled_commands_pkey") => AppendError::Duplicate,
            _ => AppendError::Conflict,
        };
    }
    AppendError::Database(error)
}
