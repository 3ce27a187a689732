//! Library side of `okeyctl`: the conformance runner, self-play, the demo match, hands fetched
//! from the table service's API (for replays, exports and verification), so tests and benches
//! use the same code as the command line.

pub mod client;
pub mod conformance;
pub mod demo;
pub mod history;
pub mod local;
pub mod replay;
pub mod retry;
pub mod simulate;
pub mod verify;
