//! Tokens that must not pass, and key rotation, against a running accounts service: every forged,
//! stale or misdirected token is refused with UNAUTHENTICATED before a handler runs; a rotated-out
//! key keeps verifying the tokens it signed until they expire; the other services learn the keys
//! from `ListPublicKeys` alone.

mod common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::{TestApp, bearer, guest, reason};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use okey_platform::auth::{Access, AccessTable, AuthLayer, Role};
use okey_platform::testing::{
    TEST_KEY_ID, TEST_PUBLIC_X, TestInfra, sign_test_token, test_claims, test_token,
};
use okey_platform::{ServiceKind, Settings};
use okey_proto::v1 as pb;
use tonic::Code;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn me() -> pb::GetProfileRequest {
    pb::GetProfileRequest {
        name: "players/me".into(),
    }
}

#[tokio::test]
async fn forged_stale_and_misdirected_tokens_are_unauthenticated() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let player = guest(&mut client).await.account.unwrap().name;
    let id = player.trim_start_matches("players/").to_owned();
    let good = test_claims(&id, &[Role::Player]);

    // The test key is trusted: a well-formed token passes, so each refusal below is its flaw.
    client
        .get_profile(bearer(me(), &test_token(&id, &[Role::Player])))
        .await
        .expect("a good token passes");
    // A good token of a staff identity (no account id for a subject) has no `players/me`: not
    // found, not "sign in again".
    let staff = client
        .get_profile(bearer(
            me(),
            &test_token("okeyctl-support", &[Role::Support]),
        ))
        .await
        .unwrap_err();
    assert_eq!(staff.code(), Code::NotFound, "{staff:?}");
    assert!(okey_platform::status::is(
        &staff,
        okey_platform::status::Reason::PlayerNotFound
    ));

    let mut expired = good.clone();
    (expired.iat, expired.nbf, expired.exp) = (now() - 7200, now() - 7200, now() - 3600);
    let mut not_yet = good.clone();
    not_yet.nbf = now() + 3600;
    let mut issuer = good.clone();
    issuer.iss = "someone-else".into();
    let mut audience = good.clone();
    audience.aud = "another-app".into();

    let valid = sign_test_token(TEST_KEY_ID, &good);
    let mut parts: Vec<&str> = valid.split('.').collect();
    let mut admin = good.clone();
    admin.roles = vec!["admin".into()];
    let forged_payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&admin).unwrap());
    parts[1] = &forged_payload;
    let tampered = parts.join(".");

    let none_header = URL_SAFE_NO_PAD.encode(format!(
        r#"{{"alg":"none","typ":"JWT","kid":"{TEST_KEY_ID}"}}"#
    ));
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&good).unwrap());
    let alg_none = format!("{none_header}.{payload}.");

    // The classic confusion attack: HMAC keyed with the public key a verifier holds.
    let mut hs_header = Header::new(Algorithm::HS256);
    hs_header.kid = Some(TEST_KEY_ID.into());
    let public_raw = URL_SAFE_NO_PAD.decode(TEST_PUBLIC_X).unwrap();
    let hs_raw = encode(
        &hs_header,
        &good,
        &EncodingKey::from_secret(&public_raw).unwrap(),
    )
    .unwrap();
    let hs_text = encode(
        &hs_header,
        &good,
        &EncodingKey::from_secret(TEST_PUBLIC_X.as_bytes()).unwrap(),
    )
    .unwrap();

    let cases = [
        ("expired", sign_test_token(TEST_KEY_ID, &expired)),
        ("not yet valid", sign_test_token(TEST_KEY_ID, &not_yet)),
        ("wrong issuer", sign_test_token(TEST_KEY_ID, &issuer)),
        ("wrong audience", sign_test_token(TEST_KEY_ID, &audience)),
        ("unknown kid", sign_test_token("no-such-key", &good)),
        ("tampered", tampered),
        ("alg none", alg_none),
        ("HS256 keyed with the raw public key", hs_raw),
        ("HS256 keyed with the public key text", hs_text),
        ("not a JWT", "hello".into()),
    ];
    for (what, token) in &cases {
        let refused = client
            .get_profile(bearer(me(), token))
            .await
            .expect_err(what);
        assert_eq!(refused.code(), Code::Unauthenticated, "{what}: {refused:?}");
        assert!(
            ["token_invalid", "token_expired"].contains(&reason(&refused).as_str()),
            "{what}: {refused:?}"
        );
    }
    let missing = client.get_profile(me()).await.unwrap_err();
    assert_eq!(missing.code(), Code::Unauthenticated);
    app.stop().await;
}

