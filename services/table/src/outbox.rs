//! The outbox publisher: every stored event goes to NATS JetStream after its transaction commits.
//!
//! The append that stores events also queues them in the `outbox` table, in the same
//! transaction, and hands them to this publisher in memory ([`Outbox::queue`], called while the
//! table's lock is held, so a table's events arrive in version order). The publisher sends each
//! batch in order on its one connection (JetStream stores a connection's messages in the order
//! they arrive), waits for every ack, then deletes the acked outbox rows (those of many batches
//! in one statement, at most [`DELETE_EVERY`] after their ack). So the store is read only when
//! something went wrong:
//!
//! * **A gap.** Events of a table are published straight from memory only when this publisher
//!   knows every earlier version is on JetStream (it published them itself). Otherwise (the
//!   first events of a table after a start, or a table another replica appended to in between)
//!   it first publishes that table's older outbox rows, oldest first. An event another replica
//!   already published is no longer in the outbox (rows are deleted only after the ack), so the
//!   subject never shows a version before the one it follows.
//! * **A failure.** A failed publish or ack leaves its rows in the outbox and forgets what the
//!   publisher knew of those tables.
//! * **The sweep.** At start (everything) and every [`SWEEP`] (rows older than [`SWEEP_AGE`]),
//!   the publisher republishes what is left in the outbox, oldest first: what a crashed process,
//!   a failed ack or a lost hand-over left behind.
//!
//! `Nats-Msg-Id` is the event id, so an event published twice (a crash between publish and
//! delete, the sweep and a replica racing) is dropped by JetStream as a duplicate within the
//! stream's duplicate window.
//!
//! Subjects (prefix = `nats.subject_prefix`, `okey` by default):
//! * `{prefix}.table.{table}.events`: every event, as the public may see it (no rack, no drawn
//!   tile, no pile). Message id: the event id.
//! * `{prefix}.table.{table}.seat.{n}`: what only seat `n` may see: its dealt rack, its own
//!   draws. Message id: `{event id}.seat.{n}`.
//!
//! Each message is JSON ([`Published`]) with headers `Nats-Msg-Id`, `Okey-Table`,
//! `Okey-Version`, `Okey-Event-Type` and the W3C trace context of its publish span.
//!
//! Traces: every message is published in a PRODUCER span (`publish {subject template}`, until
//! its ack), a child of the span that appended the event (its context is stored in the event's
//! metadata), so the consumers' spans, children of the publish span, join the trace of the call
//! or the server play that made the event. A sweep that finds rows left behind is a root span
//! of its own (`outbox sweep`), which each publish span it makes links to.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::{self, stream};
use okey_platform::telemetry;
use sqlx::types::Uuid;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::Instrument;

use crate::domain::{Published, Seed, Shown, show};
use crate::store::{Recorded, Store};

/// Told of every table version the publisher publishes or hears another replica publish, so
/// the process's update streams wake (the application's `service::Sightings`).
pub trait Sighted: Send + Sync {
    fn saw(&self, table_id: Uuid, version: u64);
}

/// The subject names of this deployment.
#[derive(Clone, Debug)]
pub struct Subjects {
    prefix: String,
    /// The subjects with their variable parts named, as publish spans are named.
    public_template: String,
    seat_template: String,
}

impl Subjects {
    pub fn new(prefix: &str) -> Subjects {
        Subjects {
            prefix: prefix.to_owned(),
            public_template: format!("{prefix}.table.{{table}}.events"),
            seat_template: format!("{prefix}.table.{{table}}.seat.{{seat}}"),
        }
    }

    /// The JetStream stream holding every table subject.
    pub fn stream_name(&self) -> String {
        let clean: String = self
            .prefix
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        format!("{clean}_TABLE_EVENTS")
    }

    /// Public events of a table.
    pub fn public(&self, table_id: Uuid) -> String {
        format!("{}.table.{table_id}.events", self.prefix)
    }

    /// Public events of every table (for wake-ups).
    pub fn all_public(&self) -> String {
        format!("{}.table.*.events", self.prefix)
    }

    /// A seat's private updates.
    pub fn seat(&self, table_id: Uuid, seat: u8) -> String {
        format!("{}.table.{table_id}.seat.{seat}", self.prefix)
    }

    /// The table id in a public subject.
    pub fn table_of(&self, subject: &str) -> Option<Uuid> {
        let rest = subject
            .strip_prefix(&self.prefix)?
            .strip_prefix(".table.")?;
        Uuid::parse_str(rest.strip_suffix(".events")?).ok()
    }
}

