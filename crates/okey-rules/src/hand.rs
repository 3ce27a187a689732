//! One hand of 101 Okey as an event-sourced state machine: `decide` checks a command against the
//! state and yields events or a typed rule error; `evolve` folds one event into the state.

use serde::{Deserialize, Serialize};

use crate::deal::{Deal, DealError};
use crate::meld::{self, MeldError, MeldTile, Placed, TableMeld};
use crate::ruleset::{HeldOkey, PlayableDiscard, RuleSet, Threshold, UnopenedScoring};
use crate::tile::{Okey, Tile, Tiles};
use crate::{Seat, next_seat, partner, prev_seat};

/// Points of most penalties, and of the finisher's reward.
pub const PENALTY: i32 = 101;
/// The meld threshold every hand starts with.
pub const MELD_THRESHOLD: u32 = 101;
/// The pair threshold every hand starts with.
pub const PAIR_THRESHOLD: u8 = 5;

/// Everything a seat can ask the engine to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "act")]
pub enum Command {
    /// Take the top tile of the centre pile.
    Draw,
    /// Take the previous player's latest discard.
    TakeDiscard,
    /// Give the side discard back (then draw).
    ReturnDiscard,
    /// Open with runs/sets, or with pairs.
    Open { melds: Vec<Vec<MeldTile>> },
    /// Lay new melds after opening.
    Lay { melds: Vec<Vec<MeldTile>> },
    /// Add tiles to a table meld.
    Add { meld: usize, tiles: Vec<MeldTile> },
    /// Supply real tiles and take an okey back.
    Retrieve { meld: usize, tiles: Vec<Tile> },
    /// Discard, ending the turn.
    Discard { tile: Tile },
    /// Call the previous discard playable (`called` mode, before taking a tile).
    CallPlayable,
    /// The seat's move deadline passed: the server plays for it.
    Timeout,
}

/// How a player opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenKind {
    Melds,
    Pairs,
}

/// Why a penalty was written. The codes are stable: ledgers and clients use them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PenaltyReason {
    WrongOpening,
    DiscardOkey,
    DiscardPlayable,
    SideDiscardOpening,
    OkeyRetrieved,
    TableRollback,
}

impl PenaltyReason {
    pub fn code(self) -> &'static str {
        match self {
            PenaltyReason::WrongOpening => "wrong_opening",
            PenaltyReason::DiscardOkey => "discard_okey",
            PenaltyReason::DiscardPlayable => "discard_playable",
            PenaltyReason::SideDiscardOpening => "side_discard_opening",
            PenaltyReason::OkeyRetrieved => "okey_retrieved",
            PenaltyReason::TableRollback => "table_rollback",
        }
    }
}

/// An in-play penalty. `id` numbers the penalties of a hand from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Penalty {
    pub id: u32,
    pub seat: Seat,
    pub points: i32,
    pub reason: PenaltyReason,
    /// Undone by a table rollback or a cancelled hand.
    pub voided: bool,
}

/// How a hand ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Finished,
    PileEmpty,
    Cancelled,
}

/// The end of a hand with its end-of-hand scores (in-play penalties not included).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandEnd {
    pub outcome: Outcome,
    pub winner: Option<Seat>,
    /// The finish multiplier m (1 with no winner).
    pub multiplier: i32,
    pub scores: [i32; 4],
}

/// Why a seat's end-of-hand score is what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "basis")]
pub enum ScoreBasis {
    /// Went out: −101 × m.
    Finisher {
        multiplier: i32,
        direct: bool,
        okey: bool,
        pairs: bool,
    },
    /// The finisher's partner scores nothing.
    FinishersPartner,
    /// Never opened: 202 × m, no okey surcharge.
    NeverOpened { multiplier: i32 },
    /// Opened: factor (2 for pairs) × rack sum × m, + 101 per okey held (never multiplied).
    Opened {
        kind: OpenKind,
        rack_sum: i32,
        factor: i32,
        multiplier: i32,
        okeys_held: i32,
        /// Okeys held that count their number inside `rack_sum` (held-okey rule `OkeyNumber`)
        /// instead of 101 on top.
        #[serde(default, skip_serializing_if = "is_zero")]
        okeys_at_number: i32,
    },
    /// A preset's fixed amount.
    Fixed {
        points: i32,
        #[serde(skip)]
        why: &'static str,
    },
    /// The hand was cancelled: nobody scores.
    Cancelled,
}

impl ScoreBasis {
    pub fn points(&self) -> i32 {
        match *self {
            ScoreBasis::Finisher { multiplier, .. } => -PENALTY * multiplier,
            ScoreBasis::FinishersPartner | ScoreBasis::Cancelled => 0,
            ScoreBasis::NeverOpened { multiplier } => 2 * PENALTY * multiplier,
            ScoreBasis::Opened {
                rack_sum,
                factor,
                multiplier,
                okeys_held,
                ..
            } => factor * rack_sum * multiplier + okeys_held * PENALTY,
            ScoreBasis::Fixed { points, .. } => points,
        }
    }
}

/// Why another seat's score is multiplied: the finisher's line says by what.
fn why_m(multiplier: i32) -> &'static str {
    if multiplier > 1 {
        " (the finish's multiplier)"
    } else {
        ""
    }
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

impl std::fmt::Display for ScoreBasis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.points();
        match *self {
            ScoreBasis::Finisher {
                multiplier,
                direct,
                okey,
                pairs,
            } => {
                let mut why: Vec<&str> = Vec::new();
                if direct {
                    why.push("direct finish");
                }
                if okey {
                    why.push("final discard an okey");
                }
                if pairs {
                    why.push("opened with pairs");
                }
                // Each fact doubles m only where the table's rules count it (a preset may not):
                // say so when they did not all count.
                let counted = 1i32 << why.len();
                let why = if why.is_empty() {
                    String::new()
                } else if counted == multiplier {
                    format!(" ({})", why.join(", "))
                } else if multiplier == 1 {
                    format!(
                        " ({}: not doubled under this table's rules)",
                        why.join(", ")
                    )
                } else {
                    format!(
                        " ({}: only some doubled under this table's rules)",
                        why.join(", ")
                    )
                };
                write!(f, "went out: -101 x {multiplier}{why} = {p}")
            }
            ScoreBasis::FinishersPartner => write!(f, "partner of the finisher: 0"),
            ScoreBasis::NeverOpened { multiplier } => {
                write!(
                    f,
                    "never opened: 202 x {multiplier}{} = {p}",
                    why_m(multiplier)
                )
            }
            ScoreBasis::Opened {
                kind,
                rack_sum,
                factor,
                multiplier,
                okeys_held,
                okeys_at_number,
            } => {
                let with = if kind == OpenKind::Pairs {
                    "pairs"
                } else {
                    "melds"
                };
                write!(f, "opened with {with}: ")?;
                if factor != 1 {
                    write!(f, "{factor} x ")?;
                }
                write!(f, "rack {rack_sum}")?;
                if okeys_at_number > 0 {
                    write!(
                        f,
                        " ({okeys_at_number} okey(s) held counted at the okey's number, as this \
                         table's rules say)"
                    )?;
                }
                write!(f, " x {multiplier}{}", why_m(multiplier))?;
                if okeys_held > 0 {
                    write!(f, " + {okeys_held} okey(s) held x 101")?;
                }
                write!(f, " = {p}")
            }
            ScoreBasis::Fixed { why, .. } => write!(f, "{why}: {p}"),
            ScoreBasis::Cancelled => write!(f, "hand cancelled: 0"),
        }
    }
}

