//! Helpers for the accounts tests: an in-process service on a free port against the real
//! infrastructure, clients, and metadata with tokens.

#![allow(dead_code)] // Each test binary uses a different part.

use std::time::{Duration, Instant};

use okey_platform::testing::TestInfra;
use okey_platform::{ServiceKind, Settings};
use okey_proto::v1 as pb;
use okey_proto::v1::accounts_service_client::AccountsServiceClient;
use tonic::transport::Channel;

/// A running accounts service.
pub struct TestApp {
    pub port: u16,
    pub settings: Settings,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl TestApp {
    /// Starts the service with the test settings plus `extra` `OKEY_…` variables.
    pub async fn start(infra: &TestInfra, extra: &[(&str, String)]) -> TestApp {
        let mut env = infra.env_for(ServiceKind::Accounts, 0);
        env.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
        let settings =
            Settings::from_sources(ServiceKind::Accounts, None, env).expect("valid settings");
        Self::start_with(settings).await
    }

    /// Starts the service with these settings (port 0 picks a free one).
    pub async fn start_with(mut settings: Settings) -> TestApp {
        settings.server.port = 0;
        let app = accounts::startup::Application::build(&settings)
            .await
            .expect("the service starts");
        let port = app.local_addr().port();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            app.run_until_stopped(async {
                let _ = stopped.await;
            })
            .await
            .expect("clean stop");
        });
        TestApp {
            port,
            settings,
            stop: Some(stop),
            server: Some(server),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub async fn client(&self) -> AccountsServiceClient<Channel> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match Channel::from_shared(self.url()).unwrap().connect().await {
                Ok(channel) => return AccountsServiceClient::new(channel),
                Err(e) if Instant::now() > deadline => panic!("cannot connect: {e}"),
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    pub async fn pool(&self) -> sqlx::PgPool {
        sqlx::PgPool::connect(self.settings.database.url.expose())
            .await
            .expect("database")
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            server.await.expect("server task");
        }
    }
}

/// `message` with `authorization: Bearer <token>`.
pub fn bearer<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ASCII token"),
    );
    request
}

/// A fresh device id.
pub fn device() -> String {
    format!("device-{}", uuid::Uuid::new_v4())
}

/// Signs in a new guest; returns the response.
pub async fn guest(client: &mut AccountsServiceClient<Channel>) -> pb::SignInAsGuestResponse {
    client
        .sign_in_as_guest(pb::SignInAsGuestRequest {
            request_id: uuid::Uuid::new_v4().to_string(),
            device_id: device(),
            display_name: String::new(),
        })
        .await
        .expect("guest sign-in")
        .into_inner()
}

/// The `reason` of a status's ErrorInfo.
pub fn reason(status: &tonic::Status) -> String {
    use tonic_types::StatusExt;
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_default()
}
