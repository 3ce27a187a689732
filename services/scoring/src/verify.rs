//! Re-verification of a finished hand, independently of the table service: the revealed seed must
//! hash to the commitment published at the deal, the deal is re-dealt with
//! `okey_rules::Deal::from_seed`, the hand's public events are re-folded through the engine (each
//! draw is the next tile of the re-dealt pile, so the public copies are enough), and the engine's
//! own end-of-hand scores, standing penalties and match totals are compared with what the table
//! published. Pure: no I/O.

use std::panic::{AssertUnwindSafe, catch_unwind};

use okey_rules::hand::ScoreBasis;
use okey_rules::matches::{HandResult, Match};
use okey_rules::{Deal, Event, Hand, HandEnd, Outcome, RuleSet, Seat, Tile};
use okey_table::seed_from_hex;

/// One public event of a hand in progress, as scoring received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublicPlay {
    /// An engine event the public sees whole.
    Event(Event),
    /// A seat drew from the centre pile (the public copy does not say which tile).
    Drawn(Seat),
}

/// What the table published when the hand was dealt.
#[derive(Clone, Debug)]
pub struct Dealt<'a> {
    pub rules: &'a RuleSet,
    pub first: Seat,
    pub indicator: Tile,
    pub seed_sha256: &'a str,
}

/// What the table published when the hand ended.
#[derive(Clone, Debug)]
pub struct Ended<'a> {
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
    /// The engine's basis of each seat's end-of-hand score, when the hand could be re-folded.
    pub bases: Option<[ScoreBasis; 4]>,
}

impl Verification {
    pub fn verified(&self) -> bool {
        self.problem.is_none()
    }

    fn failed(problem: impl Into<String>) -> Verification {
        Verification {
            problem: Some(problem.into()),
            bases: None,
        }
    }
}

/// Re-derives a hand from its deal and public events and compares it with its published end.
/// `totals_before` are the match totals published after the previous hand.
pub fn verify_hand(
    dealt: &Dealt<'_>,
    plays: &[PublicPlay],
    ended: &Ended<'_>,
    totals_before: [i64; 4],
) -> Verification {
    let seed = match seed_from_hex(ended.seed, dealt.seed_sha256) {
        Ok(seed) => seed,
        Err(e) => return Verification::failed(format!("revealed seed: {e}")),
    };
    let deal = Deal::from_seed(&seed, dealt.first);
    if deal.indicator != dealt.indicator {
        return Verification::failed(format!(
            "the seed deals indicator {}, the table announced {}",
            deal.indicator, dealt.indicator
        ));
    }
    let start = match Hand::start(dealt.rules.clone(), deal) {
        Ok(start) => start,
        Err(e) => return Verification::failed(format!("the re-dealt hand is invalid: {e}")),
    };
    // The engine's evolve trusts its events (it asserts, in debug builds, that a rack holds what
    // leaves it): an event the deal cannot explain is a difference, not a crash.
    let folded = catch_unwind(AssertUnwindSafe(|| {
        let mut hand = Hand::from_start(&start);
        for play in plays {
            let event = match play {
                PublicPlay::Drawn(seat) => {
                    let tile = hand
                        .pile_in_draw_order()
                        .first()
                        .copied()
                        .ok_or_else(|| format!("seat {seat} drew from an empty pile"))?;
                    Event::TileDrawn { seat: *seat, tile }
                }
                PublicPlay::Event(event) => event.clone(),
            };
            hand.evolve(&event);
        }
        hand.evolve(&Event::HandEnded { end: *ended.end });
        Ok::<Hand, String>(hand)
    }));
    let hand = match folded {
        Ok(Ok(hand)) => hand,
        Ok(Err(problem)) => return Verification::failed(problem),
        Err(_) => return Verification::failed("the events do not fold from the re-dealt hand"),
    };
    let Some(bases) = hand.score_bases() else {
        return Verification::failed("the re-folded hand has not ended");
    };
    let problem = compare(&hand, &bases, ended, totals_before);
    Verification {
        problem,
        bases: Some(bases),
    }
}

fn compare(
    hand: &Hand,
    bases: &[ScoreBasis; 4],
    ended: &Ended<'_>,
    totals_before: [i64; 4],
) -> Option<String> {
    let end = ended.end;
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
    use okey_bots::{Bot, Level};
    use okey_rules::{Preset, SeatView};
    use okey_table::seed_hash;

    use super::*;

    /// A hand played to its end by strong bots through the engine, with its public events.
    fn played_hand(seed: [u8; 32]) -> (RuleSet, Deal, Vec<PublicPlay>, HandEnd, HandResult) {
        let rules = Preset::Classic.rules();
        let deal = Deal::from_seed(&seed, 0);
        let start = Hand::start(rules.clone(), deal.clone()).unwrap();
        let mut hand = Hand::from_start(&start);
        let mut bots: Vec<Box<dyn Bot>> = (0..4).map(|_| Level::Strong.bot()).collect();
        let mut plays = Vec::new();
        let mut end = None;
        for _ in 0..5_000 {
            let seat = hand.turn.seat;
            let command = bots[seat as usize].act(&SeatView::of(&hand, seat));
            let events = hand.decide(seat, &command).unwrap_or_else(|_| {
                hand.decide(seat, &okey_rules::Command::Timeout)
                    .expect("a timeout is always possible")
            });
            for event in events {
                hand.evolve(&event);
                match event {
                    Event::TileDrawn { seat, .. } => plays.push(PublicPlay::Drawn(seat)),
                    Event::HandEnded { end: e } => end = Some(e),
                    other => plays.push(PublicPlay::Event(other)),
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
        plays: &[PublicPlay],
        end: &HandEnd,
        result: &HandResult,
    ) -> Verification {
        let mut running = Match::new(rules.clone(), 0);
        running.record(*result);
        verify_hand(
            &Dealt {
                rules,
                first: 0,
                indicator: deal.indicator,
                seed_sha256: &seed_hash(&seed),
            },
            plays,
            &Ended {
                end,
                result,
                totals: &running.totals,
                seed: &okey_table::hex(&seed),
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

    #[test]
    fn a_seed_that_is_not_the_commitment_or_a_changed_penalty_is_caught() {
        let seed = [42; 32];
        let (rules, deal, plays, end, result) = played_hand(seed);
        let wrong = verify_hand(
            &Dealt {
                rules: &rules,
                first: 0,
                indicator: deal.indicator,
                seed_sha256: &seed_hash(&[43; 32]),
            },
            &plays,
            &Ended {
                end: &end,
                result: &result,
                totals: &[0; 4],
                seed: &okey_table::hex(&seed),
            },
            [0; 4],
        );
        assert!(wrong.problem.unwrap().starts_with("revealed seed"));

        let mut penalised = result;
        penalised.penalties[2] += 101;
        let caught = check(&rules, &deal, seed, &plays, &end, &penalised);
        assert!(caught.problem.unwrap().contains("published result"));
    }
}
