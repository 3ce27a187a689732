//! Logs, traces and metrics of a service: `okey-telemetry` (the subscriber, OTLP export, the gRPC
//! server and client spans, W3C trace context over gRPC), re-exported here, plus the messaging
//! side over NATS JetStream in OpenTelemetry's messaging conventions: the PRODUCER span of each
//! publish (its context goes in the message's headers), the CONSUMER span that processes a
//! received message as a child of it, and a consumer's lag as metrics.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::Status;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

pub use okey_telemetry::{
    Export, GrpcServerLayer, Telemetry, TelemetryError, TracedChannel, context_as_map,
    context_from_http_headers, context_from_map, current_context, current_context_as_map, init,
    init_with, inject_into_metadata, traced,
};

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

/// Reads the W3C trace context from a received NATS message's headers (empty when it carries
/// none).
pub fn context_from_nats_headers(headers: &async_nats::HeaderMap) -> Context {
    TraceContextPropagator::new().extract(&NatsExtractor(headers))
}

// ---- Messaging spans -----------------------------------------------------------------------

/// The PRODUCER span of one JetStream publish to `subject` (`template`: the subject with its
/// variable parts named, `okey.table.{table}.events`, which names the span), message id
/// `message_id`, a child of `parent` (the context the event was appended under; an empty one
/// makes it a trace of its own). Keep it until the publish is acknowledged, and put its context
/// in the message's headers ([`inject_into_nats_headers`] with `span.context()`) so each
/// consumer's span is its child.
pub fn publish_span(
    subject: &str,
    template: &str,
    message_id: &str,
    parent: &Context,
) -> tracing::Span {
    let span = tracing::info_span!(
        "nats publish",
        otel.name = %format!("publish {template}"),
        otel.kind = "producer",
        messaging.system = "nats",
        messaging.operation.name = "publish",
        messaging.operation.type = "send",
        messaging.destination.name = %subject,
        messaging.destination.template = %template,
        messaging.message.id = %message_id,
    );
    let _ = span.set_parent(parent.clone());
    span
}

/// The CONSUMER span in which `consumer` (the durable consumer's name) processes one received
/// JetStream message: a child of the span that published it (the trace context in the
/// message's headers), or a trace of its own when it carries none. Instrument the processing
/// with it; [`record_error`] marks a message that could not be processed.
pub fn process_span(message: &async_nats::jetstream::Message, consumer: &str) -> tracing::Span {
    let header = |name: &str| {
        message
            .headers
            .as_ref()
            .and_then(|h| h.get(name))
            .map(|v| v.as_str().to_owned())
    };
    let span = tracing::info_span!(
        "nats process",
        otel.name = %format!("process {consumer}"),
        otel.kind = "consumer",
        messaging.system = "nats",
        messaging.operation.name = "process",
        messaging.operation.type = "process",
        messaging.destination.name = %message.subject,
        messaging.destination.subscription.name = %consumer,
        messaging.consumer.group.name = %consumer,
    );
    if let Some(id) = header("Nats-Msg-Id") {
        span.set_attribute("messaging.message.id", id);
    }
    if let Ok(info) = message.info() {
        span.set_attribute(
            "messaging.nats.stream.sequence",
            info.stream_sequence as i64,
        );
        span.set_attribute("messaging.message.delivery_count", info.delivered);
    }
    if let Some(headers) = &message.headers {
        let _ = span.set_parent(context_from_nats_headers(headers));
    }
    span
}

/// The OpenTelemetry context of `span` (to put in a message's headers).
pub fn context_of(span: &tracing::Span) -> Context {
    span.context()
}

/// Links `span` to `other` (work `other` did that `span` is part of without being its child,
/// such as a sweep republishing an event appended long before).
pub fn link(span: &tracing::Span, other: &tracing::Span) {
    use opentelemetry::trace::TraceContextExt as _;
    span.add_link(other.context().span().span_context().clone());
}

/// Links `span` to the span whose context `trace` holds ([`current_context_as_map`]'s form, as
/// stored with work done later: a ticket matched by a background task); an empty or malformed
/// map links nothing.
pub fn link_to_stored(span: &tracing::Span, trace: &std::collections::BTreeMap<String, String>) {
    use opentelemetry::trace::TraceContextExt as _;
    let cx = context_from_map(trace);
    let linked = cx.span().span_context().clone();
    if linked.is_valid() {
        span.add_link(linked);
    }
}

/// Marks `span` failed: error status with `description`, and `error.type` (a short, stable
/// name of what failed, such as `database`).
pub fn record_error(span: &tracing::Span, error_type: &str, description: impl std::fmt::Display) {
    span.set_attribute("error.type", error_type.to_owned());
    span.set_status(Status::error(description.to_string()));
}

// ---- Consumer lag --------------------------------------------------------------------------

/// How far a JetStream consumer is behind, as two gauges read at each metric export:
/// `{name}.lag.events` (messages not processed yet: not delivered, or delivered and not
/// acknowledged) and `{name}.lag.seconds` (how old, from its commit at the table, the last event
/// it processed is while messages wait; that event's delay once none wait). Both move while the
/// consumer is stuck: the count is also asked of JetStream every few seconds
/// (`table_events::watch_lag`, a layer above this one), since a stuck consumer gets no message
/// to count from, and the age grows with the clock.
#[derive(Clone, Debug)]
pub struct ConsumerLag {
    events: Arc<AtomicU64>,
    /// From the last processed event's commit to its processing, in milliseconds.
    millis: Arc<AtomicU64>,
    /// When it was processed (milliseconds since the epoch); before any, when this was made.
    processed_ms: Arc<AtomicU64>,
}

