//! Typed settings: built-in defaults, then an optional TOML file, then `OKEY_…` environment
//! variables, each overriding the one before.
//!
//! An environment variable names a setting by section and key joined with a double underscore:
//! `OKEY_SERVER__PORT=50099` sets `server.port`. Every setting exists in the defaults, so a value
//! is checked against the default's type before anything else, and an error names the setting
//! and where its value came from. Parsing takes the variables as an iterator so tests never touch
//! the process environment.
//!
//! The sections here are the ones every service reads. A service's own settings (the table's
//! `live`, accounts' signing keys, matchmaking's `matchmaking`) are typed, defaulted and checked
//! in that service ([`ServiceSettings`], read with [`Settings::own`]) through the same layers;
//! this module only names them ([`SERVICE_SETTINGS`]), so that a process accepts another
//! service's settings (a cluster hands every service the same `config`) and still refuses a
//! name no service reads.

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
    /// Where verifiers find the token keys.
    pub tokens: TokenSettings,
    /// The service identity this process asks accounts for (client credentials), when it calls
    /// another service as itself (the matchmaking service creating tables).
    pub service_client: ServiceClientSettings,
    /// The service these settings are for.
    #[serde(skip, default = "no_service")]
    pub service: ServiceKind,
    /// Values given for service-owned settings, read by [`Settings::own`].
    #[serde(skip)]
    own: Given,
}

fn no_service() -> ServiceKind {
    ServiceKind::Scoring
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
    /// Longest a unary call may take (clients may ask for less with `grpc-timeout`); past it the
    /// call is answered DEADLINE_EXCEEDED `deadline_exceeded` (`deadline`).
    pub request_timeout_ms: u64,
    /// Most streams (calls in flight, open update streams included) one HTTP/2 connection may
    /// have at once: advertised to the client in its SETTINGS, so the client queues further calls
    /// instead of sending them. Past about 2,000 a burst of unserved calls could exceed h2's flood
    /// budget (half the 1 MiB connection window) and the server would close the connection.
    pub max_concurrent_streams: u32,
    /// Longest the service waits for its dependencies at start before giving up.
    pub startup_timeout_ms: u64,
    /// How often dependencies are probed for the health status.
    pub probe_interval_ms: u64,
    /// How long a connection may be quiet before the server sends an HTTP/2 PING to see that the
    /// client is still there.
    pub keepalive_interval_ms: u64,
    /// How long the server waits for that PING's answer before it closes the connection: a
    /// phone that lost its network without closing frees its streams (and shows as away) after
    /// `keepalive_interval_ms` + this, not after the kernel's TCP timeout (about 15 minutes).
    pub keepalive_timeout_ms: u64,
}

/// The largest `server.max_concurrent_streams` accepted. h2 closes a connection (GOAWAY
/// `ENHANCE_YOUR_CALM`) once the small DATA frames it holds unread cost more than half its 1 MiB
/// window, up to 256 bytes each; at this many streams a burst of calls still fits.
pub const MAX_CONCURRENT_STREAMS: u32 = 2_000;

impl ServerSettings {
    /// The grace period as a duration.
    pub fn grace_period(&self) -> Duration {
        Duration::from_millis(self.grace_period_ms)
    }
}

/// PostgreSQL.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSettings {
    /// Connection URL, including the service's own database; holds a password, so it is secret.
    pub url: Secret<String>,
    /// Pool size.
    pub max_connections: u32,
    /// Create the database at start if it does not exist (local and test setups).
    pub create_if_missing: bool,
}

/// NATS with JetStream.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NatsSettings {
    /// Server URL, `nats://host:port` (`tls://` for TLS), with the credentials of a server that
    /// needs them: `nats://user:password@host:port` or `nats://token@host:port` (percent-encoded;
    /// [`NatsAddress`]). Not a secret setting, since most deployments' NATS needs none: one that
    /// does is given from a Secret (docs/operations.md), and this type's `Debug` shows the URL
    /// without its user information.
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
    /// Connection URL, `redis://host:port/db`, or `rediss://…` for TLS (the server's certificate
    /// checked against the system's CA certificates, or the file `SSL_CERT_FILE` names); may
    /// hold a password, so it is secret.
    pub url: Secret<String>,
    /// Prefix of every key this deployment writes.
    pub key_prefix: String,
}

