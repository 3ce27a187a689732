//! Access-token verification and the authentication layer every service mounts.
//!
//! Tokens are EdDSA JWTs whose `kid` picks one of several public keys, so keys can rotate without
//! signing anyone out. The accounts service issues them and serves the public keys
//! (`ListPublicKeys`); the other services poll those keys ([`AuthLayer::from_settings`]) and never
//! hold a secret. [`AuthLayer`] checks the token of every call against the service's
//! [`AccessTable`] (full gRPC method path → who may call it), puts the [`Caller`] on the request
//! extensions and refuses with UNAUTHENTICATED or PERMISSION_DENIED before any handler runs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

pub use crate::jwks::{KeySetError, PublicJwk, PublicKeySet};
use crate::settings::{AuthSettings, Settings};
use crate::status;

/// The claims of an access token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The player id (`players/{sub}`).
    pub sub: String,
    /// Roles: `player`, `support`, `analyst`, `admin`.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Issuer.
    pub iss: String,
    /// Audience.
    pub aud: String,
    /// Expiry, seconds since the Unix epoch.
    pub exp: u64,
    /// Not valid before, seconds since the Unix epoch.
    pub nbf: u64,
    /// Issued at, seconds since the Unix epoch.
    pub iat: u64,
    /// The player's display name when the token was issued (what other players see of them,
    /// for example at a table). Tokens without it stay valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// This token's own id (random), so no two tokens are the same, even two issued to one
    /// player in the same second. Tokens without it stay valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jti: Option<String>,
}

/// Why a token was refused. Every variant maps to UNAUTHENTICATED.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The token is not a JWT or its header cannot be read.
    #[error("malformed token")]
    Malformed,
    /// The header has no `kid`.
    #[error("token has no key id")]
    MissingKeyId,
    /// No key with this `kid` is known.
    #[error("unknown key id")]
    UnknownKey,
    /// The token has expired.
    #[error("token expired")]
    Expired,
    /// Signature, algorithm, issuer, audience or `nbf` check failed.
    #[error("token refused: {0}")]
    Invalid(String),
}

impl From<AuthError> for tonic::Status {
    fn from(error: AuthError) -> Self {
        let reason = match error {
            AuthError::Expired => status::Reason::TokenExpired,
            _ => status::Reason::TokenInvalid,
        };
        status::error(reason, error.to_string())
    }
}

/// The trusted public keys by `kid`, and a generation bumped by every change to them (so a
/// token verified under an older key set is checked again).
#[derive(Default)]
struct KeySet {
    /// `kid` → (JWK `x`, the key it decodes to).
    keys: HashMap<String, (String, DecodingKey)>,
    generation: u64,
}

/// A token whose signature and claims were checked, remembered until it expires.
struct Verified {
    claims: Claims,
    /// The key set's generation it was checked under.
    generation: u64,
}

/// How many verified tokens a verifier remembers (a few hundred bytes each). When full, expired
/// ones are dropped first; if that is not enough, all are forgotten and checked again.
const VERIFIED_CAPACITY: usize = 65_536;

/// Checks access tokens against a set of EdDSA public keys looked up by `kid`.
///
/// Checking an Ed25519 signature is the costliest step of a call (tens of microseconds), and a
/// client sends the same token with every call until it refreshes it. So a token that passed is
/// remembered, byte for byte, until its `exp` (plus the leeway): the same token again is only
/// checked for expiry. Any change to the key set (a rotation, a removed key) forgets what was
/// verified under the old set. A refused token is never remembered.
#[derive(Clone)]
pub struct TokenVerifier {
    keys: Arc<RwLock<KeySet>>,
    verified: Arc<Mutex<HashMap<String, Verified>>>,
    validation: Validation,
}

impl std::fmt::Debug for TokenVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kids: Vec<String> = self
            .keys
            .read()
            .map(|k| k.keys.keys().cloned().collect())
            .unwrap_or_default();
        f.debug_struct("TokenVerifier")
            .field("kids", &kids)
            .finish()
    }
}

