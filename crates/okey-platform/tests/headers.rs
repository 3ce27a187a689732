//! A call's metadata up to `MAX_HEADER_LIST_BYTES` reaches the service, so an oversized token or
//! field gets the service's own precise answer rather than HTTP/2's 431 (UNKNOWN to a gRPC
//! client), which hyper's default of 16 KiB gave anything larger.

mod common;

use std::time::Duration;

use okey_platform::ServiceHost;
use okey_platform::server::MAX_HEADER_LIST_BYTES;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

#[tokio::test]
async fn metadata_over_hypers_default_reaches_the_service() {
    let host = common::run(ServiceHost::bind(&common::settings()).await.expect("binds"));
    let channel = Channel::from_shared(format!("http://127.0.0.1:{}", host.port))
        .expect("a valid uri")
        .connect()
        .await
        .expect("connects");
    let check = |padding: usize| {
        let mut client = HealthClient::new(channel.clone());
        async move {
            let mut request = tonic::Request::new(HealthCheckRequest {
                service: String::new(),
            });
            if padding > 0 {
                let value = MetadataValue::try_from("x".repeat(padding)).expect("ASCII");
                request.metadata_mut().insert("x-padding", value);
            }
            client.check(request).await
        }
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while check(0).await.map(|r| r.into_inner().status).ok() != Some(1) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the host never said SERVING"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Three times hyper's default limit, well inside ours.
    let padding = 48 * 1024;
    assert!(padding < MAX_HEADER_LIST_BYTES as usize);
    let answer = check(padding)
        .await
        .expect("a call with 48 KiB of metadata is served");
    assert_eq!(answer.into_inner().status, 1, "SERVING");

    host.stop().await;
}
