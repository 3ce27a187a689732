//! Re-verification of a finished hand from what was published about it, independently of the
//! table that played it: the revealed seed must hash to the commitment published at the deal,
//! the deal is re-dealt with `okey_rules::Deal::from_seed`, the hand's events are re-folded
//! through the engine (each draw is the next tile of the re-dealt pile: a public copy that does
//! not name the tile is enough, and a tile that is named must be that one), every move is
//! re-decided by the engine so each published `PenaltyCharged` is compared with the penalty the
//! engine itself charges at that point (seat, reason, points), and the engine's own end-of-hand
//! scores, standing penalties and match totals are compared with what the table published. The
//! first difference is reported with the table version of the event it is in.
//!
//! [`verify_seeding`] checks the chain a deal seed comes from when the players helped choose it
//! (the server seed committed before the client seeds, the client seeds used as sent, the
//! derivation).
//!
//! The one copy of this check: scoring re-verifies every hand it applies with it, and
//! `okeyctl verify` re-verifies a hand a player fetched, seeds included. Pure: no I/O.

use std::panic::{AssertUnwindSafe, catch_unwind};

use okey_rules::hand::{PENALTY, ScoreBasis};
use okey_rules::matches::{HandResult, Match};
use okey_rules::{
    Command, Deal, Event, Face, Hand, HandEnd, MeldTile, OpenKind, Outcome, PenaltyReason, RuleSet,
    Seat, Taken, Tile,
};

use crate::event::{Seed, Seeding, TableEvent, hex, seed_from_hex, seed_hash, seed_of_hex};
use crate::seeding::{DERIVATION, client_seeds, deal_seed_v1};

/// One event of a hand in progress, as it was published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublicPlay {
    /// An engine event seen whole (a `TileDrawn` that names its tile is checked against the
    /// re-dealt pile).
    Event(Event),
    /// A seat drew from the centre pile (the public copy does not say which tile).
    Drawn(Seat),
}

/// What the table published when the hand was dealt.
#[derive(Clone, Debug)]
pub struct Dealt<'a> {
    /// The table version of the deal (`HandDealt`).
    pub version: u64,
    pub rules: &'a RuleSet,
    pub first: Seat,
    pub indicator: Tile,
    pub seed_sha256: &'a str,
}

/// What the table published when the hand ended.
#[derive(Clone, Debug)]
pub struct Ended<'a> {
    /// The table version of the end (`HandEnded`).
    pub version: u64,
    pub end: &'a HandEnd,
    pub result: &'a HandResult,
    pub totals: &'a [i64; 4],
    pub seed: &'a str,
}

/// The outcome of a re-verification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verification {
    /// The first difference found; `None` when every published number was re-derived.
    pub problem: Option<String>,
    /// The table version of the event the difference is in (the deal for a seed that is not
    /// the commitment, the end for a score).
    pub at: Option<u64>,
    /// The engine's basis of each seat's end-of-hand score, when the hand could be re-folded.
    pub bases: Option<[ScoreBasis; 4]>,
}

impl Verification {
    pub fn verified(&self) -> bool {
        self.problem.is_none()
    }

    /// A difference in the event at table version `at`.
    pub fn failed(at: u64, problem: impl Into<String>) -> Verification {
        Verification {
            problem: Some(problem.into()),
            at: Some(at),
            bases: None,
        }
    }
}

/// The deal seed a hand's published end reveals, checked against the commitment published at
/// its deal.
// A difference is found at most once per hand: the size of the error does not matter.
#[allow(clippy::result_large_err)]
pub fn revealed_seed(dealt: &Dealt<'_>, ended: &Ended<'_>) -> Result<Seed, Verification> {
    seed_from_hex(ended.seed, dealt.seed_sha256)
        .map_err(|e| Verification::failed(ended.version, format!("revealed seed: {e}")))
}

