//! Thousands of calls at once on one HTTP/2 connection, as a proxy or a load generator that
//! multiplexes many players onto a few connections sends them: every call is answered, none is
//! lost to the server closing the connection.

mod common;

use std::time::Duration;

use okey_platform::ServiceHost;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

/// Calls sent at once: several times the default `server.max_concurrent_streams`, and enough
/// small request frames left unread to exhaust h2's flood budget for one connection (half its
/// 1 MiB window) if the server took them all in without serving them.
const CALLS: usize = 6_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_calls_at_once_on_one_connection_are_all_answered() {
    let host = common::run(ServiceHost::bind(&common::settings()).await.expect("binds"));
    let port = host.port;

    // One connection, opened and checked before the burst.
    let channel = Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .expect("a valid uri")
        .buffer_size(CALLS)
        .connect()
        .await
        .expect("connects");
    let check = |channel: Channel| async move {
        HealthClient::new(channel)
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
    };
    // The host says SERVING once it has probed its (here: no) dependencies.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while check(channel.clone())
        .await
        .map(|r| r.into_inner().status)
        .ok()
        != Some(1)
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the host never said SERVING"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let calls: Vec<_> = (0..CALLS)
        .map(|_| tokio::spawn(check(channel.clone())))
        .collect();
    let mut failed = Vec::new();
    for call in calls {
        if let Err(status) = call.await.expect("the call's task ran") {
            failed.push(status);
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {CALLS} calls failed; the first: {:?}",
        failed.len(),
        failed.first()
    );

    host.stop().await;
}
