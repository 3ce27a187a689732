//! The table service against real PostgreSQL, NATS and Redis: it reports SERVING once its
//! dependencies answer, refuses an API call without a token with the documented error, refuses
//! a bad setting by name, keeps events on JetStream as long as configured, and on SIGTERM turns
//! NOT_SERVING, drains and exits 0 within its grace period
//! (and at once, with 0, while it still waits for its dependencies).

use std::time::Duration;

use okey_platform::ServiceKind;
use okey_platform::auth::Role;
use okey_platform::testing::{self, TestInfra, connect, signed_in, wait_for_health};
use okey_proto::v1::GetTableRequest;
use okey_proto::v1::table_service_client::TableServiceClient;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_types::StatusExt;

const SERVICE: ServiceKind = ServiceKind::Table;
const API: &str = "okey.v1.TableService";
const BINARY: &str = env!("CARGO_BIN_EXE_table");

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
        .get_table(signed_in(GetTableRequest::default(), &[Role::Player]))
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
    testing::sigterm_turns_not_serving_and_exits_zero(BINARY, &infra, SERVICE, API).await;
}

#[test]
fn a_bad_setting_stops_start_up_with_a_message_naming_it() {
    testing::a_bad_setting_is_named(BINARY);
}

#[test]
fn sigterm_while_waiting_for_dependencies_exits_zero() {
    testing::sigterm_while_starting_exits_zero(BINARY, SERVICE);
}

/// JetStream keeps the table events for `nats.events_max_age_secs`; a start with another value
/// changes the age limit of the stream it finds, and nothing else an operator set there.
#[tokio::test]
async fn the_events_stream_keeps_messages_as_long_as_configured() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let mut settings = infra.settings_for(SERVICE);
    let nats = async_nats::connect(&infra.nats_url).await.unwrap();
    let js = async_nats::jetstream::new(nats);
    let name = table::outbox::Subjects::new(&settings.nats.subject_prefix).stream_name();
    for secs in [7200, 300, 0] {
        settings.nats.events_max_age_secs = secs;
        let app = table::startup::Application::build(&settings)
            .await
            .expect("the service starts");
        let mut stream = js.get_stream(&name).await.unwrap();
        let config = stream.info().await.unwrap().config.clone();
        assert_eq!(
            config.max_age,
            Duration::from_secs(secs),
            "after a start with {secs}"
        );
        assert_eq!(config.duplicate_window, Duration::from_secs(120));
        app.run_until_stopped(async {}).await.expect("clean stop");
        if secs == 7200 {
            // An operator caps the stream's size; later starts leave that alone.
            js.update_stream(async_nats::jetstream::stream::Config {
                max_bytes: 64 << 20,
                ..config
            })
            .await
            .unwrap();
        }
    }
    let mut stream = js.get_stream(&name).await.unwrap();
    assert_eq!(stream.info().await.unwrap().config.max_bytes, 64 << 20);
}
