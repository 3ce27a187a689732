//! The server side of every gRPC call: a SERVER span named `{package.Service}/{Method}`, a
//! child of the caller's `traceparent`, with the RPC attributes and the server and peer
//! addresses, and its `rpc.server.call.duration`; both end when the response's last frame is
//! sent, so a stream's span lasts as long as the stream.

use std::task::{Context, Poll};
use std::time::Instant;

use opentelemetry::metrics::{Histogram, Meter};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::propagation::context_from_http_headers;
use crate::rpc::{Call, DURATION_BOUNDS, Observed, Rpc, Side, UNAVAILABLE};

/// Services whose calls are timed but make no span: health probes come every few seconds from
/// every prober and would bury the calls people look for.
const UNTRACED: [&str; 3] = [
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
];

/// Tower layer that traces and times every call a server answers.
#[derive(Clone, Debug)]
pub struct GrpcServerLayer {
    duration: Histogram<f64>,
}

impl GrpcServerLayer {
    /// Instruments from `meter` (tests pass their own; services use [`Default`], the global
    /// meter provider's `okey` meter).
    pub fn new(meter: &Meter) -> GrpcServerLayer {
        GrpcServerLayer {
            duration: meter
                .f64_histogram("rpc.server.call.duration")
                .with_unit("s")
                .with_description(
                    "How long a gRPC call took, to its last frame, by method and status.",
                )
                .with_boundaries(DURATION_BOUNDS.to_vec())
                .build(),
        }
    }
}

impl Default for GrpcServerLayer {
    fn default() -> Self {
        GrpcServerLayer::new(&opentelemetry::global::meter("okey"))
    }
}

impl<S> tower::Layer<S> for GrpcServerLayer {
    type Service = GrpcServer<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcServer {
            inner,
            duration: self.duration.clone(),
        }
    }
}

/// The service made by [`GrpcServerLayer`].
#[derive(Clone, Debug)]
pub struct GrpcServer<S> {
    inner: S,
    duration: Histogram<f64>,
}

impl<S, B, R> tower::Service<http::Request<B>> for GrpcServer<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    R: Send + 'static,
{
    type Response = http::Response<Observed<R>>;
    type Error = S::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, S::Error>> + Send + 'static>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let rpc = Rpc::of(request.uri().path());
        let connection = request
            .extensions()
            .get::<tonic::transport::server::TcpConnectInfo>();
        let local = connection.and_then(|c| c.local_addr());
        let peer = connection.and_then(|c| c.remote_addr());
        let span = if UNTRACED.contains(&rpc.service.as_str()) {
            tracing::Span::none()
        } else {
            tracing::info_span!(
                "grpc server call",
                otel.name = %rpc.span_name(),
                otel.kind = "server",
                rpc.system = "grpc",
                rpc.service = %rpc.service,
                rpc.method = %rpc.method,
            )
        };
        // The host the caller addressed (`:authority`), else the address it reached.
        let host = request
            .uri()
            .host()
            .map(str::to_owned)
            .or(local.map(|a| a.ip().to_string()));
        let port = request.uri().port_u16().or(local.map(|a| a.port()));
        if let Some(host) = host {
            span.set_attribute("server.address", host);
        }
        if let Some(port) = port {
            span.set_attribute("server.port", i64::from(port));
        }
        if let Some(peer) = peer {
            span.set_attribute("network.peer.address", peer.ip().to_string());
            span.set_attribute("network.peer.port", i64::from(peer.port()));
        }
        // A malformed or absent traceparent starts a new trace.
        let _ = span.set_parent(context_from_http_headers(request.headers()));
        let call = Call {
            span: span.clone(),
            side: Side::Server,
            started: Instant::now(),
            duration: self.duration.clone(),
            attributes: rpc.attributes(),
        };
        let future = {
            let _entered = span.enter();
            self.inner.call(request)
        };
        Box::pin(
            async move {
                match future.await {
                    Ok(response) => Ok(call.answered(response)),
                    Err(e) => {
                        call.finish(UNAVAILABLE, None);
                        Err(e)
                    }
                }
            }
            .instrument(span),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use http_body::{Body as _, Frame};
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry::trace::{SpanKind, Status, TraceContextExt as _, TracerProvider as _};
    use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
    use tonic::codegen::Bytes;
    use tower::{Layer, Service, ServiceExt};
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    /// A response body of given frames.
    struct Frames(VecDeque<Frame<Bytes>>);

    impl http_body::Body for Frames {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Ready(self.0.pop_front().map(Ok))
        }
    }

    fn trailers(code: &str) -> Frame<Bytes> {
        let mut map = http::HeaderMap::new();
        map.insert("grpc-status", code.parse().unwrap());
        Frame::trailers(map)
    }

    async fn drain(mut body: Observed<Frames>) {
        while let Some(frame) =
            std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await
        {
            frame.unwrap();
        }
    }