/// Logs and traces (the `[telemetry]` section), defined by `okey-telemetry`, which `okeyctl`
/// shares.
pub use okey_telemetry::{LogFormat, TelemetrySettings};

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

/// Where verifiers find the token keys (what accounts signs with is accounts' own).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenSettings {
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

/// Settings one service reads for itself, by the service: typed, defaulted and checked in that
/// service's crate ([`ServiceSettings`]), only named here. A cluster hands every service the same
/// `config` (the Helm chart renders one), so a process skips another service's settings; a name
/// that is neither shared nor here is refused. `section.*` names a whole section.
pub const SERVICE_SETTINGS: &[(ServiceKind, &str)] = &[
    (ServiceKind::Table, "live.*"),
    (ServiceKind::Table, "database.commit_groups"),
    (ServiceKind::Accounts, "tokens.signing_keys_pem"),
    (ServiceKind::Accounts, "tokens.access_ttl_secs"),
    (ServiceKind::Accounts, "tokens.refresh_ttl_secs"),
    (ServiceKind::Accounts, "tokens.service_clients"),
    (ServiceKind::Accounts, "tokens.service_ttl_secs"),
    (ServiceKind::Accounts, "sign_in.*"),
    (ServiceKind::Matchmaking, "matchmaking.*"),
    (ServiceKind::Scoring, "rating.*"),
];

/// The service that reads `setting` for itself (see [`SERVICE_SETTINGS`]).
fn owner(setting: &str) -> Option<ServiceKind> {
    let (section, _) = setting.split_once('.')?;
    SERVICE_SETTINGS
        .iter()
        .find(|(_, name)| *name == setting || name.strip_suffix(".*").is_some_and(|s| s == section))
        .map(|(service, _)| *service)
}

/// A service's own settings, read with [`Settings::own`].
pub trait ServiceSettings: serde::de::DeserializeOwned {
    /// Its settings with their built-in defaults, as TOML (`[section]` tables); each is named for
    /// the service in [`SERVICE_SETTINGS`].
    const DEFAULTS: &'static str;

    /// Checks what types alone cannot: the setting at fault and what is wrong.
    fn check(&self) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

/// A value as it was given: a file's (typed by TOML) or an environment variable's text (typed by
/// the default of the setting it names).
#[derive(Clone)]
enum Raw {
    File(toml::Value),
    Env(String),
}

#[derive(Clone)]
struct GivenValue {
    section: String,
    key: String,
    value: Raw,
    origin: String,
}

/// Values given for service-owned settings, in the order they apply.
#[derive(Clone, Default)]
struct Given(Vec<GivenValue>);

impl Given {
    fn push(&mut self, section: String, key: String, value: Raw, origin: String) {
        self.0.push(GivenValue {
            section,
            key,
            value,
            origin,
        });
    }
}

impl fmt::Debug for Given {
    /// Names only: a value may be a secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|g| format!("{}.{}", g.section, g.key)))
            .finish()
    }
}

/// Whether the defaults hold `section.key`.
fn has(merged: &toml::Table, section: &str, key: &str) -> bool {
    merged
        .get(section)
        .and_then(toml::Value::as_table)
        .is_some_and(|t| t.contains_key(key))
}

