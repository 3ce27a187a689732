//! The matchmaking service against real PostgreSQL and Redis: it reports SERVING once its
//! dependencies answer (NATS is not one of them), answers its API with the documented errors (a request too large, a NUL in
//! a string, an unknown bot level: refused before anything else), refuses a bad setting by name,
//! and on SIGTERM turns NOT_SERVING, drains and exits 0 within its grace period
//! (and at once, with 0, while it still waits for its dependencies).

use std::time::Duration;

use okey_platform::ServiceKind;
use okey_platform::auth::Role;
use okey_platform::testing::{self, TestInfra, connect, test_token, wait_for_health};
use okey_proto::v1 as pb;
use okey_proto::v1::GetRoomRequest;
use okey_proto::v1::matchmaking_service_client::MatchmakingServiceClient;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_types::StatusExt;

const SERVICE: ServiceKind = ServiceKind::Matchmaking;
const API: &str = "okey.v1.MatchmakingService";
const BINARY: &str = env!("CARGO_BIN_EXE_matchmaking");

/// The service in this process, SERVING, with a channel to it; awaiting the second value stops
/// it and checks that it stopped cleanly.
async fn serve(
    infra: &TestInfra,
) -> (
    tonic::transport::Channel,
    impl std::future::Future<Output = ()>,
) {
    serve_with(infra.settings_for(SERVICE)).await
}

/// [`serve`] with these settings.
async fn serve_with(
    settings: okey_platform::Settings,
) -> (
    tonic::transport::Channel,
    impl std::future::Future<Output = ()>,
) {
    let app = matchmaking::startup::Application::build(&settings)
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
    let stopping = async move {
        stop.send(()).expect("server still running");
        server.await.expect("server task").expect("clean stop");
    };
    (channel, stopping)
}

#[tokio::test]
async fn reports_serving_once_its_dependencies_answer() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let (channel, stop) = serve(&infra).await;

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

    stop.await;
}

/// A signed-in request of a new player (its own, so runs never share tickets).
fn as_player<T>(player: &str, message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    let token = test_token(player, &[Role::Player]);
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ASCII token"),
    );
    request
}

/// The reason and the field (BadRequest) of an INVALID_ARGUMENT.
fn refused(error: &tonic::Status) -> (String, String) {
    assert_eq!(error.code(), tonic::Code::InvalidArgument, "{error:?}");
    let details = error.get_error_details();
    (
        details.error_info().expect("ErrorInfo").reason.clone(),
        details
            .bad_request()
            .map(|b| b.field_violations[0].field.clone())
            .unwrap_or_default(),
    )
}

