//! A finished hand's engine events read from the table service's event store, in the form
//! `okeyctl replay` reads: `hand_started` (the rule set and the deal re-dealt from the revealed
//! seed), every `played` engine event, then `hand_ended`.
//!
//! The table service exposes no RPC that returns a hand's full events (a seat view hides other
//! racks and the pile), so support tools read its PostgreSQL event store directly, read-only: the
//! store is the truth and its payloads are `okey_table::TableEvent` JSON (tagged by `type`). The
//! deal is not stored as such, only its seed (revealed in `hand_ended`); it is checked against the
//! `sha256` announced in `hand_dealt` before it is used (`okey_table::history`).

use anyhow::{Context, Result, bail};
use okey_table::TableEvent;
use sqlx::Row;
use sqlx::postgres::PgPool;

pub use okey_table::history::HandEvents;

/// Every finished deal numbered `hand_number` at `table_id` (a UUID, or `tables/{uuid}`), oldest
/// first (see `okey_table::history::finished_deals`). A hand still being played (its seed not
/// revealed yet) is not returned.
pub async fn finished_hand(
    pool: &PgPool,
    table_id: &str,
    hand_number: u32,
) -> Result<Vec<HandEvents>> {
    let id = table_id.strip_prefix("tables/").unwrap_or(table_id);
    let rows =
        sqlx::query("SELECT version, payload FROM events WHERE stream_id = $1 ORDER BY version")
            .bind(format!("table-{id}"))
            .fetch_all(pool)
            .await
            .context("cannot read the table's events")?;
    if rows.is_empty() {
        bail!("no table {id} in this event store");
    }
    let mut events = Vec::with_capacity(rows.len());
    for row in rows {
        let version: i64 = row.try_get("version")?;
        let payload: serde_json::Value = row.try_get("payload")?;
        let event: TableEvent = serde_json::from_value(payload)
            .with_context(|| format!("event v{version} is not a table event this tool knows"))?;
        events.push(event);
    }
    okey_table::history::finished_deals(&events, hand_number)
        .with_context(|| format!("table {id}, hand {hand_number}"))
}

pub use okey_table::history::to_jsonl;
