//! The durable JetStream consumer of the table service's public events (see ARCHITECTURE.md,
//! "Table events → statistics": the stream is the table service's, this consumer never makes
//! one). Each message is applied by `store::apply` in one transaction and acknowledged after the
//! commit; one message is in flight, so a table's events come in the order they were published.
//!
//! - A redelivery, a restart or a replayed stream changes nothing: `applied_events` and each
//!   table's applied version say what was applied.
//! - A gap (a later version of a table before an earlier one, which the table service's outbox
//!   can produce when a connection drops mid-batch) waits: the early message is kept in
//!   `early_events` and acknowledged, and applied as soon as the version before it has been (the
//!   outbox's sweep republishes whatever it did not get acknowledged, so the gap fills).
//! - A message that is not a readable table event is kept in `poison_events` with its reason,
//!   logged as an error, counted in `okey.scoring.events.poisoned` and acknowledged; the others
//!   go on.
//!
//! - Rebuild: the ledger is a projection of the stream. Started on an empty schema, the
//!   consumer is made anew and reads from the stream's first message (events older than the
//!   stream's `nats.events_max_age_secs` are gone from it).
//!
//! Lag: `okey.scoring.consumer.lag.events` (messages the consumer has not been delivered yet) and
//! `okey.scoring.consumer.lag.seconds` (from the event's commit in the table service to its
//! application here), also in [`Lag`] for the health details.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_nats::jetstream::{self, consumer::pull, stream};
use chrono::Utc;
use futures_util::StreamExt;
use opentelemetry::KeyValue;
use opentelemetry::metrics::Counter;
use sqlx::PgPool;
use uuid::Uuid;

use crate::store::{self, Applied, Incoming, Poison};

/// The durable consumer's name.
pub const CONSUMER: &str = "scoring-ledger";

/// How long a delivered message may go unacknowledged (far above one transaction's time).
const ACK_WAIT: Duration = Duration::from_secs(5);

/// Why the consumer stopped (it restarts after a pause).
#[derive(Debug, thiserror::Error)]
pub enum ConsumerError {
    #[error("jetstream: {0}")]
    JetStream(String),
}

fn js_err(e: impl std::fmt::Display) -> ConsumerError {
    ConsumerError::JetStream(e.to_string())
}

/// The subjects the table service publishes its public events on.
pub fn table_events_subject(prefix: &str) -> String {
    format!("{prefix}.table.*.events")
}

/// How far behind play the ledger is, as of the last message applied.
#[derive(Debug, Default)]
pub struct Lag {
    events: AtomicU64,
    millis: AtomicU64,
    applied: AtomicU64,
}

impl Lag {
    /// Messages not delivered to the consumer yet.
    pub fn events(&self) -> u64 {
        self.events.load(Ordering::Relaxed)
    }

    /// Milliseconds from the last applied event's commit at the table to its application.
    pub fn millis(&self) -> u64 {
        self.millis.load(Ordering::Relaxed)
    }

    /// Events applied since the start.
    pub fn applied(&self) -> u64 {
        self.applied.load(Ordering::Relaxed)
    }
}

struct Metrics {
    applied: Counter<u64>,
    poisoned: Counter<u64>,
    mismatches: Counter<u64>,
}

impl Metrics {
    fn new(lag: &Arc<Lag>) -> Metrics {
        let meter = okey_platform::metrics::meter();
        let events = lag.clone();
        meter
            .u64_observable_gauge("okey.scoring.consumer.lag.events")
            .with_description("Table events in the stream not yet delivered to the ledger")
            .with_callback(move |o| o.observe(events.events(), &[]))
            .build();
        let seconds = lag.clone();
        meter
            .f64_observable_gauge("okey.scoring.consumer.lag.seconds")
            .with_description("From an event's commit at the table to its application")
            .with_unit("s")
            .with_callback(move |o| o.observe(seconds.millis() as f64 / 1000.0, &[]))
            .build();
        Metrics {
            applied: meter
                .u64_counter("okey.scoring.events.applied")
                .with_description("Table events handled, by result")
                .build(),
            poisoned: meter
                .u64_counter("okey.scoring.events.poisoned")
                .with_description("Messages set aside because they are not readable table events")
                .build(),
            mismatches: meter
                .u64_counter("okey.scoring.hands.mismatched")
                .with_description("Hands whose re-verification found a difference")
                .build(),
        }
    }
}

