//! A call still running at its deadline is answered DEADLINE_EXCEEDED `deadline_exceeded`
//! through the whole server, never tonic's CANCELLED: tonic reads `grpc-timeout` too, outside
//! every layer of ours, and its timer for the same deadline starts a moment earlier, so without
//! the host's lead its answer would now and then come first. Many calls at once, each a health
//! check whose request message never arrives (so the handler waits until the deadline), with
//! deadlines at every phase of the timers' millisecond ticks.

mod common;

use std::time::Duration;

use okey_platform::status::{self, Reason};
use okey_platform::{ServiceHost, ServiceKind, Settings};
use tonic::Code;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

const CALLS: usize = 200;

/// A unary call whose request message never comes, sent with `timeout` as its `grpc-timeout`
/// over plain HTTP/2 (a gRPC client would enforce the deadline itself): the server's answer.
async fn unfinished_check(port: u16, timeout: Duration) -> (Code, tonic::Status) {
    let mut client = common::http2(port).await;
    let request = http::Request::post(format!(
        "http://127.0.0.1:{port}/grpc.health.v1.Health/Check"
    ))
    .header("content-type", "application/grpc")
    .header("te", "trailers")
    .header("grpc-timeout", format!("{}u", timeout.as_micros()))
    .body(())
    .unwrap();
    // The request's stream stays open, its message never sent.
    let (response, _request_body) = client.send_request(request, false).expect("sent");
    let response = response.await.expect("an answer");
    let (head, mut body) = response.into_parts();
    let headers = match head.headers.contains_key("grpc-status") {
        true => head.headers,
        false => {
            while body.data().await.is_some() {}
            body.trailers().await.expect("trailers").expect("a status")
        }
    };
    let status = tonic::Status::from_header_map(&headers).expect("a gRPC status");
    (status.code(), status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_at_its_deadline_is_deadline_exceeded_never_cancelled() {
    let host = common::run(ServiceHost::bind(&common::settings()).await.expect("binds"));
    let port = host.port;
    let channel = tonic::transport::Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .expect("a valid uri")
        .connect()
        .await
        .expect("connects");
    // Serving once it has probed its (here: no) dependencies.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let status = HealthClient::new(channel.clone())
            .check(HealthCheckRequest::default())
            .await
            .map(|r| r.into_inner().status);
        if status.ok() == Some(1) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "never SERVING");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Deadlines spread over a few milliseconds, so they fall at every phase of the timers'
    // millisecond ticks.
    let calls: Vec<_> = (0..CALLS)
        .map(|i| {
            let timeout = Duration::from_micros(200_000 + 37 * i as u64);
            tokio::spawn(unfinished_check(port, timeout))
        })
        .collect();
    let mut codes = std::collections::BTreeMap::new();
    for call in calls {
        let (code, status) = call.await.expect("the call's task");
        if code == Code::DeadlineExceeded {
            assert!(status::is(&status, Reason::DeadlineExceeded), "{status:?}");
        }
        *codes.entry(format!("{code:?}")).or_insert(0) += 1;
    }
    assert_eq!(
        codes,
        std::collections::BTreeMap::from([("DeadlineExceeded".to_owned(), CALLS)]),
        "every call ran out of time and said so"
    );

    host.stop().await;
}

/// A plain HTTP route (the table's replay page) still unanswered after
/// `server.request_timeout_ms` gets 504 with the JSON error body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_http_request_past_the_servers_longest_call_is_504() {
    let env = [
        ("OKEY_SERVER__PORT", "0"),
        ("OKEY_SERVER__REQUEST_TIMEOUT_MS", "300"),
    ];
    let settings = Settings::from_sources(ServiceKind::Table, None, env).expect("loads");
    let slow = axum::Router::new().route(
        "/slow/page",
        axum::routing::get(|| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            "too late"
        }),
    );
    let host = common::run(
        ServiceHost::bind(&settings.server)
            .await
            .expect("binds")
            .with_http("/slow", slow),
    );
    let port = host.port;

    let mut client = common::http2(port).await;
    let request = http::Request::get(format!("http://127.0.0.1:{port}/slow/page"))
        .body(())
        .unwrap();
    let started = tokio::time::Instant::now();
    let (response, _) = client.send_request(request, true).expect("sent");
    let response = response.await.expect("an answer");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "answered at the timeout"
    );
    assert_eq!(response.status(), http::StatusCode::GATEWAY_TIMEOUT);
    let mut body = response.into_body();
    let mut text = Vec::new();
    while let Some(chunk) = body.data().await {
        text.extend_from_slice(&chunk.expect("a chunk"));
    }
    let error: serde_json::Value = serde_json::from_slice(&text).expect("JSON");
    assert_eq!(error["error"]["code"], 504);
    assert_eq!(error["error"]["reason"], "deadline_exceeded");

    host.stop().await;
}
