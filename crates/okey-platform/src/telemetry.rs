//! Logs, traces and metrics: a `tracing` subscriber, OpenTelemetry export of spans and metrics
//! over OTLP when an endpoint is set, and W3C trace context carried in gRPC metadata and NATS
//! headers so one move is one trace across services. Instruments (the `metrics` module) record
//! through the global meter provider, a no-op when no endpoint is set.

use std::collections::HashMap;
use std::task::{Context as TaskContext, Poll};

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{Context, global};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::settings::{LogFormat, TelemetrySettings};

/// Why telemetry could not start.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// The log filter does not parse.
    #[error("invalid setting `telemetry.log_filter`: {0}")]
    Filter(String),
    /// The OTLP exporter could not be built.
    #[error("cannot build the OTLP exporter for `telemetry.otlp_endpoint`: {0}")]
    Exporter(String),
}

/// Keeps the trace exporter alive; dropping it flushes the spans still buffered.
#[must_use = "dropping the guard stops trace export"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
    meters: Option<SdkMeterProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        // Nothing useful to do with an export error while exiting.
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
        if let Some(meters) = self.meters.take() {
            let _ = meters.shutdown();
        }
    }
}

/// Installs the global subscriber and the W3C trace-context propagator. Traces are exported only
/// when `otlp_endpoint` is set. `RUST_LOG`, when set, replaces `log_filter`. Calling it again (as
/// tests do) leaves the first subscriber in place.
pub fn init(service: &str, settings: &TelemetrySettings) -> Result<Telemetry, TelemetryError> {
    global::set_text_map_propagator(TraceContextPropagator::new());

    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) if !directives.is_empty() => EnvFilter::try_new(directives),
        _ => EnvFilter::try_new(&settings.log_filter),
    }
    .map_err(|e| TelemetryError::Filter(e.to_string()))?;

    let fmt = match settings.log_format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_target(false)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer().json().boxed(),
    };

    let (provider, meters, otel) = if settings.otlp_endpoint.is_empty() {
        (None, None, None)
    } else {
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name(format!("okey-{service}"))
            .build();
        let metric_exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_tonic()
            .with_endpoint(settings.otlp_endpoint.clone())
            .build()
            .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
        let meters = SdkMeterProvider::builder()
            .with_periodic_exporter(metric_exporter)
            .with_resource(resource.clone())
            .build();
        global::set_meter_provider(meters.clone());
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(settings.otlp_endpoint.clone())
            .build()
            .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer(format!("okey-{service}"));
        global::set_tracer_provider(provider.clone());
        let layer = tracing_opentelemetry::layer().with_tracer(tracer);
        (Some(provider), Some(meters), Some(layer))
    };

    // `try_init` fails only when a subscriber is already installed (tests start several apps).
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(fmt)
        .with(otel)
        .try_init();
    Ok(Telemetry { provider, meters })
}

/// The OpenTelemetry context of the current `tracing` span.
pub fn current_context() -> Context {
    tracing::Span::current().context()
}

// ---- gRPC metadata -------------------------------------------------------------------------

struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

struct MetadataInjector<'a>(&'a mut tonic::metadata::MetadataMap);

impl Injector for MetadataInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(key), Ok(value)) = (
            tonic::metadata::MetadataKey::from_bytes(key.as_bytes()),
            tonic::metadata::MetadataValue::try_from(value.as_str()),
        ) {
            self.0.insert(key, value);
        }
    }
}

/// Reads the W3C trace context (`traceparent`, `tracestate`) from HTTP/2 headers.
pub fn context_from_http_headers(headers: &http::HeaderMap) -> Context {
    TraceContextPropagator::new().extract(&HeaderExtractor(headers))
}

/// Writes `cx` as W3C trace context into outgoing gRPC metadata.
pub fn inject_into_metadata(cx: &Context, metadata: &mut tonic::metadata::MetadataMap) {
    TraceContextPropagator::new().inject_context(cx, &mut MetadataInjector(metadata));
}

