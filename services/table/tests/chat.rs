//! Table and partner chat against the real NATS, PostgreSQL and Redis: partner messages reach
//! the partner and never an opponent (live or from the kept history), over-long and too-frequent
//! messages are refused with a precise status (retries of one message counted once), old
//! messages are swept.

mod common;
mod live_common;

use std::time::{Duration, Instant};

use common::*;
use live_common::*;
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use tonic::Code;
use tonic::codegen::tokio_stream::StreamExt;
use tonic_types::StatusExt;

async fn say(
    client: &mut Client,
    table: &str,
    channel: pb::ChatChannel,
    text: &str,
) -> Result<pb::ChatMessage, tonic::Status> {
    let r = client.req(pb::SendChatMessageRequest {
        request_id: uuid(),
        table: table.to_owned(),
        channel: channel as i32,
        text: text.to_owned(),
    });
    Ok(client
        .api
        .send_chat_message(r)
        .await?
        .into_inner()
        .message
        .unwrap())
}

type ChatStream = tonic::Streaming<pb::WatchChatResponse>;

async fn open(client: &mut Client, table: &str) -> ChatStream {
    let r = client.req(pb::WatchChatRequest {
        table: table.to_owned(),
    });
    client.api.watch_chat(r).await.unwrap().into_inner()
}

/// Texts received until (and including) `until`.
async fn read_until(stream: &mut ChatStream, until: &str) -> Vec<String> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !got.iter().any(|t| t == until) {
        let left = deadline.saturating_duration_since(Instant::now());
        let m = tokio::time::timeout(left, stream.next())
            .await
            .unwrap_or_else(|_| panic!("`{until}` never arrived; got {got:?}"))
            .unwrap()
            .unwrap();
        got.push(m.message.unwrap().text);
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partner_messages_never_reach_opponents_and_limits_are_precise() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let settings = live_settings(
        &infra,
        &[
            ("OKEY_LIVE__CHAT_BURST", "4"),
            ("OKEY_LIVE__CHAT_WINDOW_MS", "60000"),
            ("OKEY_LIVE__CHAT_MAX_CHARS", "50"),
            ("OKEY_LIVE__CHAT_RETENTION_SECS", "3600"),
            ("OKEY_LIVE__CHAT_SWEEP_INTERVAL_MS", "50"),
        ],
    );
    let clock = clock();
    let app = Replica::start(&settings, clock.clone()).await;
    let channel = connect(app.port).await;
    let mut admin = Client::new(channel.clone(), &settings, "admin", &["admin"]);
    let mut people: Vec<Client> = (0..4)
        .map(|_| Client::new(channel.clone(), &settings, &uuid(), &["player"]))
        .collect();
    let names: Vec<String> = people.iter().map(Client::player).collect();
    let table = create(&mut admin, 1, true, &names, None).await;

    let mut streams = Vec::new();
    for p in &mut people {
        streams.push(open(p, &table).await);
    }
    let partner = say(
        &mut people[0],
        &table,
        pb::ChatChannel::Partner,
        "psst, partner",
    )
    .await
    .unwrap();
    assert_eq!(partner.channel, pb::ChatChannel::Partner as i32);
    assert_eq!(partner.sender_seat, 0);
    say(&mut people[1], &table, pb::ChatChannel::Table, "hello all")
        .await
        .unwrap();

    // Seat 2 (the partner) gets both; seats 1 and 3 (the opponents) only the table message.
    let got = read_until(&mut streams[2], "hello all").await;
    assert!(got.contains(&"psst, partner".to_owned()), "{got:?}");
    for seat in [1, 3] {
        let got = read_until(&mut streams[seat], "hello all").await;
        assert!(
            !got.contains(&"psst, partner".to_owned()),
            "seat {seat} got {got:?}"
        );
    }
    // Nor from the kept history: a stream opened now replays only what the seat may read.
    let mut late = open(&mut people[3], &table).await;
    let got = read_until(&mut late, "hello all").await;
    assert_eq!(got, vec!["hello all".to_owned()]);
    drop(late);
    let mut late = open(&mut people[2], &table).await;
    let got = read_until(&mut late, "hello all").await;
    assert_eq!(
        got,
        vec!["psst, partner".to_owned(), "hello all".to_owned()]
    );

    // Too long: INVALID_ARGUMENT naming the text and the limit.
    let long = "x".repeat(51);
    let err = say(&mut people[1], &table, pb::ChatChannel::Table, &long)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("limit is 50"), "{}", err.message());
    let details = err.get_error_details();
    assert_eq!(details.error_info().unwrap().reason, "chat_too_long");
    assert_eq!(
        details.bad_request().unwrap().field_violations[0].field,
        "text"
    );
    // An escape sequence or a direction override would change how the others' screens show it.
    for text in ["hi\u{1b}[2J", "\u{202E}yalo ig"] {
        let err = say(&mut people[1], &table, pb::ChatChannel::Table, text)
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{text:?}");
        assert_eq!(
            err.get_error_details().error_info().unwrap().reason,
            "invalid_text"
        );
    }

    // Too frequent: seat 0 already sent one; three more pass, the fifth in the window does not.
    for i in 0..3 {
        say(
            &mut people[0],
            &table,
            pb::ChatChannel::Table,
            &format!("m{i}"),
        )
        .await
        .unwrap();
    }
    let err = say(
        &mut people[0],
        &table,
        pb::ChatChannel::Table,
        "one too many",
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert!(err.message().contains("wait"), "{}", err.message());
    let details = err.get_error_details();
    assert_eq!(details.error_info().unwrap().reason, "chat_rate_limited");
    let retry = details.retry_info().unwrap().retry_delay.unwrap();
    assert!(retry > Duration::ZERO && retry <= Duration::from_secs(60));
    // Another player is not limited by seat 0's messages.
    say(&mut people[3], &table, pb::ChatChannel::Table, "still here")
        .await
        .unwrap();

    // Past the retention, the sweep deletes the kept messages.
    clock.advance(Duration::from_secs(3601));
    let pool = sqlx::PgPool::connect(settings.database.url.expose())
        .await
        .unwrap();
    let started = Instant::now();
    loop {
        let left: i64 = sqlx::query_scalar("SELECT count(*) FROM chat_messages")
            .fetch_one(&pool)
            .await
            .unwrap();
        if left == 0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{left} messages kept"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pool.close().await;
    drop((streams, late));
    app.stop().await;
}

/// A partner message is for whoever sits in the team's seats when it is sent: a player who sits
/// down in that team later never reads it from the kept history, and reads the ones sent after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partner_message_sent_before_a_player_sat_down_stays_unread_by_them() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let settings = live_settings(&infra, &[]);
    let app = Replica::start(&settings, clock()).await;
    let channel = connect(app.port).await;
    let mut admin = Client::new(channel.clone(), &settings, "admin", &["admin"]);
    let mut people: Vec<Client> = (0..3)
        .map(|_| Client::new(channel.clone(), &settings, &uuid(), &["player"]))
        .collect();
    let names: Vec<String> = people[..2].iter().map(Client::player).collect();
    // Seats 0 and 1 taken, 2 (seat 0's partner) and 3 free.
    let table = create(&mut admin, 1, true, &names, None).await;
    say(
        &mut people[0],
        &table,
        pb::ChatChannel::Partner,
        "before you sat",
    )
    .await
    .unwrap();
    people[2].join(&table, 2).await;
    say(
        &mut people[0],
        &table,
        pb::ChatChannel::Partner,
        "after you sat",
    )
    .await
    .unwrap();
    say(&mut people[1], &table, pb::ChatChannel::Table, "hello all")
        .await
        .unwrap();
    let mut late = open(&mut people[2], &table).await;
    let got = read_until(&mut late, "hello all").await;
    assert_eq!(
        got,
        vec!["after you sat".to_owned(), "hello all".to_owned()]
    );
    let mut sender = open(&mut people[0], &table).await;
    let got = read_until(&mut sender, "hello all").await;
    assert_eq!(
        got,
        vec![
            "before you sat".to_owned(),
            "after you sat".to_owned(),
            "hello all".to_owned()
        ]
    );
    drop((late, sender));
    app.stop().await;
}

