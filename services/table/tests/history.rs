//! A hand's full history (GetHandHistory) and its audit log (ListHandReads) against the real
//! service, PostgreSQL and NATS: support reads a hand while it is being played and the read is in
//! the audit log (who, when, which hand); a player who sat in the hand is refused while it runs
//! (FAILED_PRECONDITION `hand_in_progress`) and served once it has ended, page by page, with the
//! whole deal and every drawn tile exactly as stored; a player of another table and a spectator
//! who watches the table are refused (PERMISSION_DENIED `not_in_hand`); bad arguments get their
//! reasons, and a player cannot list the audit log.

mod common;

use common::*;
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use okey_rules::Deal;
use table::domain::TableEvent;
use tonic::Code;
use tonic_types::StatusExt;

fn assert_refused(status: &tonic::Status, code: Code, why: &str) {
    assert_eq!(status.code(), code, "{status:?}");
    let details = status.get_error_details();
    let info = details.error_info().expect("ErrorInfo");
    assert_eq!(info.reason, why, "{status:?}");
}

async fn history(
    client: &mut Client,
    table: &str,
    hand: i32,
    page_size: i32,
    page_token: &str,
) -> Result<pb::GetHandHistoryResponse, tonic::Status> {
    let request = client.req(pb::GetHandHistoryRequest {
        table: table.to_owned(),
        hand_number: hand,
        page_size,
        page_token: page_token.to_owned(),
    });
    Ok(client.api.get_hand_history(request).await?.into_inner())
}

/// Every page of a hand's history, `page_size` at a time.
async fn all_pages(
    client: &mut Client,
    table: &str,
    hand: i32,
    page_size: i32,
) -> Vec<pb::GetHandHistoryResponse> {
    let mut pages = Vec::new();
    let mut token = String::new();
    loop {
        let page = history(client, table, hand, page_size, &token)
            .await
            .expect("served");
        token = page.next_page_token.clone();
        pages.push(page);
        if token.is_empty() {
            return pages;
        }
        assert!(pages.len() < 10_000, "the pages never end");
    }
}

