//! Absence and the server's plays for a seat, pure: expiries in a row, the seat handed to a bot
//! after `expiries_before_bot` of them, the player reclaiming it, and bots sitting in seats
//! nobody took. Folded from the table's events like everything else ([`Absence::evolve`]); the
//! commands the server sends for a seat ([`TableCommand::Server`]) are decided here through the
//! same [`Table::play_seat`] as a person's.
//!
//! A bot sitting in a seat is a seat occupant named `bots/{level}-{seat}` (never a
//! `players/…` name), so it joins, plays and is shown through the same paths as a person.

use std::collections::BTreeMap;

use okey_bots::Level;
use okey_rules::{Command, Event, Seat};
use sqlx::types::Uuid;

use crate::domain::{Decision, Phase, Seed, Table, TableCommand, TableError, TableEvent};
use crate::service::{ServiceError, Tables};
use crate::store::random_uuid;

/// The prefix of a bot occupant's name.
pub const BOT_PREFIX: &str = "bots/";

/// The occupant name of a bot of `level` sitting in `seat`.
pub fn bot_name(level: Level, seat: Seat) -> String {
    format!("{BOT_PREFIX}{level}-{seat}")
}

/// The level of a bot occupant, `None` for a person.
pub fn bot_level(occupant: &str) -> Option<Level> {
    let rest = occupant.strip_prefix(BOT_PREFIX)?;
    rest.split('-').next()?.parse().ok()
}

/// Who is absent and how often each seat's turn ran out in a row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Absence {
    /// Turns in a row whose deadline passed, per seat (reset by a turn the seat finished itself,
    /// by a hand-over and by a reclaim).
    pub expiries: [u8; 4],
    /// A bot plays the seat for its absent player.
    pub substituted: [bool; 4],
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
            _ => {}
        }
    }
}

impl Table {
    /// True when the server plays `seat` with a bot: a bot sits there, or its player is absent.
    pub fn bot_holds(&self, seat: Seat) -> bool {
        self.absence.substituted[seat as usize]
            || self.seats[seat as usize]
                .as_deref()
                .is_some_and(|p| bot_level(p).is_some())
    }

    /// The bot level that plays `seat` (a substitute plays strong).
    pub fn bot_level_of(&self, seat: Seat) -> Option<Level> {
        if !self.bot_holds(seat) {
            return None;
        }
        Some(
            self.seats[seat as usize]
                .as_deref()
                .and_then(bot_level)
                .unwrap_or(Level::Strong),
        )
    }

    /// A command the server sends for `seat`: the timeout play on expiry (`turn` names the
    /// `(hand, turn)` whose deadline passed, so a late one is refused), or a bot's command for a
    /// seat a bot holds. A timeout that makes `expiries_before_bot` in a row hands the seat to a
    /// bot in the same decision.
    pub(crate) fn decide_server(
        &self,
        seat: Seat,
        command: &Command,
        turn: Option<(u32, u32)>,
        next_seed: &Seed,
    ) -> Result<Decision, TableError> {
        match self.phase {
            Phase::Waiting => return Err(TableError::NotStarted),
            Phase::Finished => return Err(TableError::MatchOver),
            Phase::Playing => {}
        }
        let hand = self.hand.as_ref().ok_or(TableError::NotStarted)?;
        if let Some((hand_number, number)) = turn
            && (self.hand_number != hand_number
                || hand.turn.number != number
                || hand.turn.seat != seat
                || hand.is_over())
        {
            return Err(TableError::StaleTimeout);
        }
        let timeout = matches!(command, Command::Timeout);
        if !timeout && !self.bot_holds(seat) {
            return Err(TableError::NotBotSeat(seat));
        }
        let mut decision = self.play_seat(seat, command, next_seed)?;
        let limit = self.rules.expiries_before_bot;
        let match_over = decision
            .events
            .iter()
            .any(|e| matches!(e, TableEvent::MatchEnded { .. }));
        if timeout
            && !self.bot_holds(seat)
            && limit > 0
            && self.absence.expiries[seat as usize].saturating_add(1) >= limit
            && !match_over
            && let Some(player) = self.seats[seat as usize].clone()
        {
            decision
                .events
                .push(TableEvent::SeatHandedToBot { seat, player });
        }
        Ok(decision)
    }

    /// The player takes back a seat a bot held for them (nothing to do otherwise).
    pub(crate) fn decide_reclaim(&self, player: &str) -> Result<Decision, TableError> {
        let seat = self.seat_of(player).ok_or(TableError::NotSeated)?;
        if self.absence.substituted[seat as usize] && self.phase == Phase::Playing {
            return Ok(Decision {
                events: vec![TableEvent::SeatReclaimed {
                    seat,
                    player: player.to_owned(),
                }],
                dealt: None,
            });
        }
        Ok(Decision::default())
    }
}

impl Tables {
    /// `player` is back: takes their seat from the bot if one holds it (a command the rules
    /// refused, or an update stream opening, still brings the player back). Stores nothing
    /// otherwise.
    pub async fn reclaim(&self, table_id: Uuid, player: &str) -> Result<(), ServiceError> {
        let request_id = format!("reclaim/{}", random_uuid());
        let command = TableCommand::Reclaim {
            player: player.to_owned(),
        };
        self.submit(
            table_id,
            player,
            &request_id,
            command,
            None,
            BTreeMap::new(),
        )
        .await
        .map(|_| ())
    }
}

