//! The event store in PostgreSQL (`migrations/table`): one stream per table, `table-{uuid}`,
//! versions 1, 2, 3, … without gaps. An append states the version it expects; the unique
//! `(stream_id, version)` turns a race into [`AppendError::Conflict`], never an overwrite. The
//! same transaction records the client request id (`handled_commands`, answered again on a
//! retry), the private seeds it commits or deals with (`hand_seeds`) and queues every event for
//! the outbox publisher (table `outbox`). Reads of a hand's full history by support are written
//! to the audit log (`hand_reads`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::postgres::PgPool;
use sqlx::types::Uuid;
use sqlx::types::chrono::{DateTime, Utc};

use crate::domain::{Seed, TableEvent};
use crate::ids::event_uuid;

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
    /// The turn's deadline once the append is stored, if a turn runs then (the views'
    /// `turn_deadline` at the append's last version); `None` when nothing runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<TurnDeadline>,
}

/// When the seat on turn at `version` runs out of time (or its bot moves), in ms since the Unix
/// epoch by the service's clock: what the append armed, recorded with its events so every
/// replica's update streams show it on the event that reached `version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnDeadline {
    pub version: u64,
    pub at_ms: u64,
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
    /// Private seeds by hand number to keep (`hand_seeds`): a server seed committed to, or the
    /// deal seed of a hand dealt without one.
    pub seeds: &'a [(u32, Seed)],
    /// A hand whose seed this append reveals.
    pub revealed: Option<u32>,
    /// Set when the append creates the table: its rules, for the `tables` row.
    pub create: Option<serde_json::Value>,
}

/// One read of a hand's full history made with role `support`, as the audit log keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandRead {
    /// Its place in the log (newer reads have larger ids).
    pub id: i64,
    /// `players/{id}` of the reader.
    pub reader: String,
    pub table_id: Uuid,
    pub hand_number: u32,
    /// The first version the read served.
    pub from_version: u64,
    /// The hand was still being played.
    pub live: bool,
    pub read_at: DateTime<Utc>,
}

/// The stream name of a table.
pub fn stream_id(table_id: Uuid) -> String {
    format!("table-{table_id}")
}

