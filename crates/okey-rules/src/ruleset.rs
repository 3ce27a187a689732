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

/// How a real okey left in an opened rack is scored at the end of a hand. Every preset uses
/// RULES.md's `Surcharge101`; `OkeyNumber` stays so that tables stored with it replay exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HeldOkey {
    /// 101 per okey on top of the rack, never multiplied (RULES.md).
    Surcharge101,
    /// Counts the okey's number like any other tile (seed 003's wording, which RULES.md overrides).
    OkeyNumber,
}

/// How players who never opened are scored. Every preset uses RULES.md's `Multiplied`; `Seed004`
/// stays so that tables stored with it replay exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnopenedScoring {
    /// 202 × the finish multiplier (RULES.md).
    Multiplied,
    /// Seed 004 read literally: 202; 404 when the finisher discards the okey or finished with
    /// pairs; 808 for both; after a direct finish every opponent gets 404, or 808 if the final
    /// discard is the okey; opened racks are not multiplied. RULES.md overrides it.
    Seed004,
}

/// Which factors make up the finish multiplier m = 2^(d + o + p). Every preset turns all three
/// on (RULES.md); a stored table may have some off and replays with them off.
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
    /// With `raising`, whether an accepted pair opening raises the pair threshold. On in every
    /// preset (RULES.md); off only in stored tables, which replay with it off.
    pub pairs_raise_threshold: bool,
    /// A pair opener may add at most this many tiles to table melds per turn (seed 001: 2).
    pub pair_opener_adds_per_turn: Option<u8>,
    /// No preset changes this, `unopened_scoring` or `multipliers` from RULES.md's: they stay so
    /// that tables stored with other values replay exactly.
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
    /// The operator marked this rule set custom: the preset is only its starting point, so the
    /// limits its seed sets on the options (the match lengths it offers) do not apply.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub custom: bool,
}

/// Why a table cannot run a rule set: the field at fault and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct InvalidRuleSet {
    /// The `RuleSet` field, e.g. `match_length`.
    pub field: &'static str,
    pub message: String,
}

impl InvalidRuleSet {
    fn new(field: &'static str, message: impl Into<String>) -> InvalidRuleSet {
        InvalidRuleSet {
            field,
            message: message.into(),
        }
    }
}

impl From<InvalidRuleSet> for String {
    fn from(e: InvalidRuleSet) -> String {
        e.to_string()
    }
}