/// A tonic client interceptor that carries the current span's trace context to the server:
/// `FooServiceClient::with_interceptor(channel, okey_platform::telemetry::propagate_trace_context)`.
pub fn propagate_trace_context<T>(
    mut request: tonic::Request<T>,
) -> Result<tonic::Request<T>, tonic::Status> {
    inject_into_metadata(&current_context(), request.metadata_mut());
    Ok(request)
}

/// Tower layer that opens one span per gRPC call, as a child of the caller's trace context.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrpcTraceLayer;

impl<S> tower::Layer<S> for GrpcTraceLayer {
    type Service = GrpcTrace<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcTrace { inner }
    }
}

/// The service made by [`GrpcTraceLayer`].
#[derive(Debug, Clone)]
pub struct GrpcTrace<S> {
    inner: S,
}

impl<S, B> tower::Service<http::Request<B>> for GrpcTrace<S>
where
    S: tower::Service<http::Request<B>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<S::Response, S::Error>> + Send + 'static>,
    >;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let span = tracing::info_span!(
            "grpc",
            otel.kind = "server",
            rpc.method = %request.uri().path(),
        );
        // A malformed or absent traceparent just starts a new trace.
        let _ = span.set_parent(context_from_http_headers(request.headers()));
        let future = {
            let _entered = span.enter();
            self.inner.call(request)
        };
        Box::pin(future.instrument(span))
    }
}

// ---- NATS headers --------------------------------------------------------------------------

struct NatsInjector<'a>(&'a mut async_nats::HeaderMap);

impl Injector for NatsInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key, value.as_str());
    }
}

struct NatsExtractor<'a>(&'a async_nats::HeaderMap);

impl Extractor for NatsExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(|v| v.as_str())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(k, _)| k.as_ref()).collect()
    }
}

/// Writes `cx` as W3C trace context into the headers of a NATS message about to be published.
pub fn inject_into_nats_headers(cx: &Context, headers: &mut async_nats::HeaderMap) {
    TraceContextPropagator::new().inject_context(cx, &mut NatsInjector(headers));
}

/// Headers carrying the current span's trace context, to publish a message with.
pub fn nats_headers_for_current_span() -> async_nats::HeaderMap {
    let mut headers = async_nats::HeaderMap::new();
    inject_into_nats_headers(&current_context(), &mut headers);
    headers
}

/// Reads the W3C trace context from a received NATS message's headers; a consumer makes it the
/// parent of the span that handles the message.
pub fn context_from_nats_headers(headers: &async_nats::HeaderMap) -> Context {
    TraceContextPropagator::new().extract(&NatsExtractor(headers))
}

/// The trace context as plain key/value pairs (for an event's stored metadata).
pub fn context_as_map(cx: &Context) -> HashMap<String, String> {
    let mut map = HashMap::new();
    TraceContextPropagator::new().inject_context(cx, &mut map);
    map
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };

    use super::*;

    fn remote_context() -> Context {
        let span = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            true,
            TraceState::default(),
        );
        Context::new().with_remote_span_context(span)
    }

    #[test]
    fn trace_context_survives_grpc_metadata() {
        let mut metadata = tonic::metadata::MetadataMap::new();
        inject_into_metadata(&remote_context(), &mut metadata);
        let headers = metadata.into_headers();
        assert_eq!(
            headers.get("traceparent").unwrap(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
        let back = context_from_http_headers(&headers);
        assert_eq!(
            back.span().span_context().trace_id(),
            remote_context().span().span_context().trace_id()
        );
    }

    #[test]
    fn trace_context_survives_nats_headers() {
        let mut headers = async_nats::HeaderMap::new();
        inject_into_nats_headers(&remote_context(), &mut headers);
        let back = context_from_nats_headers(&headers);
        assert_eq!(
            back.span().span_context().span_id(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap()
        );
        assert!(back.span().span_context().is_sampled());
    }

    #[test]
    fn no_headers_means_no_parent() {
        let back = context_from_nats_headers(&async_nats::HeaderMap::new());
        assert!(!back.span().span_context().is_valid());
    }
}
