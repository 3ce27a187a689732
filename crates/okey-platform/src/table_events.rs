//! The table service's event stream as its consumers read it (docs/design/statistics-contract.md):
//! the public subjects, the stream that holds them (the table service owns and
//! makes it; a consumer never does) and a durable pull consumer of it. Accounts' statistics and
//! the scoring ledger both read through here, each with its own durable name and limits.

use std::time::Duration;

use async_nats::jetstream::{self, consumer::pull, stream};

use crate::telemetry::ConsumerLag;

/// Why the stream or the consumer is not there (the caller retries after a pause).
#[derive(Debug, thiserror::Error)]
pub enum TableEventsError {
    /// The table service has not made its stream yet.
    #[error("no stream holds the table events yet (the table service creates it): {0}")]
    NoStream(String),
    /// JetStream refused or failed.
    #[error("jetstream: {0}")]
    JetStream(String),
}

fn js_err(e: impl std::fmt::Display) -> TableEventsError {
    TableEventsError::JetStream(e.to_string())
}

/// A header of a received table event (`Nats-Msg-Id`, `Okey-Table`, `Okey-Version`, the trace
/// context), if the message carries it.
pub fn header<'m>(message: &'m async_nats::Message, name: &str) -> Option<&'m str> {
    message
        .headers
        .as_ref()
        .and_then(|h| h.get(name))
        .map(|v| v.as_str())
}

/// The subjects of every table's public events (`<prefix>` is `nats.subject_prefix`).
pub fn public_subject(prefix: &str) -> String {
    format!("{prefix}.table.*.events")
}

/// A durable pull consumer of the table events.
#[derive(Clone, Debug)]
pub struct Durable<'a> {
    /// The durable consumer's name (one per reading service: its position survives restarts).
    pub name: &'a str,
    /// The subjects it reads, usually [`public_subject`].
    pub filter_subject: String,
    /// Messages delivered and not yet acknowledged, at most.
    pub max_ack_pending: i64,
    /// How long a delivered message may go unacknowledged before it is delivered again.
    pub ack_wait: Duration,
}

/// The stream holding `subject`. The producer owns it (name, subjects, duplicate window); until
/// it exists this is [`TableEventsError::NoStream`] (a second stream over the same subjects would
/// be refused by JetStream, so consumers never make one).
pub async fn stream(
    jetstream: &jetstream::Context,
    subject: &str,
) -> Result<stream::Stream, TableEventsError> {
    use async_nats::jetstream::context::GetStreamByNameErrorKind;
    let name = jetstream
        .stream_by_subject(subject)
        .await
        .map_err(|e| match e.kind() {
            GetStreamByNameErrorKind::NotFound => TableEventsError::NoStream(e.to_string()),
            // NATS not answering (an outage) is not a missing stream.
            _ => js_err(e),
        })?;
    jetstream.get_stream(name).await.map_err(js_err)
}

/// The durable consumer, made if missing and given `durable`'s limits if they changed (the
/// position it reached is kept either way: the update starts from the server's own config and
/// changes only those two limits). Acknowledgements are explicit: every message is acknowledged
/// on its own, after what it changed is committed.
pub async fn durable_consumer(
    stream: &stream::Stream,
    durable: &Durable<'_>,
) -> Result<jetstream::consumer::Consumer<pull::Config>, TableEventsError> {
    let mut consumer: jetstream::consumer::Consumer<pull::Config> = stream
        .get_or_create_consumer(
            durable.name,
            pull::Config {
                durable_name: Some(durable.name.to_owned()),
                filter_subject: durable.filter_subject.clone(),
                ack_policy: jetstream::consumer::AckPolicy::Explicit,
                max_ack_pending: durable.max_ack_pending,
                ack_wait: durable.ack_wait,
                ..Default::default()
            },
        )
        .await
        .map_err(js_err)?;
    let config = consumer.cached_info().config.clone();
    if config.max_ack_pending != durable.max_ack_pending || config.ack_wait != durable.ack_wait {
        let updated = jetstream::consumer::Config {
            max_ack_pending: durable.max_ack_pending,
            ack_wait: durable.ack_wait,
            ..config
        };
        stream
            .update_consumer::<jetstream::consumer::Config>(updated)
            .await
            .map_err(js_err)?;
        consumer = stream.get_consumer(durable.name).await.map_err(js_err)?;
    }
    Ok(consumer)
}

/// Messages of the durable consumer `name` (reading `subject`) not processed yet: not delivered,
/// or delivered and not acknowledged, as JetStream counts them now; `None` if it does not answer
/// within 2 s (or the stream or the consumer is not there yet).
pub async fn unprocessed(jetstream: &jetstream::Context, subject: &str, name: &str) -> Option<u64> {
    let ask = async {
        let stream = stream(jetstream, subject).await.ok()?;
        let mut consumer = stream.get_consumer::<pull::Config>(name).await.ok()?;
        let info = consumer.info().await.ok()?;
        Some(info.num_pending + info.num_ack_pending as u64)
    };
    tokio::time::timeout(Duration::from_secs(2), ask)
        .await
        .ok()
        .flatten()
}

/// How often [`watch_lag`] asks JetStream.
pub const LAG_POLL: Duration = Duration::from_secs(5);

/// Keeps `lag`'s count of unprocessed messages current from JetStream, every [`LAG_POLL`], until
/// the task is dropped: a consumer that is stuck (a database that does not answer, a poison
/// message) gets no message to count from, and its gauges would otherwise hold the last value.
pub async fn watch_lag(
    jetstream: jetstream::Context,
    subject: String,
    name: &'static str,
    lag: ConsumerLag,
) {
    let mut every = tokio::time::interval(LAG_POLL);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        if let Some(pending) = unprocessed(&jetstream, &subject, name).await {
            lag.set_pending(pending);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_subjects_are_every_tables_events_under_the_prefix() {
        assert_eq!(public_subject("okey"), "okey.table.*.events");
        assert_eq!(public_subject("t-1"), "t-1.table.*.events");
    }
}
