//! The table service's application layer: loads a table by folding its stored events (cached per
//! table; the store stays the truth), decides a command with the pure [`Table`], appends the
//! events with the expected version, and hands them to the outbox and the update streams.
//!
//! Concurrency: commands on one table are serialized in this process by the table's lock, and
//! across processes by the expected-version append. A conflict (another replica appended first)
//! reloads the events after the cached version and decides again, up to [`MAX_ATTEMPTS`] times,
//! then answers [`ServiceError::Busy`] (ABORTED).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use okey_rules::{OpenKind, RuleSet, Seat, SeatView};
use serde::{Deserialize, Serialize};
use sqlx::types::Uuid;
use sqlx::types::chrono::{DateTime, Utc};
use tokio::sync::{mpsc, watch};

use crate::deadlines::AppendObserver;
use crate::domain::{Admission, Phase, Shown, Table, TableCommand, TableError, TableEvent, show};
use crate::outbox::Outbox;
use crate::store::{Append, AppendError, Metadata, Recorded, Store, new_seed, random_uuid};

/// Decide-and-append attempts before a command is answered ABORTED.
pub const MAX_ATTEMPTS: usize = 8;
/// Events read from the store at once when catching up or replaying a stream.
const PAGE: i64 = 500;
/// A quiet update stream gets a heartbeat this often.
pub const HEARTBEAT: Duration = Duration::from_secs(15);
/// A stream re-reads the store at least this often, in case a wake-up was missed, unless set
/// otherwise (`live.stream_recheck_ms`).
pub const DEFAULT_RECHECK: Duration = Duration::from_secs(1);

/// Why a call failed. The grpc module maps each to one status.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error(transparent)]
    Table(#[from] TableError),
    #[error("no such table")]
    NotFound,
    #[error("the rule set is not valid: {0}")]
    InvalidRules(String),
    #[error("the table is at version {actual}, not {expected}")]
    VersionConflict { expected: u64, actual: u64 },
    #[error("the table kept changing under this command; decide again")]
    Busy,
    #[error("the table is at version {actual}; it has not reached version {asked}")]
    VersionAhead { asked: u64, actual: u64 },
    #[error("event store: {0}")]
    Store(#[from] sqlx::Error),
    #[error("the stored answer to this request cannot be read")]
    StoredAnswer,
}

/// What anyone may know about a table at a version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// The table's UUID, as text.
    pub table_id: String,
    pub rules: RuleSet,
    pub seats: [Option<String>; 4],
    /// Display names of the seated players (see [`Table::names`]).
    #[serde(default)]
    pub names: [Option<String>; 4],
    pub phase: PhaseName,
    pub hand_number: u32,
    pub version: u64,
    pub totals: [i64; 4],
    pub rack_counts: [usize; 4],
    pub opened: [Option<OpenKind>; 4],
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at: Option<i64>,
    /// Seats a bot plays for an absent player.
    #[serde(default)]
    pub substituted: [bool; 4],
    /// Where the table came from and whom it admits.
    #[serde(default)]
    pub admission: Admission,
}

/// [`Phase`] in serializable form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseName {
    Waiting,
    Playing,
    Finished,
}

/// The answer to a command (stored for a retry) or to a read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub summary: Summary,
    /// The caller's seat, if seated.
    pub seat: Option<Seat>,
    /// `(version, event)` the command appended, as the caller may see them.
    pub events: Vec<(u64, Shown)>,
    /// The caller's view of the current hand.
    pub view: Option<SeatView>,
    /// For a caller who sits nowhere (a spectator) reading a table: the current hand as anyone
    /// at the table sees it, with no rack (see [`Table::public_view`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public: Option<SeatView>,
}

/// What `handled_commands.response` holds: enough to give a retry the first answer.
///
/// A command stores only the versions it appended and who saw them: its events are immutable at
/// those versions, so the first answer is rebuilt exactly from the store (the events, and the
/// state folded to `last`). This keeps the row small (no view, no TOAST compression) and spares
/// serializing a view nobody may ask for again. `CreateTable` (and rows written before this
/// form) keep the whole outcome.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Answer {
    Versions {
        first: u64,
        last: u64,
        /// The seat the events were shown to (the caller's, before or after the command).
        viewer: Option<Seat>,
    },
    Outcome(Box<Outcome>),
}

/// How fresh a read must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// Every append committed before the read, by any process: the store is checked.
    Latest,
    /// This version or a newer one: memory serves when it holds it and this process has heard
    /// of nothing newer; else the store is checked, and a version the table has not reached is
    /// [`ServiceError::VersionAhead`].
    AtLeast(u64),
}

/// One message of a seat's update stream.
#[derive(Clone, Debug)]
pub enum Update {
    Snapshot(Box<Outcome>),
    Event {
        version: u64,
        time: DateTime<Utc>,
        shown: Box<Shown>,
    },
    Heartbeat {
        version: u64,
    },
}