#[tokio::test]
async fn a_bad_request_is_refused_before_anything_else_and_changes_nothing() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let (channel, stop) = serve(&infra).await;
    let mut api = MatchmakingServiceClient::new(channel);
    let player = uuid::Uuid::new_v4().to_string();

    // Over 64 KiB: refused as too large, not read.
    let error = api
        .get_room(as_player(
            &player,
            GetRoomRequest {
                name: format!("rooms/{}", "a".repeat(70 * 1024)),
            },
        ))
        .await
        .expect_err("too large");
    assert_eq!(refused(&error).0, "request_too_large");

    // A NUL in any string field is `invalid_text`, naming the field.
    let error = api
        .get_room(as_player(
            &player,
            GetRoomRequest {
                name: "rooms/\0".into(),
            },
        ))
        .await
        .expect_err("NUL");
    assert_eq!(refused(&error), ("invalid_text".into(), "name".into()));
    let room = |preset: &str, password: &str, bot_level: i32| pb::CreateRoomRequest {
        request_id: uuid::Uuid::new_v4().to_string(),
        rules: Some(pb::RuleSet {
            preset: preset.into(),
            ..Default::default()
        }),
        fill_with_bots: true,
        bot_level,
        password: password.into(),
        public: false,
        spectators_allowed: false,
    };
    let error = api
        .create_room(as_player(&player, room("classic", "pass\0word", 0)))
        .await
        .expect_err("NUL in the password");
    assert_eq!(refused(&error), ("invalid_text".into(), "password".into()));
    let error = api
        .create_room(as_player(&player, room("classic\0", "", 0)))
        .await
        .expect_err("NUL in the preset");
    assert_eq!(
        refused(&error),
        ("invalid_text".into(), "rules.preset".into())
    );
    let error = api
        .list_rooms(as_player(
            &player,
            pb::ListRoomsRequest {
                page_size: 0,
                page_token: "\0".into(),
                preset: String::new(),
            },
        ))
        .await
        .expect_err("NUL in the page token");
    assert_eq!(
        refused(&error),
        ("invalid_text".into(), "page_token".into())
    );
    for (name, player_name) in [("rooms/\0", "players/x"), ("rooms/x", "players/\0")] {
        let error = api
            .remove_room_member(as_player(
                &player,
                pb::RemoveRoomMemberRequest {
                    request_id: uuid::Uuid::new_v4().to_string(),
                    name: name.into(),
                    player: player_name.into(),
                },
            ))
            .await
            .expect_err("NUL");
        assert_eq!(refused(&error).0, "invalid_text");
    }

    // A bot level this server does not know is refused, not taken for the default.
    let error = api
        .create_room(as_player(&player, room("classic", "", 7)))
        .await
        .expect_err("unknown bot level");
    assert_eq!(
        refused(&error),
        ("invalid_bot_level".into(), "bot_level".into())
    );
    let find = |rules: &str, bot_level: i32| pb::FindTableRequest {
        request_id: uuid::Uuid::new_v4().to_string(),
        rules: Some(pb::RuleSet {
            preset: rules.into(),
            ..Default::default()
        }),
        allow_bots: false,
        bot_level,
    };
    let error = api
        .find_table(as_player(&player, find("classic", 42)))
        .await
        .expect_err("unknown bot level");
    assert_eq!(
        refused(&error),
        ("invalid_bot_level".into(), "bot_level".into())
    );
    // No ticket was opened: a search with other rules is not `ticket_open`.
    let ticket = api
        .find_table(as_player(
            &player,
            find("yudum", pb::BotLevel::Unspecified as i32),
        ))
        .await
        .expect("the refused request opened no ticket")
        .into_inner()
        .ticket
        .unwrap();
    assert_eq!(ticket.bot_level, pb::BotLevel::Unspecified as i32);
    api.cancel_ticket(as_player(
        &player,
        pb::CancelTicketRequest {
            request_id: uuid::Uuid::new_v4().to_string(),
            name: ticket.name,
        },
    ))
    .await
    .expect("cancelled");

    // Support and analyst tokens read; they do not queue or open rooms (`player` role).
    for role in [Role::Support, Role::Analyst] {
        let staff = |message| {
            let mut request = tonic::Request::new(message);
            let token = test_token(&player, &[role]);
            request.metadata_mut().insert(
                "authorization",
                format!("Bearer {token}").parse().expect("ASCII token"),
            );
            request
        };
        let error = api
            .find_table(staff(find("classic", pb::BotLevel::Unspecified as i32)))
            .await
            .unwrap_err();
        assert_eq!(error.code(), tonic::Code::PermissionDenied, "{role:?}");
        let details = error.get_error_details();
        assert_eq!(
            details.error_info().expect("ErrorInfo").reason,
            "role_required"
        );
    }
    // Staff read the public listing whatever their token's subject (a tool's is no player id).
    let mut request = tonic::Request::new(pb::ListRoomsRequest::default());
    let token = test_token("okeyctl-support", &[Role::Support]);
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ASCII token"),
    );
    api.list_rooms(request)
        .await
        .expect("support lists the rooms");

    stop.await;
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

/// Matchmaking does not use NATS (its replicas hear of each other through PostgreSQL): with no
/// NATS at all it starts and reports SERVING.
#[tokio::test]
async fn serves_without_nats() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let mut settings = infra.settings_for(SERVICE);
    settings.nats.url = format!("nats://127.0.0.1:{}", testing::free_port());
    let (_channel, stop) = serve_with(settings).await;
    stop.await;
}
