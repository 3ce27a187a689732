//! Library side of `okeyctl`: the conformance runner and self-play, so tests and benches use the
//! same code as the command line.

pub mod conformance;
pub mod replay;
pub mod simulate;