/// Creates the stream, or gives an existing one the configured age limit: a changed
/// `nats.events_max_age_secs` takes effect at the next start (0: no limit). An existing stream's
/// other settings (replicas, storage, limits an operator set) stay as they are.
pub async fn ensure_stream(
    js: &jetstream::Context,
    subjects: &Subjects,
    max_age: Duration,
) -> Result<(), async_nats::Error> {
    let stream = js
        .get_or_create_stream(stream::Config {
            name: subjects.stream_name(),
            subjects: vec![format!("{}.table.>", subjects.prefix)],
            duplicate_window: Duration::from_secs(
                okey_platform::settings::NATS_DUPLICATE_WINDOW_SECS,
            ),
            max_age,
            ..Default::default()
        })
        .await?;
    let existing = &stream.cached_info().config;
    if existing.max_age != max_age {
        js.update_stream(stream::Config {
            max_age,
            ..existing.clone()
        })
        .await?;
    }
    Ok(())
}

/// Events (of one table, consecutive versions) an append stored.
type Stored = Vec<Recorded>;

/// The publisher's in-memory queue; cloned into every [`Tables`].
#[derive(Clone, Debug)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Stored>,
}

/// The receiving end of an [`Outbox`], consumed by [`run`].
pub struct OutboxQueue {
    rx: mpsc::UnboundedReceiver<Stored>,
}

impl Outbox {
    pub fn new() -> (Outbox, OutboxQueue) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Outbox { tx }, OutboxQueue { rx })
    }

    /// Hands stored events to the publisher. Call it while holding the table's lock, so a
    /// table's events are queued in version order. If the publisher is gone (the process is
    /// stopping) the rows stay in the outbox for the next sweep.
    pub fn queue(&self, stored: Stored) {
        if !stored.is_empty() {
            let _ = self.tx.send(stored);
        }
    }
}

/// Events published per sweep query, and at most per batch from memory.
const BATCH: usize = 256;
/// How often outbox rows left behind are looked for.
pub const SWEEP: Duration = Duration::from_secs(2);
/// Rows younger than this are still on their way from memory and are not swept.
pub const SWEEP_AGE: Duration = Duration::from_secs(2);
/// The first sweep after a failure comes this soon.
const RETRY: Duration = Duration::from_millis(500);
/// Tables whose published version is remembered; more are forgotten (and gap-checked again).
const REMEMBERED_TABLES: usize = 100_000;

/// Publishing this far behind the appends is logged (a warning at most every
/// [`LAG_WARNING_EVERY`]): other replicas' streams and the accounts statistics see events late.
const LAG_WARNING_MS: i64 = 1_000;
const LAG_WARNING_EVERY: Duration = Duration::from_secs(10);

/// Acked events' outbox rows are deleted together, once this many are waiting or this long after
/// the first of them was acked: one statement for many batches. Well under [`SWEEP_AGE`], so the
/// sweep does not take acked rows for lost ones (and if it did, JetStream drops the copy as a
/// duplicate).
const DELETE_EVERY: Duration = Duration::from_millis(100);
const DELETE_AT: usize = 4096;

/// PostgreSQL connections of the publisher's own pool.
const PUBLISHER_CONNECTIONS: u32 = 2;

/// Starts the publisher on a thread of its own, with its own runtime, NATS connection and
/// PostgreSQL pool (connected with the same retries as the service's). The same thread follows
/// the other replicas' events ([`follow`]) and tells `sightings`.
///
/// Publishing is a chain of short waits (hand a message to the NATS connection, wait for its ack,
/// delete the rows); on the service's runtime each wake-up queued behind every gRPC call in
/// flight, so under load the publisher fell seconds behind the appends. On its own thread it is
/// scheduled by the OS beside the runtime's workers and keeps up. The thread ends when every
/// [`Outbox`] is dropped.
pub fn start(
    settings: &okey_platform::Settings,
    migrator: &'static sqlx::migrate::Migrator,
    subjects: Subjects,
    queue: OutboxQueue,
    sightings: Arc<dyn Sighted>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let mut settings = settings.clone();
    settings.database.max_connections = PUBLISHER_CONNECTIONS;
    std::thread::Builder::new()
        .name("outbox".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the outbox thread builds its runtime");
            runtime.block_on(async move {
                let needs = okey_platform::Needs {
                    postgres: Some(migrator),
                    nats: true,
                    // What this connection publishes is not delivered back to its follower:
                    // the process knows its own appends already.
                    nats_no_echo: true,
                    redis: false,
                };
                let dependencies = loop {
                    match okey_platform::Dependencies::connect(&settings, needs).await {
                        Ok(d) => break d,
                        Err(e) => {
                            tracing::warn!(error = %e, "outbox: cannot connect; retrying");
                            tokio::time::sleep(RETRY).await;
                        }
                    }
                };
                let store = Store::new(dependencies.postgres.clone().expect("postgres is needed"));
                let js = dependencies.jetstream.clone().expect("nats is needed");
                let client = dependencies.nats.clone().expect("nats is needed");
                let follower = tokio::spawn(follow(client, subjects.clone(), sightings.clone()));
                run(store, js, subjects, queue, sightings).await;
                follower.abort();
            });
        })
}

