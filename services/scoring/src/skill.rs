//! Ratings, pure: which matches are rated, the places a match's final totals give, and the
//! Weng-Lin (OpenSkill) update of the `skillratings` crate for four-player free-for-all and for
//! 2-versus-2 partners. `ratings` keeps them and applies this in the order matches ended.
//!
//! The scale: a new player starts at [`INITIAL`] with uncertainty [`INITIAL_UNCERTAINTY`], and
//! [`BETA`] is the rating difference that gives about a two-in-three chance of finishing ahead.
//! These are the crate's defaults (25, 25/3, 25/6) times 60; Weng-Lin does not depend on the
//! scale, so the numbers are the crate's own, only on the 1500 scale players know.
//!
//! **Which matches are rated** ([`is_rated`]): a match that ended at a table that is not a
//! private room's, with at most one seat a bot occupied from the start. Private rooms are left out
//! because their players choose each other (friends could trade results); tables with two or
//! more bots because a person would be rated mostly on beating bots, whose play does not
//! improve. A bot seat (at most one) takes part at its level's fixed rating
//! (`okey_bots::Level::rating`, uncertainty [`BOT_UNCERTAINTY`]) and its own rating never moves.
//! A bot standing in for a person who left is no bot seat: the seat stays its player's, who is
//! rated on the result (leaving a match loses it like playing it badly).

use okey_bots::Level;
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

/// A new player's rating.
pub const INITIAL: f64 = 1500.0;
/// A new player's uncertainty (the standard deviation of the rating).
pub const INITIAL_UNCERTAINTY: f64 = 500.0;
/// The skill-class width: this many points apart, the better player finishes ahead about two
/// times in three.
pub const BETA: f64 = 250.0;
/// The uncertainty a bot seat is rated with (its rating is fixed, so it is nearly certain).
pub const BOT_UNCERTAINTY: f64 = 100.0;

/// The crate's configuration on this scale.
pub fn config() -> WengLinConfig {
    WengLinConfig {
        beta: BETA,
        uncertainty_tolerance: 0.000_001,
    }
}

/// A rating and its uncertainty.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Skill {
    pub rating: f64,
    pub uncertainty: f64,
}

impl Skill {
    /// A new player's.
    pub const NEW: Skill = Skill {
        rating: INITIAL,
        uncertainty: INITIAL_UNCERTAINTY,
    };

    /// A bot seat's: its level's fixed rating (`okey_bots::Level::rating`).
    pub fn bot(rating: i32) -> Skill {
        Skill {
            rating: f64::from(rating),
            uncertainty: BOT_UNCERTAINTY,
        }
    }

    /// The rating as shown and ranked: rounded to a whole point.
    pub fn points(self) -> i32 {
        self.rating.round() as i32
    }

    /// Provisional while the uncertainty is not below `threshold` (setting
    /// `rating.provisional_uncertainty`).
    pub fn provisional(self, threshold: f64) -> bool {
        self.uncertainty >= threshold
    }

    fn crate_rating(self) -> WengLinRating {
        WengLinRating {
            rating: self.rating,
            uncertainty: self.uncertainty,
        }
    }
}

/// Who held a seat for the rating.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seat {
    /// `players/{id}`: rated.
    Person(String),
    /// A bot occupied the seat from the start: plays at its level's fixed rating.
    Bot(Level),
}

/// Whether a match that ended counts for ratings (see the module's rule): not a private room's,
/// every seat held, at most one by a bot, no person in two seats.
pub fn is_rated(private_room: bool, seats: &[Option<Seat>; 4]) -> bool {
    let bots = seats
        .iter()
        .filter(|s| matches!(s, Some(Seat::Bot(_))))
        .count();
    let persons: Vec<&String> = seats
        .iter()
        .filter_map(|s| match s {
            Some(Seat::Person(p)) => Some(p),
            _ => None,
        })
        .collect();
    let distinct = persons
        .iter()
        .enumerate()
        .all(|(i, p)| !persons[..i].contains(p));
    !private_room && seats.iter().all(Option::is_some) && bots <= 1 && distinct
}

