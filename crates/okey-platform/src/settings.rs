//! Typed settings: built-in defaults, then an optional TOML file, then `OKEY_…` environment
//! variables, each overriding the one before.
//!
//! An environment variable names a setting by section and key joined with a double underscore:
//! `OKEY_SERVER__PORT=50099` sets `server.port`. Every setting exists in the defaults, so a value
//! is checked against the default's type before anything else, and an error names the setting
//! and where its value came from. Parsing takes the variables as an iterator so tests never touch
//! the process environment.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

/// The environment variable naming an optional TOML settings file.
pub const CONFIG_FILE_VAR: &str = "OKEY_CONFIG_FILE";

/// Prefix of every settings environment variable.
const ENV_PREFIX: &str = "OKEY_";
/// Joins section and key in an environment variable name.
const ENV_SEPARATOR: &str = "__";

/// The four services; each has its own default port and database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceKind {
    /// Accounts, sign-in and tokens.
    Accounts,
    /// Matchmaking and private rooms.
    Matchmaking,
    /// The table engine.
    Table,
    /// Ledgers, results and standings.
    Scoring,
}

impl ServiceKind {
    /// The service's short name: binary, database suffix, log field.
    pub fn name(self) -> &'static str {
        match self {
            ServiceKind::Accounts => "accounts",
            ServiceKind::Matchmaking => "matchmaking",
            ServiceKind::Table => "table",
            ServiceKind::Scoring => "scoring",
        }
    }

    /// The loopback gRPC port `make run` uses for this service.
    pub fn default_port(self) -> u16 {
        match self {
            ServiceKind::Accounts => 50051,
            ServiceKind::Matchmaking => 50052,
            ServiceKind::Table => 50053,
            ServiceKind::Scoring => 50054,
        }
    }
}

/// Everything a service reads at start-up.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The gRPC server.
    pub server: ServerSettings,
    /// PostgreSQL.
    pub database: DatabaseSettings,
    /// NATS with JetStream.
    pub nats: NatsSettings,
    /// Redis.
    pub redis: RedisSettings,
    /// Logs and traces.
    pub telemetry: TelemetrySettings,
    /// Access-token checks.
    pub auth: AuthSettings,
    /// Token keys and lifetimes: where verifiers find the public keys, and (accounts only) the
    /// private keys that sign.
    pub tokens: TokenSettings,
    /// Live tables (table service): deadline sweeps, bot pace, presence, chat.
    pub live: LiveSettings,
    /// Quick play and private rooms (matchmaking service).
    pub matchmaking: MatchmakingSettings,
    /// The service identity this process asks accounts for (client credentials), when it calls
    /// another service as itself (the matchmaking service creating tables).
    pub service_client: ServiceClientSettings,
}

/// Quick play and private rooms (read by the matchmaking service only).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchmakingSettings {
    /// The table service's gRPC address (`http://host:port`), where matched tables are created.
    pub table_url: String,
    /// A quick-play ticket that allows bots gets them for its empty seats after this long.
    pub bot_fill_after_secs: u64,
    /// A quick-play ticket without bots is EXPIRED after this long unmatched.
    pub ticket_ttl_secs: u64,
    /// The matcher's tick: how often each replica looks for groups, bot fills and expiries (it
    /// also runs at once on every ticket it opens). At most 250.
    pub tick_ms: u64,
    /// A replica that claimed a group and did not finish creating its table within this long
    /// (it died) leaves the group to another replica, which finishes it with the same request.
    pub claim_lease_secs: u64,
    /// An unstarted private room closes after this long.
    pub room_ttl_secs: u64,
    /// Wrong room codes or passwords a caller may try per window before RESOURCE_EXHAUSTED.
    pub join_attempts: u64,
    /// The window of `join_attempts`.
    pub join_window_secs: u64,
}