/// Checks the chain a deal seed of derivation 1 comes from (`crate::seeding`): the server seed
/// was committed (at `seeding.committed_at`, one of `inputs`: the stored events the deal
/// depends on) before any client seed for the hand was taken; the client seeds the deal used
/// are exactly those the seats sent (`ClientSeedSent` among `inputs`) before the deal; the
/// server seed revealed at the end hashes to the commitment; and the derivation over them
/// gives the deal seed revealed at the end (`ended.seed`, itself checked against the deal's
/// commitment by [`revealed_seed`]). Returns what was checked, one line each.
#[allow(clippy::result_large_err)]
pub fn verify_seeding(
    dealt: &Dealt<'_>,
    hand_number: u32,
    seeding: &Seeding,
    inputs: &[(u64, TableEvent)],
    ended: &Ended<'_>,
    server_seed: Option<&str>,
) -> Result<Vec<String>, Verification> {
    let at = dealt.version;
    if seeding.derivation != DERIVATION {
        return Err(Verification::failed(
            at,
            format!(
                "derivation {} is not one this check knows (it knows {DERIVATION})",
                seeding.derivation
            ),
        ));
    }
    // 1. The commitment, published before the client seeds.
    let committed = inputs
        .iter()
        .find(|(v, _)| *v == seeding.committed_at)
        .and_then(|(_, e)| match e {
            TableEvent::TableCreated {
                server_seed_sha256, ..
            } if hand_number == 1 => server_seed_sha256.clone(),
            TableEvent::HandDealt {
                hand_number: n,
                seeding: Some(previous),
                ..
            } if *n + 1 == hand_number => Some(previous.next_server_seed_sha256.clone()),
            _ => None,
        });
    match committed {
        Some(sha) if sha.eq_ignore_ascii_case(&seeding.server_seed_sha256) => {}
        Some(sha) => {
            return Err(Verification::failed(
                at,
                format!(
                    "the deal names server seed commitment {}, but v{} published {sha}",
                    seeding.server_seed_sha256, seeding.committed_at
                ),
            ));
        }
        None => {
            return Err(Verification::failed(
                at,
                format!(
                    "no commitment to this hand's server seed at v{}",
                    seeding.committed_at
                ),
            ));
        }
    }
    if seeding.committed_at >= at {
        return Err(Verification::failed(
            at,
            "the server seed was committed after the deal",
        ));
    }
    // 2. The client seeds: each sent after the commitment and before the deal, and used as sent.
    let used = client_seeds(seeding)
        .map_err(|e| Verification::failed(at, format!("a recorded client seed: {e}")))?;
    let mut sent: [Option<(u64, Seed)>; 4] = [None; 4];
    for (version, event) in inputs {
        let TableEvent::ClientSeedSent {
            hand_number: n,
            seat,
            seed,
            ..
        } = event
        else {
            continue;
        };
        if *n != hand_number {
            continue;
        }
        if *version <= seeding.committed_at || *version >= at {
            return Err(Verification::failed(
                *version,
                format!(
                    "seat {seat}'s client seed was taken at v{version}, outside v{}-v{at} (after \
                     the commitment, before the deal)",
                    seeding.committed_at
                ),
            ));
        }
        let seed = seed_of_hex(seed).map_err(|e| {
            Verification::failed(*version, format!("seat {seat}'s client seed: {e}"))
        })?;
        let slot = &mut sent[*seat as usize % 4];
        if slot.is_none() {
            *slot = Some((*version, seed));
        }
    }
    for seat in 0..4 {
        let sent_seed = sent[seat].map(|(_, s)| s);
        if sent_seed != used[seat] {
            let what = match (sent[seat], used[seat]) {
                (Some((v, _)), None) => {
                    format!("the deal left out seat {seat}'s seed sent at v{v}")
                }
                (None, Some(_)) => format!("the deal used a seed for seat {seat}, which sent none"),
                _ => format!("the deal used another seed for seat {seat} than the one it sent"),
            };
            return Err(Verification::failed(at, what));
        }
    }
    // 3. The server seed revealed at the end, and the derivation.
    let Some(server_hex) = server_seed else {
        return Err(Verification::failed(
            ended.version,
            "the hand's end does not reveal its server seed",
        ));
    };
    let server = seed_from_hex(server_hex, &seeding.server_seed_sha256)
        .map_err(|e| Verification::failed(ended.version, format!("revealed server seed: {e}")))?;
    let derived = deal_seed_v1(&server, &used);
    let revealed = revealed_seed(dealt, ended)?;
    if derived != revealed {
        return Err(Verification::failed(
            ended.version,
            format!(
                "the deal seed revealed ({}) is not the derivation's ({})",
                hex(&revealed),
                hex(&derived)
            ),
        ));
    }
    let from: Vec<String> = sent
        .iter()
        .enumerate()
        .map(|(seat, s)| match s {
            Some((v, _)) => format!("seat {seat} (v{v})"),
            None => format!("seat {seat} none"),
        })
        .collect();
    Ok(vec![
        format!(
            "server seed: committed at v{} ({}…), before any client seed; revealed at v{}, it \
             hashes to that commitment",
            seeding.committed_at,
            &seeding.server_seed_sha256[..16.min(seeding.server_seed_sha256.len())],
            ended.version
        ),
        format!(
            "client seeds: the deal used exactly the ones sent: {}",
            from.join(", ")
        ),
        format!(
            "derivation {DERIVATION}: HMAC-SHA256(server seed, \"okey deal seed v1\" + seat slots) \
             = the revealed deal seed, whose sha256 {} was announced at the deal",
            &seed_hash(&derived)[..16]
        ),
    ])
}

