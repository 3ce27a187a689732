//! For tests that run against the real PostgreSQL, NATS and Redis (`deploy/infra.sh up`, which
//! `make test` runs): where they answer, a fresh database per test, settings for an in-process
//! service and the environment for a spawned service binary.
//!
//! URLs come from `OKEY_TEST_DATABASE_URL`, `OKEY_TEST_NATS_URL` and `OKEY_TEST_REDIS_URL`,
//! defaulting to the ports `deploy/infra.sh` uses (moved, as for it, by `OKEY_PG_PORT`,
//! `OKEY_NATS_PORT` and `OKEY_REDIS_PORT`), so plain `cargo test` works while the
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

/// The display name [`test_claims`] puts in a token for `player_id`: `name of` and the id's first
/// 16 characters, a display name as accounts would sign one (at most 24 characters; a longer one
/// the authentication layer leaves out).
pub fn test_display_name(player_id: &str) -> String {
    let id: String = player_id.chars().take(16).collect();
    format!("name of {id}")
}

/// Claims for `player_id` with `roles`, valid for five minutes for the default issuer and
/// audience, with the display name [`test_display_name`].
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
        name: Some(test_display_name(player_id)),
        jti: None,
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
        // Without the URLs, the ports `deploy/infra.sh` uses: moved by the same variables.
        let port = |name: &str, default: &str| var(name, default);
        let infra = TestInfra {
            database_url: var(
                "OKEY_TEST_DATABASE_URL",
                &format!(
                    "postgres://okey:okey@127.0.0.1:{}/postgres",
                    port("OKEY_PG_PORT", "55432")
                ),
            ),
            nats_url: var(
                "OKEY_TEST_NATS_URL",
                &format!("nats://127.0.0.1:{}", port("OKEY_NATS_PORT", "54222")),
            ),
            redis_url: var(
                "OKEY_TEST_REDIS_URL",
                &format!("redis://127.0.0.1:{}", port("OKEY_REDIS_PORT", "56379")),
            ),
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
        // The parameters (`?sslmode=…`) stay.
        let (url, parameters) = match self.database_url.split_once('?') {
            Some((url, parameters)) => (url, format!("?{parameters}")),
            None => (self.database_url.as_str(), String::new()),
        };
        match url.rsplit_once('/') {
            Some((server, _)) => format!("{server}/{name}{parameters}"),
            None => format!("{url}/{name}{parameters}"),
        }
    }

    /// `OKEY_…` variables that point a service at this infrastructure, on `port`, with a database
    /// of its own and NATS subjects and Redis keys under a prefix of its own. The service trusts
    /// the test key ([`test_token`]) and polls no accounts service for keys.
    pub fn env_for(&self, service: ServiceKind, port: u16) -> Vec<(String, String)> {
        let database = self.unique_database_url(service.name());
        let prefix = database
            .split('?')
            .next()
            .and_then(|url| url.rsplit('/').next())
            .unwrap_or("test")
            .to_owned();
        vec![
            ("OKEY_SERVER__PORT".into(), port.to_string()),
            ("OKEY_SERVER__STARTUP_TIMEOUT_MS".into(), "20000".into()),
            ("OKEY_SERVER__PROBE_INTERVAL_MS".into(), "200".into()),
            ("OKEY_DATABASE__URL".into(), database),
            ("OKEY_DATABASE__MAX_CONNECTIONS".into(), "2".into()),
            ("OKEY_NATS__URL".into(), self.nats_url.clone()),
            ("OKEY_NATS__SUBJECT_PREFIX".into(), prefix.clone()),
            // Each test makes a stream of its own and none deletes it: an hour is plenty, and
            // the messages of a developer's earlier runs do not pile up.
            ("OKEY_NATS__EVENTS_MAX_AGE_SECS".into(), "3600".into()),
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

/// The machine's (busy, total) CPU time so far in seconds, all cores together, from
/// `/proc/stat`: a bench takes the difference over a phase to know what the phase cost the
/// machine, whoever spent it (the services, PostgreSQL, NATS, Redis, the kernel).
pub fn machine_cpu() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let fields: Vec<f64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    let total: f64 = fields.iter().sum();
    let idle = fields.get(3).copied().unwrap_or(0.0) + fields.get(4).copied().unwrap_or(0.0);
    ((total - idle) / 100.0, total / 100.0)
}

/// A loopback port that was free a moment ago, for a spawned binary or a server of a test's own.
///
/// It is picked below the kernel's ephemeral range (`net.ipv4.ip_local_port_range`), where neither
/// a bind to port 0 (an in-process service of a test running beside) nor an outgoing connection
/// can take it in the moment before the binary binds it: a port from the ephemeral range was
/// once taken that way, and the test then talked to another test's server. Each process walks
/// that stretch from a start of its own, so no port is handed out twice by one process.
pub fn free_port() -> u16 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let (low, high) = ports_below_ephemeral();
    if high > low {
        static START: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
        let span = u32::from(high - low);
        let start = *START.get_or_init(|| {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            std::process::id().wrapping_mul(7_919).wrapping_add(nanos) % span
        });
        for _ in 0..span.min(1_000) {
            let offset = (start + NEXT.fetch_add(1, Ordering::Relaxed)) % span;
            let port = low + offset as u16;
            if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
                return port;
            }
        }
    }
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The ports [`free_port`] picks from: from 10,000 up to the kernel's ephemeral range, or an
/// empty range when that leaves fewer than 1,000.
fn ports_below_ephemeral() -> (u16, u16) {
    const LOWEST: u16 = 10_000;
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    if ephemeral_low < LOWEST + 1_000 {
        return (0, 0);
    }
    (LOWEST, ephemeral_low)
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

/// Connects to a service on `port`, retrying while it starts.
pub async fn connect(port: u16, within: Duration) -> tonic::transport::Channel {
    let deadline = std::time::Instant::now() + within;
    loop {
        match tonic::transport::Channel::from_shared(format!("http://127.0.0.1:{port}"))
            .expect("valid uri")
            .connect()
            .await
        {
            Ok(channel) => return channel,
            Err(e) if std::time::Instant::now() > deadline => {
                panic!("cannot connect to port {port}: {e}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Polls the gRPC health of `service` (`""` for the whole server) until it is `wanted`.
pub async fn wait_for_health(
    channel: tonic::transport::Channel,
    service: &str,
    wanted: tonic_health::pb::health_check_response::ServingStatus,
) {
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let status = health
            .check(tonic_health::pb::HealthCheckRequest {
                service: service.to_owned(),
            })
            .await
            .map(|r| r.into_inner().status());
        if status.as_ref().ok() == Some(&wanted) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{service} never became {wanted:?}: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A request carrying an access token for player `p1` with `roles`, signed by the test key.
pub fn signed_in<T>(message: T, roles: &[Role]) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    let token = test_token("p1", roles);
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ASCII token"),
    );
    request
}

/// A service client id and secret that [`TestInfra::service_identity_env`] gives a caller, and
/// [`test_service_clients`] makes an accounts service accept. Never configure them anywhere else.
pub const TEST_SERVICE_CLIENT_ID: &str = "matchmaking-test";
/// See [`TEST_SERVICE_CLIENT_ID`].
pub const TEST_SERVICE_CLIENT_SECRET: &str = "okey-test-service-secret-not-for-production";

/// `tokens.service_clients` for an accounts service that issues service tokens to the test client
/// (its secret's SHA-256).
pub fn test_service_clients() -> String {
    format!(
        "{TEST_SERVICE_CLIENT_ID}:d7a3ea7504190278ff743ce91c37309bc265cb7b0e80284bf7c2257eea0d5f82"
    )
}

impl TestInfra {
    /// `OKEY_…` variables that make a service verify tokens with the keys of the accounts
    /// service at `accounts_url` (polled through `ListPublicKeys`, as in production) and call
    /// others as the test service client.
    pub fn service_identity_env(&self, accounts_url: &str) -> Vec<(String, String)> {
        vec![
            ("OKEY_TOKENS__KEYS_URL".into(), accounts_url.to_owned()),
            (
                "OKEY_SERVICE_CLIENT__ID".into(),
                TEST_SERVICE_CLIENT_ID.into(),
            ),
            (
                "OKEY_SERVICE_CLIENT__SECRET".into(),
                TEST_SERVICE_CLIENT_SECRET.into(),
            ),
            (
                "OKEY_SERVICE_CLIENT__ACCOUNTS_URL".into(),
                accounts_url.to_owned(),
            ),
        ]
    }
}

/// A service running inside the test process on a port of its own; [`InProcess::stop`] ends it
/// the way SIGTERM would.
pub struct InProcess {
    /// The port it listens on.
    pub port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl InProcess {
    /// Runs `run(shutdown)` (a service's `run_until_stopped`) on a task; `port` is where it
    /// listens (its `local_addr`).
    pub fn spawn<F, Fut, E>(port: u16, run: F) -> InProcess
    where
        F: FnOnce(std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>) -> Fut,
        Fut: std::future::Future<Output = Result<(), E>> + Send + 'static,
        E: std::fmt::Debug,
    {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = run(Box::pin(async move {
            let _ = stopped.await;
        }));
        let task = tokio::spawn(async move {
            running.await.expect("the service stops cleanly");
        });
        InProcess {
            port,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// `http://127.0.0.1:{port}`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops it and waits until it has.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

/// The shutdown contract every service binary keeps: started with a 30 s grace period and a
/// health watch open on `api` (a stream that never ends by itself), SIGTERM turns it NOT_SERVING,
/// the stream then ends with UNAVAILABLE `server_stopping`, and the binary exits 0 long before
/// the grace period is over (open streams do not hold the stop).
pub async fn sigterm_turns_not_serving_and_exits_zero(
    binary: &str,
    infra: &TestInfra,
    service: ServiceKind,
    api: &str,
) {
    use tonic_health::pb::health_check_response::ServingStatus;
    let grace = Duration::from_secs(30);
    let port = free_port();
    // The binary's log, shown when a step fails.
    let log_path = std::env::temp_dir().join(format!(
        "okey-sigterm-{}-{}-{port}.log",
        service.name(),
        std::process::id()
    ));
    let log = std::fs::File::create(&log_path).expect("a log file for the binary");
    let mut child = std::process::Command::new(binary)
        .envs(infra.env_for(service, port))
        .env(
            "OKEY_SERVER__GRACE_PERIOD_MS",
            grace.as_millis().to_string(),
        )
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the binary starts");
    let binary_log = || {
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!("the binary's log (last lines):\n{}", tail.join("\n"))
    };

    let channel = connect(port, Duration::from_secs(30)).await;
    wait_for_health(channel.clone(), "", ServingStatus::Serving).await;
    // What answered is the binary itself, not something else on its port.
    assert!(
        child.try_wait().expect("wait works").is_none(),
        "the binary exited at start; {}",
        binary_log()
    );
    let mut watch = tonic_health::pb::health_client::HealthClient::new(channel)
        .watch(tonic_health::pb::HealthCheckRequest {
            service: api.to_owned(),
        })
        .await
        .expect("watch starts")
        .into_inner();
    let first = watch.message().await.expect("stream").expect("an update");
    assert_eq!(first.status(), ServingStatus::Serving);

    let signalled = sigterm(&child);

    let next = match watch.message().await {
        Ok(Some(next)) => next,
        other => panic!(
            "no NOT_SERVING after SIGTERM: {other:?}; exit status {:?}; {}",
            child.try_wait(),
            binary_log()
        ),
    };
    assert_eq!(next.status(), ServingStatus::NotServing);
    // Then the stream ends: the server is stopping, call again (elsewhere).
    let ended = watch
        .message()
        .await
        .expect_err("the stream ends with a status");
    assert_eq!(ended.code(), tonic::Code::Unavailable, "{ended:?}");
    assert!(
        crate::status::is(&ended, crate::status::Reason::ServerStopping),
        "{ended:?}"
    );

    let status = loop {
        if let Some(status) = child.try_wait().expect("wait works") {
            break status;
        }
        assert!(
            signalled.elapsed() < grace + Duration::from_secs(5),
            "still running {:?} after SIGTERM",
            signalled.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "exit status {status}; {}", binary_log());
    // Nothing was left to wait for once the stream ended: far less than the grace period.
    assert!(
        signalled.elapsed() < grace / 3,
        "took {:?}; {}",
        signalled.elapsed(),
        binary_log()
    );
    let _ = std::fs::remove_file(&log_path);
}

/// Sends SIGTERM to `child`; when it was sent.
fn sigterm(child: &std::process::Child) -> std::time::Instant {
    let signalled = std::time::Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    signalled
}

/// The start-up contract every service binary keeps: a SIGTERM while it still waits for its
/// dependencies is caught (not the default action, which kills the process) and stops it at
/// once with exit status 0.
pub fn sigterm_while_starting_exits_zero(binary: &str, service: ServiceKind) {
    use std::io::BufRead;
    let nowhere = TestInfra {
        database_url: "postgres://okey:okey@127.0.0.1:1/postgres".into(),
        nats_url: "nats://127.0.0.1:1".into(),
        redis_url: "redis://127.0.0.1:1".into(),
    };
    let mut child = std::process::Command::new(binary)
        .envs(nowhere.env_for(service, free_port()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary starts");
    // Its log and its errors, line by line.
    let (lines, logged) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let readers: [Box<dyn std::io::Read + Send>; 2] = [Box::new(stdout), Box::new(stderr)];
    for output in readers {
        let lines = lines.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(output)
                .lines()
                .map_while(Result::ok)
            {
                let _ = lines.send(line);
            }
        });
    }
    // It says it waits for a dependency: it is inside its start, past its first steps.
    let mut seen = Vec::new();
    let waiting = loop {
        match logged.recv_timeout(Duration::from_secs(20)) {
            Ok(line) if line.contains("not available yet") => break true,
            Ok(line) => seen.push(line),
            Err(_) => break false,
        }
    };
    assert!(waiting, "never waited for a dependency: {seen:#?}");
    let signalled = sigterm(&child);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait works") {
            break status;
        }
        if signalled.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            panic!("still starting 5 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        status.success(),
        "exit status {status} after SIGTERM while starting"
    );
}

/// A service binary given a bad setting stops at start with a message naming the variable and
/// the setting.
pub fn a_bad_setting_is_named(binary: &str) {
    let output = std::process::Command::new(binary)
        .env("OKEY_SERVER__PORT", "not-a-port")
        .output()
        .expect("the binary runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("OKEY_SERVER__PORT"), "{stderr}");
    assert!(stderr.contains("server.port"), "{stderr}");
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
    fn free_ports_differ_and_stay_out_of_the_ephemeral_range() {
        let (low, high) = ports_below_ephemeral();
        let ports: Vec<u16> = (0..200).map(|_| free_port()).collect();
        let distinct: std::collections::BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len(), "{ports:?}");
        if high > low {
            assert!(ports.iter().all(|p| (low..high).contains(p)), "{ports:?}");
        }
        // A port 0 bind (an in-process server) lands in the ephemeral range, never on one of them.
        let ephemeral = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let taken = ephemeral.local_addr().unwrap().port();
        if high > low {
            assert!(taken >= high, "{taken}");
        }
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

/// A codec that sends and receives message bytes as they are, for requests no generated client
/// can make (bytes that do not decode, oversized messages).
#[derive(Clone, Copy, Debug, Default)]
struct RawCodec;

impl tonic::codec::Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl tonic::codec::Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn encode(
        &mut self,
        item: Vec<u8>,
        dst: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), tonic::Status> {
        use prost::bytes::BufMut;
        dst.put_slice(&item);
        Ok(())
    }
}

impl tonic::codec::Decoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn decode(
        &mut self,
        src: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<Vec<u8>>, tonic::Status> {
        use prost::bytes::Buf;
        Ok(Some(src.copy_to_bytes(src.remaining()).to_vec()))
    }
}

/// Sends `request`'s bytes as the request message of the unary RPC `path`
/// (`/okey.v1.AccountsService/SignInAsGuest`) and returns the response message's bytes.
pub async fn raw_unary(
    channel: tonic::transport::Channel,
    path: &'static str,
    request: tonic::Request<Vec<u8>>,
) -> Result<Vec<u8>, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    grpc.unary(
        request,
        http::uri::PathAndQuery::from_static(path),
        RawCodec,
    )
    .await
    .map(tonic::Response::into_inner)
}

/// Sends `request`'s bytes as the request message of the server-streaming RPC `path`
/// (`/okey.v1.TableService/WatchTable`) and returns the stream of the response messages' bytes.
pub async fn raw_server_streaming(
    channel: tonic::transport::Channel,
    path: &'static str,
    request: tonic::Request<Vec<u8>>,
) -> Result<tonic::Streaming<Vec<u8>>, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    grpc.server_streaming(
        request,
        http::uri::PathAndQuery::from_static(path),
        RawCodec,
    )
    .await
    .map(tonic::Response::into_inner)
}

/// The names of the files that the server's reflection (v1alpha, the one grpcurl speaks) says
/// define `symbol` (`google.rpc.ErrorInfo`) and every file they import, or its error message.
pub async fn reflection_files_for(
    channel: tonic::transport::Channel,
    symbol: &str,
) -> Result<Vec<String>, String> {
    use prost::Message as _;
    use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1alpha::{ServerReflectionRequest, ServerReflectionResponse};

    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol(symbol.to_owned())),
    };
    let mut answers = ServerReflectionClient::new(channel)
        .server_reflection_info(futures_stream(request))
        .await
        .map_err(|e| e.to_string())?
        .into_inner();
    let answer: ServerReflectionResponse = answers
        .message()
        .await
        .map_err(|e| e.to_string())?
        .ok_or("no reflection answer")?;
    match answer.message_response {
        Some(MessageResponse::FileDescriptorResponse(files)) => files
            .file_descriptor_proto
            .iter()
            .map(|raw| {
                prost_types::FileDescriptorProto::decode(raw.as_slice())
                    .map(|file| file.name().to_owned())
                    .map_err(|e| e.to_string())
            })
            .collect(),
        Some(MessageResponse::ErrorResponse(e)) => Err(e.error_message),
        other => Err(format!("unexpected reflection answer: {other:?}")),
    }
}

/// A stream of one message.
fn futures_stream<T: Send + 'static>(
    message: T,
) -> impl tonic::codegen::tokio_stream::Stream<Item = T> {
    tonic::codegen::tokio_stream::iter([message])
}