/// The identity a service presents to accounts' `IssueServiceToken`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceClientSettings {
    /// The client id (empty: this process has no service identity).
    pub id: String,
    /// The client secret (a Kubernetes Secret in a cluster); accounts holds only its SHA-256.
    pub secret: Secret<String>,
    /// The accounts service's gRPC address (`http://host:port`).
    pub accounts_url: String,
}

/// The gRPC server.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// Address to listen on.
    pub host: IpAddr,
    /// Port to listen on; 0 picks a free one (tests).
    pub port: u16,
    /// After SIGTERM/SIGINT, how long in-flight calls may run before the process exits anyway.
    pub grace_period_ms: u64,
    /// Longest a unary call may take (clients may ask for less with `grpc-timeout`).
    pub request_timeout_ms: u64,
    /// Most calls served at once per connection.
    pub concurrency_limit_per_connection: usize,
    /// Longest the service waits for its dependencies at start before giving up.
    pub startup_timeout_ms: u64,
    /// How often dependencies are probed for the health status.
    pub probe_interval_ms: u64,
}

impl ServerSettings {
    /// The grace period as a duration.
    pub fn grace_period(&self) -> Duration {
        Duration::from_millis(self.grace_period_ms)
    }
}

/// Live tables (read by the table service only): how often deadlines are swept, how fast bots
/// play, when a player counts as away or gone, and the chat's limits and retention. Turn lengths
/// come from each table's rule set, not from here.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiveSettings {
    /// How often each process looks for expired deadlines (it is also woken at once when a bot
    /// is due now).
    pub sweep_interval_ms: u64,
    /// How often each process checks that every active table has its deadline in Redis
    /// (rebuilding any that are missing).
    pub reconcile_interval_ms: u64,
    /// How long a bot waits before each of its commands (0 in tests).
    pub bot_pace_ms: u64,
    /// A player seen (open stream, heartbeat or command) within this long is connected.
    pub connected_ms: u64,
    /// A player not seen for this long is gone (before that: away).
    pub gone_ms: u64,
    /// Longest chat message, in characters.
    pub chat_max_chars: u64,
    /// Chat messages a player may send per window at one table.
    pub chat_burst: u64,
    /// The chat rate-limit window.
    pub chat_window_ms: u64,
    /// How long chat messages are kept in PostgreSQL.
    pub chat_retention_secs: u64,
    /// How often old chat messages are deleted.
    pub chat_sweep_interval_ms: u64,
    /// Most tables one process holds in memory: past it, the table asked about longest ago and
    /// in use by no call is dropped (it is folded from the store again when asked for).
    pub max_cached_tables: u64,
    /// Most WatchTable plus WatchChat streams one caller may hold open on one process.
    pub max_streams_per_caller: u64,
    /// How often a quiet WatchTable stream reads the event store, in case a wake-up from
    /// another replica was missed.
    pub stream_recheck_ms: u64,
}

/// PostgreSQL.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSettings {
    /// Connection URL, including the service's own database; holds a password, so it is secret.
    pub url: Secret<String>,
    /// Pool size.
    pub max_connections: u32,
    /// The table service's group commit: how many groups of appends may be committing at once.
    /// Appends that arrive while every group is committing wait and go in the next group, one
    /// statement and one commit for all of them. 1 commits the most appends per group; more
    /// lets an append start while another group waits for its commit (2, the default, gave the
    /// lowest tail latency at a player's pace and the same throughput as 1 under saturation).
    pub commit_groups: u32,
    /// Create the database at start if it does not exist (local and test setups).
    pub create_if_missing: bool,
}

/// NATS with JetStream.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NatsSettings {
    /// Server URL, `nats://host:port`.
    pub url: String,
    /// First token of every subject and stream name this deployment uses, so several
    /// deployments (or tests) can share one server.
    pub subject_prefix: String,
    /// How long JetStream keeps the table events it carries (the stream's `max_age`), in
    /// seconds; 0 keeps them until they are deleted. PostgreSQL keeps every event for good: the
    /// stream only carries them to consumers, which must read them within this time. At least
    /// the stream's duplicate window ([`NATS_DUPLICATE_WINDOW_SECS`]) when set.
    pub events_max_age_secs: u64,
}