/// What a seat did to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opening {
    pub kind: OpenKind,
    /// Meld value, or number of pairs.
    pub amount: u32,
    /// The turn number in which the seat opened.
    pub turn: u32,
}

/// Everything that happens in a hand, in the past tense. Events carry resolved results (melds as
/// placed, scores) so that folding them needs no rule logic that could drift.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum Event {
    HandStarted {
        rules: RuleSet,
        deal: Deal,
    },
    TileDrawn {
        seat: Seat,
        tile: Tile,
    },
    SideDiscardTaken {
        seat: Seat,
        tile: Tile,
    },
    SideDiscardReturned {
        seat: Seat,
        tile: Tile,
    },
    /// Every table action of the turn undone; the listed penalties voided.
    TableRolledBack {
        seat: Seat,
        voided: Vec<u32>,
    },
    HandOpened {
        seat: Seat,
        kind: OpenKind,
        amount: u32,
        melds: Vec<TableMeld>,
    },
    /// A valid opening below the threshold: tiles stay in the rack, only a discard is left.
    WrongOpening {
        seat: Seat,
        kind: OpenKind,
        amount: u32,
        needed: u32,
        /// The melds shown, as they would have been laid (events stored before they were
        /// recorded have none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        melds: Vec<TableMeld>,
    },
    MeldsLaid {
        seat: Seat,
        melds: Vec<TableMeld>,
    },
    TilesAdded {
        seat: Seat,
        meld: usize,
        tiles: Vec<Tile>,
        result: TableMeld,
    },
    OkeyRetrieved {
        seat: Seat,
        meld: usize,
        supplied: Vec<Tile>,
        okeys: Vec<Placed>,
        result: TableMeld,
    },
    TileDiscarded {
        seat: Seat,
        tile: Tile,
        playable: bool,
    },
    PlayableCalled {
        seat: Seat,
        fits: bool,
    },
    TurnTimedOut {
        seat: Seat,
    },
    PenaltyCharged {
        id: u32,
        seat: Seat,
        points: i32,
        reason: PenaltyReason,
    },
    /// All four opened with pairs: every penalty voided, the hand is dealt again.
    HandCancelled {
        voided: Vec<u32>,
    },
    HandEnded {
        end: HandEnd,
    },
}

impl Event {
    /// A short stable name, for logs, subjects and the event store.
    pub fn name(&self) -> &'static str {
        match self {
            Event::HandStarted { .. } => "HandStarted",
            Event::TileDrawn { .. } => "TileDrawn",
            Event::SideDiscardTaken { .. } => "SideDiscardTaken",
            Event::SideDiscardReturned { .. } => "SideDiscardReturned",
            Event::TableRolledBack { .. } => "TableRolledBack",
            Event::HandOpened { .. } => "HandOpened",
            Event::WrongOpening { .. } => "WrongOpening",
            Event::MeldsLaid { .. } => "MeldsLaid",
            Event::TilesAdded { .. } => "TilesAdded",
            Event::OkeyRetrieved { .. } => "OkeyRetrieved",
            Event::TileDiscarded { .. } => "TileDiscarded",
            Event::PlayableCalled { .. } => "PlayableCalled",
            Event::TurnTimedOut { .. } => "TurnTimedOut",
            Event::PenaltyCharged { .. } => "PenaltyCharged",
            Event::HandCancelled { .. } => "HandCancelled",
            Event::HandEnded { .. } => "HandEnded",
        }
    }

    /// The seat whose move or penalty the event is, if it is one seat's: `None` for the
    /// hand's start, cancellation and end, which are the table's.
    pub fn seat(&self) -> Option<Seat> {
        match self {
            Event::TileDrawn { seat, .. }
            | Event::SideDiscardTaken { seat, .. }
            | Event::SideDiscardReturned { seat, .. }
            | Event::TableRolledBack { seat, .. }
            | Event::HandOpened { seat, .. }
            | Event::WrongOpening { seat, .. }
            | Event::MeldsLaid { seat, .. }
            | Event::TilesAdded { seat, .. }
            | Event::OkeyRetrieved { seat, .. }
            | Event::TileDiscarded { seat, .. }
            | Event::PlayableCalled { seat, .. }
            | Event::TurnTimedOut { seat }
            | Event::PenaltyCharged { seat, .. } => Some(*seat),
            Event::HandStarted { .. } | Event::HandCancelled { .. } | Event::HandEnded { .. } => {
                None
            }
        }
    }
}

/// Which broad class a rejection belongs to, so transports can pick a status code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The command is malformed or names tiles/melds that do not exist (INVALID_ARGUMENT).
    InvalidArgument,
    /// Well-formed, but the rules forbid it now (FAILED_PRECONDITION).
    FailedPrecondition,
}

