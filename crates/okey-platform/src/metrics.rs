//! Metrics: OpenTelemetry instruments, exported over OTLP with the traces when
//! `telemetry.otlp_endpoint` is set (`crate::telemetry::init`), and a no-op otherwise.
//!
//! Every service records `rpc.server.call.duration` (seconds; attributes `rpc.method`, the full
//! gRPC path, and `rpc.grpc.status_code`) through [`GrpcMetricsLayer`], mounted by
//! [`crate::ServiceHost`] on every API. Services add their own instruments from
//! [`meter`]; their names start with `okey.{service}.`.

use std::task::{Context, Poll};
use std::time::Instant;

pub use opentelemetry::KeyValue;
pub use opentelemetry::metrics::{Counter, Histogram, Meter};

/// The meter every okey instrument is made from (the global provider's).
pub fn meter() -> Meter {
    opentelemetry::global::meter("okey")
}

/// Histogram bucket bounds for call durations, in seconds: 0.5 ms to 10 s.
const DURATION_BOUNDS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Records how long each gRPC call took and how it ended.
///
/// The status is the response's `grpc-status` header: a call that failed (every refusal, every
/// error a handler returns) is answered trailers-only, with its status in the headers; a call
/// whose headers carry none succeeded or fails later in a stream's trailers, and counts as OK
/// (0). A stream's duration runs until its response headers are sent, not until it ends.
#[derive(Clone, Debug)]
pub struct GrpcMetricsLayer {
    duration: Histogram<f64>,
}

impl GrpcMetricsLayer {
    /// Instruments from `meter` (tests pass their own; services use [`GrpcMetricsLayer::default`]).
    pub fn new(meter: &Meter) -> GrpcMetricsLayer {
        GrpcMetricsLayer {
            duration: meter
                .f64_histogram("rpc.server.call.duration")
                .with_unit("s")
                .with_description("How long a gRPC call took to answer, by method and status.")
                .with_boundaries(DURATION_BOUNDS.to_vec())
                .build(),
        }
    }
}

impl Default for GrpcMetricsLayer {
    fn default() -> Self {
        GrpcMetricsLayer::new(&meter())
    }
}

impl<S> tower::Layer<S> for GrpcMetricsLayer {
    type Service = GrpcMetrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcMetrics {
            inner,
            duration: self.duration.clone(),
        }
    }
}

/// The service made by [`GrpcMetricsLayer`].
#[derive(Clone, Debug)]
pub struct GrpcMetrics<S> {
    inner: S,
    duration: Histogram<f64>,
}

impl<S, B, R> tower::Service<http::Request<B>> for GrpcMetrics<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<S::Response, S::Error>> + Send + 'static>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = request.uri().path().to_owned();
        let started = Instant::now();
        let duration = self.duration.clone();
        let future = self.inner.call(request);
        Box::pin(async move {
            let result = future.await;
            let status = match &result {
                Ok(response) => response
                    .headers()
                    .get("grpc-status")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<i64>().ok())
                    .unwrap_or(0),
                // The transport failed under the call: UNAVAILABLE.
                Err(_) => tonic::Code::Unavailable as i64,
            };
            duration.record(
                started.elapsed().as_secs_f64(),
                &[
                    KeyValue::new("rpc.method", method),
                    KeyValue::new("rpc.grpc.status_code", status),
                ],
            );
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
    use tower::{Layer, Service, ServiceExt};

    use super::*;

    #[tokio::test]
    async fn every_call_is_timed_with_its_method_and_status() {
        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter.clone()).build())
            .build();
        let layer = GrpcMetricsLayer::new(&provider.meter("test"));
        let mut service = layer.layer(tower::service_fn(|request: http::Request<()>| async move {
            let mut response = http::Response::new(());
            if request.uri().path().ends_with("Refused") {
                response
                    .headers_mut()
                    .insert("grpc-status", http::HeaderValue::from_static("9"));
            }
            Ok::<_, std::convert::Infallible>(response)
        }));
        for path in ["/okey.v1.T/Ok", "/okey.v1.T/Ok", "/okey.v1.T/Refused"] {
            let request = http::Request::builder().uri(path).body(()).unwrap();
            service.ready().await.unwrap().call(request).await.unwrap();
        }
        provider.force_flush().unwrap();

        let exported = exporter.get_finished_metrics().unwrap();
        let metric = exported
            .iter()
            .flat_map(|r| r.scope_metrics())
            .flat_map(|s| s.metrics())
            .find(|m| m.name() == "rpc.server.call.duration")
            .expect("the duration histogram is exported");
        assert_eq!(metric.unit(), "s");
        let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
            panic!("a histogram of f64: {:?}", metric.data());
        };
        let mut seen: Vec<(String, i64, u64)> = histogram
            .data_points()
            .map(|p| {
                let attr = |k: &str| {
                    p.attributes()
                        .find(|kv| kv.key.as_str() == k)
                        .map(|kv| kv.value.clone())
                        .expect("attribute present")
                };
                let code = match attr("rpc.grpc.status_code") {
                    opentelemetry::Value::I64(c) => c,
                    other => panic!("status code as a number: {other:?}"),
                };
                (attr("rpc.method").to_string(), code, p.count())
            })
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            vec![
                ("/okey.v1.T/Ok".to_owned(), 0, 2),
                ("/okey.v1.T/Refused".to_owned(), 9, 1),
            ]
        );
    }
}