/// Publishes queued events, and sweeps the outbox, until every [`Outbox`] is dropped.
pub async fn run(
    store: Store,
    js: jetstream::Context,
    subjects: Subjects,
    mut queue: OutboxQueue,
    sightings: Arc<dyn Sighted>,
) {
    let meter = okey_platform::metrics::meter();
    let mut publisher = Publisher {
        store,
        js,
        subjects,
        published_events: meter
            .u64_counter("okey.table.outbox.published")
            .with_description("Events the outbox put on JetStream (acked), from memory or swept.")
            .build(),
        lag: meter
            .f64_histogram("okey.table.outbox.lag")
            .with_unit("s")
            .with_description("From an event's commit to its JetStream ack (a batch's oldest).")
            .with_boundaries(vec![
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            ])
            .build(),
        published: HashMap::new(),
        sightings,
        acked: Vec::new(),
        acked_since: None,
        oldest_left: Arc::default(),
    };
    let oldest_left = publisher.oldest_left.clone();
    meter
        .f64_observable_gauge("okey.table.outbox.behind")
        .with_unit("s")
        .with_description(
            "Age of the oldest event the last sweep found unpublished (older than the sweep's \
             2 s); 0 when it found none. Grows while JetStream does not answer.",
        )
        .with_callback(move |o| o.observe(behind_secs(&oldest_left, now_ms()), &[]))
        .build();
    // Everything an earlier process left, whatever its age.
    let mut next_sweep = match publisher.sweep(Duration::ZERO, usize::MAX).await {
        Ok(_) => Instant::now() + SWEEP,
        Err(e) => {
            tracing::warn!(error = %e, "outbox: sweep failed; retrying");
            Instant::now() + RETRY
        }
    };
    let mut last_lag_warning = Instant::now() - LAG_WARNING_EVERY;
    loop {
        let delete_due = publisher.acked_since.map(|t| t + DELETE_EVERY);
        let first = tokio::select! {
            stored = queue.rx.recv() => match stored {
                Some(stored) => Some(stored),
                None => {
                    if let Err(e) = publisher.delete_acked(true).await {
                        tracing::warn!(error = %e, "outbox: deleting published rows failed; the next start republishes them");
                    }
                    return;
                }
            },
            () = tokio::time::sleep_until(next_sweep) => None,
            () = tokio::time::sleep_until(delete_due.unwrap_or(next_sweep)), if delete_due.is_some() => None,
        };
        let mut idle = true;
        if let Some(first) = first {
            let mut batch = vec![first];
            let mut events = batch[0].len();
            while events < BATCH {
                match queue.rx.try_recv() {
                    Ok(stored) => {
                        events += stored.len();
                        batch.push(stored);
                    }
                    Err(_) => break,
                }
            }
            idle = events < BATCH;
            // How far behind the appends publishing is: the oldest event of the batch.
            let behind = batch
                .first()
                .and_then(|stored| stored.first())
                .map(|e| (sqlx::types::chrono::Utc::now() - e.recorded_at).num_milliseconds())
                .unwrap_or(0);
            if behind >= LAG_WARNING_MS && last_lag_warning.elapsed() >= LAG_WARNING_EVERY {
                last_lag_warning = Instant::now();
                tracing::warn!(
                    behind_ms = behind,
                    events,
                    "outbox: publishing is behind the appends"
                );
            }
            if let Err(e) = publisher.publish_stored(batch).await {
                tracing::warn!(error = %e, "outbox: publish failed; the sweep retries");
                next_sweep = next_sweep.min(Instant::now() + RETRY);
            }
        }
        if let Err(e) = publisher.delete_acked(false).await {
            tracing::warn!(error = %e, "outbox: deleting published rows failed; retrying");
        }
        // The sweep runs when what was queued is out (so it does not republish rows on their
        // way from memory), or when it is long overdue under a load that never lets up.
        let now = Instant::now();
        if now >= next_sweep && (idle || now >= next_sweep + SWEEP * 5) {
            let swept = match publisher.delete_acked(true).await {
                Ok(()) => publisher.sweep(SWEEP_AGE, 1).await,
                Err(e) => Err(e.into()),
            };
            next_sweep = match swept {
                // A full page: more may be left; look again soon.
                Ok(true) => now + RETRY,
                Ok(false) => now + SWEEP,
                Err(e) => {
                    tracing::warn!(error = %e, "outbox: sweep failed; retrying");
                    now + RETRY
                }
            };
        }
    }
}

