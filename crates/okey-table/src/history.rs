//! One hand of a table's stream: where its events lie and who sat in it ([`HandSpan`]), who may
//! read its full history and when ([`admit`]: support at any time, a player who sat in it once it
//! has ended, nobody else), the history itself with nothing hidden ([`entries`]: the whole deal,
//! every drawn tile), and a finished hand's engine events rebuilt in the form `okeyctl replay`
//! reads: `hand_started` (the rule set and the deal re-dealt from the revealed seed, checked
//! against the commitment announced at the deal), every `played` engine event, then `hand_ended`.

use std::collections::BTreeSet;

use okey_rules::{Deal, Event, Hand, RuleSet};

use crate::absence::bot_level;
use crate::event::{Seed, SeedError, TableEvent, seed_from_hex};
use crate::table::TableError;

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
    #[error("hand {hand}'s deal (v{version}) has no stored seed")]
    MissingSeed { hand: u32, version: u64 },
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
    let mut current: Option<(u8, String, Vec<Event>)> = None;
    for (i, event) in events.into_iter().enumerate() {
        let version = i as u64 + 1;
        if let TableEvent::TableCreated { rules: r, .. } = event {
            rules = Some(r.clone());
        }
        if let TableEvent::HandEnded { hand_number: n, .. } = event
            && *n == hand_number
            && rules.is_none()
        {
            return Err(HistoryError::NoTableCreated);
        }
        let Some(rules) = &rules else { continue };
        fold_deal(event, version, hand_number, rules, &mut current, &mut deals)?;
    }
    if deals.is_empty() {
        return Err(HistoryError::NotFinished(hand_number));
    }
    Ok(deals)
}

/// Folds one event of a stream into the deal of `hand_number` being read (`current`: its first
/// seat, announced seed hash and played events), pushing it to `deals` at its end.
fn fold_deal(
    event: &TableEvent,
    version: u64,
    hand_number: u32,
    rules: &RuleSet,
    current: &mut Option<(u8, String, Vec<Event>)>,
    deals: &mut Vec<HandEvents>,
) -> Result<(), HistoryError> {
    match event {
        TableEvent::HandDealt {
            hand_number: n,
            first,
            seed_sha256,
            ..
        } if *n == hand_number => *current = Some((*first, seed_sha256.clone(), Vec::new())),
        TableEvent::Played {
            hand_number: n,
            event,
            ..
        } if *n == hand_number => {
            if let Some((_, _, played)) = current {
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
            let seed = seed_from_hex(seed, &seed_sha256).map_err(|source| HistoryError::Seed {
                hand: *n,
                version,
                source,
            })?;
            let start = Hand::start(rules.clone(), Deal::from_seed(&seed, first)).map_err(|e| {
                HistoryError::InvalidDeal {
                    hand: *n,
                    reason: e.to_string(),
                }
            })?;
            let mut deal = vec![start];
            deal.extend(played.iter().cloned());
            deal.push(Event::HandEnded { end: *end });
            deals.push(deal);
        }
        _ => {}
    }
    Ok(())
}

/// Where hand `hand_number` lies in a table's stream, and what its readers need around it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandSpan {
    pub hand_number: u32,
    /// Version of its first deal (`HandDealt`).
    pub first_version: u64,
    /// Version of its last event: its `HandEnded` once it has ended, else the stream's latest.
    pub last_version: u64,
    /// Its last deal has ended.
    pub ended: bool,
    /// Every player (`players/{id}`, never a bot) who held a seat at any moment of the hand: at
    /// its deal, or sitting down (back) during it.
    pub players: BTreeSet<String>,
    /// The match's rules.
    pub rules: RuleSet,
    /// The match totals before the hand (after the previous hand's end).
    pub totals_before: [i64; 4],
}