/// Re-derives a hand from its deal and public events (each with its table version) and compares
/// it with its published end. `totals_before` are the match totals published after the previous
/// hand.
pub fn verify_hand(
    dealt: &Dealt<'_>,
    plays: &[(u64, PublicPlay)],
    ended: &Ended<'_>,
    totals_before: [i64; 4],
) -> Verification {
    let seed = match revealed_seed(dealt, ended) {
        Ok(seed) => seed,
        Err(failed) => return failed,
    };
    let deal = Deal::from_seed(&seed, dealt.first);
    if deal.indicator != dealt.indicator {
        return Verification::failed(
            dealt.version,
            format!(
                "the seed deals indicator {}, the table announced {}",
                deal.indicator, dealt.indicator
            ),
        );
    }
    let start = match Hand::start(dealt.rules.clone(), deal) {
        Ok(start) => start,
        Err(e) => {
            return Verification::failed(
                dealt.version,
                format!("the re-dealt hand is invalid: {e}"),
            );
        }
    };
    let hand = match refold(&start, plays, Some((ended.version, ended.end))) {
        Ok(hand) => hand,
        Err(failed) => return failed,
    };
    // A published end the hand cannot have had (a winner who never discarded) is a difference.
    let Some(bases) = hand.score_bases() else {
        return Verification::failed(
            ended.version,
            if hand.end.is_none() {
                "the re-folded hand has not ended"
            } else {
                "the published end does not fit the re-folded hand"
            },
        );
    };
    let problem = compare(&hand, &bases, ended, totals_before);
    Verification {
        at: problem.as_ref().map(|_| ended.version),
        problem,
        bases: Some(bases),
    }
}

/// `plays` folded from `start` (a `HandStarted`), every move re-decided by the engine and each
/// published event compared with the engine's at its place; then the end, if given. The
/// engine's evolve trusts its events (it asserts, in debug builds, that a rack holds what
/// leaves it): an event the deal cannot explain is a difference, not a crash. The version of
/// the event being folded is kept outside the closure, so a panic still names it.
#[allow(clippy::result_large_err)]
fn refold(
    start: &Event,
    plays: &[(u64, PublicPlay)],
    end: Option<(u64, &HandEnd)>,
) -> Result<Hand, Verification> {
    let folding = std::cell::Cell::new(plays.first().map_or(0, |p| p.0));
    let folded = catch_unwind(AssertUnwindSafe(|| {
        let mut hand = Hand::from_start(start);
        let mut at = 0;
        while at < plays.len() {
            folding.set(plays[at].0);
            // What the engine itself makes of the move this event starts: the same events, with
            // the same penalties (seat, reason, points) at the same places.
            let expected = expected_events(&hand, &plays[at])?;
            if expected.is_empty() {
                return Err((plays[at].0, "the engine makes nothing of it".to_owned()));
            }
            for (n, engine) in expected.iter().enumerate() {
                let Some((version, play)) = plays.get(at + n) else {
                    return Err((
                        plays[at].0,
                        format!(
                            "the move ends early: the engine goes on with {}",
                            describe(engine)
                        ),
                    ));
                };
                folding.set(*version);
                let published = resolve(&hand, *version, play)?;
                if let Some(difference) = differs(engine, &published) {
                    return Err((*version, difference));
                }
                hand.evolve(&published);
            }
            at += expected.len();
        }
        if let Some((version, end)) = end {
            folding.set(version);
            hand.evolve(&Event::HandEnded { end: *end });
        }
        Ok::<Hand, (u64, String)>(hand)
    }));
    match folded {
        Ok(Ok(hand)) => Ok(hand),
        Ok(Err((version, problem))) => Err(Verification::failed(
            version,
            format!("version {version}: {problem}"),
        )),
        Err(_) => {
            let version = folding.get();
            Err(Verification::failed(
                version,
                format!("version {version}: the event does not fold from the deal"),
            ))
        }
    }
}

/// Re-verifies a hand from its engine events alone, as `okeyctl export-hand` writes them (the
/// version of the n-th event is n, the deal's `hand_started` being 1): each deal is taken as the
/// file gives it (a file holds no seed commitment to check it against), every move is
/// re-decided, every penalty compared with the engine's, and, when the file holds the hand's
/// end, every end-of-hand score and the multiplier re-derived. A hand dealt again after a
/// cancellation is checked deal by deal. A file whose hand has not ended is checked as far as
/// it goes.
pub fn verify_events(events: &[Event]) -> Verification {
    let mut deals: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::HandStarted { .. }))
        .map(|(i, _)| i)
        .collect();
    if deals.first() != Some(&0) {
        return Verification::failed(1, "version 1: a hand's events start with hand_started");
    }
    deals.push(events.len());
    let mut bases = None;
    for pair in deals.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        let mut plays: Vec<(u64, PublicPlay)> = events[from + 1..to]
            .iter()
            .enumerate()
            .map(|(n, e)| ((from + n + 2) as u64, PublicPlay::Event(e.clone())))
            .collect();
        let end = match plays.last() {
            Some((version, PublicPlay::Event(Event::HandEnded { end }))) => Some((*version, *end)),
            _ => None,
        };
        if end.is_some() {
            plays.pop();
        }
        let hand = match refold(&events[from], &plays, end.as_ref().map(|(v, e)| (*v, e))) {
            Ok(hand) => hand,
            Err(failed) => return failed,
        };
        let Some((version, end)) = end else {
            continue;
        };
        let Some(derived) = hand.score_bases() else {
            return Verification::failed(
                version,
                format!("version {version}: the end does not fit the re-folded hand"),
            );
        };
        if let Some(problem) = compare_end(&hand, &derived, &end) {
            return Verification::failed(version, format!("version {version}: {problem}"));
        }
        bases = Some(derived);
    }
    Verification {
        problem: None,
        at: None,
        bases,
    }
}

