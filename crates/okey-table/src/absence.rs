//! Absence, pure: expiries in a row, the seat handed to a bot after `expiries_before_bot` of them,
//! the player reclaiming it, and bots sitting in seats nobody took. Folded from the table's events
//! like everything else ([`Absence::evolve`]). The commands the server sends for a seat
//! (`TableCommand::Server`) are decided by `Table::decide_server` through the same
//! `Table::play_seat` as a person's (in the `table` module, which reads this fold).
//!
//! A bot sitting in a seat is a seat occupant named `bots/{level}-{seat}`
//! ([`okey_bots::Level::occupant`]), so it joins, plays and is shown through the same paths as a
//! person.

use okey_rules::Event;

use crate::event::TableEvent;

/// Who is absent and how often each seat's turn ran out in a row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Absence {
    /// Turns in a row whose deadline passed, per seat (reset by a turn the seat finished itself,
    /// by a hand-over and by a reclaim).
    pub expiries: [u8; 4],
    /// A bot plays the seat for its absent player.
    pub substituted: [bool; 4],
    /// The player who left the seat during the match (a bot plays it): only they may take it
    /// back, with JoinSeat.
    pub vacated: [Option<String>; 4],
    /// The current turn was played by the server on expiry.
    timed_out_turn: bool,
}

impl Absence {
    /// Folds one event.
    pub fn evolve(&mut self, event: &TableEvent) {
        match event {
            TableEvent::Played {
                event: Event::TurnTimedOut { seat },
                ..
            } => {
                let e = &mut self.expiries[*seat as usize];
                *e = e.saturating_add(1);
                self.timed_out_turn = true;
            }
            TableEvent::Played {
                event: Event::TileDiscarded { seat, .. },
                ..
            } => {
                if !self.timed_out_turn {
                    self.expiries[*seat as usize] = 0;
                }
                self.timed_out_turn = false;
            }
            TableEvent::HandEnded { .. } | TableEvent::HandDealt { .. } => {
                self.timed_out_turn = false;
            }
            TableEvent::SeatHandedToBot { seat, .. } => {
                self.substituted[*seat as usize] = true;
                self.expiries[*seat as usize] = 0;
            }
            TableEvent::SeatReclaimed { seat, .. } => {
                self.substituted[*seat as usize] = false;
                self.expiries[*seat as usize] = 0;
            }
            TableEvent::SeatLeft {
                seat,
                player,
                bot_substitute: true,
            } => {
                self.substituted[*seat as usize] = true;
                self.expiries[*seat as usize] = 0;
                self.vacated[*seat as usize] = Some(player.clone());
            }
            TableEvent::SeatTaken { seat, .. } if self.vacated[*seat as usize].is_some() => {
                self.substituted[*seat as usize] = false;
                self.vacated[*seat as usize] = None;
            }
            _ => {}
        }
    }
}