struct Publisher {
    store: Store,
    js: jetstream::Context,
    subjects: Subjects,
    /// `okey.table.outbox.published`: events on JetStream (acked), by how they got there.
    published_events: okey_platform::metrics::Counter<u64>,
    /// `okey.table.outbox.lag`: from an event's commit to its ack, in seconds (per batch, its
    /// oldest event).
    lag: okey_platform::metrics::Histogram<f64>,
    /// Per table, the last version this publisher knows JetStream holds (it published every
    /// version up to it, or saw them gone from the outbox).
    published: HashMap<Uuid, u64>,
    /// Told of every table version published here: events swept from the outbox may be another
    /// (crashed) replica's, which this process's streams have not heard of.
    sightings: Arc<dyn Sighted>,
    /// Outbox rows (positions) of acked events, not deleted yet, and when the first was acked.
    acked: Vec<i64>,
    acked_since: Option<Instant>,
    /// `okey.table.outbox.behind`: the commit time (milliseconds since the epoch) of the oldest
    /// event the last sweep found in the outbox, 0 when it found none. Kept while a sweep fails,
    /// so the age goes on growing.
    oldest_left: Arc<AtomicI64>,
}

/// Seconds from `oldest_left`'s commit time to `now_ms` (0 when none is left).
fn behind_secs(oldest_left: &AtomicI64, now_ms: i64) -> f64 {
    match oldest_left.load(Ordering::Relaxed) {
        0 => 0.0,
        at => now_ms.saturating_sub(at).max(0) as f64 / 1e3,
    }
}

fn now_ms() -> i64 {
    sqlx::types::chrono::Utc::now().timestamp_millis()
}

impl Publisher {
    /// Publishes events handed over by appends, after any older outbox rows of their tables.
    async fn publish_stored(&mut self, batch: Vec<Stored>) -> Result<(), async_nats::Error> {
        let mut send: Vec<Recorded> = Vec::new();
        // The version each table will be at once this batch is acked.
        let mut through: HashMap<Uuid, u64> = HashMap::new();
        for stored in batch {
            let (Some(head), Some(tail)) = (stored.first(), stored.last()) else {
                continue;
            };
            let (table_id, first, last) = (head.table_id, head.version, tail.version);
            let known = through
                .get(&table_id)
                .or(self.published.get(&table_id))
                .copied()
                // Nothing comes before a table's first event.
                .or((first == 1).then_some(0));
            if known == Some(first - 1) {
                send.extend(stored);
            } else if known.is_none_or(|k| k < last) {
                // A gap: publish what the outbox still holds of this table up to `last` (ours
                // included), oldest first.
                let rows = self.store.unpublished_of(table_id, last).await?;
                send.extend(
                    rows.into_iter()
                        .filter(|e| known.is_none_or(|k| e.version > k)),
                );
            }
            through.insert(table_id, last.max(known.unwrap_or(0)));
        }
        let tables: Vec<Uuid> = through.keys().copied().collect();
        match self.send(&send, "memory").await {
            Ok(()) => {
                if self.published.len() > REMEMBERED_TABLES {
                    self.published.clear();
                }
                self.published.extend(through);
                Ok(())
            }
            Err(e) => {
                self.forget(tables);
                Err(e)
            }
        }
    }