/// The server's command for a seat, as a [`TableCommand`].
pub fn server_command(seat: Seat, command: Command, turn: Option<(u32, u32)>) -> TableCommand {
    TableCommand::Server {
        seat,
        command,
        turn,
    }
}

#[cfg(test)]
mod tests {
    use okey_rules::{MatchLength, Preset, RuleSet};

    use super::*;

    fn table(seats: [Option<String>; 4]) -> Table {
        let rules = RuleSet {
            match_length: MatchLength::Hands(2),
            ..Preset::Classic.rules()
        };
        let d = Table::create(rules, seats, &[7; 32]).unwrap();
        let mut seeds = BTreeMap::new();
        if let Some((n, s)) = d.dealt {
            seeds.insert(n, s);
        }
        Table::replay(&d.events, seeds)
    }

    fn apply(table: &mut Table, d: Decision) {
        if let Some((n, s)) = d.dealt {
            table.remember_seed(n, s);
        }
        for e in &d.events {
            table.evolve(e);
        }
    }

    fn expire(table: &Table) -> Decision {
        let hand = table.hand.as_ref().unwrap();
        let turn = Some((table.hand_number, hand.turn.number));
        table
            .decide_server(hand.turn.seat, &Command::Timeout, turn, &[1; 32])
            .unwrap()
    }

    #[test]
    fn bot_names_carry_their_level() {
        assert_eq!(bot_name(Level::Easy, 2), "bots/easy-2");
        assert_eq!(bot_level("bots/strong-1"), Some(Level::Strong));
        assert_eq!(bot_level("players/bots"), None);
    }

    #[test]
    fn three_expiries_in_a_row_hand_the_seat_to_a_bot_and_a_reclaim_takes_it_back() {
        let people = ["a", "b", "c", "d"].map(|p| Some(format!("players/{p}")));
        let mut t = table(people);
        let first = t.hand.as_ref().unwrap().turn.seat;
        let mut handed = None;
        // Every seat times out each turn: the first seat's third expiry hands it over.
        for _ in 0..12 {
            let d = expire(&t);
            if let Some(e @ TableEvent::SeatHandedToBot { .. }) = d.events.last() {
                handed.get_or_insert(e.clone());
            }
            apply(&mut t, d);
            if handed.is_some() {
                break;
            }
        }
        let Some(TableEvent::SeatHandedToBot { seat, player }) = handed else {
            panic!("no hand-over")
        };
        assert_eq!(seat, first);
        assert!(t.bot_holds(seat));
        assert_eq!(t.bot_level_of(seat), Some(Level::Strong));
        // A stale timeout (an older turn) is refused.
        let hand = t.hand.as_ref().unwrap();
        assert_eq!(
            t.decide_server(hand.turn.seat, &Command::Timeout, Some((1, 0)), &[1; 32]),
            Err(TableError::StaleTimeout)
        );
        let back = t.decide_reclaim(&player).unwrap();
        assert_eq!(
            back.events,
            vec![TableEvent::SeatReclaimed { seat, player }]
        );
        apply(&mut t, back);
        assert!(!t.bot_holds(seat));
        assert_eq!(t.absence.expiries[seat as usize], 0);
    }

    #[test]
    fn a_turn_played_in_between_resets_the_count_and_people_are_not_bots() {
        let people = ["a", "b", "c", "d"].map(|p| Some(format!("players/{p}")));
        let mut t = table(people);
        let first = t.hand.as_ref().unwrap().turn.seat;
        let d = expire(&t);
        apply(&mut t, d);
        assert_eq!(t.absence.expiries[first as usize], 1);
        // The next seats time out; then the first seat plays its own turn (draw, discard).
        for _ in 0..3 {
            let d = expire(&t);
            apply(&mut t, d);
        }
        assert_eq!(t.hand.as_ref().unwrap().turn.seat, first);
        let player = t.seats[first as usize].clone().unwrap();
        let draw = TableCommand::Play {
            player: player.clone(),
            command: Command::Draw,
        };
        let d = t.decide(&draw, &[2; 32]).unwrap();
        apply(&mut t, d);
        let tile = t.seat_view(first).unwrap().rack[0];
        let discard = TableCommand::Play {
            player,
            command: Command::Discard { tile },
        };
        let d = t.decide(&discard, &[2; 32]).unwrap();
        apply(&mut t, d);
        assert_eq!(t.absence.expiries[first as usize], 0);
        let next = t.hand.as_ref().unwrap().turn.seat;
        assert_eq!(
            t.decide_server(next, &Command::Draw, None, &[2; 32]),
            Err(TableError::NotBotSeat(next))
        );
    }

    #[test]
    fn a_bot_seat_plays_through_the_server_command() {
        let mut seats: [Option<String>; 4] =
            std::array::from_fn(|s| Some(bot_name(Level::Easy, s as Seat)));
        seats[0] = Some("players/a".into());
        let t = table(seats);
        assert!(!t.bot_holds(0));
        assert!(t.bot_holds(1));
        assert_eq!(t.bot_level_of(1), Some(Level::Easy));
    }
}
