//! The okey scoring: a ledger of every point from the table events, match results, standings,
//! and every hand re-verified.
//!
//! Layers, bottom up: `verify` (a finished hand re-derived, pure) → `projection` (the fold of a
//! table's public events into ledger rows and records, pure) → `store` (one event applied in
//! one transaction) and `reads` (what the API reads) → `consumer` (the JetStream consumer) and
//! `grpc` (the transport, the only module that knows the generated okey.v1 types) → `startup`.

pub mod consumer;
pub mod grpc;
pub mod projection;
pub mod reads;
pub mod startup;
pub mod store;
pub mod verify;
