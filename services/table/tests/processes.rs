//! The table service as separate processes: `kill -9` in the middle of a hand, a restart, play
//! continues and the JetStream subject holds every event exactly once in order; two processes
//! serving one table at the same time stay consistent; an update stream served by one process
//! follows commands made on the other as they are published.

mod common;

use std::cell::Cell;
use std::time::{Duration, Instant};

use async_nats::jetstream::consumer::{DeliverPolicy, pull};
use common::*;
use okey_platform::testing::{TestInfra, free_port};
use okey_platform::{ServiceKind, Settings};
use okey_proto::v1 as pb;
use table::domain::Published;
use table::outbox::Subjects;
use tonic::codegen::tokio_stream::StreamExt;
use tonic::transport::Channel;

fn env_on(base: &[(String, String)], port: u16) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = base
        .iter()
        .filter(|(k, _)| k != "OKEY_SERVER__PORT")
        .cloned()
        .collect();
    env.push(("OKEY_SERVER__PORT".into(), port.to_string()));
    env
}

/// Two service processes on one database and NATS prefix (killed when dropped): their settings
/// and a channel to each.
async fn two_processes(infra: &TestInfra) -> (Settings, [Running; 2], Channel, Channel) {
    two_processes_with(infra, &[]).await
}

/// [`two_processes`] with `extra` settings (`OKEY_…` variables).
async fn two_processes_with(
    infra: &TestInfra,
    extra: &[(&str, &str)],
) -> (Settings, [Running; 2], Channel, Channel) {
    let mut base = infra.env_for(ServiceKind::Table, 0);
    for (k, v) in extra {
        base.retain(|(name, _)| name != k);
        base.push(((*k).to_owned(), (*v).to_owned()));
    }
    let (pa, pb_) = (free_port(), free_port());
    let processes = [
        Running(spawn_binary(&env_on(&base, pa))),
        Running(spawn_binary(&env_on(&base, pb_))),
    ];
    let (ca, cb) = (connect(pa).await, connect(pb_).await);
    (settings_from_env(&base), processes, ca, cb)
}

/// `watcher`'s update stream of `table` after `version`.
async fn watch_after(
    watcher: &Client,
    table: &str,
    version: i64,
) -> tonic::Streaming<pb::WatchTableResponse> {
    watcher
        .api
        .clone()
        .watch_table(watcher.req(pb::WatchTableRequest {
            table: table.to_owned(),
            after_version: version,
        }))
        .await
        .unwrap()
        .into_inner()
}

/// Plays one command at `table` (on the clients' process), then reads `stream` until it reaches
/// the version that command gave, each update within `within` (else fails with `expected`).
/// Returns that version.
async fn play_one_and_follow(
    table: &str,
    clients: &mut [Client],
    received: &mut [Received],
    stream: &mut tonic::Streaming<pb::WatchTableResponse>,
    within: Duration,
    expected: &str,
) -> i64 {
    let n = Cell::new(0);
    play(table, clients, received, |_| {
        n.set(n.get() + 1);
        n.get() > 1
    })
    .await;
    let target = clients[0].view(table).await.unwrap().version;
    loop {
        let update = tokio::time::timeout(within, stream.message())
            .await
            .expect(expected)
            .unwrap()
            .expect("the stream stays open");
        if update.update.unwrap().version >= target {
            return target;
        }
    }
}

