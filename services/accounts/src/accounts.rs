//! What the accounts service does: guests, upgrades, sign-in, rotating refresh tokens, profiles,
//! statistics reads. Plain types in, plain types out; `grpc` converts them.
//!
//! Refresh tokens: 32 random bytes, given to the client once and stored only as a SHA-256 hash.
//! Every sign-in starts a family; RefreshSession marks the presented token used and issues its
//! child in the same family. A used token presented again means it was copied: the whole family
//! is revoked and the caller gets `refresh_token_reused`. The one exception is a retry of the
//! same rotation (same client request id) while the child it made is still unused: that child is
//! revoked and a new one issued. Once the child has been used, the retry is a reuse like any
//! other, so a copied token and request id cannot fork a family that goes on elsewhere.
//!
//! Client request ids: tokens are never stored, so a retried sign-in (guest, password, upgrade)
//! signs in again and returns a new session. What is kept in `handled_requests` is what a retry
//! must answer the same: which call created a guest (`created`), that an upgrade was made, and the
//! profile an UpdateProfile answered.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, SubsecRound, Utc};
use okey_platform::Secret;
use okey_platform::auth::{Claims, Role};
use okey_platform::settings::Settings;
use okey_platform::status::Reason;
use sha2::{Digest, Sha256};
use sqlx::{PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use crate::keys::{KeyError, SigningKeys};
use crate::limiter::{SignInLimiter, Verdict};
use crate::settings::{AccountsSettings, parse_service_clients};

/// Why an accounts operation failed. `grpc` maps each variant to one status.
#[derive(Debug, thiserror::Error)]
pub enum AccountsError {
    /// A request field is malformed.
    #[error("{message}")]
    InvalidArgument {
        /// Request field path.
        field: &'static str,
        /// Reason code (an INVALID_ARGUMENT one).
        reason: Reason,
        /// For people.
        message: String,
    },
    /// Wrong username or password (never says which).
    #[error("wrong username or password")]
    InvalidCredentials,
    /// Too many wrong passwords for this account or address.
    #[error("too many sign-in attempts; try again later")]
    TooManyAttempts {
        /// When the client may try again.
        retry_after: Duration,
    },
    /// Too many new guest accounts from this address (`sign_in.guests_per_address`).
    #[error(
        "too many new guest accounts from this address; try again later, or sign in to an existing account"
    )]
    TooManyGuests {
        /// When the client may try again.
        retry_after: Duration,
    },
    /// The username belongs to another account.
    #[error("this username is taken")]
    UsernameTaken,
    /// The account already has a password.
    #[error("this account is not a guest")]
    NotAGuest,
    /// A used refresh token was presented again; its family is revoked.
    #[error("this refresh token was already used; every session of its sign-in is ended")]
    RefreshTokenReused,
    /// The refresh token is unknown, expired or revoked.
    #[error("the refresh token is not valid; sign in again")]
    RefreshTokenInvalid,
    /// No such player.
    #[error("no such player")]
    NotFound,
    /// The caller may not change this resource.
    #[error("only the player may change their own profile")]
    NotYours,
    /// The call needs a signed-in caller and has none.
    #[error("this call needs an access token")]
    Unauthenticated,
    /// An unknown service client or a wrong secret (never says which).
    #[error("unknown service client or wrong secret")]
    InvalidClientCredentials,
    /// PostgreSQL failed.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// Redis failed (sign-in limits).
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// The stored answer to a handled request cannot be read by this build.
    #[error("the stored answer to this request_id cannot be read")]
    StoredAnswerUnreadable,
    /// Signing or hashing failed.
    #[error("internal: {0}")]
    Internal(String),
}

impl From<KeyError> for AccountsError {
    fn from(e: KeyError) -> Self {
        AccountsError::Internal(e.to_string())
    }
}

fn invalid(field: &'static str, reason: Reason, message: impl Into<String>) -> AccountsError {
    AccountsError::InvalidArgument {
        field,
        reason,
        message: message.into(),
    }
}

/// Guest or permanent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountKind {
    /// Bound to a device.
    Guest,
    /// Has a username and password.
    Permanent,
}

/// A player's account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// Player id.
    pub player_id: Uuid,
    /// Guest or permanent.
    pub kind: AccountKind,
    /// Username of a permanent account.
    pub username: Option<String>,
    /// Roles.
    pub roles: Vec<Role>,
    /// Display name.
    pub display_name: String,
    /// Avatar reference.
    pub avatar_ref: String,
    /// Created.
    pub created_at: DateTime<Utc>,
    /// Profile last changed.
    pub updated_at: DateTime<Utc>,
}

impl Account {
    /// The account's public profile.
    pub fn profile(&self) -> Profile {
        Profile {
            player_id: self.player_id,
            display_name: self.display_name.clone(),
            avatar_ref: self.avatar_ref.clone(),
            updated_at: self.updated_at,
        }
    }
}