/// A published play as the engine event it stands for: a draw is the next tile of the pile (and
/// a draw that names its tile must name that one).
fn resolve(hand: &Hand, version: u64, play: &PublicPlay) -> Result<Event, (u64, String)> {
    let next = |seat: Seat| {
        hand.pile_in_draw_order()
            .first()
            .copied()
            .ok_or_else(|| (version, format!("seat {seat} drew from an empty pile")))
    };
    match play {
        PublicPlay::Drawn(seat) => Ok(Event::TileDrawn {
            seat: *seat,
            tile: next(*seat)?,
        }),
        PublicPlay::Event(Event::TileDrawn { seat, tile }) => {
            let dealt = next(*seat)?;
            if dealt != *tile {
                return Err((
                    version,
                    format!(
                        "seat {seat} drew {tile}, but the next tile of the dealt pile is {dealt}"
                    ),
                ));
            }
            Ok(Event::TileDrawn {
                seat: *seat,
                tile: *tile,
            })
        }
        PublicPlay::Event(event) => Ok(event.clone()),
    }
}

/// The events the engine gives for the move `first` starts, from the state before it (the
/// hand's end is left out: the table publishes it as its own event). A move is re-decided with
/// the command the events show: a timeout, a discard, a call, giving the side discard back, an
/// opening, an okey retrieved. A wrong opening's melds are not published, so its command cannot
/// be rebuilt: its one penalty is checked against the rule the engine applies (below the seat's
/// threshold, 101 points when the table plays in-play penalties). A draw, a take, a lay or an
/// add charges nothing: the engine's event alone. A penalty or a cancellation that no move
/// starts is a difference.
fn expected_events(hand: &Hand, first: &(u64, PublicPlay)) -> Result<Vec<Event>, (u64, String)> {
    let (version, play) = first;
    let version = *version;
    let event = resolve(hand, version, play)?;
    let okey = hand.okey;
    let command = match &event {
        Event::TurnTimedOut { seat } => Some((*seat, Command::Timeout)),
        Event::TableRolledBack { seat, .. } | Event::SideDiscardReturned { seat, .. } => {
            Some((*seat, Command::ReturnDiscard))
        }
        // A wrong opening that names its melds is re-decided like an opening (one stored before
        // they were recorded is checked below by its rule).
        Event::HandOpened { seat, melds, .. } | Event::WrongOpening { seat, melds, .. }
            if !melds.is_empty() =>
        {
            Some((
                *seat,
                Command::Open {
                    melds: melds
                        .iter()
                        .map(|m| {
                            m.tiles
                                .iter()
                                .map(|p| MeldTile {
                                    tile: p.tile,
                                    reading: okey
                                        .is_okey(p.tile)
                                        .then(|| Face::new(p.reads.color, p.reads.number())),
                                })
                                .collect()
                        })
                        .collect(),
                },
            ))
        }
        Event::OkeyRetrieved {
            seat,
            meld,
            supplied,
            ..
        } => Some((
            *seat,
            Command::Retrieve {
                meld: *meld,
                tiles: supplied.clone(),
            },
        )),
        Event::TileDiscarded { seat, tile, .. } => Some((*seat, Command::Discard { tile: *tile })),
        Event::PlayableCalled { seat, .. } => Some((*seat, Command::CallPlayable)),
        Event::PenaltyCharged { .. } | Event::HandCancelled { .. } => {
            return Err((
                version,
                format!("{} follows no move that charges it", describe(&event)),
            ));
        }
        _ => None,
    };
    if let Some((seat, command)) = command {
        let mut events = hand.decide(seat, &command).map_err(|e| {
            (
                version,
                format!("the engine refuses the move {} shows: {e}", event.name()),
            )
        })?;
        events.retain(|e| !matches!(e, Event::HandEnded { .. }));
        return Ok(events);
    }
    if let Event::WrongOpening {
        seat,
        kind,
        amount,
        needed,
        ..
    } = &event
    {
        let s = *seat as usize % 4;
        let threshold = match kind {
            OpenKind::Melds => hand.meld_threshold[s],
            OpenKind::Pairs => u32::from(hand.pair_threshold[s]),
        };
        if *needed != threshold || amount >= needed {
            return Err((
                version,
                format!(
                    "a wrong opening of {amount} against {needed}, while seat {seat} needs \
                     {threshold}"
                ),
            ));
        }
        let mut events = vec![event.clone()];
        if hand.rules.in_play_penalties {
            events.push(Event::PenaltyCharged {
                id: hand.penalties.len() as u32,
                seat: *seat,
                points: PENALTY,
                reason: PenaltyReason::WrongOpening,
            });
        }
        if let Taken::SideDiscard { tile, .. } = hand.turn.taken {
            events.push(Event::SideDiscardReturned { seat: *seat, tile });
        }
        return Ok(events);
    }
    Ok(vec![event])
}