impl ConsumerLag {
    /// Registers the two gauges `{name}.lag.events` and `{name}.lag.seconds` (`name` such as
    /// `okey.accounts.statistics`).
    pub fn new(name: &str) -> ConsumerLag {
        let lag = ConsumerLag {
            events: Arc::default(),
            millis: Arc::default(),
            processed_ms: Arc::new(AtomicU64::new(epoch_ms())),
        };
        let meter = crate::metrics::meter();
        let events = lag.clone();
        meter
            .u64_observable_gauge(format!("{name}.lag.events"))
            .with_description("Messages in the stream not yet processed by this consumer")
            .with_callback(move |o| o.observe(events.events(), &[]))
            .build();
        let behind = lag.clone();
        meter
            .f64_observable_gauge(format!("{name}.lag.seconds"))
            .with_description(
                "Age of the last processed event (from its commit) while messages wait; \
                 its delay once none wait",
            )
            .with_unit("s")
            .with_callback(move |o| o.observe(behind.behind_ms(epoch_ms()) as f64 / 1e3, &[]))
            .build();
        lag
    }

    /// After a message: `pending` (its delivery info's count of messages still to come) and how
    /// long after its event's commit it was processed.
    pub fn observe(&self, pending: u64, behind: Duration) {
        self.events.store(pending, Ordering::Relaxed);
        self.millis.store(
            behind.as_millis().min(u128::from(u64::MAX)) as u64,
            Ordering::Relaxed,
        );
        self.processed_ms.store(epoch_ms(), Ordering::Relaxed);
    }

    /// Messages not processed yet, as JetStream counts them now.
    pub fn set_pending(&self, pending: u64) {
        self.events.store(pending, Ordering::Relaxed);
    }

    /// Messages not processed yet, as last observed.
    pub fn events(&self) -> u64 {
        self.events.load(Ordering::Relaxed)
    }

    /// Milliseconds from the last processed event's commit to its processing (0 before any).
    pub fn millis(&self) -> u64 {
        self.millis.load(Ordering::Relaxed)
    }

    /// How far behind the consumer is at `now_ms` (milliseconds since the epoch): while messages
    /// wait, the last processed event's delay plus the time since it was processed (growing while
    /// the consumer is stuck); once none wait, that delay alone.
    pub fn behind_ms(&self, now_ms: u64) -> u64 {
        let last = self.millis();
        if self.events() == 0 {
            return last;
        }
        last + now_ms.saturating_sub(self.processed_ms.load(Ordering::Relaxed))
    }
}

fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_consumer_s_lag_grows_while_messages_wait_and_nothing_is_processed() {
        let lag = super::ConsumerLag::new("okey.test.lag");
        lag.observe(3, super::Duration::from_millis(200));
        let processed = lag.processed_ms.load(super::Ordering::Relaxed);
        assert_eq!(lag.behind_ms(processed), 200);
        // Stuck: nothing processed for 5 s while messages wait.
        assert_eq!(lag.behind_ms(processed + 5_000), 5_200);
        // JetStream says more wait; then that none do.
        lag.set_pending(40);
        assert_eq!(lag.events(), 40);
        assert_eq!(lag.behind_ms(processed + 9_000), 9_200);
        lag.set_pending(0);
        assert_eq!(lag.behind_ms(processed + 9_000), 200);
    }

    use opentelemetry::trace::{
        SpanContext, SpanId, SpanKind, TraceContextExt, TraceFlags, TraceId, TraceState,
        TracerProvider as _,
    };
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
    use tracing_subscriber::layer::SubscriberExt;

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
    fn trace_context_survives_nats_headers() {
        let mut headers = async_nats::HeaderMap::new();
        inject_into_nats_headers(&remote_context(), &mut headers);
        let back = context_from_nats_headers(&headers);
        assert_eq!(
            back.span().span_context().span_id(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap()
        );
        assert!(back.span().span_context().is_sampled());
        let none = context_from_nats_headers(&async_nats::HeaderMap::new());
        assert!(!none.span().span_context().is_valid());
    }

    #[test]
    fn a_publish_span_is_a_producer_child_of_the_append_and_names_its_destination() {
        let spans = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        tracing::subscriber::with_default(subscriber, || {
            let span = publish_span(
                "okey.table.t1.events",
                "okey.table.{table}.events",
                "e1",
                &remote_context(),
            );
            let mut headers = async_nats::HeaderMap::new();
            inject_into_nats_headers(&span.context(), &mut headers);
            let sent = context_from_nats_headers(&headers);
            assert_eq!(
                sent.span().span_context().span_id(),
                span.context().span().span_context().span_id(),
                "the message carries the publish span"
            );
            record_error(&span, "jetstream", "no ack");
        });
        let finished = spans.get_finished_spans().unwrap();
        let [span] = finished.as_slice() else {
            panic!("one span: {finished:?}");
        };
        assert_eq!(span.name, "publish okey.table.{table}.events");
        assert_eq!(span.span_kind, SpanKind::Producer);
        assert_eq!(span.parent_span_id.to_string(), "00f067aa0ba902b7");
        let attr = |k: &str| {
            span.attributes
                .iter()
                .find(|kv| kv.key.as_str() == k)
                .map(|kv| kv.value.to_string())
        };
        assert_eq!(attr("messaging.system").as_deref(), Some("nats"));
        assert_eq!(
            attr("messaging.destination.name").as_deref(),
            Some("okey.table.t1.events")
        );
        assert_eq!(attr("messaging.message.id").as_deref(), Some("e1"));
        assert_eq!(attr("error.type").as_deref(), Some("jetstream"));
        assert!(matches!(span.status, Status::Error { .. }));
    }
}
