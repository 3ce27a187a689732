//! Self-play: bots play hands through the real engine, every step is checked against the engine's
//! invariants, and the run is summed up in one JSON object.
//!
//! # Deals
//! Hand `i` (from 0) of a run with seed `S` is dealt by `Deal::from_seed` from
//! `SHA-256("okeyctl simulate v1" ‖ S as 8 little-endian bytes ‖ i as 8 little-endian bytes)`,
//! its first player is seat `i mod 4`. With `rotate`, the lineup turns one seat every four hands:
//! in hand `i` seat `s` is played by bot `(s + ⌊i/4⌋) mod 4` of the lineup, so over 16 hands every
//! bot plays every seat with every first player once. Same seed, same hands, same result.
//!
//! # Invariants checked
//! After every command: the 106 tiles are all somewhere (racks, pile, discards, table, indicator)
//! and the acting seat's view shows exactly its own rack plus the public tiles. At the end of each
//! hand: every seat's view, and folding the recorded events again gives the same state (after every
//! command too with `replay_every_step`).

use std::collections::BTreeMap;
use std::time::Instant;

use okey_bots::{Bot, Level};
use okey_rules::matches::HandResult;
use okey_rules::tile::KINDS;
use okey_rules::{Command, Deal, Event, Hand, Outcome, RuleSet, Seat, SeatView, Tile, Tiles};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// Commands one seat may send in one turn before the driver plays the turn for it: a bot that
/// keeps acting without discarding is stuck (and that is a bug to fix).
const MAX_COMMANDS_PER_TURN: u32 = 64;

/// How many rejected commands and violations are kept word for word.
const KEEP_DETAILS: usize = 20;

/// One self-play run.
#[derive(Clone, Debug)]
pub struct Simulation {
    pub hands: u64,
    pub seed: u64,
    pub rules: RuleSet,
    /// The lineup: bot `j` starts at seat `j`.
    pub bots: [Level; 4],
    /// Turn the lineup one seat every four hands.
    pub rotate: bool,
    /// Replay the event log after every command, not only at the end of each hand (slow).
    pub replay_every_step: bool,
}

/// Mean, standard deviation and the half-width of the 95% confidence interval of the mean.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    pub n: u64,
    pub mean: f64,
    pub stddev: f64,
    pub ci95: f64,
}

/// `a` against `b`: per hand, the mean score of `a`'s seats minus that of `b`'s seats. Negative
/// means `a` did better; `a` is better beyond doubt when `mean + ci95 < 0`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    /// End-of-hand scores.
    pub score_diff: Stats,
    /// End-of-hand scores plus in-play penalties.
    pub total_diff: Stats,
}

/// What a run found. The first nine fields are the contract of `okeyctl simulate`'s last line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub hands: u64,
    pub finished: u64,
    pub pile_empty: u64,
    pub cancelled: u64,
    /// Turns completed with a discard, per hand.
    pub avg_turns: f64,
    pub hands_per_sec: f64,
    pub invariant_violations: u64,
    /// Mean end-of-hand score per seat (in-play penalties not included).
    pub mean_score_by_seat: [f64; 4],
    /// Mean end-of-hand score per bot level, over the seats it played.
    pub mean_score_by_bot: BTreeMap<String, f64>,
    /// Mean end-of-hand score plus in-play penalties per bot level.
    pub mean_total_by_bot: BTreeMap<String, f64>,
    /// Bot commands the engine rejected (each replaced by the server's timeout play).
    pub rejected_commands: u64,
    /// Turns a bot did not end within the command limit.
    pub stuck_turns: u64,
    /// Discards a table meld could take (charged at once at an `auto` table, if called at a
    /// `called` one).
    pub playable_discards: u64,
    /// `call_playable` commands, and those on a tile that did not fit (charging nobody).
    pub calls: u64,
    pub calls_not_fitting: u64,
    /// `strong` against `easy` when both play.
    pub comparison: Option<Comparison>,
    pub seed: u64,
    pub preset: String,
    pub bots: Vec<String>,
    pub rotate: bool,
    /// The first rejected commands and violations, word for word.
    #[serde(skip)]
    pub details: Vec<String>,
}

impl Report {
    /// The report as the one-line JSON `okeyctl simulate` prints last.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("reports serialize")
    }
}

/// The 32-byte seed of hand `hand` of a run with seed `seed` (see the module docs).
pub fn deal_seed(seed: u64, hand: u64) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"okeyctl simulate v1");
    h.update(seed.to_le_bytes());
    h.update(hand.to_le_bytes());
    h.finalize().into()
}

/// The seat that plays first in hand `hand`.
pub fn first_seat(hand: u64) -> Seat {
    (hand % 4) as Seat
}

