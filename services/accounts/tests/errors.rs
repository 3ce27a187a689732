//! The error model at the accounts service's edge, against the running service: text PostgreSQL
//! cannot hold, request ids counted in characters, requests that do not decode and requests over
//! 64 KiB are all INVALID_ARGUMENT with ErrorInfo, and nothing is stored; reflection serves the
//! `google.rpc` error details so standard tools can read them.

mod common;

use std::time::Duration;

use common::{TestApp, bearer, device, guest};
use okey_platform::testing::{TestInfra, connect, raw_unary, reflection_files_for};
use okey_proto::v1 as pb;
use prost::Message;
use tonic::Code;
use tonic_types::StatusExt;

const SIGN_IN_AS_GUEST: &str = "/okey.v1.AccountsService/SignInAsGuest";

async fn stored_accounts(app: &TestApp) -> (i64, i64) {
    let pool = app.pool().await;
    let accounts: i64 = sqlx::query_scalar("SELECT count(*) FROM accounts")
        .fetch_one(&pool)
        .await
        .unwrap();
    let devices: i64 = sqlx::query_scalar("SELECT count(*) FROM devices")
        .fetch_one(&pool)
        .await
        .unwrap();
    (accounts, devices)
}

/// The status is INVALID_ARGUMENT with an okey ErrorInfo of `why`.
fn assert_invalid(status: &tonic::Status, why: &str) {
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let details = status.get_error_details();
    let info = details.error_info().expect("ErrorInfo");
    assert_eq!(info.domain, "okey.v1", "{status:?}");
    assert_eq!(info.reason, why, "{status:?}");
}

fn guest_request(
    request_id: &str,
    device_id: &str,
    display_name: &str,
) -> pb::SignInAsGuestRequest {
    pb::SignInAsGuestRequest {
        request_id: request_id.to_owned(),
        device_id: device_id.to_owned(),
        display_name: display_name.to_owned(),
    }
}

#[tokio::test]
async fn text_the_store_cannot_hold_is_refused_before_the_store() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let me = guest(&mut client).await;
    let token = me.session.unwrap().access_token;
    let before = stored_accounts(&app).await;

    let nul_device = client
        .sign_in_as_guest(guest_request("r1", "device-\0-0001", ""))
        .await
        .unwrap_err();
    assert_invalid(&nul_device, "invalid_text");
    let details = nul_device.get_error_details();
    assert_eq!(
        details.bad_request().unwrap().field_violations[0].field,
        "device_id"
    );
    let nul_name = client
        .sign_in_as_guest(guest_request("r2", &device(), "Ay\0se"))
        .await
        .unwrap_err();
    assert_invalid(&nul_name, "invalid_text");
    let nul_id = client
        .sign_in_as_guest(guest_request("r\0", &device(), ""))
        .await
        .unwrap_err();
    assert_invalid(&nul_id, "invalid_request_id");

    // A username reaches a query before any password check: it used to fail in PostgreSQL and
    // answer UNAVAILABLE "retry".
    let sign_in = client
        .sign_in(pb::SignInRequest {
            request_id: "r3".into(),
            username: "ayse\0".into(),
            password: "a long enough password".into(),
            device_id: device(),
        })
        .await
        .unwrap_err();
    assert_invalid(&sign_in, "invalid_text");
    let upgrade = client
        .upgrade_guest(bearer(
            pb::UpgradeGuestRequest {
                request_id: "r\0".into(),
                username: "ayse_k".into(),
                password: "a long enough password".into(),
            },
            &token,
        ))
        .await
        .unwrap_err();
    assert_invalid(&upgrade, "invalid_request_id");
    let profile = client
        .update_profile(bearer(
            pb::UpdateProfileRequest {
                request_id: "r4".into(),
                profile: Some(pb::Profile {
                    name: "players/me".into(),
                    display_name: "Ay\0se".into(),
                    ..Default::default()
                }),
                update_mask: None,
            },
            &token,
        ))
        .await
        .unwrap_err();
    assert_invalid(&profile, "invalid_text");
    let refresh = client
        .refresh_session(pb::RefreshSessionRequest {
            request_id: "r5\0".into(),
            refresh_token: "whatever".into(),
        })
        .await
        .unwrap_err();
    assert_invalid(&refresh, "invalid_request_id");

    assert_eq!(stored_accounts(&app).await, before, "nothing was stored");
    app.stop().await;
}