#[tokio::test]
async fn a_rotated_key_verifies_its_tokens_until_they_expire() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let (old_pem, new_pem) = (
        accounts::keys::generate_pem().unwrap(),
        accounts::keys::generate_pem().unwrap(),
    );
    // One database for the whole story; each phase is the service restarted with other keys.
    let base = infra.env_for(ServiceKind::Accounts, 0);
    let settings = |keys: String| {
        let mut env = base.clone();
        env.push(("OKEY_TOKENS__SIGNING_KEYS_PEM".into(), keys));
        env.push(("OKEY_TOKENS__ACCESS_TTL_SECS".into(), "4".into()));
        env.push(("OKEY_AUTH__LEEWAY_SECS".into(), "0".into()));
        Settings::from_sources(ServiceKind::Accounts, None, env).unwrap()
    };

    // Phase 1: only the old key.
    let app = TestApp::start_with(settings(old_pem.clone())).await;
    let mut client = app.client().await;
    let old_session = guest(&mut client).await.session.unwrap();
    let old_token = old_session.access_token.clone();
    let old_kid = kid(&old_token);
    app.stop().await;

    // Phase 2: the new key signs, the old one is still published.
    let app = TestApp::start_with(settings(format!("{new_pem}{old_pem}"))).await;
    let mut client = app.client().await;
    let keys = client
        .list_public_keys(pb::ListPublicKeysRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(keys.keys.len(), 2);
    assert_eq!(keys.keys[1].kid, old_kid);
    assert!(keys.keys[0].retire_time.is_none() && keys.keys[1].retire_time.is_some());
    let new_token = guest(&mut client).await.session.unwrap().access_token;
    assert_eq!(
        kid(&new_token),
        keys.keys[0].kid,
        "new tokens use the new key"
    );
    assert_ne!(kid(&new_token), old_kid);
    client
        .get_profile(bearer(me(), &old_token))
        .await
        .expect("a token of the old key still works");

    // Another service, holding no secret, learns both keys from ListPublicKeys.
    let mut env = base.clone();
    env.retain(|(k, _)| k != "OKEY_TOKENS__KEYS_URL" && k != "OKEY_TOKENS__PUBLIC_KEYS");
    env.push(("OKEY_TOKENS__KEYS_URL".into(), app.url()));
    env.push(("OKEY_AUTH__LEEWAY_SECS".into(), "0".into()));
    let other = Settings::from_sources(ServiceKind::Table, None, env).unwrap();
    let layer = AuthLayer::from_settings(
        &other,
        AccessTable::new(&[("/okey.v1.TableService/GetTable", Access::SIGNED_IN)]),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while layer.verifier().key_ids().len() < 2 {
        assert!(Instant::now() < deadline, "keys never fetched");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for token in [&old_token, &new_token] {
        let mut headers = http::HeaderMap::new();
        headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
        let caller = layer
            .authorize("/okey.v1.TableService/GetTable", &headers)
            .expect("verified with the published keys")
            .expect("a caller");
        assert!(caller.has_role(Role::Player));
    }

    // Once it expires the old token is refused; the new one goes on.
    let wait = Duration::from_secs(kid_exp(&old_token).saturating_sub(now()) + 1);
    tokio::time::sleep(wait).await;
    let expired = client
        .get_profile(bearer(me(), &old_token))
        .await
        .unwrap_err();
    assert_eq!(expired.code(), Code::Unauthenticated);
    assert_eq!(reason(&expired), "token_expired");
    let fresh = client
        .refresh_session(pb::RefreshSessionRequest {
            request_id: "r1".into(),
            refresh_token: old_session.refresh_token,
        })
        .await
        .expect("refresh tokens outlive key rotation")
        .into_inner()
        .session
        .unwrap();
    assert_eq!(kid(&fresh.access_token), keys.keys[0].kid);
    app.stop().await;

    // Phase 3: the old key is gone; a token it signed would be refused as unknown.
    let app = TestApp::start_with(settings(new_pem)).await;
    let mut client = app.client().await;
    let keys = client
        .list_public_keys(pb::ListPublicKeysRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(keys.keys.len(), 1);
    assert_ne!(keys.keys[0].kid, old_kid);
    app.stop().await;
}

fn claims_of(token: &str) -> serde_json::Value {
    let payload = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

fn kid(token: &str) -> String {
    jsonwebtoken::decode_header(token).unwrap().kid.unwrap()
}

fn kid_exp(token: &str) -> u64 {
    claims_of(token)["exp"].as_u64().unwrap()
}
