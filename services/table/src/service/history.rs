//! A hand's full history (every event, the whole deal, every drawn tile) for support and for
//! the players who sat in it, and the audit log of support's reads. Who may read what is the
//! pure table's rule (`okey_table::history::admit`); a read granted by the support role is
//! written to the audit log before anything is served, so no support read goes unrecorded.

use sqlx::types::Uuid;
use sqlx::types::chrono::{DateTime, Utc};

use super::{ServiceError, Tables};
use crate::domain::TableEvent;
use crate::domain::history::{self, Entry, HandSpan, Reader};
use crate::store::HandRead;

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
        let recorded = self.store.load_all(table_id).await?;
        if recorded.is_empty() {
            return Err(ServiceError::NotFound);
        }
        let events: Vec<TableEvent> = recorded.iter().map(|r| r.event.clone()).collect();
        let found = history::hand_span(&events, hand_number);
        let span = history::admit(found.as_ref(), hand_number, reader)?.clone();
        let from = match page.after {
            None => span.first_version,
            Some(after) if after >= span.first_version && after < span.last_version => after + 1,
            Some(_) => return Err(ServiceError::InvalidPageToken),
        };
        if reader == Reader::Support {
            self.store
                .record_hand_read(reader_name, table_id, hand_number, from, !span.ended)
                .await?;
        }
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
