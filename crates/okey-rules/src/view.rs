//! A seat's view of a hand: everything that seat may see and nothing else. Every API that shows a
//! table builds it here, so there is one place that decides what is hidden.

use serde::{Deserialize, Serialize};

use crate::Seat;
use crate::hand::{Event, Hand, HandEnd, Opening, Penalty, Taken};
use crate::meld::TableMeld;
use crate::ruleset::RuleSet;
use crate::tile::{Okey, Tile};

/// What one seat sees: its own rack, the table, discards, counts, penalties and thresholds —
/// never another rack or the pile order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatView {
    pub seat: Seat,
    pub rules: RuleSet,
    pub indicator: Tile,
    pub okey: Okey,
    pub first: Seat,
    /// This seat's rack, in canonical order.
    pub rack: Vec<Tile>,
    /// How many tiles each seat holds.
    pub rack_sizes: [usize; 4],
    pub pile_count: usize,
    /// Every seat's discards, oldest first (face up at the table).
    pub discards: [Vec<Tile>; 4],
    /// The side discard on offer: the previous seat's latest discard, while the seat on turn
    /// has not taken a tile this turn nor given it back (whether taking it is legal is the
    /// rules' answer: an okey never is).
    pub side_discard: Option<Tile>,
    pub table: Vec<TableMeld>,
    pub opened: [Option<Opening>; 4],
    pub meld_threshold: [u32; 4],
    pub pair_threshold: [u8; 4],
    pub penalties: Vec<Penalty>,
    pub turn_seat: Seat,
    pub turn_number: u32,
    /// What the seat on turn has taken (public: everyone sees a draw or a take, not the drawn tile).
    pub taken: TakenView,
    pub must_draw: bool,
    pub wrong_opening: bool,
    /// The latest discard may still be called playable by the seat on turn (`called` mode).
    pub call_pending: bool,
    /// Tiles a pair opener on turn has added this turn (for a per-turn add limit).
    pub adds_this_turn: u8,
    pub end: Option<HandEnd>,
    pub version: u64,
}

/// The public part of what the seat on turn has taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TakenView {
    Nothing,
    Dealt,
    Pile,
    SideDiscard { tile: Tile, used: bool },
}

impl SeatView {
    pub fn of(hand: &Hand, seat: Seat) -> SeatView {
        SeatView {
            seat,
            rules: hand.rules.clone(),
            indicator: hand.indicator,
            okey: hand.okey,
            first: hand.first,
            rack: hand.racks[seat as usize].to_vec(),
            rack_sizes: std::array::from_fn(|s| hand.racks[s].len()),
            pile_count: hand.pile_len(),
            discards: hand.discards.clone(),
            side_discard: hand.side_discard_on_offer(),
            table: hand.table.clone(),
            opened: hand.opened,
            meld_threshold: hand.meld_threshold,
            pair_threshold: hand.pair_threshold,
            penalties: hand.penalties.clone(),
            turn_seat: hand.turn.seat,
            turn_number: hand.turn.number,
            taken: match hand.turn.taken {
                Taken::Nothing => TakenView::Nothing,
                Taken::Dealt => TakenView::Dealt,
                Taken::Pile => TakenView::Pile,
                Taken::SideDiscard { tile, used } => TakenView::SideDiscard { tile, used },
            },
            must_draw: hand.turn.must_draw,
            wrong_opening: hand.turn.wrong_opening,
            call_pending: hand.pending_call.is_some() && hand.end.is_none(),
            adds_this_turn: hand.turn.adds,
            end: hand.end,
            version: hand.version,
        }
    }

    /// Every tile this view shows (rack, table, discards, indicator), for checks that nothing
    /// hidden leaks.
    pub fn visible_tiles(&self) -> Vec<Tile> {
        let mut v = self.rack.clone();
        v.extend(
            self.table
                .iter()
                .flat_map(|m| m.tiles.iter().map(|p| p.tile)),
        );
        v.extend(self.discards.iter().flatten());
        v.push(self.indicator);
        v
    }
}

/// What an event shows to `seat`: the event itself, or `None` when it is private to another
/// seat. The deal is private; a seat's own events are whole; others' are what
/// [`event_for_others`] leaves of them.
pub fn event_for_seat(event: &Event, seat: Seat) -> Option<Event> {
    match event {
        Event::HandStarted { .. } => None,
        e if e.seat() == Some(seat) => Some(e.clone()),
        e => event_for_others(e),
    }
}

/// What anyone but the seat that made `event` is shown of it (the public included): no deal, no
/// drawn tile, and no melds of a wrong opening (they go back to the rack); everything else is
/// public at the table.
pub fn event_for_others(event: &Event) -> Option<Event> {
    match event {
        Event::HandStarted { .. } | Event::TileDrawn { .. } => None,
        Event::WrongOpening {
            seat,
            kind,
            amount,
            needed,
            ..
        } => Some(Event::WrongOpening {
            seat: *seat,
            kind: *kind,
            amount: *amount,
            needed: *needed,
            melds: Vec::new(),
        }),
        e => Some(e.clone()),
    }
}