/// The JetStream duplicate window of the table events stream: a message id seen within it is
/// dropped as a republish.
pub const NATS_DUPLICATE_WINDOW_SECS: u64 = 120;

/// Redis.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedisSettings {
    /// Connection URL, `redis://host:port/db`; may hold a password, so it is secret.
    pub url: Secret<String>,
    /// Prefix of every key this deployment writes.
    pub key_prefix: String,
}

/// Logs and traces.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySettings {
    /// `tracing` filter directives, as in `RUST_LOG` (which wins when set).
    pub log_filter: String,
    /// `text` for people, `json` for log collectors.
    pub log_format: LogFormat,
    /// OTLP/gRPC collector endpoint (`http://host:4317`); empty exports no traces.
    pub otlp_endpoint: String,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One human-readable line per event.
    Text,
    /// One JSON object per event.
    Json,
}

/// Access-token checks (the accounts service issues the tokens).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    /// Expected `iss` claim.
    pub issuer: String,
    /// Expected `aud` claim.
    pub audience: String,
    /// Seconds of clock skew tolerated on `exp` and `nbf`.
    pub leeway_secs: u64,
}

/// Token keys and lifetimes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenSettings {
    /// Accounts only: the Ed25519 private keys, PKCS#8 PEM blocks one after the other. The first
    /// signs new tokens; the others are still published so tokens they signed keep verifying
    /// until they expire. Empty: a throwaway key is generated at start (local runs only).
    pub signing_keys_pem: Secret<String>,
    /// Lifetime of an access token.
    pub access_ttl_secs: u64,
    /// Lifetime of a refresh token.
    pub refresh_ttl_secs: u64,
    /// Public keys every service trusts without asking the accounts service, as a JWKS document
    /// (`{"keys":[{"kid":"…","kty":"OKP","crv":"Ed25519","x":"…"}]}`); empty for none.
    pub public_keys: String,
    /// The accounts service's gRPC address whose `ListPublicKeys` the other services poll for
    /// the current keys: `https://host:port` (TLS, see `tokens.keys_ca_pem`) or `http://host:port`
    /// (plaintext: only where the network path to accounts is trusted, see the README); empty to
    /// rely on `tokens.public_keys` alone.
    pub keys_url: String,
    /// For an `https://` `tokens.keys_url`: the CA certificates (PEM) its certificate must chain
    /// to. Empty: the system's trusted roots.
    pub keys_ca_pem: String,
    /// How often the public keys are fetched again (sooner when a token names an unknown `kid`).
    pub keys_refresh_secs: u64,
    /// Accounts only: the service clients it issues service tokens to (role `matchmaker`), as
    /// `id:sha256hex` entries separated by whitespace or commas, the hex being the SHA-256 of the
    /// client's secret (`printf %s "$SECRET" | sha256sum`). Empty: no service tokens.
    pub service_clients: String,
    /// Lifetime of a service token.
    pub service_ttl_secs: u64,
}

