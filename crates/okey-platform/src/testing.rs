//! For tests that run against the real PostgreSQL, NATS and Redis (`deploy/infra.sh up`, which
//! `make test` runs): where they answer, a fresh database per test, settings for an in-process
//! service and the environment for a spawned service binary.
//!
//! URLs come from `OKEY_TEST_DATABASE_URL`, `OKEY_TEST_NATS_URL` and `OKEY_TEST_REDIS_URL`,
//! defaulting to the ports `deploy/infra.sh` uses, so plain `cargo test` works while the
//! infrastructure is up. When it is down, such tests skip with a message, unless
//! `OKEY_TEST_REQUIRE_INFRA=1` (set by `make test`), where they fail.

use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};

use crate::auth::{Claims, Role};
use crate::settings::{ServiceKind, Settings};

/// A throwaway Ed25519 key made for tests only; [`TestInfra::env_for`] makes every service trust
/// it, so tests can mint tokens without the accounts service. Never configure it anywhere else.
pub const TEST_SIGNING_KEY_PEM: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJi6Ge+J9RqoKbFw5stiulvbi2nz13CYgJYadTl1BfmF
-----END PRIVATE KEY-----";
/// The public half of [`TEST_SIGNING_KEY_PEM`] (JWK `x`).
pub const TEST_PUBLIC_X: &str = "Uhp-VQQKh77uODzvYuRej2naFoy6TYtg6qgH5oRHrkA";
/// The `kid` of the test key.
pub const TEST_KEY_ID: &str = "test-key";

/// The JWKS document trusting the test key (the value of `tokens.public_keys` in tests).
pub fn test_public_keys() -> String {
    format!(
        r#"{{"keys":[{{"kid":"{TEST_KEY_ID}","kty":"OKP","crv":"Ed25519","x":"{TEST_PUBLIC_X}"}}]}}"#
    )
}

/// Claims for `player_id` with `roles`, valid for five minutes for the default issuer and
/// audience.
pub fn test_claims(player_id: &str, roles: &[Role]) -> Claims {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    Claims {
        sub: player_id.to_owned(),
        roles: roles.iter().map(|r| r.as_str().to_owned()).collect(),
        iss: "okey-accounts".to_owned(),
        aud: "okey".to_owned(),
        exp: now + 300,
        nbf: now.saturating_sub(1),
        iat: now,
    }
}

/// Signs `claims` with the test key under `kid` (usually [`TEST_KEY_ID`]).
pub fn sign_test_token(kid: &str, claims: &Claims) -> String {
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some(kid.to_owned());
    let key =
        EncodingKey::from_ed_pem(TEST_SIGNING_KEY_PEM.as_bytes()).expect("the test key parses");
    encode(&header, claims, &key).expect("claims serialize")
}

/// A valid access token for `player_id` with `roles`, signed by the test key.
pub fn test_token(player_id: &str, roles: &[Role]) -> String {
    sign_test_token(TEST_KEY_ID, &test_claims(player_id, roles))
}

/// Set to `1` to make infrastructure tests fail instead of skipping when it is down.
pub const REQUIRE_INFRA_VAR: &str = "OKEY_TEST_REQUIRE_INFRA";

/// Where the test infrastructure answers.
#[derive(Debug, Clone)]
pub struct TestInfra {
    /// A PostgreSQL URL whose role may create databases (its database part is replaced).
    pub database_url: String,
    /// NATS URL.
    pub nats_url: String,
    /// Redis URL.
    pub redis_url: String,
}

static DATABASE_COUNTER: AtomicU32 = AtomicU32::new(0);