/// The merged settings as `T`, an error naming the setting and where its value came from.
fn deserialize<T: serde::de::DeserializeOwned>(
    merged: toml::Table,
    origins: &BTreeMap<String, String>,
) -> Result<T, SettingsError> {
    serde_path_to_error::deserialize(toml::Value::Table(merged)).map_err(|e| {
        let setting = e.path().to_string();
        SettingsError::Invalid {
            origin: origin_of(&setting, origins),
            setting,
            message: e.into_inner().to_string(),
        }
    })
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
        let mut given = Given::default();

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
                    if !has(&merged, &section, &key) && owner(&setting).is_some() {
                        given.push(section.clone(), key, Raw::File(value), origin.clone());
                        continue;
                    }
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
            if !has(&merged, &section, &key) && owner(&setting).is_some() {
                given.push(section, key, Raw::Env(raw.to_owned()), origin);
                continue;
            }
            let value = typed_env_value(&merged, &section, &key, raw, &setting, &origin)?;
            set(&mut merged, &section, &key, value, &setting, &origin)?;
            origins.insert(setting, origin);
        }

        let mut settings: Settings = deserialize(merged, &origins)?;
        settings.validate(&origins)?;
        settings.service = service;
        settings.own = given;
        Ok(settings)
    }

    /// This service's own settings (`S`): its defaults, then what the file and the environment
    /// gave for them, typed and checked like the shared ones. A value given for another
    /// service's setting is left to that service; one of this service's sections that `S` does
    /// not have is [`SettingsError::Unknown`].
    ///
    /// # Panics
    /// If `S` has a setting [`SERVICE_SETTINGS`] does not name for this service: a programming
    /// error that any test of the service's settings shows.
    pub fn own<S: ServiceSettings>(&self) -> Result<S, SettingsError> {
        let mut merged: toml::Table = S::DEFAULTS
            .parse()
            .expect("a service's built-in defaults are valid TOML");
        for (section, keys) in &merged {
            for key in keys.as_table().into_iter().flat_map(|k| k.keys()) {
                let setting = format!("{section}.{key}");
                assert!(
                    owner(&setting) == Some(self.service),
                    "{setting} is not named for {} in okey_platform::settings::SERVICE_SETTINGS",
                    self.service.name()
                );
            }
        }
        let mut origins = BTreeMap::new();
        for g in &self.own.0 {
            let setting = format!("{}.{}", g.section, g.key);
            if owner(&setting) != Some(self.service) {
                continue;
            }
            let value = match &g.value {
                Raw::File(value) => value.clone(),
                Raw::Env(raw) => {
                    typed_env_value(&merged, &g.section, &g.key, raw, &setting, &g.origin)?
                }
            };
            set(&mut merged, &g.section, &g.key, value, &setting, &g.origin)?;
            origins.insert(setting, g.origin.clone());
        }
        let own: S = deserialize(merged, &origins)?;
        own.check()
            .map_err(|(setting, message)| SettingsError::Invalid {
                origin: origin_of(setting, &origins),
                setting: setting.to_owned(),
                message,
            })?;
        Ok(own)
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
        if self.server.keepalive_interval_ms == 0 {
            return Err(invalid(
                "server.keepalive_interval_ms",
                "must be at least 1",
            ));
        }
        if self.server.keepalive_timeout_ms == 0 {
            return Err(invalid("server.keepalive_timeout_ms", "must be at least 1"));
        }
        if !(1..=MAX_CONCURRENT_STREAMS).contains(&self.server.max_concurrent_streams) {
            return Err(invalid(
                "server.max_concurrent_streams",
                &format!("must be between 1 and {MAX_CONCURRENT_STREAMS}"),
            ));
        }
        if self.database.max_connections == 0 {
            return Err(invalid("database.max_connections", "must be at least 1"));
        }
        if !self.database.url.expose().starts_with("postgres://")
            && !self.database.url.expose().starts_with("postgresql://")
        {
            return Err(invalid(
                "database.url",
                "must start with postgres:// (value not shown: it is secret)",
            ));
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
        if !self.service_client.id.is_empty() && self.service_client.secret.expose().len() < 16 {
            return Err(invalid(
                "service_client.secret",
                "must be at least 16 characters when service_client.id is set (value not shown)",
            ));
        }
        if let Err(e) = self.telemetry.check_log_filter() {
            return Err(invalid(
                "telemetry.log_filter",
                &format!("{e} (directives as in RUST_LOG, for example `info,table=debug`)"),
            ));
        }
        let otlp = self.telemetry.otlp_endpoint.trim();
        let is_endpoint = |u: &url::Url| matches!(u.scheme(), "http" | "https") && u.has_host();
        if !otlp.is_empty() && !url::Url::parse(otlp).is_ok_and(|u| is_endpoint(&u)) {
            return Err(invalid(
                "telemetry.otlp_endpoint",
                "must be an OTLP/gRPC collector's URL, http://host:4317 or https://… (or empty: \
                 export nothing)",
            ));
        }
        if let Err(e) = NatsAddress::parse(&self.nats.url) {
            return Err(invalid(
                "nats.url",
                &format!("{e} (value not shown: it may hold a password)"),
            ));
        }
        let redis = self.redis.url.expose();
        if !redis.starts_with("redis://") && !redis.starts_with("rediss://") {
            return Err(invalid(
                "redis.url",
                "must start with redis:// or, for TLS, rediss:// (value not shown: it is secret)",
            ));
        }
        Ok(())
    }
}

