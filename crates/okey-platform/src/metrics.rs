//! Metrics: OpenTelemetry instruments, exported over OTLP with the traces when
//! `telemetry.otlp_endpoint` is set (by `telemetry::init`), and a no-op otherwise.
//!
//! Every service records `rpc.server.call.duration` (seconds; `rpc.system`, `rpc.service`,
//! `rpc.method`, `rpc.grpc.status_code`, `error.type` on failure) through
//! `okey_telemetry::GrpcServerLayer`, mounted by [`crate::ServiceHost`] on every API, and
//! `rpc.client.call.duration` for the calls it makes through `telemetry::traced`. Services add
//! their own instruments from [`meter`]; their names start with `okey.{service}.`.

pub use opentelemetry::KeyValue;
pub use opentelemetry::metrics::{Counter, Histogram, Meter};

/// The meter every okey instrument is made from (the global provider's).
pub fn meter() -> Meter {
    opentelemetry::global::meter("okey")
}
