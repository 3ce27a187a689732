//! A hand's full history (GetHandHistory) and the audit log of support's reads of it
//! (ListHandReads). Whether the caller reads as support comes from the verified token's roles;
//! which hands a player may read is the pure table's rule. Page tokens are sealed with the key
//! every replica shares (`okey_platform::page_token`) and name the request they continue (the
//! table and hand; the audit log's table filter), so a token no replica gave for this request is
//! `invalid_page_token`.

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

/// A history page token: the table, the hand and the last version served, sealed
/// ([`PageTokens`]), so it continues that hand only and cannot be altered or written by hand.
fn history_token(tokens: &PageTokens, table: Uuid, hand: u32, last: u64) -> String {
    tokens.seal(format!("{}{last}", history_prefix(table, hand)).as_bytes())
}

/// What a history token's position holds before its version.
fn history_prefix(table: Uuid, hand: u32) -> String {
    format!("history/tables/{table}/hands/{hand}/after/")
}

/// The last version the previous page served, from a token [`history_token`] gave for this
/// table and hand; `None` for the first page (no token).
fn history_after(
    tokens: &PageTokens,
    token: &str,
    table: Uuid,
    hand: u32,
) -> Result<Option<u64>, Status> {
    opened(tokens, token, &history_prefix(table, hand))
}

/// An audit-log page token: the table filter (`-` for every table) and the id of the last read
/// served, sealed, so it continues that listing only.
fn reads_token(tokens: &PageTokens, table: Option<Uuid>, last: i64) -> String {
    tokens.seal(format!("{}{last}", reads_prefix(table)).as_bytes())
}

/// What an audit-log token's position holds before its read id.
fn reads_prefix(table: Option<Uuid>) -> String {
    match table {
        Some(table) => format!("reads/tables/{table}/before/"),
        None => "reads/tables/-/before/".to_owned(),
    }
}

/// The read the previous page ended with, from a token [`reads_token`] gave for this filter;
/// `None` for the first page.
fn reads_before(
    tokens: &PageTokens,
    token: &str,
    table: Option<Uuid>,
) -> Result<Option<i64>, Status> {
    opened(tokens, token, &reads_prefix(table))
}

/// The number after `prefix` in the position `token` seals; `None` for no token. A token the
/// key did not seal, or one sealed for another request (another prefix), is
/// `invalid_page_token`.
fn opened<N: std::str::FromStr>(
    tokens: &PageTokens,
    token: &str,
    prefix: &str,
) -> Result<Option<N>, Status> {
    if token.is_empty() {
        return Ok(None);
    }
    let position = tokens.open(token).ok_or_else(bad_token)?;
    std::str::from_utf8(&position)
        .ok()
        .and_then(|p| p.strip_prefix(prefix))
        .and_then(|n| n.parse().ok())
        .map(Some)
        .ok_or_else(bad_token)
}

/// Who reads a hand, by the caller's roles: support (or admin) any hand (but a live one it sits
/// in), audited; an analyst any ended hand; anyone else as the player `name`.
pub(super) fn reader_of<'a>(caller: Option<&Caller>, name: &'a str) -> Reader<'a> {
    match caller {
        Some(c) if c.has_role(Role::Support) => Reader::Support(name),
        Some(c) if c.has_role(Role::Analyst) => Reader::Analyst,
        _ => Reader::Player(name),
    }
}

pub(super) async fn get_hand_history(
    api: &TableApi,
    request: Request<pb::GetHandHistoryRequest>,
) -> Result<Response<pb::GetHandHistoryResponse>, Status> {
    let caller = caller(&request)?;
    let roles = request.extensions().get::<Caller>().cloned();
    let r = request.into_inner();
    let id = table_id(&r.table, "table")?;
    let hand = hand_number_arg(r.hand_number)?;
    let size = page_size(r.page_size, HISTORY_PAGE)?;
    let after = history_after(&api.tokens, &r.page_token, id, hand)?;
    let reader = reader_of(roles.as_ref(), &caller);
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
            .map(|v| history_token(&api.tokens, id, hand, v))
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
    let before = reads_before(&api.tokens, &r.page_token, table)?;
    let mut reads = api
        .tables
        .hand_reads(table, before, size + 1)
        .await
        .map_err(status_of)?;
    let more = reads.len() > size;
    reads.truncate(size);
    let next_page_token = match (more, reads.last()) {
        (true, Some(last)) => reads_token(&api.tokens, table, last.id),
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
    fn a_page_token_continues_the_request_it_was_given_for_and_nothing_else_passes() {
        let tokens = PageTokens::with_key([3; 32]);
        let (table, other) = (Uuid::from_u128(1), Uuid::from_u128(2));
        assert_eq!(history_after(&tokens, "", table, 3).unwrap(), None);
        let given = history_token(&tokens, table, 3, 41);
        assert_eq!(history_after(&tokens, &given, table, 3).unwrap(), Some(41));
        let refused = |r: Result<Option<u64>, Status>| {
            let status = r.unwrap_err();
            assert_eq!(status.code(), tonic::Code::InvalidArgument);
            let details = tonic_types::StatusExt::get_error_details(&status);
            assert_eq!(details.error_info().unwrap().reason, "invalid_page_token");
        };
        // Another hand's, another table's, another key's; the old hand-written forms; a position
        // sealed by nobody; the token altered.
        refused(history_after(&tokens, &given, table, 4));
        refused(history_after(&tokens, &given, other, 3));
        let elsewhere = PageTokens::with_key([4; 32]);
        refused(history_after(&elsewhere, &given, table, 3));
        for forged in [
            "h3.v41",
            "h3.v041",
            "h3.v+41",
            "h3.v42",
            "r5",
            "not base64!",
        ] {
            refused(history_after(&tokens, forged, table, 3));
        }
        let mut altered = given.clone().into_bytes();
        altered[0] = if altered[0] == b'A' { b'B' } else { b'A' };
        refused(history_after(
            &tokens,
            std::str::from_utf8(&altered).unwrap(),
            table,
            3,
        ));
        refused(history_after(&tokens, &format!("{given}A"), table, 3));
        // An audit-log token is no history token, and the other way round.
        let reads = reads_token(&tokens, Some(table), 12);
        refused(history_after(&tokens, &reads, table, 3));
        assert!(reads_before(&tokens, &given, Some(table)).is_err());

        // An audit-log token continues its own filter only.
        assert_eq!(reads_before(&tokens, "", None).unwrap(), None);
        assert_eq!(
            reads_before(&tokens, &reads, Some(table)).unwrap(),
            Some(12)
        );
        assert!(reads_before(&tokens, &reads, Some(other)).is_err());
        assert!(reads_before(&tokens, &reads, None).is_err());
        let all = reads_token(&tokens, None, 12);
        assert_eq!(reads_before(&tokens, &all, None).unwrap(), Some(12));
        assert!(reads_before(&tokens, &all, Some(table)).is_err());
        for forged in ["r12", "r99999999", "r0", "12"] {
            assert!(reads_before(&tokens, forged, None).is_err(), "{forged}");
        }
    }

    #[test]
    fn page_sizes_and_hand_numbers_are_checked() {
        assert_eq!(page_size(0, HISTORY_PAGE).unwrap(), 200);
        assert_eq!(page_size(1000, HISTORY_PAGE).unwrap(), 1000);
        assert!(page_size(1001, HISTORY_PAGE).is_err());
        assert!(page_size(-1, READS_PAGE).is_err());
        assert!(hand_number_arg(0).is_err());
        assert_eq!(hand_number_arg(2).unwrap(), 2);
    }
}
