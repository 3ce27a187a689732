//! Accounts against real PostgreSQL, Redis and NATS: guests, upgrades, rotating refresh tokens,
//! sign-out, roles, sign-in limits and statistics from table events.

mod common;

use std::time::{Duration, Instant};

use common::{TestApp, bearer, device, guest, reason};
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use tonic::Code;

fn rid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// An UpgradeGuest of the guest of `token` to `username` and `password`, with a new request id.
fn upgrade(username: &str, password: &str, token: &str) -> tonic::Request<pb::UpgradeGuestRequest> {
    bearer(
        pb::UpgradeGuestRequest {
            request_id: rid(),
            username: username.into(),
            password: password.into(),
        },
        token,
    )
}

/// A permanent account `username` with `password`: a guest, upgraded.
async fn permanent(
    client: &mut pb::accounts_service_client::AccountsServiceClient<tonic::transport::Channel>,
    username: &str,
    password: &str,
) {
    let g = guest(client).await;
    client
        .upgrade_guest(upgrade(
            username,
            password,
            &g.session.unwrap().access_token,
        ))
        .await
        .unwrap();
}

/// A RefreshSession of `token` with `request_id`.
fn refresh(token: &str, request_id: &str) -> pb::RefreshSessionRequest {
    pb::RefreshSessionRequest {
        request_id: request_id.to_owned(),
        refresh_token: token.to_owned(),
    }
}