struct Entry {
    table: Option<Table>,
    created_at: Option<DateTime<Utc>>,
}

/// A locked cache slot (see [`Tables::lock_entry`]).
struct EntryGuard {
    guard: tokio::sync::OwnedMutexGuard<Entry>,
    slot: Arc<tokio::sync::Mutex<Entry>>,
    cache: Arc<Mutex<HashMap<Uuid, Cached>>>,
    table_id: Uuid,
}

impl std::ops::Deref for EntryGuard {
    type Target = Entry;
    fn deref(&self) -> &Entry {
        &self.guard
    }
}

impl std::ops::DerefMut for EntryGuard {
    fn deref_mut(&mut self) -> &mut Entry {
        &mut self.guard
    }
}

impl Drop for EntryGuard {
    fn drop(&mut self) {
        if self.guard.table.is_some() {
            return;
        }
        let mut cache = self.cache.lock().expect("cache lock");
        if cache
            .get(&self.table_id)
            .is_some_and(|c| Arc::ptr_eq(&c.entry, &self.slot))
        {
            cache.remove(&self.table_id);
        }
    }
}

/// A table in memory, and when it was last asked about.
struct Cached {
    entry: Arc<tokio::sync::Mutex<Entry>>,
    used: Instant,
}

/// The table service's own instruments (besides every call's duration and status, which the
/// platform records).
#[derive(Clone)]
struct TableMetrics {
    /// `okey.table.events.appended`: events a command appended here.
    appended: okey_platform::metrics::Counter<u64>,
    /// `okey.table.append.conflicts`: appends another replica beat (decided again).
    conflicts: okey_platform::metrics::Counter<u64>,
}

impl TableMetrics {
    fn new(cache: std::sync::Weak<Mutex<HashMap<Uuid, Cached>>>) -> TableMetrics {
        let meter = okey_platform::metrics::meter();
        // `okey.table.tables.cached`: tables this process holds in memory.
        let _gauge = meter
            .u64_observable_gauge("okey.table.tables.cached")
            .with_description("Tables this process holds in memory.")
            .with_callback(move |observer| {
                if let Some(cache) = cache.upgrade() {
                    observer.observe(cache.lock().expect("cache lock").len() as u64, &[]);
                }
            })
            .build();
        TableMetrics {
            appended: meter
                .u64_counter("okey.table.events.appended")
                .with_description("Events commands appended in this process.")
                .build(),
            conflicts: meter
                .u64_counter("okey.table.append.conflicts")
                .with_description("Appends another replica got to first; decided again.")
                .build(),
        }
    }
}

/// Most tables held in memory unless set otherwise (`live.max_cached_tables`).
pub const DEFAULT_MAX_CACHED: usize = 10_000;

/// A table nobody asked about for this long leaves memory ([`Tables::evict_idle`]).
pub const IDLE_TABLE: Duration = Duration::from_secs(30 * 60);

/// Wakes the update streams of this process when a table reached a version appended by any
/// replica (see [`Tables::sightings`]). Holds the feeds weakly: it does not keep [`Tables`] alive.
#[derive(Clone)]
pub struct Sightings {
    feeds: std::sync::Weak<Mutex<HashMap<Uuid, Arc<Feed>>>>,
}

impl Sightings {
    /// Says `table_id` reached `version`; streams following it read on. Nothing if no stream
    /// here follows the table, or the version is not newer than what this process knows.
    pub fn saw(&self, table_id: Uuid, version: u64) {
        let Some(feeds) = self.feeds.upgrade() else {
            return;
        };
        let existing = feeds.lock().expect("feeds lock").get(&table_id).cloned();
        if let Some(feed) = existing {
            feed.version.send_if_modified(|v| {
                let newer = version > *v;
                if newer {
                    *v = version;
                }
                newer
            });
        }
    }
}

/// The tables this process serves.
#[derive(Clone)]
pub struct Tables {
    store: Store,
    cache: Arc<Mutex<HashMap<Uuid, Cached>>>,
    feeds: Arc<Mutex<HashMap<Uuid, Arc<Feed>>>>,
    metrics: TableMetrics,
    outbox: Outbox,
    /// Told after every append here (turn deadlines and bot moves, `deadlines`).
    observer: Option<Arc<dyn AppendObserver>>,
    /// Most tables held in memory (`live.max_cached_tables`).
    max_cached: usize,
    /// How often a quiet update stream reads the store (`live.stream_recheck_ms`).
    recheck: Duration,
}

