//! A seat's update stream: a snapshot, then every event as that seat may see it, fed from what
//! this process remembers of its own appends or else from the store, woken by appends here and by
//! other replicas' events the outbox's connection hears of.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use okey_rules::Seat;
use sqlx::types::Uuid;
use sqlx::types::chrono::{DateTime, Utc};
use tokio::sync::{mpsc, watch};

use super::{Outcome, PAGE, ServiceError, Tables};
use crate::domain::{Shown, TableEvent, show};
use crate::outbox::Sighted;
use crate::store::Recorded;

/// A quiet update stream gets a heartbeat this often.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// The store is checked this often for every table a stream here follows, in case a wake-up was
/// missed ([`Tables::run_rechecks`]), unless set otherwise (`live.stream_recheck_ms`).
pub const DEFAULT_RECHECK: Duration = Duration::from_secs(1);

/// Tables one recheck statement asks about, at most.
const RECHECK_MAX: usize = 1000;

/// One message of a seat's update stream.
#[derive(Clone, Debug)]
pub enum Update {
    Snapshot(Box<Outcome>),
    Event {
        version: u64,
        time: DateTime<Utc>,
        shown: Box<Shown>,
        /// The turn's deadline at `version` (ms since the Unix epoch) if the event is the last
        /// of its append and a turn runs after it ([`crate::store::Metadata::deadline`]).
        turn_deadline_ms: Option<u64>,
    },
    Heartbeat {
        version: u64,
    },
}

/// Wakes the update streams of this process when a table reached a version appended by any
/// replica (see [`Tables::sightings`]). Holds the feeds weakly: it does not keep [`Tables`] alive.
#[derive(Clone)]
pub struct Sightings {
    feeds: std::sync::Weak<Mutex<HashMap<Uuid, Arc<Feed>>>>,
}

impl Sighted for Sightings {
    /// Says `table_id` reached `version`; streams following it read on. Nothing if no stream
    /// here follows the table, or the version is not newer than what this process knows.
    fn saw(&self, table_id: Uuid, version: u64) {
        let Some(feeds) = self.feeds.upgrade() else {
            return;
        };
        let existing = feeds.lock().expect("feeds lock").get(&table_id).cloned();
        if let Some(feed) = existing {
            feed.heard(version);
        }
    }
}

/// Events an update stream may be fed from memory: the last [`RECENT`] a process appended to a
/// table, with consecutive versions.
const RECENT: usize = 128;

/// What this process knows has happened at a table: the latest version it knows of (woken by its
/// own appends and by other replicas' events seen on NATS) and the events it appended last.
/// Events never change once stored, so an update stream sends remembered events exactly as it
/// would have read them from the store; it reads the store only for what memory does not hold.
pub(super) struct Feed {
    pub(super) version: watch::Sender<u64>,
    recent: Mutex<VecDeque<Recorded>>,
}

impl Feed {
    pub(super) fn new() -> Feed {
        Feed {
            version: watch::channel(0).0,
            recent: Mutex::default(),
        }
    }

    /// The store holds `version`: wakes the table's streams if this process had not heard of it
    /// (a wake-up was missed), so each reads on.
    fn heard(&self, version: u64) {
        self.version.send_if_modified(|v| {
            let newer = version > *v;
            if newer {
                *v = version;
            }
            newer
        });
    }

    /// Remembers events this process just appended (under the table's lock, so in order).
    pub(super) fn remember(&self, stored: &[Recorded]) {
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

impl Tables {
    /// What this process knows has happened at a table (see [`Feed`]).
    pub(super) fn feed(&self, table_id: Uuid) -> Arc<Feed> {
        self.feeds
            .lock()
            .expect("feeds lock")
            .entry(table_id)
            .or_insert_with(|| Arc::new(Feed::new()))
            .clone()
    }

    /// The newest version of a table this process has heard of: its own appends and what its
    /// publisher saw published ([`Sightings`]); 0 when it follows nothing of the table.
    pub(super) fn heard_of(&self, table_id: Uuid) -> u64 {
        self.feeds
            .lock()
            .expect("feeds lock")
            .get(&table_id)
            .map_or(0, |feed| *feed.version.borrow())
    }

    /// Checks the store every `live.stream_recheck_ms` for the tables a stream here follows, in
    /// case a wake-up was missed (another replica's event this process did not hear of), and
    /// wakes the streams of each table the store is ahead on. Runs until the process ends.
    pub async fn run_rechecks(self) {
        let mut every = tokio::time::interval(self.recheck);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            if let Err(e) = self.recheck_followed().await {
                tracing::warn!(error = %e, "cannot check the store for the followed tables");
            }
        }
    }

    /// One pass of [`Tables::run_rechecks`]: every followed table's latest stored version in
    /// one statement per [`RECHECK_MAX`] tables. Returns how many tables' streams it woke.
    pub async fn recheck_followed(&self) -> Result<usize, ServiceError> {
        // A feed a stream holds besides the map: a table a stream follows.
        let followed: Vec<(Uuid, Arc<Feed>)> = self
            .feeds
            .lock()
            .expect("feeds lock")
            .iter()
            .filter(|(_, feed)| Arc::strong_count(feed) > 1)
            .map(|(id, feed)| (*id, feed.clone()))
            .collect();
        let mut woken = 0;
        for chunk in followed.chunks(RECHECK_MAX) {
            let ids: Vec<Uuid> = chunk.iter().map(|(id, _)| *id).collect();
            let stored = self.store.latest_versions(&ids).await?;
            for ((_, feed), version) in chunk.iter().zip(stored) {
                if version > *feed.version.borrow() {
                    feed.heard(version);
                    woken += 1;
                }
            }
        }
        Ok(woken)
    }

    /// A handle that wakes this process's update streams when a table reaches a version
    /// (given to the outbox publisher, which hears of other replicas' events).
    pub fn sightings(&self) -> Sightings {
        Sightings {
            feeds: Arc::downgrade(&self.feeds),
        }
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
            // The stream sleeps until the table's feed moves (an append here, another replica's
            // event heard of, or the store found ahead by `run_rechecks`), or a heartbeat is due.
            loop {
                latest.borrow_and_update();
                let events = match feed.after(sent) {
                    Some(events) => events,
                    // Read with other streams' reads in one statement (the store groups them).
                    None => match tables.store.latest(table_id, sent, PAGE).await {
                        Ok(events) => {
                            if let Some(last) = events.last() {
                                feed.heard(last.version);
                            }
                            events
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e.into())).await;
                            return;
                        }
                    },
                };
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
                        turn_deadline_ms: e
                            .metadata
                            .deadline
                            .filter(|d| d.version == e.version)
                            .map(|d| d.at_ms),
                    };
                    if tx.send(Ok(update)).await.is_err() {
                        return;
                    }
                    sent = e.version;
                }
                if !events.is_empty() {
                    continue;
                }
                tokio::select! {
                    () = tx.closed() => return,
                    changed = tokio::time::timeout(HEARTBEAT, latest.changed()) => {
                        if changed.is_err()
                            && tx.send(Ok(Update::Heartbeat { version: sent })).await.is_err()
                        {
                            return;
                        }
                    }
                }
            }
        });
        Ok(rx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Metadata;

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

    pub(super) fn feed() -> Feed {
        Feed::new()
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
