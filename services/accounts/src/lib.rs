//! The okey accounts: guest and permanent sign-in, sessions, profiles, statistics and the token keys.
//!
//! `startup` wires the platform pieces together; `grpc` is the transport and the only module
//! that knows the generated okey.v1 types; `accounts` holds what the service does, `keys` the
//! signing keys, `limiter` the sign-in attempt limits, `statistics` the consumer of table events
//! and `settings` the service's own settings (signing keys, token lifetimes, service clients).

pub mod accounts;
pub mod grpc;
pub mod keys;
pub mod limiter;
pub mod settings;
pub mod startup;
pub mod statistics;
