//! The matcher: what every replica runs, every `matchmaking.tick_ms` (at most 250 ms) and at once
//! when it opens a ticket or a host starts a room. Each run takes over the claims of replicas that
//! died, forms every full group of four, fills the due tickets that allow bots, expires the rest
//! and closes expired rooms. Every step is a claim or an update in PostgreSQL that is safe to run
//! on any number of replicas at the same moment (see `store`).

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, Semaphore};
use uuid::Uuid;

use crate::clock::Clock;
use crate::store::{Claim, Store};
use crate::tables::{CreateError, Tables};

/// Tables being created at once by one replica.
pub const CREATING_AT_ONCE: usize = 32;

/// The matcher's timing (from `[matchmaking]`).
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub tick: Duration,
    pub claim_lease: Duration,
}

/// A handle to wake the matcher.
#[derive(Clone, Debug, Default)]
pub struct Wake(Arc<Notify>);

impl Wake {
    pub fn now(&self) {
        self.0.notify_one();
    }
}

/// The matcher of one replica.
pub struct Matcher {
    store: Store,
    tables: Tables,
    clock: Arc<dyn Clock>,
    timing: Timing,
    wake: Wake,
    creating: Arc<Semaphore>,
}

impl Matcher {
    pub fn new(
        store: Store,
        tables: Tables,
        clock: Arc<dyn Clock>,
        timing: Timing,
        wake: Wake,
    ) -> Matcher {
        Matcher {
            store,
            tables,
            clock,
            timing,
            wake,
            creating: Arc::new(Semaphore::new(CREATING_AT_ONCE)),
        }
    }

    /// Runs until the task is aborted.
    pub async fn run(self) {
        let mut tick = tokio::time::interval(self.timing.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = self.wake.0.notified() => {}
            }
            if let Err(e) = self.once().await {
                tracing::warn!(error = %e, "matcher run failed; trying again next tick");
            }
        }
    }

    fn lease_until(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        now + self.timing.claim_lease
    }

    /// One run of every step.
    pub async fn once(&self) -> Result<(), crate::domain::MatchmakingError> {
        let now = self.clock.now();
        for claim in self
            .store
            .take_over_claims(now, self.lease_until(now))
            .await?
        {
            tracing::info!(claim = %claim.claim_id, "finishing a claim whose replica stopped");
            self.make_table(claim).await;
        }
        for key in self.store.full_queues().await? {
            loop {
                // As many groups at once as tables are made at once: claiming stays ahead of
                // CreateTable without holding claims long enough for their lease to matter.
                let now = self.clock.now();
                let claims = self
                    .store
                    .claim_groups(&key, CREATING_AT_ONCE, now, self.lease_until(now))
                    .await?;
                if claims.is_empty() {
                    break;
                }
                for claim in claims {
                    self.make_table(claim).await;
                }
            }
        }
        let now = self.clock.now();
        for ticket in self.store.due_bot_fills(now).await? {
            let now = self.clock.now();
            if let Some(claim) = self
                .store
                .claim_bot_fill(ticket, now, self.lease_until(now))
                .await?
            {
                self.make_table(claim).await;
            }
        }
        let now = self.clock.now();
        self.store.expire_tickets(now).await?;
        self.store.expire_rooms(now).await?;
        Ok(())
    }

    /// Creates the claim's table in the background (at most [`CREATING_AT_ONCE`] at a time) and
    /// finishes the claim. If this process dies first, the lease runs out and another replica
    /// does it.
    pub async fn make_table(&self, claim: Claim) {
        let Ok(permit) = self.creating.clone().acquire_owned().await else {
            return;
        };
        let store = self.store.clone();
        let tables = self.tables.clone();
        let clock = self.clock.clone();
        tokio::spawn(async move {
            let _permit = permit;
            finish(&store, &tables, clock.as_ref(), &claim).await;
        });
    }
}

/// CreateTable, then the claim's tickets or room point at the table.
pub async fn finish(store: &Store, tables: &Tables, clock: &dyn Clock, claim: &Claim) {
    let id: Uuid = claim.claim_id;
    match tables.create(claim).await {
        Ok(table) => {
            if let Err(e) = store.finish_claim(id, &table, clock.now()).await {
                // The lease runs out and a replica finishes it with the same table.
                tracing::warn!(claim = %id, error = %e, "could not record the table; retried later");
            } else {
                tracing::debug!(claim = %id, %table, "table made");
            }
        }
        Err(CreateError::Unavailable(e)) => {
            tracing::warn!(claim = %id, error = %e, "table not made yet; retried when the lease ends");
        }
        Err(CreateError::Refused(e)) => {
            tracing::error!(claim = %id, error = %e, "the table service refused a claim; its tickets expire");
            if let Err(e) = store.abandon_claim(id, clock.now()).await {
                tracing::warn!(claim = %id, error = %e, "could not abandon the claim");
            }
        }
    }
}