impl fmt::Debug for NatsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = NatsAddress::parse(&self.url).map_or_else(
            |_| "[not a NATS URL: not shown]".to_owned(),
            |a| format!("{a:?}"),
        );
        f.debug_struct("NatsSettings")
            .field("url", &url)
            .field("subject_prefix", &self.subject_prefix)
            .field("events_max_age_secs", &self.events_max_age_secs)
            .finish()
    }
}

/// A NATS server's address as the client connects to it: the URL without its user information,
/// and the credentials that were in it. The NATS client reads no credentials from a URL (and
/// logs the URL it connects to at DEBUG), so they are taken out and given as options.
#[derive(Clone)]
pub struct NatsAddress {
    /// `nats://host:port` or `tls://host:port`, no user information.
    pub url: String,
    pub credentials: Option<NatsCredentials>,
}

/// The credentials of a NATS URL.
#[derive(Clone)]
pub enum NatsCredentials {
    /// `nats://user:password@host`.
    UserPassword(String, Secret<String>),
    /// `nats://token@host`.
    Token(Secret<String>),
}

impl fmt::Debug for NatsAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let credentials = match &self.credentials {
            None => "none",
            Some(NatsCredentials::UserPassword(..)) => "user and password",
            Some(NatsCredentials::Token(_)) => "token",
        };
        f.debug_struct("NatsAddress")
            .field("url", &self.url)
            .field("credentials", &credentials)
            .finish()
    }
}

impl NatsAddress {
    /// Reads `nats.url`. An error never quotes the URL (it may hold a password).
    pub fn parse(text: &str) -> Result<NatsAddress, String> {
        let text = text.trim();
        // `host:port` alone, as the NATS client takes it, is a nats:// URL.
        let text = if text.contains("://") {
            text.to_owned()
        } else {
            format!("nats://{text}")
        };
        let mut url = url::Url::parse(&text)
            .map_err(|e| format!("must be a URL such as nats://host:4222 ({e})"))?;
        if !matches!(url.scheme(), "nats" | "tls") {
            return Err("must start with nats:// or, for TLS, tls://".to_owned());
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err("must name a host: nats://host:4222".to_owned());
        }
        // A `/`, `?` or `#` in a password or token ends the URL's user information early: the
        // rest would be read as the host and a path.
        if !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some() {
            return Err(
                "must be nats://[user:password@]host:port and nothing after the port (a `/`, \
                 `?`, `#` or `@` in a password or token is written percent-encoded: %2F, %3F, \
                 %23, %40)"
                    .to_owned(),
            );
        }
        let decode = |part: &str| {
            percent_encoding::percent_decode_str(part)
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| "its user information is not UTF-8 once percent-decoded".to_owned())
        };
        let credentials = match (url.username(), url.password()) {
            ("", None) => None,
            ("", Some(_)) => return Err("has a password but no user".to_owned()),
            (token, None) => Some(NatsCredentials::Token(Secret::new(decode(token)?))),
            (user, Some(password)) => Some(NatsCredentials::UserPassword(
                decode(user)?,
                Secret::new(decode(password)?),
            )),
        };
        // Both always succeed on a URL with a host.
        let _ = url.set_username("");
        let _ = url.set_password(None);
        Ok(NatsAddress {
            url: url.as_str().trim_end_matches('/').to_owned(),
            credentials,
        })
    }
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
max_concurrent_streams = 1024
startup_timeout_ms = 60000
probe_interval_ms = 2000
keepalive_interval_ms = 20000
keepalive_timeout_ms = 10000