/// Places by final totals (lower is better), 1-based; equal totals share a place and the next
/// place skips (totals 10, 10, 30 → places 1, 1, 3).
pub fn places(totals: &[i64]) -> Vec<usize> {
    totals
        .iter()
        .map(|t| 1 + totals.iter().filter(|o| *o < t).count())
        .collect()
}

/// The competitors of a match: the four seats alone, or with partners the teams of seats 0 and 2
/// and of seats 1 and 3 (a team's total is its seats' sum, as the match decides it).
pub fn sides(partners: bool) -> Vec<Vec<usize>> {
    if partners {
        vec![vec![0, 2], vec![1, 3]]
    } else {
        (0..4).map(|s| vec![s]).collect()
    }
}

/// Each seat's place among the sides, by the match's final totals.
pub fn seat_places(partners: bool, totals: &[i64; 4]) -> [usize; 4] {
    let sides = sides(partners);
    let side_totals: Vec<i64> = sides
        .iter()
        .map(|side| side.iter().map(|&s| totals[s]).sum())
        .collect();
    let side_places = places(&side_totals);
    let mut out = [0; 4];
    for (side, place) in sides.iter().zip(side_places) {
        for &s in side {
            out[s] = place;
        }
    }
    out
}

/// The opponents a seat finished ahead of, counting a tie with an opponent as a half, doubled so
/// it stays whole: the period leaderboards' score. Alone, 0–6 (twice 0–3); with partners a
/// winning team's seats beat both opponents (4), a drawn match gives each seat 2.
pub fn score2(partners: bool, totals: &[i64; 4], seat: usize) -> i64 {
    let places = seat_places(partners, totals);
    (0..4)
        .filter(|&o| o != seat && !(partners && o % 2 == seat % 2))
        .map(|o| match places[seat].cmp(&places[o]) {
            std::cmp::Ordering::Less => 2,
            std::cmp::Ordering::Equal => 1,
            std::cmp::Ordering::Greater => 0,
        })
        .sum()
}

