//! Access-token verification: EdDSA JWTs whose `kid` picks one of several public keys, so keys can
//! rotate without signing anyone out. The accounts service (issue 6) issues the tokens, serves
//! the keys and mounts the tower layer that calls this on every request.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde::{Deserialize, Serialize};

use crate::settings::AuthSettings;
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
            AuthError::Expired => "token_expired",
            _ => "token_invalid",
        };
        status::with_reason(tonic::Code::Unauthenticated, reason, error.to_string())
    }
}

/// Checks access tokens against a set of EdDSA public keys looked up by `kid`.
#[derive(Clone)]
pub struct TokenVerifier {
    keys: Arc<RwLock<HashMap<String, DecodingKey>>>,
    validation: Validation,
}

impl std::fmt::Debug for TokenVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kids: Vec<String> = self
            .keys
            .read()
            .map(|k| k.keys().cloned().collect())
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
            keys: Arc::new(RwLock::new(HashMap::new())),
            validation,
        }
    }

    /// Adds (or replaces) an Ed25519 public key given as the JWK `x` value (base64url).
    pub fn insert_ed25519_key(&self, kid: &str, x: &str) -> Result<(), AuthError> {
        let key =
            DecodingKey::from_ed_components(x).map_err(|e| AuthError::Invalid(e.to_string()))?;
        self.keys
            .write()
            .expect("key set lock poisoned")
            .insert(kid.to_owned(), key);
        Ok(())
    }

    /// Forgets a retired key; tokens it signed are refused from now on.
    pub fn remove_key(&self, kid: &str) {
        self.keys
            .write()
            .expect("key set lock poisoned")
            .remove(kid);
    }

    /// Checks a token (without the `Bearer ` prefix) and returns its claims.
    pub fn verify(&self, token: &str) -> Result<Claims, AuthError> {
        let header = decode_header(token).map_err(|_| AuthError::Malformed)?;
        let kid = header.kid.ok_or(AuthError::MissingKeyId)?;
        let key = self
            .keys
            .read()
            .expect("key set lock poisoned")
            .get(&kid)
            .cloned()
            .ok_or(AuthError::UnknownKey)?;
        decode::<Claims>(token, &key, &self.validation)
            .map(|data| data.claims)
            .map_err(|e| match e.kind() {
                ErrorKind::ExpiredSignature => AuthError::Expired,
                _ => AuthError::Invalid(e.to_string()),
            })
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
    fn a_good_token_passes() {
        assert_eq!(
            verifier().verify(&sign(Some("k1"), &claims())).unwrap(),
            claims()
        );
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
    fn refusals_become_unauthenticated() {
        let status: tonic::Status = AuthError::Expired.into();
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
    }
}
