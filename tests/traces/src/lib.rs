//! An OTLP receiver: a tonic server implementing the collector's `TraceService`, which keeps
//! every span exported to it (with its resource) so a test can wait, with a deadline, until the
//! spans it expects have arrived and then check how they relate, and its `MetricsService`, which
//! accepts the services' metric exports and keeps which metrics each sent ([`MetricExport`]);
//! and [`render`], a trace as an indented tree (what `otlp-print` shows of a local run).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use tokio::sync::Notify;

/// OTLP span kinds.
pub mod kind {
    pub const INTERNAL: i32 = 1;
    pub const SERVER: i32 = 2;
    pub const CLIENT: i32 = 3;
    pub const PRODUCER: i32 = 4;
    pub const CONSUMER: i32 = 5;
}

/// The OTLP status code of a failed span.
pub const STATUS_ERROR: i32 = 2;

/// One received span, ids in hex.
#[derive(Clone, Debug)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    pub name: String,
    pub kind: i32,
    pub attributes: BTreeMap<String, String>,
    /// `(trace id, span id)` of each link.
    pub links: Vec<(String, String)>,
    pub status_code: i32,
    pub status_message: String,
    pub start_unix_nano: u64,
    pub end_unix_nano: u64,
    /// The attributes of the resource that exported it.
    pub resource: BTreeMap<String, String>,
}

impl Span {
    /// An attribute's value as text.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attributes(kvs: &[KeyValue]) -> BTreeMap<String, String> {
    kvs.iter()
        .map(|kv| {
            let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(any_value::Value::StringValue(s)) => s.clone(),
                Some(any_value::Value::IntValue(i)) => i.to_string(),
                Some(any_value::Value::BoolValue(b)) => b.to_string(),
                Some(any_value::Value::DoubleValue(d)) => d.to_string(),
                Some(other) => format!("{other:?}"),
                None => String::new(),
            };
            (kv.key.clone(), value)
        })
        .collect()
}

/// One metric export as received: the service that sent it and the names of its metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricExport {
    /// `service.name` of the exporting resource.
    pub service: String,
    pub metrics: Vec<String>,
}

#[derive(Default)]
struct Received {
    spans: Mutex<Vec<Span>>,
    metrics: Mutex<Vec<MetricExport>>,
    arrived: Notify,
}

struct Collector(Arc<Received>);

#[tonic::async_trait]
impl MetricsService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        let exports = request
            .into_inner()
            .resource_metrics
            .into_iter()
            .map(|resource_metrics| MetricExport {
                service: resource_metrics
                    .resource
                    .as_ref()
                    .map(|r| attributes(&r.attributes))
                    .and_then(|mut a| a.remove("service.name"))
                    .unwrap_or_default(),
                metrics: resource_metrics
                    .scope_metrics
                    .into_iter()
                    .flat_map(|scope| scope.metrics)
                    .map(|metric| metric.name)
                    .collect(),
            });
        self.0
            .metrics
            .lock()
            .expect("no panic while holding the metrics")
            .extend(exports);
        self.0.arrived.notify_waiters();
        Ok(tonic::Response::new(ExportMetricsServiceResponse {
            partial_success: None,
        }))
    }
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut spans = Vec::new();
        for resource_spans in request.into_inner().resource_spans {
            let resource = resource_spans
                .resource
                .as_ref()
                .map(|r| attributes(&r.attributes))
                .unwrap_or_default();
            for scope in resource_spans.scope_spans {
                for s in scope.spans {
                    let status = s.status.unwrap_or_default();
                    spans.push(Span {
                        trace_id: hex(&s.trace_id),
                        span_id: hex(&s.span_id),
                        parent_span_id: hex(&s.parent_span_id),
                        name: s.name,
                        kind: s.kind,
                        attributes: attributes(&s.attributes),
                        links: s
                            .links
                            .iter()
                            .map(|l| (hex(&l.trace_id), hex(&l.span_id)))
                            .collect(),
                        status_code: status.code,
                        status_message: status.message,
                        start_unix_nano: s.start_time_unix_nano,
                        end_unix_nano: s.end_time_unix_nano,
                        resource: resource.clone(),
                    });
                }
            }
        }
        self.0
            .spans
            .lock()
            .expect("no panic while holding the spans")
            .extend(spans);
        self.0.arrived.notify_waiters();
        Ok(tonic::Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

/// A running receiver; it stops when dropped.
pub struct Receiver {
    addr: SocketAddr,
    received: Arc<Received>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Receiver {
    /// Serves the collector's trace and metrics services on a free loopback port.
    pub async fn start() -> Receiver {
        Receiver::start_on("127.0.0.1:0".parse().expect("an address"))
            .await
            .expect("a loopback port")
    }

    /// Serves the collector's trace and metrics services on `addr`.
    pub async fn start_on(addr: SocketAddr) -> std::io::Result<Receiver> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr().expect("a bound address");
        let received = Arc::new(Received::default());
        let traces = TraceServiceServer::new(Collector(received.clone()));
        let metrics = MetricsServiceServer::new(Collector(received.clone()));
        let server = tokio::spawn(async move {
            let incoming = tonic::transport::server::TcpIncoming::from(listener);
            let _ = tonic::transport::Server::builder()
                .add_service(traces)
                .add_service(metrics)
                .serve_with_incoming(incoming)
                .await;
        });
        Ok(Receiver {
            addr,
            received,
            server,
        })
    }

    /// The OTLP/gRPC endpoint to export to (`telemetry.otlp_endpoint`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every metric export received so far.
    pub fn metric_exports(&self) -> Vec<MetricExport> {
        self.received
            .metrics
            .lock()
            .expect("no panic while holding the metrics")
            .clone()
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.received
            .spans
            .lock()
            .expect("no panic while holding the spans")
            .clone()
    }

    /// Waits until `found` returns something for the spans received so far, and returns it.
    ///
    /// # Panics
    /// When `within` passes first, naming `what` and the spans received.
    pub async fn wait_for<T>(
        &self,
        what: &str,
        within: Duration,
        found: impl Fn(&[Span]) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + within;
        loop {
            // Registered before looking, so an export arriving in between still wakes us.
            let arrived = self.received.arrived.notified();
            if let Some(t) = found(&self.spans()) {
                return t;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, arrived).await.is_err() {
                let spans = self.spans();
                let names: Vec<String> = spans
                    .iter()
                    .map(|s| format!("{} ({}, trace {})", s.name, s.kind, s.trace_id))
                    .collect();
                panic!(
                    "no {what} within {within:?}; {} spans received: {names:#?}",
                    spans.len()
                );
            }
        }
    }
}

fn kind_name(kind: i32) -> &'static str {
    match kind {
        kind::INTERNAL => "internal",
        kind::SERVER => "server",
        kind::CLIENT => "client",
        kind::PRODUCER => "producer",
        kind::CONSUMER => "consumer",
        _ => "unspecified",
    }
}

