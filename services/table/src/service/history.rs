//! A hand's full history (every event, the whole deal, every drawn tile) for support and for
//! the players who sat in it, the same hand step by step for support's replay page, and the audit
//! log of support's reads. Both reads go through one gate ([`Tables::open_hand`]): who may read
//! what is the pure table's rule (`okey_table::history::admit`), and a read granted by the
//! support role is written to the audit log before anything is served, so no support read goes
//! unrecorded.

use sqlx::types::Uuid;
use sqlx::types::chrono::{DateTime, Utc};

use super::{ServiceError, Tables};
use crate::domain::TableEvent;
use crate::domain::history::{self, Entry, HandSpan, Reader};
use crate::domain::steps::{self, HandReplay};
use crate::store::{HandRead, Recorded};

/// One event of a hand's history.
#[derive(Clone, Debug)]
pub struct HistoryEvent {
    pub version: u64,
    /// When the table stored it.
    pub time: DateTime<Utc>,
    /// As stored (a draw names its tile).
    pub event: TableEvent,
    /// What it is in the history (a deal comes whole).
    pub entry: Entry,
}

/// One page of a hand's history.
#[derive(Clone, Debug)]
pub struct HandHistory {
    /// Where the hand lies in the table's stream, who sat in it, its rules and the totals
    /// before it.
    pub span: HandSpan,
    /// This page's events, in version order.
    pub events: Vec<HistoryEvent>,
    /// The earlier events the hand's deals depend on (seed commitments, client seeds).
    pub inputs: Vec<HistoryEvent>,
    /// The last version on this page, when more of the hand follows it.
    pub more_after: Option<u64>,
}

/// A hand read that was let in (and, for support, audited).
struct Opened {
    /// The table's whole stream as stored.
    recorded: Vec<Recorded>,
    /// Its events.
    events: Vec<TableEvent>,
    /// The hand.
    span: HandSpan,
    /// The first version served.
    from: u64,
}

/// Where a page of a hand's history starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryPage {
    /// The last version the previous page held; `None` for the first page.
    pub after: Option<u64>,
    /// Most events on the page (at least one).
    pub size: usize,
}

impl Tables {
    /// One page of hand `hand_number`'s history at `table_id`, for `reader` (`reader_name`,
    /// `players/{id}`, is who the audit log names). Reads the store, not the cache: the history
    /// is the stored events themselves.
    pub async fn hand_history(
        &self,
        table_id: Uuid,
        reader: Reader<'_>,
        reader_name: &str,
        hand_number: u32,
        page: HistoryPage,
    ) -> Result<HandHistory, ServiceError> {
        let Opened {
            recorded,
            events,
            span,
            from,
        } = self
            .open_hand(table_id, reader, reader_name, hand_number, page.after)
            .await?;
        let seeds = self.store.seeds(table_id).await?;
        let last = span
            .last_version
            .min(from.saturating_add(page.size.max(1) as u64) - 1);
        let window = HandSpan {
            last_version: last,
            ..span.clone()
        };
        let entries = history::entries(&events, &window, from, |n| seeds.get(&n).copied())
            .map_err(ServiceError::History)?;
        let inputs = history::inputs(&events, &span);
        let at = |version: u64, entry: Entry| {
            let stored = &recorded[version as usize - 1];
            HistoryEvent {
                version,
                time: stored.recorded_at,
                event: stored.event.clone(),
                entry,
            }
        };
        let events = entries
            .into_iter()
            .map(|(version, entry)| at(version, entry))
            .collect();
        let inputs = inputs
            .into_iter()
            .map(|version| at(version, Entry::Event))
            .collect();
        Ok(HandHistory {
            more_after: (last < span.last_version).then_some(last),
            span,
            events,
            inputs,
        })
    }

    /// Hand `hand_number` at `table_id` step by step, whole (every rack, the melds, the pile
    /// count, each event told, the scores): what support's replay page shows. The same reads
    /// and the same rule as [`Self::hand_history`] decide who may read it, and a support read is
    /// audited the same way, as one read of the whole hand.
    pub async fn hand_replay(
        &self,
        table_id: Uuid,
        reader: Reader<'_>,
        reader_name: &str,
        hand_number: u32,
    ) -> Result<HandReplay, ServiceError> {
        let Opened {
            events, span, from, ..
        } = self
            .open_hand(table_id, reader, reader_name, hand_number, None)
            .await?;
        let seeds = self.store.seeds(table_id).await?;
        let entries = history::entries(&events, &span, from, |n| seeds.get(&n).copied())
            .map_err(ServiceError::History)?;
        Ok(steps::hand_replay(
            &format!("tables/{table_id}"),
            &events,
            &span,
            &entries,
        ))
    }

    /// The one gate of every full read of a hand: loads the table's stream (from the store, not
    /// the cache: the history is the stored events themselves), finds the hand, lets `reader` in
    /// by the pure table's rule (`history::admit`), checks where the read starts (`after`: the
    /// last version of the previous page) and, for support, writes the audit log before anything
    /// is served. A refused read writes nothing.
    async fn open_hand(
        &self,
        table_id: Uuid,
        reader: Reader<'_>,
        reader_name: &str,
        hand_number: u32,
        after: Option<u64>,
    ) -> Result<Opened, ServiceError> {
        let recorded = self.store.load_all(table_id).await?;
        if recorded.is_empty() {
            return Err(ServiceError::NotFound);
        }
        let events: Vec<TableEvent> = recorded.iter().map(|r| r.event.clone()).collect();
        let found = history::hand_span(&events, hand_number);
        let span = history::admit(found.as_ref(), hand_number, reader)?.clone();
        let from = match after {
            None => span.first_version,
            Some(after) if after >= span.first_version && after < span.last_version => after + 1,
            Some(_) => return Err(ServiceError::InvalidPageToken),
        };
        if matches!(reader, Reader::Support(_)) {
            self.store
                .record_hand_read(reader_name, table_id, hand_number, from, !span.ended)
                .await?;
        }
        Ok(Opened {
            recorded,
            events,
            span,
            from,
        })
    }

    /// The audit log of support's hand reads, newest first: of `table_id` (or every table),
    /// older than the read `before`, at most `limit`.
    pub async fn hand_reads(
        &self,
        table_id: Option<Uuid>,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<HandRead>, ServiceError> {
        Ok(self
            .store
            .hand_reads(table_id, before, limit as i64)
            .await?)
    }
}
