//! Logs, traces and metrics for every okey process (the services through `okey-platform`, and
//! `okeyctl`), in OpenTelemetry's conventions: the `tracing` subscriber and the OTLP export with
//! the process's resource (`setup`), W3C trace context in gRPC metadata and stored maps
//! (`propagation`), and one span and one duration per gRPC call on each side (`server`,
//! `client`, both through `rpc`), so one move is one trace across processes.
//!
//! Nothing here knows the game, NATS or a database: the platform adds the messaging spans.

mod client;
mod propagation;
mod rpc;
mod server;
mod setup;

pub use client::{Traced, TracedChannel, traced, traced_with};
pub use propagation::{
    context_as_map, context_from_http_headers, context_from_map, current_context,
    current_context_as_map, inject_into_http_headers, inject_into_metadata,
};
pub use rpc::{Observed, Rpc, code_name};
pub use server::{GrpcServer, GrpcServerLayer};
pub use setup::{
    Export, LogFormat, Telemetry, TelemetryError, TelemetrySettings, init, init_with, resource,
};
