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
    /// `players/{id}`, and the display name their access token carried (empty: not known).
    Player {
        name: String,
        display_name: String,
    },
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

/// The rating a ticket searches with when the scoring service has none for its player (a new
/// player's, on the scoring service's scale).
pub const NEW_PLAYER_RATING: i32 = 1500;

/// How far from its own rating a ticket accepts the others of its table, widening with its wait
/// (setting `matchmaking.rating_windows`, e.g. `0:100,5:250,10:any`: ±100 from the start, ±250
/// after 5 s, anyone after 10 s). Steps are seconds waited and the half-width in rating points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RatingWindows(Vec<(u64, Option<u32>)>);

impl RatingWindows {
    /// Reads `secs:width` steps separated by commas, `any` for no limit, in increasing seconds,
    /// the first at 0 s.
    pub fn parse(text: &str) -> Result<RatingWindows, String> {
        let mut steps = Vec::new();
        for step in text.split(',').map(str::trim) {
            let (secs, width) = step
                .split_once(':')
                .ok_or_else(|| format!("`{step}` is not seconds:width"))?;
            let secs: u64 = secs
                .trim()
                .parse()
                .map_err(|_| format!("`{secs}` is not a number of seconds"))?;
            let width = match width.trim() {
                "any" => None,
                w => Some(
                    w.parse::<u32>()
                        .map_err(|_| format!("`{w}` is not a rating width or `any`"))?,
                ),
            };
            if let Some((before, _)) = steps.last()
                && *before >= secs
            {
                return Err("the steps' seconds must increase".into());
            }
            steps.push((secs, width));
        }
        if steps.first().map(|s| s.0) != Some(0) {
            return Err("the first step is at 0 s".into());
        }
        Ok(RatingWindows(steps))
    }

    /// The half-width after waiting `waited` seconds; `None`: anyone.
    pub fn width(&self, waited: i64) -> Option<u32> {
        self.0
            .iter()
            .rev()
            .find(|(secs, _)| waited >= *secs as i64)
            .map_or(self.0.first().and_then(|s| s.1), |s| s.1)
    }

    /// Whether two tickets accept each other at `now` (each from its own window).
    pub fn fit(&self, a: &Waiting, b: &Waiting, now: DateTime<Utc>) -> bool {
        self.accepts(a, b.rating, now) && self.accepts(b, a.rating, now)
    }

    /// Whether ticket `a` accepts a player of `rating` at `now` (from its own window).
    fn accepts(&self, a: &Waiting, rating: i32, now: DateTime<Utc>) -> bool {
        match self.width((now - a.created_at).num_seconds()) {
            None => true,
            Some(width) => {
                (i64::from(a.rating) - i64::from(rating)).unsigned_abs() <= u64::from(width)
            }
        }
    }

    /// Tables of four from `waiting` (longest waiting first), each ticket's window holding
    /// every other's rating: the longest-waiting ticket not yet placed takes, in order of
    /// waiting, every ticket that it and those already with it accept, until four; a ticket
    /// that finds no three leaves the others to try. Returns the indices of each table.
    pub fn tables(&self, waiting: &[Waiting], now: DateTime<Utc>) -> Vec<[usize; 4]> {
        let mut placed = vec![false; waiting.len()];
        let mut tables = Vec::new();
        for (first, _) in waiting.iter().enumerate() {
            if placed[first] {
                continue;
            }
            let mut group = vec![first];
            for (other, candidate) in waiting.iter().enumerate().skip(first + 1) {
                if group.len() == 4 {
                    break;
                }
                let fits =
                    !placed[other] && group.iter().all(|&g| self.fit(&waiting[g], candidate, now));
                if fits {
                    group.push(other);
                }
            }
            if let [a, b, c, d] = group[..] {
                for &g in &group {
                    placed[g] = true;
                }
                tables.push([a, b, c, d]);
            }
        }
        tables
    }
}

/// A searching ticket as the matcher groups it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub created_at: DateTime<Utc>,
    pub rating: i32,
}

/// The level of the bots a ticket gets after its wait: the level it asked for, or for the
/// server's default the bot level whose fixed rating (`okey_bots::Level::rating`: easy 1200,
/// strong 1700) is nearer the ticket's rating (a tie goes to the strong bot).
pub fn bot_level_for(asked: BotLevel, rating: i32) -> BotLevel {
    if asked != BotLevel::Default {
        return asked;
    }
    let easy = (rating - okey_bots::Level::Easy.rating()).abs();
    let strong = (rating - okey_bots::Level::Strong.rating()).abs();
    if easy < strong {
        BotLevel::Easy
    } else {
        BotLevel::Hard
    }
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
    /// RemoveRoomMember naming the host (sent as `not_room_member`: the host is no member to
    /// remove).
    #[error("the host is not a member who can be removed: the host leaves with LeaveRoom")]
    HostNotRemovable,
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
    fn rating_windows_widen_with_the_wait() {
        let w = RatingWindows::parse("0:100, 5:250, 10:any").unwrap();
        assert_eq!(
            (w.width(0), w.width(4), w.width(5), w.width(9)),
            (Some(100), Some(100), Some(250), Some(250))
        );
        assert_eq!(w.width(10), None);
        assert!(RatingWindows::parse("5:100").is_err());
        assert!(RatingWindows::parse("0:100,0:200").is_err());
        assert!(RatingWindows::parse("0:wide").is_err());
    }

    #[test]
    fn far_apart_ratings_share_a_table_only_once_every_window_holds_them() {
        let w = RatingWindows::parse("0:100,5:250,10:any").unwrap();
        let t0 = DateTime::<Utc>::UNIX_EPOCH;
        let at = |secs: i64, rating: i32| Waiting {
            created_at: t0 + chrono::Duration::seconds(secs),
            rating,
        };
        // Two near 2000 and two near 1000, all waiting since 0 s, and four new at 1500.
        let waiting = [
            at(0, 2000),
            at(0, 1000),
            at(0, 2050),
            at(0, 980),
            at(5, 1500),
            at(5, 1520),
            at(5, 1480),
            at(5, 1500),
        ];
        let s = |secs: i64| t0 + chrono::Duration::seconds(secs);
        assert_eq!(w.tables(&waiting[..4], s(0)), Vec::<[usize; 4]>::new());
        assert_eq!(
            w.tables(&waiting, s(5)),
            vec![[4, 5, 6, 7]],
            "±250 is not enough"
        );
        assert_eq!(w.tables(&waiting[..4], s(10)), vec![[0, 1, 2, 3]]);
        // Only when every one of the four accepts: a new ticket holds a far table back.
        let mixed = [at(0, 2000), at(0, 1000), at(0, 2050), at(10, 980)];
        assert_eq!(w.tables(&mixed, s(10)), Vec::<[usize; 4]>::new());
        assert_eq!(w.tables(&mixed, s(20)), vec![[0, 1, 2, 3]]);
    }

    #[test]
    fn the_default_bot_level_is_the_one_nearest_the_rating() {
        assert_eq!(bot_level_for(BotLevel::Default, 1100), BotLevel::Easy);
        assert_eq!(bot_level_for(BotLevel::Default, 1500), BotLevel::Hard);
        assert_eq!(bot_level_for(BotLevel::Easy, 2400), BotLevel::Easy);
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
