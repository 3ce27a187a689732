//! A finished hand's engine events rebuilt from a table's stream, in the form `okeyctl replay`
//! reads: `hand_started` (the rule set and the deal re-dealt from the revealed seed, checked
//! against the commitment announced at the deal), every `played` engine event, then
//! `hand_ended`. The table service, support tools and scoring's re-verification all rebuild a hand
//! this way.

use okey_rules::{Deal, Event, Hand};

use crate::event::{SeedError, TableEvent, seed_from_hex};

/// One deal of a hand: its events, first to last. A hand voided because all four seats opened
/// with pairs is dealt again under the same number, so a number can have several deals.
pub type HandEvents = Vec<Event>;

/// Why a hand cannot be rebuilt from a stream.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    #[error("the stream does not start with table_created")]
    NoTableCreated,
    #[error("hand {hand} ended at v{version} without a deal")]
    EndWithoutDeal { hand: u32, version: u64 },
    #[error("hand {hand}'s seed (v{version}): {source}")]
    Seed {
        hand: u32,
        version: u64,
        source: SeedError,
    },
    #[error("hand {hand}'s deal is not valid: {reason}")]
    InvalidDeal { hand: u32, reason: String },
    #[error("hand {0} has not ended (or was never dealt)")]
    NotFinished(u32),
}

/// Every finished deal numbered `hand_number` in a table's stream (`events` in version order,
/// from version 1), oldest first. A deal still being played (its seed not revealed) is not
/// returned; no finished deal at all is [`HistoryError::NotFinished`].
pub fn finished_deals<'a>(
    events: impl IntoIterator<Item = &'a TableEvent>,
    hand_number: u32,
) -> Result<Vec<HandEvents>, HistoryError> {
    let mut rules = None;
    let mut deals = Vec::new();
    // The deal being read: (first seat, announced seed hash, its played events).
    let mut current: Option<(u8, String, Vec<Event>)> = None;
    for (i, event) in events.into_iter().enumerate() {
        let version = i as u64 + 1;
        match event {
            TableEvent::TableCreated { rules: r, .. } => rules = Some(r.clone()),
            TableEvent::HandDealt {
                hand_number: n,
                first,
                seed_sha256,
                ..
            } if *n == hand_number => current = Some((*first, seed_sha256.clone(), Vec::new())),
            TableEvent::Played {
                hand_number: n,
                event,
                ..
            } if *n == hand_number => {
                if let Some((_, _, played)) = &mut current {
                    played.push(event.clone());
                }
            }
            TableEvent::HandEnded {
                hand_number: n,
                end,
                seed,
                ..
            } if *n == hand_number => {
                let (first, seed_sha256, played) = current
                    .take()
                    .ok_or(HistoryError::EndWithoutDeal { hand: *n, version })?;
                let rules = rules.clone().ok_or(HistoryError::NoTableCreated)?;
                let seed =
                    seed_from_hex(seed, &seed_sha256).map_err(|source| HistoryError::Seed {
                        hand: *n,
                        version,
                        source,
                    })?;
                let start = Hand::start(rules, Deal::from_seed(&seed, first)).map_err(|e| {
                    HistoryError::InvalidDeal {
                        hand: *n,
                        reason: e.to_string(),
                    }
                })?;
                let mut deal = vec![start];
                deal.extend(played);
                deal.push(Event::HandEnded { end: *end });
                deals.push(deal);
            }
            _ => {}
        }
    }
    if deals.is_empty() {
        return Err(HistoryError::NotFinished(hand_number));
    }
    Ok(deals)
}

/// The events as `okeyctl replay` reads them: one JSON event per line.
pub fn to_jsonl(events: &[Event]) -> String {
    events
        .iter()
        .map(|e| serde_json::to_string(e).expect("engine events always serialize") + "\n")
        .collect()
}
