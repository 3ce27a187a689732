//! Matches: several hands under one rule set, running totals, the first player rotating, and the
//! match end (a number of hands or a penalty limit; team totals with partners).

use serde::{Deserialize, Serialize};

use crate::hand::{Hand, Outcome};
use crate::ruleset::{MatchLength, RuleSet};
use crate::{Seat, next_seat};

/// One finished hand's contribution to the match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandResult {
    pub outcome: Outcome,
    pub winner: Option<Seat>,
    /// In-play penalties that stand (voided ones excluded).
    pub penalties: [i32; 4],
    /// End-of-hand scores.
    pub scores: [i32; 4],
}

impl HandResult {
    /// The result of an ended hand; `None` while it is in progress.
    pub fn of(hand: &Hand) -> Option<HandResult> {
        let end = hand.end?;
        let penalties = if end.outcome == Outcome::Cancelled {
            [0; 4]
        } else {
            hand.penalty_totals()
        };
        Some(HandResult {
            outcome: end.outcome,
            winner: end.winner,
            penalties,
            scores: end.scores,
        })
    }

    pub fn total(&self, seat: Seat) -> i64 {
        (self.penalties[seat as usize] + self.scores[seat as usize]) as i64
    }
}

/// Who won a finished match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchWinner {
    /// The seats (one, or a team of two) with the lowest total.
    Seats(Vec<Seat>),
    /// Equal lowest totals.
    Draw,
}

/// A match in progress or finished.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Match {
    pub rules: RuleSet,
    /// The first player of hand 0.
    pub first: Seat,
    pub hands: Vec<HandResult>,
    pub totals: [i64; 4],
}

impl Match {
    pub fn new(rules: RuleSet, first: Seat) -> Match {
        Match {
            rules,
            first,
            hands: Vec::new(),
            totals: [0; 4],
        }
    }

    /// Hands that counted (cancelled hands are dealt again and do not count).
    pub fn hands_played(&self) -> usize {
        self.hands
            .iter()
            .filter(|h| h.outcome != Outcome::Cancelled)
            .count()
    }

    /// The first player of the next hand: rotates with each counted hand; a cancelled hand is
    /// dealt again by the same first player.
    pub fn next_first(&self) -> Seat {
        let mut s = self.first;
        for _ in 0..self.hands_played() {
            s = next_seat(s);
        }
        s
    }

    /// Adds a hand to the totals. With `floor_totals_at_zero` the total that decides the match
    /// never goes below zero: a seat's total alone, or at a partner table the team's (seed 001:
    /// partners "share a team total", and "a total never goes below 0"), so a partner's −101 still
    /// comes off penalties its teammate collected.
    pub fn record(&mut self, result: HandResult) {
        if result.outcome != Outcome::Cancelled {
            for s in 0..4u8 {
                self.totals[s as usize] += result.total(s);
            }
            if self.rules.floor_totals_at_zero {
                if self.rules.partners {
                    for team in [[0, 2], [1, 3]] {
                        self.floor_team(team);
                    }
                } else {
                    for t in &mut self.totals {
                        *t = (*t).max(0);
                    }
                }
            }
        }
        self.hands.push(result);
    }

    /// Brings a team total below zero back to zero, lifting the seats below zero (the points
    /// under zero are lost, as seed 001 says). A seat's share may stay below zero while its
    /// partner's is above: only the team total counts.
    fn floor_team(&mut self, team: [usize; 2]) {
        let mut short = -(self.totals[team[0]] + self.totals[team[1]]);
        for s in team {
            if short <= 0 {
                break;
            }
            let lift = short.min(-self.totals[s]).max(0);
            self.totals[s] += lift;
            short -= lift;
        }
    }

    /// Totals that decide the match: per seat, or per team (seats 0+2, 1+3) with partners.
    pub fn standing(&self) -> Vec<(Vec<Seat>, i64)> {
        if self.rules.partners {
            vec![
                (vec![0, 2], self.totals[0] + self.totals[2]),
                (vec![1, 3], self.totals[1] + self.totals[3]),
            ]
        } else {
            (0..4u8)
                .map(|s| (vec![s], self.totals[s as usize]))
                .collect()
        }
    }

    pub fn is_over(&self) -> bool {
        match self.rules.match_length {
            MatchLength::Hands(n) => self.hands_played() >= n as usize,
            MatchLength::PenaltyLimit(limit) => self.standing().iter().any(|(_, t)| *t >= limit),
        }
    }