async fn reads(client: &mut Client, table: &str) -> Result<Vec<pb::HandRead>, tonic::Status> {
    let request = client.req(pb::ListHandReadsRequest {
        table: table.to_owned(),
        page_size: 0,
        page_token: String::new(),
    });
    Ok(client
        .api
        .list_hand_reads(request)
        .await?
        .into_inner()
        .reads)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn support_reads_a_live_hand_players_read_theirs_once_it_ended_and_nobody_else_does() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let (_other_table, mut others) = seated_table(channel.clone(), &app.settings, 1).await;
    let mut support = Client::new(channel.clone(), &app.settings, "support-1", &["support"]);
    let mut analyst = Client::new(channel.clone(), &app.settings, "analyst-1", &["analyst"]);
    let mut spectator = Client::new(
        channel.clone(),
        &app.settings,
        &format!("spectator-{}", uuid()),
        &["player"],
    );
    let mut received: Vec<Received> = (0..4).map(|_| Received::default()).collect();

    // A few moves into hand 1 (a hand never ends within its first three commands).
    play(&table, &mut clients, &mut received, |v| v.version >= 9).await;
    let live = history(&mut support, &table, 1, 0, "")
        .await
        .expect("support reads it live");
    assert!(!live.ended);
    assert_eq!(live.hand_number, 1);
    assert_eq!(live.totals_before, vec![0; 4]);
    let Some(pb::hand_history_entry::Entry::Deal(deal)) = &live.entries[0].entry else {
        panic!(
            "the history starts with the whole deal: {:?}",
            live.entries[0]
        );
    };
    let sizes: Vec<usize> = deal.racks.iter().map(|r| r.tiles.len()).collect();
    let mut expected = vec![21; 4];
    expected[deal.first_seat as usize] = 22;
    assert_eq!(sizes, expected);
    assert_eq!(deal.pile.len(), 20);
    assert_eq!(
        live.last_version,
        live.entries.last().unwrap().version,
        "support sees every event so far"
    );

    // The read is in the audit log: who, when, which hand, live.
    let log = reads(&mut support, &table).await.unwrap();
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0].reader, "players/support-1");
    assert_eq!(log[0].table, table);
    assert_eq!(log[0].hand_number, 1);
    assert!(log[0].live);
    assert!(log[0].read_time.is_some());
    assert_eq!(log[0].from_version, live.first_version);

    // Its own players wait for the end; a player of another table and a spectator never read it.
    let refused = history(&mut clients[0], &table, 1, 0, "")
        .await
        .unwrap_err();
    assert_refused(&refused, Code::FailedPrecondition, "hand_in_progress");
    // A support member seated in the hand plays it like anyone: it waits for the end too, and
    // the refused read is not in the audit log.
    let mut seated_support = Client::new(
        channel.clone(),
        &app.settings,
        &clients[1].id,
        &["player", "support"],
    );
    let refused = history(&mut seated_support, &table, 1, 0, "")
        .await
        .unwrap_err();
    assert_refused(&refused, Code::FailedPrecondition, "hand_in_progress");
    assert_eq!(reads(&mut support, &table).await.unwrap().len(), 1);
    let refused = history(&mut others[0], &table, 1, 0, "").await.unwrap_err();
    assert_refused(&refused, Code::PermissionDenied, "not_in_hand");
    // An analyst reads finished hands only.
    let refused = history(&mut analyst, &table, 1, 0, "").await.unwrap_err();
    assert_refused(&refused, Code::FailedPrecondition, "hand_in_progress");
    spectator
        .api
        .get_table(spectator.req(pb::GetTableRequest {
            name: table.clone(),
        }))
        .await
        .expect("the table admits spectators");
    let refused = history(&mut spectator, &table, 1, 0, "").await.unwrap_err();
    assert_refused(&refused, Code::PermissionDenied, "not_in_hand");
    // Neither may list the audit log.
    let refused = reads(&mut clients[0], &table).await.unwrap_err();
    assert_refused(&refused, Code::PermissionDenied, "role_required");

    // The match (one hand) to its end.
    play(&table, &mut clients, &mut received, |_| false).await;
    let (stored_events, seeds) = stored(&app.settings, &table).await;

    // A player who sat in it reads it now, seven events a page.
    let pages = all_pages(&mut clients[2], &table, 1, 7).await;
    assert!(pages.len() > 1, "a hand is longer than one page of 7");
    assert!(pages.iter().all(|p| p.ended && p.entries.len() <= 7));
    let entries: Vec<&pb::HandHistoryEntry> = pages.iter().flat_map(|p| &p.entries).collect();
    let first = pages[0].first_version;
    let last = pages[0].last_version;
    let versions: Vec<i64> = entries.iter().map(|e| e.version).collect();
    assert_eq!(
        versions,
        (first..=last).collect::<Vec<_>>(),
        "in order, none missing"
    );
    // Every entry is the stored event; the deal is the one the stored seed deals; draws name
    // their tile.
    let mut draws = 0;
    for entry in &entries {
        let stored = &stored_events[entry.version as usize - 1].event;
        let served: TableEvent = serde_json::from_str(&entry.stored_event).unwrap();
        assert_eq!(&served, stored, "version {}", entry.version);
        match (&entry.entry, stored) {
            (
                Some(pb::hand_history_entry::Entry::Deal(deal)),
                TableEvent::HandDealt {
                    hand_number,
                    first,
                    seeding,
                    ..
                },
            ) => {
                let seed = table::domain::seeding::deal_seed(&seeds[hand_number], seeding.as_ref())
                    .unwrap();
                let dealt = Deal::from_seed(&seed, *first);
                for seat in 0..4 {
                    let rack: Vec<String> =
                        dealt.racks[seat].iter().map(ToString::to_string).collect();
                    assert_eq!(deal.racks[seat].tiles, rack);
                }
                let pile: Vec<String> = dealt.pile.iter().map(ToString::to_string).collect();
                assert_eq!(deal.pile, pile);
            }
            (
                Some(pb::hand_history_entry::Entry::Event(pb::TableEvent {
                    event: Some(pb::table_event::Event::TileDrawn(drawn)),
                })),
                TableEvent::Played {
                    event: okey_rules::Event::TileDrawn { tile, .. },
                    ..
                },
            ) => {
                assert_eq!(drawn.tile, tile.to_string());
                draws += 1;
            }
            (Some(pb::hand_history_entry::Entry::Event(_)), other) => {
                assert!(!matches!(other, TableEvent::HandDealt { .. }))
            }
            (got, other) => panic!("version {}: {got:?} for {other:?}", entry.version),
        }
    }
    assert!(draws > 0, "the hand had draws");
    assert!(matches!(
        stored_events[last as usize - 1].event,
        TableEvent::HandEnded { .. }
    ));
    // Players' reads are not support reads: the audit log still holds the one.
    assert_eq!(reads(&mut support, &table).await.unwrap().len(), 1);

    // After the end an analyst reads it whole, and is not in support's audit log.
    let read = history(&mut analyst, &table, 1, 0, "").await.unwrap();
    assert!(read.ended);
    assert!(matches!(
        read.entries[0].entry,
        Some(pb::hand_history_entry::Entry::Deal(_))
    ));
    assert_eq!(reads(&mut support, &table).await.unwrap().len(), 1);

    // After the end, still nobody else.
    let refused = history(&mut others[1], &table, 1, 0, "").await.unwrap_err();
    assert_refused(&refused, Code::PermissionDenied, "not_in_hand");
    let refused = history(&mut spectator, &table, 1, 0, "").await.unwrap_err();
    assert_refused(&refused, Code::PermissionDenied, "not_in_hand");

    // Support again, two pages: two more reads, newest first, no longer live.
    let page = history(&mut support, &table, 1, 3, "").await.unwrap();
    let next = history(&mut support, &table, 1, 3, &page.next_page_token)
        .await
        .unwrap();
    assert_eq!(next.entries[0].version, page.entries[2].version + 1);
    let log = reads(&mut support, &table).await.unwrap();
    assert_eq!(log.len(), 3, "{log:?}");
    assert_eq!(log[0].from_version, next.entries[0].version);
    assert_eq!(log[1].from_version, page.entries[0].version);
    assert!(!log[0].live && !log[1].live && log[2].live);

    // Bad arguments, each with its reason; none is written to the audit log.
    let bad = history(&mut support, &table, 0, 0, "").await.unwrap_err();
    assert_refused(&bad, Code::InvalidArgument, "invalid_hand_number");
    let bad = history(&mut support, &table, 1, 1001, "")
        .await
        .unwrap_err();
    assert_refused(&bad, Code::InvalidArgument, "invalid_page_size");
    let bad = history(&mut support, &table, 1, 0, "h2.v10")
        .await
        .unwrap_err();
    assert_refused(&bad, Code::InvalidArgument, "invalid_page_token");
    let bad = history(&mut support, &table, 1, 0, &format!("h1.v{}", last + 5))
        .await
        .unwrap_err();
    assert_refused(&bad, Code::InvalidArgument, "invalid_page_token");
    let bad = history(&mut support, &table, 1, 0, "h1.v1")
        .await
        .unwrap_err();
    assert_refused(&bad, Code::InvalidArgument, "invalid_page_token");
    let bad = history(&mut support, "tables/nope", 1, 0, "")
        .await
        .unwrap_err();
    assert_refused(&bad, Code::InvalidArgument, "invalid_table");
    let missing = history(&mut support, &table, 99, 0, "").await.unwrap_err();
    assert_refused(&missing, Code::NotFound, "hand_not_found");
    let missing = history(&mut clients[0], &table, 99, 0, "")
        .await
        .unwrap_err();
    assert_refused(&missing, Code::PermissionDenied, "not_in_hand");
    let unknown = format!("tables/{}", uuid());
    let missing = history(&mut support, &unknown, 1, 0, "").await.unwrap_err();
    assert_refused(&missing, Code::NotFound, "table_not_found");
    assert_eq!(reads(&mut support, &table).await.unwrap().len(), 3);
    app.stop().await;
}

