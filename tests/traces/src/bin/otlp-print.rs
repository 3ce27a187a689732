//! `otlp-print [ADDR]`: a trace viewer for a local run without one: receives OTLP/gRPC on ADDR
//! (`127.0.0.1:4317` by default; point `OKEY_TELEMETRY__OTLP_ENDPOINT` at it) and prints each
//! trace as a tree once no span of it has arrived for six seconds (each process sends its spans
//! every five). Spans that come after their trace was printed (a stream's server span, which
//! ends with the stream; publishes retried after a NATS outage) print the whole trace again,
//! said so. Metric exports are accepted, and each service's first one is said with the metrics
//! it holds (they are not printed).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use traces::{Receiver, render};

/// A trace is printed once it has been quiet this long: longer than the exporters' 5 s delay,
/// so the spans of every process that took part have come.
const QUIET: Duration = Duration::from_secs(6);
const TICK: Duration = Duration::from_millis(500);

/// A trace waiting to be printed.
#[derive(Default)]
struct Waiting {
    /// Spans that came since it was last printed.
    new: usize,
    /// Ticks without a new span.
    quiet: u32,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:4317".to_owned());
    let addr = addr.parse().map_err(|e| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{addr}: {e}"))
    })?;
    let receiver = Receiver::start_on(addr).await?;
    eprintln!(
        "otlp-print: receiving OTLP/gRPC traces and metrics at {} \
         (OKEY_TELEMETRY__OTLP_ENDPOINT={})",
        addr,
        receiver.endpoint()
    );
    let mut waiting: BTreeMap<String, Waiting> = BTreeMap::new();
    let mut printed: BTreeSet<String> = BTreeSet::new();
    let mut seen = 0;
    let mut services_with_metrics: BTreeSet<String> = BTreeSet::new();
    let quiet_ticks = (QUIET.as_millis() / TICK.as_millis()) as u32;
    loop {
        tokio::time::sleep(TICK).await;
        for export in receiver.metric_exports() {
            if services_with_metrics.insert(export.service.clone()) {
                eprintln!(
                    "otlp-print: metrics from {} ({} metrics: {}); later exports are accepted \
                     silently",
                    export.service,
                    export.metrics.len(),
                    export.metrics.join(", ")
                );
            }
        }
        let spans = receiver.spans();
        let mut arrived: BTreeMap<&str, usize> = BTreeMap::new();
        for span in &spans[seen..] {
            *arrived.entry(span.trace_id.as_str()).or_default() += 1;
        }
        seen = spans.len();
        for (trace, count) in &arrived {
            let w = waiting.entry((*trace).to_owned()).or_default();
            w.new += count;
            w.quiet = 0;
        }
        let mut done = Vec::new();
        for (trace, w) in waiting.iter_mut() {
            if !arrived.contains_key(trace.as_str()) {
                w.quiet += 1;
            }
            if w.quiet >= quiet_ticks {
                done.push((trace.clone(), w.new));
            }
        }
        for (trace, late) in done {
            waiting.remove(&trace);
            let of_trace: Vec<traces::Span> = spans
                .iter()
                .filter(|s| s.trace_id == trace)
                .cloned()
                .collect();
            if !printed.insert(trace.clone()) {
                println!("(again: {late} more spans of this trace came after it was printed)");
            }
            println!("{}", render(&of_trace));
        }
    }
}