/// A player's public profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Player id.
    pub player_id: Uuid,
    /// Display name.
    pub display_name: String,
    /// Avatar reference.
    pub avatar_ref: String,
    /// Profile last changed.
    pub updated_at: DateTime<Utc>,
}

/// The answer of an UpdateProfile as kept in `handled_requests.response` (JSON), for its retries.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredProfile {
    display_name: String,
    avatar_ref: String,
    /// Microseconds since the Unix epoch (PostgreSQL keeps no finer).
    updated_at_micros: i64,
}

impl StoredProfile {
    fn of(profile: &Profile) -> Self {
        StoredProfile {
            display_name: profile.display_name.clone(),
            avatar_ref: profile.avatar_ref.clone(),
            updated_at_micros: profile.updated_at.timestamp_micros(),
        }
    }

    fn read(player_id: Uuid, bytes: &[u8]) -> Result<Profile, AccountsError> {
        let stored: StoredProfile =
            serde_json::from_slice(bytes).map_err(|_| AccountsError::StoredAnswerUnreadable)?;
        Ok(Profile {
            player_id,
            display_name: stored.display_name,
            avatar_ref: stored.avatar_ref,
            updated_at: DateTime::from_timestamp_micros(stored.updated_at_micros)
                .ok_or(AccountsError::StoredAnswerUnreadable)?,
        })
    }
}

/// The key of a device in `handled_requests.caller` (before sign-in there is no player), apart
/// from player ids.
fn device_caller(device_id: &str) -> String {
    format!("device:{device_id}")
}

/// A display name as kept ([`okey_platform::fields::display_name`]); empty only where
/// `empty_allowed` (a new guest whose name the server picks). Otherwise INVALID_ARGUMENT
/// `invalid_display_name` on `field`.
fn checked_display_name<'a>(
    field: &'static str,
    value: &'a str,
    empty_allowed: bool,
) -> Result<&'a str, AccountsError> {
    let value = okey_platform::fields::display_name(value)
        .map_err(|problem| invalid(field, Reason::InvalidDisplayName, problem))?;
    if value.is_empty() && !empty_allowed {
        return Err(invalid(
            field,
            Reason::InvalidDisplayName,
            "a display name is 1 to 24 characters: it may not be empty",
        ));
    }
    Ok(value)
}

/// A device id as kept: without surrounding white space, 8–128 characters. Empty is
/// `missing_field` when `required`, else `None`; another length is `invalid_device_id`.
fn checked_device_id(value: &str, required: bool) -> Result<Option<&str>, AccountsError> {
    let value = value.trim();
    if value.is_empty() {
        return if required {
            Err(invalid(
                "device_id",
                Reason::MissingField,
                "device_id is required",
            ))
        } else {
            Ok(None)
        };
    }
    if !(8..=128).contains(&value.chars().count()) {
        return Err(invalid(
            "device_id",
            Reason::InvalidDeviceId,
            "device_id must be 8–128 characters",
        ));
    }
    Ok(Some(value))
}

/// A signed-in session. `Debug` never shows the tokens.
#[derive(Clone)]
pub struct Session {
    /// The access JWT.
    pub access_token: Secret<String>,
    /// When it expires.
    pub access_expires_at: DateTime<Utc>,
    /// The opaque refresh token.
    pub refresh_token: Secret<String>,
    /// When it expires.
    pub refresh_expires_at: DateTime<Utc>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("access_expires_at", &self.access_expires_at)
            .field("refresh_expires_at", &self.refresh_expires_at)
            .finish_non_exhaustive()
    }
}

/// A player's statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct Statistics {
    /// Player id.
    pub player_id: Uuid,
    /// Hands played to their end.
    pub hands_played: i64,
    /// Hands won.
    pub hands_won: i64,
    /// Matches played.
    pub matches_played: i64,
    /// Matches won.
    pub matches_won: i64,
    /// Sum of end-of-hand scores and penalties.
    pub score_sum: i64,
    /// Hands opened.
    pub hands_opened: i64,
    /// Hands opened with pairs.
    pub pair_openings: i64,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

impl Statistics {
    /// Mean score per hand (0 before the first hand).
    pub fn mean_hand_score(&self) -> f64 {
        if self.hands_played == 0 {
            0.0
        } else {
            self.score_sum as f64 / self.hands_played as f64
        }
    }
}

/// Which fields of a profile to change.
#[derive(Debug, Clone, Default)]
pub struct ProfileChange {
    /// New display name.
    pub display_name: Option<String>,
    /// New avatar reference.
    pub avatar_ref: Option<String>,
}