/// The event store.
#[derive(Clone, Debug)]
pub struct Store {
    pool: PgPool,
    /// Group commit of plain appends, when on.
    group: Option<Group>,
    /// Grouped reads of the latest events, when on.
    reads: Option<Reads>,
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
/// request key, `$5` actor, `$6`/`$7` first/last version, `$8` response, `$9`/`$10` the hands
/// and seeds to keep, `$11` hand revealed, `$12`..`$15` the events' ids, versions, types, payloads (JSON text),
/// `$16` metadata (JSON text). A part the append does not need is left out of the text (not just given
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
                         SELECT $3, u.h, u.s, sha256(u.s) \
                         FROM UNNEST($9::integer[], $10::bytea[]) AS u(h, s)\n)",
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
                     SELECT u.id, $3, u.v, u.t, u.p::jsonb, $16::jsonb, $4::text\n    \
                     FROM UNNEST($12::uuid[], $13::bigint[], $14::text[], $15::text[]) AS u(id, v, t, p)\n    \
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
    /// The tables being played, dealt and not ended (partial indexes of `0003_live_tables.sql`),
    /// each with its stored version (the last event's).
    pub async fn active_tables(&self) -> Result<Vec<(Uuid, u64)>, sqlx::Error> {
        let rows: Vec<(Uuid, i64)> = sqlx::query_as(
            "SELECT t.table_id, \
                    (SELECT max(e.version) FROM events e \
                      WHERE e.stream_id = 'table-' || t.table_id::text) \
             FROM tables t \
             WHERE EXISTS (SELECT 1 FROM events e WHERE e.stream_id = 'table-' || t.table_id::text \
                           AND e.event_type = 'HandDealt') \
               AND NOT EXISTS (SELECT 1 FROM events e WHERE e.stream_id = 'table-' || t.table_id::text \
                               AND e.event_type = 'MatchEnded')",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|(id, v)| (id, v as u64)).collect())
    }

    /// A store that appends one statement per append.
    pub fn new(pool: PgPool) -> Store {
        Store {
            pool,
            group: None,
            reads: None,
        }
    }

    /// A store that commits concurrent plain appends together, at most `slots` groups in
    /// flight (see [`Group`]), and reads many tables' latest events in one statement
    /// ([`Store::latest`]). Spawns the groups' tasks on the current runtime; they end when the
    /// last clone of the store is dropped.
    pub fn grouping(pool: PgPool, slots: usize) -> Store {
        Store {
            group: Some(Group::start(pool.clone(), slots)),
            reads: Some(Reads::start(pool.clone())),
            pool,
        }
    }

    /// [`Store::load_after`], read together with other tables' when the store groups: for the
    /// check every view makes, which mostly finds nothing.
    pub async fn latest(
        &self,
        table_id: Uuid,
        after: u64,
        limit: i64,
    ) -> Result<Vec<Recorded>, sqlx::Error> {
        let Some(reads) = &self.reads else {
            return self.load_after(table_id, after, limit).await;
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        let read = Read {
            table_id,
            after,
            limit,
            reply,
        };
        match reads.batches.queue(read) {
            Ok(()) => answer.await.unwrap_or(Err(sqlx::Error::PoolClosed)),
            Err(_) => self.load_after(table_id, after, limit).await,
        }
    }

    /// Appends stored by a group statement of several appends so far (see [`Group`]).
    pub fn grouped_appends(&self) -> u64 {
        self.group
            .as_ref()
            .map_or(0, |g| g.grouped.load(std::sync::atomic::Ordering::Relaxed))
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
        load_after(&self.pool, table_id, after, limit).await
    }

    /// The latest stored version of each of `tables` (0 for a table with no event), in the same
    /// order: one statement, an index lookup per table.
    pub async fn latest_versions(&self, tables: &[Uuid]) -> Result<Vec<u64>, sqlx::Error> {
        let streams: Vec<String> = tables.iter().map(|t| stream_id(*t)).collect();
        let rows: Vec<(i64, Option<i64>)> = sqlx::query_as(
            "SELECT q.i, (SELECT max(e.version) FROM events e WHERE e.stream_id = q.s) \
             FROM UNNEST($1::text[]) WITH ORDINALITY AS q(s, i) ORDER BY q.i",
        )
        .bind(&streams)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(_, v)| v.unwrap_or(0) as u64)
            .collect())
    }

    /// Every event of a table, in version order (a match is a few thousand at most).
    pub async fn load_all(&self, table_id: Uuid) -> Result<Vec<Recorded>, sqlx::Error> {
        const CHUNK: i64 = 1000;
        let mut all: Vec<Recorded> = Vec::new();
        loop {
            let after = all.last().map_or(0, |r| r.version);
            let chunk = self.load_after(table_id, after, CHUNK).await?;
            let n = chunk.len() as i64;
            all.extend(chunk);
            if n < CHUNK {
                return Ok(all);
            }
        }
    }

    /// Writes one support read of a hand's history to the audit log.
    pub async fn record_hand_read(
        &self,
        reader: &str,
        table_id: Uuid,
        hand_number: u32,
        from_version: u64,
        live: bool,
    ) -> Result<(), sqlx::Error> {
        sqlx::query(
            "INSERT INTO hand_reads (reader, table_id, hand_number, from_version, live) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(reader)
        .bind(table_id)
        .bind(hand_number as i32)
        .bind(from_version as i64)
        .bind(live)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The audit log's reads, newest first: of one table or all, older than the read `before`,
    /// at most `limit`.
    pub async fn hand_reads(
        &self,
        table_id: Option<Uuid>,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<HandRead>, sqlx::Error> {
        let rows = sqlx::query(
            "SELECT read_id, reader, table_id, hand_number, from_version, live, read_at \
             FROM hand_reads WHERE ($1::uuid IS NULL OR table_id = $1) \
             AND ($2::bigint IS NULL OR read_id < $2) ORDER BY read_id DESC LIMIT $3",
        )
        .bind(table_id)
        .bind(before)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(HandRead {
                    id: row.try_get("read_id")?,
                    reader: row.try_get("reader")?,
                    table_id: row.try_get("table_id")?,
                    hand_number: row.try_get::<i32, _>("hand_number")? as u32,
                    from_version: row.try_get::<i64, _>("from_version")? as u64,
                    live: row.try_get("live")?,
                    read_at: row.try_get("read_at")?,
                })
            })
            .collect()
    }

    /// The events of a table up to `version` that change who sits where (`TableCreated`,
    /// `SeatTaken`, `SeatLeft`), in version order: the seating at a version without reading the
    /// play in between.
    pub async fn seating(
        &self,
        table_id: Uuid,
        version: u64,
    ) -> Result<Vec<Recorded>, sqlx::Error> {
        let rows = sqlx::query(
            "SELECT position, event_id, stream_id, version, payload, metadata, recorded_at \
             FROM events WHERE stream_id = $1 AND version <= $2 \
             AND event_type IN ('TableCreated', 'SeatTaken', 'SeatLeft') ORDER BY version",
        )
        .bind(stream_id(table_id))
        .bind(version as i64)
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
    ///
    /// With [`Store::grouping`], a plain append (events and the request id: a draw, a discard)
    /// waits for the next group commit instead: see [`Group`].
    pub async fn append(&self, append: Append<'_>) -> Result<Vec<Recorded>, AppendError> {
        let rows = Rows::of(&append);
        let ids = rows.ids.clone();
        let stored = match &self.group {
            Some(group) if rows.groupable() => group.append(&self.pool, rows).await,
            _ => append_one(&self.pool, &rows).await,
        }?;
        Ok(stored
            .into_iter()
            .zip(append.events.iter().zip(ids))
            .map(|(row, (event, event_id))| Recorded {
                position: row.position,
                event_id,
                table_id: append.table_id,
                version: row.version,
                event: event.clone(),
                metadata: append.metadata.clone(),
                recorded_at: row.recorded_at,
            })
            .collect())
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

/// [`Store::load_after`] on `pool`.
async fn load_after(
    pool: &PgPool,
    table_id: Uuid,
    after: u64,
    limit: i64,
) -> Result<Vec<Recorded>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT position, event_id, stream_id, version, payload, metadata, recorded_at \
         FROM events WHERE stream_id = $1 AND version > $2 ORDER BY version LIMIT $3",
    )
    .bind(stream_id(table_id))
    .bind(after as i64)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter().map(decode).collect()
}

/// One append's values, owned, as both statements bind them.
#[derive(Debug)]
struct Rows {
    table_id: Uuid,
    stream: String,
    expected: u64,
    ids: Vec<Uuid>,
    versions: Vec<i64>,
    types: Vec<&'static str>,
    /// The events' JSON, cast to `jsonb` by the statement.
    payloads: Vec<String>,
    metadata: String,
    actor: String,
    request: Option<(String, Vec<u8>)>,
    seeds: Vec<(u32, Seed)>,
    revealed: Option<u32>,
    create: Option<serde_json::Value>,
}

impl Rows {
    fn of(append: &Append<'_>) -> Rows {
        let n = append.events.len();
        let first = append.expected + 1;
        Rows {
            table_id: append.table_id,
            stream: stream_id(append.table_id),
            expected: append.expected,
            ids: (0..n).map(|_| event_uuid()).collect(),
            versions: (0..n).map(|i| (first + i as u64) as i64).collect(),
            types: append.events.iter().map(TableEvent::name).collect(),
            payloads: append
                .events
                .iter()
                .map(|e| serde_json::to_string(e).expect("events serialize"))
                .collect(),
            metadata: serde_json::to_string(append.metadata).expect("metadata serializes"),
            actor: append.metadata.actor.clone(),
            request: append.request.map(|(k, r)| (k.to_owned(), r.to_owned())),
            seeds: append.seeds.to_vec(),
            revealed: append.revealed,
            create: append.create.clone(),
        }
    }

    /// Only events and a request id: what a group commit's statement holds.
    fn groupable(&self) -> bool {
        self.request.is_some()
            && self.seeds.is_empty()
            && self.revealed.is_none()
            && self.create.is_none()
    }

    fn last_version(&self) -> i64 {
        (self.expected + self.ids.len() as u64) as i64
    }
}

/// Where and when an event was stored.
#[derive(Clone, Copy, Debug)]
struct StoredRow {
    position: i64,
    version: u64,
    recorded_at: DateTime<Utc>,
}

impl StoredRow {
    fn decode(row: &sqlx::postgres::PgRow) -> Result<StoredRow, sqlx::Error> {
        Ok(StoredRow {
            position: row.try_get("position")?,
            version: row.try_get::<i64, _>("version")? as u64,
            recorded_at: row.try_get("recorded_at")?,
        })
    }
}

/// One append, one statement ([`append_sql`]).
async fn append_one(pool: &PgPool, rows: &Rows) -> Result<Vec<StoredRow>, AppendError> {
    let (key, response) = rows
        .request
        .as_ref()
        .map(|(k, r)| (k.as_str(), r.as_slice()))
        .unzip();
    let seed_hands: Vec<i32> = rows.seeds.iter().map(|(h, _)| *h as i32).collect();
    let seeds: Vec<&[u8]> = rows.seeds.iter().map(|(_, s)| s.as_slice()).collect();
    let sql = append_sql(
        rows.create.is_some(),
        key.is_some(),
        !seeds.is_empty(),
        rows.revealed.is_some(),
    );
    let stored = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(rows.table_id)
        .bind(&rows.create)
        .bind(&rows.stream)
        .bind(key)
        .bind(&rows.actor)
        .bind(rows.expected as i64 + 1)
        .bind(rows.last_version())
        .bind(response)
        .bind(&seed_hands)
        .bind(&seeds)
        .bind(rows.revealed.map(|h| h as i32))
        .bind(&rows.ids)
        .bind(&rows.versions)
        .bind(&rows.types)
        .bind(&rows.payloads)
        .bind(&rows.metadata)
        .fetch_all(pool)
        .await
        .map_err(classify)?;
    stored
        .iter()
        .map(StoredRow::decode)
        .collect::<Result<_, _>>()
        .map_err(AppendError::Database)
}

/// Several plain appends (of different tables) as one statement: the same rows as
/// [`append_sql`] writes for each, so one round trip and one commit for all of them.
const GROUP_SQL: &str = "\
WITH handled AS (
    INSERT INTO handled_commands
        (stream_id, request_id, actor, first_version, last_version, response)
    SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bytea[])
), stored AS (
    INSERT INTO events (event_id, stream_id, version, event_type, payload, metadata, request_id)
    SELECT u.id, u.s, u.v, u.t, u.p::jsonb, u.m::jsonb, u.r
    FROM UNNEST($7::uuid[], $8::text[], $9::bigint[], $10::text[], $11::text[], $12::text[], $13::text[])
        AS u(id, s, v, t, p, m, r)
    RETURNING position, event_id, version, recorded_at
), queued AS (
    INSERT INTO outbox (position) SELECT position FROM stored
)
SELECT position, event_id, version, recorded_at FROM stored";

