//! The durable JetStream consumer of the table service's public events (see
//! docs/design/statistics-contract.md: the stream is the table service's, this consumer never makes
//! one; `okey_platform::table_events` finds it). Messages are applied in batches: whatever has
//! arrived, up to [`BATCH`], goes to `store::apply_batch` as one transaction, and every message
//! of it is acknowledged after the commit (a batch the database refuses is applied one message
//! at a time, so one bad message holds back only itself). Up to [`IN_FLIGHT`] messages are
//! delivered at once; a table's order does not depend on delivery order, since each table's
//! applied version decides what is next:
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
//! Lag: `okey.scoring.consumer.lag.events` (messages not applied yet, also asked of JetStream
//! every few seconds) and `okey.scoring.consumer.lag.seconds` (how old, from its commit in the
//! table service, the last applied event is while messages wait), the platform's
//! `ConsumerLag`, which moves while the consumer is stuck; also in [`Lag`] for GetLedgerStatus.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_nats::jetstream::{self, consumer::pull, stream};
use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use okey_platform::table_events::{self, Durable};
use okey_platform::telemetry;
use opentelemetry::KeyValue;
use opentelemetry::metrics::Counter;
use sqlx::PgPool;
use uuid::Uuid;

use crate::store::{self, Applied, Handled, Incoming, Item, Poison};

/// The durable consumer's name.
pub const CONSUMER: &str = "scoring-ledger";

/// How long a delivered message may go unacknowledged (far above one batch's transaction).
const ACK_WAIT: Duration = Duration::from_secs(5);

/// The most messages applied in one transaction.
const BATCH: usize = 500;

/// Messages delivered and not yet acknowledged, at most: a batch being applied and the next one
/// arriving meanwhile.
const IN_FLIGHT: i64 = 2 * BATCH as i64;

/// Why the consumer stopped (it restarts after a pause).
#[derive(Debug, thiserror::Error)]
pub enum ConsumerError {
    #[error("jetstream: {0}")]
    JetStream(String),
}

fn js_err(e: impl std::fmt::Display) -> ConsumerError {
    ConsumerError::JetStream(e.to_string())
}

/// How far behind play the ledger is: the consumer's lag (its gauges) and what it applied.
#[derive(Debug)]
pub struct Lag {
    consumer: telemetry::ConsumerLag,
    applied: AtomicU64,
    /// When the last event was applied, in milliseconds since the epoch (0: never).
    last_applied_ms: AtomicU64,
}

impl Lag {
    /// Registers the gauges `okey.scoring.consumer.lag.events` and `….lag.seconds`.
    pub fn with_gauges() -> Lag {
        Lag {
            consumer: telemetry::ConsumerLag::new("okey.scoring.consumer"),
            applied: AtomicU64::default(),
            last_applied_ms: AtomicU64::default(),
        }
    }

    /// Messages not applied yet, as last observed.
    pub fn events(&self) -> u64 {
        self.consumer.events()
    }

    /// Milliseconds from the last applied event's commit at the table to its application.
    pub fn millis(&self) -> u64 {
        self.consumer.millis()
    }

    /// Events applied since the start.
    pub fn applied(&self) -> u64 {
        self.applied.load(Ordering::Relaxed)
    }

    /// When this process last applied an event.
    pub fn last_applied(&self) -> Option<DateTime<Utc>> {
        match self.last_applied_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => DateTime::from_timestamp_millis(ms as i64),
        }
    }
}

/// What the API reports of the ledger's lag (GetLedgerStatus): this process's [`Lag`] and the
/// durable consumer's position, asked of JetStream.
#[derive(Clone)]
pub struct Watch {
    lag: Arc<Lag>,
    jetstream: Option<jetstream::Context>,
    subject: String,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("lag", &self.lag)
            .field("subject", &self.subject)
            .finish()
    }
}

impl Watch {
    pub fn new(lag: Arc<Lag>, jetstream: Option<jetstream::Context>, prefix: &str) -> Watch {
        Watch {
            lag,
            jetstream,
            subject: table_events::public_subject(prefix),
        }
    }

    pub fn lag(&self) -> &Lag {
        &self.lag
    }