/// A value that must never reach a log: `Debug` and `Display` print `[redacted]`.
#[derive(Clone, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wraps a value.
    pub fn new(value: T) -> Self {
        Secret(value)
    }

    /// The value itself, for the one place that needs it (a connect call).
    pub fn expose(&self) -> &T {
        &self.0
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl<T> fmt::Display for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Why settings could not be loaded. Each variant names the setting and the source of the value.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The settings file could not be read.
    #[error("cannot read settings file {path}: {source}")]
    ReadFile {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The settings file is not valid TOML.
    #[error("settings file {path} is not valid TOML: {message}")]
    ParseFile {
        /// The file.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// A file key or environment variable names no known setting.
    #[error("unknown setting `{setting}` (from {origin})")]
    Unknown {
        /// Dotted setting name.
        setting: String,
        /// Where it came from.
        origin: String,
    },
    /// A value has the wrong type or is out of range.
    #[error("invalid value for setting `{setting}` (from {origin}): {message}")]
    Invalid {
        /// Dotted setting name.
        setting: String,
        /// Where the value came from.
        origin: String,
        /// What is wrong.
        message: String,
    },
}

impl Settings {
    /// Loads the settings of `service` from the defaults, the file named by `OKEY_CONFIG_FILE` (if
    /// set) and the process environment.
    pub fn load(service: ServiceKind) -> Result<Settings, SettingsError> {
        let file = match std::env::var(CONFIG_FILE_VAR) {
            Ok(path) if !path.is_empty() => Some(read_file(Path::new(&path))?),
            _ => None,
        };
        let file_ref = file
            .as_ref()
            .map(|(path, text)| (path.as_str(), text.as_str()));
        // Variables that are not valid UTF-8 cannot be settings; skip them rather than panic.
        let env = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
        Settings::from_sources(service, file_ref, env)
    }

    /// Builds settings from the defaults, an optional `(name, TOML text)` file and environment
    /// variables given as pairs. Variables not starting with `OKEY_` or without `__` are ignored.
    pub fn from_sources<I, K, V>(
        service: ServiceKind,
        file: Option<(&str, &str)>,
        env: I,
    ) -> Result<Settings, SettingsError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut merged = defaults(service);
        let mut origins: BTreeMap<String, String> = BTreeMap::new();

        if let Some((path, text)) = file {
            let table: toml::Table =
                text.parse()
                    .map_err(|e: toml::de::Error| SettingsError::ParseFile {
                        path: path.to_owned(),
                        message: e.message().to_owned(),
                    })?;
            let origin = format!("file {path}");
            for (section, value) in table {
                let toml::Value::Table(keys) = value else {
                    return Err(SettingsError::Unknown {
                        setting: section,
                        origin,
                    });
                };
                for (key, value) in keys {
                    let setting = format!("{section}.{key}");
                    set(&mut merged, &section, &key, value, &setting, &origin)?;
                    origins.insert(setting, origin.clone());
                }
            }
        }

        for (name, raw) in env {
            let (name, raw) = (name.as_ref(), raw.as_ref());
            let Some(rest) = name.strip_prefix(ENV_PREFIX) else {
                continue;
            };
            let Some((section, key)) = rest.split_once(ENV_SEPARATOR) else {
                continue;
            };
            let (section, key) = (section.to_ascii_lowercase(), key.to_ascii_lowercase());
            let setting = format!("{section}.{key}");
            let origin = format!("environment variable {name}");
            let value = typed_env_value(&merged, &section, &key, raw, &setting, &origin)?;
            set(&mut merged, &section, &key, value, &setting, &origin)?;
            origins.insert(setting, origin);
        }

        let settings: Settings = serde_path_to_error::deserialize(toml::Value::Table(merged))
            .map_err(|e| {
                let setting = e.path().to_string();
                SettingsError::Invalid {
                    origin: origin_of(&setting, &origins),
                    setting,
                    message: e.into_inner().to_string(),
                }
            })?;
        settings.validate(&origins)?;
        Ok(settings)
    }

    /// Checks what types alone cannot.
    fn validate(&self, origins: &BTreeMap<String, String>) -> Result<(), SettingsError> {
        let invalid = |setting: &str, message: &str| SettingsError::Invalid {
            setting: setting.to_owned(),
            origin: origin_of(setting, origins),
            message: message.to_owned(),
        };
        if self.server.grace_period_ms == 0 {
            return Err(invalid("server.grace_period_ms", "must be at least 1"));
        }
        if self.server.probe_interval_ms == 0 {
            return Err(invalid("server.probe_interval_ms", "must be at least 1"));
        }
        if self.server.concurrency_limit_per_connection == 0 {
            return Err(invalid(
                "server.concurrency_limit_per_connection",
                "must be at least 1",
            ));
        }
        if self.database.max_connections == 0 {
            return Err(invalid("database.max_connections", "must be at least 1"));
        }
        if self.database.commit_groups == 0 {
            return Err(invalid("database.commit_groups", "must be at least 1"));
        }
        if !self.database.url.expose().starts_with("postgres://")
            && !self.database.url.expose().starts_with("postgresql://")
        {
            return Err(invalid(
                "database.url",
                "must start with postgres:// (value not shown: it is secret)",
            ));
        }
        if self.tokens.access_ttl_secs == 0 {
            return Err(invalid("tokens.access_ttl_secs", "must be at least 1"));
        }
        if self.tokens.refresh_ttl_secs == 0 {
            return Err(invalid("tokens.refresh_ttl_secs", "must be at least 1"));
        }
        if self.tokens.keys_refresh_secs == 0 {
            return Err(invalid("tokens.keys_refresh_secs", "must be at least 1"));
        }
        if let Err(e) = crate::jwks::PublicKeySet::parse(&self.tokens.public_keys) {
            return Err(invalid("tokens.public_keys", &e.to_string()));
        }
        let keys_url = self.tokens.keys_url.trim();
        if !keys_url.is_empty()
            && !keys_url.starts_with("http://")
            && !keys_url.starts_with("https://")
        {
            return Err(invalid(
                "tokens.keys_url",
                "must start with https:// or http:// (or be empty)",
            ));
        }
        let ca = self.tokens.keys_ca_pem.trim();
        if !ca.is_empty() && !ca.contains("-----BEGIN CERTIFICATE-----") {
            return Err(invalid(
                "tokens.keys_ca_pem",
                "must hold PEM certificates (-----BEGIN CERTIFICATE-----)",
            ));
        }
        for (setting, value) in [
            ("live.sweep_interval_ms", self.live.sweep_interval_ms),
            (
                "live.reconcile_interval_ms",
                self.live.reconcile_interval_ms,
            ),
            ("live.connected_ms", self.live.connected_ms),
            ("live.chat_max_chars", self.live.chat_max_chars),
            ("live.chat_burst", self.live.chat_burst),
            ("live.chat_window_ms", self.live.chat_window_ms),
            (
                "live.chat_sweep_interval_ms",
                self.live.chat_sweep_interval_ms,
            ),
            ("live.max_cached_tables", self.live.max_cached_tables),
            (
                "live.max_streams_per_caller",
                self.live.max_streams_per_caller,
            ),
            ("live.stream_recheck_ms", self.live.stream_recheck_ms),
        ] {
            if value == 0 {
                return Err(invalid(setting, "must be at least 1"));
            }
        }
        if self.live.gone_ms < self.live.connected_ms {
            return Err(invalid(
                "live.gone_ms",
                "must be at least live.connected_ms",
            ));
        }
        if self.nats.events_max_age_secs != 0
            && self.nats.events_max_age_secs < NATS_DUPLICATE_WINDOW_SECS
        {
            return Err(invalid(
                "nats.events_max_age_secs",
                &format!(
                    "must be 0 (keep events until deleted) or at least \
                     {NATS_DUPLICATE_WINDOW_SECS} (the stream's duplicate window)"
                ),
            ));
        }
        if let Err(e) = parse_service_clients(&self.tokens.service_clients) {
            return Err(invalid("tokens.service_clients", &e));
        }
        if self.tokens.service_ttl_secs < 60 {
            return Err(invalid("tokens.service_ttl_secs", "must be at least 60"));
        }
        for (setting, value) in [
            (
                "matchmaking.bot_fill_after_secs",
                self.matchmaking.bot_fill_after_secs,
            ),
            (
                "matchmaking.ticket_ttl_secs",
                self.matchmaking.ticket_ttl_secs,
            ),
            ("matchmaking.tick_ms", self.matchmaking.tick_ms),
            (
                "matchmaking.claim_lease_secs",
                self.matchmaking.claim_lease_secs,
            ),
            ("matchmaking.room_ttl_secs", self.matchmaking.room_ttl_secs),
            ("matchmaking.join_attempts", self.matchmaking.join_attempts),
            (
                "matchmaking.join_window_secs",
                self.matchmaking.join_window_secs,
            ),
        ] {
            if value == 0 {
                return Err(invalid(setting, "must be at least 1"));
            }
        }
        if self.matchmaking.tick_ms > 250 {
            return Err(invalid("matchmaking.tick_ms", "must be at most 250"));
        }
        if !self.service_client.id.is_empty() && self.service_client.secret.expose().len() < 16 {
            return Err(invalid(
                "service_client.secret",
                "must be at least 16 characters when service_client.id is set (value not shown)",
            ));
        }
        if !self.redis.url.expose().starts_with("redis://") {
            return Err(invalid(
                "redis.url",
                "must start with redis:// (value not shown: it is secret)",
            ));
        }
        Ok(())
    }
}

/// Reads `tokens.service_clients`: `id:sha256hex` entries (whitespace or commas between them)
/// as (client id, SHA-256 of its secret).
pub fn parse_service_clients(text: &str) -> Result<Vec<(String, [u8; 32])>, String> {
    let mut clients: Vec<(String, [u8; 32])> = Vec::new();
    for entry in text.split(|c: char| c.is_whitespace() || c == ',') {
        if entry.is_empty() {
            continue;
        }
        let Some((id, hex)) = entry.split_once(':') else {
            return Err(format!("entry `{entry}` is not `id:sha256hex`"));
        };
        if id.is_empty() || clients.iter().any(|(known, _)| known == id) {
            return Err(format!("client id `{id}` is empty or listed twice"));
        }
        let mut hash = [0u8; 32];
        if hex.len() != 64 {
            return Err(format!("the hash of `{id}` is not 64 hex digits"));
        }
        for (i, byte) in hash.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
                .map_err(|_| format!("the hash of `{id}` is not 64 hex digits"))?;
        }
        clients.push((id.to_owned(), hash));
    }
    Ok(clients)
}

