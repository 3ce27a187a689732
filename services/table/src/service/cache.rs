//! The tables this process holds in memory: one locked slot per table, folded from the store and
//! caught up with it, bounded in number and evicted when idle.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::types::Uuid;
use sqlx::types::chrono::{DateTime, Utc};

use super::{PAGE, ServiceError, Tables};
use crate::deadlines::Armed;
use crate::domain::{Table, TableEvent};
use crate::store::Recorded;

/// Most tables held in memory unless set otherwise (`live.max_cached_tables`).
pub const DEFAULT_MAX_CACHED: usize = 10_000;

/// A table's slot: its state folded so far (none before the first fold) and when it was created.
pub(super) struct Entry {
    pub(super) table: Option<Table>,
    pub(super) created_at: Option<DateTime<Utc>>,
    /// What is armed at the table as this process last knew it (its own append's arming, or
    /// read from Redis): the views' `turn_deadline` while it is for the table's version
    /// ([`Entry::turn_deadline_ms`]).
    pub(super) deadline: Option<Armed>,
}

impl Entry {
    /// When the seat on turn runs out of time (or the bot on turn moves), if this process armed
    /// it: `None` between hands, after the match, or when the table moved on through another
    /// process (or before this one started).
    pub(super) fn turn_deadline_ms(&self) -> Option<u64> {
        self.deadline?.at_for(self.table.as_ref()?)
    }
}

/// A locked cache slot (see [`Tables::lock_entry`]).
pub(super) struct EntryGuard {
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
pub(super) struct Cached {
    entry: Arc<tokio::sync::Mutex<Entry>>,
    used: Instant,
}

impl Tables {
    /// Drops a table's cached state and feed (its match is over): a process that serves
    /// thousands of matches a day keeps only the ones being played. A later call on the table
    /// folds it from the store again. A feed a stream still follows stays, so the stream is
    /// still woken (and rechecked, [`Tables::run_rechecks`]); the idle eviction drops it once
    /// the last stream closed.
    pub(super) fn forget(&self, table_id: Uuid) {
        self.cache.lock().expect("cache lock").remove(&table_id);
        let mut feeds = self.feeds.lock().expect("feeds lock");
        if feeds
            .get(&table_id)
            .is_some_and(|f| Arc::strong_count(f) == 1)
        {
            feeds.remove(&table_id);
        }
    }

    /// How many tables this process holds in memory (for tests and metrics).
    pub fn cached_tables(&self) -> usize {
        self.cache.lock().expect("cache lock").len()
    }

    /// The table's cache slot, locked. A slot made for a table the store does not hold (nothing
    /// was folded into it) leaves the cache when the guard drops, so an unknown table id costs
    /// nothing that outlives the call.
    pub(super) async fn lock_entry(&self, table_id: Uuid) -> EntryGuard {
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
            deadline: None,
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
    /// them, and the feeds no stream follows any more of tables no longer held (a finished
    /// match's, kept for its streams by [`Tables::forget`]). Returns how many tables. A later
    /// call folds a table from the store again.
    pub fn evict_idle(&self, idle: Duration) -> usize {
        let now = Instant::now();
        let mut gone = 0;
        let mut cache = self.cache.lock().expect("cache lock");
        cache.retain(|_, cached| {
            let keep =
                now.duration_since(cached.used) < idle || Arc::strong_count(&cached.entry) > 1;
            gone += usize::from(!keep);
            keep
        });
        // Still holding the cache (the only place that holds both locks, in this order): a
        // held table keeps its feed, and what the feed heard of.
        self.feeds
            .lock()
            .expect("feeds lock")
            .retain(|table_id, feed| cache.contains_key(table_id) || Arc::strong_count(feed) > 1);
        gone
    }

    /// Folds the events stored after the cached version into the entry.
    pub(super) async fn catch_up(
        &self,
        table_id: Uuid,
        entry: &mut Entry,
    ) -> Result<(), ServiceError> {
        loop {
            let after = entry.table.as_ref().map_or(0, |t| t.version);
            let events = self.store.latest(table_id, after, PAGE).await?;
            if events.is_empty() {
                break;
            }
            // A deal needs its stored seed, and commits the next hand's server seed, which the
            // next deal needs: read the seeds again when one of them is not known here.
            let needs_seed = |t: &Table, e: &Recorded| match &e.event {
                TableEvent::HandDealt {
                    hand_number,
                    seeding,
                    ..
                } => {
                    t.seed(*hand_number).is_none()
                        || (seeding.is_some() && t.seed(hand_number + 1).is_none())
                }
                _ => false,
            };
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

    /// The table folded from its first `version` stored events (the cache is past them), and
    /// when it was created.
    pub(super) async fn replay_to(
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
}