/// Group commit. Every PostgreSQL transaction pays for its statement, its commit record and
/// its wait for the WAL flush; under load most of an append's cost in the database is that, not
/// its rows. So plain appends (a draw, a discard: events and a request id, nothing else) are
/// queued here, and a task commits whatever is queued as one statement ([`GROUP_SQL`]) as soon
/// as one of `slots` groups in flight ends. An append alone in its group takes the one-append
/// statement, so a quiet service works as before; a busy one commits tens of appends at once.
///
/// The statement is one transaction: a unique violation anywhere (another replica took a
/// version, a retried request id) stores nothing of the group, and its appends are then
/// committed one by one, so each gets its own answer ([`AppendError::Conflict`],
/// [`AppendError::Duplicate`]) and the others are stored. Any other failure is retried the
/// same way. A process holds one table's lock while it appends, so one group never holds two
/// appends of a table.
#[derive(Clone, Debug)]
struct Group {
    batches: Batches<Queued>,
    /// Appends committed by a group statement (not alone, not one by one after a failure).
    grouped: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

#[derive(Debug)]
struct Queued {
    rows: Rows,
    reply: tokio::sync::oneshot::Sender<Result<Vec<StoredRow>, AppendError>>,
}

/// The most appends one group commits.
const GROUP_MAX: usize = 256;

impl Group {
    fn start(pool: PgPool, slots: usize) -> Group {
        let grouped = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        // `okey.table.append.group_size`: appends each group commit stored together.
        let sizes = okey_platform::metrics::meter()
            .u64_histogram("okey.table.append.group_size")
            .with_description("Appends one group commit stored (1: the append was alone).")
            .with_boundaries(vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0])
            .build();
        let counted = grouped.clone();
        let batches = Batches::start(slots, GROUP_MAX, move |group: Vec<Queued>| {
            sizes.record(group.len() as u64, &[]);
            let (pool, counted) = (pool.clone(), counted.clone());
            async move {
                let appends = group.len() as u64;
                if commit_group(&pool, group).await {
                    counted.fetch_add(appends, std::sync::atomic::Ordering::Relaxed);
                }
            }
        });
        Group { batches, grouped }
    }

