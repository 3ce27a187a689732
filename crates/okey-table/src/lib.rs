//! The table as a pure crate: the aggregate (seats, the match, the hand in progress, absence and
//! the hand-over to bots), its commands and errors, the table events with their stable names,
//! what each viewer is shown of an event, the envelope published on NATS, and a hand rebuilt from
//! a stream. No I/O: no async runtime, database, network, clock or OS randomness (checked by
//! `tests/tidy`). The table service is its shell; accounts' statistics, scoring and `okeyctl`
//! read table events only through these types.
//!
//! Layers, bottom up: [`event`] (what is stored) → [`seeding`] (the deal seed derived from the
//! server seed and the client seeds) → [`shown`] (what a viewer sees, the envelope)
//! → [`table`] and [`absence`] (the aggregate) → [`history`] (one hand of a stream: its events,
//! who may read them, the hand rebuilt for the engine) and [`verify`] (a finished hand
//! re-derived from what was published, the one check scoring and `okeyctl verify` make) →
//! [`steps`] (a hand step by step with every rack, as support's replay page shows it).

pub mod absence;
pub mod event;
pub mod history;
pub mod seeding;
pub mod shown;
pub mod steps;
pub mod table;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;
pub mod verify;

pub use event::{
    Admission, Noted, Origin, Seed, SeedError, Seeding, TableEvent, hex, seed_from_hex, seed_hash,
    seed_of_hex,
};
pub use shown::{Published, Shown, show};
pub use table::{Decision, Phase, Table, TableCommand, TableError, server_command};