    /// Table events published and not yet applied (not delivered to the durable consumer, or
    /// delivered and not acknowledged), as JetStream counts them now; `None` if it does not
    /// answer within 2 s (or the consumer was not made yet).
    pub async fn pending(&self) -> Option<u64> {
        table_events::unprocessed(self.jetstream.as_ref()?, &self.subject, CONSUMER).await
    }
}

struct Metrics {
    applied: Counter<u64>,
    poisoned: Counter<u64>,
    mismatches: Counter<u64>,
}

impl Metrics {
    fn new() -> Metrics {
        let meter = okey_platform::metrics::meter();
        let metrics = Metrics {
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
        };
        // Exported from the start at 0, so an alert on them has a series before the first.
        metrics.poisoned.add(0, &[]);
        metrics.mismatches.add(0, &[]);
        metrics
    }
}

/// Consumes table events into the ledger until the task is aborted. Failures are logged and
/// retried after a pause; the events wait in JetStream meanwhile.
pub async fn run(jetstream: jetstream::Context, pool: PgPool, prefix: String, lag: Arc<Lag>) {
    let metrics = Metrics::new();
    // The lag is also asked of JetStream, so a stuck consumer's gauges move.
    let watch = table_events::watch_lag(
        jetstream.clone(),
        table_events::public_subject(&prefix),
        CONSUMER,
        lag.consumer.clone(),
    );
    let consume = async {
        loop {
            if let Err(error) = consume(&jetstream, &pool, &prefix, &lag, &metrics).await {
                tracing::warn!(%error, "ledger consumer stopped; restarting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    };
    tokio::join!(watch, consume);
}

/// One delivered message, read.
struct Received {
    message: jetstream::Message,
    sequence: u64,
    pending: u64,
    read: Result<Incoming, String>,
    /// Its CONSUMER span (a child of the table's publish span), from delivery to settling; the
    /// rebuild makes none.
    span: tracing::Span,
}

impl Received {
    fn new(message: jetstream::Message) -> Result<Received, ConsumerError> {
        let (sequence, pending) = message
            .info()
            .map(|i| (i.stream_sequence, i.pending))
            .map_err(js_err)?;
        // The envelope's event id is the key (the `Nats-Msg-Id` only dedupes inside JetStream's
        // window): a copy published again under another message id is the same event.
        let read = Incoming::decode(&message.payload).map_err(|e| e.to_string());
        Ok(Received {
            message,
            sequence,
            pending,
            read,
            span: tracing::Span::none(),
        })
    }

    /// Traced: processed in a span of its own in the trace of the move that made it.
    fn traced(mut self) -> Received {
        self.span = telemetry::process_span(&self.message, CONSUMER);
        self
    }

    fn header(&self, name: &str) -> Option<&str> {
        table_events::header(&self.message, name)
    }

    fn item(&self) -> Item<'_> {
        match &self.read {
            Ok(incoming) => Item::Event(incoming, &self.message.payload),
            Err(reason) => Item::Poison(Poison {
                stream_sequence: self.sequence,
                subject: self.message.subject.as_str(),
                event_id: self.header("Nats-Msg-Id"),
                table_id: self
                    .header("Okey-Table")
                    .and_then(|t| Uuid::parse_str(t).ok()),
                version: self.header("Okey-Version").and_then(|v| v.parse().ok()),
                reason,
                payload: &self.message.payload,
            }),
        }
    }
}

async fn consume(
    jetstream: &jetstream::Context,
    pool: &PgPool,
    prefix: &str,
    lag: &Lag,
    metrics: &Metrics,
) -> Result<(), ConsumerError> {
    let subject = table_events::public_subject(prefix);
    let stream = table_events::stream(jetstream, &subject)
        .await
        .map_err(js_err)?;
    rebuild_if_empty(&stream, pool).await?;
    let consumer = table_events::durable_consumer(
        &stream,
        &Durable {
            name: CONSUMER,
            filter_subject: subject.clone(),
            max_ack_pending: IN_FLIGHT,
            // A message delivered to a process that died is redelivered after this.
            ack_wait: ACK_WAIT,
        },
    )
    .await
    .map_err(js_err)?;
    let messages = consumer
        .stream()
        .max_messages_per_batch(BATCH)
        .heartbeat(Duration::from_secs(5))
        .messages()
        .await
        .map_err(js_err)?;
    tracing::info!(%subject, "ledger consumer running");
    // Whatever has arrived, up to a batch: one transaction while the consumer keeps up (a
    // message at a time, as soon as it comes), bigger ones when it has fallen behind.
    let mut batches = messages.ready_chunks(BATCH);
    while let Some(batch) = batches.next().await {
        let mut received = Vec::with_capacity(batch.len());
        for message in batch {
            received.push(Received::new(message.map_err(js_err)?)?.traced());
        }
        let items: Vec<Item<'_>> = received.iter().map(Received::item).collect();
        let handled = match store::apply_batch(pool, &items).await {
            Ok(handled) => handled,
            // One message the database refuses must not hold back the others: each on its own,
            // and only what still fails waits for its redelivery.
            Err(error) if items.len() > 1 => {
                tracing::warn!(%error, messages = items.len(), "batch not applied; one by one");
                let mut handled = Vec::with_capacity(items.len());
                for item in &items {
                    handled.push(store::apply_batch(pool, std::slice::from_ref(item)).await);
                }
                settle(&received, handled, lag, metrics).await?;
                continue;
            }
            Err(error) => {
                settle(&received, vec![Err(error)], lag, metrics).await?;
                continue;
            }
        };
        let handled = handled.into_iter().map(|h| Ok(vec![h])).collect();
        settle(&received, handled, lag, metrics).await?;
    }
    Ok(())
}

/// After the commit: counts and logs what each message did, acknowledges the applied ones and
/// asks again for those that failed (after a pause).
async fn settle(
    received: &[Received],
    handled: Vec<Result<Vec<Handled>, sqlx::Error>>,
    lag: &Lag,
    metrics: &Metrics,
) -> Result<(), ConsumerError> {
    let mut acks = Vec::with_capacity(received.len());
    let mut newest = None;
    let mut pending = None;
    for (message, result) in received.iter().zip(handled) {
        let handled = match result {
            Ok(mut handled) => handled.pop(),
            Err(error) => {
                telemetry::record_error(&message.span, "database", &error);
                tracing::warn!(
                    sequence = message.sequence,
                    %error,
                    "table event not applied yet; retrying"
                );
                let _ = message
                    .message
                    .ack_with(jetstream::AckKind::Nak(Some(Duration::from_millis(500))))
                    .await;
                continue;
            }
        };
        match (&message.read, handled) {
            (Err(reason), Some(Handled::Poison(waiting))) => {
                telemetry::record_error(&message.span, "unreadable", reason);
                metrics.poisoned.add(1, &[]);
                tracing::error!(
                    sequence = message.sequence,
                    subject = %message.message.subject,
                    %reason,
                    "table event set aside as unreadable"
                );
                count(metrics, lag, None, &waiting);
            }
            (Ok(incoming), Some(Handled::Event(results))) => {
                count(metrics, lag, Some(incoming), &results);
                newest = Some(incoming.time);
            }
            _ => unreachable!("each message is handled as what it was read as"),
        }
        pending = Some(message.pending);
        acks.push(message.message.ack());
    }
    match (newest, pending) {
        (Some(time), pending) => {
            let now = Utc::now();
            let behind = (now - time).num_milliseconds().max(0) as u64;
            lag.consumer
                .observe(pending.unwrap_or(0), Duration::from_millis(behind));
            lag.last_applied_ms
                .store(now.timestamp_millis().max(1) as u64, Ordering::Relaxed);
        }
        (None, Some(pending)) => lag.consumer.set_pending(pending),
        (None, None) => {}
    }
    for ack in futures_util::future::join_all(acks).await {
        ack.map_err(js_err)?;
    }
    Ok(())
}

/// Counts (and logs) what applying one message did.
fn count(metrics: &Metrics, lag: &Lag, incoming: Option<&Incoming>, results: &[Applied]) {
    for applied in results {
        let result = match applied {
            Applied::Fresh { hand_verified } => {
                if *hand_verified == Some(false) {
                    metrics.mismatches.add(1, &[]);
                }
                lag.applied.fetch_add(1, Ordering::Relaxed);
                "applied"
            }
            Applied::SetAside(reason) => {
                tracing::error!(
                    table = incoming.map(|i| i.table_id.to_string()),
                    version = incoming.map(|i| i.version),
                    %reason,
                    "table event set aside"
                );
                "set_aside"
            }
            Applied::Duplicate => "duplicate",
            Applied::Early { expected } => {
                tracing::debug!(
                    table = incoming.map(|i| i.table_id.to_string()),
                    version = incoming.map(|i| i.version),
                    expected,
                    "event ahead of its table; kept until the earlier ones come"
                );
                "early"
            }
        };
        metrics.applied.add(1, &[KeyValue::new("result", result)]);
    }
}

/// Whether the database holds no ledger yet (nothing applied, set aside or kept).
async fn ledger_is_empty(pool: &PgPool) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT NOT EXISTS (SELECT 1 FROM applied_events)
            AND NOT EXISTS (SELECT 1 FROM poison_events)
            AND NOT EXISTS (SELECT 1 FROM early_events)",
    )
    .fetch_one(pool)
    .await
}

/// An empty ledger (a new database, or one emptied to rebuild the projection) is filled from the
/// start of the stream: a durable consumer that already delivered messages is made anew, so
/// every event the stream still holds is applied again, in order, into the empty schema.
async fn rebuild_if_empty(stream: &stream::Stream, pool: &PgPool) -> Result<(), ConsumerError> {
    if !ledger_is_empty(pool).await.map_err(js_err)? {
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

/// What a rebuild did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rebuilt {
    /// Events applied.
    pub events: u64,
    /// Messages set aside as unreadable.
    pub poisoned: u64,
    /// How long it took.
    pub seconds: f64,
}

/// Why a rebuild did not run or stopped.
#[derive(Debug, thiserror::Error)]
pub enum RebuildError {
    #[error(
        "the ledger of this database is not empty: rebuild into an empty database (a rebuild \
         that stopped half-way leaves one that must be dropped first)"
    )]
    NotEmpty,
    #[error(transparent)]
    Consumer(#[from] ConsumerError),
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
}

/// Rebuilds the ledger into an empty database from the table events the stream holds (those of
/// the last `nats.events_max_age_secs`): an ordered consumer of its own reads them from the
/// first, and they are applied in batches by `store::apply_batch`, as the live consumer applies
/// them, until it has caught up with the stream. The service's durable consumer is left alone,
/// so a running service goes on meanwhile (docs/design/scoring.md, "Rebuild": how to switch to
/// the rebuilt database).
pub async fn rebuild(
    jetstream: &jetstream::Context,
    pool: &PgPool,
    prefix: &str,
) -> Result<Rebuilt, RebuildError> {
    if !ledger_is_empty(pool).await? {
        return Err(RebuildError::NotEmpty);
    }
    let started = std::time::Instant::now();
    let subject = table_events::public_subject(prefix);
    let stream = table_events::stream(jetstream, &subject)
        .await
        .map_err(js_err)?;
    let consumer = stream
        .create_consumer(pull::OrderedConfig {
            filter_subject: subject.clone(),
            ..Default::default()
        })
        .await
        .map_err(js_err)?;
    let mut done = Rebuilt::default();
    if consumer.cached_info().num_pending > 0 {
        let messages = consumer.messages().await.map_err(js_err)?;
        let mut batches = messages.ready_chunks(BATCH);
        let mut reported = std::time::Instant::now();
        while let Some(batch) = batches.next().await {
            let mut received = Vec::with_capacity(batch.len());
            for message in batch {
                received.push(Received::new(message.map_err(js_err)?)?);
            }
            let items: Vec<Item<'_>> = received.iter().map(Received::item).collect();
            for handled in store::apply_batch(pool, &items).await? {
                match handled {
                    Handled::Event(results) | Handled::Poison(results) => {
                        done.events += results
                            .iter()
                            .filter(|a| matches!(a, Applied::Fresh { .. }))
                            .count() as u64;
                    }
                }
            }
            done.poisoned += received.iter().filter(|r| r.read.is_err()).count() as u64;
            let pending = received.last().map_or(0, |r| r.pending);
            if reported.elapsed() >= Duration::from_secs(5) {
                tracing::info!(applied = done.events, pending, "rebuilding the ledger");
                reported = std::time::Instant::now();
            }
            if pending == 0 {
                break;
            }
        }
    }
    done.seconds = started.elapsed().as_secs_f64();
    Ok(done)
}