/// A penalty as the ledger shows it, or an event's name.
fn describe(event: &Event) -> String {
    match event {
        Event::PenaltyCharged {
            id,
            seat,
            points,
            reason,
        } => format!(
            "penalty {id} (seat {seat}, {}, {points} points)",
            reason.code()
        ),
        other => other.name().to_owned(),
    }
}

/// How a published event differs from the engine's at the same place, if it does: every field
/// counts (a penalty's id, seat, reason and points; an opening's value; who placed a retrieved
/// okey; whether a discard was playable), since support reads each of them as the reason for
/// what was charged.
fn differs(engine: &Event, published: &Event) -> Option<String> {
    match (engine, published) {
        (Event::PenaltyCharged { .. }, Event::PenaltyCharged { .. }) if engine == published => None,
        (Event::PenaltyCharged { .. }, Event::PenaltyCharged { .. }) => Some(format!(
            "the table published {}, the engine charges {}",
            describe(published),
            describe(engine)
        )),
        (Event::PenaltyCharged { .. }, _) => Some(format!(
            "the engine charges {} here, the table published {}",
            describe(engine),
            published.name()
        )),
        (_, Event::PenaltyCharged { .. }) => Some(format!(
            "{} is not charged by the engine here (it gives {})",
            describe(published),
            engine.name()
        )),
        _ if engine.name() != published.name() || engine.seat() != published.seat() => {
            Some(format!(
                "the engine gives {} (seat {:?}), the table published {} (seat {:?})",
                engine.name(),
                engine.seat(),
                published.name(),
                published.seat()
            ))
        }
        _ if engine != published => Some(format!(
            "{}{}: {}",
            engine.name(),
            engine
                .seat()
                .map(|seat| format!(" of seat {seat}"))
                .unwrap_or_default(),
            fields_that_differ(published, engine)
        )),
        _ => None,
    }
}