[database]
url = "postgres://okey:okey@127.0.0.1:55432/okey_{name}"
max_connections = 10
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
public_keys = ""
keys_url = "http://127.0.0.1:50051"
keys_ca_pem = ""
keys_refresh_secs = 300

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
    fn max_concurrent_streams_stays_within_what_h2_holds_unread() {
        let streams = |value: &str| {
            Settings::from_sources(
                ServiceKind::Matchmaking,
                None,
                [("OKEY_SERVER__MAX_CONCURRENT_STREAMS", value)],
            )
        };
        for refused in ["0", "2001"] {
            let err = streams(refused).unwrap_err().to_string();
            assert!(err.contains("server.max_concurrent_streams"), "{err}");
            assert!(err.contains("between 1 and 2000"), "{err}");
        }
        assert_eq!(streams("2000").unwrap().server.max_concurrent_streams, 2000);
        let default = Settings::from_sources(ServiceKind::Matchmaking, None, NO_ENV).unwrap();
        assert_eq!(default.server.max_concurrent_streams, 1024);
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

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Own {
        live: OwnLive,
        database: OwnDatabase,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct OwnLive {
        bot_pace_ms: u64,
        chat_burst: u64,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct OwnDatabase {
        commit_groups: u32,
    }

    impl ServiceSettings for Own {
        const DEFAULTS: &'static str =
            "[live]\nbot_pace_ms = 1500\nchat_burst = 5\n[database]\ncommit_groups = 2\n";
        fn check(&self) -> Result<(), (&'static str, String)> {
            if self.live.chat_burst == 0 {
                return Err(("live.chat_burst", "must be at least 1".into()));
            }
            Ok(())
        }
    }

    #[test]
    fn a_services_own_settings_go_through_the_same_layers() {
        let file = "[live]\nbot_pace_ms = 10\nchat_burst = 7\n";
        let env = [
            ("OKEY_LIVE__BOT_PACE_MS", "0"),
            ("OKEY_DATABASE__COMMIT_GROUPS", "3"),
        ];
        let s = Settings::from_sources(ServiceKind::Table, Some(("okey.toml", file)), env).unwrap();
        let own: Own = s.own().unwrap();
        assert_eq!(own.live.bot_pace_ms, 0, "environment beats file");
        assert_eq!(own.live.chat_burst, 7, "file beats default");
        assert_eq!(own.database.commit_groups, 3);
        let defaults: Own = Settings::from_sources(ServiceKind::Table, None, NO_ENV)
            .unwrap()
            .own()
            .unwrap();
        assert_eq!(defaults.live.bot_pace_ms, 1500);
    }

    #[test]
    fn a_services_own_setting_is_checked_and_named_with_its_origin() {
        let own = |env: [(&str, &str); 1]| {
            Settings::from_sources(ServiceKind::Table, None, env)
                .unwrap()
                .own::<Own>()
                .unwrap_err()
                .to_string()
        };
        let err = own([("OKEY_LIVE__BOT_PACE_MS", "soon")]);
        assert!(
            err.contains("live.bot_pace_ms") && err.contains("OKEY_LIVE__BOT_PACE_MS"),
            "{err}"
        );
        let err = own([("OKEY_LIVE__CHAT_BURST", "0")]);
        assert!(
            err.contains("live.chat_burst") && err.contains("at least 1"),
            "{err}"
        );
        let err = own([("OKEY_LIVE__BOT_PACE", "1")]);
        assert!(err.contains("unknown setting `live.bot_pace`"), "{err}");
    }

    #[test]
    fn another_services_settings_are_left_to_it() {
        // The chart gives every service the same config: accounts is handed the table's.
        let s = Settings::from_sources(
            ServiceKind::Accounts,
            None,
            [
                ("OKEY_LIVE__BOT_PACE_MS", "0"),
                ("OKEY_DATABASE__COMMIT_GROUPS", "x"),
            ],
        )
        .unwrap();
        assert_eq!(s.service, ServiceKind::Accounts);
        assert_eq!(owner("live.anything"), Some(ServiceKind::Table));
        assert_eq!(
            owner("tokens.signing_keys_pem"),
            Some(ServiceKind::Accounts)
        );
        assert_eq!(owner("tokens.keys_url"), None);
        assert_eq!(owner("matchmaking.tick_ms"), Some(ServiceKind::Matchmaking));
    }

    #[test]
    fn a_secret_given_for_a_service_never_shows_in_debug_output() {
        let s = Settings::from_sources(
            ServiceKind::Accounts,
            None,
            [("OKEY_TOKENS__SIGNING_KEYS_PEM", "hunter2")],
        )
        .unwrap();
        let shown = format!("{s:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("tokens.signing_keys_pem"), "{shown}");
    }

    #[test]
    fn unknown_settings_are_refused() {
        for name in [
            "OKEY_SERVER__PROT",
            "OKEY_LIEV__BOT_PACE_MS",
            "OKEY_TOKENS__SIGNING_KEY",
        ] {
            let err = Settings::from_sources(ServiceKind::Table, None, [(name, "1")]).unwrap_err();
            assert!(
                matches!(err, SettingsError::Unknown { .. }),
                "{name}: {err}"
            );
        }
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

    #[test]
    fn a_nats_url_gives_its_credentials_as_options_and_keeps_them_out_of_sight() {
        let plain = NatsAddress::parse("nats://127.0.0.1:4222").unwrap();
        assert_eq!(plain.url, "nats://127.0.0.1:4222");
        assert!(plain.credentials.is_none());
        let with_user = NatsAddress::parse("tls://okey:p%40ss%3Aword@nats.example:4222").unwrap();
        assert_eq!(with_user.url, "tls://nats.example:4222");
        assert!(matches!(
            &with_user.credentials,
            Some(NatsCredentials::UserPassword(user, password))
                if user == "okey" && password.expose() == "p@ss:word"
        ));
        let shown = format!("{with_user:?}");
        assert!(
            !shown.contains("p@ss") && !shown.contains("p%40ss"),
            "{shown}"
        );
        let settings = Settings::from_sources(
            ServiceKind::Table,
            None,
            [("OKEY_NATS__URL", "nats://okey:hunter2@nats:4222")],
        )
        .unwrap();
        let shown = format!("{settings:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("nats://nats:4222"), "{shown}");
        let token = NatsAddress::parse("nats://s3cr3t-token@nats:4222").unwrap();
        assert_eq!(token.url, "nats://nats:4222");
        assert!(matches!(
            &token.credentials,
            Some(NatsCredentials::Token(token)) if token.expose() == "s3cr3t-token"
        ));
        let bare = NatsAddress::parse("127.0.0.1:4222").unwrap();
        assert_eq!(bare.url, "nats://127.0.0.1:4222");
        for bad in [
            "http://u:hunter2@h:1",
            "ws://h:1",
            "nats:/h",
            "nats://:hunter2@h:1",
            // Unencoded `/`, `?`, `#` in a secret: it would be read as host and path.
            "nats://ab+c/hunter2==@nats:4222",
            "nats://okey:12/hunter2@h",
            "nats://tok?hunter2@h",
            "nats://tok#hunter2@h",
        ] {
            let err = NatsAddress::parse(bad).unwrap_err();
            assert!(!err.contains("hunter2"), "{err}");
        }
    }

    #[test]
    fn a_bad_nats_url_stops_start_up_naming_the_setting_and_not_the_value() {
        let err = Settings::from_sources(
            ServiceKind::Table,
            None,
            [("OKEY_NATS__URL", "http://u:hunter2@h:1")],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("nats.url"), "{err}");
        assert!(err.contains("OKEY_NATS__URL"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn a_bad_log_filter_or_collector_url_stops_start_up_naming_where_it_came_from() {
        for (variable, value, setting) in [
            (
                "OKEY_TELEMETRY__LOG_FILTER",
                "info,[[[",
                "telemetry.log_filter",
            ),
            (
                "OKEY_TELEMETRY__OTLP_ENDPOINT",
                "not-a-url",
                "telemetry.otlp_endpoint",
            ),
            (
                "OKEY_TELEMETRY__OTLP_ENDPOINT",
                "ftp://collector:4317",
                "telemetry.otlp_endpoint",
            ),
        ] {
            let err = Settings::from_sources(ServiceKind::Table, None, [(variable, value)])
                .unwrap_err()
                .to_string();
            assert!(err.contains(setting) && err.contains(variable), "{err}");
        }
        let fine = Settings::from_sources(
            ServiceKind::Table,
            None,
            [
                ("OKEY_TELEMETRY__LOG_FILTER", "info,table=debug"),
                ("OKEY_TELEMETRY__OTLP_ENDPOINT", "http://collector:4317"),
            ],
        );
        assert!(fine.is_ok(), "{:?}", fine.err());
    }
}