impl TokenVerifier {
    /// A verifier with no keys yet, checking issuer, audience, `exp` and `nbf` as configured.
    pub fn new(settings: &AuthSettings) -> Self {
        // Only EdDSA: `alg: none`, HS256 signed with the public key, and RS256 are all refused.
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.set_issuer(&[&settings.issuer]);
        validation.set_audience(&[&settings.audience]);
        validation.set_required_spec_claims(&["exp", "nbf", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = settings.leeway_secs;
        TokenVerifier {
            keys: Arc::default(),
            verified: Arc::default(),
            validation,
        }
    }

    /// Adds (or replaces) an Ed25519 public key given as the JWK `x` value (base64url).
    pub fn insert_ed25519_key(&self, kid: &str, x: &str) -> Result<(), AuthError> {
        let key =
            DecodingKey::from_ed_components(x).map_err(|e| AuthError::Invalid(e.to_string()))?;
        let mut set = self.keys.write().expect("key set lock poisoned");
        set.keys.insert(kid.to_owned(), (x.to_owned(), key));
        set.generation += 1;
        Ok(())
    }

    /// Replaces the whole key set with `keys` (`kid`, JWK `x`); entries that do not parse are
    /// skipped with an error log. Returns how many keys are now trusted.
    pub fn replace_keys<'a>(&self, keys: impl IntoIterator<Item = (&'a str, &'a str)>) -> usize {
        replace_keys_in(&self.keys, keys)
    }

    /// The key ids trusted now.
    pub fn key_ids(&self) -> Vec<String> {
        let mut kids: Vec<String> = self
            .keys
            .read()
            .expect("key set lock poisoned")
            .keys
            .keys()
            .cloned()
            .collect();
        kids.sort();
        kids
    }

    /// Forgets a retired key; tokens it signed are refused from now on.
    pub fn remove_key(&self, kid: &str) {
        let mut set = self.keys.write().expect("key set lock poisoned");
        set.keys.remove(kid);
        set.generation += 1;
    }

    /// Checks a token (without the `Bearer ` prefix) and returns its claims. A token verified
    /// before under the same key set is answered from memory while it has not expired.
    pub fn verify(&self, token: &str) -> Result<Claims, AuthError> {
        let generation = self.keys.read().expect("key set lock poisoned").generation;
        let now = jsonwebtoken::get_current_timestamp();
        if let Some(known) = self
            .verified
            .lock()
            .expect("verified tokens lock poisoned")
            .get(token)
            .filter(|v| v.generation == generation)
        {
            // The same test as the full check: expired once `exp` is more than the leeway ago.
            if known.claims.exp < now.saturating_sub(self.validation.leeway) {
                return Err(AuthError::Expired);
            }
            return Ok(known.claims.clone());
        }
        let header = decode_header(token).map_err(|_| AuthError::Malformed)?;
        let kid = header.kid.ok_or(AuthError::MissingKeyId)?;
        let (key, generation) = {
            let set = self.keys.read().expect("key set lock poisoned");
            let (_, key) = set.keys.get(&kid).cloned().ok_or(AuthError::UnknownKey)?;
            (key, set.generation)
        };
        let claims = decode::<Claims>(token, &key, &self.validation)
            .map(|data| data.claims)
            .map_err(|e| match e.kind() {
                ErrorKind::ExpiredSignature => AuthError::Expired,
                _ => AuthError::Invalid(e.to_string()),
            })?;
        self.remember(token, &claims, generation, now);
        Ok(claims)
    }

    /// Remembers a token that passed, making room if the memory is full.
    fn remember(&self, token: &str, claims: &Claims, generation: u64, now: u64) {
        let mut verified = self.verified.lock().expect("verified tokens lock poisoned");
        if verified.len() >= VERIFIED_CAPACITY {
            let leeway = self.validation.leeway;
            verified.retain(|_, v| {
                v.generation == generation && v.claims.exp >= now.saturating_sub(leeway)
            });
            if verified.len() >= VERIFIED_CAPACITY {
                verified.clear();
            }
        }
        verified.insert(
            token.to_owned(),
            Verified {
                claims: claims.clone(),
                generation,
            },
        );
    }
}

fn replace_keys_in<'a>(
    map: &RwLock<KeySet>,
    keys: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> usize {
    let mut parsed = HashMap::new();
    for (kid, x) in keys {
        match DecodingKey::from_ed_components(x) {
            Ok(key) => {
                parsed.insert(kid.to_owned(), (x.to_owned(), key));
            }
            Err(e) => tracing::error!(kid, error = %e, "public key skipped: not Ed25519"),
        }
    }
    let count = parsed.len();
    let mut set = map.write().expect("key set lock poisoned");
    // An unchanged set (the usual poll) keeps what was verified under it.
    let same = set.keys.len() == parsed.len()
        && parsed
            .iter()
            .all(|(kid, (x, _))| set.keys.get(kid).is_some_and(|(known, _)| known == x));
    if !same {
        set.keys = parsed;
        set.generation += 1;
    }
    count
}

// ---- Roles and callers ---------------------------------------------------------------------

/// What a caller may do. `admin` may do everything any other role may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Plays games.
    Player,
    /// Helps players: reads accounts and tables.
    Support,
    /// Reads finished hands, ledgers and statistics of everyone.
    Analyst,
    /// Everything.
    Admin,
    /// A service identity (the matchmaking service): creates tables and seats the players it
    /// matched. Only service tokens (accounts' `IssueServiceToken`) carry it.
    Matchmaker,
}