/// The service's state: its pool, keys and limits.
#[derive(Clone)]
pub struct Accounts {
    pool: PgPool,
    keys: Arc<SigningKeys>,
    limiter: SignInLimiter,
    issuer: String,
    audience: String,
    access_ttl: Duration,
    refresh_ttl: Duration,
    hasher: Argon2<'static>,
    /// Service clients by id, with the SHA-256 of their secret (`tokens.service_clients`).
    service_clients: Arc<Vec<(String, [u8; 32])>>,
    service_ttl: Duration,
}

/// An argon2id hash of nothing in particular: unknown usernames are checked against it so they
/// take as long to refuse as wrong passwords.
static DUMMY_HASH: LazyLock<String> = LazyLock::new(|| {
    Argon2::default()
        .hash_password(b"no account has this password")
        .map(|h| h.to_string())
        .unwrap_or_default()
});

impl Accounts {
    /// The service over its pool, keys and limiter.
    pub fn new(
        pool: PgPool,
        keys: Arc<SigningKeys>,
        limiter: SignInLimiter,
        settings: &Settings,
        own: &AccountsSettings,
    ) -> Self {
        Accounts {
            pool,
            keys,
            limiter,
            issuer: settings.auth.issuer.clone(),
            audience: settings.auth.audience.clone(),
            access_ttl: Duration::from_secs(own.tokens.access_ttl_secs),
            refresh_ttl: Duration::from_secs(own.tokens.refresh_ttl_secs),
            hasher: Argon2::default(),
            // Reading the settings already refused a malformed list.
            service_clients: Arc::new(
                parse_service_clients(&own.tokens.service_clients).unwrap_or_default(),
            ),
            service_ttl: Duration::from_secs(own.tokens.service_ttl_secs),
        }
    }

