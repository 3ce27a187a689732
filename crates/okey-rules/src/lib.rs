//! The 101 Okey rules engine: tiles, the seeded deal, melds, commands and events, seat views,
//! hints, end-of-hand scoring and match totals — exactly as `RULES.md` states them.
//!
//! Pure by design: no I/O, no async, no clocks, no randomness but the recorded seed. Every service,
//! bot and tool plays through [`Hand::decide`] and [`Hand::evolve`].

pub mod deal;
pub mod hand;
pub mod hints;
pub mod matches;
pub mod meld;
pub mod replay;
pub mod ruleset;
pub mod tile;
pub mod view;

#[cfg(test)]
mod properties;

pub use deal::{Deal, DealError};
pub use hand::{
    Command, ErrorClass, Event, Hand, HandEnd, OpenKind, Opening, Outcome, Penalty, PenaltyReason,
    RuleError, Taken,
};
pub use meld::{Form, MeldTile, Placed, TableMeld};
pub use ruleset::{InvalidRuleSet, MatchLength, PlayableDiscard, Preset, RuleSet, Threshold};
pub use tile::{Color, Face, Okey, Tile, Tiles};
pub use view::SeatView;

/// A seat at the table, 0–3. Play passes 0 → 1 → 2 → 3 → 0.
pub type Seat = u8;

/// The seat that plays after `s`.
pub fn next_seat(s: Seat) -> Seat {
    (s + 1) % 4
}

/// The seat whose discard `s` may take: (s + 3) mod 4.
pub fn prev_seat(s: Seat) -> Seat {
    (s + 3) % 4
}

/// The partner across the table: seats {0, 2} and {1, 3}.
pub fn partner(s: Seat) -> Seat {
    (s + 2) % 4
}