fn summary(table: &Table, table_id: Uuid, created_at: Option<DateTime<Utc>>) -> Summary {
    let hand = table.hand.as_ref();
    Summary {
        table_id: table_id.to_string(),
        rules: table.rules.clone(),
        seats: table.seats.clone(),
        names: table.names.clone(),
        phase: match table.phase {
            Phase::Waiting => PhaseName::Waiting,
            Phase::Playing => PhaseName::Playing,
            Phase::Finished => PhaseName::Finished,
        },
        hand_number: table.hand_number,
        version: table.version,
        totals: table.record.totals,
        rack_counts: std::array::from_fn(|s| hand.map_or(0, |h| h.racks[s].len())),
        opened: std::array::from_fn(|s| hand.and_then(|h| h.opened[s].map(|o| o.kind))),
        created_at: created_at.map(|t| t.timestamp_millis()),
        substituted: table.absence.substituted,
        admission: table.admission.clone(),
    }
}

impl Tables {
    /// Serves tables from `store`; every append's events are handed to `outbox`.
    pub fn new(store: Store, outbox: Outbox) -> Tables {
        let cache: Arc<Mutex<HashMap<Uuid, Cached>>> = Arc::default();
        Tables {
            store,
            metrics: TableMetrics::new(Arc::downgrade(&cache)),
            cache,
            feeds: Arc::default(),
            outbox,
            observer: None,
            max_cached: DEFAULT_MAX_CACHED,
            recheck: DEFAULT_RECHECK,
        }
    }

    /// A quiet update stream reads the store every `recheck` (at least a millisecond).
    pub fn with_stream_recheck(mut self, recheck: Duration) -> Tables {
        self.recheck = recheck.max(Duration::from_millis(1));
        self
    }

    /// Holds at most `max` tables in memory (at least one).
    pub fn with_max_cached(mut self, max: usize) -> Tables {
        self.max_cached = max.max(1);
        self
    }

    /// Tells `observer` about every append this process makes.
    pub fn with_observer(mut self, observer: Arc<dyn AppendObserver>) -> Tables {
        self.observer = Some(observer);
        self
    }

    /// The table's state now (caught up with the store), for the server's own plays.
    pub async fn state(&self, table_id: Uuid) -> Result<Table, ServiceError> {
        let mut entry = self.lock_entry(table_id).await;
        self.catch_up(table_id, &mut entry).await?;
        Ok(entry.table.clone().expect("caught up"))
    }

