//! A hand's full history (GetHandHistory) and the audit log of support's reads of it
//! (ListHandReads). Whether the caller reads as support comes from the verified token's roles;
//! which hands a player may read is the pure table's rule.

use okey_platform::auth::Role;

use super::*;
use crate::domain::history::Reader;
use crate::service::HistoryPage;

/// Events one history page holds unless asked otherwise, and at most.
const HISTORY_PAGE: (usize, usize) = (200, 1000);
/// Reads one audit-log page holds unless asked otherwise, and at most.
const READS_PAGE: (usize, usize) = (50, 100);

/// A `page_size` field: 0 for the default, else 1 to the most.
fn page_size(size: i32, (default, most): (usize, usize)) -> Result<usize, Status> {
    match usize::try_from(size) {
        Ok(0) => Ok(default),
        Ok(n) if n <= most => Ok(n),
        _ => Err(status::invalid_argument(
            Reason::InvalidPageSize,
            "page_size",
            format!("a page holds 1 to {most} (0 for {default}), not {size}"),
        )),
    }
}

fn bad_token() -> Status {
    status::invalid_argument(
        Reason::InvalidPageToken,
        "page_token",
        "not a page token this server gave for this request",
    )
}

/// A history page token: `h{hand}.v{last version served}`, for that hand only.
fn history_after(token: &str, hand: u32) -> Result<Option<u64>, Status> {
    if token.is_empty() {
        return Ok(None);
    }
    let (h, v) = token
        .strip_prefix('h')
        .and_then(|rest| rest.split_once(".v"))
        .ok_or_else(bad_token)?;
    match (h.parse::<u32>(), v.parse::<u64>()) {
        (Ok(h), Ok(v)) if h == hand => Ok(Some(v)),
        _ => Err(bad_token()),
    }
}

/// An audit-log page token: `r{id of the last read served}`.
fn reads_before(token: &str) -> Result<Option<i64>, Status> {
    if token.is_empty() {
        return Ok(None);
    }
    token
        .strip_prefix('r')
        .and_then(|id| id.parse::<i64>().ok())
        .filter(|id| *id > 0)
        .map(Some)
        .ok_or_else(bad_token)
}

pub(super) async fn get_hand_history(
    api: &TableApi,
    request: Request<pb::GetHandHistoryRequest>,
) -> Result<Response<pb::GetHandHistoryResponse>, Status> {
    let caller = caller(&request)?;
    let support = request
        .extensions()
        .get::<Caller>()
        .is_some_and(|c| c.has_role(Role::Support));
    let r = request.into_inner();
    let id = table_id(&r.table, "table")?;
    let hand = hand_number_arg(r.hand_number)?;
    let size = page_size(r.page_size, HISTORY_PAGE)?;
    let after = history_after(&r.page_token, hand)?;
    let reader = if support {
        Reader::Support
    } else {
        Reader::Player(&caller)
    };
    let page = api
        .tables
        .hand_history(id, reader, &caller, hand, HistoryPage { after, size })
        .await
        .map_err(status_of)?;
    let table_text = id.to_string();
    let entries = page
        .events
        .iter()
        .map(|e| history_entry_to_proto(e, &table_text))
        .collect::<Result<Vec<_>, Status>>()?;
    let span = &page.span;
    Ok(Response::new(pb::GetHandHistoryResponse {
        table: format!("tables/{id}"),
        hand_number: hand as i32,
        rules: Some(okey_platform::rule_set::rules_to_proto(&span.rules)),
        engine_rules: serde_json::to_string(&span.rules).expect("rule sets serialize"),
        totals_before: span.totals_before.iter().map(|t| *t as i32).collect(),
        ended: span.ended,
        first_version: span.first_version as i64,
        last_version: span.last_version as i64,
        entries,
        next_page_token: page
            .more_after
            .map(|v| format!("h{hand}.v{v}"))
            .unwrap_or_default(),
        inputs: page.inputs.iter().map(input_entry_to_proto).collect(),
    }))
}

pub(super) async fn list_hand_reads(
    api: &TableApi,
    request: Request<pb::ListHandReadsRequest>,
) -> Result<Response<pb::ListHandReadsResponse>, Status> {
    let r = request.into_inner();
    let table = match r.table.as_str() {
        "" => None,
        name => Some(table_id(name, "table")?),
    };
    let size = page_size(r.page_size, READS_PAGE)?;
    let before = reads_before(&r.page_token)?;
    let mut reads = api
        .tables
        .hand_reads(table, before, size + 1)
        .await
        .map_err(status_of)?;
    let more = reads.len() > size;
    reads.truncate(size);
    let next_page_token = match (more, reads.last()) {
        (true, Some(last)) => format!("r{}", last.id),
        _ => String::new(),
    };
    Ok(Response::new(pb::ListHandReadsResponse {
        reads: reads
            .iter()
            .map(|read| pb::HandRead {
                reader: read.reader.clone(),
                table: format!("tables/{}", read.table_id),
                hand_number: read.hand_number as i32,
                read_time: Some(timestamp(read.read_at)),
                live: read.live,
                from_version: read.from_version as i64,
            })
            .collect(),
        next_page_token,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_tokens_name_their_hand_and_nothing_else_passes() {
        assert_eq!(history_after("", 3).unwrap(), None);
        assert_eq!(history_after("h3.v41", 3).unwrap(), Some(41));
        for bad in ["h4.v41", "h3.v", "3.v41", "h3v41", "hx.v1", "h3.v-1"] {
            assert_eq!(
                history_after(bad, 3).unwrap_err().code(),
                tonic::Code::InvalidArgument,
                "{bad}"
            );
        }
        assert_eq!(reads_before("r12").unwrap(), Some(12));
        assert!(reads_before("r0").is_err());
        assert!(reads_before("12").is_err());
        assert_eq!(page_size(0, HISTORY_PAGE).unwrap(), 200);
        assert_eq!(page_size(1000, HISTORY_PAGE).unwrap(), 1000);
        assert!(page_size(1001, HISTORY_PAGE).is_err());
        assert!(page_size(-1, READS_PAGE).is_err());
        assert!(hand_number_arg(0).is_err());
        assert_eq!(hand_number_arg(2).unwrap(), 2);
    }
}
