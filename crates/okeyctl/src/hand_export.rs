//! A finished hand's engine events read from the table service's event store, in the form
//! `okeyctl replay` reads: `hand_started` (the rule set and the deal re-dealt from the revealed
//! seed), every `played` engine event, then `hand_ended`.
//!
//! The table service exposes no RPC that returns a hand's full events (a seat view hides other
//! racks and the pile), so support tools read its PostgreSQL event store directly, read-only: the
//! store is the truth and its payloads are the table's `TableEvent` JSON (tagged by `type`). The
//! deal is not stored as such, only its seed (revealed in `hand_ended`); it is checked against the
//! `sha256` announced in `hand_dealt` before it is used.

use anyhow::{Context, Result, anyhow, bail};
use okey_rules::{Deal, Event, HandEnd, RuleSet};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use sqlx::Row;
use sqlx::postgres::PgPool;

/// The stored table events this export reads; the others (seats, presence, …) are skipped.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
enum Stored {
    TableCreated {
        rules: RuleSet,
    },
    HandDealt {
        hand_number: u32,
        first: u8,
        seed_sha256: String,
    },
    Played {
        hand_number: u32,
        event: Event,
    },
    HandEnded {
        hand_number: u32,
        end: HandEnd,
        seed: String,
    },
    #[serde(other)]
    Other,
}

/// One deal of a hand: its events, first to last. A hand voided because all four seats opened
/// with pairs is dealt again under the same number, so a number can have several deals.
pub type HandEvents = Vec<Event>;

/// Every finished deal numbered `hand_number` at `table_id` (a UUID, or `tables/{uuid}`), oldest
/// first. A hand still being played (its seed not revealed yet) is not returned.
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
    let mut rules = None;
    let mut deals = Vec::new();
    // The deal being read: (first seat, announced seed hash, its played events).
    let mut current: Option<(u8, String, Vec<Event>)> = None;
    for row in rows {
        let version: i64 = row.try_get("version")?;
        let payload: serde_json::Value = row.try_get("payload")?;
        let stored: Stored = serde_json::from_value(payload)
            .with_context(|| format!("event v{version} is not a table event this tool knows"))?;
        match stored {
            Stored::TableCreated { rules: r } => rules = Some(r),
            Stored::HandDealt {
                hand_number: n,
                first,
                seed_sha256,
            } if n == hand_number => current = Some((first, seed_sha256, Vec::new())),
            Stored::Played {
                hand_number: n,
                event,
            } if n == hand_number => {
                if let Some((_, _, events)) = &mut current {
                    events.push(event);
                }
            }
            Stored::HandEnded {
                hand_number: n,
                end,
                seed,
            } if n == hand_number => {
                let (first, seed_sha256, played) = current
                    .take()
                    .ok_or_else(|| anyhow!("hand {n} ended at v{version} without a deal"))?;
                let rules = rules
                    .clone()
                    .ok_or_else(|| anyhow!("the table has no table_created event"))?;
                let seed = decode_seed(&seed, &seed_sha256)
                    .with_context(|| format!("hand {n}'s seed (v{version})"))?;
                let start = okey_rules::Hand::start(rules, Deal::from_seed(&seed, first))
                    .map_err(|e| anyhow!("hand {n}'s deal is not valid: {e}"))?;
                let mut events = vec![start];
                events.extend(played);
                events.push(Event::HandEnded { end });
                deals.push(events);
            }
            _ => {}
        }
    }
    if deals.is_empty() {
        bail!("hand {hand_number} of table {id} has not ended (or was never dealt)");
    }
    Ok(deals)
}

/// The 32 seed bytes from hex, checked against the hash announced at the deal.
fn decode_seed(hex: &str, announced_sha256: &str) -> Result<[u8; 32]> {
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| anyhow!("not hex"))?;
    let seed: [u8; 32] = bytes.try_into().map_err(|_| anyhow!("not 32 bytes"))?;
    let digest: String = Sha256::digest(seed)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if !digest.eq_ignore_ascii_case(announced_sha256) {
        bail!("its sha256 {digest} is not the {announced_sha256} announced at the deal");
    }
    Ok(seed)
}

/// The events as `okeyctl replay` reads them: one JSON event per line.
pub fn to_jsonl(events: &[Event]) -> String {
    events
        .iter()
        .map(|e| serde_json::to_string(e).expect("events serialize") + "\n")
        .collect()
}