/// The named starting points, one per seed document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// Seed 000, the reading RULES.md fixes: the default.
    Classic,
    /// Seed 001 (a "how to play" page): 12-13-1 runs, pair openers add at most 2 tiles a turn,
    /// totals floored at zero, playable discards called, a penalty limit of 1001. Thresholds are
    /// standard; raising is the variant a table may pick, and then it is RULES.md's (pairs too).
    Yudum,
    /// Seed 002 (a browser game with computer opponents): five hands. Scoring is RULES.md's
    /// (the seed names only the okey finish's doubling and is silent on the other factors).
    Practice,
    /// Seed 003 (a single-player app): no table actions in the opening turn, matches of 3, 5 or
    /// 9 rounds. Scoring is RULES.md's: a held okey costs 101 on top, not the okey's number.
    Solo,
    /// Seed 004 (a penalty reference): changes no option; its in-play penalties are RULES.md's,
    /// and so is its scoring, also after a direct finish.
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

    /// Accepts the preset's name, the seed number it follows (`"001"`, also written `"seed001"`,
    /// `"seed_001"`, `"seed-001"` or `"seed 001"`) or the name of that seed's document
    /// (`"001_6347d42fbfe20743"`, with or without `seeds/` before it and `.txt` after), in any
    /// case.
    pub fn parse(s: &str) -> Option<Preset> {
        let s = s.trim().to_ascii_lowercase();
        let s = s.strip_suffix(".txt").unwrap_or(&s);
        let s = s.strip_prefix("seeds/").unwrap_or(s);
        let seed = s
            .strip_prefix("seed")
            .map(|rest| rest.trim_start_matches([' ', '_', '-']));
        Preset::ALL.into_iter().find(|p| {
            s == p.name()
                || s == p.seed()
                || s == p.document()
                || seed.is_some_and(|n| n == p.seed() || n == p.document())
        })
    }

    /// The name of the seed document this preset follows (`seeds/{document}.txt`).
    pub fn document(self) -> &'static str {
        match self {
            Preset::Classic => "000_d3f6002676598b8b",
            Preset::Yudum => "001_6347d42fbfe20743",
            Preset::Practice => "002_87ded1d8a11579bd",
            Preset::Solo => "003_91fa939f2cfac519",
            Preset::Penalties => "004_52db5702efabc426",
        }
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

    /// The match lengths this preset's seed offers, or `None` when the seed names no choice
    /// (any length is then allowed). Seed 001: "Penalty limit (501 · 1001 · 1501 · 2001)" and
    /// "Number of hands (5 · 7 · 9 · 11)"; seed 002: "Five hands make a game"; seed 003: "Pick 3,
    /// 5 or 9 rounds".
    pub fn match_lengths(self) -> Option<&'static [MatchLength]> {
        use MatchLength::{Hands, PenaltyLimit};
        match self {
            Preset::Classic | Preset::Penalties => None,
            Preset::Yudum => Some(&[
                PenaltyLimit(501),
                PenaltyLimit(1001),
                PenaltyLimit(1501),
                PenaltyLimit(2001),
                Hands(5),
                Hands(7),
                Hands(9),
                Hands(11),
            ]),
            Preset::Practice => Some(&[Hands(5)]),
            Preset::Solo => Some(&[Hands(3), Hands(5), Hands(9)]),
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
            custom: false,
        };
        match self {
            Preset::Classic => classic,
            // Seed 001 leaves four things to the table creator ("Table options") and names no
            // default. The preset takes the first it names for the variant (the standard bar; "At
            // a raising table …" is the other) and for catching a playable discard (the
            // opponent's call); for "May a pairs player take discards: no … or yes" it keeps
            // RULES.md's default (yes), which this seed offers too; and for the match's end the
            // first kind it names, a penalty limit, at 1001 (the seed names four limits and no
            // default; RULES.md's default, 5 hands, is a choice a table may make instead).
            Preset::Yudum => RuleSet {
                preset: self,
                run_wraps_12_13_1: true,
                pair_opener_adds_per_turn: Some(2),
                playable_discard: PlayableDiscard::Called,
                floor_totals_at_zero: true,
                match_length: MatchLength::PenaltyLimit(1001),
                ..classic
            },
            // Scoring is RULES.md's in every preset (m = 2^(d+o+p), 101 per held okey): where a
            // seed's scoring says less it is silent, and where it says otherwise (seed 003's held
            // okey at its number, seed 004's flat 404 on a direct finish) RULES.md stands.
            Preset::Practice => RuleSet {
                preset: self,
                match_length: MatchLength::Hands(5),
                ..classic
            },
            Preset::Solo => RuleSet {
                preset: self,
                act_after_opening_same_turn: false,
                match_length: MatchLength::Hands(5),
                ..classic
            },
            Preset::Penalties => RuleSet {
                preset: self,
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

impl std::fmt::Display for MatchLength {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatchLength::Hands(1) => write!(f, "1 hand"),
            MatchLength::Hands(n) => write!(f, "{n} hands"),
            MatchLength::PenaltyLimit(l) => write!(f, "a penalty limit of {l}"),
        }
    }
}

/// The most hands a match may be set to.
pub const MAX_HANDS: u32 = 1_000;
/// The highest penalty limit a match may be set to.
pub const MAX_PENALTY_LIMIT: i64 = 100_000;
/// The most seconds a move may be given (an hour).
pub const MAX_TURN_SECONDS: u32 = 3_600;

