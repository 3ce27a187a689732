//! A service's own identity: access tokens that the accounts service issues to it by client
//! credentials (`IssueServiceToken`), kept and renewed here so that every outgoing call carries a
//! valid one. No service but accounts holds a private key: the token is signed there.
//!
//! A token is renewed when a third of its lifetime is left (on the next call that needs it), and
//! dropped at once when the callee refuses it ([`ServiceTokens::refused`]), so the retry asks for a
//! fresh one. A failed issue is an error for the caller to retry, never a panic.

use std::sync::Arc;
use std::time::{Duration, Instant};

use okey_proto::v1::IssueServiceTokenRequest;
use okey_proto::v1::accounts_service_client::AccountsServiceClient;
use tokio::sync::Mutex;

use crate::Secret;
use crate::settings::ServiceClientSettings;

/// Why no service token could be had.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ServiceTokenError {
    /// This process has no `service_client.id`.
    #[error("no service identity is configured (service_client.id)")]
    NotConfigured,
    /// Accounts could not be reached or answered with an error (the message says which).
    #[error("the accounts service did not issue a service token: {0}")]
    Issue(String),
}

#[derive(Clone)]
struct Held {
    token: Secret<String>,
    /// When to ask for a new one (a third of the lifetime before expiry).
    renew_at: Instant,
    expires_at: Instant,
}

struct Inner {
    id: String,
    secret: Secret<String>,
    accounts_url: String,
    held: Mutex<Option<Held>>,
}

/// The service tokens of this process's identity; cheap to clone.
#[derive(Clone)]
pub struct ServiceTokens {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ServiceTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceTokens")
            .field("id", &self.inner.id)
            .finish_non_exhaustive()
    }
}

impl ServiceTokens {
    /// The identity of `settings` (an empty id is allowed here: every call then fails with
    /// [`ServiceTokenError::NotConfigured`]).
    pub fn new(settings: &ServiceClientSettings) -> ServiceTokens {
        ServiceTokens {
            inner: Arc::new(Inner {
                id: settings.id.clone(),
                secret: settings.secret.clone(),
                accounts_url: settings.accounts_url.clone(),
                held: Mutex::new(None),
            }),
        }
    }

    /// The client id.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// A token valid now: the one held, or a new one when it is due for renewal or gone.
    pub async fn token(&self) -> Result<Secret<String>, ServiceTokenError> {
        if self.inner.id.is_empty() {
            return Err(ServiceTokenError::NotConfigured);
        }
        let mut held = self.inner.held.lock().await;
        let now = Instant::now();
        if let Some(h) = held.as_ref()
            && now < h.renew_at
        {
            return Ok(h.token.clone());
        }
        match self.issue().await {
            Ok(fresh) => {
                let token = fresh.token.clone();
                *held = Some(fresh);
                Ok(token)
            }
            // Renewal failed but the old token still has life: use it, try again next call.
            Err(e) => match held.as_ref() {
                Some(h) if now + Duration::from_secs(5) < h.expires_at => {
                    tracing::warn!(error = %e, "service token renewal failed; the current one is still valid");
                    Ok(h.token.clone())
                }
                _ => Err(e),
            },
        }
    }

    /// The callee refused `token` (UNAUTHENTICATED): forget it, so the next call gets a new one.
    pub async fn refused(&self, token: &Secret<String>) {
        let mut held = self.inner.held.lock().await;
        if held.as_ref().is_some_and(|h| h.token == *token) {
            *held = None;
        }
    }

    /// `message` with `authorization: Bearer <service token>`.
    pub async fn request<T>(
        &self,
        message: T,
    ) -> Result<(tonic::Request<T>, Secret<String>), ServiceTokenError> {
        let token = self.token().await?;
        let mut request = tonic::Request::new(message);
        let value = format!("Bearer {}", token.expose())
            .parse()
            .map_err(|_| ServiceTokenError::Issue("the token is not ASCII".into()))?;
        request.metadata_mut().insert("authorization", value);
        Ok((request, token))
    }

    async fn issue(&self) -> Result<Held, ServiceTokenError> {
        let fail = |e: String| ServiceTokenError::Issue(e);
        let endpoint = tonic::transport::Endpoint::from_shared(self.inner.accounts_url.clone())
            .map_err(|e| fail(e.to_string()))?
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(5));
        let channel = endpoint.connect().await.map_err(|e| fail(e.to_string()))?;
        let asked = Instant::now();
        let channel = crate::telemetry::traced(channel, &self.inner.accounts_url);
        let response = AccountsServiceClient::new(channel)
            .issue_service_token(IssueServiceTokenRequest {
                client_id: self.inner.id.clone(),
                client_secret: self.inner.secret.expose().clone(),
            })
            .await
            .map_err(|e| fail(format!("{}: {}", e.code(), e.message())))?
            .into_inner();
        let expire = response
            .expire_time
            .ok_or_else(|| fail("no expire_time".into()))?;
        let now_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs() as i64;
        let lifetime = Duration::from_secs((expire.seconds - now_unix).max(0) as u64);
        tracing::debug!(id = %self.inner.id, lifetime_secs = lifetime.as_secs(), "service token issued");
        Ok(Held {
            token: Secret::new(response.access_token),
            renew_at: asked + lifetime * 2 / 3,
            expires_at: asked + lifetime,
        })
    }
}