/// The table service's stream. The producer owns it (name, subjects, duplicate window); until
/// it exists the consumer retries.
async fn table_events_stream(
    jetstream: &jetstream::Context,
    prefix: &str,
) -> Result<stream::Stream, ConsumerError> {
    let name = jetstream
        .stream_by_subject(table_events_subject(prefix))
        .await
        .map_err(|e| {
            ConsumerError::JetStream(format!(
                "no stream holds the table events yet (the table service creates it): {e}"
            ))
        })?;
    jetstream.get_stream(name).await.map_err(js_err)
}

/// Consumes table events into the ledger until the task is aborted. Failures are logged and
/// retried after a pause; the events wait in JetStream meanwhile.
pub async fn run(jetstream: jetstream::Context, pool: PgPool, prefix: String, lag: Arc<Lag>) {
    let metrics = Metrics::new(&lag);
    loop {
        if let Err(error) = consume(&jetstream, &pool, &prefix, &lag, &metrics).await {
            tracing::warn!(%error, "ledger consumer stopped; restarting");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn consume(
    jetstream: &jetstream::Context,
    pool: &PgPool,
    prefix: &str,
    lag: &Lag,
    metrics: &Metrics,
) -> Result<(), ConsumerError> {
    let stream = table_events_stream(jetstream, prefix).await?;
    rebuild_if_empty(&stream, pool).await?;
    let consumer: jetstream::consumer::Consumer<pull::Config> = stream
        .get_or_create_consumer(
            CONSUMER,
            pull::Config {
                durable_name: Some(CONSUMER.to_owned()),
                filter_subject: table_events_subject(prefix),
                ack_policy: jetstream::consumer::AckPolicy::Explicit,
                max_ack_pending: 1,
                // A message delivered to a process that died is redelivered after this.
                ack_wait: ACK_WAIT,
                ..Default::default()
            },
        )
        .await
        .map_err(js_err)?;
    let mut messages = consumer.messages().await.map_err(js_err)?;
    tracing::info!(subject = %table_events_subject(prefix), "ledger consumer running");
    while let Some(message) = messages.next().await {
        let message = message.map_err(js_err)?;
        let (sequence, pending) = message
            .info()
            .map(|i| (i.stream_sequence, i.pending))
            .map_err(js_err)?;
        lag.events.store(pending, Ordering::Relaxed);
        let header = |name: &str| {
            message
                .headers
                .as_ref()
                .and_then(|h| h.get(name))
                .map(|v| v.as_str().to_owned())
        };
        let event_id = header("Nats-Msg-Id");
        // The envelope's event id is the key (the `Nats-Msg-Id` only dedupes inside JetStream's
        // window): a copy published again under another message id is the same event.
        let incoming = Incoming::decode(&message.payload).map_err(|e| e.to_string());
        match incoming {
            Err(reason) => {
                let poison = Poison {
                    stream_sequence: sequence,
                    subject: message.subject.as_str(),
                    event_id: event_id.as_deref(),
                    table_id: header("Okey-Table").and_then(|t| Uuid::parse_str(&t).ok()),
                    version: header("Okey-Version").and_then(|v| v.parse().ok()),
                    reason: &reason,
                    payload: &message.payload,
                };
                let recorded = match store::set_aside_poison(pool, &poison).await {
                    Ok(()) => match poison.table_id {
                        Some(table) => store::apply_waiting(pool, table).await.map(|_| ()),
                        None => Ok(()),
                    },
                    Err(e) => Err(e),
                };
                if let Err(error) = recorded {
                    tracing::warn!(%error, sequence, "poison event not recorded yet; retrying");
                    nak(&message, Duration::from_millis(500)).await;
                    continue;
                }
                metrics.poisoned.add(1, &[]);
                tracing::error!(
                    sequence,
                    subject = %message.subject,
                    %reason,
                    "table event set aside as unreadable"
                );
            }
            Ok(incoming) => match apply(pool, &incoming, &message.payload).await {
                Ok(results) => {
                    for applied in results {
                        let result = match &applied {
                            Applied::Fresh { hand_verified } => {
                                if *hand_verified == Some(false) {
                                    metrics.mismatches.add(1, &[]);
                                }
                                lag.applied.fetch_add(1, Ordering::Relaxed);
                                let behind = (Utc::now() - incoming.time).num_milliseconds();
                                lag.millis.store(behind.max(0) as u64, Ordering::Relaxed);
                                "applied"
                            }
                            Applied::SetAside(reason) => {
                                tracing::error!(
                                    table = %incoming.table_id,
                                    version = incoming.version,
                                    %reason,
                                    "table event set aside"
                                );
                                "set_aside"
                            }
                            Applied::Duplicate => "duplicate",
                            Applied::Early { expected } => {
                                tracing::debug!(
                                    table = %incoming.table_id,
                                    version = incoming.version,
                                    expected,
                                    "event ahead of its table; kept until the earlier ones come"
                                );
                                "early"
                            }
                        };
                        metrics.applied.add(1, &[KeyValue::new("result", result)]);
                    }
                }
                Err(error) => {
                    tracing::warn!(
                        event_id = %incoming.event_id,
                        %error,
                        "table event not applied yet; retrying"
                    );
                    nak(&message, Duration::from_millis(500)).await;
                    continue;
                }
            },
        }
        message.ack().await.map_err(js_err)?;
    }
    Ok(())
}

/// An empty ledger (a new database, or one emptied to rebuild the projection) is filled from the
/// start of the stream: a durable consumer that already delivered messages is made anew, so
/// every event the stream still holds is applied again, in order, into the empty schema.
async fn rebuild_if_empty(stream: &stream::Stream, pool: &PgPool) -> Result<(), ConsumerError> {
    let empty: bool = sqlx::query_scalar(
        "SELECT NOT EXISTS (SELECT 1 FROM applied_events)
            AND NOT EXISTS (SELECT 1 FROM poison_events)
            AND NOT EXISTS (SELECT 1 FROM early_events)",
    )
    .fetch_one(pool)
    .await
    .map_err(js_err)?;
    if !empty {
        return Ok(());
    }
    let Ok(mut consumer) = stream.get_consumer::<pull::Config>(CONSUMER).await else {
        return Ok(());
    };
    let delivered = consumer
        .info()
        .await
        .map_err(js_err)?
        .delivered
        .stream_sequence;
    if delivered > 0 {
        tracing::info!(
            delivered,
            "the ledger is empty: reading the table events again from the stream's start"
        );
        stream.delete_consumer(CONSUMER).await.map_err(js_err)?;
    }
    Ok(())
}

/// Applies one event, or keeps it when it is early, then whatever kept events it made next.
async fn apply(
    pool: &PgPool,
    incoming: &Incoming,
    payload: &[u8],
) -> Result<Vec<Applied>, sqlx::Error> {
    let applied = store::apply(pool, incoming).await?;
    if let Applied::Early { .. } = applied {
        store::keep_early(pool, incoming, payload).await?;
        // The missing version may have been applied in between.
        let mut all = vec![applied];
        all.extend(store::apply_waiting(pool, incoming.table_id).await?);
        return Ok(all);
    }
    let mut all = vec![applied];
    all.extend(store::apply_waiting(pool, incoming.table_id).await?);
    Ok(all)
}

async fn nak(message: &jetstream::Message, after: Duration) {
    let _ = message.ack_with(jetstream::AckKind::Nak(Some(after))).await;
}
