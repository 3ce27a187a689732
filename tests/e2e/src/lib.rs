//! The whole platform end to end, for this crate's tests: the four services as processes of their
//! own from the built binaries ([`platform`]), servers a fault test may stop ([`servers`]), a TCP
//! proxy that adds latency, drops and resets ([`proxy`]), players that use only the public gRPC
//! APIs as the mobile app does ([`player`]), what the table's own events say every other record
//! must be ([`truth`]), the comparison of those records through the APIs ([`check`]), the
//! matches a test plays and the faults it injects ([`scenario`]), and the table the suite prints
//! ([`report`]).
//!
//! Layers, bottom up (declared in `Cargo.toml`, checked by `tests/tidy`): `report`, `proxy`,
//! `servers` → `truth`, `platform`, `player` → `check` → `scenario`.

pub mod check;
pub mod platform;
pub mod player;
pub mod proxy;
pub mod report;
pub mod scenario;
pub mod servers;
pub mod truth;