    /// Issues a service token to a client of `tokens.service_clients` whose secret hashes to the
    /// configured SHA-256: `sub` is the client id, the one role `matchmaker`. The secrets are
    /// random strings of at least 16 characters, not passwords people pick, so a fast hash is
    /// enough (as for refresh tokens); the comparison takes the same time whatever matches.
    pub fn issue_service_token(
        &self,
        client_id: &str,
        secret: &Secret<String>,
    ) -> Result<(Secret<String>, DateTime<Utc>), AccountsError> {
        let presented: [u8; 32] = Sha256::digest(secret.expose().as_bytes()).into();
        let mut matched = false;
        for (id, hash) in self.service_clients.iter() {
            let same = hash
                .iter()
                .zip(presented.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
            matched |= same && id == client_id;
        }
        if !matched {
            return Err(AccountsError::InvalidClientCredentials);
        }
        // Whole seconds, as the token's claims are: `expire_time` is its `exp` exactly.
        let now = Utc::now().trunc_subsecs(0);
        let expires_at = now + self.service_ttl;
        let iat = now.timestamp().max(0) as u64;
        let claims = Claims {
            sub: client_id.to_owned(),
            roles: vec![Role::Matchmaker.as_str().to_owned()],
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            exp: expires_at.timestamp().max(0) as u64,
            nbf: iat,
            iat,
            // A service has no display name.
            name: None,
            jti: Some(Uuid::new_v4().simple().to_string()),
        };
        Ok((Secret::new(self.keys.sign(&claims)?), expires_at))
    }

    /// The `iss` of the tokens issued.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The `aud` of the tokens issued.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// The signing keys (for ListPublicKeys).
    pub fn keys(&self) -> &SigningKeys {
        &self.keys
    }

    /// Signs in the guest of `device_id`, creating it on first use. Returns whether it was
    /// created by this call or by an earlier one with the same `request_id` (a retry): the call
    /// that creates a guest keeps its request id in `handled_requests`. Creating one counts
    /// against `address`'s new-guest limit (signing in to an existing guest does not).
    pub async fn sign_in_as_guest(
        &self,
        request_id: &str,
        device_id: &str,
        display_name: &str,
        address: &str,
    ) -> Result<(Account, Session, bool), AccountsError> {
        let device_id = checked_device_id(device_id, true)?.unwrap_or_default();
        // Checked only for a new guest: an existing guest's sign-in ignores it (accounts.proto).
        let display_name = checked_display_name("display_name", display_name, true);
        let mut tx = self.pool.begin().await?;
        let existing: Option<Uuid> =
            sqlx::query_scalar("SELECT player_id FROM devices WHERE device_id = $1")
                .bind(device_id)
                .fetch_optional(&mut *tx)
                .await?;
        let (player_id, created) = match existing {
            Some(id) => {
                let created_by_this_request: Option<i32> = sqlx::query_scalar(
                    "SELECT 1 FROM handled_requests
                     WHERE caller = $1 AND request_id = $2 AND rpc = 'SignInAsGuest'",
                )
                .bind(device_caller(device_id))
                .bind(request_id)
                .fetch_optional(&mut *tx)
                .await?;
                (id, created_by_this_request.is_some())
            }
            None => {
                let display_name = display_name?;
                if let Verdict::Refuse(retry_after) = self.limiter.new_guest(address).await? {
                    tracing::warn!(
                        address,
                        "guest refused: too many new guests from this address"
                    );
                    return Err(AccountsError::TooManyGuests { retry_after });
                }
                let id = Uuid::new_v4();
                let name = if display_name.is_empty() {
                    format!("Guest-{}", &id.simple().to_string()[..6])
                } else {
                    display_name.to_owned()
                };
                sqlx::query(
                    "INSERT INTO accounts (player_id, kind, display_name) VALUES ($1, 'guest', $2)",
                )
                .bind(id)
                .bind(&name)
                .execute(&mut *tx)
                .await?;
                sqlx::query("INSERT INTO statistics (player_id) VALUES ($1)")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                let bound = sqlx::query(
                    "INSERT INTO devices (device_id, player_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                )
                .bind(device_id)
                .bind(id)
                .execute(&mut *tx)
                .await?;
                if bound.rows_affected() == 0 {
                    // Another call for this device won the race: use its guest.
                    tx.rollback().await?;
                    return Box::pin(self.sign_in_as_guest(
                        request_id,
                        device_id,
                        display_name,
                        address,
                    ))
                    .await;
                }
                sqlx::query(
                    "INSERT INTO handled_requests (request_id, caller, rpc, response)
                     VALUES ($1, $2, 'SignInAsGuest', '') ON CONFLICT DO NOTHING",
                )
                .bind(request_id)
                .bind(device_caller(device_id))
                .execute(&mut *tx)
                .await?;
                (id, true)
            }
        };
        // Held until the session is stored: an upgrade committing meanwhile is seen here.
        let account = share_account(&mut tx, player_id).await?;
        if account.kind != AccountKind::Guest {
            return Err(AccountsError::NotAGuest);
        }
        let session = self
            .start_session(&mut tx, &account, Some(device_id), Uuid::new_v4(), None)
            .await?;
        tx.commit().await?;
        tracing::info!(player = %player_id, created, "guest signed in");
        Ok((account, session, created))
    }

    /// Turns the caller's guest account into a permanent one, same player id. Every earlier
    /// session of the guest is ended; a new one is returned. A retry (same request id, username
    /// and password) after the upgrade returns the account with another new session.
    pub async fn upgrade_guest(
        &self,
        player_id: Uuid,
        request_id: &str,
        username: &str,
        password: &Secret<String>,
    ) -> Result<(Account, Session), AccountsError> {
        let username = normalize_username(username)?;
        check_password(password)?;
        let mut tx = self.pool.begin().await?;
        let account = lock_account(&mut tx, player_id).await?;
        if account.kind == AccountKind::Permanent {
            // A retry of the upgrade that made it permanent, with the same username and
            // password, gets a session; anything else is refused (no way around the password).
            let handled: Option<i32> = sqlx::query_scalar(
                "SELECT 1 FROM handled_requests WHERE caller = $1 AND request_id = $2 AND rpc = 'UpgradeGuest'",
            )
            .bind(player_id.to_string())
            .bind(request_id)
            .fetch_optional(&mut *tx)
            .await?;
            if handled.is_none() || account.username.as_deref() != Some(&username) {
                return Err(AccountsError::NotAGuest);
            }
            let hash: Option<String> =
                sqlx::query_scalar("SELECT password_hash FROM accounts WHERE player_id = $1")
                    .bind(player_id)
                    .fetch_one(&mut *tx)
                    .await?;
            let same_password = match hash {
                Some(hash) => self.verify_password(password, hash).await,
                None => false,
            };
            if !same_password {
                return Err(AccountsError::NotAGuest);
            }
        } else {
            let hash = self.hash_password(password).await?;
            let updated = sqlx::query(
                "UPDATE accounts SET kind = 'permanent', username = $2, password_hash = $3 WHERE player_id = $1",
            )
            .bind(player_id)
            .bind(&username)
            .bind(hash)
            .execute(&mut *tx)
            .await;
            match updated {
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                    return Err(AccountsError::UsernameTaken);
                }
                other => {
                    other?;
                }
            }
            sqlx::query(
                "UPDATE refresh_tokens SET revoked_at = now(), revoked_reason = 'upgraded' WHERE player_id = $1 AND revoked_at IS NULL",
            )
            .bind(player_id)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO handled_requests (request_id, caller, rpc, response) VALUES ($1, $2, 'UpgradeGuest', '') ON CONFLICT DO NOTHING",
            )
            .bind(request_id)
            .bind(player_id.to_string())
            .execute(&mut *tx)
            .await?;
        }
        let account = load_account(&mut tx, player_id).await?;
        let session = self
            .start_session(&mut tx, &account, None, Uuid::new_v4(), None)
            .await?;
        tx.commit().await?;
        tracing::info!(player = %player_id, "guest upgraded");
        Ok((account, session))
    }