impl TestInfra {
    /// The infrastructure named by the environment, or `None` (after saying why) when PostgreSQL
    /// does not answer and [`REQUIRE_INFRA_VAR`] is not set.
    ///
    /// # Panics
    /// When the infrastructure is down and [`REQUIRE_INFRA_VAR`] is set.
    pub fn from_env() -> Option<TestInfra> {
        let var = |name: &str, default: &str| {
            std::env::var(name)
                .ok()
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| default.to_owned())
        };
        let infra = TestInfra {
            database_url: var(
                "OKEY_TEST_DATABASE_URL",
                "postgres://okey:okey@127.0.0.1:55432/postgres",
            ),
            nats_url: var("OKEY_TEST_NATS_URL", "nats://127.0.0.1:54222"),
            redis_url: var("OKEY_TEST_REDIS_URL", "redis://127.0.0.1:56379"),
        };
        let down: Vec<&str> = [
            ("postgres", &infra.database_url),
            ("nats", &infra.nats_url),
            ("redis", &infra.redis_url),
        ]
        .into_iter()
        .filter(|(_, url)| !answers(url))
        .map(|(name, _)| name)
        .collect();
        if down.is_empty() {
            return Some(infra);
        }
        let message = format!(
            "test infrastructure not answering ({}); start it with `deploy/infra.sh up` or `make test`",
            down.join(", ")
        );
        if std::env::var(REQUIRE_INFRA_VAR).is_ok_and(|v| v == "1") {
            panic!("{message}");
        }
        eprintln!("skipped: {message}");
        None
    }

    /// The URL of a database no other test uses (the service creates it at start).
    pub fn unique_database_url(&self, prefix: &str) -> String {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let n = DATABASE_COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("test_{prefix}_{}_{nanos}_{n}", std::process::id());
        match self.database_url.rsplit_once('/') {
            Some((server, _)) => format!("{server}/{name}"),
            None => format!("{}/{name}", self.database_url),
        }
    }

    /// `OKEY_…` variables that point a service at this infrastructure, on `port`, with a database
    /// of its own and NATS subjects and Redis keys under a prefix of its own. The service trusts
    /// the test key ([`test_token`]) and polls no accounts service for keys.
    pub fn env_for(&self, service: ServiceKind, port: u16) -> Vec<(String, String)> {
        let database = self.unique_database_url(service.name());
        let prefix = database.rsplit('/').next().unwrap_or("test").to_owned();
        vec![
            ("OKEY_SERVER__PORT".into(), port.to_string()),
            ("OKEY_SERVER__STARTUP_TIMEOUT_MS".into(), "20000".into()),
            ("OKEY_SERVER__PROBE_INTERVAL_MS".into(), "200".into()),
            ("OKEY_DATABASE__URL".into(), database),
            ("OKEY_DATABASE__MAX_CONNECTIONS".into(), "2".into()),
            ("OKEY_NATS__URL".into(), self.nats_url.clone()),
            ("OKEY_NATS__SUBJECT_PREFIX".into(), prefix.clone()),
            ("OKEY_REDIS__URL".into(), self.redis_url.clone()),
            ("OKEY_REDIS__KEY_PREFIX".into(), prefix),
            ("OKEY_TOKENS__PUBLIC_KEYS".into(), test_public_keys()),
            ("OKEY_TOKENS__KEYS_URL".into(), String::new()),
        ]
    }

    /// Settings for an in-process service on a free port (see [`Self::env_for`]).
    pub fn settings_for(&self, service: ServiceKind) -> Settings {
        Settings::from_sources(service, None, self.env_for(service, 0))
            .expect("test settings are valid")
    }
}

/// A loopback port that was free a moment ago, for a spawned binary.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// True when something accepts TCP connections at the URL's host and port.
fn answers(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or(rest);
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    host_port
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .is_some_and(|addr| TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_databases_differ_and_keep_the_server() {
        let infra = TestInfra {
            database_url: "postgres://u:p@127.0.0.1:1/postgres".into(),
            nats_url: String::new(),
            redis_url: String::new(),
        };
        let a = infra.unique_database_url("table");
        let b = infra.unique_database_url("table");
        assert_ne!(a, b);
        assert!(
            a.starts_with("postgres://u:p@127.0.0.1:1/test_table_"),
            "{a}"
        );
    }

    #[test]
    fn test_settings_parse() {
        let infra = TestInfra {
            database_url: "postgres://u:p@127.0.0.1:1/postgres".into(),
            nats_url: "nats://127.0.0.1:2".into(),
            redis_url: "redis://127.0.0.1:3".into(),
        };
        let settings = infra.settings_for(ServiceKind::Scoring);
        assert_eq!(settings.server.port, 0);
        assert_eq!(settings.nats.url, "nats://127.0.0.1:2");
        assert!(settings.tokens.public_keys.contains(TEST_KEY_ID));
    }

    #[test]
    fn test_tokens_verify_with_the_test_key() {
        let settings = Settings::from_sources(
            ServiceKind::Table,
            None,
            [("OKEY_TOKENS__PUBLIC_KEYS", test_public_keys())],
        )
        .unwrap();
        let verifier = crate::auth::TokenVerifier::new(&settings.auth);
        verifier
            .insert_ed25519_key(TEST_KEY_ID, TEST_PUBLIC_X)
            .unwrap();
        let claims = verifier.verify(&test_token("p1", &[Role::Player])).unwrap();
        assert_eq!(claims.sub, "p1");
    }
}