/// A rejected command. Nothing changed. Each variant names the rule it enforces.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("the hand is over")]
    HandOver,
    #[error("it is seat {turn}'s turn, not seat {seat}'s")]
    NotYourTurn { seat: Seat, turn: Seat },
    #[error("take a tile first: draw from the centre pile or take the side discard")]
    TakeFirst,
    #[error("a tile was already taken this turn")]
    AlreadyTook,
    #[error("the first player's first turn has no draw: act on the table, then discard")]
    FirstTurnNoTake,
    #[error("you gave the side discard back: draw from the centre pile")]
    MustDraw,
    #[error("there is no side discard to take")]
    NoSideDiscard,
    #[error("a discarded okey can never be taken")]
    SideDiscardIsOkey,
    #[error("the side discard {0} is playable on the table, so it cannot be taken")]
    SideDiscardPlayable(Tile),
    #[error("a player who opened with pairs may not take the side discard at this table")]
    PairsMayNotTakeDiscard,
    #[error("you hold no side discard to return")]
    NoSideDiscardHeld,
    #[error(
        "the side discard {0} must be used on the table this turn (or returned) before discarding"
    )]
    SideDiscardUnused(Tile),
    #[error("the side discard {0} taken this turn must be part of the opening")]
    SideDiscardLeftOut(Tile),
    #[error("after a wrong opening the only move left this turn is to discard")]
    OnlyDiscardLeft,
    #[error("{0} is not in your rack")]
    NotInRack(String),
    #[error("you have already opened")]
    AlreadyOpened,
    #[error("open your hand before laying, adding or retrieving")]
    NotOpened,
    #[error("no lay, add or retrieve in the turn you opened at this table")]
    NoActionsInOpeningTurn,
    #[error("an opening is all runs/sets or all pairs, not both")]
    MixedOpening,
    #[error("name at least one meld")]
    NoMelds,
    #[error("{0}")]
    Meld(#[from] MeldError),
    #[error("you opened with melds: lay runs and sets, not pairs")]
    MeldOpenerLaysMelds,
    #[error("you opened with pairs: lay pairs only")]
    PairOpenerLaysPairs,
    #[error("that would empty your rack: keep at least one tile for the closing discard")]
    MustKeepOneTile,
    #[error("there is no table meld {0}")]
    NoSuchMeld(usize),
    #[error("a pair opener may add at most {0} tiles a turn at this table")]
    PairOpenerAddLimit(u8),
    #[error(
        "the opening is below the threshold and in-play penalties are off: {amount} of {needed}"
    )]
    BelowThreshold { amount: u32, needed: u32 },
    #[error("playable discards are charged automatically at this table: there is nothing to call")]
    NotCalledMode,
    #[error("there is no discard to call")]
    NothingToCall,
    #[error("a call must come before taking a tile")]
    CallAfterTaking,
    #[error("the centre pile is empty")]
    PileEmpty,
}

impl RuleError {
    pub fn class(&self) -> ErrorClass {
        match self {
            RuleError::NotInRack(_) | RuleError::NoSuchMeld(_) | RuleError::NoMelds => {
                ErrorClass::InvalidArgument
            }
            RuleError::Meld(MeldError::ReadingOnRealTile(_)) => ErrorClass::InvalidArgument,
            _ => ErrorClass::FailedPrecondition,
        }
    }

    /// A stable machine-readable code naming the rule (for gRPC error details).
    pub fn code(&self) -> &'static str {
        match self {
            RuleError::HandOver => "hand_over",
            RuleError::NotYourTurn { .. } => "not_your_turn",
            RuleError::TakeFirst => "take_first",
            RuleError::AlreadyTook => "already_took",
            RuleError::FirstTurnNoTake => "first_turn_no_take",
            RuleError::MustDraw => "must_draw",
            RuleError::NoSideDiscard => "no_side_discard",
            RuleError::SideDiscardIsOkey => "side_discard_okey",
            RuleError::SideDiscardPlayable(_) => "side_discard_playable",
            RuleError::PairsMayNotTakeDiscard => "pairs_take_discard",
            RuleError::NoSideDiscardHeld => "no_side_discard_held",
            RuleError::SideDiscardUnused(_) => "side_discard_unused",
            RuleError::SideDiscardLeftOut(_) => "side_discard_left_out",
            RuleError::OnlyDiscardLeft => "only_discard_left",
            RuleError::NotInRack(_) => "not_in_rack",
            RuleError::AlreadyOpened => "already_opened",
            RuleError::NotOpened => "not_opened",
            RuleError::NoActionsInOpeningTurn => "act_after_opening_same_turn",
            RuleError::MixedOpening => "mixed_opening",
            RuleError::NoMelds => "no_melds",
            RuleError::Meld(MeldError::TooLong(..)) => "new_meld_max_5",
            RuleError::Meld(MeldError::NoRealTile) => "meld_needs_real_tile",
            RuleError::Meld(MeldError::ReadingOnRealTile(_)) => "reading_on_real_tile",
            RuleError::Meld(MeldError::NotRunOrSet(_)) => "invalid_meld",
            RuleError::Meld(MeldError::NotPair(_)) => "invalid_pair",
            RuleError::Meld(MeldError::CannotAdd(..)) => "invalid_add",
            RuleError::Meld(MeldError::CannotRetrieve(_)) => "invalid_retrieve",
            RuleError::MeldOpenerLaysMelds => "meld_opener_lays_melds",
            RuleError::PairOpenerLaysPairs => "pair_opener_lays_pairs",
            RuleError::MustKeepOneTile => "keep_one_tile",
            RuleError::NoSuchMeld(_) => "no_such_meld",
            RuleError::PairOpenerAddLimit(_) => "pair_opener_add_limit",
            RuleError::BelowThreshold { .. } => "below_threshold",
            RuleError::NotCalledMode => "not_called_mode",
            RuleError::NothingToCall => "nothing_to_call",
            RuleError::CallAfterTaking => "call_after_taking",
            RuleError::PileEmpty => "pile_empty",
        }
    }
}

/// What the player on turn has taken this turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Taken {
    /// Nothing yet.
    Nothing,
    /// The first player's first turn: the 22nd tile stands for the take.
    Dealt,
    /// A tile from the centre pile.
    Pile,
    /// The side discard; `used` once it went to the table.
    SideDiscard { tile: Tile, used: bool },
}

/// What a rollback restores: the table as it was before the turn's first table action.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Snapshot {
    rack: Tiles,
    table: Vec<TableMeld>,
    opened: [Option<Opening>; 4],
    meld_threshold: [u32; 4],
    pair_threshold: [u8; 4],
    penalties_len: usize,
}

/// The turn in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    pub seat: Seat,
    /// Turns counted from 0 across the hand.
    pub number: u32,
    pub taken: Taken,
    /// The side discard was given back: the player must draw from the centre pile.
    pub must_draw: bool,
    pub table_changed: bool,
    /// A wrong opening happened: only (draw and) discard is left.
    pub wrong_opening: bool,
    /// Tiles added by a pair opener this turn (seed 001's limit).
    pub adds: u8,
    snapshot: Option<Box<Snapshot>>,
}

/// A discard that the next player may still call (`called` mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCall {
    pub discarder: Seat,
    pub tile: Tile,
    pub fits: bool,
}

/// The full state of a hand. Built only by folding events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hand {
    pub rules: RuleSet,
    pub okey: Okey,
    pub indicator: Tile,
    pub first: Seat,
    pub racks: [Tiles; 4],
    /// The centre pile, the next tile drawn last.
    pub(crate) pile: Vec<Tile>,
    pub discards: [Vec<Tile>; 4],
    /// The latest discard and who made it, while the next player may still take it.
    pub side: Option<(Seat, Tile)>,
    pub table: Vec<TableMeld>,
    pub opened: [Option<Opening>; 4],
    pub meld_threshold: [u32; 4],
    pub pair_threshold: [u8; 4],
    pub penalties: Vec<Penalty>,
    pub turn: Turn,
    pub pending_call: Option<PendingCall>,
    pub end: Option<HandEnd>,
    /// Events folded so far.
    pub version: u64,
}

