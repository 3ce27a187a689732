//! `otlp-print [ADDR]`: a trace viewer for a local run without one: receives OTLP/gRPC on ADDR
//! (`127.0.0.1:4317` by default; point `OKEY_TELEMETRY__OTLP_ENDPOINT` at it) and prints each
//! trace as a tree once no span of it has arrived for six seconds (each process sends its spans
//! every five).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use traces::{Receiver, render};

/// A trace is printed once it has been quiet this long: longer than the exporters' 5 s delay,
/// so the spans of every process that took part have come.
const QUIET: Duration = Duration::from_secs(6);
const TICK: Duration = Duration::from_millis(500);

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
        "otlp-print: receiving OTLP/gRPC at {} (OKEY_TELEMETRY__OTLP_ENDPOINT={})",
        addr,
        receiver.endpoint()
    );
    // Per trace not printed yet: its span count and for how many ticks it has not grown.
    let mut waiting: BTreeMap<String, (usize, u32)> = BTreeMap::new();
    let mut printed: BTreeSet<String> = BTreeSet::new();
    let mut seen = 0;
    loop {
        tokio::time::sleep(TICK).await;
        let spans = receiver.spans();
        let mut by_trace: BTreeMap<&str, Vec<traces::Span>> = BTreeMap::new();
        for span in &spans[seen..] {
            by_trace
                .entry(span.trace_id.as_str())
                .or_default()
                .push(span.clone());
        }
        for (trace, new) in &by_trace {
            if !printed.contains(*trace) {
                waiting.entry((*trace).to_owned()).or_default().0 += new.len();
            }
        }
        seen = spans.len();
        let quiet_ticks = (QUIET.as_millis() / TICK.as_millis()) as u32;
        let mut done = Vec::new();
        for (trace, (count, quiet)) in waiting.iter_mut() {
            if by_trace.contains_key(trace.as_str()) {
                *quiet = 0;
            } else {
                *quiet += 1;
            }
            if *quiet >= quiet_ticks && *count > 0 {
                done.push(trace.clone());
            }
        }
        for trace in done {
            waiting.remove(&trace);
            let of_trace: Vec<traces::Span> = spans
                .iter()
                .filter(|s| s.trace_id == trace)
                .cloned()
                .collect();
            println!("{}", render(&of_trace));
            printed.insert(trace);
        }
    }
}
