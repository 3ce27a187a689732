//! The okey matchmaking: quick play (tickets grouped by rule set into tables, bots after a wait),
//! private rooms joined by code and password, and the lobby of public rooms.
//!
//! `startup` wires the platform pieces together; `grpc` serves the API, `tables` calls the table
//! service, `ratings` asks the scoring service for ratings and `wire` holds the conversions they
//! share: the only modules that know the generated okey.v1 types. `service` is what the API does, `store` the PostgreSQL truth (with the atomic
//! claim), `matcher` the loop every replica runs, `notices` the change notifications that drive the
//! streams, `limiter` the rate limit on code and password guesses, `clock` where time comes from,
//! `domain` the plain types (with the rating windows), `settings` the service's own settings
//! (`[matchmaking]`).

pub mod clock;
pub mod domain;
pub mod grpc;
pub mod limiter;
pub mod matcher;
pub mod notices;
pub mod ratings;
pub mod service;
pub mod settings;
pub mod startup;
pub mod store;
pub mod tables;
pub mod wire;
