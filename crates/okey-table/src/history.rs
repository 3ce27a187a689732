//! One hand of a table's stream: where its events lie and who sat in it ([`HandSpan`]), who may
//! read its full history and when ([`admit`]: support at any time unless it sits in the hand
//! being played, a player who sat in it once it has ended, nobody else), the history itself with
//! nothing hidden ([`entries`]: the whole deal, every drawn tile), and a finished hand's engine
//! events rebuilt in the form `okeyctl replay` reads: `hand_started` (the rule set and the deal
//! re-dealt from the revealed seed, checked against the commitment announced at the deal), every
//! `played` engine event, then `hand_ended`.

use std::collections::BTreeSet;

use okey_bots::Level;
use okey_rules::{Deal, Event, Hand, RuleSet};

use crate::absence::Absence;
use crate::event::{Seed, SeedError, TableEvent, seed_from_hex};
use crate::seeding::deal_seed;
use crate::table::TableError;

/// One deal of a hand: its events, first to last. A hand voided because all four seats opened
/// with pairs is dealt again as the next hand number; a reader still takes several deals under
/// one number, should a stream hold them.
pub type HandEvents = Vec<Event>;

/// Why a hand cannot be rebuilt from a stream.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
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
    #[error("hand {hand}'s deal (v{version}) records a client seed that is not hex")]
    BadSeeding { hand: u32, version: u64 },
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
    /// its deal, or sitting down (back) during it, or one who left it with LeaveSeat during the
    /// match and keeps it while a bot plays it for them (table.proto: "held a seat").
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
    // Who left to a bot during the match: they still hold the seat.
    let mut absence = Absence::default();
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
        absence.evolve(event);
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
                    .chain(&absence.vacated)
                    .flatten()
                    .filter(|p| Level::of_occupant(p).is_none())
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
    /// Role `support` (or admin), by its player name: any hand at any time, except a hand in
    /// progress it holds a seat in (it plays that one like any player); every such read is
    /// audited.
    Support(&'a str),
    /// Role `analyst`: any hand once it has ended (accounts.proto: "Reads finished hands").
    Analyst,
    /// Anyone else, by player name (`players/{id}`).
    Player(&'a str),
}

/// May `reader` read the full history of the hand `span` is (`None`: a hand not dealt)? RULES.md
/// "Hidden information and fairness": nobody at the table sees another rack while the hand is
/// played, so a player who sat in it reads it once it has ended ([`TableError::HandInProgress`]
/// before), and nobody else does ([`TableError::NotInHand`], whether or not it was dealt).
/// Support reads any hand, also while it is played, unless it sat in that hand: a seated
/// support member waits for the end like any player. A hand not dealt is
/// [`TableError::NoSuchHand`] for support. An analyst reads any hand once it has ended, like a
/// player who sat in it.
pub fn admit<'a>(
    span: Option<&'a HandSpan>,
    hand_number: u32,
    reader: Reader<'_>,
) -> Result<&'a HandSpan, TableError> {
    match (span, reader) {
        (Some(span), Reader::Support(me)) if !span.ended && span.players.contains(me) => {
            Err(TableError::HandInProgress(hand_number))
        }
        (Some(span), Reader::Support(_)) => Ok(span),
        (None, Reader::Support(_) | Reader::Analyst) => Err(TableError::NoSuchHand(hand_number)),
        (Some(span), Reader::Analyst) => {
            if span.ended {
                Ok(span)
            } else {
                Err(TableError::HandInProgress(hand_number))
            }
        }
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
                seeding,
                ..
            } => {
                let stored = seed_of(*hand_number).ok_or(HistoryError::MissingSeed {
                    hand: *hand_number,
                    version,
                })?;
                let seed =
                    deal_seed(&stored, seeding.as_ref()).map_err(|_| HistoryError::BadSeeding {
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

/// The earlier events the deals of `span` depend on (`events`: the whole stream), as versions in
/// order: where the table committed to each deal's server seed, and every client seed sent for
/// the hand. Their stored forms are public (no rack, no seed that is not revealed).
pub fn inputs(events: &[TableEvent], span: &HandSpan) -> Vec<u64> {
    let mut found = BTreeSet::new();
    for version in span.first_version..=span.last_version {
        if let Some(TableEvent::HandDealt {
            hand_number,
            seeding: Some(seeding),
            ..
        }) = events.get(version as usize - 1)
            && *hand_number == span.hand_number
        {
            found.insert(seeding.committed_at);
        }
    }
    for (i, event) in events.iter().enumerate() {
        if let TableEvent::ClientSeedSent { hand_number, .. } = event
            && *hand_number == span.hand_number
        {
            found.insert(i as u64 + 1);
        }
    }
    found.into_iter().collect()
}

/// Every finished deal numbered `hand_number`, oldest first, from the hand's events
/// (`(version, event)` in version order, as its history serves them, or a whole stream) and the
/// match's `rules`. A deal still being played (its seed not revealed) is not returned; no
/// finished deal at all is [`HistoryError::NotFinished`].
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use okey_rules::{Command, MatchLength, Preset};

    use super::*;
    use crate::table::{Table, server_command};

    /// A table of three players and a bot, its first hand played to its end by timeouts (the
    /// server's play), then the second hand dealt.
    fn played() -> (Vec<TableEvent>, u64, BTreeMap<u32, [u8; 32]>) {
        let seats = [
            Some("players/a".to_owned()),
            Some("players/b".to_owned()),
            Some("players/c".to_owned()),
            Some("bots/strong-3".to_owned()),
        ];
        let rules = RuleSet {
            match_length: MatchLength::Hands(2),
            ..Preset::Classic.rules()
        };
        let created = Table::create(rules, seats, &[1; 32]).unwrap();
        let mut events = created.events.clone();
        let mut stored: BTreeMap<u32, [u8; 32]> = created.seeds.iter().copied().collect();
        let mut table = Table::replay(&events, stored.clone());
        let mut ended_at = 0;
        for _ in 0..500 {
            let seat = table.hand.as_ref().unwrap().turn.seat;
            let d = table
                .decide(&server_command(seat, Command::Timeout, None), &[2; 32])
                .unwrap();
            table.apply(&d);
            stored.extend(d.seeds.iter().copied());
            for e in d.events {
                events.push(e);
                if matches!(events.last(), Some(TableEvent::HandEnded { .. })) {
                    ended_at = events.len() as u64;
                }
            }
            if ended_at > 0 {
                return (events, ended_at, stored);
            }
        }
        panic!("the hand did not end");
    }

    #[test]
    fn support_reads_any_hand_players_theirs_once_ended_nobody_else() {
        let (events, ended_at, stored) = played();
        // While hand 1 is played (its deal and some moves).
        let live = hand_span(&events[..12], 1).unwrap();
        assert_eq!(live.first_version, 2);
        assert_eq!(live.last_version, 12);
        assert!(!live.ended);
        let players: Vec<&str> = live.players.iter().map(String::as_str).collect();
        assert_eq!(players, ["players/a", "players/b", "players/c"]);
        assert_eq!(
            admit(Some(&live), 1, Reader::Support("players/s")),
            Ok(&live)
        );
        // Support seated in the live hand plays it like anyone: no rack of another seat.
        assert_eq!(
            admit(Some(&live), 1, Reader::Support("players/a")),
            Err(TableError::HandInProgress(1))
        );
        assert_eq!(
            admit(Some(&live), 1, Reader::Player("players/a")),
            Err(TableError::HandInProgress(1))
        );
        assert_eq!(
            admit(Some(&live), 1, Reader::Player("players/z")),
            Err(TableError::NotInHand(1))
        );
        assert_eq!(
            admit(None, 2, Reader::Support("players/s")),
            Err(TableError::NoSuchHand(2))
        );
        assert_eq!(
            admit(None, 2, Reader::Player("players/a")),
            Err(TableError::NotInHand(2))
        );
        // An analyst reads finished hands only.
        assert_eq!(
            admit(Some(&live), 1, Reader::Analyst),
            Err(TableError::HandInProgress(1))
        );
        assert_eq!(
            admit(None, 2, Reader::Analyst),
            Err(TableError::NoSuchHand(2))
        );

        // Once it has ended: its players read it, up to its end and no further.
        let ended = hand_span(&events, 1).unwrap();
        assert!(ended.ended);
        assert_eq!(ended.last_version, ended_at);
        assert_eq!(
            admit(Some(&ended), 1, Reader::Player("players/b")),
            Ok(&ended)
        );
        assert_eq!(
            admit(Some(&ended), 1, Reader::Player("bots/strong-3")),
            Err(TableError::NotInHand(1))
        );
        assert_eq!(admit(Some(&ended), 1, Reader::Analyst), Ok(&ended));
        assert_eq!(
            admit(Some(&ended), 1, Reader::Support("players/a")),
            Ok(&ended)
        );
        let TableEvent::HandEnded { totals, .. } = &events[ended_at as usize - 1] else {
            panic!("not an end")
        };
        let next = hand_span(&events, 2).unwrap();
        assert_eq!(next.first_version, ended_at + 1);
        assert_eq!(next.totals_before, *totals);
        assert_eq!(ended.totals_before, [0; 4]);

        // Its entries: the deal whole, then every event; its deals rebuilt for the engine.
        let seed_of = |n| stored.get(&n).copied();
        let entries = entries(&events, &ended, 0, seed_of).unwrap();
        assert_eq!(entries.len() as u64, ended_at - 1);
        let Entry::Deal { deal, .. } = &entries[0].1 else {
            panic!("the first entry is the deal")
        };
        let folded = Table::replay(&events, stored.clone());
        assert_eq!(*deal, Deal::from_seed(&folded.deal_seed(1).unwrap(), 0));
        assert!(entries[1..].iter().all(|(_, e)| *e == Entry::Event));
        assert_eq!(
            super::entries(&events, &ended, 2, |_| None),
            Err(HistoryError::MissingSeed {
                hand: 1,
                version: 2
            })
        );
        let hand: Vec<(u64, &TableEvent)> = (ended.first_version..=ended.last_version)
            .map(|v| (v, &events[v as usize - 1]))
            .collect();
        let deals = hand_deals(&ended.rules, hand, 1).unwrap();
        assert_eq!(deals.len(), 1);
        assert!(matches!(deals[0][0], Event::HandStarted { .. }));
        assert!(matches!(deals[0].last(), Some(Event::HandEnded { .. })));
        assert_eq!(
            hand_deals(&ended.rules, [(2, &events[1])], 1),
            Err(HistoryError::NotFinished(1))
        );
    }

    #[test]
    fn a_player_who_left_to_a_bot_still_sat_in_the_hands_the_bot_plays_for_them() {
        let (mut events, ended_at, _) = played();
        // Seat 0 leaves during hand 1: a bot plays it, the seat stays theirs.
        events.insert(
            5,
            TableEvent::SeatLeft {
                seat: 0,
                player: "players/a".into(),
                bot_substitute: true,
            },
        );
        let next = hand_span(&events, 2).unwrap();
        assert_eq!(next.first_version, ended_at + 2);
        let players: Vec<&str> = next.players.iter().map(String::as_str).collect();
        assert_eq!(players, ["players/a", "players/b", "players/c"]);
        // Once they take it back and leave the table for good, later hands are not theirs.
        let free = TableEvent::SeatLeft {
            seat: 0,
            player: "players/a".into(),
            bot_substitute: false,
        };
        let mut left = events[..5].to_vec();
        left.push(free);
        left.extend_from_slice(&events[6..]);
        let players = hand_span(&left, 2).unwrap().players;
        assert!(!players.contains("players/a"), "{players:?}");
    }
}