/// The attributes worth a glance on a span's line.
const SHOWN: [&str; 7] = [
    "okey.table.id",
    "okey.seat",
    "rpc.grpc.status_code",
    "error.type",
    "messaging.destination.name",
    "messaging.message.id",
    "messaging.consumer.group.name",
];

/// One trace's spans as a tree, parents before children in start order, one line each: the
/// service, the name, the kind, how long it took and its main attributes; links and errors
/// are said. A span whose parent did not arrive is shown at the top level.
pub fn render(spans: &[Span]) -> String {
    let mut spans: Vec<&Span> = spans.iter().collect();
    spans.sort_by_key(|s| (s.start_unix_nano, s.span_id.clone()));
    let ids: std::collections::BTreeSet<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    let mut out = String::new();
    if let Some(first) = spans.first() {
        out.push_str(&format!("trace {}\n", first.trace_id));
    }
    fn line(out: &mut String, spans: &[&Span], span: &Span, depth: usize) {
        let service = span
            .resource
            .get("service.name")
            .map_or("?", String::as_str);
        let took = span.end_unix_nano.saturating_sub(span.start_unix_nano) as f64 / 1e6;
        out.push_str(&format!(
            "{:indent$}{service}  {}  [{}] {took:.1} ms",
            "",
            span.name,
            kind_name(span.kind),
            indent = 2 + depth * 2
        ));
        for key in SHOWN {
            if let Some(value) = span.attr(key) {
                out.push_str(&format!("  {key}={value}"));
            }
        }
        if span.status_code == STATUS_ERROR {
            out.push_str(&format!("  ERROR {}", span.status_message));
        }
        for (trace, id) in &span.links {
            out.push_str(&format!("  (links to {id} of trace {trace})"));
        }
        out.push('\n');
        for child in spans.iter().filter(|c| c.parent_span_id == span.span_id) {
            line(out, spans, child, depth + 1);
        }
    }
    for root in spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty() || !ids.contains(s.parent_span_id.as_str()))
    {
        line(&mut out, &spans, root, 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(id: &str, parent: &str, name: &str, kind: i32, start: u64) -> Span {
        Span {
            trace_id: "t1".into(),
            span_id: id.into(),
            parent_span_id: parent.into(),
            name: name.into(),
            kind,
            attributes: BTreeMap::new(),
            links: Vec::new(),
            status_code: 0,
            status_message: String::new(),
            start_unix_nano: start,
            end_unix_nano: start + 2_000_000,
            resource: BTreeMap::from([("service.name".to_owned(), "okey-table".to_owned())]),
        }
    }

    #[test]
    fn a_trace_is_a_tree_of_its_spans_in_start_order() {
        let mut failed = span("d", "b", "publish x", kind::PRODUCER, 30);
        failed.status_code = STATUS_ERROR;
        failed.status_message = "no ack".into();
        failed
            .attributes
            .insert("messaging.message.id".into(), "e1".into());
        let spans = vec![
            span("c", "b", "table play", kind::INTERNAL, 20),
            failed,
            span("a", "", "SubmitCommand", kind::SERVER, 10),
            span("b", "a", "handler", kind::INTERNAL, 15),
            span("e", "gone", "orphan", kind::CONSUMER, 40),
        ];
        assert_eq!(
            render(&spans),
            "trace t1\n\
             \x20 okey-table  SubmitCommand  [server] 2.0 ms\n\
             \x20   okey-table  handler  [internal] 2.0 ms\n\
             \x20     okey-table  table play  [internal] 2.0 ms\n\
             \x20     okey-table  publish x  [producer] 2.0 ms  messaging.message.id=e1  ERROR no ack\n\
             \x20 okey-table  orphan  [consumer] 2.0 ms\n"
        );
    }
}
