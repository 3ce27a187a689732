//! The ledger's health details (GetLedgerStatus): after a bot match the consumer reports every
//! event applied and nothing pending, its last application time and nothing set aside; a player
//! is refused, an operator role reads it.

mod common;

use std::time::{Duration, Instant};

use common::*;
use okey_platform::auth::Role;
use okey_proto::v1 as pb;
use tonic_types::StatusExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_shows_the_consumer_caught_up_and_only_operators_read_it() {
    let Some(Scoring {
        stack,
        service: scoring,
        pool,
        ..
    }) = Scoring::start().await
    else {
        return;
    };
    let table = bots_match(&stack, None, rules(1)).await;
    wait_for_match_end(&pool, &table, Duration::from_secs(120)).await;
    let events = stack.table_events(&table).await.len() as i64;

    let mut api = scoring_client(scoring.port).await;
    let refused = api
        .get_ledger_status(req(pb::GetLedgerStatusRequest {}, &uuid(), &[Role::Player]))
        .await
        .expect_err("a player does not read the ledger's status");
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    assert_eq!(
        refused.get_error_details().error_info().unwrap().reason,
        "role_required"
    );

    // Every event of the match applied, nothing left in the stream for the consumer.
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let status = api
            .get_ledger_status(req(
                pb::GetLedgerStatusRequest {},
                "support",
                &[Role::Support],
            ))
            .await
            .expect("support reads the status")
            .into_inner();
        if status.lag_events == 0 && status.events_applied >= events {
            break status;
        }
        assert!(Instant::now() < deadline, "never caught up: {status:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status.events_applied, events, "{status:?}");
    assert!(status.last_applied_time.is_some());
    assert!(status.lag_ms >= 0);
    assert_eq!((status.events_set_aside, status.hands_unverified), (0, 0));

    let analyst = api
        .get_ledger_status(req(
            pb::GetLedgerStatusRequest {},
            "analyst",
            &[Role::Analyst],
        ))
        .await
        .expect("an analyst reads the status too")
        .into_inner();
    assert_eq!(analyst.lag_events, 0);

    scoring.stop().await;
    pool.close().await;
    stack.stop().await;
}
