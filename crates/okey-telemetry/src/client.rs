//! The client side of every gRPC call a process makes: a CLIENT span named
//! `{package.Service}/{Method}` (a child of the span making the call, or a trace of its own),
//! whose context goes to the server as `traceparent`, with the RPC attributes, the server's
//! address and `rpc.client.call.duration`. Wrap a channel with [`traced`] and build the client on
//! it: `TableServiceClient::new(traced(channel, url))`.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use opentelemetry::metrics::Histogram;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::propagation::inject_into_http_headers;
use crate::rpc::{Call, DURATION_BOUNDS, Observed, Rpc, Side, UNAVAILABLE};

/// A tonic channel whose every call is traced.
pub type TracedChannel = Traced<tonic::transport::Channel>;

/// A gRPC transport (a tonic `Channel`) that traces and times every call made through it.
#[derive(Clone, Debug)]
pub struct Traced<S> {
    inner: S,
    server: Arc<(Option<String>, Option<u16>)>,
    duration: Histogram<f64>,
}

/// `channel` (connected to `url`, whose host and port the spans name as `server.address` and
/// `server.port`) with every call traced.
pub fn traced(channel: tonic::transport::Channel, url: &str) -> TracedChannel {
    traced_with(channel, url, &opentelemetry::global::meter("okey"))
}

/// [`traced`] with the duration recorded by `meter` (tests).
pub fn traced_with<S>(inner: S, url: &str, meter: &opentelemetry::metrics::Meter) -> Traced<S> {
    let uri = url.parse::<http::Uri>().ok();
    let host = uri.as_ref().and_then(|u| u.host()).map(str::to_owned);
    let port = uri.as_ref().and_then(|u| {
        u.port_u16().or(match u.scheme_str() {
            Some("https") => Some(443),
            Some("http") => Some(80),
            _ => None,
        })
    });
    Traced {
        inner,
        server: Arc::new((host, port)),
        duration: meter
            .f64_histogram("rpc.client.call.duration")
            .with_unit("s")
            .with_description("How long a gRPC call this process made took, by method and status.")
            .with_boundaries(DURATION_BOUNDS.to_vec())
            .build(),
    }
}

impl<S, B, R> tower::Service<http::Request<B>> for Traced<S>
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

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let rpc = Rpc::of(request.uri().path());
        let span = tracing::info_span!(
            "grpc client call",
            otel.name = %rpc.span_name(),
            otel.kind = "client",
            rpc.system = "grpc",
            rpc.service = %rpc.service,
            rpc.method = %rpc.method,
        );
        let mut attributes = rpc.attributes();
        let (host, port) = &*self.server;
        if let Some(host) = host {
            span.set_attribute("server.address", host.clone());
            attributes.push(opentelemetry::KeyValue::new("server.address", host.clone()));
        }
        if let Some(port) = port {
            span.set_attribute("server.port", i64::from(*port));
        }
        inject_into_http_headers(&span.context(), request.headers_mut());
        let call = Call {
            span: span.clone(),
            side: Side::Client,
            started: Instant::now(),
            duration: self.duration.clone(),
            attributes,
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
                        call.finish(UNAVAILABLE, Some("the transport failed".into()));
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
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
    use opentelemetry_sdk::metrics::SdkMeterProvider;
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
    use tower::{Service, ServiceExt};
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    #[tokio::test]
    async fn a_call_is_a_client_span_whose_context_the_server_receives() {
        let spans = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        let _default = tracing::subscriber::set_default(subscriber);
        let meters = SdkMeterProvider::builder().build();

        let sent = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = sent.clone();
        let server = tower::service_fn(move |request: http::Request<()>| {
            let seen = seen.clone();
            async move {
                seen.lock()
                    .unwrap()
                    .push(request.headers().get("traceparent").cloned());
                let mut response = http::Response::new(());
                response
                    .headers_mut()
                    .insert("grpc-status", http::HeaderValue::from_static("5"));
                Ok::<_, std::convert::Infallible>(response)
            }
        });
        let mut client = traced_with(server, "http://table:50053", &meters.meter("test"));
        let parent = tracing::info_span!("a move");
        let request = http::Request::builder()
            .uri("/okey.v1.TableService/GetTable")
            .body(())
            .unwrap();
        client.ready().await.unwrap();
        // Inside the caller's span, as a tonic client calls its transport.
        let future = {
            let _entered = parent.enter();
            client.call(request)
        };
        let response = future.await.unwrap();
        drop(response);
        drop(parent);
        let _ = provider.force_flush();

        let finished = spans.get_finished_spans().unwrap();
        let call = finished
            .iter()
            .find(|s| s.span_kind == SpanKind::Client)
            .expect("a client span");
        let parent = finished
            .iter()
            .find(|s| s.name == "a move")
            .expect("the caller's span");
        assert_eq!(call.name, "okey.v1.TableService/GetTable");
        assert_eq!(call.parent_span_id, parent.span_context.span_id());
        let traceparent = sent.lock().unwrap()[0].clone().expect("traceparent sent");
        assert_eq!(
            traceparent.to_str().unwrap(),
            format!(
                "00-{}-{}-01",
                call.span_context.trace_id(),
                call.span_context.span_id()
            ),
            "the server's parent is the client span"
        );
        let attr = |k: &str| {
            call.attributes
                .iter()
                .find(|kv| kv.key.as_str() == k)
                .map(|kv| kv.value.to_string())
        };
        assert_eq!(attr("server.address").as_deref(), Some("table"));
        assert_eq!(attr("server.port").as_deref(), Some("50053"));
        assert_eq!(attr("rpc.grpc.status_code").as_deref(), Some("5"));
        assert_eq!(attr("error.type").as_deref(), Some("NOT_FOUND"));
        assert!(matches!(call.status, Status::Error { .. }));
    }
}
