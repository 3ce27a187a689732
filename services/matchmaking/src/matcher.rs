//! The matcher: what every replica runs, every `matchmaking.tick_ms` (at most 250 ms) and at once
//! when it opens a ticket (then for that ticket's queue only). Each run takes over the claims of
//! replicas that died, forms every full group of four, fills the due tickets that allow bots,
//! expires the rest and closes expired rooms (and, every few minutes, forgets the answers of room
//! commands handled a day ago). Every step is a claim or an update in PostgreSQL that is safe to
//! run on any number of replicas at the same moment (see `store`).
//!
//! **A pipeline**, so that forming a table costs little more than the table service's CreateTable:
//! claiming, creating and recording overlap instead of following one another. A run claims groups
//! [`CLAIM_BATCH`] at a time (one transaction each) while up to [`QUEUED_AHEAD`] claims wait for a
//! creation slot; [`CREATING_AT_ONCE`] CreateTable calls are in flight whenever claims wait; and
//! one recorder writes every table made since its last commit in one transaction (one commit and
//! one notification for the batch, not one per table). A claim is held only by the rows that
//! record it, so a replica that dies anywhere in the pipeline leaves claims whose lease runs out
//! and which another replica finishes with the same table.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, Semaphore, mpsc};
use tracing::Instrument;
use uuid::Uuid;

use crate::clock::Clock;
use crate::domain::{MatchmakingError, RatingWindows};
use crate::store::{Claim, Store};
use crate::tables::{CreateError, Tables};

/// CreateTable calls one replica has in flight at most.
pub const CREATING_AT_ONCE: usize = 32;
/// Groups taken per claim transaction at most.
pub const CLAIM_BATCH: usize = 16;
/// Claims waiting for a creation slot at most: a batch can be claimed while the one before still
/// waits, so CreateTable never waits for a claim, and no claim waits long enough for its lease
/// (`matchmaking.claim_lease_secs`) to matter.
pub const QUEUED_AHEAD: usize = 2 * CLAIM_BATCH;
/// Tables recorded per transaction at most.
const RECORDED_AT_ONCE: usize = 128;
/// How long the answer of a handled room command is kept for its retries, and how often the older
/// ones are forgotten.
const HANDLED_KEPT: Duration = Duration::from_secs(24 * 60 * 60);
const FORGET_EVERY: Duration = Duration::from_secs(10 * 60);

/// The matcher's timing (from `[matchmaking]`).
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub tick: Duration,
    pub claim_lease: Duration,
}

/// A handle to wake the matcher.
#[derive(Clone, Debug, Default)]
pub struct Wake(Arc<Woken>);

#[derive(Debug, Default)]
struct Woken {
    notify: Notify,
    /// Queue keys with a new ticket since the matcher last looked.
    keys: Mutex<BTreeSet<String>>,
}

impl Wake {
    /// A ticket of queue `key` opened: the matcher looks at that queue at once (the other
    /// queues wait for the tick).
    pub fn ticket_opened(&self, key: &str) {
        self.0
            .keys
            .lock()
            .expect("wake lock")
            .insert(key.to_owned());
        self.0.notify.notify_one();
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.keys.lock().expect("wake lock"))
            .into_iter()
            .collect()
    }
}

/// What became of a claim's CreateTable.
struct Made {
    claim_id: Uuid,
    table: Result<String, CreateError>,
}

/// The matcher of one replica.
pub struct Matcher {
    store: Store,
    tables: Tables,
    clock: Arc<dyn Clock>,
    timing: Timing,
    windows: RatingWindows,
    wake: Wake,
}

impl Matcher {
    pub fn new(
        store: Store,
        tables: Tables,
        clock: Arc<dyn Clock>,
        timing: Timing,
        windows: RatingWindows,
        wake: Wake,
    ) -> Matcher {
        Matcher {
            store,
            tables,
            clock,
            timing,
            windows,
            wake,
        }
    }