impl RuleSet {
    /// Checks option combinations a preset or a table creator could get wrong, and that a
    /// preset's match length is one its seed offers unless the rule set is marked `custom`.
    pub fn validate(&self) -> Result<(), InvalidRuleSet> {
        match self.match_length {
            MatchLength::Hands(0) => {
                return Err(InvalidRuleSet::new(
                    "match_length",
                    "a match needs at least one hand",
                ));
            }
            MatchLength::Hands(n) if n > MAX_HANDS => {
                return Err(InvalidRuleSet::new(
                    "match_length",
                    format!("a match has at most {MAX_HANDS} hands"),
                ));
            }
            MatchLength::PenaltyLimit(l) if l <= 0 => {
                return Err(InvalidRuleSet::new(
                    "match_length",
                    "a penalty limit must be above zero",
                ));
            }
            MatchLength::PenaltyLimit(l) if l > MAX_PENALTY_LIMIT => {
                return Err(InvalidRuleSet::new(
                    "match_length",
                    format!("a penalty limit is at most {MAX_PENALTY_LIMIT}"),
                ));
            }
            _ => {}
        }
        if !self.custom
            && let Some(allowed) = self.preset.match_lengths()
            && !allowed.contains(&self.match_length)
        {
            let offered: Vec<String> = allowed.iter().map(ToString::to_string).collect();
            return Err(InvalidRuleSet::new(
                "match_length",
                format!(
                    "preset `{}` (seed {}) plays {}, not {}: choose one of those, or the `classic` or \
                     `penalties` preset, which play any length",
                    self.preset.name(),
                    self.preset.seed(),
                    offered.join(", "),
                    self.match_length
                ),
            ));
        }
        if self.turn_seconds == 0 {
            return Err(InvalidRuleSet::new(
                "turn_seconds",
                "a move needs at least one second",
            ));
        }
        if self.turn_seconds > MAX_TURN_SECONDS {
            return Err(InvalidRuleSet::new(
                "turn_seconds",
                format!("a move has at most {MAX_TURN_SECONDS} seconds"),
            ));
        }
        if self.turn_seconds_max < self.turn_seconds {
            return Err(InvalidRuleSet::new(
                "turn_seconds_max",
                "must be at least turn_seconds",
            ));
        }
        if self.pair_opener_adds_per_turn == Some(0) {
            return Err(InvalidRuleSet::new(
                "pair_opener_adds_per_turn",
                "use a limit of at least 1, or none",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_is_named_by_its_name_its_seed_or_its_seed_document() {
        for (text, preset) in [
            ("classic", Preset::Classic),
            ("000", Preset::Classic),
            ("Yudum", Preset::Yudum),
            ("001_6347d42fbfe20743", Preset::Yudum),
            ("002_87ded1d8a11579bd.txt", Preset::Practice),
            (" SOLO ", Preset::Solo),
            ("004", Preset::Penalties),
            ("seed 000", Preset::Classic),
            ("Seed001", Preset::Yudum),
            ("seed_002", Preset::Practice),
            ("seed-003", Preset::Solo),
            ("seeds/004_52db5702efabc426.txt", Preset::Penalties),
        ] {
            assert_eq!(Preset::parse(text), Some(preset), "{text}");
        }
        for text in [
            "",
            "005",
            "001_0000000000000000",
            "classic.json",
            "seed",
            "seed 005",
            "seedclassic",
        ] {
            assert_eq!(Preset::parse(text), None, "{text}");
        }
        // Each document exists under the shared seeds' names (checked against the seed number).
        for p in Preset::ALL {
            assert!(p.document().starts_with(&format!("{}_", p.seed())));
        }
    }

    #[test]
    fn every_preset_is_valid_as_it_comes() {
        for p in Preset::ALL {
            assert_eq!(p.rules().validate(), Ok(()), "{}", p.name());
        }
    }

    #[test]
    fn a_preset_takes_only_the_match_lengths_its_seed_offers() {
        let with = |p: Preset, m: MatchLength| RuleSet {
            match_length: m,
            ..p.rules()
        };
        for l in [501, 1001, 1501, 2001] {
            assert_eq!(
                with(Preset::Yudum, MatchLength::PenaltyLimit(l)).validate(),
                Ok(())
            );
        }
        for n in [5, 7, 9, 11] {
            assert_eq!(
                with(Preset::Yudum, MatchLength::Hands(n)).validate(),
                Ok(())
            );
        }
        for n in [3, 5, 9] {
            assert_eq!(with(Preset::Solo, MatchLength::Hands(n)).validate(), Ok(()));
        }
        let refused = [
            with(Preset::Yudum, MatchLength::PenaltyLimit(1000)),
            with(Preset::Yudum, MatchLength::Hands(3)),
            with(Preset::Solo, MatchLength::Hands(7)),
            with(Preset::Solo, MatchLength::PenaltyLimit(1001)),
            with(Preset::Practice, MatchLength::Hands(3)),
        ];
        for r in refused {
            let e = r.validate().expect_err("a length the seed does not offer");
            assert_eq!(e.field, "match_length", "{e}");
            assert!(e.message.contains(r.preset.name()), "{e}");
            // Marked custom, the same rule set is accepted.
            assert_eq!(RuleSet { custom: true, ..r }.validate(), Ok(()));
        }
        // Seeds 000 and 004 name no match length: any is allowed.
        assert_eq!(
            with(Preset::Classic, MatchLength::Hands(3)).validate(),
            Ok(())
        );
        assert_eq!(
            with(Preset::Penalties, MatchLength::PenaltyLimit(300)).validate(),
            Ok(())
        );
        // Custom does not excuse an impossible length.
        let zero = RuleSet {
            custom: true,
            ..with(Preset::Solo, MatchLength::Hands(0))
        };
        assert_eq!(zero.validate().unwrap_err().field, "match_length");
    }

    #[test]
    fn lengths_and_turns_have_upper_bounds() {
        let classic = Preset::Classic.rules();
        let ok = [
            RuleSet {
                match_length: MatchLength::Hands(MAX_HANDS),
                ..classic
            },
            RuleSet {
                match_length: MatchLength::PenaltyLimit(MAX_PENALTY_LIMIT),
                ..classic
            },
            RuleSet {
                turn_seconds: MAX_TURN_SECONDS,
                turn_seconds_max: MAX_TURN_SECONDS,
                ..classic
            },
        ];
        for r in ok {
            assert_eq!(r.validate(), Ok(()));
        }
        let too_long = [
            (
                RuleSet {
                    match_length: MatchLength::Hands(MAX_HANDS + 1),
                    ..classic
                },
                "match_length",
            ),
            (
                RuleSet {
                    match_length: MatchLength::PenaltyLimit(MAX_PENALTY_LIMIT + 1),
                    ..classic
                },
                "match_length",
            ),
            (
                RuleSet {
                    turn_seconds: MAX_TURN_SECONDS + 1,
                    turn_seconds_max: MAX_TURN_SECONDS + 1,
                    ..classic
                },
                "turn_seconds",
            ),
        ];
        for (r, field) in too_long {
            assert_eq!(r.validate().unwrap_err().field, field);
        }
    }

    #[test]
    fn every_preset_scores_and_raises_as_rules_md_says() {
        let classic = Preset::Classic.rules();
        for p in Preset::ALL {
            let r = p.rules();
            assert_eq!(r.held_okey, HeldOkey::Surcharge101, "{}", p.name());
            assert_eq!(
                r.unopened_scoring,
                UnopenedScoring::Multiplied,
                "{}",
                p.name()
            );
            assert_eq!(r.multipliers, classic.multipliers, "{}", p.name());
            assert!(r.pairs_raise_threshold, "{}", p.name());
        }
        assert_eq!(
            classic.multipliers,
            Multipliers {
                direct_finish: true,
                okey_finish: true,
                pairs_finish: true,
            }
        );
        // Seed 001 leaves the variant to the table; the preset is standard until one picks raising.
        assert_eq!(Preset::Yudum.rules().threshold, Threshold::Standard);
    }

    #[test]
    fn a_stored_rule_set_keeps_the_options_no_preset_sets() {
        // Tables created before the presets followed RULES.md hold these values and replay them.
        let stored = RuleSet {
            threshold: Threshold::Raising,
            pairs_raise_threshold: false,
            held_okey: HeldOkey::OkeyNumber,
            unopened_scoring: UnopenedScoring::Seed004,
            multipliers: Multipliers {
                direct_finish: false,
                okey_finish: true,
                pairs_finish: false,
            },
            ..Preset::Solo.rules()
        };
        let back: RuleSet = serde_json::from_value(serde_json::to_value(&stored).unwrap()).unwrap();
        assert_eq!(back, stored);
        assert_eq!(stored.validate(), Ok(()));
    }

    #[test]
    fn custom_is_left_out_of_the_stored_form_when_off() {
        let json = serde_json::to_value(Preset::Yudum.rules()).unwrap();
        assert!(json.get("custom").is_none(), "{json}");
        let back: RuleSet = serde_json::from_value(json).unwrap();
        assert!(!back.custom);
        let custom = RuleSet {
            custom: true,
            ..Preset::Solo.rules()
        };
        let back: RuleSet = serde_json::from_value(serde_json::to_value(&custom).unwrap()).unwrap();
        assert_eq!(back, custom);
    }
}