    async fn append(&self, pool: &PgPool, rows: Rows) -> Result<Vec<StoredRow>, AppendError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        match self.batches.queue(Queued { rows, reply }) {
            Ok(()) => answer
                .await
                .unwrap_or(Err(AppendError::Database(sqlx::Error::PoolClosed))),
            // The group's task is gone (the runtime is shutting down): append alone.
            Err(unsent) => append_one(pool, &unsent.rows).await,
        }
    }
}

/// Work for one statement at a time: a task takes everything queued as one batch (at most
/// `max`) as soon as one of `slots` batches in flight ends, and runs it on a task of its own.
/// While every slot is busy the queue grows, so the busier the service, the bigger the batch.
#[derive(Debug)]
struct Batches<T> {
    tx: tokio::sync::mpsc::UnboundedSender<T>,
}

impl<T> Clone for Batches<T> {
    fn clone(&self) -> Self {
        Batches {
            tx: self.tx.clone(),
        }
    }
}

impl<T: Send + 'static> Batches<T> {
    /// Spawns the task on the current runtime; it ends when the last clone is dropped.
    fn start<F, Fut>(slots: usize, max: usize, run: F) -> Batches<T>
    where
        F: Fn(Vec<T>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<T>();
        let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(slots.max(1)));
        tokio::spawn(async move {
            while let Some(first) = rx.recv().await {
                let slot = slots
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("the semaphore is never closed");
                // What queued while every slot was busy goes in this batch.
                let mut batch = vec![first];
                while batch.len() < max
                    && let Ok(next) = rx.try_recv()
                {
                    batch.push(next);
                }
                let work = run(batch);
                tokio::spawn(async move {
                    work.await;
                    drop(slot);
                });
            }
        });
        Batches { tx }
    }

    /// Queues `item`, or gives it back when the task is gone (the runtime is shutting down).
    fn queue(&self, item: T) -> Result<(), T> {
        self.tx.send(item).map_err(|unsent| unsent.0)
    }
}