    /// Runs until the task is aborted (which stops the whole pipeline; CreateTable calls in
    /// flight end on their own, and their claims are finished after their lease).
    pub async fn run(self) {
        let (queue, waiting) = mpsc::channel(QUEUED_AHEAD);
        let (made, to_record) = mpsc::channel(RECORDED_AT_ONCE);
        let creating = create_tables(waiting, self.tables.clone(), made);
        let recording = record_tables(to_record, self.store.clone(), self.clock.clone());
        let matching = async {
            let mut tick = tokio::time::interval(self.timing.tick);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let every_queue = tokio::select! {
                    _ = tick.tick() => true,
                    _ = self.wake.0.notify.notified() => false,
                };
                let woken = self.wake.take();
                let queues = (!every_queue).then_some(woken);
                if let Err(e) = self.once(&queue, queues).await {
                    tracing::warn!(error = %e, "matcher run failed; trying again next tick");
                }
            }
        };
        let forgetting = async {
            let mut every = tokio::time::interval(FORGET_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                if let Err(e) = self.store.forget_handled_requests(HANDLED_KEPT).await {
                    tracing::warn!(error = %e, "could not forget old handled requests");
                }
            }
        };
        tokio::select! {
            _ = matching => {}
            _ = creating => {}
            _ = recording => {}
            _ = forgetting => {}
        }
    }

    fn lease_until(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        now + self.timing.claim_lease
    }

    /// One run of every step; the claims go to `queue`, to be made tables. Groups are formed in
    /// `queues` (the queues of the tickets just opened), or, on a tick, in every queue with four
    /// free tickets ([`Store::full_queues`]).
    async fn once(
        &self,
        queue: &mpsc::Sender<Claim>,
        queues: Option<Vec<String>>,
    ) -> Result<(), MatchmakingError> {
        let stopped = || MatchmakingError::Internal("the matcher's pipeline stopped".into());
        let now = self.clock.now();
        for claim in self
            .store
            .take_over_claims(now, self.lease_until(now))
            .await?
        {
            tracing::info!(claim = %claim.claim_id, "finishing a claim whose replica stopped");
            queue.send(claim).await.map_err(|_| stopped())?;
        }
        let queues = match queues {
            Some(keys) => keys,
            None => self.store.full_queues().await?,
        };
        for key in queues {
            loop {
                // Room for a whole batch first: a claim then waits at most for the batch before.
                let room = queue
                    .reserve_many(CLAIM_BATCH)
                    .await
                    .map_err(|_| stopped())?;
                let now = self.clock.now();
                let claimed = self
                    .store
                    .claim_groups(&key, CLAIM_BATCH, now, self.lease_until(now), &self.windows)
                    .await?;
                let again = claimed.claims.len() == CLAIM_BATCH || claimed.lost;
                if claimed.claims.is_empty() && claimed.lost {
                    // Another replica holds the head of the queue: let it commit first.
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                for (slot, claim) in room.zip(claimed.claims) {
                    slot.send(claim);
                }
                if !again {
                    // Fewer than a batch fit and no other replica was in the way: the queue is
                    // empty, or the tickets left wait for their rating windows to widen.
                    break;
                }
            }
        }
        let now = self.clock.now();
        for ticket in self.store.due_bot_fills(now).await? {
            let now = self.clock.now();
            if let Some(claim) = self
                .store
                .claim_bot_fill(ticket, now, self.lease_until(now), &self.windows)
                .await?
            {
                queue.send(claim).await.map_err(|_| stopped())?;
            }
        }
        let now = self.clock.now();
        self.store.expire_tickets(now).await?;
        self.store.expire_rooms(now).await?;
        Ok(())
    }
}

/// Makes the waiting claims tables, [`CREATING_AT_ONCE`] at a time, and hands each result to the
/// recorder. A slot is taken before a claim, so claims wait in the queue, not here.
async fn create_tables(
    mut waiting: mpsc::Receiver<Claim>,
    tables: Tables,
    made: mpsc::Sender<Made>,
) {
    let slots = Arc::new(Semaphore::new(CREATING_AT_ONCE));
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let Some(claim) = waiting.recv().await else {
            return;
        };
        let (tables, made) = (tables.clone(), made.clone());
        // The matcher's own work: a trace of its own, linked to each FindTable whose ticket it
        // seats, so those traces lead to this table's CreateTable (a child of this span).
        let span = tracing::info_span!(
            parent: None,
            "matchmaking form table",
            otel.name = "matchmaking form table",
            claim = %claim.claim_id,
            players = claim.traces.len(),
        );
        for trace in &claim.traces {
            okey_platform::telemetry::link_to_stored(&span, trace);
        }
        tokio::spawn(async move {
            let table = tables.create(&claim).instrument(span).await;
            drop(slot);
            // The recorder is gone only when the matcher stopped: the lease covers the claim.
            let _ = made
                .send(Made {
                    claim_id: claim.claim_id,
                    table,
                })
                .await;
        });
    }
}

/// Records what was made, every result that arrived since the last commit in one go.
async fn record_tables(mut made: mpsc::Receiver<Made>, store: Store, clock: Arc<dyn Clock>) {
    let mut batch = Vec::with_capacity(RECORDED_AT_ONCE);
    while made.recv_many(&mut batch, RECORDED_AT_ONCE).await > 0 {
        record(&store, clock.as_ref(), std::mem::take(&mut batch)).await;
    }
}

/// The tables made are recorded in one transaction (their tickets MATCHED, or their room
/// STARTED); a claim the table service refused for good is abandoned; one that could not be made
/// yet is left for its lease to run out and be tried again.
async fn record(store: &Store, clock: &dyn Clock, made: Vec<Made>) {
    let mut tables = Vec::with_capacity(made.len());
    for Made { claim_id, table } in made {
        match table {
            Ok(table) => tables.push((claim_id, table)),
            Err(CreateError::Unavailable(e)) => {
                tracing::warn!(claim = %claim_id, error = %e, "table not made yet; retried when the lease ends");
            }
            Err(CreateError::Refused(e)) => {
                tracing::error!(claim = %claim_id, error = %e, "the table service refused a claim; its tickets expire");
                if let Err(e) = store.abandon_claim(claim_id, clock.now()).await {
                    tracing::warn!(claim = %claim_id, error = %e, "could not abandon the claim");
                }
            }
        }
    }
    if tables.is_empty() {
        return;
    }
    match store.finish_claims(&tables, clock.now()).await {
        Ok(()) => tracing::debug!(tables = tables.len(), "tables made"),
        // The leases run out and a replica finishes them with the same tables.
        Err(e) => {
            tracing::warn!(tables = tables.len(), error = %e, "could not record the tables; retried later")
        }
    }
}

/// CreateTable for one claim now, then its tickets or room point at the table (a host starting a
/// room waits for this).
pub async fn finish(store: &Store, tables: &Tables, clock: &dyn Clock, claim: &Claim) {
    let table = tables.create(claim).await;
    record(
        store,
        clock,
        vec![Made {
            claim_id: claim.claim_id,
            table,
        }],
    )
    .await;
}
