//! Rule sets: the table options of RULES.md, the presets that follow each seed document, and
//! the preset-only options some seeds add.

use serde::{Deserialize, Serialize};

/// How opening thresholds behave during a hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Threshold {
    /// 101 points and 5 pairs all hand.
    Standard,
    /// Each accepted opening raises the next bar to at least one more than it.
    Raising,
}

/// How a discard that a table meld could take is charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayableDiscard {
    /// Charged the moment the tile is discarded.
    Auto,
    /// Charged only if the next player calls it before taking a tile.
    Called,
}

/// How the match ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchLength {
    /// After this many hands.
    Hands(u32),
    /// When a seat's (or, with partners, a team's) total reaches this many points.
    PenaltyLimit(i64),
}

/// How a real okey left in an opened rack is scored at the end of a hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HeldOkey {
    /// 101 per okey on top of the rack, never multiplied (RULES.md).
    Surcharge101,
    /// Counts the okey's number like any other tile (seed 003).
    OkeyNumber,
}

/// How players who never opened are scored (seed 004 fixes 404/808 where RULES.md multiplies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnopenedScoring {
    /// 202 × the finish multiplier (RULES.md).
    Multiplied,
    /// Seed 004: 202; 404 when the finisher discards the okey or finished with pairs; 808 for both;
    /// after a direct finish every opponent gets 404, or 808 if the final discard is the okey.
    Seed004,
}

/// Which factors make up the finish multiplier m = 2^(d + o + p).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Multipliers {
    /// d: the finisher had not opened before this turn.
    pub direct_finish: bool,
    /// o: the final discard is an okey.
    pub okey_finish: bool,
    /// p: the finisher opened with pairs.
    pub pairs_finish: bool,
}

/// Every option a table runs with. A preset fills them all; a table may override any.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSet {
    /// The preset this rule set started from.
    pub preset: Preset,
    pub threshold: Threshold,
    pub partners: bool,
    pub run_wraps_12_13_1: bool,
    pub in_play_penalties: bool,
    pub playable_discard: PlayableDiscard,
    pub act_after_opening_same_turn: bool,
    pub pairs_take_discard: bool,
    /// With `raising`, whether an accepted pair opening raises the pair threshold (seed 001: no).
    pub pairs_raise_threshold: bool,
    /// A pair opener may add at most this many tiles to table melds per turn (seed 001: 2).
    pub pair_opener_adds_per_turn: Option<u8>,
    pub held_okey: HeldOkey,
    pub unopened_scoring: UnopenedScoring,
    pub multipliers: Multipliers,
    /// Match totals never go below zero (seed 001).
    pub floor_totals_at_zero: bool,
    pub match_length: MatchLength,
    /// Seconds for each move.
    pub turn_seconds: u32,
    /// Seconds added once to a human's first accepted opening attempt, never past `turn_seconds_max`.
    pub opening_bonus_seconds: u32,
    pub turn_seconds_max: u32,
    /// Expiries in a row after which a bot takes the seat.
    pub expiries_before_bot: u8,
}

/// The named starting points, one per seed document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// Seed 000, the reading RULES.md fixes: the default.
    Classic,
    /// Seed 001 (a "how to play" page): 12-13-1 runs, raising where pairs do not raise, pair
    /// openers add at most 2 tiles a turn, totals floored at zero, playable discards called.
    Yudum,
    /// Seed 002 (a browser game with computer opponents): only finishing with an okey multiplies,
    /// five hands.
    Practice,
    /// Seed 003 (a single-player app): no table actions in the opening turn, held okeys count
    /// the okey's number, matches of 3, 5 or 9 rounds.
    Solo,
    /// Seed 004 (a penalty reference): never-opened players get 404/808 in the cases it lists.
    Penalties,
}

