//! Service tokens by client credentials: the configured client with its secret gets a token whose
//! only role is `matchmaker` and whose subject is the client id; an unknown client or a wrong
//! secret is UNAUTHENTICATED (`invalid_client_credentials`), an empty one INVALID_ARGUMENT
//! (`missing_field`); the platform's `ServiceTokens` keeps
//! one token while it is fresh and asks for another once a callee refused it.

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::{TestApp, reason};
use okey_platform::Secret;
use okey_platform::service_token::{ServiceTokenError, ServiceTokens};
use okey_platform::settings::ServiceClientSettings;
use okey_platform::testing::{
    TEST_SERVICE_CLIENT_ID, TEST_SERVICE_CLIENT_SECRET, TestInfra, test_service_clients,
};
use okey_proto::v1 as pb;
use tonic::Code;

fn claims(token: &str) -> serde_json::Value {
    let payload = token.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

#[tokio::test]
async fn the_configured_client_gets_a_matchmaker_token_and_nobody_else_does() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(
        &infra,
        &[
            ("OKEY_TOKENS__SERVICE_CLIENTS", test_service_clients()),
            ("OKEY_TOKENS__SERVICE_TTL_SECS", "600".into()),
        ],
    )
    .await;
    let mut client = app.client().await;
    let issued = client
        .issue_service_token(pb::IssueServiceTokenRequest {
            client_id: TEST_SERVICE_CLIENT_ID.into(),
            client_secret: TEST_SERVICE_CLIENT_SECRET.into(),
        })
        .await
        .expect("issued")
        .into_inner();
    let c = claims(&issued.access_token);
    assert_eq!(c["sub"], TEST_SERVICE_CLIENT_ID);
    assert_eq!(c["roles"], serde_json::json!(["matchmaker"]));
    let lifetime = c["exp"].as_i64().unwrap() - c["iat"].as_i64().unwrap();
    assert_eq!(lifetime, 600);
    let expire_time = issued.expire_time.unwrap();
    assert_eq!(
        (expire_time.seconds, expire_time.nanos),
        (c["exp"].as_i64().unwrap(), 0),
        "expire_time is the token's exp exactly"
    );

    // A wrong credential is UNAUTHENTICATED; a field left out, or text no store holds, is a
    // malformed request, not a wrong credential.
    let unauthenticated = (Code::Unauthenticated, "invalid_client_credentials");
    let missing = (Code::InvalidArgument, "missing_field");
    let invalid_text = (Code::InvalidArgument, "invalid_text");
    for (id, secret, refusal) in [
        (
            TEST_SERVICE_CLIENT_ID,
            "a-wrong-secret-of-some-length",
            unauthenticated,
        ),
        ("someone-else", TEST_SERVICE_CLIENT_SECRET, unauthenticated),
        ("", "", missing),
        (TEST_SERVICE_CLIENT_ID, "", missing),
        ("", TEST_SERVICE_CLIENT_SECRET, missing),
        ("a\0", "b", invalid_text),
        (TEST_SERVICE_CLIENT_ID, "b\0", invalid_text),
    ] {
        let err = client
            .issue_service_token(pb::IssueServiceTokenRequest {
                client_id: id.into(),
                client_secret: secret.into(),
            })
            .await
            .unwrap_err();
        assert_eq!(
            (err.code(), reason(&err).as_str()),
            refusal,
            "{id:?} {secret:?}"
        );
    }

    // The caller's side: one token while it is fresh, a new one after it was refused.
    let tokens = ServiceTokens::new(&ServiceClientSettings {
        id: TEST_SERVICE_CLIENT_ID.into(),
        secret: Secret::new(TEST_SERVICE_CLIENT_SECRET.into()),
        accounts_url: app.url(),
    });
    let first = tokens.token().await.expect("a token");
    assert_eq!(tokens.token().await.unwrap(), first, "kept while fresh");
    // Tokens issued within the same second are byte for byte equal: wait until the second of
    // `iat` is over, so a new token is a different one.
    let iat = claims(first.expose())["iat"].as_u64().unwrap();
    while std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        <= iat
    {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tokens.refused(&first).await;
    let second = tokens.token().await.unwrap();
    assert_ne!(second, first, "a refused token is not used again");
    assert_eq!(
        claims(second.expose())["roles"],
        serde_json::json!(["matchmaker"])
    );

    // A wrong secret is an error to retry, not a panic.
    let wrong = ServiceTokens::new(&ServiceClientSettings {
        id: TEST_SERVICE_CLIENT_ID.into(),
        secret: Secret::new("not-the-secret-at-all".into()),
        accounts_url: app.url(),
    });
    assert!(matches!(
        wrong.token().await,
        Err(ServiceTokenError::Issue(_))
    ));
    let unset = ServiceTokens::new(&ServiceClientSettings {
        id: String::new(),
        secret: Secret::new(String::new()),
        accounts_url: app.url(),
    });
    assert!(matches!(
        unset.token().await,
        Err(ServiceTokenError::NotConfigured)
    ));
    app.stop().await;
}