    /// Republishes outbox rows at least `min_age` old, oldest first, a page at a time, for at
    /// most `pages` pages, deleting each page's rows once JetStream acked them. Returns whether
    /// the last page was full (more may be left).
    async fn sweep(&mut self, min_age: Duration, pages: usize) -> Result<bool, async_nats::Error> {
        for _ in 0..pages {
            let batch = self.store.unpublished(min_age, BATCH as i64).await?;
            let full = batch.len() == BATCH;
            let Some(oldest) = batch.first() else {
                self.oldest_left.store(0, Ordering::Relaxed);
                return Ok(false);
            };
            // Positions follow commit order closely enough: the first row is the oldest.
            self.oldest_left.store(
                oldest.recorded_at.timestamp_millis().max(1),
                Ordering::Relaxed,
            );
            // Server-initiated: a trace of its own, which every publish span links to.
            let span = tracing::info_span!(
                parent: None,
                "outbox sweep",
                otel.name = "outbox sweep",
                events = batch.len(),
            );
            span.in_scope(|| {
                tracing::info!(
                    events = batch.len(),
                    "outbox: publishing events left unpublished"
                )
            });
            let tables: Vec<Uuid> = batch.iter().map(|e| e.table_id).collect();
            if let Err(e) = self.send(&batch, "sweep").instrument(span.clone()).await {
                telemetry::record_error(&span, "publish", &e);
                self.forget(tables);
                return Err(e);
            }
            if !full {
                // Everything it found is on JetStream now.
                self.oldest_left.store(0, Ordering::Relaxed);
                return Ok(false);
            }
            // The next page is read from the outbox: without the rows just acked deleted, it
            // would be this page again, for ever.
            self.delete_acked(true).await?;
        }
        Ok(true)
    }

    /// A publish of these tables' events failed: what is known of them no longer holds, so
    /// their next events are gap-checked against the outbox.
    fn forget(&mut self, tables: impl IntoIterator<Item = Uuid>) {
        for t in tables {
            self.published.remove(&t);
        }
    }

    /// Deletes the outbox rows of acked events: all of them when `now`, else only once
    /// [`DELETE_AT`] wait or the first waited [`DELETE_EVERY`].
    async fn delete_acked(&mut self, now: bool) -> Result<(), sqlx::Error> {
        let due = now
            || self.acked.len() >= DELETE_AT
            || self
                .acked_since
                .is_some_and(|t| t.elapsed() >= DELETE_EVERY);
        if !due || self.acked.is_empty() {
            return Ok(());
        }
        if let Err(e) = self.store.mark_published(&self.acked).await {
            // Not again at once (the loop would spin while the database is away): after RETRY.
            self.acked_since = Some(Instant::now() + RETRY);
            return Err(e);
        }
        self.acked.clear();
        self.acked_since = None;
        Ok(())
    }

    /// Publishes events in order, waits for every ack, then leaves their outbox rows to
    /// [`Publisher::delete_acked`].
    async fn send(
        &mut self,
        batch: &[Recorded],
        via: &'static str,
    ) -> Result<(), async_nats::Error> {
        let (store, js, subjects) = (&self.store, &self.js, &self.subjects);
        let mut seeds: BTreeMap<Uuid, BTreeMap<u32, Seed>> = BTreeMap::new();
        let mut acks = Vec::with_capacity(batch.len() * 2);
        // A sweep's publishes link to the sweep's span.
        let sweep = (via == "sweep").then(tracing::Span::current);
        for e in batch {
            let appended_under = telemetry::context_from_map(&e.metadata.trace);
            let public = okey_table::shown::public(&e.event);
            let private = match &public {
                // A deal shows each seat its rack: that needs the hand's seed.
                Shown::Dealt { .. } => {
                    if let std::collections::btree_map::Entry::Vacant(slot) =
                        seeds.entry(e.table_id)
                    {
                        slot.insert(store.seeds(e.table_id).await?);
                    }
                    true
                }
                Shown::Drawn { .. } => true,
                Shown::Public { .. } => false,
            };
            let message_id = e.event_id.to_string();
            let span = telemetry::publish_span(
                &subjects.public(e.table_id),
                &subjects.public_template,
                &message_id,
                &appended_under,
            );
            if let Some(sweep) = &sweep {
                telemetry::link(&span, sweep);
            }
            acks.push((
                publish(
                    js,
                    subjects.public(e.table_id),
                    e,
                    &message_id,
                    &public,
                    &span,
                )
                .await?,
                span,
            ));
            if private {
                let table_seeds = seeds.get(&e.table_id);
                for seat in 0..4u8 {
                    let mine = show(&e.event, Some(seat), |n| {
                        table_seeds.and_then(|s| s.get(&n).copied())
                    });
                    if mine != public {
                        let id = format!("{}.seat.{seat}", e.event_id);
                        let subject = subjects.seat(e.table_id, seat);
                        let span = telemetry::publish_span(
                            &subject,
                            &subjects.seat_template,
                            &id,
                            &appended_under,
                        );
                        if let Some(sweep) = &sweep {
                            telemetry::link(&span, sweep);
                        }
                        acks.push((publish(js, subject, e, &id, &mine, &span).await?, span));
                    }
                }
            }
        }
        // Every message of the batch is on its way, in order on this one connection; now wait
        // for JetStream to have stored them all before taking them out of the outbox.
        for (ack, span) in acks {
            // In the span: it ends with the ack.
            let acked = std::future::IntoFuture::into_future(ack)
                .instrument(span.clone())
                .await;
            if let Err(error) = acked {
                telemetry::record_error(&span, "jetstream", &error);
                return Err(error.into());
            }
        }
        if let Some(oldest) = batch.iter().map(|e| e.recorded_at).min() {
            let lag = (sqlx::types::chrono::Utc::now() - oldest).num_microseconds();
            self.lag.record(lag.unwrap_or(0).max(0) as f64 / 1e6, &[]);
            self.published_events.add(
                batch.len() as u64,
                &[okey_platform::metrics::KeyValue::new("via", via)],
            );
        }
        let mut reached: HashMap<Uuid, u64> = HashMap::new();
        for e in batch {
            let v = reached.entry(e.table_id).or_default();
            *v = (*v).max(e.version);
        }
        for (table_id, version) in reached {
            self.sightings.saw(table_id, version);
        }
        if !batch.is_empty() {
            self.acked.extend(batch.iter().map(|e| e.position));
            self.acked_since.get_or_insert_with(Instant::now);
        }
        Ok(())
    }
}

