//! The table's events: what is stored in a table's stream (JSON tagged by `type`), with the stable
//! names stored as `event_type`. Every reader of table events (the table service, accounts'
//! statistics, scoring, `okeyctl`) reads them through these types, so a change to an event is a
//! compile error in every reader rather than a silent drift.

use okey_rules::matches::HandResult;
use okey_rules::{Event, HandEnd, RuleSet, Seat, Tile};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The 32 bytes a deal is a function of.
pub type Seed = [u8; 32];

/// Who made a table: an operator (tools, support), quick play, or a private room. Recorded in
/// `TableCreated` so that scoring can leave private-room tables out of standings and ratings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    #[default]
    Operator,
    QuickPlay,
    PrivateRoom,
}

/// Where a table came from and whom it admits, fixed at creation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Admission {
    pub origin: Origin,
    /// When not empty, only these players (`players/{id}`) may take a seat.
    #[serde(default)]
    pub members: Vec<String>,
    /// Whether callers without a seat (and not among `members`) may read the table and follow it.
    #[serde(default = "spectators_by_default")]
    pub spectators: bool,
}

fn spectators_by_default() -> bool {
    true
}

impl Default for Admission {
    fn default() -> Admission {
        Admission {
            origin: Origin::Operator,
            members: Vec::new(),
            spectators: true,
        }
    }
}

impl Admission {
    /// May `player` sit here (`members` empty, or among them)?
    pub fn may_sit(&self, player: &str) -> bool {
        self.members.is_empty() || self.members.iter().any(|m| m == player)
    }

    /// May `player`, not seated, read and follow the table?
    pub fn may_watch(&self, player: &str) -> bool {
        self.spectators || self.members.iter().any(|m| m == player)
    }
}

/// Everything that happens at a table, in the past tense. Stored as JSON (tagged by `type`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum TableEvent {
    /// Always version 1 of a table's stream.
    TableCreated {
        rules: RuleSet,
        /// Players (`players/{id}`) seated at creation.
        seats: [Option<String>; 4],
        /// Where the table came from and who may sit and watch (tables created before it was
        /// recorded read as an operator's table open to everyone).
        #[serde(default)]
        admission: Admission,
        /// Hex sha256 of the first hand's server seed: the table's commitment to it, made before
        /// any client seed for that hand is taken (tables created before client seeds: none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_seed_sha256: Option<String>,
    },
    /// A player sat down (or, already seated, told the table their display name).
    SeatTaken {
        seat: Seat,
        player: String,
        /// The display name the player's access token carried (see `Table::names`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// The player left the seat: free before the match, played by a bot during it
    /// (`bot_substitute`) until that player joins again.
    SeatLeft {
        seat: Seat,
        player: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        bot_substitute: bool,
    },
    /// A hand was dealt from a seed whose hash is published now and whose value is revealed when
    /// the hand ends.
    HandDealt {
        hand_number: u32,
        first: Seat,
        indicator: Tile,
        /// Hex sha256 of the deal seed.
        seed_sha256: String,
        /// How the deal seed was made from the server seed and the client seeds, with every
        /// input (`docs/fairness.md`); `None`: a hand dealt before client seeds, from a seed drawn
        /// as it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seeding: Option<Seeding>,
    },
    /// A seated player sent a client seed for a hand not dealt yet (its server seed is already
    /// committed). Public: without the server seed it tells nothing of the deal.
    ClientSeedSent {
        hand_number: u32,
        seat: Seat,
        player: String,
        /// The 32 bytes, hex.
        seed: String,
    },
    /// One engine event of the current hand (never `HandStarted` or `HandEnded`).
    Played {
        hand_number: u32,
        event: Event,
        /// For melds reaching the table: the number of the first one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_meld: Option<usize>,
        /// What the table knows of the event that the engine's event does not say.
        #[serde(default, skip_serializing_if = "Noted::is_empty")]
        noted: Noted,
    },
    /// The engine's `HandEnded`, with what the match made of it and the revealed seed.
    HandEnded {
        hand_number: u32,
        end: HandEnd,
        result: HandResult,
        /// Running match totals after this hand.
        totals: [i64; 4],
        /// Hex of the deal seed.
        seed: String,
        /// Every rack at the end (public now).
        racks: [Vec<Tile>; 4],
        /// Hex of the hand's server seed, when the deal seed was derived from one (see
        /// [`Seeding`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_seed: Option<String>,
    },
    MatchEnded {
        totals: [i64; 4],
        /// Lowest total (one seat, or a team); empty on a draw.
        winners: Vec<Seat>,
    },
    /// After `expiries_before_bot` expiries in a row a bot plays the seat until its player comes
    /// back (see `absence`).
    SeatHandedToBot { seat: Seat, player: String },
    /// The absent player came back (a command or an update stream) and plays the seat again.
    SeatReclaimed { seat: Seat, player: String },
}