    /// Signs in with username and password, within the attempt limits of `address`. Every call
    /// is an attempt (a retry too) and a success starts a new session. `device_id` is optional
    /// (empty for none).
    pub async fn sign_in(
        &self,
        username: &str,
        password: &Secret<String>,
        device_id: &str,
        address: &str,
    ) -> Result<(Account, Session), AccountsError> {
        let device_id = checked_device_id(device_id, false)?;
        // As usernames are stored (`normalize_username`): only ASCII is lower-cased, so a name
        // with a letter Unicode lower-cases into ASCII (U+212A into `k`) names no account.
        let username = username.trim().to_ascii_lowercase();
        if username.is_empty() || username.len() > 64 || password.expose().len() > 256 {
            return Err(AccountsError::InvalidCredentials);
        }
        match self.limiter.attempt(&username, address).await? {
            Verdict::Refuse(retry_after) => {
                tracing::warn!(%username, address, "sign-in refused: too many failures");
                return Err(AccountsError::TooManyAttempts { retry_after });
            }
            Verdict::Proceed(delay) if !delay.is_zero() => {
                tracing::info!(%username, address, ?delay, "sign-in slowed");
                tokio::time::sleep(delay).await;
            }
            Verdict::Proceed(_) => {}
        }
        let row = sqlx::query(
            "SELECT player_id, password_hash FROM accounts WHERE username = $1 AND kind = 'permanent'",
        )
        .bind(&username)
        .fetch_optional(&self.pool)
        .await?;
        let (player_id, hash) = match &row {
            Some(row) => (Some(row.get::<Uuid, _>(0)), row.get::<String, _>(1)),
            None => (None, DUMMY_HASH.clone()),
        };
        let matches = self.verify_password(password, hash).await;
        let Some(player_id) = player_id.filter(|_| matches) else {
            tracing::info!(%username, address, "sign-in failed: wrong credentials");
            return Err(AccountsError::InvalidCredentials);
        };
        self.limiter.record_success(&username, address).await?;
        let mut tx = self.pool.begin().await?;
        let account = share_account(&mut tx, player_id).await?;
        let session = self
            .start_session(&mut tx, &account, device_id, Uuid::new_v4(), None)
            .await?;
        tx.commit().await?;
        tracing::info!(player = %player_id, "signed in");
        Ok((account, session))
    }

    /// Exchanges a refresh token for a new session (see the module docs).
    pub async fn refresh(
        &self,
        refresh_token: &Secret<String>,
        request_id: &str,
    ) -> Result<Session, AccountsError> {
        let hash = token_hash(refresh_token.expose());
        let mut tx = self.pool.begin().await?;
        // The account row first ([`share_account`]), then the token's, read after that lock so
        // an upgrade or a sign-out that committed meanwhile is seen.
        let Some(owner) = sqlx::query_scalar::<_, Uuid>(
            "SELECT player_id FROM refresh_tokens WHERE token_sha256 = $1",
        )
        .bind(&hash)
        .fetch_optional(&mut *tx)
        .await?
        else {
            return Err(AccountsError::RefreshTokenInvalid);
        };
        let account = share_account(&mut tx, owner).await?;
        let Some(row) = sqlx::query(
            "SELECT family_id, player_id, device_id, expires_at, used_at, revoked_at, used_by_request
             FROM refresh_tokens WHERE token_sha256 = $1 FOR UPDATE",
        )
        .bind(&hash)
        .fetch_optional(&mut *tx)
        .await?
        else {
            return Err(AccountsError::RefreshTokenInvalid);
        };
        let family: Uuid = row.get(0);
        let player_id: Uuid = row.get(1);
        let device_id: Option<String> = row.get(2);
        let expires_at: DateTime<Utc> = row.get(3);
        let used_at: Option<DateTime<Utc>> = row.get(4);
        let revoked_at: Option<DateTime<Utc>> = row.get(5);
        let used_by_request: Option<String> = row.get(6);
        if revoked_at.is_some() || expires_at <= Utc::now() {
            return Err(AccountsError::RefreshTokenInvalid);
        }
        if used_at.is_some() {
            let retry = !request_id.is_empty() && used_by_request.as_deref() == Some(request_id);
            if !retry {
                return self.revoke_reused(tx, player_id, family).await;
            }
            // The same rotation again: its first answer was lost. Replace the child it made,
            // if that child is still unused; once used, its answer was not lost and this is a
            // reuse.
            let replaced = sqlx::query(
                "UPDATE refresh_tokens SET revoked_at = now(), revoked_reason = 'retried'
                 WHERE parent_sha256 = $1 AND used_at IS NULL AND revoked_at IS NULL",
            )
            .bind(&hash)
            .execute(&mut *tx)
            .await?;
            if replaced.rows_affected() == 0 {
                return self.revoke_reused(tx, player_id, family).await;
            }
        } else {
            sqlx::query(
                "UPDATE refresh_tokens SET used_at = now(), used_by_request = $2 WHERE token_sha256 = $1",
            )
            .bind(&hash)
            .bind(request_id)
            .execute(&mut *tx)
            .await?;
        }
        let session = self
            .start_session(&mut tx, &account, device_id.as_deref(), family, Some(&hash))
            .await?;
        tx.commit().await?;
        tracing::info!(player = %player_id, "session refreshed");
        Ok(session)
    }

