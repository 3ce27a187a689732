//! The JWKS documents that carry the token keys' public halves (`tokens.public_keys`, and what
//! the other services read from `ListPublicKeys`): Ed25519 keys only, checked when parsed.

use jsonwebtoken::DecodingKey;
use serde::{Deserialize, Serialize};

/// One public key in JWK terms (Ed25519 only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicJwk {
    /// Key id, as in the token header.
    pub kid: String,
    /// `OKP`.
    #[serde(default = "okp")]
    pub kty: String,
    /// `Ed25519`.
    #[serde(default = "ed25519")]
    pub crv: String,
    /// The public key, base64url without padding.
    pub x: String,
}

fn okp() -> String {
    "OKP".to_owned()
}

fn ed25519() -> String {
    "Ed25519".to_owned()
}

/// A JWKS document: `{"keys": [...]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicKeySet {
    /// The keys.
    pub keys: Vec<PublicJwk>,
}

/// Why a JWKS document was refused.
#[derive(Debug, thiserror::Error)]
pub enum KeySetError {
    /// Not the JSON shape of a JWKS document.
    #[error("not a JWKS document: {0}")]
    Json(#[from] serde_json::Error),
    /// A key is not an Ed25519 public key.
    #[error("key `{kid}` is not an Ed25519 public key (kty OKP, crv Ed25519, 32-byte x)")]
    NotEd25519 {
        /// The key id.
        kid: String,
    },
}

impl PublicKeySet {
    /// Parses a JWKS document; empty text is an empty set.
    pub fn parse(text: &str) -> Result<PublicKeySet, KeySetError> {
        if text.trim().is_empty() {
            return Ok(PublicKeySet::default());
        }
        let set: PublicKeySet = serde_json::from_str(text)?;
        for key in &set.keys {
            if key.kty != "OKP"
                || key.crv != "Ed25519"
                || DecodingKey::from_ed_components(&key.x).is_err()
            {
                return Err(KeySetError::NotEd25519 {
                    kid: key.kid.clone(),
                });
            }
        }
        Ok(set)
    }
}
