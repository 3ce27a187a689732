//! The okey matchmaking: public tickets and private rooms.
//!
//! `startup` wires the platform pieces together; `grpc` is the transport and the only module
//! that knows the generated okey.v1 types.

pub mod grpc;
pub mod startup;