impl Role {
    /// Every role.
    pub const ALL: [Role; 5] = [
        Role::Player,
        Role::Support,
        Role::Analyst,
        Role::Admin,
        Role::Matchmaker,
    ];

    /// The claim and database spelling: `player`, `support`, `analyst`, `admin`, `matchmaker`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Support => "support",
            Role::Analyst => "analyst",
            Role::Admin => "admin",
            Role::Matchmaker => "matchmaker",
        }
    }

    /// Reads the spelling of [`Self::as_str`].
    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == text)
    }
}

/// Who is calling, as the verified access token says. [`AuthLayer`] puts it on the request
/// extensions of every authenticated call: `request.extensions().get::<Caller>()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The player id (the token's `sub`; resource name `players/{player_id}`).
    pub player_id: String,
    /// The caller's roles (unknown role names in the token are dropped).
    pub roles: Vec<Role>,
    /// When the token expires, seconds since the Unix epoch.
    pub expires_at: u64,
    /// The display name the token carries (its `name` claim), if any and if it is one a display
    /// name may be now ([`crate::fields::display_name`]): a name accounts accepted under an older,
    /// laxer check is left out, so the seat goes nameless instead of the call failing.
    pub name: Option<String>,
}

impl Caller {
    /// The caller of a verified token.
    pub fn from_claims(claims: &Claims) -> Caller {
        let mut roles: Vec<Role> = claims.roles.iter().filter_map(|r| Role::parse(r)).collect();
        roles.sort();
        roles.dedup();
        Caller {
            player_id: claims.sub.clone(),
            roles,
            expires_at: claims.exp,
            name: claims
                .name
                .as_deref()
                .and_then(|name| crate::fields::display_name(name).ok())
                .filter(|name| !name.is_empty())
                .map(str::to_owned),
        }
    }

    /// The caller's own player account. A token whose subject is no account id (a staff or
    /// service identity, `okeyctl token`'s default) has none: NOT_FOUND `player_not_found`, not
    /// UNAUTHENTICATED (the token is good; refreshing it would not help).
    pub fn account(&self) -> Result<sqlx::types::Uuid, tonic::Status> {
        sqlx::types::Uuid::parse_str(&self.player_id).map_err(|_| {
            status::error(
                status::Reason::PlayerNotFound,
                format!(
                    "the token's subject `{}` is not a player account: this call acts on the \
                     caller's own account (sign in as a player)",
                    crate::fields::quoted(&self.player_id)
                ),
            )
        })
    }

    /// True when the caller has `role`, or is an admin.
    pub fn has_role(&self, role: Role) -> bool {
        self.roles.contains(&role) || self.roles.contains(&Role::Admin)
    }
}

// ---- Access tables -------------------------------------------------------------------------

/// Who may call a gRPC method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone, without a token (sign-in, key listing, health, reflection).
    Public,
    /// A caller with a valid token holding at least one of these roles (admin always passes);
    /// an empty list means any signed-in caller.
    Roles(&'static [Role]),
}

impl Access {
    /// Any signed-in caller, whatever their roles.
    pub const SIGNED_IN: Access = Access::Roles(&[]);
    /// Any signed-in person (player, support, analyst or admin), never a service identity: a
    /// service token (role `matchmaker` only) is refused with `role_required`. For the calls a
    /// person makes at a table or in a queue (sit, play, chat, watch, look for a table).
    pub const PERSON: Access = Access::Roles(&[Role::Player, Role::Support, Role::Analyst]);
    /// A player (or admin): for the calls that take part in a game (look for a table, join a
    /// room, sit, play, chat). Support and analyst tokens watch and read; they do not play.
    pub const PLAYER: Access = Access::Roles(&[Role::Player]);
}

