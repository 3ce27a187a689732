//! The okey table: the event-sourced table engine, in one-way layers (each imports only the
//! ones below it; `tests/tidy` checks it against `[package.metadata.okey] layers`):
//!
//! * wiring: `startup` builds the service from its settings;
//! * transport: `grpc` — the only module that knows the generated okey.v1 types, with the one
//!   mapping from errors to `tonic::Status`;
//! * application: `live` (turn deadlines and bot moves played through the command path) over
//!   `service` (load by folding, decide, append with retries, stream);
//! * adapters: `outbox` (NATS JetStream publisher) over `store` (the PostgreSQL event store),
//!   `deadlines` (what is due next, in Redis), `presence` (Redis), `chat` (PostgreSQL and NATS);
//! * leaves: `clock`, `ids`, `settings` (the service's own settings sections);
//! * the pure table below them all: the `okey-table` crate (seats, match, hand; decide and
//!   evolve over `okey-rules`; the events and what each viewer sees), named `domain` here, with
//!   its `absence` rules.

pub mod chat;
pub mod clock;
pub mod deadlines;
pub mod grpc;
pub mod ids;
pub mod live;
pub mod outbox;
pub mod presence;
pub mod service;
pub mod settings;
pub mod startup;
pub mod store;

/// The pure table and its absence rules, under the names the service's modules use.
pub use okey_table::{self as domain, absence};