    /// A used refresh token came back: revokes its whole family and answers
    /// `refresh_token_reused`.
    async fn revoke_reused(
        &self,
        mut tx: Transaction<'_, Postgres>,
        player_id: Uuid,
        family: Uuid,
    ) -> Result<Session, AccountsError> {
        let revoked = sqlx::query(
            "UPDATE refresh_tokens SET revoked_at = now(), revoked_reason = 'reused'
             WHERE family_id = $1 AND revoked_at IS NULL",
        )
        .bind(family)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        tracing::warn!(player = %player_id, %family, revoked = revoked.rows_affected(),
            "refresh token reused: family revoked");
        Err(AccountsError::RefreshTokenReused)
    }

    /// Ends the session of `refresh_token`, or every session of its player. An unknown token
    /// changes nothing and is not an error (sign-out is safe to retry).
    pub async fn sign_out(
        &self,
        refresh_token: &Secret<String>,
        everywhere: bool,
    ) -> Result<(), AccountsError> {
        let hash = token_hash(refresh_token.expose());
        let mut tx = self.pool.begin().await?;
        let Some(row) =
            sqlx::query("SELECT family_id, player_id FROM refresh_tokens WHERE token_sha256 = $1")
                .bind(&hash)
                .fetch_optional(&mut *tx)
                .await?
        else {
            return Ok(());
        };
        let (family, player_id): (Uuid, Uuid) = (row.get(0), row.get(1));
        // The account row first, as every writer of sessions takes it ([`share_account`]): a
        // refresh or a sign-in in flight finishes before, and its new token is revoked here;
        // one that comes after finds its token revoked.
        lock_account(&mut tx, player_id).await?;
        let revoked = if everywhere {
            sqlx::query(
                "UPDATE refresh_tokens SET revoked_at = now(), revoked_reason = 'signed_out_everywhere'
                 WHERE player_id = $1 AND revoked_at IS NULL",
            )
            .bind(player_id)
            .execute(&mut *tx)
            .await?
        } else {
            sqlx::query(
                "UPDATE refresh_tokens SET revoked_at = now(), revoked_reason = 'signed_out'
                 WHERE family_id = $1 AND revoked_at IS NULL",
            )
            .bind(family)
            .execute(&mut *tx)
            .await?
        };
        tx.commit().await?;
        tracing::info!(player = %player_id, everywhere, revoked = revoked.rows_affected(), "signed out");
        Ok(())
    }

    /// A player's account.
    pub async fn account(&self, player_id: Uuid) -> Result<Account, AccountsError> {
        let mut conn = self.pool.acquire().await?;
        load_account(&mut conn, player_id).await
    }

    /// Changes the caller's own profile. A retry (same `request_id`) returns the profile the
    /// first call returned and changes nothing, whatever changed since.
    pub async fn update_profile(
        &self,
        player_id: Uuid,
        request_id: &str,
        change: ProfileChange,
    ) -> Result<Profile, AccountsError> {
        if let Some(name) = &change.display_name {
            checked_display_name("profile.display_name", name, false)?;
        }
        if let Some(avatar) = &change.avatar_ref
            && (avatar.chars().count() > 256 || avatar.chars().any(char::is_control))
        {
            return Err(invalid(
                "profile.avatar_ref",
                Reason::InvalidAvatarRef,
                "avatar_ref must be at most 256 printable characters",
            ));
        }
        let mut tx = self.pool.begin().await?;
        // Holding the account's row also makes a retry wait for the call it repeats.
        lock_account(&mut tx, player_id).await?;
        let caller = player_id.to_string();
        let handled: Option<Vec<u8>> = sqlx::query_scalar(
            "SELECT response FROM handled_requests
             WHERE caller = $1 AND request_id = $2 AND rpc = 'UpdateProfile'",
        )
        .bind(&caller)
        .bind(request_id)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(answer) = handled {
            return StoredProfile::read(player_id, &answer);
        }
        sqlx::query(
            "UPDATE accounts SET display_name = COALESCE($2, display_name),
                avatar_ref = COALESCE($3, avatar_ref), updated_at = now() WHERE player_id = $1",
        )
        .bind(player_id)
        .bind(change.display_name.map(|n| n.trim().to_owned()))
        .bind(change.avatar_ref)
        .execute(&mut *tx)
        .await?;
        let profile = load_account(&mut tx, player_id).await?.profile();
        let answer = serde_json::to_vec(&StoredProfile::of(&profile))
            .map_err(|e| AccountsError::Internal(e.to_string()))?;
        sqlx::query(
            "INSERT INTO handled_requests (request_id, caller, rpc, response)
             VALUES ($1, $2, 'UpdateProfile', $3) ON CONFLICT DO NOTHING",
        )
        .bind(request_id)
        .bind(&caller)
        .bind(answer)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(profile)
    }

