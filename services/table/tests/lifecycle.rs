//! The table service against real PostgreSQL, NATS and Redis: it reports SERVING once its
//! dependencies answer, refuses an API call without a token with the documented error, refuses a bad setting by name,
//! and on SIGTERM turns NOT_SERVING, drains and exits 0 within its grace period.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use okey_platform::ServiceKind;
use okey_platform::testing::{TestInfra, free_port};
use okey_proto::v1::GetTableRequest;
use okey_proto::v1::table_service_client::TableServiceClient;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_types::StatusExt;

const SERVICE: ServiceKind = ServiceKind::Table;
const API: &str = "okey.v1.TableService";
const BINARY: &str = env!("CARGO_BIN_EXE_table");

/// Connects to `port`, retrying while the server starts.
async fn connect(port: u16, within: Duration) -> Channel {
    let deadline = Instant::now() + within;
    loop {
        match Channel::from_shared(format!("http://127.0.0.1:{port}"))
            .expect("valid uri")
            .connect()
            .await
        {
            Ok(channel) => return channel,
            Err(e) if Instant::now() > deadline => panic!("cannot connect to port {port}: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Polls the health of `service` until it is `wanted`.
async fn wait_for_health(channel: Channel, service: &str, wanted: ServingStatus) {
    let mut health = HealthClient::new(channel);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = health
            .check(HealthCheckRequest {
                service: service.to_owned(),
            })
            .await
            .map(|r| r.into_inner().status());
        if status.as_ref().ok() == Some(&wanted) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{service} never became {wanted:?}: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A request carrying a player's access token (signed by the test key the test settings trust).
fn signed_in<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    let token = okey_platform::testing::test_token("p1", &[okey_platform::auth::Role::Player]);
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ASCII token"),
    );
    request
}

#[tokio::test]
async fn reports_serving_once_its_dependencies_answer() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = table::startup::Application::build(&infra.settings_for(SERVICE))
        .await
        .expect("the service starts");
    let port = app.local_addr().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(app.run_until_stopped(async {
        let _ = stopped.await;
    }));

    let channel = connect(port, Duration::from_secs(10)).await;
    wait_for_health(channel.clone(), API, ServingStatus::Serving).await;
    wait_for_health(channel.clone(), "", ServingStatus::Serving).await;

    // Without a token the authentication layer refuses; with one, the API itself answers (a
    // request naming no table is malformed).
    let mut api = TableServiceClient::new(channel);
    let refused = api
        .get_table(GetTableRequest::default())
        .await
        .expect_err("no token");
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);
    let error = api
        .get_table(signed_in(GetTableRequest::default()))
        .await
        .expect_err("no table named");
    assert_eq!(error.code(), tonic::Code::InvalidArgument);
    let details = error.get_error_details();
    let info = details.error_info().expect("ErrorInfo detail");
    assert_eq!(info.domain, "okey.v1");

    stop.send(()).expect("server still running");
    server.await.expect("server task").expect("clean stop");
}

#[tokio::test]
async fn sigterm_turns_not_serving_and_exits_zero_within_the_grace_period() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let grace = Duration::from_secs(3);
    let port = free_port();
    let mut child = Command::new(BINARY)
        .envs(infra.env_for(SERVICE, port))
        .env(
            "OKEY_SERVER__GRACE_PERIOD_MS",
            grace.as_millis().to_string(),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");

    let channel = connect(port, Duration::from_secs(30)).await;
    wait_for_health(channel.clone(), "", ServingStatus::Serving).await;

    // A health watch is an in-flight call that never ends on its own: the drain must give up on
    // it when the grace period is over.
    let mut watch = HealthClient::new(channel)
        .watch(HealthCheckRequest {
            service: API.to_owned(),
        })
        .await
        .expect("watch starts")
        .into_inner();
    let first = watch.message().await.expect("stream").expect("an update");
    assert_eq!(first.status(), ServingStatus::Serving);

    let signalled = Instant::now();
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());

    let next = watch.message().await.expect("stream").expect("an update");
    assert_eq!(next.status(), ServingStatus::NotServing);

    let status = loop {
        if let Some(status) = child.try_wait().expect("wait works") {
            break status;
        }
        assert!(
            signalled.elapsed() < grace + Duration::from_secs(5),
            "still running {:?} after SIGTERM",
            signalled.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "exit status {status}");
    assert!(
        signalled.elapsed() < grace + Duration::from_secs(2),
        "took {:?}",
        signalled.elapsed()
    );
}

#[test]
fn a_bad_setting_stops_start_up_with_a_message_naming_it() {
    let output = Command::new(BINARY)
        .env("OKEY_SERVER__PORT", "not-a-port")
        .output()
        .expect("the binary runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("OKEY_SERVER__PORT"), "{stderr}");
    assert!(stderr.contains("server.port"), "{stderr}");
}