impl Hand {
    /// The first event of a hand, checked.
    pub fn start(rules: RuleSet, deal: Deal) -> Result<Event, DealError> {
        deal.validate()?;
        Ok(Event::HandStarted { rules, deal })
    }

    /// The state after the first event.
    pub fn from_start(event: &Event) -> Hand {
        let Event::HandStarted { rules, deal } = event else {
            panic!("a hand's first event is HandStarted, got {}", event.name());
        };
        let mut pile = deal.pile.clone();
        pile.reverse();
        Hand {
            rules: rules.clone(),
            okey: deal.okey(),
            indicator: deal.indicator,
            first: deal.first,
            racks: std::array::from_fn(|s| Tiles::from_slice(&deal.racks[s])),
            pile,
            discards: Default::default(),
            side: None,
            table: Vec::new(),
            opened: [None; 4],
            meld_threshold: [MELD_THRESHOLD; 4],
            pair_threshold: [PAIR_THRESHOLD; 4],
            penalties: Vec::new(),
            turn: Turn {
                seat: deal.first,
                number: 0,
                taken: Taken::Dealt,
                must_draw: false,
                table_changed: false,
                wrong_opening: false,
                adds: 0,
                snapshot: None,
            },
            pending_call: None,
            end: None,
            version: 1,
        }
    }