/// Where hand `hand_number` lies in `events` (a table's stream in version order, from version
/// 1); `None` when it was not dealt (or the stream does not start with `TableCreated`).
pub fn hand_span(events: &[TableEvent], hand_number: u32) -> Option<HandSpan> {
    let mut rules = None;
    let mut seats: [Option<String>; 4] = Default::default();
    let mut totals_before = [0i64; 4];
    let mut span: Option<HandSpan> = None;
    // Inside one of the hand's deals (dealt, not ended yet).
    let mut playing = false;
    for (i, event) in events.iter().enumerate() {
        let version = i as u64 + 1;
        if let TableEvent::TableCreated { rules: r, .. } = event {
            rules = Some(r.clone());
        }
        event.reseat(&mut seats);
        match event {
            TableEvent::HandDealt { hand_number: n, .. } if *n == hand_number => {
                let found = span.get_or_insert_with(|| HandSpan {
                    hand_number,
                    first_version: version,
                    last_version: version,
                    ended: false,
                    players: BTreeSet::new(),
                    rules: rules.clone().unwrap_or_default(),
                    totals_before,
                });
                found.ended = false;
                playing = true;
            }
            TableEvent::HandDealt { .. } if span.is_some() => break,
            TableEvent::HandEnded {
                hand_number: n,
                totals,
                ..
            } => {
                if *n == hand_number {
                    if let Some(found) = &mut span {
                        found.ended = true;
                        found.last_version = version;
                    }
                    playing = false;
                } else if span.is_none() {
                    totals_before = *totals;
                }
            }
            _ => {}
        }
        if playing && let Some(found) = &mut span {
            found.last_version = version;
            found.players.extend(
                seats
                    .iter()
                    .flatten()
                    .filter(|p| bot_level(p).is_none())
                    .cloned(),
            );
        }
    }
    rules.as_ref()?;
    span
}

/// Who asks for a hand's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader<'a> {
    /// Role `support` (or admin): any hand at any time; every such read is audited.
    Support,
    /// Anyone else, by player name (`players/{id}`).
    Player(&'a str),
}

/// May `reader` read the full history of the hand `span` is (`None`: a hand not dealt)? RULES.md
/// "Hidden information and fairness": nobody at the table sees another rack while the hand is
/// played, so a player who sat in it reads it once it has ended ([`TableError::HandInProgress`]
/// before), and nobody else does ([`TableError::NotInHand`], whether or not it was dealt).
/// Support reads any hand, also while it is played; one not dealt is [`TableError::NoSuchHand`].
pub fn admit<'a>(
    span: Option<&'a HandSpan>,
    hand_number: u32,
    reader: Reader<'_>,
) -> Result<&'a HandSpan, TableError> {
    match (span, reader) {
        (Some(span), Reader::Support) => Ok(span),
        (None, Reader::Support) => Err(TableError::NoSuchHand(hand_number)),
        (Some(span), Reader::Player(player)) if span.players.contains(player) => {
            if span.ended {
                Ok(span)
            } else {
                Err(TableError::HandInProgress(hand_number))
            }
        }
        (_, Reader::Player(_)) => Err(TableError::NotInHand(hand_number)),
    }
}

/// One event of a hand's full history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A deal, whole: every rack and the centre pile, re-dealt from its seed.
    Deal {
        hand_number: u32,
        seed_sha256: String,
        deal: Deal,
    },
    /// Any other event as stored (nothing in a stored event is hidden: a draw names its tile).
    Event,
}

/// What each event of `span` (versions `from..=span.last_version` of `events`, the whole
/// stream) is in the hand's full history. `seed_of` gives a hand's stored seed (its deals are
/// re-dealt from it); a deal whose seed is not known is [`HistoryError::MissingSeed`].
pub fn entries(
    events: &[TableEvent],
    span: &HandSpan,
    from: u64,
    seed_of: impl Fn(u32) -> Option<Seed>,
) -> Result<Vec<(u64, Entry)>, HistoryError> {
    let from = from.max(span.first_version);
    let mut out = Vec::new();
    for version in from..=span.last_version {
        let Some(event) = events.get(version as usize - 1) else {
            break;
        };
        let entry = match event {
            TableEvent::HandDealt {
                hand_number,
                first,
                seed_sha256,
                ..
            } => {
                let seed = seed_of(*hand_number).ok_or(HistoryError::MissingSeed {
                    hand: *hand_number,
                    version,
                })?;
                Entry::Deal {
                    hand_number: *hand_number,
                    seed_sha256: seed_sha256.clone(),
                    deal: Deal::from_seed(&seed, *first),
                }
            }
            _ => Entry::Event,
        };
        out.push((version, entry));
    }
    Ok(out)
}

/// Every finished deal of a hand, from its events only (`events`: `(version, event)` of the
/// hand in version order, as its history serves them, with the match's `rules`), oldest first:
/// what [`finished_deals`] finds in a whole stream.
pub fn hand_deals<'a>(
    rules: &RuleSet,
    events: impl IntoIterator<Item = (u64, &'a TableEvent)>,
    hand_number: u32,
) -> Result<Vec<HandEvents>, HistoryError> {
    let mut deals = Vec::new();
    let mut current: Option<(u8, String, Vec<Event>)> = None;
    for (version, event) in events {
        fold_deal(event, version, hand_number, rules, &mut current, &mut deals)?;
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
