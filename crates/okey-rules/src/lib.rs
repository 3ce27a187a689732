//! 101 Okey rules engine.