/// Grouped reads of a table's latest events: the check a view makes that no other replica
/// appended since this process folded the table. Concurrent checks of many tables are one
/// statement ([`READ_SQL`]); a failed statement is retried one read at a time.
#[derive(Clone, Debug)]
struct Reads {
    batches: Batches<Read>,
}

#[derive(Debug)]
struct Read {
    table_id: Uuid,
    after: u64,
    limit: i64,
    reply: tokio::sync::oneshot::Sender<Result<Vec<Recorded>, sqlx::Error>>,
}

/// Reads in flight at once, and the most one statement holds.
const READ_SLOTS: usize = 2;
const READ_MAX: usize = 256;

/// Each table's events after a version, for many tables: `$1` streams, `$2` versions, `$3`
/// limits; `i` numbers the reads from 1.
const READ_SQL: &str = "\
SELECT q.i, e.position, e.event_id, e.stream_id, e.version, e.payload, e.metadata, e.recorded_at
FROM UNNEST($1::text[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS q(s, v, l, i)
CROSS JOIN LATERAL (
    SELECT position, event_id, stream_id, version, payload, metadata, recorded_at FROM events
    WHERE stream_id = q.s AND version > q.v ORDER BY version LIMIT q.l
) e
ORDER BY q.i, e.version";

impl Reads {
    fn start(pool: PgPool) -> Reads {
        let batches = Batches::start(READ_SLOTS, READ_MAX, move |reads: Vec<Read>| {
            let pool = pool.clone();
            async move {
                if reads.len() > 1 {
                    match read_group(&pool, &reads).await {
                        Ok(mut found) => {
                            for (i, read) in reads.into_iter().enumerate() {
                                let _ = read
                                    .reply
                                    .send(Ok(found.remove(&(i as i64 + 1)).unwrap_or_default()));
                            }
                            return;
                        }
                        Err(error) => {
                            tracing::debug!(%error, reads = reads.len(), "grouped read failed; reading one by one");
                        }
                    }
                }
                for read in reads {
                    let events = load_after(&pool, read.table_id, read.after, read.limit).await;
                    let _ = read.reply.send(events);
                }
            }
        });
        Reads { batches }
    }
}

/// [`READ_SQL`] for `reads`: the events found, by read number (from 1).
async fn read_group(
    pool: &PgPool,
    reads: &[Read],
) -> Result<std::collections::HashMap<i64, Vec<Recorded>>, sqlx::Error> {
    let streams: Vec<String> = reads.iter().map(|r| stream_id(r.table_id)).collect();
    let versions: Vec<i64> = reads.iter().map(|r| r.after as i64).collect();
    let limits: Vec<i64> = reads.iter().map(|r| r.limit).collect();
    let rows = sqlx::query(READ_SQL)
        .bind(&streams)
        .bind(&versions)
        .bind(&limits)
        .fetch_all(pool)
        .await?;
    let mut found: std::collections::HashMap<i64, Vec<Recorded>> = std::collections::HashMap::new();
    for row in &rows {
        found
            .entry(row.try_get("i")?)
            .or_default()
            .push(decode(row)?);
    }
    Ok(found)
}

/// Commits `group` and answers each append; true when one group statement stored them all.
async fn commit_group(pool: &PgPool, group: Vec<Queued>) -> bool {
    if group.len() > 1 {
        match append_group(pool, &group).await {
            Ok(mut stored) => {
                for queued in group {
                    let rows = queued
                        .rows
                        .ids
                        .iter()
                        .map(|id| stored.remove(id).ok_or(sqlx::Error::RowNotFound))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(AppendError::Database);
                    let _ = queued.reply.send(rows);
                }
                return true;
            }
            Err(error) => {
                tracing::debug!(%error, appends = group.len(), "group commit failed; appending one by one");
            }
        }
    }
    for queued in group {
        let stored = append_one(pool, &queued.rows).await;
        let _ = queued.reply.send(stored);
    }
    false
}

/// [`GROUP_SQL`] for `group`: where each event (by id) was stored.
async fn append_group(
    pool: &PgPool,
    group: &[Queued],
) -> Result<std::collections::HashMap<Uuid, StoredRow>, sqlx::Error> {
    let appends = group.len();
    let events: usize = group.iter().map(|q| q.rows.ids.len()).sum();
    let (mut streams, mut keys, mut actors) = (
        Vec::with_capacity(appends),
        Vec::with_capacity(appends),
        Vec::with_capacity(appends),
    );
    let (mut firsts, mut lasts, mut responses) = (
        Vec::with_capacity(appends),
        Vec::with_capacity(appends),
        Vec::with_capacity(appends),
    );
    let mut ids = Vec::with_capacity(events);
    let mut event_streams = Vec::with_capacity(events);
    let mut versions = Vec::with_capacity(events);
    let mut types = Vec::with_capacity(events);
    let mut payloads = Vec::with_capacity(events);
    let mut metadata = Vec::with_capacity(events);
    let mut requests = Vec::with_capacity(events);
    for Queued { rows, .. } in group {
        let (key, response) = rows
            .request
            .as_ref()
            .expect("grouped appends carry a request");
        streams.push(rows.stream.as_str());
        keys.push(key.as_str());
        actors.push(rows.actor.as_str());
        firsts.push(rows.expected as i64 + 1);
        lasts.push(rows.last_version());
        responses.push(response.as_slice());
        for i in 0..rows.ids.len() {
            ids.push(rows.ids[i]);
            event_streams.push(rows.stream.as_str());
            versions.push(rows.versions[i]);
            types.push(rows.types[i]);
            payloads.push(rows.payloads[i].as_str());
            metadata.push(rows.metadata.as_str());
            requests.push(key.as_str());
        }
    }
    let stored = sqlx::query(GROUP_SQL)
        .bind(&streams)
        .bind(&keys)
        .bind(&actors)
        .bind(&firsts)
        .bind(&lasts)
        .bind(&responses)
        .bind(&ids)
        .bind(&event_streams)
        .bind(&versions)
        .bind(&types)
        .bind(&payloads)
        .bind(&metadata)
        .bind(&requests)
        .fetch_all(pool)
        .await?;
    stored
        .iter()
        .map(|row| Ok((row.try_get("event_id")?, StoredRow::decode(row)?)))
        .collect()
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