/// The platform's own methods, public on every service: load balancers and `grpcurl` call them
/// without a token.
pub const PLATFORM_PUBLIC_METHODS: [&str; 4] = [
    "/grpc.health.v1.Health/Check",
    "/grpc.health.v1.Health/Watch",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
];

/// What each method of a service requires, by full gRPC path (`/okey.v1.TableService/JoinSeat`).
/// A path missing from the table is not a method of the service: UNIMPLEMENTED `unknown_method`
/// for every caller, token or not. A service refuses to start when one of its contract's methods
/// is missing ([`AccessTable::unlisted`]), so a new RPC cannot be forgotten.
#[derive(Debug, Clone, Default)]
pub struct AccessTable {
    methods: HashMap<String, Access>,
}

impl AccessTable {
    /// The service's methods plus [`PLATFORM_PUBLIC_METHODS`].
    pub fn new(entries: &[(&str, Access)]) -> AccessTable {
        let mut methods: HashMap<String, Access> = PLATFORM_PUBLIC_METHODS
            .iter()
            .map(|m| ((*m).to_owned(), Access::Public))
            .collect();
        methods.extend(entries.iter().map(|(m, a)| ((*m).to_owned(), *a)));
        AccessTable { methods }
    }

    /// What `path` requires; `None` when it is not a method of the service.
    pub fn access(&self, path: &str) -> Option<Access> {
        self.methods.get(path).copied()
    }

    /// The methods of `services` (full names, `okey.v1.TableService`) in the okey.v1 contract
    /// that this table does not list, as gRPC paths.
    pub fn unlisted(&self, services: &[&str]) -> Vec<String> {
        okey_proto::methods_of(services)
            .into_iter()
            .map(|m| m.path)
            .filter(|path| !self.methods.contains_key(path))
            .collect()
    }
}

// ---- The tower layer -----------------------------------------------------------------------

/// Shortest time between two fetches of the public keys, however many unknown `kid`s arrive.
const MIN_FETCH_GAP: Duration = Duration::from_secs(1);
/// Longest wait between retries while the accounts service does not answer.
const MAX_FETCH_BACKOFF: Duration = Duration::from_secs(30);

struct AuthState {
    verifier: TokenVerifier,
    table: AccessTable,
    /// Wakes the key poller early (a token named an unknown `kid`).
    refresh: Option<Arc<Notify>>,
}

/// The authentication layer: verifies the bearer token (signature by `kid`, algorithm pinned to
/// EdDSA, `exp`, `nbf`, `iss`, `aud`), puts the [`Caller`] on the request extensions and enforces
/// the service's [`AccessTable`]. Mounted by [`crate::ServiceHost::with_auth`].
#[derive(Clone)]
pub struct AuthLayer {
    state: Arc<AuthState>,
}

impl std::fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthLayer")
            .field("verifier", &self.state.verifier)
            .finish()
    }
}

impl AuthLayer {
    /// A layer over a verifier whose keys the caller manages (the accounts service holds its
    /// own signing keys).
    pub fn new(verifier: TokenVerifier, table: AccessTable) -> AuthLayer {
        AuthLayer {
            state: Arc::new(AuthState {
                verifier,
                table,
                refresh: None,
            }),
        }
    }

    /// The layer every service but accounts mounts: trusts the keys of `tokens.public_keys` and,
    /// when `tokens.keys_url` is set, polls the accounts service's `ListPublicKeys` every
    /// `tokens.keys_refresh_secs` (and soon after a token names an unknown `kid`). Needs a tokio
    /// runtime; the poller stops when the layer is dropped.
    pub fn from_settings(settings: &Settings, table: AccessTable) -> AuthLayer {
        let verifier = TokenVerifier::new(&settings.auth);
        // Validated when the settings were loaded.
        let fixed = PublicKeySet::parse(&settings.tokens.public_keys).unwrap_or_default();
        verifier.replace_keys(fixed.keys.iter().map(|k| (k.kid.as_str(), k.x.as_str())));
        let url = settings.tokens.keys_url.trim().to_owned();
        let refresh = if url.is_empty() {
            None
        } else {
            if url.starts_with("http://") && !is_loopback(&url) {
                tracing::warn!(
                    %url,
                    "token keys are fetched over plaintext http: whoever can answer on that path \
                     can have any token accepted; use https (tokens.keys_url, tokens.keys_ca_pem)"
                );
            }
            let notify = Arc::new(Notify::new());
            tokio::spawn(poll_public_keys(
                Arc::downgrade(&verifier.keys),
                fixed,
                KeysSource {
                    url,
                    ca_pem: settings.tokens.keys_ca_pem.trim().to_owned(),
                },
                Duration::from_secs(settings.tokens.keys_refresh_secs),
                notify.clone(),
            ));
            Some(notify)
        };
        AuthLayer {
            state: Arc::new(AuthState {
                verifier,
                table,
                refresh,
            }),
        }
    }

