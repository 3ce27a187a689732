//! The outbox at a start: a process that finds more unpublished events than one sweep page holds
//! (a NATS outage under play, then a restart) publishes every one of them and empties the outbox,
//! then goes on publishing new appends.

mod common;

use std::time::{Duration, Instant};

use common::*;
use okey_platform::testing::TestInfra;
use table::domain::TableEvent;
use table::ids::random_uuid;
use table::outbox::Subjects;
use table::store::{Append, Metadata};

/// Unpublished events left by an earlier process: several sweep pages (256 events each).
const LEFT: usize = 700;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_publishes_every_event_left_in_the_outbox_however_many_pages() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    // The service's database, migrated, with events appended while no publisher ran.
    let settings = settings(&infra);
    let (pool, store) = store_without_publisher(&settings).await;
    let metadata = Metadata {
        actor: "players/p0".into(),
        ..Metadata::default()
    };
    let seats: Vec<TableEvent> = (0..4)
        .map(|seat| TableEvent::SeatTaken {
            seat,
            player: format!("players/p{seat}"),
            name: None,
        })
        .collect();
    for i in 0..LEFT / seats.len() {
        store
            .append(Append {
                table_id: random_uuid(),
                expected: 0,
                events: &seats,
                metadata: &metadata,
                request: Some((&format!("left-{i}"), b"answer")),
                seeds: &[],
                revealed: None,
                create: None,
            })
            .await
            .expect("appended");
    }
    let outbox = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM outbox")
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    assert_eq!(outbox().await, LEFT as i64);

    // The service starts on that database: its first sweep publishes all of it.
    let app = spawn_app(settings.clone()).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while outbox().await > 0 {
        assert!(
            Instant::now() < deadline,
            "{} of {LEFT} events still unpublished a minute after the start",
            outbox().await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let nats = async_nats::connect(&infra.nats_url).await.unwrap();
    let js = async_nats::jetstream::new(nats);
    let name = Subjects::new(&settings.nats.subject_prefix).stream_name();
    let mut stream = js.get_stream(&name).await.unwrap();
    let on_stream = stream.info().await.unwrap().state.messages;
    assert_eq!(on_stream, LEFT as u64, "each event once on JetStream");
    app.stop().await;
}
