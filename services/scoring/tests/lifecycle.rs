//! The scoring service against real PostgreSQL, NATS and Redis: it reports SERVING once its
//! dependencies answer, answers its API with the documented error, refuses a bad setting by name,
//! and on SIGTERM turns NOT_SERVING, drains and exits 0 within its grace period
//! (and at once, with 0, while it still waits for its dependencies).

use std::time::Duration;

use okey_platform::ServiceKind;
use okey_platform::auth::Role;
use okey_platform::testing::{self, TestInfra, connect, signed_in, wait_for_health};
use okey_proto::v1::GetMatchResultRequest;
use okey_proto::v1::scoring_service_client::ScoringServiceClient;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_types::StatusExt;

const SERVICE: ServiceKind = ServiceKind::Scoring;
const API: &str = "okey.v1.ScoringService";
const BINARY: &str = env!("CARGO_BIN_EXE_scoring");

#[tokio::test]
async fn reports_serving_once_its_dependencies_answer() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = scoring::startup::Application::build(&infra.settings_for(SERVICE))
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

    let error = ScoringServiceClient::new(channel)
        .get_match_result(signed_in(GetMatchResultRequest::default(), &[Role::Player]))
        .await
        .expect_err("an empty match name is refused");
    assert_eq!(error.code(), tonic::Code::InvalidArgument);
    let details = error.get_error_details();
    let info = details.error_info().expect("ErrorInfo detail");
    assert_eq!(info.reason, "missing_field");
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