/// The built-in defaults: loopback servers as `make run` starts them.
fn defaults(service: ServiceKind) -> toml::Table {
    let name = service.name();
    let port = service.default_port();
    let text = format!(
        r#"
[server]
host = "127.0.0.1"
port = {port}
grace_period_ms = 10000
request_timeout_ms = 30000
concurrency_limit_per_connection = 256
startup_timeout_ms = 60000
probe_interval_ms = 2000

[database]
url = "postgres://okey:okey@127.0.0.1:55432/okey_{name}"
max_connections = 10
commit_groups = 2
create_if_missing = true

[nats]
url = "nats://127.0.0.1:54222"
subject_prefix = "okey"
events_max_age_secs = 604800

[redis]
url = "redis://127.0.0.1:56379/0"
key_prefix = "okey"

[telemetry]
log_filter = "info"
log_format = "text"
otlp_endpoint = ""

[auth]
issuer = "okey-accounts"
audience = "okey"
leeway_secs = 30

[tokens]
signing_keys_pem = ""
access_ttl_secs = 900
refresh_ttl_secs = 2592000
public_keys = ""
keys_url = "http://127.0.0.1:50051"
keys_ca_pem = ""
keys_refresh_secs = 300
service_clients = ""
service_ttl_secs = 900

[live]
sweep_interval_ms = 200
reconcile_interval_ms = 5000
bot_pace_ms = 1500
connected_ms = 30000
gone_ms = 120000
chat_max_chars = 200
chat_burst = 5
chat_window_ms = 10000
chat_retention_secs = 604800
chat_sweep_interval_ms = 60000
max_cached_tables = 10000
max_streams_per_caller = 8
stream_recheck_ms = 1000

[matchmaking]
table_url = "http://127.0.0.1:50053"
bot_fill_after_secs = 15
ticket_ttl_secs = 120
tick_ms = 100
claim_lease_secs = 10
room_ttl_secs = 1800
join_attempts = 10
join_window_secs = 60

[service_client]
id = ""
secret = ""
accounts_url = "http://127.0.0.1:50051"
"#
    );
    text.parse().expect("built-in defaults are valid TOML")
}