    /// Where `actor` sits at the table now (caught up with the store).
    pub async fn seat_of(&self, table_id: Uuid, actor: &str) -> Result<Option<Seat>, ServiceError> {
        let mut entry = self.lock_entry(table_id).await;
        self.catch_up(table_id, &mut entry).await?;
        Ok(entry.table.as_ref().and_then(|t| t.seat_of(actor)))
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// What this process knows has happened at a table (see [`Feed`]).
    fn feed(&self, table_id: Uuid) -> Arc<Feed> {
        self.feeds
            .lock()
            .expect("feeds lock")
            .entry(table_id)
            .or_insert_with(|| {
                Arc::new(Feed {
                    version: watch::channel(0).0,
                    recent: Mutex::default(),
                })
            })
            .clone()
    }

    /// The newest version of a table this process has heard of: its own appends and what its
    /// publisher saw published ([`Sightings`]); 0 when it follows nothing of the table.
    fn heard_of(&self, table_id: Uuid) -> u64 {
        self.feeds
            .lock()
            .expect("feeds lock")
            .get(&table_id)
            .map_or(0, |feed| *feed.version.borrow())
    }

    /// Drops a table's cached state and feed (its match is over): a process that serves
    /// thousands of matches a day keeps only the ones being played. A later call on the table
    /// folds it from the store again; a stream still open on it reads the store.
    fn forget(&self, table_id: Uuid) {
        self.cache.lock().expect("cache lock").remove(&table_id);
        self.feeds.lock().expect("feeds lock").remove(&table_id);
    }

    /// How many tables this process holds in memory (for tests and metrics).
    pub fn cached_tables(&self) -> usize {
        self.cache.lock().expect("cache lock").len()
    }

    /// A handle that wakes this process's update streams when a table reaches a version
    /// (given to the outbox publisher, which hears of other replicas' events).
    pub fn sightings(&self) -> Sightings {
        Sightings {
            feeds: Arc::downgrade(&self.feeds),
        }
    }

    /// The table's cache slot, locked. A slot made for a table the store does not hold (nothing
    /// was folded into it) leaves the cache when the guard drops, so an unknown table id costs
    /// nothing that outlives the call.
    async fn lock_entry(&self, table_id: Uuid) -> EntryGuard {
        let slot = self.entry(table_id);
        EntryGuard {
            guard: slot.clone().lock_owned().await,
            slot,
            cache: self.cache.clone(),
            table_id,
        }
    }

    fn entry(&self, table_id: Uuid) -> Arc<tokio::sync::Mutex<Entry>> {
        let mut cache = self.cache.lock().expect("cache lock");
        let now = Instant::now();
        if let Some(cached) = cache.get_mut(&table_id) {
            cached.used = now;
            return cached.entry.clone();
        }
        let entry = Arc::new(tokio::sync::Mutex::new(Entry {
            table: None,
            created_at: None,
        }));
        cache.insert(
            table_id,
            Cached {
                entry: entry.clone(),
                used: now,
            },
        );
        if cache.len() > self.max_cached {
            // Full: the table asked about longest ago that no call is using leaves (a later
            // call folds it from the store again). Its feed stays while a stream follows it.
            let oldest = cache
                .iter()
                .filter(|(_, c)| Arc::strong_count(&c.entry) == 1)
                .min_by_key(|(_, c)| c.used)
                .map(|(id, _)| *id);
            if let Some(id) = oldest {
                cache.remove(&id);
                drop(cache);
                let mut feeds = self.feeds.lock().expect("feeds lock");
                if feeds.get(&id).is_some_and(|f| Arc::strong_count(f) == 1) {
                    feeds.remove(&id);
                }
            }
        }
        entry
    }

    /// Drops the tables nobody asked about for `idle` and nobody is using now (a match left
    /// unfinished, a table only looked at), with their feeds unless a stream still follows
    /// them. Returns how many. A later call folds a table from the store again.
    pub fn evict_idle(&self, idle: Duration) -> usize {
        let now = Instant::now();
        let mut gone = Vec::new();
        self.cache
            .lock()
            .expect("cache lock")
            .retain(|table_id, cached| {
                let keep =
                    now.duration_since(cached.used) < idle || Arc::strong_count(&cached.entry) > 1;
                if !keep {
                    gone.push(*table_id);
                }
                keep
            });
        if !gone.is_empty() {
            self.feeds
                .lock()
                .expect("feeds lock")
                .retain(|table_id, feed| !gone.contains(table_id) || Arc::strong_count(feed) > 1);
        }
        gone.len()
    }

    /// Folds the events stored after the cached version into the entry.
    async fn catch_up(&self, table_id: Uuid, entry: &mut Entry) -> Result<(), ServiceError> {
        loop {
            let after = entry.table.as_ref().map_or(0, |t| t.version);
            let events = self.store.latest(table_id, after, PAGE).await?;
            if events.is_empty() {
                break;
            }
            let needs_seed = |t: &Table, e: &Recorded| matches!(e.event, TableEvent::HandDealt { hand_number, .. } if t.seed(hand_number).is_none());
            let seeds = match &entry.table {
                Some(t) if !events.iter().any(|e| needs_seed(t, e)) => BTreeMap::new(),
                _ => self.store.seeds(table_id).await?,
            };
            let full = events.len() as i64 == PAGE;
            match &mut entry.table {
                None => {
                    entry.created_at = events.first().map(|e| e.recorded_at);
                    entry.table = Some(Table::replay(events.iter().map(|e| &e.event), seeds));
                }
                Some(table) => table.catch_up(events.iter().map(|e| &e.event), seeds),
            }
            if !full {
                break;
            }
        }
        if entry.table.is_none() {
            return Err(ServiceError::NotFound);
        }
        Ok(())
    }

    /// Creates a table. A retry (same caller and request id) returns the first answer.
    pub async fn create(
        &self,
        actor: &str,
        request_id: &str,
        rules: RuleSet,
        seats: [Option<String>; 4],
        admission: Admission,
        trace: BTreeMap<String, String>,
    ) -> Result<Outcome, ServiceError> {
        // The table id is derived from the creator's request id so a retry lands on the same
        // stream and is answered from `handled_commands`.
        let table_id = derived_table_id(actor, request_id);
        let key = request_key(actor, request_id);
        if let Some(first) = self.answered_unlocked(table_id, &key, actor).await? {
            return Ok(first);
        }
        let seed = new_seed();
        let decision = Table::create_with(rules.clone(), seats, admission, &seed)
            .map_err(ServiceError::InvalidRules)?;
        let mut seeds = BTreeMap::new();
        if let Some((n, seed)) = decision.dealt {
            seeds.insert(n, seed);
        }
        let table = Table::replay(&decision.events, seeds);
        // Like any command's, the answer is rebuilt from the store on a retry: the creation time
        // is the stored one, which this process learns only from the append.
        let answer = Answer::Versions {
            first: 1,
            last: table.version,
            viewer: table.seat_of(actor),
        };
        let response = serde_json::to_vec(&answer).expect("answers serialize");
        let metadata = Metadata {
            actor: actor.to_owned(),
            trace,
            schema: 1,
        };
        let appended = self
            .store
            .append(Append {
                table_id,
                expected: 0,
                events: &decision.events,
                metadata: &metadata,
                request: Some((&key, &response)),
                dealt: decision.dealt,
                revealed: None,
                create: Some(serde_json::to_value(&rules).expect("rules serialize")),
            })
            .await;
        match appended {
            Ok(stored) => {
                if let Some(observer) = &self.observer {
                    observer.appended(table_id, &table, &decision.events);
                }
                let created_at = stored.first().map(|e| e.recorded_at);
                let outcome = Outcome {
                    summary: summary(&table, table_id, created_at),
                    seat: table.seat_of(actor),
                    events: Vec::new(),
                    view: None,
                    public: None,
                };
                self.outbox.queue(stored);
                Ok(outcome)
            }
            Err(AppendError::Duplicate | AppendError::Conflict) => {
                match self.answered_unlocked(table_id, &key, actor).await? {
                    Some(first) => Ok(first),
                    None => Err(ServiceError::Busy),
                }
            }
            Err(AppendError::Database(e)) => Err(e.into()),
        }
    }

    /// Plays a command for `actor`. A retry (same caller and request id) returns the first
    /// answer and changes nothing; a rejected command stores nothing.
    pub async fn submit(
        &self,
        table_id: Uuid,
        actor: &str,
        request_id: &str,
        command: TableCommand,
        expected_version: Option<u64>,
        trace: BTreeMap<String, String>,
    ) -> Result<Outcome, ServiceError> {
        let key = request_key(actor, request_id);
        let mut entry = self.lock_entry(table_id).await;
        if entry.table.is_none() {
            self.catch_up(table_id, &mut entry).await?;
        }
        let metadata = Metadata {
            actor: actor.to_owned(),
            trace,
            schema: 1,
        };
        for attempt in 0..MAX_ATTEMPTS {
            if attempt > 0 {
                self.catch_up(table_id, &mut entry).await?;
            }
            let table = entry.table.as_ref().expect("loaded above");
            let before = table.version;
            if let Some(expected) = expected_version
                && expected != before
            {
                if attempt == 0 {
                    continue; // The cache may be behind another replica: catch up first.
                }
                if let Some(first) = self.answered(table_id, &key, actor, &mut entry).await? {
                    return Ok(first);
                }
                return Err(ServiceError::VersionConflict {
                    expected,
                    actual: before,
                });
            }
            let seed = new_seed();
            let decision = match table.decide(&command, &seed) {
                Ok(d) => d,
                Err(error) => {
                    if let Some(first) = self.answered(table_id, &key, actor, &mut entry).await? {
                        return Ok(first);
                    }
                    if attempt == 0 {
                        // Decided on a cache that may be behind: check against the store.
                        self.catch_up(table_id, &mut entry).await?;
                        if entry.table.as_ref().is_some_and(|t| t.version != before) {
                            continue;
                        }
                    }
                    return Err(error.into());
                }
            };
            if decision.events.is_empty() {
                if let Some(first) = self.answered(table_id, &key, actor, &mut entry).await? {
                    return Ok(first);
                }
                let table = entry.table.as_ref().expect("loaded above");
                return Ok(outcome_of(
                    table,
                    table_id,
                    entry.created_at,
                    actor,
                    Vec::new(),
                ));
            }
            let mut after = table.clone();
            let first = after.version + 1;
            after.apply(&decision);
            let viewer = after.seat_of(actor).or(table.seat_of(actor));
            let answer = Answer::Versions {
                first,
                last: after.version,
                viewer,
            };
            let response = serde_json::to_vec(&answer).expect("answers serialize");
            let revealed = decision.events.iter().find_map(|e| match e {
                TableEvent::HandEnded { hand_number, .. } => Some(*hand_number),
                _ => None,
            });
            let appended = self
                .store
                .append(Append {
                    table_id,
                    expected: before,
                    events: &decision.events,
                    metadata: &metadata,
                    request: Some((&key, &response)),
                    dealt: decision.dealt,
                    revealed,
                    create: None,
                })
                .await;
            match appended {
                Ok(stored) => {
                    self.metrics.appended.add(stored.len() as u64, &[]);
                    let version = after.version;
                    if let Some(observer) = &self.observer {
                        observer.appended(table_id, &after, &decision.events);
                    }
                    let shown = decision
                        .events
                        .iter()
                        .enumerate()
                        .map(|(i, e)| (first + i as u64, show(e, viewer, |n| after.seed(n))))
                        .collect();
                    let outcome = outcome_of(&after, table_id, entry.created_at, actor, shown);
                    let finished = after.phase == Phase::Finished;
                    entry.table = Some(after);
                    // Still under the table's lock: the publisher and the update streams get a
                    // table's events in version order.
                    let feed = self.feed(table_id);
                    feed.remember(&stored);
                    self.outbox.queue(stored);
                    drop(entry);
                    feed.version.send_replace(version);
                    if finished {
                        self.forget(table_id);
                    }
                    return Ok(outcome);
                }
                Err(AppendError::Duplicate) => {
                    if let Some(first) = self.answered(table_id, &key, actor, &mut entry).await? {
                        return Ok(first);
                    }
                }
                Err(AppendError::Conflict) => {
                    self.metrics.conflicts.add(1, &[]);
                    tracing::debug!(%table_id, attempt, "version conflict; reloading");
                }
                Err(AppendError::Database(e)) => return Err(e.into()),
            }
        }
        Err(ServiceError::Busy)
    }

    /// The first answer to a request this table already handled (see [`Answer`]), if any.
    async fn answered(
        &self,
        table_id: Uuid,
        key: &str,
        actor: &str,
        entry: &mut Entry,
    ) -> Result<Option<Outcome>, ServiceError> {
        let Some(stored) = self.store.handled(table_id, key).await? else {
            return Ok(None);
        };
        let answer: Answer = serde_json::from_slice(&stored).map_err(|e| {
            tracing::error!(%table_id, error = %e, "a stored answer does not decode");
            ServiceError::StoredAnswer
        })?;
        let (first, last, viewer) = match answer {
            Answer::Outcome(outcome) => return Ok(Some(*outcome)),
            Answer::Versions {
                first,
                last,
                viewer,
            } => (first, last, viewer),
        };
        if entry.table.as_ref().is_none_or(|t| t.version < last) {
            self.catch_up(table_id, entry).await?;
        }
        let replayed;
        let (state, created_at) = match &entry.table {
            Some(t) if t.version == last => (t, entry.created_at),
            _ => {
                replayed = self.replay_to(table_id, last).await?;
                (&replayed.0, replayed.1)
            }
        };
        let events = self
            .store
            .load_after(table_id, first - 1, (last + 1 - first) as i64)
            .await?;
        let shown = events
            .iter()
            .map(|e| (e.version, show(&e.event, viewer, |n| state.seed(n))))
            .collect();
        Ok(Some(outcome_of(state, table_id, created_at, actor, shown)))
    }

    /// [`Self::answered`] for a caller that does not hold the table's lock.
    async fn answered_unlocked(
        &self,
        table_id: Uuid,
        key: &str,
        actor: &str,
    ) -> Result<Option<Outcome>, ServiceError> {
        let mut entry = self.lock_entry(table_id).await;
        self.answered(table_id, key, actor, &mut entry).await
    }

    /// The table folded from its first `version` stored events (the cache is past them), and
    /// when it was created.
    async fn replay_to(
        &self,
        table_id: Uuid,
        version: u64,
    ) -> Result<(Table, Option<DateTime<Utc>>), ServiceError> {
        let seeds = self.store.seeds(table_id).await?;
        let mut events: Vec<Recorded> = Vec::new();
        while (events.len() as u64) < version {
            let after = events.len() as u64;
            let page = self
                .store
                .load_after(table_id, after, PAGE.min((version - after) as i64))
                .await?;
            if page.is_empty() {
                break;
            }
            events.extend(page);
        }
        if events.is_empty() {
            return Err(ServiceError::NotFound);
        }
        let created_at = events.first().map(|e| e.recorded_at);
        Ok((
            Table::replay(events.iter().map(|e| &e.event), seeds),
            created_at,
        ))
    }

    /// The table as `actor` may see it now.
    pub async fn read(&self, table_id: Uuid, actor: &str) -> Result<Outcome, ServiceError> {
        self.read_fresh(table_id, actor, Freshness::Latest).await
    }

    /// What [`Tables::read`] answers, as fresh as `freshness` asks. With
    /// [`Freshness::AtLeast`], a table held in memory at that version or a newer one, and not
    /// behind any version this process has heard of (its own appends, and other replicas'
    /// events its publisher's connection follows), is answered without reading the store.
    pub async fn read_fresh(
        &self,
        table_id: Uuid,
        actor: &str,
        freshness: Freshness,
    ) -> Result<Outcome, ServiceError> {
        let mut entry = self.lock_entry(table_id).await;
        let held = match freshness {
            Freshness::Latest => false,
            Freshness::AtLeast(version) => entry
                .table
                .as_ref()
                .is_some_and(|t| t.version >= version && t.version >= self.heard_of(table_id)),
        };
        if !held {
            self.catch_up(table_id, &mut entry).await?;
        }
        let table = entry.table.as_ref().expect("caught up");
        if let Freshness::AtLeast(asked) = freshness
            && table.version < asked
        {
            return Err(ServiceError::VersionAhead {
                asked,
                actual: table.version,
            });
        }
        let mut outcome = outcome_of(table, table_id, entry.created_at, actor, Vec::new());
        if outcome.seat.is_none() {
            outcome.public = table.public_view();
        }
        Ok(outcome)
    }

    /// Legal commands and hints for `actor`'s seat in the current hand.
    pub async fn hints(
        &self,
        table_id: Uuid,
        actor: &str,
    ) -> Result<(u64, Option<okey_rules::hints::Hints>), ServiceError> {
        let mut entry = self.lock_entry(table_id).await;
        self.catch_up(table_id, &mut entry).await?;
        let table = entry.table.as_ref().expect("caught up");
        let seat = table.seat_of(actor).ok_or(TableError::NotSeated)?;
        let hints = table
            .hand
            .as_ref()
            .filter(|h| !h.is_over() && h.turn.seat == seat && table.phase == Phase::Playing)
            .map(|h| h.hints(seat));
        Ok((table.version, hints))
    }

    /// Streams `actor`'s updates after `after_version`: a snapshot first when it is 0, then every
    /// stored event as the caller may see it (replayed from the store, then live), heartbeats
    /// when quiet. Ends when the receiver is dropped.
    ///
    /// Each event is shown as the seat `actor` holds at that event's version, not at the
    /// stream's start: a caller who leaves their seat goes on watching as a spectator (no rack,
    /// no draw, no deal of whoever sits there next), and one who sits down again sees that
    /// seat's own tiles from then on. A version the table has not reached is
    /// [`ServiceError::VersionAhead`].
    pub async fn watch(
        &self,
        table_id: Uuid,
        actor: &str,
        after_version: u64,
    ) -> Result<mpsc::Receiver<Result<Update, ServiceError>>, ServiceError> {
        let first = self.read(table_id, actor).await?;
        let now = first.summary.version;
        if after_version > now {
            return Err(ServiceError::VersionAhead {
                asked: after_version,
                actual: now,
            });
        }
        // Who sits where at the version the stream goes on from.
        let mut seats = first.summary.seats.clone();
        if after_version != 0 && after_version != now {
            seats = Default::default();
            for e in self.store.seating(table_id, after_version).await? {
                e.event.reseat(&mut seats);
            }
        }
        let actor = actor.to_owned();
        let (tx, rx) = mpsc::channel(64);
        let tables = self.clone();
        let feed = self.feed(table_id);
        let mut latest = feed.version.subscribe();
        tokio::spawn(async move {
            let mut sent = after_version;
            if after_version == 0 {
                sent = first.summary.version;
                if tx
                    .send(Ok(Update::Snapshot(Box::new(first))))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            let mut seeds = BTreeMap::new();
            let mut quiet = Duration::ZERO;
            // After a quiet `recheck` the store is read whatever memory says (a wake-up from
            // another replica may have been missed). The stream wakes every `tick` to count
            // towards both that and the heartbeat.
            let recheck = tables.recheck;
            let tick = recheck.min(HEARTBEAT);
            let mut unread = Duration::ZERO;
            let mut read_store = false;
            loop {
                latest.borrow_and_update();
                let remembered = if read_store { None } else { feed.after(sent) };
                let events = match remembered {
                    Some(events) => events,
                    None => match tables.store.load_after(table_id, sent, PAGE).await {
                        Ok(events) => events,
                        Err(e) => {
                            let _ = tx.send(Err(e.into())).await;
                            return;
                        }
                    },
                };
                read_store = false;
                if events.iter().any(|e| matches!(e.event, TableEvent::HandDealt { hand_number, .. } if !seeds.contains_key(&hand_number)))
                {
                    match tables.store.seeds(table_id).await {
                        Ok(s) => seeds = s,
                        Err(e) => {
                            let _ = tx.send(Err(e.into())).await;
                            return;
                        }
                    }
                }
                for e in &events {
                    e.event.reseat(&mut seats);
                    let seat = seats
                        .iter()
                        .position(|p| p.as_deref() == Some(actor.as_str()))
                        .map(|s| s as Seat);
                    let shown = show(&e.event, seat, |n| seeds.get(&n).copied());
                    let update = Update::Event {
                        version: e.version,
                        time: e.recorded_at,
                        shown: Box::new(shown),
                    };
                    if tx.send(Ok(update)).await.is_err() {
                        return;
                    }
                    sent = e.version;
                }
                if !events.is_empty() {
                    quiet = Duration::ZERO;
                    continue;
                }
                tokio::select! {
                    () = tx.closed() => return,
                    changed = tokio::time::timeout(tick, latest.changed()) => {
                        if changed.is_err() {
                            unread += tick;
                            if unread >= recheck {
                                unread = Duration::ZERO;
                                read_store = true;
                            }
                            quiet += tick;
                            if quiet >= HEARTBEAT {
                                quiet = Duration::ZERO;
                                if tx.send(Ok(Update::Heartbeat { version: sent })).await.is_err() {
                                    return;
                                }
                            }
                        }
                    }
                }
            }
        });
        Ok(rx)
    }
}

/// Events an update stream may be fed from memory: the last [`RECENT`] a process appended to a
/// table, with consecutive versions.
const RECENT: usize = 128;

/// What this process knows has happened at a table: the latest version it knows of (woken by its
/// own appends and by other replicas' events seen on NATS) and the events it appended last.
/// Events never change once stored, so an update stream sends remembered events exactly as it
/// would have read them from the store; it reads the store only for what memory does not hold.
struct Feed {
    version: watch::Sender<u64>,
    recent: Mutex<VecDeque<Recorded>>,
}

impl Feed {
    /// Remembers events this process just appended (under the table's lock, so in order).
    fn remember(&self, stored: &[Recorded]) {
        let mut recent = self.recent.lock().expect("feed lock");
        if let (Some(last), Some(first)) = (recent.back(), stored.first())
            && last.version + 1 != first.version
        {
            // Another replica appended in between: what is remembered is no longer contiguous.
            recent.clear();
        }
        recent.extend(stored.iter().cloned());
        while recent.len() > RECENT {
            recent.pop_front();
        }
    }

    /// The events after `after` if memory holds all of them up to the latest version known
    /// here; `None` when the store must be read.
    fn after(&self, after: u64) -> Option<Vec<Recorded>> {
        let known = *self.version.borrow();
        let recent = self.recent.lock().expect("feed lock");
        let (first, last) = (recent.front()?, recent.back()?);
        if first.version > after + 1 || last.version < known {
            return None;
        }
        Some(
            recent
                .iter()
                .filter(|e| e.version > after)
                .cloned()
                .collect(),
        )
    }
}

fn outcome_of(
    table: &Table,
    table_id: Uuid,
    created_at: Option<DateTime<Utc>>,
    actor: &str,
    events: Vec<(u64, Shown)>,
) -> Outcome {
    let seat = table.seat_of(actor);
    Outcome {
        summary: summary(table, table_id, created_at),
        seat,
        events,
        view: seat.and_then(|s| table.seat_view(s)),
        public: None,
    }
}

/// The key a request id is de-duplicated under: the caller plus the id, so two players' ids never
/// collide.
fn request_key(actor: &str, request_id: &str) -> String {
    format!("{actor} {request_id}")
}

/// A new table's id, derived from the creator and its request id (sha256), so a retried
/// CreateTable lands on the same stream on any replica and is answered from `handled_commands`.
fn derived_table_id(actor: &str, request_id: &str) -> Uuid {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("okey table v1\n{actor}\n{request_id}"));
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    sqlx::types::uuid::Builder::from_random_bytes(bytes).into_uuid()
}

impl Tables {
    /// `player` is back (see `okey_table::absence`): takes their seat from the bot if one holds it (a command the rules
    /// refused, or an update stream opening, still brings the player back). Stores nothing
    /// otherwise.
    pub async fn reclaim(&self, table_id: Uuid, player: &str) -> Result<(), ServiceError> {
        let request_id = format!("reclaim/{}", random_uuid());
        let command = TableCommand::Reclaim {
            player: player.to_owned(),
        };
        self.submit(
            table_id,
            player,
            &request_id,
            command,
            None,
            BTreeMap::new(),
        )
        .await
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(version: u64) -> Recorded {
        Recorded {
            position: version as i64,
            event_id: Uuid::from_u128(version.into()),
            table_id: Uuid::from_u128(7),
            version,
            event: TableEvent::SeatTaken {
                seat: (version % 4) as Seat,
                player: format!("players/p{version}"),
                name: None,
            },
            metadata: Metadata::default(),
            recorded_at: Utc::now(),
        }
    }

    fn feed() -> Feed {
        Feed {
            version: watch::channel(0).0,
            recent: Mutex::default(),
        }
    }

    fn versions(events: Option<Vec<Recorded>>) -> Option<Vec<u64>> {
        events.map(|e| e.iter().map(|e| e.version).collect())
    }

    #[test]
    fn a_feed_serves_what_it_holds_up_to_the_latest_known_version() {
        let f = feed();
        assert_eq!(
            versions(f.after(0)),
            None,
            "nothing remembered: read the store"
        );
        f.remember(&[event(3), event(4)]);
        f.version.send_replace(4);
        assert_eq!(versions(f.after(2)), Some(vec![3, 4]));
        assert_eq!(versions(f.after(3)), Some(vec![4]));
        assert_eq!(
            versions(f.after(4)),
            Some(vec![]),
            "up to date: nothing to send"
        );
        assert_eq!(versions(f.after(1)), None, "version 2 is not remembered");
        // Another replica reached 5 (seen on NATS): memory is behind.
        f.version.send_replace(5);
        assert_eq!(versions(f.after(4)), None);
    }

    #[test]
    fn a_gap_forgets_what_was_remembered_and_old_events_fall_off() {
        let f = feed();
        f.remember(&[event(1), event(2)]);
        // Versions 3 and 4 were appended elsewhere.
        f.remember(&[event(5)]);
        f.version.send_replace(5);
        assert_eq!(versions(f.after(2)), None);
        assert_eq!(versions(f.after(4)), Some(vec![5]));
        let many: Vec<Recorded> = (6..6 + RECENT as u64 + 10).map(event).collect();
        f.remember(&many);
        assert_eq!(f.recent.lock().unwrap().len(), RECENT);
        let last = 5 + RECENT as u64 + 10;
        f.version.send_replace(last);
        assert_eq!(
            versions(f.after(5)),
            None,
            "fell off the end: read the store"
        );
        assert_eq!(versions(f.after(last - 1)), Some(vec![last]));
    }
}
