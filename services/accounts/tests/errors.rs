//! The error model at the accounts service's edge, against the running service: text PostgreSQL
//! cannot hold, request ids counted in characters, requests that do not decode and requests over
//! 64 KiB are all INVALID_ARGUMENT with ErrorInfo, and nothing is stored; reflection serves the
//! `google.rpc` error details so standard tools can read them.

mod common;

use std::time::Duration;

use common::{TestApp, bearer, device, guest, reason};
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
    // A NUL is `invalid_text` in every string field, the request id included.
    assert_invalid(&nul_id, "invalid_text");

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
    assert_invalid(&upgrade, "invalid_text");
    // An empty username or password is a field left out (`missing_field`), not a bad one.
    for (username, password) in [("", "a long enough password"), ("ayse_k", "")] {
        let upgrade = client
            .upgrade_guest(bearer(
                pb::UpgradeGuestRequest {
                    request_id: format!("empty-{}", username.len()),
                    username: username.into(),
                    password: password.into(),
                },
                &token,
            ))
            .await
            .unwrap_err();
        assert_invalid(&upgrade, "missing_field");
    }
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
    assert_invalid(&refresh, "invalid_text");
    // A NUL in a name or an update mask's path is invalid_text too, as in scoring.
    let name = client
        .get_profile(bearer(
            pb::GetProfileRequest {
                name: "players/\0".into(),
            },
            &token,
        ))
        .await
        .unwrap_err();
    assert_invalid(&name, "invalid_text");
    let statistics = client
        .get_statistics(bearer(
            pb::GetStatisticsRequest {
                name: "players/me\0/statistics".into(),
            },
            &token,
        ))
        .await
        .unwrap_err();
    assert_invalid(&statistics, "invalid_text");
    let mask = client
        .update_profile(bearer(
            pb::UpdateProfileRequest {
                request_id: "r6".into(),
                profile: Some(pb::Profile {
                    name: "players/me".into(),
                    display_name: "Ayse".into(),
                    ..Default::default()
                }),
                update_mask: Some(prost_types::FieldMask {
                    paths: vec!["display\0_name".into()],
                }),
            },
            &token,
        ))
        .await
        .unwrap_err();
    assert_invalid(&mask, "invalid_text");
    assert_eq!(
        mask.get_error_details()
            .bad_request()
            .unwrap()
            .field_violations[0]
            .field,
        "update_mask.paths[0]"
    );

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

#[tokio::test]
async fn an_empty_request_id_is_refused_by_every_command() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let me = guest(&mut client).await;
    let session = me.session.unwrap();
    let before = stored_accounts(&app).await;

    let guest_sign_in = client
        .sign_in_as_guest(guest_request("", &device(), ""))
        .await
        .unwrap_err();
    let sign_in = client
        .sign_in(pb::SignInRequest {
            request_id: String::new(),
            username: "nobody_here".into(),
            password: "a long enough password".into(),
            device_id: String::new(),
        })
        .await
        .unwrap_err();
    let upgrade = client
        .upgrade_guest(bearer(
            pb::UpgradeGuestRequest {
                request_id: String::new(),
                username: "ayse_k".into(),
                password: "a long enough password".into(),
            },
            &session.access_token,
        ))
        .await
        .unwrap_err();
    let refresh = client
        .refresh_session(pb::RefreshSessionRequest {
            request_id: String::new(),
            refresh_token: session.refresh_token.clone(),
        })
        .await
        .unwrap_err();
    let sign_out = client
        .sign_out(pb::SignOutRequest {
            request_id: String::new(),
            refresh_token: session.refresh_token.clone(),
            everywhere: true,
        })
        .await
        .unwrap_err();
    let profile = client
        .update_profile(bearer(
            pb::UpdateProfileRequest {
                request_id: String::new(),
                profile: Some(pb::Profile {
                    name: "players/me".into(),
                    display_name: "Ayşe".into(),
                    ..Default::default()
                }),
                update_mask: None,
            },
            &session.access_token,
        ))
        .await
        .unwrap_err();
    for refused in [guest_sign_in, sign_in, upgrade, refresh, sign_out, profile] {
        assert_invalid(&refused, "invalid_request_id");
        let details = refused.get_error_details();
        assert_eq!(
            details.bad_request().unwrap().field_violations[0].field,
            "request_id"
        );
    }

    // Nothing was done: no guest, the session still refreshes, the profile is unchanged.
    assert_eq!(stored_accounts(&app).await, before, "nothing was stored");
    client
        .refresh_session(pb::RefreshSessionRequest {
            request_id: "r1".into(),
            refresh_token: session.refresh_token,
        })
        .await
        .expect("the session was neither used nor ended");
    app.stop().await;
}

