//! What both levels read off a seat's view: where the seat is in its turn, its rack as a tile
//! multiset, which tiles fit the table, and which rack tiles are loose (in no meld).

use okey_rules::hints::BestOpening;
use okey_rules::meld::{self, TableMeld};
use okey_rules::view::TakenView;
use okey_rules::{
    Command, MeldTile, Okey, OpenKind, Opening, PlayableDiscard, SeatView, Tile, Tiles,
};

/// Where the seat on turn stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Nothing taken yet: draw, or take the side discard (or call it).
    Take,
    /// The side discard was given back: only a draw is left before acting.
    MustDraw,
    /// A tile is in hand: table actions, then a discard.
    Act,
    /// A wrong opening (or an opening turn at a table that forbids more) leaves only the discard.
    DiscardOnly,
}

/// The seat's own situation, read once per command.
pub(crate) struct Sight<'a> {
    pub view: &'a SeatView,
    pub okey: Okey,
    pub wraps: bool,
    pub rack: Tiles,
    pub opened: Option<Opening>,
    pub phase: Phase,
    /// The side discard taken this turn and not yet used on the table.
    pub held_side: Option<Tile>,
}

impl<'a> Sight<'a> {
    pub fn of(view: &'a SeatView) -> Sight<'a> {
        let opened = view.opened[view.seat as usize];
        let phase = match view.taken {
            TakenView::Nothing if view.must_draw => Phase::MustDraw,
            TakenView::Nothing => Phase::Take,
            _ if view.wrong_opening => Phase::DiscardOnly,
            _ => match opened {
                Some(o)
                    if o.turn == view.turn_number && !view.rules.act_after_opening_same_turn =>
                {
                    Phase::DiscardOnly
                }
                _ => Phase::Act,
            },
        };
        let held_side = match view.taken {
            TakenView::SideDiscard { tile, used: false } => Some(tile),
            _ => None,
        };
        Sight {
            view,
            okey: view.okey,
            wraps: view.rules.run_wraps_12_13_1,
            rack: Tiles::from_slice(&view.rack),
            opened,
            phase,
            held_side,
        }
    }

    pub fn seat(&self) -> usize {
        self.view.seat as usize
    }

    pub fn meld_threshold(&self) -> u32 {
        self.view.meld_threshold[self.seat()]
    }

    pub fn pair_threshold(&self) -> u32 {
        self.view.pair_threshold[self.seat()] as u32
    }

    pub fn opened_with(&self, kind: OpenKind) -> bool {
        self.opened.is_some_and(|o| o.kind == kind)
    }

    /// Whether some table meld could take `tile` by an add (discarding it would cost 101).
    pub fn playable(&self, tile: Tile) -> bool {
        fits_table(self.okey, self.wraps, &self.view.table, tile).is_some()
    }

    /// Whether to call the latest discard playable: at a `called` table with in-play penalties,
    /// while the call is still open (nothing taken yet), and only when a table meld could take
    /// that tile — then the call charges its discarder 101; a call on a tile that does not fit
    /// charges nobody, so it is never made. A discarded okey is charged at once, never called.
    pub fn should_call(&self) -> bool {
        let view = self.view;
        view.rules.playable_discard == PlayableDiscard::Called
            && view.rules.in_play_penalties
            && view.call_pending
            && self.phase == Phase::Take
            && view
                .side_discard
                .is_some_and(|t| !self.okey.is_okey(t) && self.playable(t))
    }

    /// The first rack tile (not an okey) that a table meld takes, as an add. Adding needs a tile to
    /// stay back for the closing discard.
    pub fn lay_off(&self) -> Option<Command> {
        if self.rack.len() < 2 {
            return None;
        }
        self.rack
            .kinds()
            .filter(|t| !self.okey.is_okey(*t))
            .find_map(|t| {
                fits_table(self.okey, self.wraps, &self.view.table, t).map(|at| Command::Add {
                    meld: at,
                    tiles: vec![MeldTile::plain(t)],
                })
            })
    }
}

/// The index of the first table meld that takes `tile` alone.
pub(crate) fn fits_table(
    okey: Okey,
    wraps: bool,
    table: &[TableMeld],
    tile: Tile,
) -> Option<usize> {
    table
        .iter()
        .position(|m| meld::can_take(okey, wraps, m, tile))
}

/// The rack left after laying `melds`.
pub(crate) fn without(rack: &Tiles, melds: &[Vec<MeldTile>]) -> Tiles {
    let mut rest = rack.clone();
    for t in melds.iter().flatten() {
        rest.remove(t.tile);
    }
    rest
}

/// What a rack would cost at the end of the hand if its seat had opened with melds: its numbers,
/// and a held okey at 101.
pub(crate) fn rack_cost(okey: Okey, rack: &Tiles) -> u32 {
    rack.iter()
        .map(|t| {
            if okey.is_okey(t) {
                101
            } else {
                okey.number_of(t) as u32
            }
        })
        .sum()
}

/// The opening of the rack's best melds, if any, flattened with the tiles it leaves.
pub(crate) fn best_melds(sight: &Sight, rack: &Tiles, forced: Option<Tile>) -> Option<BestOpening> {
    okey_rules::hints::best_meld_opening(sight.okey, sight.wraps, rack, forced)
}

/// The highest-numbered tile among `candidates` (a false joker counts the okey's number), ties to
/// the first in canonical order.
pub(crate) fn highest(okey: Okey, candidates: impl Iterator<Item = Tile>) -> Option<Tile> {
    let mut best: Option<(u8, Tile)> = None;
    for t in candidates {
        let n = okey.number_of(t);
        if best.is_none_or(|(bn, _)| n > bn) {
            best = Some((n, t));
        }
    }
    best.map(|(_, t)| t)
}