    /// The winner once the match is over: lowest total wins, equal lowest totals draw.
    pub fn winner(&self) -> Option<MatchWinner> {
        if !self.is_over() {
            return None;
        }
        let standing = self.standing();
        let low = standing
            .iter()
            .map(|(_, t)| *t)
            .min()
            .expect("standing is never empty");
        let best: Vec<_> = standing.iter().filter(|(_, t)| *t == low).collect();
        Some(if best.len() == 1 {
            MatchWinner::Seats(best[0].0.clone())
        } else {
            MatchWinner::Draw
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ruleset::Preset;

    fn result(scores: [i32; 4]) -> HandResult {
        HandResult {
            outcome: Outcome::Finished,
            winner: Some(0),
            penalties: [0; 4],
            scores,
        }
    }

    #[test]
    fn five_hands_make_a_classic_match_and_the_first_player_rotates() {
        let mut m = Match::new(Preset::Classic.rules(), 1);
        for _ in 0..4 {
            m.record(result([-101, 20, 30, 202]));
            assert!(!m.is_over());
        }
        assert_eq!(m.next_first(), 1);
        m.record(result([-101, 20, 30, 202]));
        assert!(m.is_over());
        assert_eq!(m.winner(), Some(MatchWinner::Seats(vec![0])));
    }

    #[test]
    fn floors_at_zero_and_penalty_limits() {
        let mut m = Match::new(Preset::Yudum.rules(), 0);
        m.record(result([-101, 500, 30, 202]));
        assert_eq!(m.totals[0], 0);
        m.record(result([-101, 600, 30, 202]));
        assert!(m.is_over());
    }

    fn partners(rules: RuleSet) -> RuleSet {
        RuleSet {
            partners: true,
            ..rules
        }
    }

    fn team_totals(m: &Match) -> [i64; 2] {
        [m.totals[0] + m.totals[2], m.totals[1] + m.totals[3]]
    }

    #[test]
    fn solo_floors_each_seat_and_the_points_under_zero_are_lost() {
        let mut m = Match::new(Preset::Yudum.rules(), 0);
        m.record(result([-101, 50, 30, 202]));
        assert_eq!(m.totals, [0, 50, 30, 202]);
        // The next −101 comes off nothing: still 0, the first hand's −101 is not carried.
        m.record(HandResult {
            winner: Some(0),
            ..result([-101, 20, 20, 20])
        });
        assert_eq!(m.totals, [0, 70, 50, 222]);
    }

    #[test]
    fn a_partner_at_zero_who_goes_out_takes_101_off_the_team_total() {
        let mut m = Match::new(partners(Preset::Yudum.rules()), 0);
        // Seat 0 at 0, its partner seat 2 at 150; seat 0 goes out.
        m.record(result([0, 40, 150, 60]));
        m.record(result([-101, 30, 0, 20]));
        assert_eq!(team_totals(&m), [49, 150]);
        // Per seat, seat 0 would have been floored to 0 and the team kept 150.
        assert_eq!(m.totals, [-101, 70, 150, 80]);
    }

    #[test]
    fn a_team_total_below_zero_is_floored_to_zero() {
        let mut m = Match::new(partners(Preset::Yudum.rules()), 0);
        m.record(result([-101, 30, 40, 20]));
        // Team 0: −101 + 40 = −61 → 0 (seat 0 lifted by 61); team 1: 50.
        assert_eq!(team_totals(&m), [0, 50]);
        assert_eq!(m.totals, [-40, 30, 40, 20]);
        // Both seats of a team below zero: both come back to zero.
        let mut m = Match::new(partners(Preset::Yudum.rules()), 0);
        m.record(HandResult {
            penalties: [0, 0, -5, 0],
            ..result([-101, 30, 0, 20])
        });
        assert_eq!(m.totals, [0, 30, 0, 20]);
        // The team total then grows from zero, not from below it.
        m.record(result([10, 0, 5, 0]));
        assert_eq!(team_totals(&m), [15, 50]);
    }

    #[test]
    fn without_the_floor_a_team_total_goes_below_zero() {
        let mut m = Match::new(partners(Preset::Classic.rules()), 0);
        m.record(result([-202, 30, 40, 20]));
        assert_eq!(team_totals(&m), [-162, 50]);
    }

    #[test]
    fn a_penalty_limit_with_partners_is_reached_by_the_team_total() {
        let rules = RuleSet {
            match_length: MatchLength::PenaltyLimit(501),
            ..partners(Preset::Yudum.rules())
        };
        let mut m = Match::new(rules, 0);
        // No seat reaches 501, team 1 does: 260 + 250.
        m.record(result([-101, 260, 100, 250]));
        assert!(m.is_over());
        assert_eq!(m.winner(), Some(MatchWinner::Seats(vec![0, 2])));
        // Solo, the same hand ends nothing: every seat is below 501.
        let mut m = Match::new(
            RuleSet {
                partners: false,
                ..m.rules.clone()
            },
            0,
        );
        m.record(result([-101, 260, 100, 250]));
        assert!(!m.is_over());
    }

    #[test]
    fn partners_sum_team_totals_and_equal_totals_draw() {
        let rules = RuleSet {
            partners: true,
            match_length: MatchLength::Hands(1),
            ..Preset::Classic.rules()
        };
        let mut m = Match::new(rules, 0);
        m.record(result([10, 5, 0, 5]));
        assert_eq!(m.winner(), Some(MatchWinner::Draw));
    }
}