fn read_file(path: &Path) -> Result<(String, String), SettingsError> {
    let shown = path.display().to_string();
    std::fs::read_to_string(path)
        .map(|text| (shown.clone(), text))
        .map_err(|source| SettingsError::ReadFile {
            path: shown,
            source,
        })
}

/// Replaces a known setting's value, refusing unknown settings and values of another type.
fn set(
    merged: &mut toml::Table,
    section: &str,
    key: &str,
    value: toml::Value,
    setting: &str,
    origin: &str,
) -> Result<(), SettingsError> {
    let unknown = || SettingsError::Unknown {
        setting: setting.to_owned(),
        origin: origin.to_owned(),
    };
    let slot = merged
        .get_mut(section)
        .and_then(toml::Value::as_table_mut)
        .and_then(|t| t.get_mut(key))
        .ok_or_else(unknown)?;
    if slot.type_str() != value.type_str() {
        return Err(SettingsError::Invalid {
            setting: setting.to_owned(),
            origin: origin.to_owned(),
            message: format!("expected {}, found {}", slot.type_str(), value.type_str()),
        });
    }
    *slot = value;
    Ok(())
}

/// Reads an environment variable's text as the type of the setting's default.
fn typed_env_value(
    merged: &toml::Table,
    section: &str,
    key: &str,
    raw: &str,
    setting: &str,
    origin: &str,
) -> Result<toml::Value, SettingsError> {
    let current = merged
        .get(section)
        .and_then(toml::Value::as_table)
        .and_then(|t| t.get(key))
        .ok_or_else(|| SettingsError::Unknown {
            setting: setting.to_owned(),
            origin: origin.to_owned(),
        })?;
    let invalid = |expected: &str| SettingsError::Invalid {
        setting: setting.to_owned(),
        origin: origin.to_owned(),
        message: format!("expected {expected}, found {raw:?}"),
    };
    let trimmed = raw.trim();
    Ok(match current {
        toml::Value::Integer(_) => {
            toml::Value::Integer(trimmed.parse::<i64>().map_err(|_| invalid("an integer"))?)
        }
        toml::Value::Boolean(_) => toml::Value::Boolean(match trimmed {
            "true" | "1" | "yes" | "on" => true,
            "false" | "0" | "no" | "off" => false,
            _ => return Err(invalid("true or false")),
        }),
        toml::Value::Float(_) => {
            toml::Value::Float(trimmed.parse::<f64>().map_err(|_| invalid("a number"))?)
        }
        _ => toml::Value::String(raw.to_owned()),
    })
}