    #[tokio::test]
    async fn every_call_is_a_server_span_and_a_duration_in_the_rpc_conventions() {
        let spans = InMemorySpanExporter::default();
        let tracer_provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(tracer_provider.tracer("test")));
        let _default = tracing::subscriber::set_default(subscriber);
        let metrics = InMemoryMetricExporter::default();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics.clone()).build())
            .build();

        let layer = GrpcServerLayer::new(&meter_provider.meter("test"));
        let mut service = layer.layer(tower::service_fn(|request: http::Request<()>| async move {
            let path = request.uri().path().to_owned();
            let mut response = http::Response::new(Frames(VecDeque::new()));
            if path.ends_with("Refused") {
                // Answered at once: the status in the headers.
                response
                    .headers_mut()
                    .insert("grpc-status", http::HeaderValue::from_static("9"));
            } else if path.ends_with("Watch") || path.ends_with("Left") {
                // A stream: messages, then its status in the trailers.
                response.body_mut().0.extend([
                    Frame::data(Bytes::from_static(b"one")),
                    Frame::data(Bytes::from_static(b"two")),
                    trailers("0"),
                ]);
            } else {
                response
                    .body_mut()
                    .0
                    .extend([Frame::data(Bytes::from_static(b"ok")), trailers("0")]);
            }
            Ok::<_, std::convert::Infallible>(response)
        }));
        let caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        for path in [
            "/okey.v1.T/Ok",
            "/okey.v1.T/Refused",
            "/okey.v1.T/Watch",
            "/okey.v1.T/Left",
        ] {
            let request = http::Request::builder()
                .uri(path)
                .header("traceparent", caller)
                .body(())
                .unwrap();
            let response = service.ready().await.unwrap().call(request).await.unwrap();
            if path.ends_with("Watch") {
                assert!(
                    spans.get_finished_spans().unwrap().len() == 2,
                    "the stream is open"
                );
            }
            if path.ends_with("Left") {
                // The client reads one message and goes away.
                let mut body = response.into_body();
                std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx))
                    .await
                    .expect("a message")
                    .unwrap();
                drop(body);
                continue;
            }
            drain(response.into_body()).await;
        }
        let _ = tracer_provider.force_flush();
        meter_provider.force_flush().unwrap();

        let finished = spans.get_finished_spans().unwrap();
        assert_eq!(finished.len(), 4);
        for span in &finished {
            assert_eq!(span.span_kind, SpanKind::Server);
            assert_eq!(
                span.span_context.trace_id().to_string(),
                "4bf92f3577b34da6a3ce929d0e0e4736",
                "a child of the caller"
            );
            assert_eq!(span.parent_span_id.to_string(), "00f067aa0ba902b7");
            let attr = |k: &str| {
                span.attributes
                    .iter()
                    .find(|kv| kv.key.as_str() == k)
                    .map(|kv| kv.value.to_string())
            };
            assert_eq!(attr("rpc.system").as_deref(), Some("grpc"));
            assert_eq!(attr("rpc.service").as_deref(), Some("okey.v1.T"));
            let method = attr("rpc.method").unwrap();
            assert_eq!(span.name, format!("okey.v1.T/{method}"));
            if method == "Refused" {
                assert_eq!(attr("rpc.grpc.status_code").as_deref(), Some("9"));
                assert_eq!(attr("error.type").as_deref(), Some("FAILED_PRECONDITION"));
                assert!(
                    matches!(span.status, Status::Error { .. }),
                    "{:?}",
                    span.status
                );
            } else if method == "Left" {
                // Cancelled by the client: not an error of the server's.
                assert_eq!(attr("rpc.grpc.status_code").as_deref(), Some("1"));
                assert_eq!(attr("error.type"), None);
                assert_eq!(span.status, Status::Unset);
            } else {
                assert_eq!(attr("rpc.grpc.status_code").as_deref(), Some("0"));
                assert_eq!(attr("error.type"), None);
                assert_eq!(span.status, Status::Unset);
            }
        }
        assert!(
            opentelemetry::Context::current()
                .span()
                .span_context()
                .trace_id()
                .to_string()
                != "4bf92f3577b34da6a3ce929d0e0e4736",
            "no context leaks out of the calls"
        );

        let exported = metrics.get_finished_metrics().unwrap();
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
        let mut seen: Vec<Vec<(String, String)>> = histogram
            .data_points()
            .map(|p| {
                let mut attrs: Vec<(String, String)> = p
                    .attributes()
                    .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                    .collect();
                attrs.sort();
                attrs
            })
            .collect();
        seen.sort();
        let point = |method: &str, code: &str, error: Option<&str>| {
            let mut attrs = vec![
                ("rpc.grpc.status_code".to_owned(), code.to_owned()),
                ("rpc.method".to_owned(), method.to_owned()),
                ("rpc.service".to_owned(), "okey.v1.T".to_owned()),
                ("rpc.system".to_owned(), "grpc".to_owned()),
            ];
            if let Some(error) = error {
                attrs.push(("error.type".to_owned(), error.to_owned()));
            }
            attrs.sort();
            attrs
        };
        let mut wanted = vec![
            point("Ok", "0", None),
            point("Refused", "9", Some("FAILED_PRECONDITION")),
            point("Watch", "0", None),
            point("Left", "1", None),
        ];
        wanted.sort();
        assert_eq!(seen, wanted);
    }
}