    /// A player's statistics.
    pub async fn statistics(&self, player_id: Uuid) -> Result<Statistics, AccountsError> {
        let row = sqlx::query(
            "SELECT hands_played, hands_won, matches_played, matches_won, score_sum, hands_opened,
                    pair_openings, updated_at FROM statistics WHERE player_id = $1",
        )
        .bind(player_id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or(AccountsError::NotFound)?;
        Ok(Statistics {
            player_id,
            hands_played: row.get(0),
            hands_won: row.get(1),
            matches_played: row.get(2),
            matches_won: row.get(3),
            score_sum: row.get(4),
            hands_opened: row.get(5),
            pair_openings: row.get(6),
            updated_at: row.get(7),
        })
    }

    /// Issues an access token and a refresh token in `family` (child of `parent`, if any).
    async fn start_session(
        &self,
        tx: &mut Transaction<'_, Postgres>,
        account: &Account,
        device_id: Option<&str>,
        family: Uuid,
        parent: Option<&[u8]>,
    ) -> Result<Session, AccountsError> {
        // Whole seconds, as the token's claims are: `expire_time` is its `exp` exactly.
        let now = Utc::now().trunc_subsecs(0);
        let access_expires_at = now + self.access_ttl;
        let refresh_expires_at = now + self.refresh_ttl;
        let iat = now.timestamp().max(0) as u64;
        let claims = Claims {
            sub: account.player_id.to_string(),
            roles: account
                .roles
                .iter()
                .map(|r| r.as_str().to_owned())
                .collect(),
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            exp: access_expires_at.timestamp().max(0) as u64,
            nbf: iat,
            iat,
            // Other services show the player by this name (the table at sit-down) without
            // asking accounts; a new name reaches them with the next access token.
            name: Some(account.display_name.clone()),
            // Each session's token is its own, also when a retried sign-in comes within the
            // second of the first (accounts.proto: a retry answers with a new session).
            jti: Some(Uuid::new_v4().simple().to_string()),
        };
        let access_token = self.keys.sign(&claims)?;
        let mut raw = [0u8; 32];
        getrandom::fill(&mut raw).map_err(|e| AccountsError::Internal(e.to_string()))?;
        let refresh_token = URL_SAFE_NO_PAD.encode(raw);
        sqlx::query(
            "INSERT INTO refresh_tokens (token_sha256, family_id, player_id, device_id, expires_at, parent_sha256)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(token_hash(&refresh_token))
        .bind(family)
        .bind(account.player_id)
        .bind(device_id)
        .bind(refresh_expires_at)
        .bind(parent)
        .execute(&mut **tx)
        .await?;
        Ok(Session {
            access_token: Secret::new(access_token),
            access_expires_at,
            refresh_token: Secret::new(refresh_token),
            refresh_expires_at,
        })
    }

    async fn hash_password(&self, password: &Secret<String>) -> Result<String, AccountsError> {
        let hasher = self.hasher.clone();
        let password = password.clone();
        tokio::task::spawn_blocking(move || {
            hasher
                .hash_password(password.expose().as_bytes())
                .map(|h| h.to_string())
                .map_err(|e| AccountsError::Internal(format!("password hashing failed: {e}")))
        })
        .await
        .map_err(|e| AccountsError::Internal(e.to_string()))?
    }

    async fn verify_password(&self, password: &Secret<String>, hash: String) -> bool {
        let hasher = self.hasher.clone();
        let password = password.clone();
        tokio::task::spawn_blocking(move || {
            hasher
                .verify_password(password.expose().as_bytes(), hash.as_str())
                .is_ok()
        })
        .await
        .unwrap_or(false)
    }
}

/// SHA-256 of a refresh token, as stored.
fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// Usernames are compared lower-case: 3–32 of ASCII letters, digits, `_` and `-`. Checked as
/// given (after trimming), before lower-casing: Unicode lower-casing turns some letters that are
/// not ASCII into ASCII ones (U+212A KELVIN SIGN into `k`).
fn normalize_username(username: &str) -> Result<String, AccountsError> {
    let username = username.trim().to_ascii_lowercase();
    let ok = (3..=32).contains(&username.len())
        && username
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(username)
    } else {
        Err(invalid(
            "username",
            Reason::InvalidUsername,
            "username must be 3–32 ASCII letters, digits, `_` or `-`",
        ))
    }
}

fn check_password(password: &Secret<String>) -> Result<(), AccountsError> {
    let n = password.expose().chars().count();
    if n < 10 {
        return Err(invalid(
            "password",
            Reason::WeakPassword,
            "password must be at least 10 characters",
        ));
    }
    if password.expose().len() > 256 {
        return Err(invalid(
            "password",
            Reason::WeakPassword,
            "password must be at most 256 bytes",
        ));
    }
    Ok(())
}

const SELECT_ACCOUNT: &str = "SELECT player_id, kind, username, roles, display_name, avatar_ref,
    created_at, updated_at FROM accounts WHERE player_id = $1";
const LOCK_ACCOUNT: &str = "SELECT player_id, kind, username, roles, display_name, avatar_ref,
    created_at, updated_at FROM accounts WHERE player_id = $1 FOR UPDATE";
const SHARE_ACCOUNT: &str = "SELECT player_id, kind, username, roles, display_name, avatar_ref,
    created_at, updated_at FROM accounts WHERE player_id = $1 FOR SHARE";

fn account_from_row(row: &sqlx::postgres::PgRow) -> Account {
    let kind: String = row.get(1);
    let roles: Vec<String> = row.get(3);
    Account {
        player_id: row.get(0),
        kind: if kind == "permanent" {
            AccountKind::Permanent
        } else {
            AccountKind::Guest
        },
        username: row.get(2),
        roles: roles.iter().filter_map(|r| Role::parse(r)).collect(),
        display_name: row.get(4),
        avatar_ref: row.get(5),
        created_at: row.get(6),
        updated_at: row.get(7),
    }
}

async fn load_account(
    conn: &mut sqlx::PgConnection,
    player_id: Uuid,
) -> Result<Account, AccountsError> {
    let row = sqlx::query(SELECT_ACCOUNT)
        .bind(player_id)
        .fetch_optional(conn)
        .await?
        .ok_or(AccountsError::NotFound)?;
    Ok(account_from_row(&row))
}

/// Reads the account and holds its row `FOR SHARE` until the transaction ends: what every path
/// that starts or rotates a session takes before it touches `refresh_tokens`, so an upgrade or a
/// sign-out (which hold it `FOR UPDATE`, [`lock_account`]) is either wholly before it or wholly
/// after it. One lock order, the account row first, for every writer of sessions: no deadlock,
/// and no session started from what a concurrent upgrade or sign-out was ending.
async fn share_account(
    tx: &mut Transaction<'_, Postgres>,
    player_id: Uuid,
) -> Result<Account, AccountsError> {
    locked_account(tx, player_id, SHARE_ACCOUNT).await
}

/// Reads the account and holds its row `FOR UPDATE` until the transaction ends.
async fn lock_account(
    tx: &mut Transaction<'_, Postgres>,
    player_id: Uuid,
) -> Result<Account, AccountsError> {
    locked_account(tx, player_id, LOCK_ACCOUNT).await
}

async fn locked_account(
    tx: &mut Transaction<'_, Postgres>,
    player_id: Uuid,
    sql: &'static str,
) -> Result<Account, AccountsError> {
    let row = sqlx::query(sql)
        .bind(player_id)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or(AccountsError::NotFound)?;
    Ok(account_from_row(&row))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dummy_hash_is_an_argon2id_hash() {
        assert!(DUMMY_HASH.starts_with("$argon2id$"));
        assert!(
            Argon2::default()
                .verify_password(b"not the password", DUMMY_HASH.as_str())
                .is_err()
        );
    }

    #[test]
    fn usernames_are_lower_cased_and_checked() {
        assert_eq!(normalize_username(" Ayse_K ").unwrap(), "ayse_k");
        assert!(normalize_username("ab").is_err());
        assert!(normalize_username("a b c").is_err());
        assert!(
            normalize_username("Ayse_\u{212A}").is_err(),
            "the Kelvin sign is no ASCII k, though Unicode lower-cases it into one"
        );
        assert!(normalize_username("ayşe_k").is_err());
    }

    #[test]
    fn sessions_never_show_their_tokens() {
        let s = Session {
            access_token: Secret::new("eyJsecret".into()),
            access_expires_at: Utc::now(),
            refresh_token: Secret::new("refreshsecret".into()),
            refresh_expires_at: Utc::now(),
        };
        let shown = format!("{s:?}");
        assert!(!shown.contains("secret"), "{shown}");
    }
}