/// Every public message of a table on JetStream, waiting until `count` are there.
async fn published(nats_url: &str, prefix: &str, table: &str, count: usize) -> Vec<Published> {
    let client = async_nats::connect(nats_url).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let subjects = Subjects::new(prefix);
    let id = table.strip_prefix("tables/").unwrap().parse().unwrap();
    let stream = js.get_stream(subjects.stream_name()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let consumer = stream
            .create_consumer(pull::Config {
                filter_subject: subjects.public(id),
                deliver_policy: DeliverPolicy::All,
                ack_policy: async_nats::jetstream::consumer::AckPolicy::None,
                ..Default::default()
            })
            .await
            .unwrap();
        let mut got = Vec::new();
        let mut batch = consumer
            .fetch()
            .max_messages(count + 100)
            .expires(Duration::from_millis(500))
            .messages()
            .await
            .unwrap();
        while let Some(m) = batch.next().await {
            let m = m.unwrap();
            got.push(serde_json::from_slice::<Published>(&m.payload).unwrap());
        }
        if got.len() >= count || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn fresh() -> Vec<Received> {
    (0..4).map(|_| Received::default()).collect()
}

/// Checks the JetStream subject of `table` holds each stored event once, in version order.
async fn assert_published_once_in_order(
    infra: &TestInfra,
    settings: &okey_platform::Settings,
    table: &str,
    events: &[table::store::Recorded],
) {
    let msgs = published(
        &infra.nats_url,
        &settings.nats.subject_prefix,
        table,
        events.len(),
    )
    .await;
    let versions: Vec<u64> = msgs.iter().map(|m| m.version).collect();
    let expected: Vec<u64> = (1..=events.len() as u64).collect();
    assert_eq!(versions, expected, "every event once, in order");
    for (m, e) in msgs.iter().zip(events) {
        assert_eq!(m.event_id, e.event_id.to_string());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_hand_then_restart_play_continues_and_jetstream_has_every_event_once() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let base = infra.env_for(ServiceKind::Table, 0);
    let settings = settings_from_env(&base);
    let port = free_port();
    let mut first = spawn_binary(&env_on(&base, port));
    let channel = connect(port).await;
    let (table, mut clients) = seated_table(channel, &settings, 1).await;
    let mut received = fresh();
    let n = Cell::new(0);
    // Stop a few commands into the hand: deals come from the OS, and a hand could end within a
    // few dozen commands, which would leave nothing to continue after the restart.
    play(&table, &mut clients, &mut received, |_| {
        n.set(n.get() + 1);
        n.get() > 10
    })
    .await;
    let before = clients[0].view(&table).await.unwrap();
    assert_eq!(
        before.summary.as_ref().unwrap().state,
        pb::TableState::Playing as i32,
        "the hand is still being played when the service is killed"
    );

    first.kill().expect("SIGKILL");
    first.wait().unwrap();

    let port = free_port();
    let mut second = spawn_binary(&env_on(&base, port));
    let channel = connect(port).await;
    for c in &mut clients {
        c.api = okey_proto::v1::table_service_client::TableServiceClient::new(channel.clone());
    }
    let view = clients[0].view(&table).await.unwrap();
    assert_eq!(
        view.summary.as_ref().unwrap().state,
        pb::TableState::Playing as i32
    );
    play(&table, &mut clients, &mut received, |_| false).await;

    let (events, seeds) = stored(&settings, &table).await;
    check_received(&events, &seeds, &received);
    assert_eq!(check_scores(&events, &seeds), 1);
    assert_published_once_in_order(&infra, &settings, &table, &events).await;
    second.kill().unwrap();
    second.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_serving_one_table_stay_consistent() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let (settings, _processes, ca, cb) = two_processes(&infra).await;

    let mut admin = Client::new(ca.clone(), &settings, "admin", &["admin"]);
    let table = admin.create(rules(1)).await;
    let mut clients = Vec::new();
    for seat in 0..4 {
        // Seats 0 and 2 talk to process A, seats 1 and 3 to process B.
        let channel = if seat % 2 == 0 {
            ca.clone()
        } else {
            cb.clone()
        };
        let mut c = Client::new(
            channel,
            &settings,
            &format!("r{seat}-{}", uuid()),
            &["player"],
        );
        c.join(&table, seat).await;
        clients.push(c);
    }
    let mut received = fresh();
    let n = Cell::new(0);
    // Stop where the seat on turn is to take a tile: a draw is then always legal (a discard
    // may not be, e.g. right after taking the side discard, which must be used).
    play(&table, &mut clients, &mut received, |v| {
        n.set(n.get() + 1);
        n.get() > 10 && v.phase == pb::HandPhase::Take as i32
    })
    .await;

    // The seat on turn sends a draw to both processes at once.
    let view = clients[0].view(&table).await.unwrap();
    let seat = view.turn_seat as usize;
    let own = clients[seat].view(&table).await.unwrap();
    assert_eq!(own.phase, pb::HandPhase::Take as i32);
    let command = pb::Command {
        command: Some(pb::command::Command::Draw(pb::DrawCommand {})),
    };
    let mut on_a = Client::new(ca.clone(), &settings, &clients[seat].id, &["player"]);
    let mut on_b = Client::new(cb.clone(), &settings, &clients[seat].id, &["player"]);
    let (ra, rb) = (uuid(), uuid());
    let (x, y) = tokio::join!(
        on_a.submit(&table, &ra, command.clone()),
        on_b.submit(&table, &rb, command.clone())
    );
    assert!(x.is_ok() != y.is_ok(), "exactly one wins: {x:?} {y:?}");
    let loser = x.err().or(y.err()).unwrap();
    assert!(
        matches!(
            loser.code(),
            tonic::Code::FailedPrecondition | tonic::Code::Aborted
        ),
        "{loser:?}"
    );

    play(&table, &mut clients, &mut received, |_| false).await;
    let (events, seeds) = stored(&settings, &table).await;
    check_received(&events, &seeds, &received);
    assert_eq!(check_scores(&events, &seeds), 1);
    assert_published_once_in_order(&infra, &settings, &table, &events).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_on_one_process_follows_commands_made_on_the_other_as_they_are_published() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    // B's streams never reread the store by themselves during the test: every update must come
    // from hearing of A's events on NATS (a missed wake-up fails the test, whatever the load).
    let (settings, _processes, ca, cb) =
        two_processes_with(&infra, &[("OKEY_LIVE__STREAM_RECHECK_MS", "600000")]).await;
    let (table, mut clients) = seated_table(ca, &settings, 1).await;
    // Seat 0's player follows the table on process B; everyone plays on process A.
    let watcher = Client::new(cb, &settings, &clients[0].id, &["player"]);
    let version = clients[0].view(&table).await.unwrap().version;
    let mut stream = watch_after(&watcher, &table, version).await;
    // Process B hears of A's events on NATS and wakes the stream at once: twenty commands in a
    // row, each waiting for B's stream, which would otherwise wait ten minutes for its re-read.
    let mut received = fresh();
    let mut played = 0;
    let mut target = version;
    while played < 20 {
        target = play_one_and_follow(
            &table,
            &mut clients,
            &mut received,
            &mut stream,
            Duration::from_secs(30),
            "an update woken by NATS",
        )
        .await;
        played += 1;
    }
    // B holds the table at the version its stream opened at, and has heard of A's newer ones: a
    // view asked for at least the old version is not answered from the old state in memory.
    let seen = watcher
        .clone()
        .view_at_least(&table, pb::SeatViewForm::Typed, Some(version))
        .await
        .unwrap();
    assert_eq!(
        seen.version, target,
        "B answered from a state it knew was old"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_on_a_process_that_hears_nothing_of_the_other_follows_it_from_the_store() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    // Process B publishes and listens on a NATS prefix of its own: it never hears of A's events,
    // as when a wake-up is lost. Its check of the store for the tables its streams follow
    // (every 200 ms here) must bring each of A's commands to B's stream all the same.
    let base = infra.env_for(ServiceKind::Table, 0);
    let (pa, pb_) = (free_port(), free_port());
    let mut env_b = env_on(&base, pb_);
    let deaf = format!("{}-deaf", settings_from_env(&base).nats.subject_prefix);
    env_b.retain(|(k, _)| k != "OKEY_NATS__SUBJECT_PREFIX" && k != "OKEY_LIVE__STREAM_RECHECK_MS");
    env_b.push(("OKEY_NATS__SUBJECT_PREFIX".into(), deaf));
    env_b.push(("OKEY_LIVE__STREAM_RECHECK_MS".into(), "200".into()));
    let _processes = [
        Running(spawn_binary(&env_on(&base, pa))),
        Running(spawn_binary(&env_b)),
    ];
    let settings = settings_from_env(&base);
    let (ca, cb) = (connect(pa).await, connect(pb_).await);
    let (table, mut clients) = seated_table(ca, &settings, 1).await;
    let watcher = Client::new(cb, &settings, &clients[0].id, &["player"]);
    let version = clients[0].view(&table).await.unwrap().version;
    let mut stream = watch_after(&watcher, &table, version).await;
    let mut received = fresh();
    for _ in 0..5 {
        // Well within the heartbeat (15 s): the update comes from the store check.
        play_one_and_follow(
            &table,
            &mut clients,
            &mut received,
            &mut stream,
            Duration::from_secs(10),
            "an update found by B's check of the store",
        )
        .await;
    }
}
