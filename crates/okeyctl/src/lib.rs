//! Library side of `okeyctl`: the conformance runner, self-play, the demo match and hand exports,
//! so tests and benches use the same code as the command line.

pub mod conformance;
pub mod demo;
pub mod hand_export;
pub mod replay;
pub mod simulate;