    /// Folds a whole event log.
    pub fn replay<'a>(events: impl IntoIterator<Item = &'a Event>) -> Option<Hand> {
        let mut it = events.into_iter();
        let mut hand = Hand::from_start(it.next()?);
        for e in it {
            hand.evolve(e);
        }
        Some(hand)
    }

    pub fn pile_len(&self) -> usize {
        self.pile.len()
    }

    /// The centre pile in draw order. Hidden from every seat view; for replays and tests.
    pub fn pile_in_draw_order(&self) -> Vec<Tile> {
        self.pile.iter().rev().copied().collect()
    }

    pub fn is_over(&self) -> bool {
        self.end.is_some()
    }

    /// Penalties not voided, per seat.
    pub fn penalty_totals(&self) -> [i32; 4] {
        let mut t = [0; 4];
        for p in self.penalties.iter().filter(|p| !p.voided) {
            t[p.seat as usize] += p.points;
        }
        t
    }

    /// Whether some table meld could take `tile` by an add.
    pub fn is_playable(&self, tile: Tile) -> bool {
        let wraps = self.rules.run_wraps_12_13_1;
        self.table
            .iter()
            .any(|m| meld::can_take(self.okey, wraps, m, tile))
    }

    fn charge(&self, events: &mut Vec<Event>, seat: Seat, points: i32, reason: PenaltyReason) {
        if !self.rules.in_play_penalties {
            return;
        }
        let already = events
            .iter()
            .filter(|e| matches!(e, Event::PenaltyCharged { .. }))
            .count();
        events.push(Event::PenaltyCharged {
            id: (self.penalties.len() + already) as u32,
            seat,
            points,
            reason,
        });
    }

    /// Checks `command` from `seat` and returns the events it causes. Changes nothing.
    pub fn decide(&self, seat: Seat, command: &Command) -> Result<Vec<Event>, RuleError> {
        if self.end.is_some() {
            return Err(RuleError::HandOver);
        }
        if seat != self.turn.seat {
            return Err(RuleError::NotYourTurn {
                seat,
                turn: self.turn.seat,
            });
        }
        match command {
            Command::Draw => self.decide_draw(seat),
            Command::TakeDiscard => self.decide_take(seat),
            Command::ReturnDiscard => self.decide_return(seat),
            Command::Open { melds } => self.decide_open(seat, melds),
            Command::Lay { melds } => self.decide_lay(seat, melds),
            Command::Add { meld, tiles } => self.decide_add(seat, *meld, tiles),
            Command::Retrieve { meld, tiles } => self.decide_retrieve(seat, *meld, tiles),
            Command::Discard { tile } => self.decide_discard(seat, *tile),
            Command::CallPlayable => self.decide_call(seat),
            Command::Timeout => self.decide_timeout(seat),
        }
    }

    /// `decide`, then fold the events into the state. Returns the events.
    pub fn apply(&mut self, seat: Seat, command: &Command) -> Result<Vec<Event>, RuleError> {
        let events = self.decide(seat, command)?;
        for e in &events {
            self.evolve(e);
        }
        Ok(events)
    }

    fn decide_draw(&self, seat: Seat) -> Result<Vec<Event>, RuleError> {
        match self.turn.taken {
            Taken::Nothing => {}
            Taken::Dealt => return Err(RuleError::FirstTurnNoTake),
            _ => return Err(RuleError::AlreadyTook),
        }
        let tile = *self.pile.last().ok_or(RuleError::PileEmpty)?;
        Ok(vec![Event::TileDrawn { seat, tile }])
    }

    /// The side discard the seat on turn is offered: the previous seat's latest discard, while
    /// the hand goes on and that seat has taken no tile this turn nor given the side discard
    /// back. Taking it may still be refused for what the tile is (see `decide_take`).
    pub fn side_discard_on_offer(&self) -> Option<Tile> {
        let (from, tile) = self.side?;
        (self.end.is_none()
            && matches!(self.turn.taken, Taken::Nothing)
            && !self.turn.must_draw
            && from == prev_seat(self.turn.seat))
        .then_some(tile)
    }

    fn decide_take(&self, seat: Seat) -> Result<Vec<Event>, RuleError> {
        match self.turn.taken {
            Taken::Nothing => {}
            Taken::Dealt => return Err(RuleError::FirstTurnNoTake),
            _ => return Err(RuleError::AlreadyTook),
        }
        if self.turn.must_draw {
            return Err(RuleError::MustDraw);
        }
        let (from, tile) = self.side.ok_or(RuleError::NoSideDiscard)?;
        if from != prev_seat(seat) {
            return Err(RuleError::NoSideDiscard);
        }
        if self.okey.is_okey(tile) {
            return Err(RuleError::SideDiscardIsOkey);
        }
        if self.is_playable(tile) {
            return Err(RuleError::SideDiscardPlayable(tile));
        }
        if matches!(
            self.opened[seat as usize],
            Some(Opening {
                kind: OpenKind::Pairs,
                ..
            })
        ) && !self.rules.pairs_take_discard
        {
            return Err(RuleError::PairsMayNotTakeDiscard);
        }
        Ok(vec![Event::SideDiscardTaken { seat, tile }])
    }

    fn decide_return(&self, seat: Seat) -> Result<Vec<Event>, RuleError> {
        let Taken::SideDiscard { tile, .. } = self.turn.taken else {
            return Err(RuleError::NoSideDiscardHeld);
        };
        let mut events = Vec::new();
        if self.turn.table_changed {
            let snap = self
                .turn
                .snapshot
                .as_ref()
                .expect("a table change takes a snapshot");
            let voided: Vec<u32> = self.penalties[snap.penalties_len..]
                .iter()
                .filter(|p| !p.voided)
                .map(|p| p.id)
                .collect();
            events.push(Event::TableRolledBack { seat, voided });
            // The snapshot's penalties_len stays valid: penalties are only appended.
            let mut ev = Vec::new();
            self.charge(&mut ev, seat, PENALTY, PenaltyReason::TableRollback);
            events.extend(ev);
        }
        events.push(Event::SideDiscardReturned { seat, tile });
        Ok(events)
    }

    /// Common checks before a table action (open, lay, add, retrieve).
    fn check_can_act(&self) -> Result<(), RuleError> {
        if self.turn.wrong_opening {
            return Err(RuleError::OnlyDiscardLeft);
        }
        if self.turn.taken == Taken::Nothing {
            return Err(if self.turn.must_draw {
                RuleError::MustDraw
            } else {
                RuleError::TakeFirst
            });
        }
        Ok(())
    }

    fn check_opened_actor(&self, seat: Seat) -> Result<Opening, RuleError> {
        self.check_can_act()?;
        let opening = self.opened[seat as usize].ok_or(RuleError::NotOpened)?;
        if opening.turn == self.turn.number && !self.rules.act_after_opening_same_turn {
            return Err(RuleError::NoActionsInOpeningTurn);
        }
        Ok(opening)
    }

    /// Removes `tiles` from a copy of the rack, failing if any is missing or the rack would be empty.
    fn rack_after(&self, seat: Seat, out: &[Tile], back: &[Tile]) -> Result<Tiles, RuleError> {
        let mut rack = self.racks[seat as usize].clone();
        for t in out {
            if !rack.remove(*t) {
                return Err(RuleError::NotInRack(t.to_string()));
            }
        }
        for t in back {
            rack.insert(*t);
        }
        if rack.is_empty() {
            return Err(RuleError::MustKeepOneTile);
        }
        Ok(rack)
    }

    fn side_used_by(&self, tiles: &[Tile]) -> Option<Tile> {
        match self.turn.taken {
            Taken::SideDiscard { tile, used: false } if tiles.contains(&tile) => Some(tile),
            _ => None,
        }
    }

    fn decide_open(&self, seat: Seat, melds: &[Vec<MeldTile>]) -> Result<Vec<Event>, RuleError> {
        self.check_can_act()?;
        if self.opened[seat as usize].is_some() {
            return Err(RuleError::AlreadyOpened);
        }
        if melds.is_empty() {
            return Err(RuleError::NoMelds);
        }
        let pairs = melds.iter().all(|m| m.len() == 2);
        if !pairs && melds.iter().any(|m| m.len() == 2) {
            return Err(RuleError::MixedOpening);
        }
        let all: Vec<Tile> = melds.iter().flatten().map(|m| m.tile).collect();
        self.rack_after(seat, &all, &[])?;
        let wraps = self.rules.run_wraps_12_13_1;
        let mut placed = Vec::with_capacity(melds.len());
        for m in melds {
            placed.push(if pairs {
                meld::read_pair(self.okey, m, seat)?
            } else {
                meld::read_run_or_set(self.okey, wraps, m, seat)?
            });
        }
        if let Taken::SideDiscard { tile, used: false } = self.turn.taken
            && !all.contains(&tile)
        {
            return Err(RuleError::SideDiscardLeftOut(tile));
        }
        let (kind, amount, needed) = if pairs {
            (
                OpenKind::Pairs,
                placed.len() as u32,
                self.pair_threshold[seat as usize] as u32,
            )
        } else {
            (
                OpenKind::Melds,
                placed.iter().map(|m| m.value()).sum(),
                self.meld_threshold[seat as usize],
            )
        };
        let mut events = Vec::new();
        if amount < needed {
            if !self.rules.in_play_penalties {
                return Err(RuleError::BelowThreshold { amount, needed });
            }
            events.push(Event::WrongOpening {
                seat,
                kind,
                amount,
                needed,
                melds: placed,
            });
            self.charge(&mut events, seat, PENALTY, PenaltyReason::WrongOpening);
            if let Taken::SideDiscard { tile, .. } = self.turn.taken {
                events.push(Event::SideDiscardReturned { seat, tile });
            }
            return Ok(events);
        }
        let cancels = kind == OpenKind::Pairs
            && self.opened.iter().enumerate().all(|(s, o)| {
                s == seat as usize
                    || matches!(
                        o,
                        Some(Opening {
                            kind: OpenKind::Pairs,
                            ..
                        })
                    )
            });
        let side = self.side_used_by(&all);
        events.push(Event::HandOpened {
            seat,
            kind,
            amount,
            melds: placed,
        });
        if cancels {
            let voided = self
                .penalties
                .iter()
                .filter(|p| !p.voided)
                .map(|p| p.id)
                .collect();
            events.push(Event::HandCancelled { voided });
            events.push(Event::HandEnded {
                end: HandEnd {
                    outcome: Outcome::Cancelled,
                    winner: None,
                    multiplier: 1,
                    scores: [0; 4],
                },
            });
            return Ok(events);
        }
        if let Some(tile) = side {
            let times = if kind == OpenKind::Pairs { 20 } else { 10 };
            let discarder = prev_seat(seat);
            self.charge(
                &mut events,
                discarder,
                times * self.okey.number_of(tile) as i32,
                PenaltyReason::SideDiscardOpening,
            );
        }
        Ok(events)
    }

    fn decide_lay(&self, seat: Seat, melds: &[Vec<MeldTile>]) -> Result<Vec<Event>, RuleError> {
        let opening = self.check_opened_actor(seat)?;
        if melds.is_empty() {
            return Err(RuleError::NoMelds);
        }
        let all: Vec<Tile> = melds.iter().flatten().map(|m| m.tile).collect();
        self.rack_after(seat, &all, &[])?;
        let wraps = self.rules.run_wraps_12_13_1;
        let mut placed = Vec::with_capacity(melds.len());
        for m in melds {
            placed.push(match opening.kind {
                OpenKind::Pairs => {
                    if m.len() != 2 {
                        return Err(RuleError::PairOpenerLaysPairs);
                    }
                    meld::read_pair(self.okey, m, seat)?
                }
                OpenKind::Melds => {
                    if m.len() < 3 {
                        return Err(RuleError::MeldOpenerLaysMelds);
                    }
                    meld::read_run_or_set(self.okey, wraps, m, seat)?
                }
            });
        }
        Ok(vec![Event::MeldsLaid {
            seat,
            melds: placed,
        }])
    }

    fn decide_add(
        &self,
        seat: Seat,
        at: usize,
        tiles: &[MeldTile],
    ) -> Result<Vec<Event>, RuleError> {
        let opening = self.check_opened_actor(seat)?;
        let target = self.table.get(at).ok_or(RuleError::NoSuchMeld(at))?;
        let plain: Vec<Tile> = tiles.iter().map(|m| m.tile).collect();
        self.rack_after(seat, &plain, &[])?;
        if let (OpenKind::Pairs, Some(limit)) = (opening.kind, self.rules.pair_opener_adds_per_turn)
            && self.turn.adds as usize + tiles.len() > limit as usize
        {
            return Err(RuleError::PairOpenerAddLimit(limit));
        }
        let result = meld::add_to(self.okey, self.rules.run_wraps_12_13_1, target, tiles, seat)?;
        Ok(vec![Event::TilesAdded {
            seat,
            meld: at,
            tiles: plain,
            result,
        }])
    }

    fn decide_retrieve(
        &self,
        seat: Seat,
        at: usize,
        tiles: &[Tile],
    ) -> Result<Vec<Event>, RuleError> {
        self.check_opened_actor(seat)?;
        let target = self.table.get(at).ok_or(RuleError::NoSuchMeld(at))?;
        if !self.racks[seat as usize].contains_all(tiles) {
            let missing = tiles
                .iter()
                .find(|t| !self.racks[seat as usize].contains(**t))
                .expect("some tile is missing");
            return Err(RuleError::NotInRack(missing.to_string()));
        }
        let r = meld::retrieve_from(self.okey, target, tiles, seat)?;
        let back: Vec<Tile> = r.okeys.iter().map(|p| p.tile).collect();
        self.rack_after(seat, tiles, &back)?;
        let mut events = vec![Event::OkeyRetrieved {
            seat,
            meld: at,
            supplied: tiles.to_vec(),
            okeys: r.okeys.clone(),
            result: r.meld,
        }];
        for p in &r.okeys {
            if p.by != seat {
                self.charge(&mut events, p.by, PENALTY, PenaltyReason::OkeyRetrieved);
            }
        }
        Ok(events)
    }

    fn decide_discard(&self, seat: Seat, tile: Tile) -> Result<Vec<Event>, RuleError> {
        match self.turn.taken {
            Taken::Nothing => {
                return Err(if self.turn.must_draw {
                    RuleError::MustDraw
                } else {
                    RuleError::TakeFirst
                });
            }
            Taken::SideDiscard {
                tile: side,
                used: false,
            } => return Err(RuleError::SideDiscardUnused(side)),
            _ => {}
        }
        let rack = &self.racks[seat as usize];
        if !rack.contains(tile) {
            return Err(RuleError::NotInRack(tile.to_string()));
        }
        let finishes = rack.len() == 1;
        let is_okey = self.okey.is_okey(tile);
        let playable = !is_okey && self.is_playable(tile);
        let mut events = vec![Event::TileDiscarded {
            seat,
            tile,
            playable,
        }];
        if !finishes {
            if is_okey {
                self.charge(&mut events, seat, PENALTY, PenaltyReason::DiscardOkey);
            } else if playable && self.rules.playable_discard == PlayableDiscard::Auto {
                self.charge(&mut events, seat, PENALTY, PenaltyReason::DiscardPlayable);
            }
        }
        if finishes || self.pile.is_empty() {
            // The racks are scored as they are after the discard: the tile thrown away is no
            // longer in the discarder's rack (RULES.md scores "the rack's tiles").
            let mut after = self.clone();
            for e in &events {
                after.evolve(e);
            }
            let end = if finishes {
                after.score_finish(seat, tile, self.turn.number)
            } else {
                after.score_no_winner()
            };
            events.push(Event::HandEnded { end });
        }
        Ok(events)
    }

    fn decide_call(&self, seat: Seat) -> Result<Vec<Event>, RuleError> {
        if self.rules.playable_discard != PlayableDiscard::Called {
            return Err(RuleError::NotCalledMode);
        }
        // The first player's first turn follows no discard: there is nothing to call, though
        // the dealt 22nd tile stands for the turn's take.
        if self.turn.taken == Taken::Dealt {
            return Err(RuleError::NothingToCall);
        }
        if self.turn.taken != Taken::Nothing || self.turn.must_draw {
            return Err(RuleError::CallAfterTaking);
        }
        let call = self.pending_call.ok_or(RuleError::NothingToCall)?;
        let mut events = vec![Event::PlayableCalled {
            seat,
            fits: call.fits,
        }];
        if call.fits {
            self.charge(
                &mut events,
                call.discarder,
                PENALTY,
                PenaltyReason::DiscardPlayable,
            );
        }
        Ok(events)
    }

    /// The server plays for the seat: return an unused side discard, draw if nothing was taken, then
    /// discard the highest-numbered tile that is not an okey — each through the normal command path.
    fn decide_timeout(&self, seat: Seat) -> Result<Vec<Event>, RuleError> {
        let mut sim = self.clone();
        let mut events = vec![Event::TurnTimedOut { seat }];
        sim.evolve(&events[0]);
        if let Taken::SideDiscard { used: false, .. } = sim.turn.taken {
            events.extend(sim.apply(seat, &Command::ReturnDiscard)?);
        }
        if sim.turn.taken == Taken::Nothing {
            events.extend(sim.apply(seat, &Command::Draw)?);
        }
        let tile = timeout_discard(sim.okey, &sim.racks[seat as usize]);
        events.extend(sim.apply(seat, &Command::Discard { tile })?);
        Ok(events)
    }

    fn finish_multiplier(&self, finisher: Seat, last: Tile, turn: u32) -> (i32, bool, bool, bool) {
        let m = self.rules.multipliers;
        let opening = self.opened[finisher as usize].expect("a finisher has opened");
        let d = opening.turn == turn;
        let o = self.okey.is_okey(last);
        let p = opening.kind == OpenKind::Pairs;
        let exp = (d && m.direct_finish) as u32
            + (o && m.okey_finish) as u32
            + (p && m.pairs_finish) as u32;
        (1 << exp, d, o, p)
    }

    /// A seat's rack: numbers summed (okeys per the held-okey rule), the okeys held that cost
    /// 101 on top, and those counted at their number inside the sum.
    fn rack_points(&self, seat: Seat) -> (i32, i32, i32) {
        let mut sum = 0;
        let mut okeys = 0;
        let mut at_number = 0;
        for t in self.racks[seat as usize].iter() {
            if self.okey.is_okey(t) {
                match self.rules.held_okey {
                    HeldOkey::Surcharge101 => okeys += 1,
                    HeldOkey::OkeyNumber => {
                        sum += self.okey.face.number() as i32;
                        at_number += 1;
                    }
                }
            } else {
                sum += self.okey.number_of(t) as i32;
            }
        }
        (sum, okeys, at_number)
    }

    fn seat_basis(&self, seat: Seat, m: i32) -> ScoreBasis {
        match self.opened[seat as usize] {
            None => ScoreBasis::NeverOpened { multiplier: m },
            Some(o) => {
                let (rack_sum, okeys_held, okeys_at_number) = self.rack_points(seat);
                ScoreBasis::Opened {
                    kind: o.kind,
                    rack_sum,
                    factor: if o.kind == OpenKind::Pairs { 2 } else { 1 },
                    multiplier: m,
                    okeys_held,
                    okeys_at_number,
                }
            }
        }
    }

    /// Why each seat scores what it does when `finisher` goes out with `last` in turn `turn`.
    fn finish_bases(&self, finisher: Seat, last: Tile, turn: u32) -> (i32, [ScoreBasis; 4]) {
        let (m, d, o, p) = self.finish_multiplier(finisher, last, turn);
        let seed004 = self.rules.unopened_scoring == UnopenedScoring::Seed004;
        let bases = std::array::from_fn(|s| {
            let s = s as Seat;
            if s == finisher {
                ScoreBasis::Finisher {
                    multiplier: m,
                    direct: d,
                    okey: o,
                    pairs: p,
                }
            } else if self.rules.partners && s == partner(finisher) {
                ScoreBasis::FinishersPartner
            } else if seed004 && d {
                ScoreBasis::Fixed {
                    points: if o { 8 * PENALTY } else { 4 * PENALTY },
                    why: if o {
                        "penalties preset: after a direct finish with an okey every opponent scores 808"
                    } else {
                        "penalties preset: after a direct finish every opponent scores 404"
                    },
                }
            } else if seed004 && self.opened[s as usize].is_none() {
                ScoreBasis::Fixed {
                    points: 2 * PENALTY * (1 << (o as u32 + p as u32)),
                    why: match (o, p) {
                        (false, false) => "penalties preset: never opened",
                        (true, false) => "penalties preset: never opened, after an okey finish",
                        (false, true) => "penalties preset: never opened, after a pairs finish",
                        (true, true) => {
                            "penalties preset: never opened, after an okey and pairs finish"
                        }
                    },
                }
            } else if seed004 {
                // Seed 004 multiplies only the never-opened ("each player who never opened gets
                // 404 instead of 202"); an opened rack is its face value ("Players who opened:
                // penalty equal to the total face value of the tiles left on their rack").
                self.seat_basis(s, 1)
            } else {
                self.seat_basis(s, m)
            }
        });
        (m, bases)
    }

    /// The end of a hand `finisher` went out of with `last` in turn `turn`, scored on the state
    /// after that discard.
    fn score_finish(&self, finisher: Seat, last: Tile, turn: u32) -> HandEnd {
        let (m, bases) = self.finish_bases(finisher, last, turn);
        HandEnd {
            outcome: Outcome::Finished,
            winner: Some(finisher),
            multiplier: m,
            scores: bases.map(|b| b.points()),
        }
    }

    fn score_no_winner(&self) -> HandEnd {
        let scores = std::array::from_fn(|s| self.seat_basis(s as Seat, 1).points());
        HandEnd {
            outcome: Outcome::PileEmpty,
            winner: None,
            multiplier: 1,
            scores,
        }
    }

    /// Why each seat scored what it did, once the hand has ended (for replays and support).
    /// `None` before the end, and for an end no hand can reach: a finish by a seat that never
    /// discarded (a finish is a discard), which only a forged or corrupted log holds.
    pub fn score_bases(&self) -> Option<[ScoreBasis; 4]> {
        let end = self.end?;
        Some(match (end.outcome, end.winner) {
            (Outcome::Cancelled, _) => [ScoreBasis::Cancelled; 4],
            (Outcome::Finished, Some(w)) => {
                let last = *self.discards[w as usize].last()?;
                // The finishing discard already passed the turn on.
                self.finish_bases(w, last, self.turn.number - 1).1
            }
            _ => std::array::from_fn(|s| self.seat_basis(s as Seat, 1)),
        })
    }

    fn snapshot_if_needed(&mut self) {
        if self.turn.snapshot.is_none() {
            let s = self.turn.seat as usize;
            self.turn.snapshot = Some(Box::new(Snapshot {
                rack: self.racks[s].clone(),
                table: self.table.clone(),
                opened: self.opened,
                meld_threshold: self.meld_threshold,
                pair_threshold: self.pair_threshold,
                penalties_len: self.penalties.len(),
            }));
        }
    }

    fn mark_side_used(&mut self, tiles: impl IntoIterator<Item = Tile>) {
        if let Taken::SideDiscard { tile, used: false } = self.turn.taken
            && tiles.into_iter().any(|t| t == tile)
        {
            self.turn.taken = Taken::SideDiscard { tile, used: true };
        }
    }

    fn remove_from_rack(&mut self, seat: Seat, tiles: impl IntoIterator<Item = Tile>) {
        for t in tiles {
            let ok = self.racks[seat as usize].remove(t);
            debug_assert!(ok, "events only move tiles a rack holds");
        }
    }

    /// Folds one event into the state. Events are facts: this never fails.
    pub fn evolve(&mut self, event: &Event) {
        self.version += 1;
        match event {
            Event::HandStarted { .. } => *self = Hand::from_start(event),
            Event::TileDrawn { seat, tile } => {
                let t = self.pile.pop();
                debug_assert_eq!(t, Some(*tile));
                self.racks[*seat as usize].insert(*tile);
                self.turn.taken = Taken::Pile;
                self.turn.must_draw = false;
                self.pending_call = None;
            }
            Event::SideDiscardTaken { seat, tile } => {
                let from = prev_seat(*seat) as usize;
                self.discards[from].pop();
                self.side = None;
                self.racks[*seat as usize].insert(*tile);
                self.turn.taken = Taken::SideDiscard {
                    tile: *tile,
                    used: false,
                };
                self.pending_call = None;
            }
            Event::SideDiscardReturned { seat, tile } => {
                self.racks[*seat as usize].remove(*tile);
                let from = prev_seat(*seat);
                self.discards[from as usize].push(*tile);
                self.side = Some((from, *tile));
                self.turn.taken = Taken::Nothing;
                self.turn.must_draw = true;
            }
            Event::TableRolledBack { seat, voided } => {
                if let Some(snap) = self.turn.snapshot.take() {
                    self.racks[*seat as usize] = snap.rack;
                    self.table = snap.table;
                    self.opened = snap.opened;
                    self.meld_threshold = snap.meld_threshold;
                    self.pair_threshold = snap.pair_threshold;
                }
                for id in voided {
                    self.penalties[*id as usize].voided = true;
                }
                self.turn.table_changed = false;
                self.turn.adds = 0;
                if let Taken::SideDiscard { tile, .. } = self.turn.taken {
                    self.turn.taken = Taken::SideDiscard { tile, used: false };
                }
            }
            Event::HandOpened {
                seat,
                kind,
                amount,
                melds,
            } => {
                self.snapshot_if_needed();
                let tiles: Vec<Tile> = melds
                    .iter()
                    .flat_map(|m| m.tiles.iter().map(|p| p.tile))
                    .collect();
                self.remove_from_rack(*seat, tiles.iter().copied());
                self.mark_side_used(tiles);
                self.table.extend(melds.iter().cloned());
                self.opened[*seat as usize] = Some(Opening {
                    kind: *kind,
                    amount: *amount,
                    turn: self.turn.number,
                });
                self.turn.table_changed = true;
                if self.rules.threshold == Threshold::Raising {
                    for s in 0..4u8 {
                        if self.rules.partners && (s == *seat || s == partner(*seat)) {
                            continue;
                        }
                        let i = s as usize;
                        match kind {
                            OpenKind::Melds => {
                                self.meld_threshold[i] = self.meld_threshold[i].max(amount + 1)
                            }
                            OpenKind::Pairs if self.rules.pairs_raise_threshold => {
                                self.pair_threshold[i] =
                                    self.pair_threshold[i].max(*amount as u8 + 1)
                            }
                            OpenKind::Pairs => {}
                        }
                    }
                }
            }
            Event::WrongOpening { .. } => {
                self.turn.wrong_opening = true;
            }
            Event::MeldsLaid { seat, melds } => {
                self.snapshot_if_needed();
                let tiles: Vec<Tile> = melds
                    .iter()
                    .flat_map(|m| m.tiles.iter().map(|p| p.tile))
                    .collect();
                self.remove_from_rack(*seat, tiles.iter().copied());
                self.mark_side_used(tiles);
                self.table.extend(melds.iter().cloned());
                self.turn.table_changed = true;
            }
            Event::TilesAdded {
                seat,
                meld,
                tiles,
                result,
            } => {
                self.snapshot_if_needed();
                self.remove_from_rack(*seat, tiles.iter().copied());
                self.mark_side_used(tiles.iter().copied());
                self.table[*meld] = result.clone();
                self.turn.table_changed = true;
                if matches!(
                    self.opened[*seat as usize],
                    Some(Opening {
                        kind: OpenKind::Pairs,
                        ..
                    })
                ) {
                    self.turn.adds += tiles.len() as u8;
                }
            }
            Event::OkeyRetrieved {
                seat,
                meld,
                supplied,
                okeys,
                result,
            } => {
                self.snapshot_if_needed();
                self.remove_from_rack(*seat, supplied.iter().copied());
                self.mark_side_used(supplied.iter().copied());
                for p in okeys {
                    self.racks[*seat as usize].insert(p.tile);
                }
                self.table[*meld] = result.clone();
                self.turn.table_changed = true;
            }
            Event::TileDiscarded {
                seat,
                tile,
                playable,
            } => {
                self.remove_from_rack(*seat, [*tile]);
                self.discards[*seat as usize].push(*tile);
                self.side = Some((*seat, *tile));
                // With penalties off a call is still accepted; it just charges nobody.
                self.pending_call = (self.rules.playable_discard == PlayableDiscard::Called)
                    .then_some(PendingCall {
                        discarder: *seat,
                        tile: *tile,
                        fits: *playable,
                    });
                self.turn = Turn {
                    seat: next_seat(*seat),
                    number: self.turn.number + 1,
                    taken: Taken::Nothing,
                    must_draw: false,
                    table_changed: false,
                    wrong_opening: false,
                    adds: 0,
                    snapshot: None,
                };
            }
            Event::PlayableCalled { .. } => {
                self.pending_call = None;
            }
            Event::TurnTimedOut { .. } => {}
            Event::PenaltyCharged {
                id,
                seat,
                points,
                reason,
            } => {
                debug_assert_eq!(*id as usize, self.penalties.len());
                self.penalties.push(Penalty {
                    id: *id,
                    seat: *seat,
                    points: *points,
                    reason: *reason,
                    voided: false,
                });
            }
            Event::HandCancelled { voided } => {
                for id in voided {
                    self.penalties[*id as usize].voided = true;
                }
            }
            Event::HandEnded { end } => {
                self.end = Some(*end);
                self.pending_call = None;
            }
        }
    }
}

