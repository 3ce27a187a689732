//! A host of these tests' own: no dependencies, on a free loopback port, until stopped.

use std::net::{IpAddr, Ipv4Addr};

use okey_platform::settings::ServerSettings;
use okey_platform::{Dependencies, ServerError, ServiceHost, ServiceKind, Settings};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The shipped server settings (matchmaking's, whose `WatchTicket` streams a multiplexing
/// client holds while its players wait), on a free loopback port.
pub fn settings() -> ServerSettings {
    let env = [
        ("OKEY_SERVER__PORT", "0"),
        ("OKEY_SERVER__PROBE_INTERVAL_MS", "50"),
    ];
    let settings =
        Settings::from_sources(ServiceKind::Matchmaking, None, env).expect("the defaults load");
    assert_eq!(settings.server.host, IpAddr::V4(Ipv4Addr::LOCALHOST));
    settings.server
}

/// A plain HTTP/2 connection to the host (no gRPC client: one would enforce deadlines itself).
#[allow(dead_code)]
pub async fn http2(port: u16) -> h2::client::SendRequest<tonic::codegen::Bytes> {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connects");
    let (client, connection) = h2::client::handshake(tcp).await.expect("HTTP/2");
    tokio::spawn(connection);
    client.ready().await.expect("ready")
}

/// Opens a call of health's `method` (`Check`, `Watch`) on a plain HTTP/2 connection: the
/// answer to come, and the request's body, whose message ([`EMPTY_MESSAGE`]) is the caller's to
/// send (or not).
#[allow(dead_code)]
pub fn health_call(
    client: &mut h2::client::SendRequest<tonic::codegen::Bytes>,
    port: u16,
    method: &str,
) -> (
    h2::client::ResponseFuture,
    h2::SendStream<tonic::codegen::Bytes>,
) {
    let request = http::Request::post(format!(
        "http://127.0.0.1:{port}/grpc.health.v1.Health/{method}"
    ))
    .header("content-type", "application/grpc")
    .header("te", "trailers")
    .body(())
    .unwrap();
    client.send_request(request, false).expect("sent")
}

/// An empty `HealthCheckRequest` as a gRPC message: no compression, length 0.
#[allow(dead_code)]
pub const EMPTY_MESSAGE: [u8; 5] = [0; 5];

/// A running host and what stops it.
pub struct Running {
    pub port: u16,
    stop: oneshot::Sender<()>,
    server: JoinHandle<Result<(), ServerError>>,
}

/// Runs `host` with no dependencies (its health says SERVING once it has probed them).
pub fn run(host: ServiceHost) -> Running {
    let port = host.local_addr().port();
    let dependencies = Dependencies {
        postgres: None,
        nats: None,
        jetstream: None,
        redis: None,
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(host.run_until_stopped(dependencies, async move {
        let _ = stopped.await;
    }));
    Running { port, stop, server }
}

impl Running {
    /// Stops the host and checks it stopped cleanly.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.server
            .await
            .expect("the server task ran")
            .expect("the server stopped cleanly");
    }
}
