//! A stop does not wait out the grace period for a stream whose client reads nothing: once every
//! unary call has answered, the streams (told to end) get a moment for their last frames and the
//! host stops, though a stream's end still waits on flow control its client never opens.

mod common;

use std::time::{Duration, Instant};

use okey_platform::ServiceHost;

#[tokio::test]
async fn a_stream_whose_client_reads_nothing_does_not_hold_the_stop() {
    let mut settings = common::settings();
    settings.grace_period_ms = 8_000;
    let host = common::run(ServiceHost::bind(&settings).await.expect("binds"));

    // A client that opens health's Watch with a window of 0 bytes: the server can send it no
    // message, so the stream's end (after its first message) never leaves.
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", host.port))
        .await
        .expect("connects");
    let (mut client, connection) = h2::client::Builder::new()
        .initial_window_size(0)
        .handshake::<_, tonic::codegen::Bytes>(tcp)
        .await
        .expect("HTTP/2");
    tokio::spawn(connection);
    let (response, mut body) = common::health_call(&mut client, host.port, "Watch");
    body.send_data(common::EMPTY_MESSAGE.to_vec().into(), true)
        .expect("an empty HealthCheckRequest");
    let response = response.await.expect("the stream is open");
    assert_eq!(response.status(), 200);

    let started = Instant::now();
    host.stop().await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(4),
        "the stop took {took:?}, waiting on a stream its client does not read (grace 8 s)"
    );
}

#[tokio::test]
async fn a_unary_call_in_flight_still_holds_the_stop_until_it_answers() {
    let mut settings = common::settings();
    settings.grace_period_ms = 8_000;
    let host = common::run(ServiceHost::bind(&settings).await.expect("binds"));
    let mut client = common::http2(host.port).await;
    // The call's message comes only 1.5 s after the stop began: its handler waits for it.
    let (response, mut body) = common::health_call(&mut client, host.port, "Check");
    let started = Instant::now();
    let stopped = tokio::spawn(host.stop());
    tokio::time::sleep(Duration::from_millis(1500)).await;
    body.send_data(common::EMPTY_MESSAGE.to_vec().into(), true)
        .expect("the call is still open");
    let response = response.await.expect("answered during the stop");
    assert_eq!(response.status(), 200);
    let (_, mut answer) = response.into_parts();
    while answer.data().await.is_some() {}
    let trailers = answer
        .trailers()
        .await
        .expect("trailers")
        .expect("a status");
    assert_eq!(trailers["grpc-status"], "0", "{trailers:?}");
    stopped.await.expect("the stop ran");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(6),
        "the stop took {took:?}: it waits for the call, not for the grace period"
    );
}
