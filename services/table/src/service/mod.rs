//! The application layer: loads a table by folding its stored events (cached per table; the
//! store stays the truth), decides a command with the pure [`Table`], appends the events with the
//! expected version, and hands them to the outbox and the update streams.
//!
//! `cache` holds the tables in memory and folds them from the store, `read` answers what a
//! caller may see, `submit` decides and appends (with its retries), `watch` streams a seat's
//! updates, `history` serves a hand's full history and its audit log. Below it are only the adapters (`store`, `outbox`) and the pure `okey-table`.
//!
//! Concurrency: commands on one table are serialized in this process by the table's lock, and
//! across processes by the expected-version append. A conflict (another replica appended first)
//! reloads the events after the cached version and decides again, up to [`MAX_ATTEMPTS`] times,
//! then answers [`ServiceError::Busy`] (ABORTED).

mod cache;
mod history;
mod read;
mod submit;
mod watch;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::types::Uuid;

use crate::deadlines::{Armed, Arming};
use crate::domain::{Table, TableError, TableEvent};
use crate::outbox::Outbox;
use crate::store::Store;

pub use cache::DEFAULT_MAX_CACHED;
pub use history::{HandHistory, HistoryEvent, HistoryPage};
pub use read::{Freshness, Outcome, PhaseName, Summary};
pub use submit::{Seating, Submission};
pub use watch::{DEFAULT_RECHECK, HEARTBEAT, Sightings, Update};

use cache::Cached;
use watch::Feed;

/// Decide-and-append attempts before a command is answered ABORTED.
pub const MAX_ATTEMPTS: usize = 8;

/// Events read from the store at once when catching up or replaying a stream.
const PAGE: i64 = 500;

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
    #[error("the page token does not name a page of this hand")]
    InvalidPageToken,
    #[error("the stored hand cannot be shown: {0}")]
    History(#[source] crate::domain::history::HistoryError),
}

/// Told by [`Tables`] after every append in this process (turn deadlines and bot moves:
/// `live::Live`).
pub trait AppendObserver: Send + Sync {
    /// What will be due next at the table once `events` are stored, leaving it as `after`
    /// (none: nothing). Decided before the append, so the command's stored answer carries the
    /// deadline it showed.
    fn next_due(&self, table_id: Uuid, after: &Table, events: &[TableEvent]) -> Option<Arming>;

    /// The append that left the table at `version` is stored: arm what [`Self::next_due`] said.
    fn appended(&self, table_id: Uuid, version: u64, arming: Option<Arming>);

    /// What is armed at the table now, whichever process armed it (none: nothing, or it cannot
    /// tell).
    fn armed(&self, table_id: Uuid) -> BoxFuture<'_, Option<Armed>>;
}

/// A boxed future, as a trait object's async method returns it.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

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
        let metrics = TableMetrics {
            appended: meter
                .u64_counter("okey.table.events.appended")
                .with_description("Events commands appended in this process.")
                .build(),
            conflicts: meter
                .u64_counter("okey.table.append.conflicts")
                .with_description("Appends another replica got to first; decided again.")
                .build(),
        };
        // Exported from the start at 0, so the alert on conflicts (docs/operations.md) has a
        // series before the first one.
        metrics.conflicts.add(0, &[]);
        metrics
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
    /// How often the store is read for a table whose update streams are quiet
    /// (`live.stream_recheck_ms`).
    recheck: Duration,
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

    /// The store is checked for the tables streams follow every `recheck` (at least a
    /// millisecond; see [`Tables::run_rechecks`]).
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

    pub fn store(&self) -> &Store {
        &self.store
    }
}
