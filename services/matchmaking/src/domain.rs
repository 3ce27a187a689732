//! What matchmaking is about, without I/O: tickets and their states, private rooms and their
//! codes, the queue key of a rule set, and the errors every operation can end with.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use okey_rules::RuleSet;
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// Where a ticket's search is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TicketState {
    Searching,
    Matched,
    Cancelled,
    Expired,
}

impl TicketState {
    /// The store's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TicketState::Searching => "searching",
            TicketState::Matched => "matched",
            TicketState::Cancelled => "cancelled",
            TicketState::Expired => "expired",
        }
    }

    /// Reads [`Self::as_str`].
    pub fn parse(text: &str) -> TicketState {
        match text {
            "matched" => TicketState::Matched,
            "cancelled" => TicketState::Cancelled,
            "expired" => TicketState::Expired,
            _ => TicketState::Searching,
        }
    }

    /// No further change will come.
    pub fn is_final(self) -> bool {
        self != TicketState::Searching
    }
}

/// A bot's level as asked: the wire's level names (`""` is the server's default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BotLevel {
    Default,
    Easy,
    Medium,
    Hard,
}

impl BotLevel {
    /// The store's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            BotLevel::Default => "",
            BotLevel::Easy => "easy",
            BotLevel::Medium => "medium",
            BotLevel::Hard => "hard",
        }
    }

    /// Reads [`Self::as_str`].
    pub fn parse(text: &str) -> BotLevel {
        match text {
            "easy" => BotLevel::Easy,
            "medium" => BotLevel::Medium,
            "hard" => BotLevel::Hard,
            _ => BotLevel::Default,
        }
    }
}

/// A quick-play ticket.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticket {
    pub ticket_id: Uuid,
    pub player_id: Uuid,
    pub rules: RuleSet,
    /// [`rules_key`] of `rules`.
    pub rules_key: String,
    pub allow_bots: bool,
    pub bot_level: BotLevel,
    pub state: TicketState,
    /// `tables/{table}` once matched.
    pub table: Option<String>,
    pub seat: Option<i32>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// The client request id of the FindTable that opened it (a retry finds it by this).
    pub request_id: Option<String>,
    pub players_found: i32,
}

/// The queue key of an effective rule set: equal rule sets (as the engine compares them, preset
/// name included) have equal keys, different ones different keys. The engine's `RuleSet`
/// serializes its fields in declaration order, so the JSON is canonical.
pub fn rules_key(rules: &RuleSet) -> String {
    let json = serde_json::to_vec(rules).expect("rule sets serialize");
    Sha256::digest(&json)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Who sits in a seat of a table being made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Occupant {
    /// `players/{id}`.
    Player(String),
    Bot(BotLevel),
}

/// Where a room is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoomState {
    Open,
    Started,
    Closed,
}

impl RoomState {
    pub fn as_str(self) -> &'static str {
        match self {
            RoomState::Open => "open",
            RoomState::Started => "started",
            RoomState::Closed => "closed",
        }
    }

    pub fn parse(text: &str) -> RoomState {
        match text {
            "started" => RoomState::Started,
            "closed" => RoomState::Closed,
            _ => RoomState::Open,
        }
    }
}

/// A private room.
#[derive(Clone, Debug, PartialEq)]
pub struct Room {
    pub room_id: Uuid,
    pub code: String,
    pub rules: RuleSet,
    pub host: Uuid,
    /// Index = seat.
    pub members: [Option<Uuid>; 4],
    /// The members' display names, as their tokens carried them when they joined.
    pub names: BTreeMap<Uuid, String>,
    pub state: RoomState,
    pub fill_with_bots: bool,
    pub bot_level: BotLevel,
    /// `tables/{table}` once started.
    pub table: Option<String>,
    pub expires_at: DateTime<Utc>,
    pub has_password: bool,
    pub public: bool,
    pub spectators_allowed: bool,
}

impl Room {
    pub fn free_seats(&self) -> usize {
        self.members.iter().filter(|m| m.is_none()).count()
    }

    pub fn seat_of(&self, player: Uuid) -> Option<usize> {
        self.members.iter().position(|m| *m == Some(player))
    }
}

/// The characters of a room code: letters and digits without the look-alikes 0, O, 1, I and L.
pub const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// Characters in a room code.
pub const CODE_LEN: usize = 6;

/// A room code from random bytes (each byte picks a character; the alphabet has 31, so the bias
/// of `byte % 31` is below 1/8 and of no use to a guesser who is rate-limited anyway).
pub fn room_code(random: [u8; CODE_LEN]) -> String {
    random
        .iter()
        .map(|b| CODE_ALPHABET[*b as usize % CODE_ALPHABET.len()] as char)
        .collect()
}

/// A code as typed: upper-cased, spaces removed; `None` when it cannot be a code.
pub fn normalise_code(typed: &str) -> Option<String> {
    let code: String = typed
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_uppercase())
        .collect();
    (code.len() == CODE_LEN && code.bytes().all(|b| CODE_ALPHABET.contains(&b))).then_some(code)
}

/// Why a matchmaking operation failed. Nothing changed. `grpc` maps each to one status.
#[derive(Debug, thiserror::Error)]
pub enum MatchmakingError {
    #[error("no such ticket")]
    TicketNotFound,
    #[error("another ticket with other rules is searching: {0}")]
    TicketOpen(Uuid),
    #[error("the ticket is matched, expired or already taken into a table")]
    TicketClosed,
    #[error("no such room")]
    RoomNotFound,
    #[error("wrong or missing room password")]
    WrongPassword,
    #[error("too many wrong codes or passwords; try again later")]
    TooManyAttempts { retry_after: std::time::Duration },
    #[error("the room is full")]
    RoomFull,
    #[error("the room's match has started")]
    RoomStarted,
    #[error("the room is closed")]
    RoomClosed,
    #[error("the room has free seats and was not set to fill them with bots")]
    RoomNotFull,
    #[error("only the room's host may do this")]
    NotRoomHost,
    #[error("that player is not in the room")]
    NotRoomMember,
    #[error("{message}")]
    Invalid {
        field: String,
        reason: okey_platform::status::Reason,
        message: String,
    },
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("table service: {0}")]
    Tables(String),
    #[error("internal: {0}")]
    Internal(String),
}

#[cfg(test)]
mod tests {
    use okey_rules::Preset;

    use super::*;

    #[test]
    fn equal_rules_have_equal_keys_and_an_override_changes_it() {
        let classic = Preset::Classic.rules();
        assert_eq!(rules_key(&classic), rules_key(&Preset::Classic.rules()));
        let partners = RuleSet {
            partners: true,
            ..Preset::Classic.rules()
        };
        assert_ne!(rules_key(&classic), rules_key(&partners));
        assert_ne!(rules_key(&classic), rules_key(&Preset::Yudum.rules()));
    }

    #[test]
    fn codes_never_use_look_alikes_and_read_back_in_any_case() {
        for c in b"0O1IL" {
            assert!(!CODE_ALPHABET.contains(c));
        }
        let code = room_code([0, 30, 31, 200, 255, 7]);
        assert_eq!(code.len(), CODE_LEN);
        assert_eq!(normalise_code(&code.to_lowercase()), Some(code.clone()));
        assert_eq!(normalise_code(" ab cd ef"), Some("ABCDEF".into()));
        assert_eq!(normalise_code("ABCDE0"), None);
        assert_eq!(normalise_code("ABCDE"), None);
    }
}