fn origin_of(setting: &str, origins: &BTreeMap<String, String>) -> String {
    origins
        .get(setting)
        .cloned()
        .unwrap_or_else(|| "the defaults".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_ENV: [(&str, &str); 0] = [];

    #[test]
    fn defaults_alone_are_valid_and_service_specific() {
        let table = Settings::from_sources(ServiceKind::Table, None, NO_ENV).unwrap();
        assert_eq!(table.server.port, 50053);
        assert!(table.database.url.expose().ends_with("/okey_table"));
        let scoring = Settings::from_sources(ServiceKind::Scoring, None, NO_ENV).unwrap();
        assert_eq!(scoring.server.port, 50054);
    }

    #[test]
    fn environment_overrides_file_which_overrides_defaults() {
        let file = "[server]\nport = 6000\ngrace_period_ms = 1234\n";
        let env = [
            ("OKEY_SERVER__PORT", "7000"),
            ("OKEY_TEST_DATABASE_URL", "ignored: no double underscore"),
            ("PATH", "/ignored"),
        ];
        let s = Settings::from_sources(ServiceKind::Table, Some(("okey.toml", file)), env).unwrap();
        assert_eq!(s.server.port, 7000, "environment beats file");
        assert_eq!(s.server.grace_period_ms, 1234, "file beats default");
        assert_eq!(s.server.request_timeout_ms, 30000, "default stays");
    }

    #[test]
    fn a_bad_environment_value_names_the_setting_and_the_variable() {
        let err =
            Settings::from_sources(ServiceKind::Table, None, [("OKEY_SERVER__PORT", "fifty")])
                .unwrap_err()
                .to_string();
        assert!(err.contains("server.port"), "{err}");
        assert!(err.contains("OKEY_SERVER__PORT"), "{err}");
    }

    #[test]
    fn an_out_of_range_value_names_the_setting() {
        let err =
            Settings::from_sources(ServiceKind::Table, None, [("OKEY_SERVER__PORT", "70000")])
                .unwrap_err()
                .to_string();
        assert!(err.contains("server.port"), "{err}");
        assert!(err.contains("OKEY_SERVER__PORT"), "{err}");
    }

    #[test]
    fn an_events_max_age_shorter_than_the_duplicate_window_is_refused() {
        let events_max_age = |value: &str| {
            Settings::from_sources(
                ServiceKind::Table,
                None,
                [("OKEY_NATS__EVENTS_MAX_AGE_SECS", value)],
            )
        };
        let err = events_max_age("60").unwrap_err().to_string();
        assert!(err.contains("nats.events_max_age_secs"), "{err}");
        assert!(err.contains("at least 120"), "{err}");
        assert_eq!(events_max_age("0").unwrap().nats.events_max_age_secs, 0);
        assert_eq!(events_max_age("120").unwrap().nats.events_max_age_secs, 120);
        let default = Settings::from_sources(ServiceKind::Table, None, NO_ENV).unwrap();
        assert_eq!(default.nats.events_max_age_secs, 7 * 24 * 3600);
    }

    #[test]
    fn a_bad_file_value_names_the_setting_and_the_file() {
        let err = Settings::from_sources(
            ServiceKind::Table,
            Some(("okey.toml", "[database]\nmax_connections = \"many\"\n")),
            NO_ENV,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("database.max_connections"), "{err}");
        assert!(err.contains("okey.toml"), "{err}");
    }

    #[test]
    fn service_clients_are_read_as_ids_and_hashes() {
        let hex = "ab".repeat(32);
        let clients = parse_service_clients(&format!("mm:{hex}, other:{hex}\n")).unwrap();
        assert_eq!(clients.len(), 2);
        assert_eq!(clients[0].0, "mm");
        assert_eq!(clients[0].1, [0xab; 32]);
        assert!(parse_service_clients("mm").is_err());
        assert!(parse_service_clients("mm:abc").is_err());
        assert!(parse_service_clients(&format!("mm:{hex} mm:{hex}")).is_err());
        let err = Settings::from_sources(
            ServiceKind::Accounts,
            None,
            [("OKEY_TOKENS__SERVICE_CLIENTS", "mm:zz")],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("tokens.service_clients"), "{err}");
    }

    #[test]
    fn a_matcher_tick_over_250_ms_is_refused() {
        let err = Settings::from_sources(
            ServiceKind::Matchmaking,
            None,
            [("OKEY_MATCHMAKING__TICK_MS", "1000")],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("matchmaking.tick_ms"), "{err}");
    }

    #[test]
    fn unknown_settings_are_refused() {
        let err = Settings::from_sources(ServiceKind::Table, None, [("OKEY_SERVER__PROT", "1")])
            .unwrap_err();
        assert!(matches!(err, SettingsError::Unknown { .. }), "{err}");
    }

    #[test]
    fn secrets_never_show_in_debug_output() {
        let s = Settings::from_sources(
            ServiceKind::Accounts,
            None,
            [("OKEY_DATABASE__URL", "postgres://u:hunter2@db/x")],
        )
        .unwrap();
        let shown = format!("{s:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("redacted"));
        assert_eq!(s.database.url.expose(), "postgres://u:hunter2@db/x");
    }

    #[test]
    fn a_bad_secret_is_refused_without_showing_it() {
        let err = Settings::from_sources(
            ServiceKind::Accounts,
            None,
            [("OKEY_DATABASE__URL", "mysql://u:hunter2@db/x")],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("database.url"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
}