async fn reads_page(
    client: &mut Client,
    table: &str,
    page_size: i32,
    page_token: &str,
) -> Result<pb::ListHandReadsResponse, tonic::Status> {
    let request = client.req(pb::ListHandReadsRequest {
        table: table.to_owned(),
        page_size,
        page_token: page_token.to_owned(),
    });
    Ok(client.api.list_hand_reads(request).await?.into_inner())
}

/// Every page of the audit log (of `table`, or every table for ""), `page_size` at a time.
async fn all_reads(client: &mut Client, table: &str, page_size: i32) -> Vec<pb::HandRead> {
    let mut reads = Vec::new();
    let mut token = String::new();
    loop {
        let page = reads_page(client, table, page_size, &token)
            .await
            .expect("served");
        assert!(page.reads.len() <= page_size as usize);
        reads.extend(page.reads);
        token = page.next_page_token;
        if token.is_empty() {
            return reads;
        }
        assert!(reads.len() < 10_000, "the pages never end");
    }
}

/// table.proto: a page token "this server did not give" (for this hand) is INVALID_ARGUMENT
/// `invalid_page_token`. A token is opaque and sealed: the old hand-written forms (`h1.v3`, with
/// a leading zero or a sign, a version the server never ended a page at; `r5`, `r99999999`), a
/// token altered in one character, one given for another table, another hand or another listing
/// are all refused, and a refused read is not audited. Paging with the tokens the server gives
/// reads every event and every read once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_tokens_are_only_those_the_server_gave_for_the_same_request() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 1).await;
    let (other, mut others) = seated_table(channel.clone(), &app.settings, 1).await;
    let mut support = Client::new(channel.clone(), &app.settings, "support-1", &["support"]);
    let mut received: Vec<Received> = (0..4).map(|_| Received::default()).collect();
    play(&table, &mut clients, &mut received, |v| v.version >= 14).await;
    play(&other, &mut others, &mut received, |v| v.version >= 14).await;

    // Normal paging, three events a page, from the deal to the last event so far.
    let pages = all_pages(&mut support, &table, 1, 3).await;
    assert!(pages.len() > 2, "{} pages", pages.len());
    let versions: Vec<i64> = pages
        .iter()
        .flat_map(|p| p.entries.iter().map(|e| e.version))
        .collect();
    assert_eq!(
        versions,
        (pages[0].first_version..=pages[0].last_version).collect::<Vec<_>>(),
        "in order, none missing"
    );
    let first = &pages[0];
    let token = first.next_page_token.clone();
    let end = first.entries.last().unwrap().version;
    assert_ne!(token, format!("h1.v{end}"), "a token is opaque");
    // The same token again: the same page.
    let again = history(&mut support, &table, 1, 3, &token).await.unwrap();
    assert_eq!(again.entries, pages[1].entries);

    let audited = all_reads(&mut support, "", 100).await.len();
    let other_page = history(&mut support, &other, 1, 3, "").await.unwrap();
    let other_token = other_page.next_page_token.clone();
    assert!(!other_token.is_empty());
    history(&mut support, &other, 1, 3, &other_token)
        .await
        .expect("a token continues its own table's hand");
    let audited = audited + 2;

    let mut altered = token.clone().into_bytes();
    altered[2] = if altered[2] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let reads_token = reads_page(&mut support, &table, 1, "")
        .await
        .unwrap()
        .next_page_token;
    assert!(!reads_token.is_empty());
    for (hand, forged) in [
        (1, format!("h1.v{end}")),
        (1, format!("h1.v0{end}")),
        (1, format!("h1.v+{end}")),
        (1, format!("h1.v{}", end + 1)),
        (1, altered.clone()),
        (1, format!("{token}A")),
        (1, token[1..].to_owned()),
        // Another table's token, this table's token for another hand, an audit-log token.
        (1, other_token.clone()),
        (2, token.clone()),
        (1, reads_token.clone()),
    ] {
        let refused = history(&mut support, &table, hand, 3, &forged)
            .await
            .unwrap_err();
        assert_refused(&refused, Code::InvalidArgument, "invalid_page_token");
        let bad = refused.get_error_details();
        assert_eq!(
            bad.bad_request().unwrap().field_violations[0].field,
            "page_token"
        );
    }
    let refused = history(&mut support, &other, 1, 3, &token)
        .await
        .unwrap_err();
    assert_refused(&refused, Code::InvalidArgument, "invalid_page_token");
    // The audit log (read two at a time) lists none of the refused reads.
    let log = all_reads(&mut support, "", 2).await;
    assert_eq!(log.len(), audited, "refused reads are not audited");

    // The audit log page by page, of one table and of every table: each the same reads as one
    // page, newest first.
    let whole = reads_page(&mut support, &table, 100, "").await.unwrap();
    assert!(whole.next_page_token.is_empty());
    assert!(whole.reads.len() > 3, "{}", whole.reads.len());
    assert_eq!(all_reads(&mut support, &table, 2).await, whole.reads);
    let everything = reads_page(&mut support, "", 100, "").await.unwrap();
    assert_eq!(log, everything.reads);
    assert_eq!(
        everything.reads.iter().filter(|r| r.table == other).count(),
        2
    );

    // An audit-log token continues its own listing only: not another table's, not the
    // unfiltered one, and the hand-written forms are refused.
    let table_token = reads_page(&mut support, &table, 2, "")
        .await
        .unwrap()
        .next_page_token;
    let all_token = reads_page(&mut support, "", 2, "")
        .await
        .unwrap()
        .next_page_token;
    assert!(!table_token.is_empty() && !all_token.is_empty());
    for (filter, forged) in [
        (other.as_str(), table_token.as_str()),
        ("", table_token.as_str()),
        (table.as_str(), all_token.as_str()),
        ("", "r5"),
        ("", "r99999999"),
        (table.as_str(), "r1"),
        ("", token.as_str()),
        ("", &format!("{all_token}A")),
    ] {
        let refused = reads_page(&mut support, filter, 2, forged)
            .await
            .unwrap_err();
        assert_refused(&refused, Code::InvalidArgument, "invalid_page_token");
    }
    app.stop().await;
}
