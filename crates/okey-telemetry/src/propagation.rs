//! W3C trace context (`traceparent`, `tracestate`) in and out of HTTP/2 headers (gRPC metadata)
//! and plain maps (an event's stored metadata), so a span in another process, or one started
//! later from a stored event, continues the same trace.

use std::collections::BTreeMap;

use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The OpenTelemetry context of the current `tracing` span.
pub fn current_context() -> Context {
    tracing::Span::current().context()
}

struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

struct HeaderInjector<'a>(&'a mut http::HeaderMap);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(key), Ok(value)) = (
            http::HeaderName::from_bytes(key.as_bytes()),
            http::HeaderValue::try_from(value),
        ) {
            self.0.insert(key, value);
        }
    }
}

/// Reads the W3C trace context from HTTP/2 headers (an incoming call's metadata). A malformed
/// or absent `traceparent` gives an empty context: the span made from it starts a new trace.
pub fn context_from_http_headers(headers: &http::HeaderMap) -> Context {
    TraceContextPropagator::new().extract(&HeaderExtractor(headers))
}

/// Writes `cx` as W3C trace context into HTTP/2 headers (an outgoing call's metadata).
pub fn inject_into_http_headers(cx: &Context, headers: &mut http::HeaderMap) {
    TraceContextPropagator::new().inject_context(cx, &mut HeaderInjector(headers));
}

/// Writes `cx` as W3C trace context into a tonic request's metadata.
pub fn inject_into_metadata(cx: &Context, metadata: &mut tonic::metadata::MetadataMap) {
    let mut headers = std::mem::take(metadata).into_headers();
    inject_into_http_headers(cx, &mut headers);
    *metadata = tonic::metadata::MetadataMap::from_headers(headers);
}

/// The trace context as plain key/value pairs (stored with an event, so its publication
/// continues the trace of the call that appended it).
pub fn context_as_map(cx: &Context) -> BTreeMap<String, String> {
    let mut map = std::collections::HashMap::new();
    TraceContextPropagator::new().inject_context(cx, &mut map);
    map.into_iter().collect()
}

/// The current span's trace context as plain key/value pairs ([`context_as_map`]).
pub fn current_context_as_map() -> BTreeMap<String, String> {
    context_as_map(&current_context())
}

struct MapExtractor<'a>(&'a BTreeMap<String, String>);

impl Extractor for MapExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// Reads back a trace context stored with [`context_as_map`] (empty when there is none).
pub fn context_from_map(map: &BTreeMap<String, String>) -> Context {
    TraceContextPropagator::new().extract(&MapExtractor(map))
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };

    use super::*;

    pub(crate) fn remote_context() -> Context {
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
        metadata.insert("authorization", "Bearer x".parse().unwrap());
        inject_into_metadata(&remote_context(), &mut metadata);
        assert!(
            metadata.get("authorization").is_some(),
            "other metadata is kept"
        );
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
    fn trace_context_survives_a_stored_map() {
        let map = context_as_map(&remote_context());
        assert!(map.contains_key("traceparent"), "{map:?}");
        let back = context_from_map(&map);
        assert_eq!(
            back.span().span_context().span_id(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap()
        );
        assert!(
            !context_from_map(&BTreeMap::new())
                .span()
                .span_context()
                .is_valid()
        );
    }
}