/// How a deal seed was derived, with every input (`docs/fairness.md`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seeding {
    /// The derivation's version: 1 is HMAC-SHA256 of the server seed over the client seeds.
    pub derivation: u8,
    /// Hex sha256 of this hand's server seed, as committed before its client seeds were taken.
    pub server_seed_sha256: String,
    /// The table version of that commitment (the table's creation, or the previous deal).
    pub committed_at: u64,
    /// The client seed each seat sent for this hand (hex), in seat order; `None`: no seed.
    pub client_seeds: [Option<String>; 4],
    /// Hex sha256 of the next hand's server seed: the commitment for the next hand.
    pub next_server_seed_sha256: String,
}

/// What the table adds to an engine event, from the state it was decided on (events stored
/// before these were noted have none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Noted {
    /// `TurnTimedOut`: the seat's expiries in a row, this one included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_a_row: Option<u8>,
    /// `PlayableCalled`: the discard that was called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub called: Option<Tile>,
    /// `SideDiscardReturned`: the turn's table actions were undone with it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rolled_back: bool,
}

impl Noted {
    pub fn is_empty(&self) -> bool {
        *self == Noted::default()
    }
}

impl TableEvent {
    /// Who sits where after this event, from who sat where before it: the one rule for seating,
    /// used by `Table::evolve` and by the update streams, which show each event as the seat
    /// their caller holds at that event's version.
    pub fn reseat(&self, seats: &mut [Option<String>; 4]) {
        match self {
            TableEvent::TableCreated { seats: created, .. } => {
                for (s, p) in created.iter().enumerate() {
                    if p.is_some() {
                        seats[s] = p.clone();
                    }
                }
            }
            TableEvent::SeatTaken { seat, player, .. } => {
                seats[*seat as usize] = Some(player.clone())
            }
            TableEvent::SeatLeft { seat, .. } => seats[*seat as usize] = None,
            _ => {}
        }
    }

    /// The stable name stored as `event_type`.
    pub fn name(&self) -> &'static str {
        match self {
            TableEvent::TableCreated { .. } => "TableCreated",
            TableEvent::SeatTaken { .. } => "SeatTaken",
            TableEvent::SeatLeft { .. } => "SeatLeft",
            TableEvent::HandDealt { .. } => "HandDealt",
            TableEvent::ClientSeedSent { .. } => "ClientSeedSent",
            TableEvent::Played { event, .. } => event.name(),
            TableEvent::HandEnded { .. } => "HandEnded",
            TableEvent::MatchEnded { .. } => "MatchEnded",
            TableEvent::SeatHandedToBot { .. } => "SeatHandedToBot",
            TableEvent::SeatReclaimed { .. } => "SeatReclaimed",
        }
    }
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hex sha256 of a seed, as announced in `HandDealt`.
pub fn seed_hash(seed: &Seed) -> String {
    hex(&Sha256::digest(seed))
}

/// The 32 bytes of 64 hex digits.
pub fn seed_of_hex(hex_seed: &str) -> Result<Seed, SeedError> {
    let bytes = (0..hex_seed.len())
        .step_by(2)
        .map(|i| {
            hex_seed
                .get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or(SeedError::NotHex)?;
    bytes.try_into().map_err(|_| SeedError::NotHex)
}

/// The 32 seed bytes from the hex revealed in [`TableEvent::HandEnded`], checked against the
/// sha256 announced in [`TableEvent::HandDealt`].
pub fn seed_from_hex(hex_seed: &str, announced_sha256: &str) -> Result<Seed, SeedError> {
    let seed = seed_of_hex(hex_seed)?;
    let digest = seed_hash(&seed);
    if !digest.eq_ignore_ascii_case(announced_sha256) {
        return Err(SeedError::NotCommitted {
            digest,
            announced: announced_sha256.to_owned(),
        });
    }
    Ok(seed)
}

/// Why a revealed seed cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SeedError {
    #[error("the seed is not 64 hex digits")]
    NotHex,
    #[error("its sha256 {digest} is not the {announced} announced at the deal")]
    NotCommitted { digest: String, announced: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revealed_seed_must_hash_to_the_commitment() {
        let seed = [7u8; 32];
        assert_eq!(seed_from_hex(&hex(&seed), &seed_hash(&seed)), Ok(seed));
        assert_eq!(
            seed_from_hex(&hex(&seed).to_uppercase(), &seed_hash(&seed)),
            Ok(seed)
        );
        assert!(matches!(
            seed_from_hex(&hex(&[8u8; 32]), &seed_hash(&seed)),
            Err(SeedError::NotCommitted { .. })
        ));
        assert_eq!(
            seed_from_hex("zz", &seed_hash(&seed)),
            Err(SeedError::NotHex)
        );
        assert_eq!(
            seed_from_hex(&hex(&[7u8; 31]), &seed_hash(&seed)),
            Err(SeedError::NotHex)
        );
    }
}