    /// The methods of `services` in the contract that this layer's access table does not list
    /// ([`AccessTable::unlisted`]).
    pub fn unlisted(&self, services: &[&str]) -> Vec<String> {
        self.state.table.unlisted(services)
    }

    /// The verifier this layer checks tokens with (its keys follow the poller), for handlers
    /// that check tokens themselves.
    pub fn verifier(&self) -> TokenVerifier {
        self.state.verifier.clone()
    }

    /// Checks one call: `Ok(None)` for a public method, `Ok(Some(caller))` for an authorized one,
    /// otherwise the status to answer with.
    pub fn authorize(
        &self,
        path: &str,
        headers: &http::HeaderMap,
    ) -> Result<Option<Caller>, tonic::Status> {
        let required = match self.state.table.access(path) {
            Some(Access::Public) => return Ok(None),
            Some(Access::Roles(roles)) => roles,
            None => {
                return Err(status::error(
                    status::Reason::UnknownMethod,
                    format!(
                        "`{path}` is not a method of this service: check the service's address \
                         and the method's name (server reflection lists the methods)"
                    ),
                ));
            }
        };
        let token = bearer_token(headers)
            .map_err(|problem| status::error(status::Reason::TokenInvalid, problem))?;
        let claims = match self.state.verifier.verify(token) {
            Ok(claims) => claims,
            Err(error) => {
                if matches!(error, AuthError::UnknownKey)
                    && let Some(refresh) = &self.state.refresh
                {
                    refresh.notify_one();
                }
                tracing::info!(method = path, %error, "call refused: token");
                return Err(error.into());
            }
        };
        let caller = Caller::from_claims(&claims);
        if !required.is_empty() && !required.iter().any(|r| caller.has_role(*r)) {
            let needed: Vec<&str> = required.iter().map(|r| r.as_str()).collect();
            tracing::info!(method = path, player = %caller.player_id, ?needed, "call refused: role");
            return Err(status::with_metadata(
                status::Reason::RoleRequired,
                HashMap::from([("roles".to_owned(), needed.join(","))]),
                format!("this call needs the role {}", needed.join(" or ")),
            ));
        }
        Ok(Some(caller))
    }
}

/// The token of the one `authorization: Bearer <token>` header, or what is wrong with the
/// header. Two headers are refused rather than one of them picked: a proxy or a log that reads
/// the other would see another caller than the one checked.
fn bearer_token(headers: &http::HeaderMap) -> Result<&str, &'static str> {
    const NEEDED: &str = "this call needs `authorization: Bearer <access token>`";
    let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
    let value = values.next().ok_or(NEEDED)?;
    if values.next().is_some() {
        return Err("the call has more than one `authorization` header: send exactly one");
    }
    let (scheme, token) = value
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .ok_or(NEEDED)?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
        .ok_or(NEEDED)
}

/// Where the public keys are fetched from: `tokens.keys_url` and, for https, the CA to trust.
struct KeysSource {
    url: String,
    ca_pem: String,
}