#[tokio::test]
async fn a_guest_upgrades_and_keeps_the_same_player_id() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;

    let device = device();
    let first = client
        .sign_in_as_guest(pb::SignInAsGuestRequest {
            request_id: rid(),
            device_id: device.clone(),
            display_name: "Ayşe".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(first.created);
    let account = first.account.unwrap();
    assert_eq!(account.kind(), pb::AccountKind::Guest);
    let again = client
        .sign_in_as_guest(pb::SignInAsGuestRequest {
            request_id: rid(),
            device_id: device.clone(),
            display_name: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!again.created);
    assert_eq!(
        again.account.unwrap().name,
        account.name,
        "same device, same player"
    );

    // The access token identifies the player to the API.
    let guest_session = first.session.unwrap();
    let profile = client
        .get_profile(bearer(
            pb::GetProfileRequest {
                name: "players/me".into(),
            },
            &guest_session.access_token,
        ))
        .await
        .unwrap()
        .into_inner()
        .profile
        .unwrap();
    assert_eq!(profile.name, account.name);
    assert_eq!(profile.display_name, "Ayşe");
    // The token carries the display name, for the services that show the player to others.
    use base64::Engine as _;
    let payload = guest_session.access_token.split('.').nth(1).unwrap();
    let claims: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(claims["name"], "Ayşe");
    let expires = guest_session.access_token_expire_time.unwrap();
    assert_eq!(
        (expires.seconds, expires.nanos),
        (claims["exp"].as_i64().unwrap(), 0),
        "access_token_expire_time is the token's exp exactly"
    );

    let upgraded = client
        .upgrade_guest(upgrade(
            "Ayse_K",
            "correct horse battery",
            &guest_session.access_token,
        ))
        .await
        .unwrap()
        .into_inner();
    let permanent = upgraded.account.unwrap();
    assert_eq!(
        permanent.name, account.name,
        "the player id survives the upgrade"
    );
    assert_eq!(permanent.kind(), pb::AccountKind::Permanent);
    assert_eq!(permanent.username, "ayse_k");

    // The guest's old sessions are over; the password now signs in to the same player.
    let old = client
        .refresh_session(pb::RefreshSessionRequest {
            request_id: rid(),
            refresh_token: guest_session.refresh_token.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(old.code(), Code::Unauthenticated);
    let signed_in = client
        .sign_in(pb::SignInRequest {
            request_id: rid(),
            username: "ayse_k".into(),
            password: "correct horse battery".into(),
            device_id: device.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(signed_in.account.unwrap().name, account.name);

    // The profile follows the player; a second upgrade is refused; the username is taken.
    let token = signed_in.session.unwrap().access_token;
    let after_upgrade = client
        .get_profile(bearer(
            pb::GetProfileRequest {
                name: "players/me".into(),
            },
            &token,
        ))
        .await
        .unwrap()
        .into_inner()
        .profile
        .unwrap();
    assert_eq!(
        after_upgrade.update_time, profile.update_time,
        "an upgrade changes the account, not the profile"
    );
    let updated = client
        .update_profile(bearer(
            pb::UpdateProfileRequest {
                request_id: rid(),
                profile: Some(pb::Profile {
                    name: "players/me".into(),
                    display_name: "Ayşe K".into(),
                    avatar_ref: "avatars/7".into(),
                    update_time: None,
                }),
                update_mask: None,
            },
            &token,
        ))
        .await
        .unwrap()
        .into_inner()
        .profile
        .unwrap();
    assert_eq!(
        (updated.display_name.as_str(), updated.avatar_ref.as_str()),
        ("Ayşe K", "avatars/7")
    );
    let again = client
        .upgrade_guest(upgrade("other_name", "another long password", &token))
        .await
        .unwrap_err();
    assert_eq!(reason(&again), "not_a_guest");
    let other = guest(&mut client).await;
    let taken = client
        .upgrade_guest(upgrade(
            "AYSE_K",
            "another long password",
            &other.session.unwrap().access_token,
        ))
        .await
        .unwrap_err();
    assert_eq!(taken.code(), Code::AlreadyExists);
    app.stop().await;
}

#[tokio::test]
async fn refresh_rotates_and_a_reused_token_revokes_the_family() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;

    let r1 = guest(&mut client).await.session.unwrap().refresh_token;
    let s2 = client
        .refresh_session(refresh(&r1, &rid()))
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    assert_ne!(s2.refresh_token, r1, "a new refresh token on every refresh");

    // A retry of the same rotation (same request id) is not a reuse: it gets a fresh child.
    let rotation = rid();
    let s3 = client
        .refresh_session(refresh(&s2.refresh_token, &rotation))
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    let s3_retry = client
        .refresh_session(refresh(&s2.refresh_token, &rotation))
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    let lost = client
        .refresh_session(refresh(&s3.refresh_token, &rid()))
        .await
        .unwrap_err();
    assert_eq!(
        lost.code(),
        Code::Unauthenticated,
        "the replaced child is void"
    );

    // Presenting a used token again: refused, and the whole family with it.
    let reused = client
        .refresh_session(refresh(&r1, &rid()))
        .await
        .unwrap_err();
    assert_eq!(reused.code(), Code::Unauthenticated);
    assert_eq!(reason(&reused), "refresh_token_reused");
    let after = client
        .refresh_session(refresh(&s3_retry.refresh_token, &rid()))
        .await
        .unwrap_err();
    assert_eq!(after.code(), Code::Unauthenticated, "the family is revoked");
    assert_eq!(reason(&after), "token_invalid");
    app.stop().await;
}

#[tokio::test]
async fn sign_out_ends_one_session_and_everywhere_ends_them_all() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let device = device();
    let sign_in = || pb::SignInAsGuestRequest {
        request_id: rid(),
        device_id: device.clone(),
        display_name: String::new(),
    };
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let s = client
            .sign_in_as_guest(sign_in())
            .await
            .unwrap()
            .into_inner();
        sessions.push(s.session.unwrap().refresh_token);
    }
    let works = |token: &str| pb::RefreshSessionRequest {
        request_id: rid(),
        refresh_token: token.to_owned(),
    };

    client
        .sign_out(pb::SignOutRequest {
            request_id: rid(),
            refresh_token: sessions[0].clone(),
            everywhere: false,
        })
        .await
        .unwrap();
    assert!(client.refresh_session(works(&sessions[0])).await.is_err());
    let second = client
        .refresh_session(works(&sessions[1]))
        .await
        .expect("other sessions go on")
        .into_inner()
        .session
        .unwrap();

    client
        .sign_out(pb::SignOutRequest {
            request_id: rid(),
            refresh_token: second.refresh_token.clone(),
            everywhere: true,
        })
        .await
        .unwrap();
    for token in [&second.refresh_token, &sessions[2]] {
        let e = client.refresh_session(works(token)).await.unwrap_err();
        assert_eq!(e.code(), Code::Unauthenticated);
    }
    app.stop().await;
}

#[tokio::test]
async fn a_player_calling_a_support_rpc_is_denied() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let player = guest(&mut client).await;
    let name = player.account.unwrap().name;
    let session = player.session.unwrap();
    let get = |token: &str| bearer(pb::GetAccountRequest { name: name.clone() }, token);
    let denied = client
        .get_account(get(&session.access_token))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);
    assert_eq!(reason(&denied), "role_required");

    // Given the support role, the next token carries it and the call passes.
    let id = uuid::Uuid::parse_str(name.trim_start_matches("players/")).unwrap();
    sqlx::query("UPDATE accounts SET roles = ARRAY['player', 'support'] WHERE player_id = $1")
        .bind(id)
        .execute(&app.pool().await)
        .await
        .unwrap();
    let support = client
        .refresh_session(pb::RefreshSessionRequest {
            request_id: rid(),
            refresh_token: session.refresh_token,
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    let account = client
        .get_account(get(&support.access_token))
        .await
        .expect("support may read accounts")
        .into_inner()
        .account
        .unwrap();
    assert!(account.roles.contains(&(pb::Role::Support as i32)));
    app.stop().await;
}

#[tokio::test]
async fn a_burst_of_parallel_wrong_passwords_is_limited_like_a_sequence() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    permanent(&mut client, "ayse", "the right password").await;
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..40 {
        let mut c = client.clone();
        calls.spawn(async move {
            c.sign_in(pb::SignInRequest {
                request_id: rid(),
                username: "ayse".into(),
                password: "a wrong password".into(),
                device_id: String::new(),
            })
            .await
            .unwrap_err()
        });
    }
    let (mut checked, mut refused) = (0, 0);
    while let Some(e) = calls.join_next().await {
        match reason(&e.unwrap()).as_str() {
            "invalid_credentials" => checked += 1,
            "too_many_attempts" => refused += 1,
            other => panic!("unexpected {other}"),
        }
    }
    // The account's limit (8 failures) holds however the attempts interleave.
    assert_eq!((checked, refused), (8, 32));
    app.stop().await;
}

#[tokio::test]
async fn repeated_wrong_passwords_are_slowed_then_refused() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    permanent(&mut client, "mehmet", "the right password").await;
    let attempt = |password: &str| pb::SignInRequest {
        request_id: rid(),
        username: "mehmet".into(),
        password: password.into(),
        device_id: String::new(),
    };

    let mut took = Vec::new();
    for _ in 0..8 {
        let started = Instant::now();
        let e = client
            .sign_in(attempt("a wrong password"))
            .await
            .unwrap_err();
        took.push(started.elapsed());
        assert_eq!(e.code(), Code::Unauthenticated);
        assert_eq!(reason(&e), "invalid_credentials");
    }
    eprintln!("wrong-password answers took {took:?}");
    // From the fourth on each waits at least twice as long. Only lower bounds: a loaded machine
    // makes every answer slower, so "the first three answer at once" is the limiter's unit test
    // (`limiter::tests::free_then_slowed_then_refused`), not a wall-clock bound here.
    assert!(took[3] >= Duration::from_millis(200), "{took:?}");
    assert!(took[4] >= Duration::from_millis(400), "{took:?}");
    assert!(took[5] >= Duration::from_millis(800), "{took:?}");

    // Then refused outright, even with the right password, with a time to wait.
    let refused = client
        .sign_in(attempt("the right password"))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted);
    assert_eq!(reason(&refused), "too_many_attempts");
    // An empty username or password is malformed, not an attempt: answered as such even now.
    for (username, password) in [("", "the right password"), ("mehmet", "")] {
        let e = client
            .sign_in(pb::SignInRequest {
                username: username.into(),
                ..attempt(password)
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument);
        assert_eq!(reason(&e), "missing_field");
    }
    use tonic_types::StatusExt;
    let retry = refused
        .get_error_details()
        .retry_info()
        .cloned()
        .expect("RetryInfo");
    assert!(retry.retry_delay.unwrap() > Duration::from_secs(60));
    app.stop().await;
}

#[tokio::test]
async fn new_guests_are_limited_per_client_address_as_the_trusted_proxy_forwards_it() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    // The test calls from loopback, here a trusted proxy: each call counts against the client
    // its x-forwarded-for names.
    let app = TestApp::start(
        &infra,
        &[
            ("OKEY_SIGN_IN__GUESTS_PER_ADDRESS", "3".into()),
            ("OKEY_SIGN_IN__TRUSTED_PROXIES", "127.0.0.0/8, ::1".into()),
        ],
    )
    .await;
    let mut client = app.client().await;
    let from = |client_address: &str, device_id: &str| {
        let mut request = tonic::Request::new(pb::SignInAsGuestRequest {
            request_id: uuid::Uuid::new_v4().to_string(),
            device_id: device_id.to_owned(),
            display_name: String::new(),
        });
        request.metadata_mut().insert(
            "x-forwarded-for",
            format!("203.0.113.66, {client_address}").parse().unwrap(),
        );
        request
    };
    let first_device = device();
    for device_id in [first_device.clone(), device(), device()] {
        let created = client
            .sign_in_as_guest(from("198.51.100.1", &device_id))
            .await
            .expect("within the limit")
            .into_inner();
        assert!(created.created);
    }
    let refused = client
        .sign_in_as_guest(from("198.51.100.1", &device()))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted);
    assert_eq!(reason(&refused), "too_many_attempts");
    use tonic_types::StatusExt;
    let retry = refused
        .get_error_details()
        .retry_info()
        .cloned()
        .expect("RetryInfo");
    assert!(retry.retry_delay.unwrap() > Duration::from_secs(60));
    // A device that has its guest still signs in; another client behind the same proxy, and
    // the left-most entry (written by the client, never believed) does not matter.
    let again = client
        .sign_in_as_guest(from("198.51.100.1", &first_device))
        .await
        .expect("an existing guest is never limited")
        .into_inner();
    assert!(!again.created);
    client
        .sign_in_as_guest(from("198.51.100.2", &device()))
        .await
        .expect("another client address has its own count");
    app.stop().await;
}