/// Sends one message, carrying `span`'s trace context, and returns the future of its
/// JetStream ack.
async fn publish(
    js: &jetstream::Context,
    subject: String,
    e: &Recorded,
    message_id: &str,
    shown: &Shown,
    span: &tracing::Span,
) -> Result<jetstream::context::PublishAckFuture, async_nats::Error> {
    let body = Published {
        table: format!("tables/{}", e.table_id),
        version: e.version,
        event_id: e.event_id.to_string(),
        time: e.recorded_at.to_rfc3339(),
        event: shown.clone(),
    };
    let mut headers = HeaderMap::new();
    headers.insert("Nats-Msg-Id", message_id);
    headers.insert("Okey-Table", e.table_id.to_string().as_str());
    headers.insert("Okey-Version", e.version.to_string().as_str());
    headers.insert("Okey-Event-Type", e.event.name());
    telemetry::inject_into_nats_headers(&telemetry::context_of(span), &mut headers);
    let payload = body.encode();
    match js
        .publish_with_headers(subject, headers, payload.into())
        .instrument(span.clone())
        .await
    {
        Ok(ack) => Ok(ack),
        Err(error) => {
            telemetry::record_error(span, "nats", &error);
            Err(error.into())
        }
    }
}

/// Wakes the local update streams when another replica publishes an event (core NATS
/// subscription on the public subjects), so a stream served here sees commands applied elsewhere
/// at once. On the publisher's connection, made with `no_echo`: this process's own events are
/// not delivered back to it (its streams heard of them as they were appended).
pub async fn follow(client: async_nats::Client, subjects: Subjects, sightings: Arc<dyn Sighted>) {
    use tonic::codegen::tokio_stream::StreamExt;
    let mut sub = match client.subscribe(subjects.all_public()).await {
        Ok(sub) => sub,
        Err(e) => {
            tracing::warn!(error = %e, "cannot follow table events; streams poll the store");
            return;
        }
    };
    while let Some(message) = sub.next().await {
        let Some(table_id) = subjects.table_of(&message.subject) else {
            continue;
        };
        let version = message
            .headers
            .as_ref()
            .and_then(|h| h.get("Okey-Version"))
            .and_then(|v| v.as_str().parse::<u64>().ok());
        if let Some(version) = version {
            sightings.saw(table_id, version);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behind_is_the_oldest_left_events_age_and_zero_when_none_is_left() {
        let oldest = AtomicI64::new(0);
        assert_eq!(behind_secs(&oldest, 50_000), 0.0);
        oldest.store(40_000, Ordering::Relaxed);
        assert_eq!(behind_secs(&oldest, 52_500), 12.5);
        // A clock that went back reads 0, never a negative age.
        assert_eq!(behind_secs(&oldest, 39_000), 0.0);
    }
}