#[tokio::test]
async fn a_request_id_is_counted_in_characters() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    // 64 characters of two bytes each: 128 bytes, and accepted.
    client
        .sign_in_as_guest(guest_request(&"é".repeat(64), &device(), ""))
        .await
        .expect("64 characters are a request id");
    let long = client
        .sign_in_as_guest(guest_request(&"é".repeat(65), &device(), ""))
        .await
        .unwrap_err();
    assert_invalid(&long, "invalid_request_id");
    app.stop().await;
}

#[tokio::test]
async fn requests_that_do_not_decode_are_invalid_argument_with_error_info() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let channel = connect(app.port, Duration::from_secs(10)).await;

    // The raw path itself works: a well-formed request signs a guest in.
    let good = guest_request("r1", &device(), "").encode_to_vec();
    let answer = raw_unary(channel.clone(), SIGN_IN_AS_GUEST, tonic::Request::new(good))
        .await
        .expect("a well-formed request passes");
    assert!(
        pb::SignInAsGuestResponse::decode(answer.as_slice())
            .unwrap()
            .created
    );
    let before = stored_accounts(&app).await;

    // Field 2 (device_id) is a string: tag 0x12 (field 2, length-delimited).
    let cases: [(&str, Vec<u8>); 3] = [
        ("invalid UTF-8", [&[0x12, 10][..], &[0xff; 10][..]].concat()),
        ("wrong wire type", vec![0x10, 0x01]),
        ("truncated", vec![0x12, 40, b'd', b'e', b'v']),
    ];
    for (what, bytes) in cases {
        let refused = raw_unary(
            channel.clone(),
            SIGN_IN_AS_GUEST,
            tonic::Request::new(bytes),
        )
        .await
        .expect_err(what);
        assert_invalid(&refused, "malformed_request");
    }
    assert_eq!(stored_accounts(&app).await, before, "nothing was stored");
    app.stop().await;
}

#[tokio::test]
async fn a_request_over_64_kib_is_request_too_large_with_error_info() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let channel = connect(app.port, Duration::from_secs(10)).await;
    let before = stored_accounts(&app).await;

    let huge = guest_request("r1", &device(), &"x".repeat(70_000)).encode_to_vec();
    let refused = raw_unary(channel.clone(), SIGN_IN_AS_GUEST, tonic::Request::new(huge))
        .await
        .unwrap_err();
    assert_invalid(&refused, "request_too_large");

    // Just under the limit the request is decoded and the handler judges it.
    let large = guest_request("r2", &device(), &"x".repeat(60_000)).encode_to_vec();
    let judged = raw_unary(channel, SIGN_IN_AS_GUEST, tonic::Request::new(large))
        .await
        .unwrap_err();
    assert_invalid(&judged, "invalid_display_name");
    assert_eq!(stored_accounts(&app).await, before, "nothing was stored");
    app.stop().await;
}

#[tokio::test]
async fn reflection_serves_the_google_rpc_error_details() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let channel = connect(app.port, Duration::from_secs(10)).await;
    let files = reflection_files_for(channel.clone(), "google.rpc.ErrorInfo")
        .await
        .expect("reflection knows google.rpc.ErrorInfo");
    assert!(
        files.iter().any(|f| f == "google/rpc/error_details.proto"),
        "{files:?}"
    );
    let files = reflection_files_for(channel.clone(), "google.rpc.Status")
        .await
        .expect("reflection knows google.rpc.Status");
    assert!(
        files.iter().any(|f| f == "google/rpc/status.proto"),
        "{files:?}"
    );
    let unknown = reflection_files_for(channel, "google.rpc.NoSuchDetail").await;
    assert!(unknown.is_err(), "{unknown:?}");
    app.stop().await;
}
