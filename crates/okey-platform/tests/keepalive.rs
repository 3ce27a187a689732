//! A client gone without closing its connection (a phone that lost its network) is found by the
//! server's HTTP/2 PINGs: the connection is closed once a PING goes unanswered for
//! `server.keepalive_timeout_ms`, freeing its streams. A client that answers keeps it.

mod common;

use std::time::{Duration, Instant};

use okey_platform::ServiceHost;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The HTTP/2 client preface and an empty SETTINGS frame: what a client sends first.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

#[tokio::test]
async fn a_client_that_stops_answering_is_disconnected_one_that_answers_is_kept() {
    let mut settings = common::settings();
    settings.keepalive_interval_ms = 200;
    settings.keepalive_timeout_ms = 300;
    let host = common::run(ServiceHost::bind(&settings).await.expect("binds"));

    // Silent: the preface, then nothing, not even the answer to a PING. The server's frames are
    // read (so its writes never block) until it closes the connection.
    let mut silent = tokio::net::TcpStream::connect(("127.0.0.1", host.port))
        .await
        .expect("connects");
    silent.write_all(PREFACE).await.expect("preface sent");
    let started = Instant::now();
    let mut buffer = [0u8; 4096];
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match silent.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "the server kept a connection that answers no PING for 10 s"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "closed after {:?}: before a PING could go unanswered",
        started.elapsed()
    );

    // Answering: h2's client answers every PING; after several intervals the same connection
    // still carries a call.
    let mut client = common::http2(host.port).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (response, mut body) = common::health_call(&mut client, host.port, "Check");
    body.send_data(common::EMPTY_MESSAGE.to_vec().into(), true)
        .expect("an empty HealthCheckRequest on the same connection");
    let response = response.await.expect("answered on the same connection");
    assert_eq!(response.status(), 200);

    host.stop().await;
}
