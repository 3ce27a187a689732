//! Passwords and tokens never reach the logs: this test binary installs a subscriber that keeps
//! every event at TRACE level (all crates), drives sign-in, upgrade, refresh, reuse and wrong
//! passwords, and looks for the secrets in what was written.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::{TestApp, bearer, guest};
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn passwords_and_tokens_never_reach_the_logs() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();

    let app = TestApp::start(&infra, &[]).await;
    let mut client = app.client().await;
    let password = "pw-Needle-4f1c9e77";
    let g = guest(&mut client).await;
    let guest_session = g.session.unwrap();
    let upgraded = client
        .upgrade_guest(bearer(
            pb::UpgradeGuestRequest {
                request_id: "u1".into(),
                username: "logcheck".into(),
                password: password.into(),
            },
            &guest_session.access_token,
        ))
        .await
        .unwrap()
        .into_inner();
    let mut secrets = vec![
        password.to_owned(),
        guest_session.access_token.clone(),
        guest_session.refresh_token.clone(),
    ];
    let session = upgraded.session.unwrap();
    secrets.push(session.access_token.clone());
    secrets.push(session.refresh_token.clone());
    for wrong in ["pw-Wrong-0001-aaaa", "pw-Wrong-0002-bbbb"] {
        secrets.push(wrong.into());
        let _ = client
            .sign_in(pb::SignInRequest {
                request_id: "s1".into(),
                username: "logcheck".into(),
                password: wrong.into(),
                device_id: String::new(),
            })
            .await
            .unwrap_err();
    }
    let signed_in = client
        .sign_in(pb::SignInRequest {
            request_id: "s2".into(),
            username: "logcheck".into(),
            password: password.into(),
            device_id: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    secrets.push(signed_in.access_token.clone());
    secrets.push(signed_in.refresh_token.clone());
    let refreshed = client
        .refresh_session(pb::RefreshSessionRequest {
            request_id: "r1".into(),
            refresh_token: signed_in.refresh_token.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    secrets.push(refreshed.access_token.clone());
    secrets.push(refreshed.refresh_token.clone());
    // A reuse, a refusal by the auth layer and a bad token are logged too.
    let _ = client
        .refresh_session(pb::RefreshSessionRequest {
            request_id: "r2".into(),
            refresh_token: signed_in.refresh_token.clone(),
        })
        .await
        .unwrap_err();
    let _ = client
        .get_profile(bearer(
            pb::GetProfileRequest {
                name: "players/me".into(),
            },
            &format!("{}x", refreshed.access_token),
        ))
        .await
        .unwrap_err();
    app.stop().await;

    let text = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
    assert!(text.contains("guest upgraded"), "the capture works");
    assert!(text.contains("refresh token reused"), "the capture works");
    assert!(text.contains("sign-in failed"), "the capture works");
    for secret in &secrets {
        // The signature part alone would be enough to replay a token.
        let needle = secret.rsplit('.').next().unwrap_or(secret);
        assert!(
            !text.contains(needle),
            "a secret reached the logs: {needle}"
        );
        assert!(!text.contains(secret.as_str()));
    }
    eprintln!(
        "checked {} secrets against {} bytes of TRACE logs",
        secrets.len(),
        text.len()
    );
}