/// The fields in which a published event differs from the engine's, each as `field: published
/// X, the engine gives Y` (the events as JSON, as they are stored and exported).
fn fields_that_differ(published: &Event, engine: &Event) -> String {
    let object = |e: &Event| match serde_json::to_value(e) {
        Ok(serde_json::Value::Object(fields)) => fields,
        _ => serde_json::Map::new(),
    };
    let (published, engine) = (object(published), object(engine));
    let mut names: Vec<&String> = published.keys().chain(engine.keys()).collect();
    names.sort();
    names.dedup();
    let absent = serde_json::Value::Null;
    names
        .into_iter()
        .filter_map(|name| {
            let (p, e) = (
                published.get(name).unwrap_or(&absent),
                engine.get(name).unwrap_or(&absent),
            );
            (p != e).then(|| format!("{name}: published {p}, the engine gives {e}"))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The end's own numbers against the re-folded hand: an empty pile, each seat's score, the
/// multiplier.
fn compare_end(hand: &Hand, bases: &[ScoreBasis; 4], end: &HandEnd) -> Option<String> {
    if end.outcome == Outcome::PileEmpty && hand.pile_len() != 0 {
        return Some(format!(
            "ended on an empty pile with {} tiles left",
            hand.pile_len()
        ));
    }
    for (seat, basis) in bases.iter().enumerate() {
        if basis.points() != end.scores[seat] {
            return Some(format!(
                "seat {seat} was scored {}, the re-folded hand gives {} ({basis})",
                end.scores[seat],
                basis.points()
            ));
        }
    }
    if let Some(ScoreBasis::Finisher { multiplier, .. }) = end.winner.map(|w| bases[w as usize])
        && multiplier != end.multiplier
    {
        return Some(format!(
            "multiplier {} published, {multiplier} re-derived",
            end.multiplier
        ));
    }
    None
}

fn compare(
    hand: &Hand,
    bases: &[ScoreBasis; 4],
    ended: &Ended<'_>,
    totals_before: [i64; 4],
) -> Option<String> {
    let end = ended.end;
    if let Some(problem) = compare_end(hand, bases, end) {
        return Some(problem);
    }
    let result = ended.result;
    let penalties = if end.outcome == Outcome::Cancelled {
        [0; 4]
    } else {
        hand.penalty_totals()
    };
    let derived = HandResult {
        outcome: end.outcome,
        winner: end.winner,
        penalties,
        scores: end.scores,
    };
    if *result != derived {
        return Some(format!(
            "published result {result:?}, re-derived {derived:?}"
        ));
    }
    let mut running = Match::new(hand.rules.clone(), 0);
    running.totals = totals_before;
    running.record(derived);
    if running.totals != *ended.totals {
        return Some(format!(
            "totals {:?} published, {:?} re-derived",
            ended.totals, running.totals
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::event::seed_hash;
    use okey_bots::{Bot, Level};
    use okey_rules::{Preset, SeatView};

    use super::*;

    type Played = (RuleSet, Deal, Vec<(u64, PublicPlay)>, HandEnd, HandResult);

    /// A hand played to its end by strong bots through the engine, with its public events.
    fn played_hand(seed: [u8; 32]) -> Played {
        play(seed, false)
    }

    /// The same, except that the first seat able to discard an okey before its last tile does
    /// (the engine charges it `discard_okey`).
    fn played_hand_with_a_penalty(seed: [u8; 32]) -> Played {
        play(seed, true)
    }

    fn play(seed: [u8; 32], discard_an_okey: bool) -> Played {
        let rules = Preset::Classic.rules();
        let deal = Deal::from_seed(&seed, 0);
        let start = Hand::start(rules.clone(), deal.clone()).unwrap();
        let mut hand = Hand::from_start(&start);
        let mut bots: Vec<Box<dyn Bot>> = (0..4).map(|_| Level::Strong.bot()).collect();
        let mut plays = Vec::new();
        let mut end = None;
        let mut charged = false;
        for _ in 0..5_000 {
            let seat = hand.turn.seat;
            let mut command = bots[seat as usize].act(&SeatView::of(&hand, seat));
            let okey = hand.okey.tile();
            if discard_an_okey
                && !charged
                && matches!(command, okey_rules::Command::Discard { .. })
                && hand.racks[seat as usize].contains(okey)
                && hand.racks[seat as usize].len() > 1
            {
                command = okey_rules::Command::Discard { tile: okey };
            }
            let events = hand.decide(seat, &command).unwrap_or_else(|_| {
                hand.decide(seat, &okey_rules::Command::Timeout)
                    .expect("a timeout is always possible")
            });
            charged |= events.iter().any(|e| {
                matches!(
                    e,
                    Event::PenaltyCharged {
                        reason: PenaltyReason::DiscardOkey,
                        ..
                    }
                )
            });
            for event in events {
                hand.evolve(&event);
                // Table versions: the deal is 2, its events follow.
                let version = plays.len() as u64 + 3;
                match event {
                    Event::TileDrawn { seat, .. } => plays.push((version, PublicPlay::Drawn(seat))),
                    Event::HandEnded { end: e } => end = Some(e),
                    other => plays.push((version, PublicPlay::Event(other))),
                }
            }
            if end.is_some() {
                break;
            }
        }
        let end = end.expect("the bots finish the hand");
        let result = HandResult::of(&hand).unwrap();
        (rules, deal, plays, end, result)
    }

    fn check(
        rules: &RuleSet,
        deal: &Deal,
        seed: [u8; 32],
        plays: &[(u64, PublicPlay)],
        end: &HandEnd,
        result: &HandResult,
    ) -> Verification {
        let mut running = Match::new(rules.clone(), 0);
        running.record(*result);
        verify_hand(
            &Dealt {
                version: 2,
                rules,
                first: 0,
                indicator: deal.indicator,
                seed_sha256: &seed_hash(&seed),
            },
            plays,
            &Ended {
                version: plays.last().map_or(3, |(v, _)| v + 1),
                end,
                result,
                totals: &running.totals,
                seed: &crate::event::hex(&seed),
            },
            [0; 4],
        )
    }

    #[test]
    fn a_hand_played_by_the_engine_verifies_and_a_changed_score_does_not() {
        for n in 0..3u8 {
            let seed = [n + 11; 32];
            let (rules, deal, plays, end, result) = played_hand(seed);
            let ok = check(&rules, &deal, seed, &plays, &end, &result);
            assert_eq!(ok.problem, None);
            assert!(ok.bases.is_some());

            let mut tampered = end;
            tampered.scores[1] += 1;
            let mut tampered_result = result;
            tampered_result.scores[1] += 1;
            let caught = check(&rules, &deal, seed, &plays, &tampered, &tampered_result);
            assert!(
                caught
                    .problem
                    .as_deref()
                    .unwrap()
                    .contains("seat 1 was scored"),
                "{caught:?}"
            );
        }
    }

    /// A played hand as a file holds it: its engine events, the deal first, every draw named.
    fn as_file(
        rules: &RuleSet,
        deal: &Deal,
        plays: &[(u64, PublicPlay)],
        end: &HandEnd,
    ) -> Vec<Event> {
        let start = Hand::start(rules.clone(), deal.clone()).unwrap();
        let mut hand = Hand::from_start(&start);
        let mut events = vec![start];
        for (version, play) in plays {
            let event = resolve(&hand, *version, play).unwrap();
            hand.evolve(&event);
            events.push(event);
        }
        events.push(Event::HandEnded { end: *end });
        events
    }

    #[test]
    fn a_file_of_engine_events_verifies_and_any_changed_number_or_tile_is_caught() {
        let (rules, deal, plays, end, _) = played_hand_with_a_penalty([7; 32]);
        let events = as_file(&rules, &deal, &plays, &end);
        let ok = verify_events(&events);
        assert_eq!(ok.problem, None);
        assert!(ok.bases.is_some());
        // In play (no end yet): checked as far as it goes.
        assert_eq!(verify_events(&events[..events.len() / 2]).problem, None);

        let last = events.len() as u64;
        let mut score = events.clone();
        if let Some(Event::HandEnded { end }) = score.last_mut() {
            end.scores[2] -= 100;
        }
        let caught = verify_events(&score);
        assert_eq!(caught.at, Some(last));
        assert!(caught.problem.unwrap().contains("seat 2 was scored"));

        let (at, penalty) = events
            .iter()
            .enumerate()
            .find(|(_, e)| matches!(e, Event::PenaltyCharged { .. }))
            .expect("the hand has a penalty");
        let mut changed = events.clone();
        if let Event::PenaltyCharged { points, .. } = &mut changed[at] {
            *points -= 100;
        }
        let caught = verify_events(&changed);
        assert_eq!(caught.at, Some(at as u64 + 1), "{penalty:?}: {caught:?}");

        // A drawn tile that is not the pile's next: a difference, not a panic.
        let (at, _) = events
            .iter()
            .enumerate()
            .find(|(_, e)| matches!(e, Event::TileDrawn { .. }))
            .unwrap();
        let mut drawn = events.clone();
        if let Event::TileDrawn { tile, .. } = &mut drawn[at] {
            *tile = if *tile == "K13".parse::<Tile>().unwrap() {
                "R1".parse::<Tile>().unwrap()
            } else {
                "K13".parse::<Tile>().unwrap()
            };
        }
        let caught = verify_events(&drawn);
        assert_eq!(caught.at, Some(at as u64 + 1), "{caught:?}");

        // A fact support reads as a reason, changed with nothing else: whether a discard was
        // playable, an opening's value.
        let (at, _) = events
            .iter()
            .enumerate()
            .find(|(_, e)| matches!(e, Event::TileDiscarded { .. }))
            .unwrap();
        let mut flipped = events.clone();
        if let Event::TileDiscarded { playable, .. } = &mut flipped[at] {
            *playable = !*playable;
        }
        let caught = verify_events(&flipped);
        assert_eq!(caught.at, Some(at as u64 + 1), "{caught:?}");
        let said = caught.problem.unwrap();
        assert!(
            said.contains("playable: published"),
            "names the field: {said}"
        );
        assert!(
            !said.contains("tile:"),
            "and only the field that differs: {said}"
        );
        let (at, _) = events
            .iter()
            .enumerate()
            .find(|(_, e)| matches!(e, Event::HandOpened { .. }))
            .expect("a strong bot opens");
        let mut worth = events.clone();
        if let Event::HandOpened { amount, .. } = &mut worth[at] {
            *amount += 45;
        }
        let caught = verify_events(&worth);
        assert_eq!(caught.at, Some(at as u64 + 1), "{caught:?}");
        assert!(caught.problem.unwrap().contains("amount: published"));

        // Not a hand.
        assert!(verify_events(&events[1..]).problem.is_some());
    }

    #[test]
    fn a_seed_that_is_not_the_commitment_or_a_changed_penalty_is_caught() {
        let seed = [42; 32];
        let (rules, deal, plays, end, result) = played_hand(seed);
        let wrong = verify_hand(
            &Dealt {
                version: 2,
                rules: &rules,
                first: 0,
                indicator: deal.indicator,
                seed_sha256: &seed_hash(&[43; 32]),
            },
            &plays,
            &Ended {
                version: plays.last().map_or(3, |(v, _)| v + 1),
                end: &end,
                result: &result,
                totals: &[0; 4],
                seed: &crate::event::hex(&seed),
            },
            [0; 4],
        );
        assert!(wrong.problem.unwrap().starts_with("revealed seed"));

        let mut penalised = result;
        penalised.penalties[2] += 101;
        let caught = check(&rules, &deal, seed, &plays, &end, &penalised);
        assert!(caught.problem.unwrap().contains("published result"));
    }

    /// A penalty changed in a way the totals cannot show (its reason, its seat with the totals
    /// moved along, its points with the totals moved along) is caught at its own event.
    #[test]
    fn each_penalty_is_checked_against_the_one_the_engine_charges() {
        let seed = [7; 32];
        let (rules, deal, plays, end, result) = played_hand_with_a_penalty(seed);
        let ok = check(&rules, &deal, seed, &plays, &end, &result);
        assert_eq!(ok.problem, None);
        let (at, charged) = plays
            .iter()
            .find_map(|(v, p)| match p {
                PublicPlay::Event(
                    e @ Event::PenaltyCharged {
                        reason: PenaltyReason::DiscardOkey,
                        ..
                    },
                ) => Some((*v, e.clone())),
                _ => None,
            })
            .expect("the hand has the okey discard's penalty");
        let Event::PenaltyCharged {
            id,
            seat,
            points,
            reason,
        } = charged
        else {
            unreachable!()
        };
        assert_eq!(reason, PenaltyReason::DiscardOkey);
        let changed = |event: Event, result: HandResult| {
            let plays: Vec<(u64, PublicPlay)> = plays
                .iter()
                .map(|(v, p)| {
                    if *v == at {
                        (*v, PublicPlay::Event(event.clone()))
                    } else {
                        (*v, p.clone())
                    }
                })
                .collect();
            check(&rules, &deal, seed, &plays, &end, &result)
                .problem
                .expect("caught")
        };
        let reason_changed = changed(
            Event::PenaltyCharged {
                id,
                seat,
                points,
                reason: PenaltyReason::DiscardPlayable,
            },
            result,
        );
        assert!(
            reason_changed.starts_with(&format!("version {at}: the table published penalty")),
            "{reason_changed}"
        );
        assert!(
            reason_changed.contains("discard_playable"),
            "{reason_changed}"
        );
        let other = (seat + 1) % 4;
        let mut moved = result;
        moved.penalties[seat as usize] -= points;
        moved.penalties[other as usize] += points;
        let seat_changed = changed(
            Event::PenaltyCharged {
                id,
                seat: other,
                points,
                reason,
            },
            moved,
        );
        assert!(
            seat_changed.starts_with(&format!("version {at}:")),
            "{seat_changed}"
        );
        let mut more = result;
        more.penalties[seat as usize] += 20;
        let points_changed = changed(
            Event::PenaltyCharged {
                id,
                seat,
                points: points + 20,
                reason,
            },
            more,
        );
        assert!(
            points_changed.contains(&format!("{} points", points + 20)),
            "{points_changed}"
        );

        // A penalty no move charges, added after a draw.
        let draw = plays
            .iter()
            .position(|(_, p)| matches!(p, PublicPlay::Drawn(_)))
            .unwrap();
        let mut added = plays.clone();
        added.insert(
            draw + 1,
            (
                plays[draw].0,
                PublicPlay::Event(Event::PenaltyCharged {
                    id: 0,
                    seat: 0,
                    points: 101,
                    reason: PenaltyReason::WrongOpening,
                }),
            ),
        );
        let problem = check(&rules, &deal, seed, &added, &end, &result)
            .problem
            .unwrap();
        assert!(
            problem.contains("follows no move that charges it"),
            "{problem}"
        );
    }

    #[test]
    fn an_end_the_hand_cannot_have_had_is_a_difference_not_a_panic() {
        let seed = [5; 32];
        let (rules, deal, _, _, _) = played_hand(seed);
        let end = HandEnd {
            outcome: Outcome::Finished,
            winner: Some(2),
            multiplier: 1,
            scores: [50, 60, -101, 70],
        };
        let result = HandResult {
            outcome: Outcome::Finished,
            winner: Some(2),
            penalties: [0; 4],
            scores: end.scores,
        };
        let problem = check(&rules, &deal, seed, &[], &end, &result).problem;
        assert!(problem.is_some());
    }

    /// A draw that names its tile (what a player reading a finished hand is shown) must name the
    /// re-dealt pile's next tile; another tile is caught at its own event.
    #[test]
    fn a_drawn_tile_that_is_not_the_piles_next_is_caught_at_its_event() {
        let seed = [9; 32];
        let (rules, deal, plays, end, result) = played_hand(seed);
        let mut pile = deal.pile.clone().into_iter();
        let named: Vec<(u64, PublicPlay)> = plays
            .iter()
            .map(|(v, p)| match p {
                PublicPlay::Drawn(seat) => (
                    *v,
                    PublicPlay::Event(Event::TileDrawn {
                        seat: *seat,
                        tile: pile.next().expect("no more draws than tiles"),
                    }),
                ),
                other => (*v, other.clone()),
            })
            .collect();
        let ok = check(&rules, &deal, seed, &named, &end, &result);
        assert_eq!(ok.problem, None);
        assert_eq!(ok.at, None);
        let (i, at) = named
            .iter()
            .enumerate()
            .find_map(|(i, (v, p))| {
                matches!(p, PublicPlay::Event(Event::TileDrawn { .. })).then_some((i, *v))
            })
            .expect("the hand has a draw");
        let PublicPlay::Event(Event::TileDrawn { seat, tile }) = named[i].1.clone() else {
            unreachable!()
        };
        let other = deal
            .pile
            .iter()
            .copied()
            .find(|t| *t != tile)
            .expect("the pile holds another tile");
        let mut changed = named.clone();
        changed[i].1 = PublicPlay::Event(Event::TileDrawn { seat, tile: other });
        let caught = check(&rules, &deal, seed, &changed, &end, &result);
        assert_eq!(caught.at, Some(at));
        let problem = caught.problem.unwrap();
        assert!(
            problem.contains(&format!("seat {seat} drew {other}, but")),
            "{problem}"
        );
    }
}