/// Whether `url`'s host is a loopback address (plaintext there stays on the machine).
pub fn is_loopback(url: &str) -> bool {
    let Ok(uri) = url.parse::<http::Uri>() else {
        return false;
    };
    let host = uri.host().unwrap_or_default();
    host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Keeps `verifier` in step with the accounts service's public keys until the layer is dropped.
/// A failed fetch keeps the keys already known.
async fn poll_public_keys(
    keys: Weak<RwLock<KeySet>>,
    fixed: PublicKeySet,
    source: KeysSource,
    interval: Duration,
    wake: Arc<Notify>,
) {
    // Only a weak handle is held, so dropping the layer ends the task.
    let mut backoff = Duration::from_millis(200);
    loop {
        let wait = match fetch_public_keys(&source.url, &source.ca_pem).await {
            Ok(fetched) => {
                let all: Vec<(&str, &str)> = fixed
                    .keys
                    .iter()
                    .chain(fetched.keys.iter())
                    .map(|k| (k.kid.as_str(), k.x.as_str()))
                    .collect();
                let Some(keys) = keys.upgrade() else { return };
                let count = replace_keys_in(&keys, all);
                tracing::debug!(count, "public keys refreshed");
                backoff = Duration::from_millis(200);
                interval
            }
            Err(error) => {
                let url = &source.url;
                tracing::warn!(%url, %error, retry_in = ?backoff, "cannot fetch the public keys");
                let wait = backoff;
                backoff = (backoff * 2).min(MAX_FETCH_BACKOFF);
                wait
            }
        };
        if keys.strong_count() == 0 {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = wake.notified() => tokio::time::sleep(MIN_FETCH_GAP).await,
        }
    }
}

/// One call to `ListPublicKeys` at `url` (`tokens.keys_url`). Over `https://` the server's
/// certificate must chain to `ca_pem` (PEM certificates, `tokens.keys_ca_pem`) or, when that is
/// empty, to one of the system's trusted roots.
pub async fn fetch_public_keys(url: &str, ca_pem: &str) -> Result<PublicKeySet, String> {
    use okey_proto::v1::ListPublicKeysRequest;
    use okey_proto::v1::accounts_service_client::AccountsServiceClient;
    use tonic::transport::{Certificate, ClientTlsConfig};
    let mut endpoint = tonic::transport::Endpoint::from_shared(url.to_owned())
        .map_err(|e| e.to_string())?
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(5));
    if url.starts_with("https://") {
        let tls = if ca_pem.trim().is_empty() {
            ClientTlsConfig::new().with_native_roots()
        } else {
            ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca_pem))
        };
        endpoint = endpoint.tls_config(tls).map_err(|e| e.to_string())?;
    }
    let channel = endpoint.connect().await.map_err(|e| {
        // The transport error's own text is terse ("transport error"): name the cause too.
        let cause = std::error::Error::source(&e).map(ToString::to_string);
        match cause {
            Some(cause) => format!("{e}: {cause}"),
            None => e.to_string(),
        }
    })?;
    let response = AccountsServiceClient::new(crate::telemetry::traced(channel, url))
        .list_public_keys(ListPublicKeysRequest {})
        .await
        .map_err(|e| format!("{}: {}", e.code(), e.message()))?
        .into_inner();
    Ok(PublicKeySet {
        keys: response
            .keys
            .into_iter()
            .filter(|k| k.kty == "OKP" && k.crv == "Ed25519")
            .map(|k| PublicJwk {
                kid: k.kid,
                kty: k.kty,
                crv: k.crv,
                x: k.x,
            })
            .collect(),
    })
}

