//! The okey scoring: a ledger of every point from the table events, match results, standings,
//! ratings and leaderboards, and every hand re-verified.
//!
//! Layers, bottom up: `skill` (which matches are
//! rated and the Weng-Lin update, pure), `period` (the UTC periods, pure) and `settings` →
//! `projection` (the fold of a table's public events into ledger rows and records, pure;
//! each finished hand re-derived by `okey_table::verify`, the check `okeyctl verify` makes too) →
//! `store` (a batch of events applied in one transaction), `ratings` (ratings and leaderboards
//! kept in it) and `reads` (what the API reads) → `consumer` (the JetStream consumer) and `grpc`
//! (the transport, the only module that knows the generated okey.v1 types) → `startup`.

pub mod consumer;
pub mod grpc;
pub mod period;
pub mod projection;
pub mod ratings;
pub mod reads;
pub mod settings;
pub mod skill;
pub mod startup;
pub mod store;