impl Preset {
    pub const ALL: [Preset; 5] = [
        Preset::Classic,
        Preset::Yudum,
        Preset::Practice,
        Preset::Solo,
        Preset::Penalties,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Classic => "classic",
            Preset::Yudum => "yudum",
            Preset::Practice => "practice",
            Preset::Solo => "solo",
            Preset::Penalties => "penalties",
        }
    }

    /// Accepts the preset's name or the seed number it follows (`"001"`).
    pub fn parse(s: &str) -> Option<Preset> {
        Some(match s {
            "classic" | "000" => Preset::Classic,
            "yudum" | "001" => Preset::Yudum,
            "practice" | "002" => Preset::Practice,
            "solo" | "003" => Preset::Solo,
            "penalties" | "004" => Preset::Penalties,
            _ => return None,
        })
    }

    /// The seed document this preset follows.
    pub fn seed(self) -> &'static str {
        match self {
            Preset::Classic => "000",
            Preset::Yudum => "001",
            Preset::Practice => "002",
            Preset::Solo => "003",
            Preset::Penalties => "004",
        }
    }

    pub fn rules(self) -> RuleSet {
        let classic = RuleSet {
            preset: Preset::Classic,
            threshold: Threshold::Standard,
            partners: false,
            run_wraps_12_13_1: false,
            in_play_penalties: true,
            playable_discard: PlayableDiscard::Auto,
            act_after_opening_same_turn: true,
            pairs_take_discard: true,
            pairs_raise_threshold: true,
            pair_opener_adds_per_turn: None,
            held_okey: HeldOkey::Surcharge101,
            unopened_scoring: UnopenedScoring::Multiplied,
            multipliers: Multipliers {
                direct_finish: true,
                okey_finish: true,
                pairs_finish: true,
            },
            floor_totals_at_zero: false,
            match_length: MatchLength::Hands(5),
            turn_seconds: 60,
            opening_bonus_seconds: 15,
            turn_seconds_max: 60,
            expiries_before_bot: 3,
        };
        match self {
            Preset::Classic => classic,
            Preset::Yudum => RuleSet {
                preset: self,
                run_wraps_12_13_1: true,
                threshold: Threshold::Raising,
                pairs_raise_threshold: false,
                pair_opener_adds_per_turn: Some(2),
                playable_discard: PlayableDiscard::Called,
                floor_totals_at_zero: true,
                match_length: MatchLength::PenaltyLimit(1001),
                ..classic
            },
            Preset::Practice => RuleSet {
                preset: self,
                multipliers: Multipliers {
                    direct_finish: false,
                    okey_finish: true,
                    pairs_finish: false,
                },
                match_length: MatchLength::Hands(5),
                ..classic
            },
            Preset::Solo => RuleSet {
                preset: self,
                act_after_opening_same_turn: false,
                held_okey: HeldOkey::OkeyNumber,
                match_length: MatchLength::Hands(5),
                ..classic
            },
            Preset::Penalties => RuleSet {
                preset: self,
                unopened_scoring: UnopenedScoring::Seed004,
                ..classic
            },
        }
    }
}

impl Default for RuleSet {
    fn default() -> RuleSet {
        Preset::Classic.rules()
    }
}

impl RuleSet {
    /// Checks option combinations a preset or a table creator could get wrong.
    pub fn validate(&self) -> Result<(), String> {
        match self.match_length {
            MatchLength::Hands(0) => {
                return Err("match_length: a match needs at least one hand".into());
            }
            MatchLength::PenaltyLimit(l) if l <= 0 => {
                return Err("match_length: a penalty limit must be above zero".into());
            }
            _ => {}
        }
        if self.turn_seconds == 0 {
            return Err("turn_seconds: a move needs at least one second".into());
        }
        if self.turn_seconds_max < self.turn_seconds {
            return Err("turn_seconds_max: must be at least turn_seconds".into());
        }
        if self.pair_opener_adds_per_turn == Some(0) {
            return Err("pair_opener_adds_per_turn: use a limit of at least 1, or none".into());
        }
        Ok(())
    }
}