/// Retries of one message sent at the same moment (a client that timed out while its first send
/// was still in flight) are answered with the one message stored, and counted once against the
/// sender's burst: every retry waits on the first send's row instead of being counted as a new
/// message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_retries_of_a_message_are_one_message_counted_once() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let settings = live_settings(
        &infra,
        &[
            ("OKEY_LIVE__CHAT_BURST", "2"),
            ("OKEY_LIVE__CHAT_WINDOW_MS", "600000"),
        ],
    );
    let app = Replica::start(&settings, clock()).await;
    let channel = connect(app.port).await;
    let mut admin = Client::new(channel.clone(), &settings, "admin", &["admin"]);
    let people: Vec<Client> = (0..4)
        .map(|_| Client::new(channel.clone(), &settings, &uuid(), &["player"]))
        .collect();
    let names: Vec<String> = people.iter().map(Client::player).collect();
    let table = create(&mut admin, 1, true, &names, None).await;

    // Each seat sends one message as 12 retries at once, then one new message (its second: within
    // the burst of 2), then a third, which is refused.
    for (seat, person) in people.iter().enumerate() {
        let request_id = uuid();
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(12));
        let sends: Vec<_> = (0..12)
            .map(|_| {
                let mut client = person.clone();
                let (table, request_id, barrier) =
                    (table.clone(), request_id.clone(), barrier.clone());
                tokio::spawn(async move {
                    let r = client.req(pb::SendChatMessageRequest {
                        request_id,
                        table,
                        channel: pb::ChatChannel::Table as i32,
                        text: "once".to_owned(),
                    });
                    barrier.wait().await;
                    client.api.send_chat_message(r).await
                })
            })
            .collect();
        let mut ids = std::collections::BTreeSet::new();
        for send in sends {
            let answer = send.await.unwrap().unwrap_or_else(|s| {
                panic!(
                    "seat {seat}: a retry was refused: {:?} {}",
                    s.code(),
                    s.message()
                )
            });
            ids.insert(answer.into_inner().message.unwrap().name);
        }
        assert_eq!(ids.len(), 1, "seat {seat}: retries answered {ids:?}");
        let mut person = person.clone();
        say(&mut person, &table, pb::ChatChannel::Table, "second")
            .await
            .unwrap_or_else(|s| panic!("seat {seat}: the second message was refused: {s:?}"));
        let err = say(&mut person, &table, pb::ChatChannel::Table, "third")
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::ResourceExhausted, "seat {seat}");
    }
    let pool = sqlx::PgPool::connect(settings.database.url.expose())
        .await
        .unwrap();
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM chat_messages WHERE table_id = $1")
        .bind(sqlx::types::Uuid::parse_str(table.trim_start_matches("tables/")).unwrap())
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(
        stored, 8,
        "one message and one second message from each seat"
    );
    pool.close().await;
    app.stop().await;
}
