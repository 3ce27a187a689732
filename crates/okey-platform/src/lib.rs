//! What every okey service stands on: typed settings, telemetry, the gRPC host with health,
//! reflection and graceful stop, connections to PostgreSQL, NATS and Redis, the limits' counters
//! in Redis, the error model's reasons and status builders, the checks of request text, and
//! access-token checks.
//!
//! Services wire these in `main.rs` and their `startup` module; nothing here knows the game.

pub mod auth;
pub mod command;
pub mod counters;
pub mod deadline;
pub mod decode;
pub mod dependencies;
pub mod fields;
pub mod jwks;
pub mod metrics;
pub mod occupant;
pub mod page_token;
pub mod rule_set;
pub mod server;
pub mod service_token;
pub mod settings;
pub mod status;
pub mod streams;
pub mod table_events;
pub mod telemetry;
/// Real-infrastructure helpers and the test signing key, for tests only: compiled with the
/// `test-util` feature, which only dev-dependencies enable.
#[cfg(any(test, feature = "test-util"))]
pub mod testing;

pub use decode::MAX_REQUEST_BYTES;
pub use dependencies::{Dependencies, DependencyError, Needs};
pub use server::{ServerError, ServiceHost, build_then_serve, shutdown_signal};
pub use settings::{Secret, ServiceKind, ServiceSettings, Settings, SettingsError};

/// Re-exported so services need no direct sqlx dependency just to name a migrator.
pub use sqlx::migrate::Migrator;