/// The tile a timed-out seat discards: the highest-numbered tile that is not an okey (a false joker
/// counts the okey's number), ties broken by colour order R, Y, B, K; an okey only if nothing else is left.
pub fn timeout_discard(okey: Okey, rack: &Tiles) -> Tile {
    let mut best: Option<(u8, std::cmp::Reverse<u8>, Tile)> = None;
    for t in rack.kinds() {
        if okey.is_okey(t) {
            continue;
        }
        let face = okey.face_of(t).expect("not an okey");
        let key = (face.number(), std::cmp::Reverse(face.color as u8), t);
        if best.is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
            best = Some(key);
        }
    }
    best.map(|b| b.2)
        .unwrap_or_else(|| rack.iter().next().expect("a rack on turn is never empty"))
}

#[cfg(test)]
mod basis_tests {
    use super::*;

    #[test]
    fn a_basis_says_how_each_held_okey_was_counted() {
        let opened = |okeys_held, okeys_at_number| ScoreBasis::Opened {
            kind: OpenKind::Melds,
            rack_sum: 28,
            factor: 1,
            multiplier: 1,
            okeys_held,
            okeys_at_number,
        };
        assert_eq!(
            opened(0, 1).to_string(),
            "opened with melds: rack 28 (1 okey(s) held counted at the okey's number, as this \
             table's rules say) x 1 = 28"
        );
        assert_eq!(
            opened(1, 0).to_string(),
            "opened with melds: rack 28 x 1 + 1 okey(s) held x 101 = 129"
        );
        assert_eq!(
            opened(0, 0).to_string(),
            "opened with melds: rack 28 x 1 = 28"
        );
        // Stored bases without the field read as none counted at their number.
        let mut json = serde_json::to_value(opened(0, 0)).unwrap();
        assert!(json.get("okeys_at_number").is_none(), "{json}");
        json.as_object_mut().unwrap().remove("okeys_at_number");
        assert_eq!(
            serde_json::from_value::<ScoreBasis>(json).unwrap(),
            opened(0, 0)
        );
    }
}