/// Which lineup slot plays each seat in hand `hand`.
pub fn slots(sim: &Simulation, hand: u64) -> [usize; 4] {
    let r = if sim.rotate {
        (hand / 4 % 4) as usize
    } else {
        0
    };
    std::array::from_fn(|s| (s + r) % 4)
}

/// One hand's outcome as the driver saw it.
#[derive(Clone, Debug)]
pub struct Played {
    pub hand: Hand,
    pub events: Vec<Event>,
    /// Bot commands the engine rejected, each with what was asked and why it was refused.
    pub rejected: Vec<String>,
    pub stuck: u64,
    pub violations: Vec<String>,
}

/// Plays one hand with `bots` at seats 0–3, checking the invariants as it goes. A rejected bot
/// command is counted and replaced by the server's timeout play (return an unused side discard,
/// draw, discard the highest tile), so the hand always ends.
pub fn play_hand(
    rules: &RuleSet,
    deal: Deal,
    bots: &mut [Box<dyn Bot>; 4],
    replay_every_step: bool,
) -> Played {
    let start = Hand::start(rules.clone(), deal).expect("seeded deals are valid");
    let mut hand = Hand::from_start(&start);
    let mut events = vec![start];
    let (mut rejected, mut stuck, mut violations) = (Vec::new(), 0, Vec::new());
    let mut turn = (hand.turn.number, 0u32);
    while !hand.is_over() {
        let seat = hand.turn.seat;
        if turn.0 != hand.turn.number {
            turn = (hand.turn.number, 0);
        }
        turn.1 += 1;
        let view = SeatView::of(&hand, seat);
        check_view(&hand, &view, &mut violations);
        let command = if turn.1 > MAX_COMMANDS_PER_TURN {
            stuck += 1;
            Command::Timeout
        } else {
            bots[seat as usize].act(&view)
        };
        let new = match hand.decide(seat, &command) {
            Ok(new) => new,
            Err(e) => {
                let level = bots[seat as usize].level();
                rejected.push(format!(
                    "seat {seat} ({level}) turn {}: {command:?} rejected: {e}",
                    hand.turn.number
                ));
                match hand.decide(seat, &Command::Timeout) {
                    Ok(new) => new,
                    Err(e) => {
                        violations.push(format!("seat {seat}: the timeout play was rejected: {e}"));
                        break;
                    }
                }
            }
        };
        for e in new {
            hand.evolve(&e);
            events.push(e);
        }
        check_tiles(&hand, &mut violations);
        if replay_every_step {
            check_replay(&hand, &events, &mut violations);
        }
    }
    for seat in 0..4 {
        check_view(&hand, &SeatView::of(&hand, seat), &mut violations);
    }
    check_replay(&hand, &events, &mut violations);
    if !hand.is_over() {
        violations.push("the hand stopped before its end".into());
    }
    Played {
        hand,
        events,
        rejected,
        stuck,
        violations,
    }
}

/// Every tile of the set is in exactly one place: a rack, the pile, a discard pile, the table or
/// the indicator.
fn check_tiles(hand: &Hand, violations: &mut Vec<String>) {
    let mut counts = [0u32; KINDS];
    let mut count = |t: Tile| counts[t.index()] += 1;
    for rack in &hand.racks {
        rack.iter().for_each(&mut count);
    }
    hand.pile_in_draw_order().into_iter().for_each(&mut count);
    hand.discards.iter().flatten().copied().for_each(&mut count);
    hand.table
        .iter()
        .flat_map(|m| m.tiles.iter().map(|p| p.tile))
        .for_each(&mut count);
    count(hand.indicator);
    if let Some(i) = counts.iter().position(|c| *c != 2) {
        violations.push(format!(
            "turn {}: {} tiles in play, {} of {} (the set has 106, two of each)",
            hand.turn.number,
            counts.iter().sum::<u32>(),
            counts[i],
            Tile::from_index(i)
        ));
    }
}

/// A seat's view shows its own rack and the public tiles, and nothing else.
fn check_view(hand: &Hand, view: &SeatView, violations: &mut Vec<String>) {
    let seat = view.seat as usize;
    let mut allowed = hand.racks[seat].clone();
    for t in hand
        .table
        .iter()
        .flat_map(|m| m.tiles.iter().map(|p| p.tile))
    {
        allowed.insert(t);
    }
    hand.discards
        .iter()
        .flatten()
        .for_each(|t| allowed.insert(*t));
    allowed.insert(hand.indicator);
    let shown = Tiles::from_slice(&view.visible_tiles());
    if shown != allowed || view.rack != hand.racks[seat].to_vec() {
        violations.push(format!(
            "turn {}: seat {seat}'s view shows {:?}, it may see {:?}",
            hand.turn.number, shown, allowed
        ));
    }
}

/// Folding the recorded events again gives the same state.
fn check_replay(hand: &Hand, events: &[Event], violations: &mut Vec<String>) {
    if Hand::replay(events).as_ref() != Some(hand) {
        violations.push(format!(
            "turn {}: replaying {} events gives another state",
            hand.turn.number,
            events.len()
        ));
    }
}