/// Refreshes `token` once more: whether it still gives a session (the code otherwise).
async fn still_refreshes(
    client: &mut pb::accounts_service_client::AccountsServiceClient<tonic::transport::Channel>,
    token: &str,
) -> Result<(), Code> {
    match client.refresh_session(refresh(token, &rid())).await {
        Ok(_) => Ok(()),
        Err(e) => {
            assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");
            Err(e.code())
        }
    }
}

#[tokio::test]
async fn an_upgrade_racing_refreshes_and_guest_sign_ins_leaves_no_guest_session_alive() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    for round in 0..4 {
        let device_id = device();
        let sign_in = |client: &mut pb::accounts_service_client::AccountsServiceClient<_>| {
            let mut client = client.clone();
            let device_id = device_id.clone();
            async move {
                client
                    .sign_in_as_guest(pb::SignInAsGuestRequest {
                        request_id: rid(),
                        device_id,
                        display_name: String::new(),
                    })
                    .await
            }
        };
        let first = sign_in(&mut client).await.unwrap().into_inner();
        let mut refresh_tokens = vec![first.session.clone().unwrap().refresh_token];
        for _ in 0..5 {
            let s = sign_in(&mut client).await.unwrap().into_inner();
            refresh_tokens.push(s.session.unwrap().refresh_token);
        }
        let access = first.session.unwrap().access_token;
        // The upgrade, each session's refresh and more guest sign-ins of the device, at once.
        let mut calls = tokio::task::JoinSet::new();
        let mut c = client.clone();
        let username = format!("racer{round}{}", &rid()[..8]);
        calls.spawn(async move {
            c.upgrade_guest(upgrade(&username, "a long enough password", &access))
                .await
                .map(|r| (true, r.into_inner().session.unwrap().refresh_token))
        });
        for token in &refresh_tokens {
            let (mut c, token) = (client.clone(), token.clone());
            calls.spawn(async move {
                c.refresh_session(refresh(&token, &rid()))
                    .await
                    .map(|r| (false, r.into_inner().session.unwrap().refresh_token))
            });
        }
        for _ in 0..4 {
            let call = sign_in(&mut client);
            calls.spawn(async move {
                call.await
                    .map(|r| (false, r.into_inner().session.unwrap().refresh_token))
            });
        }
        let mut upgraded = None;
        let mut guest_era = refresh_tokens.clone();
        while let Some(answer) = calls.join_next().await {
            match answer.unwrap() {
                Ok((true, token)) => upgraded = Some(token),
                Ok((false, token)) => guest_era.push(token),
                Err(e) => assert!(
                    matches!(
                        (e.code(), reason(&e).as_str()),
                        (Code::Unauthenticated, "token_invalid")
                            | (Code::PermissionDenied, "not_a_guest")
                    ),
                    "round {round}: a race answered {e:?}"
                ),
            }
        }
        let upgraded = upgraded.expect("the upgrade succeeds");
        // Every session the guest had or got during the race is over; the upgrade's is not.
        for token in &guest_era {
            assert!(
                still_refreshes(&mut client, token).await.is_err(),
                "round {round}: a guest session outlived the upgrade"
            );
        }
        still_refreshes(&mut client, &upgraded)
            .await
            .expect("the upgrade's own session");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_sign_out_everywhere_racing_refreshes_leaves_no_session_alive() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    for round in 0..4 {
        let device_id = device();
        let mut tokens = Vec::new();
        for _ in 0..6 {
            let s = client
                .sign_in_as_guest(pb::SignInAsGuestRequest {
                    request_id: rid(),
                    device_id: device_id.clone(),
                    display_name: String::new(),
                })
                .await
                .unwrap()
                .into_inner();
            tokens.push(s.session.unwrap().refresh_token);
        }
        let mut calls = tokio::task::JoinSet::new();
        let (mut c, first) = (client.clone(), tokens[0].clone());
        calls.spawn(async move {
            c.sign_out(pb::SignOutRequest {
                request_id: rid(),
                refresh_token: first,
                everywhere: true,
            })
            .await
            .map(|_| None)
        });
        // The other sessions refresh, and the first one too (a sign-out racing its own refresh).
        for token in &tokens {
            let (mut c, token) = (client.clone(), token.clone());
            calls.spawn(async move {
                c.refresh_session(refresh(&token, &rid()))
                    .await
                    .map(|r| Some(r.into_inner().session.unwrap().refresh_token))
            });
        }
        let mut issued = tokens.clone();
        while let Some(answer) = calls.join_next().await {
            match answer.unwrap() {
                Ok(Some(token)) => issued.push(token),
                Ok(None) => {}
                Err(e) => assert_eq!(
                    (e.code(), reason(&e).as_str()),
                    (Code::Unauthenticated, "token_invalid"),
                    "round {round}: a race answered {e:?}"
                ),
            }
        }
        for token in &issued {
            assert!(
                still_refreshes(&mut client, token).await.is_err(),
                "round {round}: a session outlived the sign-out everywhere"
            );
        }
    }
    app.stop().await;
}