#[tokio::test]
async fn a_device_id_of_the_wrong_length_is_invalid_device_id_and_an_empty_one_missing_field() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let before = stored_accounts(&app).await;

    for (device_id, why) in [
        ("", "missing_field"),
        ("   ", "missing_field"),
        ("short", "invalid_device_id"),
        (" 1234567 ", "invalid_device_id"),
        (&"d".repeat(129), "invalid_device_id"),
    ] {
        let refused = client
            .sign_in_as_guest(guest_request("r1", device_id, ""))
            .await
            .unwrap_err();
        assert_invalid(&refused, why);
        let details = refused.get_error_details();
        assert_eq!(
            details.bad_request().unwrap().field_violations[0].field,
            "device_id"
        );
    }
    assert_eq!(stored_accounts(&app).await, before, "nothing was stored");
    // 8 and 128 characters (counted as characters: 128 of two bytes each) are device ids.
    for device_id in ["12345678".to_owned(), "ç".repeat(128)] {
        client
            .sign_in_as_guest(guest_request("r2", &device_id, ""))
            .await
            .expect("a device id of 8–128 characters");
    }

    // SignIn's device id is optional, and when given the same length.
    let refused = client
        .sign_in(pb::SignInRequest {
            request_id: "r3".into(),
            username: "nobody_here".into(),
            password: "a long enough password".into(),
            device_id: "short".into(),
        })
        .await
        .unwrap_err();
    assert_invalid(&refused, "invalid_device_id");
    app.stop().await;
}

#[tokio::test]
async fn an_avatar_ref_is_counted_in_characters() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let token = guest(&mut client).await.session.unwrap().access_token;
    let update = |request_id: &str, avatar_ref: String| {
        bearer(
            pb::UpdateProfileRequest {
                request_id: request_id.to_owned(),
                profile: Some(pb::Profile {
                    name: "players/me".into(),
                    avatar_ref,
                    ..Default::default()
                }),
                update_mask: Some(prost_types::FieldMask {
                    paths: vec!["avatar_ref".into()],
                }),
            },
            &token,
        )
    };
    // 256 characters of two bytes each: 512 bytes, and accepted.
    let long = "é".repeat(256);
    let profile = client
        .update_profile(update("r1", long.clone()))
        .await
        .expect("256 characters are an avatar reference")
        .into_inner()
        .profile
        .unwrap();
    assert_eq!(profile.avatar_ref, long);
    let refused = client
        .update_profile(update("r2", "é".repeat(257)))
        .await
        .unwrap_err();
    assert_invalid(&refused, "invalid_avatar_ref");
    app.stop().await;
}

#[tokio::test]
async fn an_empty_refresh_token_is_missing_field_and_an_unknown_one_token_invalid() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let empty = client
        .refresh_session(pb::RefreshSessionRequest {
            request_id: "r1".into(),
            refresh_token: String::new(),
        })
        .await
        .unwrap_err();
    assert_invalid(&empty, "missing_field");
    let unknown = client
        .refresh_session(pb::RefreshSessionRequest {
            request_id: "r2".into(),
            refresh_token: "not a token this service made".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::Unauthenticated);
    assert_eq!(reason(&unknown), "token_invalid");
    app.stop().await;
}

