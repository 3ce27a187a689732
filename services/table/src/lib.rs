//! The okey table: the event-sourced table engine.
//!
//! `domain` is the pure table (the `okey-table` crate: seats, match, hand; decide and evolve over
//! `okey-rules`; the table events and what each viewer sees of them); `store`
//! is the Postgres event store; `service` loads, decides, appends and streams; `outbox` publishes
//! to NATS JetStream; `grpc` is the transport and the only module that knows the generated
//! okey.v1 types; `startup` wires it all.
//!
//! Live tables: `absence` (`okey_table::absence`: expiries in a row, a bot for an absent player,
//! bots in seats; pure), `deadlines` (turn deadlines and bot moves in Redis, claimed by one process,
//! played through the command path), `presence` (connected / away / gone in Redis), `chat`
//! (table and partner chat over NATS, kept in Postgres).

pub mod chat;
pub mod deadlines;
pub mod grpc;
pub mod outbox;
pub mod presence;
pub mod service;
pub mod startup;
pub mod store;

/// The pure table and its absence rules, under the names the service's modules use.
pub use okey_table::{self as domain, absence};
