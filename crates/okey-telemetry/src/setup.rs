//! Starting telemetry in a process: the `tracing` subscriber (logs), and when an OTLP endpoint
//! is set, the export of spans and metrics with the process's resource (`service.name`,
//! `service.version`, `service.instance.id`).

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{KeyValue, global};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use serde::Deserialize;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Logs and traces (the `[telemetry]` settings section).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySettings {
    /// `tracing` filter directives for the logs, as in `RUST_LOG` (which wins when set). Spans
    /// are exported at INFO whatever the log filter says.
    pub log_filter: String,
    /// `text` for people, `json` for log collectors.
    pub log_format: LogFormat,
    /// OTLP/gRPC collector endpoint (`http://host:4317`); empty exports nothing.
    pub otlp_endpoint: String,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One human-readable line per event.
    Text,
    /// One JSON object per event.
    Json,
}

impl TelemetrySettings {
    /// Whether `log_filter` parses as `tracing` directives (what [`init`] would refuse), so a
    /// bad value can stop start-up naming where it came from.
    pub fn check_log_filter(&self) -> Result<(), String> {
        EnvFilter::try_new(&self.log_filter)
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

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

/// How often buffered spans and metrics are sent. `None` keeps the SDK's default (spans every
/// 5 s, `OTEL_BSP_SCHEDULE_DELAY`; metrics every 60 s, `OTEL_METRIC_EXPORT_INTERVAL`); tests
/// make both short so they wait for a span a few milliseconds, not seconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Export {
    /// The delay between two exports of buffered spans.
    pub spans_every: Option<Duration>,
    /// The interval between two exports of metrics.
    pub metrics_every: Option<Duration>,
}

/// Keeps the exporters alive; dropping it flushes what is still buffered.
#[must_use = "dropping the guard stops export"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
    meters: Option<SdkMeterProvider>,
}

impl Telemetry {
    /// Sends every span ended so far now (tests; a process exiting drops the guard instead).
    pub fn flush(&self) {
        if let Some(provider) = &self.provider {
            let _ = provider.force_flush();
        }
    }
}

/// How long a stopping process waits for its last spans and metrics to be sent. A collector
/// that does not answer would otherwise hold the exit for the exporters' own time-outs (10 s
/// each), past the grace period the platform promises (see docs/operations.md).
pub const FLUSH_AT_EXIT: Duration = Duration::from_secs(3);

impl Drop for Telemetry {
    fn drop(&mut self) {
        let (provider, meters) = (self.provider.take(), self.meters.take());
        if provider.is_none() && meters.is_none() {
            return;
        }
        // On a thread of its own, so the wait can be cut short; nothing useful can be done
        // with an export error while exiting.
        let (done, finished) = std::sync::mpsc::channel();
        let flush = std::thread::Builder::new()
            .name("telemetry-flush".into())
            .spawn(move || {
                if let Some(provider) = provider {
                    let _ = provider.shutdown_with_timeout(FLUSH_AT_EXIT);
                }
                if let Some(meters) = meters {
                    let _ = meters.shutdown();
                }
                let _ = done.send(());
            });
        if flush.is_ok() && finished.recv_timeout(FLUSH_AT_EXIT).is_err() {
            tracing::warn!(
                within_secs = FLUSH_AT_EXIT.as_secs(),
                "the last spans and metrics were not sent in time (the OTLP collector did not answer); exiting without them"
            );
        }
    }
}

/// The resource every span and metric of this process carries: `service.name` (`okey-{service}`),
/// `service.version` and a `service.instance.id` new at every start (so two replicas, or a
/// process and its restart, are told apart). `OTEL_RESOURCE_ATTRIBUTES` adds to it.
pub fn resource(service: &str, version: &str) -> Resource {
    Resource::builder()
        .with_service_name(format!("okey-{service}"))
        .with_attributes([
            KeyValue::new("service.version", version.to_owned()),
            KeyValue::new("service.instance.id", uuid::Uuid::new_v4().to_string()),
        ])
        .build()
}

/// [`init_with`] with the SDK's export timing.
pub fn init(
    service: &str,
    version: &str,
    settings: &TelemetrySettings,
) -> Result<Telemetry, TelemetryError> {
    init_with(service, version, settings, Export::default())
}

/// Installs the global subscriber and the W3C trace-context propagator; with `otlp_endpoint`
/// set, also the global tracer and meter providers exporting over OTLP/gRPC. `RUST_LOG`, when
/// set, replaces `log_filter`. Calling it again (as tests may) leaves the first subscriber in
/// place. `version` is the calling crate's (`env!("CARGO_PKG_VERSION")`).
pub fn init_with(
    service: &str,
    version: &str,
    settings: &TelemetrySettings,
    export: Export,
) -> Result<Telemetry, TelemetryError> {
    global::set_text_map_propagator(TraceContextPropagator::new());

    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) if !directives.is_empty() => EnvFilter::try_new(directives),
        _ => EnvFilter::try_new(&settings.log_filter),
    }
    .map_err(|e| TelemetryError::Filter(e.to_string()))?;

    // The log filter applies to the log lines only: quieter logs must not thin out traces.
    let fmt = match settings.log_format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_target(false)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_filter(filter)
            .boxed(),
    };

    let (provider, meters, otel) = if settings.otlp_endpoint.is_empty() {
        (None, None, None)
    } else {
        let resource = resource(service, version);
        let metric_exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_tonic()
            .with_endpoint(settings.otlp_endpoint.clone())
            .build()
            .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
        let mut reader = PeriodicReader::builder(metric_exporter);
        if let Some(every) = export.metrics_every {
            reader = reader.with_interval(every);
        }
        let meters = SdkMeterProvider::builder()
            .with_reader(reader.build())
            .with_resource(resource.clone())
            .build();
        global::set_meter_provider(meters.clone());
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(settings.otlp_endpoint.clone())
            .build()
            .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
        let mut batch = BatchConfigBuilder::default();
        if let Some(every) = export.spans_every {
            batch = batch.with_scheduled_delay(every);
        }
        let processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(batch.build())
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer(format!("okey-{service}"));
        global::set_tracer_provider(provider.clone());
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(LevelFilter::INFO);
        (Some(provider), Some(meters), Some(layer))
    };

    // `try_init` fails only when a subscriber is already installed (tests start several apps).
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init();
    Ok(Telemetry { provider, meters })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resource_names_the_service_its_version_and_this_instance() {
        let attr = |r: &Resource, key: &str| {
            r.get(&opentelemetry::Key::from(key.to_owned()))
                .map(|v| v.to_string())
        };
        let one = resource("table", "1.2.3");
        let two = resource("table", "1.2.3");
        assert_eq!(attr(&one, "service.name").as_deref(), Some("okey-table"));
        assert_eq!(attr(&one, "service.version").as_deref(), Some("1.2.3"));
        let id = attr(&one, "service.instance.id").expect("an instance id");
        assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
        assert_ne!(
            attr(&two, "service.instance.id"),
            Some(id),
            "one id per start"
        );
    }
}
