//! The okey table: the event-sourced table engine.
//!
//! `domain` is the pure table (seats, match, hand; decide and evolve over `okey-rules`); `store`
//! is the Postgres event store; `service` loads, decides, appends and streams; `outbox` publishes
//! to NATS JetStream; `grpc` is the transport and the only module that knows the generated
//! okey.v1 types; `startup` wires it all.

pub mod domain;
pub mod grpc;
pub mod outbox;
pub mod service;
pub mod startup;
pub mod store;