#[tokio::test]
async fn an_empty_name_is_missing_field_and_a_malformed_one_invalid_name() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let token = guest(&mut client).await.session.unwrap().access_token;
    // GetAccount needs support staff: a guest given the role, and a session that carries it.
    let staff = guest(&mut client).await;
    let id = staff.account.unwrap().name.replace("players/", "");
    sqlx::query("UPDATE accounts SET roles = ARRAY['player', 'support'] WHERE player_id = $1")
        .bind(uuid::Uuid::parse_str(&id).unwrap())
        .execute(&app.pool().await)
        .await
        .unwrap();
    let support = client
        .refresh_session(pb::RefreshSessionRequest {
            request_id: "r0".into(),
            refresh_token: staff.session.unwrap().refresh_token,
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap()
        .access_token;

    for (name, why) in [
        ("", "missing_field"),
        ("players/", "invalid_name"),
        ("players/foo", "invalid_name"),
        ("tables/3f1c", "invalid_name"),
    ] {
        let profile = client
            .get_profile(bearer(pb::GetProfileRequest { name: name.into() }, &token))
            .await
            .unwrap_err();
        assert_invalid(&profile, why);
        let statistics = client
            .get_statistics(bearer(
                pb::GetStatisticsRequest {
                    name: if name.is_empty() {
                        String::new()
                    } else {
                        format!("{name}/statistics")
                    },
                },
                &token,
            ))
            .await
            .unwrap_err();
        assert_invalid(&statistics, why);
        let account = client
            .get_account(bearer(
                pb::GetAccountRequest { name: name.into() },
                &support,
            ))
            .await
            .unwrap_err();
        assert_invalid(&account, why);
        let update = client
            .update_profile(bearer(
                pb::UpdateProfileRequest {
                    request_id: "r1".into(),
                    profile: Some(pb::Profile {
                        name: name.into(),
                        display_name: "Ayşe".into(),
                        ..Default::default()
                    }),
                    update_mask: None,
                },
                &token,
            ))
            .await
            .unwrap_err();
        assert_invalid(&update, why);
        let details = update.get_error_details();
        assert_eq!(
            details.bad_request().unwrap().field_violations[0].field,
            "profile.name"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn a_display_name_with_a_control_character_or_a_direction_override_is_refused() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let me = guest(&mut client).await;
    let session = me.session.unwrap();
    let before = stored_accounts(&app).await;
    let rename = |request_id: String, name: &str| {
        bearer(
            pb::UpdateProfileRequest {
                request_id,
                profile: Some(pb::Profile {
                    name: "players/me".into(),
                    display_name: name.into(),
                    ..Default::default()
                }),
                update_mask: None,
            },
            &session.access_token,
        )
    };

    for (i, name) in ["Ay\u{1b}[31mşe", "\u{202E}esyA", "Ay\rşe"]
        .into_iter()
        .enumerate()
    {
        let new_guest = client
            .sign_in_as_guest(guest_request(&format!("g{i}"), &device(), name))
            .await
            .unwrap_err();
        assert_invalid(&new_guest, "invalid_display_name");
        let profile = client
            .update_profile(rename(format!("p{i}"), name))
            .await
            .unwrap_err();
        assert_invalid(&profile, "invalid_display_name");
    }
    assert_eq!(stored_accounts(&app).await, before, "no guest was made");

    // Zero-width and blank characters alone are no name: empty, so refused for a profile and
    // left to the server to pick for a new guest.
    for (i, name) in [" \u{200B}\u{200B} ", "\u{3164}"].into_iter().enumerate() {
        let profile = client
            .update_profile(rename(format!("blank{i}"), name))
            .await
            .unwrap_err();
        assert_invalid(&profile, "invalid_display_name");
        let picked = client
            .sign_in_as_guest(guest_request(&format!("blank{i}"), &device(), name))
            .await
            .expect("a new guest whose name the server picks")
            .into_inner();
        assert!(picked.created);
        let token = picked.session.expect("a session").access_token;
        let shown = client
            .get_profile(bearer(
                pb::GetProfileRequest {
                    name: "players/me".into(),
                },
                &token,
            ))
            .await
            .expect("the guest's profile")
            .into_inner()
            .profile
            .expect("a profile")
            .display_name;
        assert!(!okey_platform::fields::shows_nothing(&shown), "{shown:?}");
    }

    // Right-to-left text and its direction marks are names like any other.
    let arabic = client
        .sign_in_as_guest(guest_request("g-ok", &device(), "\u{200F}لاعب"))
        .await
        .expect("a right-to-left name");
    assert!(arabic.into_inner().created);
    app.stop().await;
}

/// Names stored before zero-width and blank characters alone counted as empty are mended by
/// migration 0004 into the name the server picks for a guest; a name that shows anything is kept.
#[tokio::test]
async fn names_stored_before_that_show_nothing_are_given_a_guest_name() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let pool = app.pool().await;
    let blank = [
        "\u{3164}",
        " \u{200B}\u{200D} ",
        "\u{2800}",
        "\u{E0020}\u{FE0F}",
        "\u{00A0}\u{3000}",
    ];
    let shown = ["Ayşe", "\u{200B}a", "لاعب\u{200F}"];
    let mut ids = Vec::new();
    for name in blank.iter().chain(&shown) {
        let id = sqlx::types::Uuid::new_v4();
        sqlx::query(
            "INSERT INTO accounts (player_id, kind, display_name) VALUES ($1, 'guest', $2)",
        )
        .bind(id)
        .bind(name)
        .execute(&pool)
        .await
        .unwrap();
        ids.push((id, *name));
    }
    // The migration's own text, run again as it ran at start (it changes only such names).
    sqlx::raw_sql(include_str!(
        "../../../migrations/accounts/0004_names_that_show_nothing.sql"
    ))
    .execute(&pool)
    .await
    .unwrap();
    for (id, name) in ids {
        let now: String =
            sqlx::query_scalar("SELECT display_name FROM accounts WHERE player_id = $1")
                .bind(id)
                .fetch_one(&pool)
                .await
                .unwrap();
        if okey_platform::fields::shows_nothing(name) {
            assert_eq!(
                now,
                format!("Guest-{}", &id.simple().to_string()[..6]),
                "{name:?}"
            );
        } else {
            assert_eq!(now, name, "kept");
        }
    }
    app.stop().await;
}