/// `player`'s statistics as `token`'s holder reads them.
async fn statistics(
    client: &mut pb::accounts_service_client::AccountsServiceClient<tonic::transport::Channel>,
    player: &str,
    token: &str,
) -> pb::Statistics {
    client
        .get_statistics(bearer(
            pb::GetStatisticsRequest {
                name: format!("{player}/statistics"),
            },
            token,
        ))
        .await
        .unwrap()
        .into_inner()
        .statistics
        .unwrap()
}

/// A two-player match of one hand at table `t1` as the table service publishes it (the public
/// envelopes, in table order, `e3` sent twice), and the `hand_ended` envelope alone: `a` opens
/// with pairs and goes out, `b` is charged a penalty.
fn one_hand_match(a_name: &str, b_name: &str) -> (Vec<(&'static str, String)>, String) {
    let envelope = |event: String| {
        format!(
            r#"{{"table":"tables/t1","version":1,"event_id":"e","time":"2026-01-01T00:00:00Z","event":{{"shown":"public","event":{event}}}}}"#
        )
    };
    let played = |engine: &str| {
        envelope(format!(
            r#"{{"type":"played","hand_number":1,"event":{engine}}}"#
        ))
    };
    let hand_ended = envelope(
        r#"{"type":"hand_ended","hand_number":1,"end":{"outcome":"finished","winner":0,"multiplier":2,"scores":[-404,150,80,30]},"result":{"outcome":"finished","winner":0,"penalties":[0,101,0,0],"scores":[-404,150,80,30]},"totals":[-404,251,80,30],"seed":"00","racks":[[],[],[],[]]}"#.to_string(),
    );
    let events = vec![
        (
            "e0",
            envelope(format!(
                r#"{{"type":"table_created","rules":{},"seats":["{a_name}","{b_name}",null,null]}}"#,
                serde_json::to_string(&okey_rules::Preset::Classic.rules()).unwrap()
            )),
        ),
        (
            "e1",
            played(r#"{"type":"hand_opened","seat":0,"kind":"pairs","amount":5,"melds":[]}"#),
        ),
        (
            "e2",
            played(
                r#"{"type":"penalty_charged","id":0,"seat":1,"points":101,"reason":"discard_okey"}"#,
            ),
        ),
        ("e3", hand_ended.clone()),
        ("e3", hand_ended.clone()),
        (
            "e4",
            envelope(r#"{"type":"seat_joined","seat":2}"#.to_string()),
        ),
        (
            "e5",
            envelope(r#"{"type":"match_ended","totals":[0,0,0,0],"winners":[0,2]}"#.to_string()),
        ),
    ];
    (events, hand_ended)
}

#[tokio::test]
async fn statistics_follow_table_events_once() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let a = guest(&mut client).await;
    let b = guest(&mut client).await;
    let (a_name, b_name) = (a.account.unwrap().name, b.account.unwrap().name);
    let token = a.session.unwrap().access_token;

    // Publish as the table service's outbox does: `<prefix>.table.<table>.events`, the event
    // as the public sees it in the service's envelope, with its event id.
    let nats = async_nats::connect(&infra.nats_url).await.unwrap();
    let js = async_nats::jetstream::new(nats);
    let prefix = &app.settings.nats.subject_prefix;
    let subject = format!("{prefix}.table.t1.events");
    // The stream belongs to the table service; make it as that service does.
    js.get_or_create_stream(async_nats::jetstream::stream::Config {
        name: format!(
            "{}_TABLE_EVENTS",
            prefix.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
        ),
        subjects: vec![format!("{prefix}.table.>")],
        duplicate_window: Duration::from_secs(okey_platform::settings::NATS_DUPLICATE_WINDOW_SECS),
        ..Default::default()
    })
    .await
    .unwrap();
    let (events, hand_ended) = one_hand_match(&a_name, &b_name);
    let run = uuid::Uuid::new_v4();
    for (copy, (id, payload)) in events.iter().enumerate() {
        // The envelope names the event; every copy comes with a header of its own, so JetStream
        // keeps the second copy of e3 and the consumer must know it by the envelope's id.
        let payload = payload.replace(r#""event_id":"e""#, &format!(r#""event_id":"{run}-{id}""#));
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", format!("{run}-{id}-copy-{copy}").as_str());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let published = match js
                .publish_with_headers(subject.clone(), headers.clone(), payload.clone().into())
                .await
            {
                Ok(ack) => ack.await.is_ok(),
                Err(_) => false,
            };
            if published {
                break;
            }
            assert!(Instant::now() < deadline, "cannot publish {id}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    let deadline = Instant::now() + Duration::from_secs(15);
    let (sa, sb) = loop {
        let sa = statistics(&mut client, &a_name, &token).await;
        let sb = statistics(&mut client, &b_name, &token).await;
        if sa.matches_played == 1 {
            break (sa, sb);
        }
        assert!(
            Instant::now() < deadline,
            "statistics never caught up: {sa:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        (
            sa.hands_played,
            sa.hands_won,
            sa.hands_opened,
            sa.pair_openings
        ),
        (1, 1, 1, 1)
    );
    assert_eq!(sa.mean_hand_score, -404.0);
    assert_eq!((sa.matches_played, sa.matches_won), (1, 1));
    assert_eq!((sb.hands_played, sb.hands_won, sb.hands_opened), (1, 0, 0));
    assert_eq!(sb.mean_hand_score, 251.0, "end score plus the penalty");
    assert_eq!((sb.matches_played, sb.matches_won), (1, 0));

    // The consumer itself ignores an event id it has counted, whatever JetStream does.
    let pool = app.pool().await;
    let again = accounts::statistics::apply(
        &pool,
        &format!("{run}-e3"),
        "t1",
        None,
        hand_ended.as_bytes(),
    )
    .await
    .unwrap();
    assert_eq!(
        again,
        accounts::statistics::Handled::Duplicate,
        "an event id already counted is not counted again"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_retried_guest_sign_in_is_the_same_player_with_a_new_session_and_the_first_created() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let device = device();
    let sign_in = |request_id: &str| pb::SignInAsGuestRequest {
        request_id: request_id.to_owned(),
        device_id: device.clone(),
        display_name: String::new(),
    };

    let first_id = rid();
    let first = client
        .sign_in_as_guest(sign_in(&first_id))
        .await
        .unwrap()
        .into_inner();
    let retry = client
        .sign_in_as_guest(sign_in(&first_id))
        .await
        .unwrap()
        .into_inner();
    assert!(first.created);
    assert!(retry.created, "a retry answers `created` as the first call");
    assert_eq!(retry.account, first.account, "the same player");
    let (s1, s2) = (first.session.unwrap(), retry.session.unwrap());
    assert_ne!(s1.refresh_token, s2.refresh_token, "a new session");
    // Its own tokens, both of them, even within the second of the first (the token's jti).
    assert_ne!(s1.access_token, s2.access_token, "a new access token");
    // An existing guest's display name is ignored, so one no new guest could take is no refusal.
    let later = client
        .sign_in_as_guest(pb::SignInAsGuestRequest {
            display_name: "x".repeat(30),
            ..sign_in(&rid())
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!later.created, "another sign-in did not create the guest");
    assert_eq!(later.account, first.account);
    // Every session works (none replaced another).
    for token in [s1.refresh_token, s2.refresh_token] {
        client
            .refresh_session(pb::RefreshSessionRequest {
                request_id: rid(),
                refresh_token: token,
            })
            .await
            .expect("each sign-in's session works");
    }

    // Once upgraded, the device alone no longer signs in: no way around the password.
    client
        .upgrade_guest(upgrade(
            "device_owner",
            "correct horse battery",
            &later.session.unwrap().access_token,
        ))
        .await
        .unwrap();
    for request_id in [first_id, rid()] {
        let refused = client
            .sign_in_as_guest(sign_in(&request_id))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::PermissionDenied);
        assert_eq!(reason(&refused), "not_a_guest");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_retried_upgrade_signs_in_again_only_with_the_same_username_and_password() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let g = guest(&mut client).await;
    let name = g.account.unwrap().name;
    let token = g.session.unwrap().access_token;
    let upgrade = |request_id: &str, username: &str, password: &str| {
        bearer(
            pb::UpgradeGuestRequest {
                request_id: request_id.to_owned(),
                username: username.to_owned(),
                password: password.to_owned(),
            },
            &token,
        )
    };

    let id = rid();
    let first = client
        .upgrade_guest(upgrade(&id, "Selin_Y", "correct horse battery"))
        .await
        .unwrap()
        .into_inner();
    let retry = client
        .upgrade_guest(upgrade(&id, " selin_y ", "correct horse battery"))
        .await
        .expect("a retry of the upgrade")
        .into_inner();
    assert_eq!(retry.account, first.account);
    assert_eq!(retry.account.as_ref().unwrap().name, name);
    assert_eq!(retry.account.unwrap().username, "selin_y");
    assert_ne!(
        retry.session.unwrap().refresh_token,
        first.session.unwrap().refresh_token,
        "a new session"
    );
    for (request_id, username, password) in [
        (id.as_str(), "selin_y", "a wrong password!"),
        (id.as_str(), "other_name", "correct horse battery"),
        (&rid(), "selin_y", "correct horse battery"),
    ] {
        let refused = client
            .upgrade_guest(upgrade(request_id, username, password))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::PermissionDenied);
        assert_eq!(reason(&refused), "not_a_guest");
    }
    // Usernames are not case-sensitive and surrounding spaces do not count.
    let signed_in = client
        .sign_in(pb::SignInRequest {
            request_id: rid(),
            username: "  SELIN_Y ".into(),
            password: "correct horse battery".into(),
            device_id: String::new(),
        })
        .await
        .expect("the username in another case")
        .into_inner();
    assert_eq!(signed_in.account.unwrap().name, name);
    app.stop().await;
}

#[tokio::test]
async fn a_retried_refresh_is_a_reuse_once_its_new_token_was_used() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let r1 = guest(&mut client).await.session.unwrap().refresh_token;
    let rotation = rid();
    let s2 = client
        .refresh_session(refresh(&r1, &rotation))
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    // The client got its answer and used it.
    let s3 = client
        .refresh_session(refresh(&s2.refresh_token, &rid()))
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    // The first rotation sent again with its request id is no lost answer any more: a reuse.
    let reused = client
        .refresh_session(refresh(&r1, &rotation))
        .await
        .unwrap_err();
    assert_eq!(reused.code(), Code::Unauthenticated);
    assert_eq!(reason(&reused), "refresh_token_reused");
    let after = client
        .refresh_session(refresh(&s3.refresh_token, &rid()))
        .await
        .unwrap_err();
    assert_eq!(reason(&after), "token_invalid", "the chain is ended");
    app.stop().await;
}

#[tokio::test]
async fn a_retried_profile_update_returns_the_first_answer_and_changes_nothing() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let token = guest(&mut client).await.session.unwrap().access_token;
    let update = |request_id: &str, display_name: &str| {
        bearer(
            pb::UpdateProfileRequest {
                request_id: request_id.to_owned(),
                profile: Some(pb::Profile {
                    name: "players/me".into(),
                    display_name: display_name.to_owned(),
                    avatar_ref: format!("avatars/{display_name}"),
                    update_time: None,
                }),
                update_mask: None,
            },
            &token,
        )
    };

    let late = rid();
    let first = client
        .update_profile(update(&late, "Ayşe"))
        .await
        .unwrap()
        .into_inner()
        .profile
        .unwrap();
    let newer = client
        .update_profile(update(&rid(), "Ayşe K"))
        .await
        .unwrap()
        .into_inner()
        .profile
        .unwrap();
    // A late retry of the first change: its first answer, and the newer change stays.
    let retry = client
        .update_profile(update(&late, "Ayşe"))
        .await
        .unwrap()
        .into_inner()
        .profile
        .unwrap();
    assert_eq!(retry, first, "the first answer, update time included");
    let now = client
        .get_profile(bearer(
            pb::GetProfileRequest {
                name: "players/me".into(),
            },
            &token,
        ))
        .await
        .unwrap()
        .into_inner()
        .profile
        .unwrap();
    assert_eq!(now, newer, "the retry changed nothing");
    assert_eq!(now.display_name, "Ayşe K");
    app.stop().await;
}

/// A stuck consumer still shows its lag: what waits is asked of JetStream every few seconds
/// (`table_events::watch_lag`), not only counted from deliveries, of which a stuck consumer gets
/// none. Five events wait for a durable consumer that reads nothing.
#[tokio::test]
async fn a_consumer_s_lag_counts_what_waits_even_when_nothing_is_delivered() {
    use okey_platform::table_events::{self, Durable};
    use okey_platform::telemetry::ConsumerLag;

    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let js = async_nats::jetstream::new(async_nats::connect(&infra.nats_url).await.unwrap());
    let prefix = format!("lagtest{}", uuid::Uuid::new_v4().simple());
    let name = format!("{prefix}_TABLE_EVENTS");
    let stream = js
        .get_or_create_stream(async_nats::jetstream::stream::Config {
            name: name.clone(),
            subjects: vec![format!("{prefix}.table.>")],
            ..Default::default()
        })
        .await
        .unwrap();
    let subject = table_events::public_subject(&prefix);
    table_events::durable_consumer(
        &stream,
        &Durable {
            name: "lag-watch",
            filter_subject: subject.clone(),
            max_ack_pending: 1,
            ack_wait: Duration::from_secs(30),
        },
    )
    .await
    .unwrap();
    for table in 0..5 {
        js.publish(format!("{prefix}.table.t{table}.events"), "{}".into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let lag = ConsumerLag::new("okey.test.lag");
    assert_eq!(
        lag.events(),
        0,
        "nothing delivered, nothing counted from deliveries"
    );
    let watch = tokio::spawn(table_events::watch_lag(
        js.clone(),
        subject,
        "lag-watch",
        lag.clone(),
    ));
    let started = Instant::now();
    while lag.events() != 5 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the lag never showed the 5 waiting events: {}",
            lag.events()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    watch.abort();
    js.delete_stream(&name).await.unwrap();
}

#[tokio::test]
async fn statistics_count_a_tables_events_in_version_order_whatever_order_they_come_in() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let a = guest(&mut client).await;
    let b = guest(&mut client).await;
    let (a_name, b_name) = (a.account.unwrap().name, b.account.unwrap().name);
    let (events, _) = one_hand_match(&a_name, &b_name);
    // Versions 1..=6 (e3's second copy is the same version 4).
    let versions = [1, 2, 3, 4, 4, 5, 6];
    let pool = app.pool().await;
    let table = format!("t-{}", uuid::Uuid::new_v4());
    let run = uuid::Uuid::new_v4();
    let apply = |i: usize, id_suffix: &str| {
        let pool = pool.clone();
        let table = table.clone();
        let (id, payload) = events[i].clone();
        let version = versions[i];
        let id = format!("{run}-{id}{id_suffix}");
        async move {
            accounts::statistics::apply(&pool, &id, &table, Some(version), payload.as_bytes())
                .await
                .unwrap()
        }
    };
    use accounts::statistics::Handled::{Counted, Duplicate, Early};
    // The hand's end and the penalty before it come before the opening; the match's end before
    // the seat event: each waits for the versions ahead of it.
    assert_eq!(apply(0, "").await, Counted, "version 1");
    assert_eq!(apply(3, "").await, Early, "version 4");
    assert_eq!(apply(2, "").await, Early, "version 3");
    assert_eq!(apply(6, "").await, Early, "version 6");
    assert_eq!(apply(1, "").await, Counted, "version 2, then 3 and 4 kept");
    assert_eq!(
        apply(4, "-again").await,
        Duplicate,
        "version 4 again, another id"
    );
    assert_eq!(apply(5, "").await, Counted, "version 5, then 6 kept");
    assert_eq!(apply(6, "").await, Duplicate, "its id was seen");
    let left: i64 =
        sqlx::query_scalar("SELECT count(*) FROM early_table_events WHERE table_id = $1")
            .bind(&table)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(left, 0, "every kept event was counted");

    // The same statistics as in table order (`statistics_follow_table_events_once`).
    let token = a.session.unwrap().access_token;
    let sa = statistics(&mut client, &a_name, &token).await;
    let sb = statistics(&mut client, &b_name, &token).await;
    assert_eq!(
        (
            sa.hands_played,
            sa.hands_won,
            sa.hands_opened,
            sa.pair_openings
        ),
        (1, 1, 1, 1)
    );
    assert_eq!((sa.matches_played, sa.matches_won), (1, 1));
    assert_eq!(sb.mean_hand_score, 251.0, "the penalty counted in its hand");
    assert_eq!((sb.matches_played, sb.matches_won), (1, 0));
    app.stop().await;
}