impl<S> tower::Layer<S> for AuthLayer {
    type Service = Authenticated<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Authenticated {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service made by [`AuthLayer`].
#[derive(Clone)]
pub struct Authenticated<S> {
    inner: S,
    layer: AuthLayer,
}

impl<S, ReqBody, ResBody> tower::Service<http::Request<ReqBody>> for Authenticated<S>
where
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResBody: Default + Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<S::Response, S::Error>> + Send + 'static>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<ReqBody>) -> Self::Future {
        match self
            .layer
            .authorize(request.uri().path(), request.headers())
        {
            Ok(caller) => {
                if let Some(caller) = caller {
                    request.extensions_mut().insert(caller);
                }
                Box::pin(self.inner.call(request))
            }
            Err(status) => {
                let response = status.into_http::<ResBody>();
                Box::pin(std::future::ready(Ok(response)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::{EncodingKey, Header, encode};

    use super::*;

    // A throwaway key made for these tests only.
    const TEST_PRIVATE_PEM: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJi6Ge+J9RqoKbFw5stiulvbi2nz13CYgJYadTl1BfmF
-----END PRIVATE KEY-----";
    const TEST_PUBLIC_X: &str = "Uhp-VQQKh77uODzvYuRej2naFoy6TYtg6qgH5oRHrkA";

    fn settings() -> AuthSettings {
        AuthSettings {
            issuer: "okey-accounts".into(),
            audience: "okey".into(),
            leeway_secs: 0,
        }
    }

    fn now() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    fn claims() -> Claims {
        Claims {
            sub: "p1".into(),
            roles: vec!["player".into()],
            iss: "okey-accounts".into(),
            aud: "okey".into(),
            exp: now() + 300,
            nbf: now() - 1,
            iat: now(),
            name: Some("Ayşe".into()),
            jti: Some("a1".into()),
        }
    }

    fn sign(kid: Option<&str>, claims: &Claims) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = kid.map(str::to_owned);
        let key = EncodingKey::from_ed_pem(TEST_PRIVATE_PEM.as_bytes()).unwrap();
        encode(&header, claims, &key).unwrap()
    }

    fn verifier() -> TokenVerifier {
        let v = TokenVerifier::new(&settings());
        v.insert_ed25519_key("k1", TEST_PUBLIC_X).unwrap();
        v
    }

    #[test]
    fn only_loopback_hosts_count_as_on_this_machine() {
        for url in [
            "http://127.0.0.1:50051",
            "http://localhost:50051",
            "http://[::1]:50051",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "http://accounts:50051",
            "http://10.0.0.7:50051",
            "not a url",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    #[test]
    fn a_good_token_passes() {
        let claims = claims();
        let verified = verifier().verify(&sign(Some("k1"), &claims)).unwrap();
        assert_eq!(verified, claims);
        assert_eq!(Caller::from_claims(&verified).name.as_deref(), Some("Ayşe"));
        // A token without a name (issued before names were carried) still passes.
        let unnamed = Claims {
            name: None,
            ..claims
        };
        let verified = verifier().verify(&sign(Some("k1"), &unnamed)).unwrap();
        assert_eq!(Caller::from_claims(&verified).name, None);
        // A name a display name may not be now is left out: the seat goes nameless.
        for (name, kept) in [
            ("\u{200B}", None),
            ("A\u{202E}", None),
            ("  ", None),
            (" Ayşe ", Some("Ayşe")),
        ] {
            let named = Claims {
                name: Some(name.to_owned()),
                ..unnamed.clone()
            };
            assert_eq!(
                Caller::from_claims(&named).name.as_deref(),
                kept,
                "{name:?}"
            );
        }
    }

    #[test]
    fn unknown_or_missing_kid_is_refused() {
        assert!(matches!(
            verifier().verify(&sign(Some("k2"), &claims())),
            Err(AuthError::UnknownKey)
        ));
        assert!(matches!(
            verifier().verify(&sign(None, &claims())),
            Err(AuthError::MissingKeyId)
        ));
    }

    #[test]
    fn expired_wrong_issuer_and_wrong_audience_are_refused() {
        let mut expired = claims();
        expired.exp = now() - 10;
        assert!(matches!(
            verifier().verify(&sign(Some("k1"), &expired)),
            Err(AuthError::Expired)
        ));
        let mut issuer = claims();
        issuer.iss = "someone-else".into();
        assert!(verifier().verify(&sign(Some("k1"), &issuer)).is_err());
        let mut audience = claims();
        audience.aud = "other".into();
        assert!(verifier().verify(&sign(Some("k1"), &audience)).is_err());
    }

    #[test]
    fn a_tampered_token_is_refused() {
        let token = sign(Some("k1"), &claims());
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        let mut forged = claims();
        forged.roles = vec!["admin".into()];
        let forged_token = sign(Some("k1"), &forged);
        parts[1] = forged_token.split('.').nth(1).unwrap().to_owned();
        assert!(verifier().verify(&parts.join(".")).is_err());
    }

    #[test]
    fn a_removed_key_no_longer_verifies() {
        let v = verifier();
        v.remove_key("k1");
        assert!(matches!(
            v.verify(&sign(Some("k1"), &claims())),
            Err(AuthError::UnknownKey)
        ));
    }

    #[test]
    fn a_remembered_token_is_refused_once_its_key_is_removed_or_rotated_out() {
        let v = verifier();
        let token = sign(Some("k1"), &claims());
        assert!(v.verify(&token).is_ok());
        assert!(
            v.verify(&token).is_ok(),
            "the second check is answered from memory"
        );
        v.remove_key("k1");
        assert!(matches!(v.verify(&token), Err(AuthError::UnknownKey)));

        let v = verifier();
        assert!(v.verify(&token).is_ok());
        // A rotation that no longer trusts k1 (the poller replaces the whole set).
        assert_eq!(v.replace_keys([("k2", TEST_PUBLIC_X)]), 1);
        assert!(matches!(v.verify(&token), Err(AuthError::UnknownKey)));
        // Polling the same set again keeps what was verified under it.
        let t2 = sign(Some("k2"), &claims());
        assert!(v.verify(&t2).is_ok());
        assert_eq!(v.replace_keys([("k2", TEST_PUBLIC_X)]), 1);
        assert_eq!(v.verified.lock().unwrap().len(), 2);
        assert!(v.verify(&t2).is_ok());
    }

    #[test]
    fn a_path_that_is_no_method_is_unimplemented_for_everyone() {
        let table =
            AccessTable::new(&[("/okey.v1.ScoringService/ListStandings", Access::SIGNED_IN)]);
        let layer = AuthLayer::new(verifier(), table.clone());
        let mut signed_in = http::HeaderMap::new();
        let bearer = format!("Bearer {}", sign(Some("k1"), &claims()));
        signed_in.insert(http::header::AUTHORIZATION, bearer.parse().unwrap());
        for headers in [http::HeaderMap::new(), signed_in.clone()] {
            let refused = layer
                .authorize("/okey.v1.ScoringService/NoSuchMethod", &headers)
                .unwrap_err();
            assert_eq!(refused.code(), tonic::Code::Unimplemented);
            assert!(status::is(&refused, status::Reason::UnknownMethod));
        }
        assert!(
            layer
                .authorize("/okey.v1.ScoringService/ListStandings", &signed_in)
                .is_ok()
        );
        // Two authorization headers, even both valid: refused, neither picked.
        let mut twice = signed_in.clone();
        twice.append(http::header::AUTHORIZATION, bearer.parse().unwrap());
        let refused = layer
            .authorize("/okey.v1.ScoringService/ListStandings", &twice)
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated);
        assert!(status::is(&refused, status::Reason::TokenInvalid));
        assert!(refused.message().contains("more than one"), "{refused:?}");
        // A token as large as the server's header limit lets through (tests/headers.rs shows it
        // reaches the service) is refused as any malformed token is: token_invalid.
        let mut huge = http::HeaderMap::new();
        let padded = format!("Bearer {}", "A".repeat(60 * 1024));
        huge.insert(http::header::AUTHORIZATION, padded.parse().unwrap());
        let refused = layer
            .authorize("/okey.v1.ScoringService/ListStandings", &huge)
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated);
        assert!(status::is(&refused, status::Reason::TokenInvalid));
        // Health and reflection are listed on every service.
        assert!(matches!(
            layer.authorize("/grpc.health.v1.Health/Check", &http::HeaderMap::new()),
            Ok(None)
        ));
        // The contract's methods the table leaves out are named.
        let unlisted = table.unlisted(&["okey.v1.ScoringService"]);
        assert!(!unlisted.is_empty());
        assert!(
            unlisted
                .iter()
                .all(|p| p.starts_with("/okey.v1.ScoringService/"))
        );
        assert!(!unlisted.contains(&"/okey.v1.ScoringService/ListStandings".to_owned()));
        assert!(table.unlisted(&["okey.v1.NoSuchService"]).is_empty());
    }

    #[test]
    fn a_remembered_token_expires_on_time() {
        let v = verifier();
        let mut short = claims();
        short.exp = now() + 1;
        let token = sign(Some("k1"), &short);
        assert!(v.verify(&token).is_ok());
        std::thread::sleep(std::time::Duration::from_millis(2100));
        assert!(matches!(v.verify(&token), Err(AuthError::Expired)));
    }

    #[test]
    fn a_full_memory_drops_expired_tokens_first() {
        let v = verifier();
        let generation = v.keys.read().unwrap().generation;
        let mut old = claims();
        old.exp = now() - 100;
        for i in 0..VERIFIED_CAPACITY {
            v.verified.lock().unwrap().insert(
                format!("t{i}"),
                Verified {
                    claims: if i == 0 { claims() } else { old.clone() },
                    generation,
                },
            );
        }
        let token = sign(Some("k1"), &claims());
        assert!(v.verify(&token).is_ok());
        let verified = v.verified.lock().unwrap();
        assert_eq!(verified.len(), 2, "the live token and the new one stay");
        assert!(verified.contains_key("t0") && verified.contains_key(&token));
    }

    #[test]
    fn refusals_become_unauthenticated() {
        let status: tonic::Status = AuthError::Expired.into();
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
    }
}
