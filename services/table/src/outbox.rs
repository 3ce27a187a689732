//! The outbox publisher: every stored event goes to NATS JetStream after its transaction commits.
//! It reads unpublished events in append order, publishes the batch in that order on its one
//! connection (JetStream stores a connection's messages in the order they arrive), waits for
//! every ack, then marks them published; a failed ack leaves the whole batch to be published
//! again. At start it publishes whatever an earlier process left
//! unpublished; `Nats-Msg-Id` is the event id, so an event published twice (a crash between
//! publish and mark, or two replicas racing) is dropped by JetStream as a duplicate within the
//! stream's duplicate window.
//!
//! Subjects (prefix = `nats.subject_prefix`, `okey` by default):
//! * `{prefix}.table.{table}.events`: every event, as the public may see it (no rack, no drawn
//!   tile, no pile). Message id: the event id.
//! * `{prefix}.table.{table}.seat.{n}`: what only seat `n` may see: its dealt rack, its own
//!   draws. Message id: `{event id}.seat.{n}`.
//!
//! Each message is JSON ([`Published`]) with headers `Nats-Msg-Id`, `Okey-Table`,
//! `Okey-Version`, `Okey-Event-Type` and the W3C trace context of the command that caused it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::{self, stream};
use serde::{Deserialize, Serialize};
use sqlx::types::Uuid;
use tokio::sync::Notify;

use crate::domain::{Seed, Shown, show};
use crate::service::Tables;
use crate::store::{Recorded, Store};

/// Events published per batch.
const BATCH: i64 = 256;
/// How long the publisher sleeps when nobody wakes it (it also polls, so a missed wake-up or a
/// NATS outage only delays).
const IDLE: Duration = Duration::from_millis(500);

/// One message on a table subject.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Published {
    /// `tables/{table}`.
    pub table: String,
    pub version: u64,
    /// The event's UUID (also the `Nats-Msg-Id` of the public copy).
    pub event_id: String,
    /// When it was stored, RFC 3339.
    pub time: String,
    pub event: Shown,
}

/// The subject names of this deployment.
#[derive(Clone, Debug)]
pub struct Subjects {
    prefix: String,
}

impl Subjects {
    pub fn new(prefix: &str) -> Subjects {
        Subjects {
            prefix: prefix.to_owned(),
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

/// Creates the stream if it is missing.
pub async fn ensure_stream(
    js: &jetstream::Context,
    subjects: &Subjects,
) -> Result<(), async_nats::Error> {
    js.get_or_create_stream(stream::Config {
        name: subjects.stream_name(),
        subjects: vec![format!("{}.table.>", subjects.prefix)],
        duplicate_window: Duration::from_secs(120),
        ..Default::default()
    })
    .await?;
    Ok(())
}

/// Publishes the outbox until the process stops.
pub async fn run(store: Store, js: jetstream::Context, subjects: Subjects, wake: Arc<Notify>) {
    loop {
        match publish_batch(&store, &js, &subjects).await {
            Ok(n) if n as i64 == BATCH => continue,
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "outbox: publish failed; retrying"),
        }
        let _ = tokio::time::timeout(IDLE, wake.notified()).await;
    }
}

async fn publish_batch(
    store: &Store,
    js: &jetstream::Context,
    subjects: &Subjects,
) -> Result<usize, async_nats::Error> {
    let batch = store.unpublished(BATCH).await?;
    let mut seeds: BTreeMap<Uuid, BTreeMap<u32, Seed>> = BTreeMap::new();
    let mut acks = Vec::with_capacity(batch.len() * 2);
    for e in &batch {
        let public = show(&e.event, None, |_| None);
        let private = match &public {
            // A deal shows each seat its rack: that needs the hand's seed.
            Shown::Dealt { .. } => {
                if let std::collections::btree_map::Entry::Vacant(slot) = seeds.entry(e.table_id) {
                    slot.insert(store.seeds(e.table_id).await?);
                }
                true
            }
            Shown::Drawn { .. } => true,
            Shown::Public { .. } => false,
        };
        acks.push(
            publish(
                js,
                subjects.public(e.table_id),
                e,
                &e.event_id.to_string(),
                &public,
            )
            .await?,
        );
        if private {
            let table_seeds = seeds.get(&e.table_id);
            for seat in 0..4u8 {
                let mine = show(&e.event, Some(seat), |n| {
                    table_seeds.and_then(|s| s.get(&n).copied())
                });
                if mine != public {
                    let id = format!("{}.seat.{seat}", e.event_id);
                    acks.push(publish(js, subjects.seat(e.table_id, seat), e, &id, &mine).await?);
                }
            }
        }
    }
    // Every message of the batch is on its way, in order on this one connection; now wait for
    // JetStream to have stored them all before marking the batch.
    for ack in acks {
        ack.await?;
    }
    let done: Vec<i64> = batch.iter().map(|e| e.position).collect();
    if !done.is_empty() {
        store.mark_published(&done).await?;
    }
    Ok(batch.len())
}

/// Sends one message and returns the future of its JetStream ack.
async fn publish(
    js: &jetstream::Context,
    subject: String,
    e: &Recorded,
    message_id: &str,
    shown: &Shown,
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
    for (k, v) in &e.metadata.trace {
        headers.insert(k.as_str(), v.as_str());
    }
    let payload = serde_json::to_vec(&body).expect("messages serialize");
    Ok(js
        .publish_with_headers(subject, headers, payload.into())
        .await?)
}

/// Wakes the local update streams when any replica publishes an event (core NATS subscription
/// on the public subjects), so a stream served here sees commands applied elsewhere at once.
pub async fn follow(client: async_nats::Client, subjects: Subjects, tables: Tables) {
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
            tables.saw_version(table_id, version);
        }
    }
}