/// The seats' ratings after a match, from their ratings before it and its final totals, by
/// `weng_lin_multi_team` (one team per seat, or the two partner teams), places by totals with
/// ties shared. A bot seat's entry comes back as it went in (its rating is fixed).
pub fn rate(partners: bool, totals: &[i64; 4], before: &[Skill; 4], bots: [bool; 4]) -> [Skill; 4] {
    let sides = sides(partners);
    let places = seat_places(partners, totals);
    let teams: Vec<Vec<WengLinRating>> = sides
        .iter()
        .map(|side| side.iter().map(|&s| before[s].crate_rating()).collect())
        .collect();
    let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(&sides)
        .map(|(team, side)| (&team[..], MultiTeamOutcome::new(places[side[0]])))
        .collect();
    let rated = weng_lin_multi_team(&ranked, &config());
    let mut after = *before;
    for (side, team) in sides.iter().zip(rated) {
        for (&s, r) in side.iter().zip(team) {
            if !bots[s] {
                after[s] = Skill {
                    rating: r.rating,
                    uncertainty: r.uncertainty,
                };
            }
        }
    }
    after
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_share_ties_and_skip() {
        assert_eq!(places(&[30, 10, 10, 50]), vec![3, 1, 1, 4]);
        assert_eq!(seat_places(false, &[-101, 20, 20, 300]), [1, 2, 2, 4]);
        // Partners: team 0+2 totals 50, team 1+3 totals 40.
        assert_eq!(seat_places(true, &[10, 20, 40, 20]), [2, 1, 2, 1]);
        assert_eq!(seat_places(true, &[10, 20, 20, 10]), [1, 1, 1, 1]);
    }

    #[test]
    fn the_period_score_counts_opponents_beaten_and_halves_for_ties() {
        let totals = [-101, 20, 20, 300];
        let scores: Vec<i64> = (0..4).map(|s| score2(false, &totals, s)).collect();
        assert_eq!(scores, vec![6, 3, 3, 0]);
        let partners = [10, 20, 40, 20];
        let scores: Vec<i64> = (0..4).map(|s| score2(true, &partners, s)).collect();
        assert_eq!(scores, vec![0, 4, 0, 4]);
        assert_eq!(
            score2(true, &[10, 20, 20, 10], 0),
            2,
            "a drawn partners match"
        );
    }

    #[test]
    fn the_rule_leaves_out_private_rooms_and_tables_of_bots() {
        let person = |i: u8| Some(Seat::Person(format!("players/{i}")));
        let bot = Some(Seat::Bot(Level::Strong));
        assert!(is_rated(
            false,
            &[person(0), person(1), person(2), person(3)]
        ));
        assert!(is_rated(
            false,
            &[person(0), bot.clone(), person(2), person(3)]
        ));
        assert!(!is_rated(
            true,
            &[person(0), person(1), person(2), person(3)]
        ));
        assert!(!is_rated(
            false,
            &[person(0), bot.clone(), bot.clone(), person(3)]
        ));
        assert!(!is_rated(false, &[person(0), None, person(2), person(3)]));
        assert!(!is_rated(
            false,
            &[person(0), person(0), person(2), person(3)]
        ));
        assert_eq!(Level::of_occupant("bots/easy-2"), Some(Level::Easy));
        assert_eq!(Level::of_occupant("bots/strong-0"), Some(Level::Strong));
        assert_eq!(Level::of_occupant("players/x"), None);
    }

    #[test]
    fn a_bot_seat_keeps_its_fixed_rating_and_the_winner_goes_up() {
        let before = [
            Skill::NEW,
            Skill::bot(Level::Strong.rating()),
            Skill::NEW,
            Skill::NEW,
        ];
        let after = rate(
            false,
            &[-101, 50, 80, 120],
            &before,
            [false, true, false, false],
        );
        assert_eq!(after[1], before[1]);
        assert!(after[0].rating > INITIAL && after[3].rating < INITIAL);
        assert!(after.iter().all(|s| s.uncertainty <= INITIAL_UNCERTAINTY));
        // The scale does not change the crate's numbers: its default scale, times 60 (and the
        // offset of 1500 - 60 x 25, which Weng-Lin never sees: only differences count).
        let default: Vec<Vec<WengLinRating>> = weng_lin_multi_team(
            &[
                (&[WengLinRating::new()][..], MultiTeamOutcome::new(1)),
                (&[WengLinRating::new()][..], MultiTeamOutcome::new(2)),
                (&[WengLinRating::new()][..], MultiTeamOutcome::new(2)),
                (&[WengLinRating::new()][..], MultiTeamOutcome::new(4)),
            ],
            &WengLinConfig::new(),
        );
        let ours = rate(false, &[-101, 20, 20, 300], &[Skill::NEW; 4], [false; 4]);
        for (seat, team) in default.iter().enumerate() {
            let scaled = (team[0].rating - 25.0) * 60.0 + INITIAL;
            assert!(
                (ours[seat].rating - scaled).abs() < 1e-6,
                "{seat}: {ours:?} {default:?}"
            );
            assert!((ours[seat].uncertainty - team[0].uncertainty * 60.0).abs() < 1e-6);
        }
        let partners = rate(true, &[0, 10, 0, 10], &[Skill::NEW; 4], [false; 4]);
        assert!(partners[0].rating > INITIAL && partners[1].rating < INITIAL);
        assert_eq!(partners[0], partners[2]);
    }

    #[test]
    fn a_new_players_rating_stops_being_provisional_after_some_matches() {
        // Four new players, the same one always first: how many matches until the uncertainty
        // is below the default threshold (250).
        let mut skills = [Skill::NEW; 4];
        let mut matches = 0;
        while skills[2].provisional(250.0) {
            skills = rate(false, &[0, 10, 20, 30], &skills, [false; 4]);
            matches += 1;
        }
        assert!((5..=20).contains(&matches), "{matches}");
    }
}