/// Running mean and variance (Welford), in a fixed order so that results are reproducible.
#[derive(Clone, Copy, Debug, Default)]
struct Running {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Running {
    fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    fn stats(&self) -> Stats {
        let stddev = if self.n > 1 {
            (self.m2 / (self.n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let ci95 = if self.n > 0 {
            1.96 * stddev / (self.n as f64).sqrt()
        } else {
            0.0
        };
        Stats {
            n: self.n,
            mean: self.mean,
            stddev,
            ci95,
        }
    }
}

/// Plays the run. `on_hand` is told how many hands are done after each one (for a progress bar).
pub fn run(sim: &Simulation, on_hand: &mut dyn FnMut(u64)) -> Report {
    let started = Instant::now();
    let (mut finished, mut pile_empty, mut cancelled, mut turns) = (0u64, 0u64, 0u64, 0u64);
    let (mut rejected, mut stuck, mut violations) = (0u64, 0u64, 0u64);
    let (mut playable, mut calls, mut calls_not_fitting) = (0u64, 0u64, 0u64);
    let mut details = Vec::new();
    let mut by_seat = [Running::default(); 4];
    let mut by_bot: BTreeMap<Level, (Running, Running)> = BTreeMap::new();
    let (mut score_diff, mut total_diff) = (Running::default(), Running::default());
    let compare = sim.bots.contains(&Level::Strong) && sim.bots.contains(&Level::Easy);
    for i in 0..sim.hands {
        let slots = slots(sim, i);
        let mut bots: [Box<dyn Bot>; 4] = std::array::from_fn(|s| sim.bots[slots[s]].bot());
        let deal = Deal::from_seed(&deal_seed(sim.seed, i), first_seat(i));
        let played = play_hand(&sim.rules, deal, &mut bots, sim.replay_every_step);
        for e in &played.events {
            match e {
                Event::TileDiscarded { playable: true, .. } => playable += 1,
                Event::PlayableCalled { fits, .. } => {
                    calls += 1;
                    calls_not_fitting += u64::from(!fits);
                }
                _ => {}
            }
        }
        rejected += played.rejected.len() as u64;
        stuck += played.stuck;
        violations += played.violations.len() as u64;
        for text in played.rejected.iter().chain(&played.violations) {
            if details.len() < KEEP_DETAILS {
                details.push(format!("hand {i}: {text}"));
            }
        }
        let result = HandResult::of(&played.hand).expect("played hands end");
        match result.outcome {
            Outcome::Finished => finished += 1,
            Outcome::PileEmpty => pile_empty += 1,
            Outcome::Cancelled => cancelled += 1,
        }
        turns += played.hand.turn.number as u64;
        let mut sums = BTreeMap::<Level, (f64, f64, f64)>::new();
        for s in 0..4u8 {
            let level = sim.bots[slots[s as usize]];
            let score = result.scores[s as usize] as f64;
            let total = result.total(s) as f64;
            by_seat[s as usize].push(score);
            let entry = by_bot.entry(level).or_default();
            entry.0.push(score);
            entry.1.push(total);
            let sum = sums.entry(level).or_default();
            *sum = (sum.0 + score, sum.1 + total, sum.2 + 1.0);
        }
        if compare {
            let (a, b) = (sums[&Level::Strong], sums[&Level::Easy]);
            score_diff.push(a.0 / a.2 - b.0 / b.2);
            total_diff.push(a.1 / a.2 - b.1 / b.2);
        }
        on_hand(i + 1);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let hands = sim.hands.max(1) as f64;
    Report {
        hands: sim.hands,
        finished,
        pile_empty,
        cancelled,
        avg_turns: turns as f64 / hands,
        hands_per_sec: if elapsed > 0.0 {
            sim.hands as f64 / elapsed
        } else {
            0.0
        },
        invariant_violations: violations,
        mean_score_by_seat: by_seat.map(|r| r.mean),
        mean_score_by_bot: by_bot
            .iter()
            .map(|(l, r)| (l.name().to_string(), r.0.mean))
            .collect(),
        mean_total_by_bot: by_bot
            .iter()
            .map(|(l, r)| (l.name().to_string(), r.1.mean))
            .collect(),
        rejected_commands: rejected,
        stuck_turns: stuck,
        playable_discards: playable,
        calls,
        calls_not_fitting,
        comparison: compare.then(|| Comparison {
            a: Level::Strong.name().into(),
            b: Level::Easy.name().into(),
            score_diff: score_diff.stats(),
            total_diff: total_diff.stats(),
        }),
        seed: sim.seed,
        preset: sim.rules.preset.name().into(),
        bots: sim.bots.iter().map(|l| l.name().to_string()).collect(),
        rotate: sim.rotate,
        details,
    }
}
