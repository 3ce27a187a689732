//! The matchmaking service against real PostgreSQL, NATS and Redis: it reports SERVING once its
//! dependencies answer, answers its API with the documented errors, refuses a bad setting by name,
//! and on SIGTERM turns NOT_SERVING, drains and exits 0 within its grace period
//! (and at once, with 0, while it still waits for its dependencies).

use std::time::Duration;

use okey_platform::ServiceKind;
use okey_platform::auth::Role;
use okey_platform::testing::{self, TestInfra, connect, test_token, wait_for_health};
use okey_proto::v1::GetRoomRequest;
use okey_proto::v1::matchmaking_service_client::MatchmakingServiceClient;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_types::StatusExt;

const SERVICE: ServiceKind = ServiceKind::Matchmaking;
const API: &str = "okey.v1.MatchmakingService";
const BINARY: &str = env!("CARGO_BIN_EXE_matchmaking");

#[tokio::test]
async fn reports_serving_once_its_dependencies_answer() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = matchmaking::startup::Application::build(&infra.settings_for(SERVICE))
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

    let mut api = MatchmakingServiceClient::new(channel);
    let player = "6f0b8a52-2c4e-4b7e-9a51-0d8f3c1e2a77";
    let with_token = |name: &str| {
        let mut request = tonic::Request::new(GetRoomRequest {
            name: name.to_owned(),
        });
        let token = test_token(player, &[Role::Player]);
        request.metadata_mut().insert(
            "authorization",
            format!("Bearer {token}").parse().expect("ASCII token"),
        );
        request
    };
    let error = api.get_room(with_token("")).await.expect_err("no name");
    assert_eq!(error.code(), tonic::Code::InvalidArgument);
    assert_eq!(
        error.get_error_details().error_info().unwrap().reason,
        "missing_field"
    );
    let error = api
        .get_room(with_token("rooms/0d6e8f3a-6c35-4d8e-8f0e-3f7a9e1b2c4d"))
        .await
        .expect_err("no such room");
    assert_eq!(error.code(), tonic::Code::NotFound);
    let details = error.get_error_details();
    let info = details.error_info().expect("ErrorInfo detail");
    assert_eq!(info.reason, "room_not_found");
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
