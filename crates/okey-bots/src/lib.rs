//! Computer players for 101 Okey. A bot is handed one [`SeatView`] — its own rack and what the
//! whole table may see — and answers with the next [`Command`] for that seat. It never sees a
//! [`okey_rules::Hand`], so it cannot look at another rack or the pile: whatever it asks for goes
//! through `Hand::decide` like a person's command.
//!
//! Two levels: [`Easy`] is seed 002's practice opponent (open when the best melds reach the
//! threshold, lay off what fits, discard the highest loose tile); [`Strong`] plans its opening,
//! weighs pairs against melds, takes the side discard when it helps, retrieves okeys when it pays
//! and never throws away a penalty. At a `called` table both call a playable discard (and only
//! a playable one). Both are deterministic: the same views give the same commands.

mod easy;
mod rack;
mod strong;

use std::fmt;
use std::str::FromStr;

use okey_rules::{Command, Seat, SeatView};

pub use easy::Easy;
pub use strong::Strong;

/// A computer player. It is asked only when it is its seat's turn and the hand is not over, and
/// answers from the view alone. It may remember its own earlier commands in the hand, never
/// anything it was not shown; both levels here remember nothing (the table service asks a fresh
/// bot for each command).
pub trait Bot {
    fn level(&self) -> Level;

    /// The next command for `view.seat`.
    fn act(&mut self, view: &SeatView) -> Command;
}

/// How well a bot plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Easy,
    Strong,
}

/// The prefix of a bot occupant's name (see [`Level::occupant`]).
pub const OCCUPANT_PREFIX: &str = "bots/";

/// Whether a seat occupant's name is a bot's (`bots/…`), whatever its level.
pub fn is_bot(occupant: &str) -> bool {
    occupant.starts_with(OCCUPANT_PREFIX)
}

impl Level {
    pub const ALL: [Level; 2] = [Level::Easy, Level::Strong];

    pub fn name(self) -> &'static str {
        match self {
            Level::Easy => "easy",
            Level::Strong => "strong",
        }
    }

    /// The fixed rating a bot of this level plays at, on the scoring service's rating scale
    /// (a new player starts at 1500): a person's rated match against a bot seat is rated as
    /// against a player of this rating (the bot's own never moves), and matchmaking places the
    /// bots it adds in the same rating windows as people.
    pub const fn rating(self) -> i32 {
        match self {
            Level::Easy => 1200,
            Level::Strong => 1700,
        }
    }

    /// The occupant name of a bot of this level sitting in `seat`: `bots/{level}-{seat}`, never
    /// a `players/…` name, so a bot joins, plays and is shown through the same paths as a person.
    pub fn occupant(self, seat: Seat) -> String {
        format!("{OCCUPANT_PREFIX}{self}-{seat}")
    }

    /// The level of a bot seat's occupant name ([`Level::occupant`]); `None` for a person or
    /// anything else.
    pub fn of_occupant(name: &str) -> Option<Level> {
        let rest = name.strip_prefix(OCCUPANT_PREFIX)?;
        Level::ALL.into_iter().find(|l| {
            rest.strip_prefix(l.name())
                .is_some_and(|r| r.is_empty() || r.starts_with('-'))
        })
    }

    /// A fresh bot of this level, with nothing remembered.
    pub fn bot(self) -> Box<dyn Bot> {
        match self {
            Level::Easy => Box::new(Easy),
            Level::Strong => Box::new(Strong),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A bot level name that is not one of ours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownLevel(pub String);

impl fmt::Display for UnknownLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a bot level: use easy or strong", self.0)
    }
}

impl std::error::Error for UnknownLevel {}

impl FromStr for Level {
    type Err = UnknownLevel;

    fn from_str(s: &str) -> Result<Level, UnknownLevel> {
        Level::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| UnknownLevel(s.to_string()))
    }
}
