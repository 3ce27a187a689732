//! The tool's side of the platform's APIs: channels whose calls are client spans, a bearer token
//! on a request, a refused call said so a person knows what to do, and access tokens minted
//! with the local development signing key (`make run` writes it into `.run/`) for the demo's
//! operator and for `okeyctl token`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use okey_proto::v1 as pb;
use okey_telemetry::{TracedChannel, traced};
use tonic::transport::Endpoint;
use tonic::{Code, Request, Status};

/// `host:port` of a URL, as messages name a service.
pub fn host_port(url: &str) -> &str {
    url.split_once("://")
        .map_or(url, |(_, rest)| rest)
        .trim_end_matches('/')
}

/// Signs a token for `subject` with `roles`, valid for `ttl`, with the PEM key, choosing among
/// the keys accounts publishes (and still signs with) the one this key's signature verifies
/// with; issuer and audience are the ones accounts publishes.
pub fn mint_token(
    pem: &[u8],
    published: &pb::ListPublicKeysResponse,
    ttl: Duration,
    subject: &str,
    roles: &[&str],
) -> Result<String> {
    let key = EncodingKey::from_ed_pem(pem)
        .map_err(|_| anyhow!("the signing key is not a PKCS#8 Ed25519 private key in PEM"))?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .context("the clock is before 1970")?
        .as_secs();
    let claims = serde_json::json!({
        "sub": subject,
        "roles": roles,
        "iss": published.issuer,
        "aud": published.audience,
        "iat": now,
        "nbf": now.saturating_sub(1),
        "exp": now + ttl.as_secs(),
    });
    let mut validation = Validation::new(Algorithm::EdDSA);
    validation.set_issuer(&[&published.issuer]);
    validation.set_audience(&[&published.audience]);
    for candidate in published.keys.iter().filter(|k| k.retire_time.is_none()) {
        let Ok(decoding) = DecodingKey::from_ed_components(&candidate.x) else {
            continue;
        };
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(candidate.kid.clone());
        let token = jsonwebtoken::encode(&header, &claims, &key).context("cannot sign")?;
        if jsonwebtoken::decode::<serde_json::Value>(&token, &decoding, &validation).is_ok() {
            return Ok(token);
        }
    }
    bail!(
        "the accounts service does not sign with this key (none of the {} key(s) it publishes \
         verifies its signature), so the other services would refuse a token made with it",
        published.keys.len()
    )
}

/// `message` with `authorization: Bearer <token>`.
pub fn authorized<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    if let Ok(value) = format!("Bearer {token}").parse() {
        request.metadata_mut().insert("authorization", value);
    }
    request
}

/// A channel to `service` at `url` whose every call is a client span (exported when
/// `okeyctl demo` runs with `OKEY_TELEMETRY__OTLP_ENDPOINT`) carrying its `traceparent`.
pub async fn connect(service: &str, url: &str) -> Result<TracedChannel> {
    let channel = endpoint(url)?.connect().await.map_err(|e| {
        // On this machine, where `make run` starts the services.
        let hint = if okey_platform::auth::is_loopback(url) {
            let moved =
                crate::local::local_port_var(service).map_or_else(String::new, |(var, _)| {
                    format!(" (on moved ports, export the same {var} as the run, or pass its URL)")
                });
            format!("run `make run` first{moved}")
        } else {
            "check the URL and that the service runs and is reachable there".to_owned()
        };
        anyhow::Error::new(NotAnswering(format!(
            "the {service} service at {} is not answering ({e}): {hint}",
            host_port(url)
        )))
    })?;
    Ok(traced(channel, url))
}

/// [`connect`] without connecting now: the first call connects, and a service that is not
/// answering fails that call with UNAVAILABLE (which `okeyctl demo` waits out).
pub fn connect_lazy(url: &str) -> Result<TracedChannel> {
    Ok(traced(endpoint(url)?.connect_lazy(), url))
}

fn endpoint(url: &str) -> Result<Endpoint> {
    // `127.0.0.1:50053` parses as a URI with no scheme and then never connects.
    if !url.contains("://") {
        bail!("`{url}` has no scheme: give the URL as http://{url} (or https:// for TLS)");
    }
    Ok(Endpoint::from_shared(url.to_owned())
        .map_err(|_| anyhow!("`{url}` is not a URL (for example http://127.0.0.1:50053)"))?
        .connect_timeout(Duration::from_secs(3))
        .timeout(Duration::from_secs(30)))
}

/// A service that did not answer [`connect`] (an error a caller may wait out).
#[derive(Debug)]
pub struct NotAnswering(String);

impl std::fmt::Display for NotAnswering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotAnswering {}

/// A call a service refused (see [`refused`]): said for a person, with the status kept for
/// a caller to decide whether to try again.
#[derive(Debug)]
pub struct Refused {
    /// What the service answered.
    pub status: Status,
    said: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.said)
    }
}

impl std::error::Error for Refused {}

/// A refused call, said so a person knows what to do.
pub fn refused(call: &str, url: &str, status: &Status) -> anyhow::Error {
    let hint = match status.code() {
        Code::Unavailable => {
            " — is the service running? (`make run`; on moved ports export the same \
             OKEY_<SERVICE>_PORT as the run, or pass its URL)"
        }
        Code::Unauthenticated => {
            " — the service does not accept the token (expired, or from another platform): get a \
             new one"
        }
        Code::PermissionDenied if status.message().contains("role") => {
            " — the token lacks the role this call needs"
        }
        _ => "",
    };
    anyhow::Error::new(Refused {
        status: status.clone(),
        said: format!(
            "{call} at {} failed: {:?}: {}{hint}",
            host_port(url),
            status.code(),
            status.message()
        ),
    })
}
