//! The Ed25519 keys that sign access tokens. The first key signs; the others are still published
//! (`ListPublicKeys`) so tokens they signed keep verifying until they expire. A key's `kid` is its
//! RFC 7638 JWK thumbprint, so the same key always has the same id on every replica.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use okey_platform::auth::{Claims, PublicJwk};
use sha2::{Digest, Sha256};

/// PKCS#8 v1 DER of an Ed25519 private key, up to the 32-byte seed.
const PKCS8_ED25519_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];
const PEM_BEGIN: &str = "-----BEGIN PRIVATE KEY-----";
const PEM_END: &str = "-----END PRIVATE KEY-----";

/// Why the configured keys cannot be used. Messages never contain key material.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// `tokens.signing_keys_pem` holds something other than PKCS#8 PEM blocks.
    #[error("setting `tokens.signing_keys_pem`: key {index} is not a PKCS#8 Ed25519 PEM block")]
    NotEd25519 {
        /// 1-based position of the block.
        index: usize,
    },
    /// The system random source failed.
    #[error("cannot generate a key: {0}")]
    Random(String),
    /// Signing failed.
    #[error("cannot sign a token: {0}")]
    Sign(#[from] jsonwebtoken::errors::Error),
}

/// One signing key.
pub struct SigningKey {
    /// Key id (the JWK thumbprint).
    pub kid: String,
    /// Public key, base64url (JWK `x`).
    pub x: String,
    encoding: EncodingKey,
}

/// The configured keys; the first signs.
pub struct SigningKeys {
    keys: Vec<SigningKey>,
    /// When this process started signing with the first key: the other keys signed nothing since.
    since: DateTime<Utc>,
}

impl std::fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kids: Vec<&str> = self.keys.iter().map(|k| k.kid.as_str()).collect();
        f.debug_struct("SigningKeys").field("kids", &kids).finish()
    }
}

impl SigningKeys {
    /// Reads one or more PKCS#8 PEM blocks (`-----BEGIN PRIVATE KEY-----`), the first being the
    /// signing key. `None` when the text holds no block at all.
    pub fn from_pem_blocks(text: &str) -> Result<Option<SigningKeys>, KeyError> {
        let mut keys = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find(PEM_BEGIN) {
            let index = keys.len() + 1;
            let after = &rest[start + PEM_BEGIN.len()..];
            let end = after.find(PEM_END).ok_or(KeyError::NotEd25519 { index })?;
            let body: String = after[..end].split_whitespace().collect();
            let der = STANDARD
                .decode(body)
                .map_err(|_| KeyError::NotEd25519 { index })?;
            let seed: [u8; 32] = der
                .strip_prefix(&PKCS8_ED25519_PREFIX[..])
                .and_then(|s| s.try_into().ok())
                .ok_or(KeyError::NotEd25519 { index })?;
            keys.push(SigningKey::from_seed(&seed).ok_or(KeyError::NotEd25519 { index })?);
            rest = &after[end + PEM_END.len()..];
        }
        if keys.is_empty() {
            return Ok(None);
        }
        Ok(Some(SigningKeys {
            keys,
            since: Utc::now(),
        }))
    }

    /// A fresh random key, for local runs where none is configured. Tokens it signs stop
    /// verifying when the process exits.
    pub fn generate() -> Result<SigningKeys, KeyError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| KeyError::Random(e.to_string()))?;
        let key = SigningKey::from_seed(&seed)
            .ok_or_else(|| KeyError::Random("generated key refused".into()))?;
        Ok(SigningKeys {
            keys: vec![key],
            since: Utc::now(),
        })
    }

    /// The key that signs new tokens.
    pub fn current(&self) -> &SigningKey {
        &self.keys[0]
    }

    /// Every published key, the current one first.
    pub fn all(&self) -> &[SigningKey] {
        &self.keys
    }

    /// Since when the keys after the first sign nothing (their retire time).
    pub fn since(&self) -> DateTime<Utc> {
        self.since
    }

    /// The keys as JWKs, the current one first.
    pub fn public_jwks(&self) -> Vec<PublicJwk> {
        self.keys
            .iter()
            .map(|k| PublicJwk {
                kid: k.kid.clone(),
                kty: "OKP".into(),
                crv: "Ed25519".into(),
                x: k.x.clone(),
            })
            .collect()
    }

    /// Signs `claims` with the current key, its `kid` in the header.
    pub fn sign(&self, claims: &Claims) -> Result<String, KeyError> {
        let key = self.current();
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(key.kid.clone());
        Ok(encode(&header, claims, &key.encoding)?)
    }
}

impl SigningKey {
    fn from_seed(seed: &[u8; 32]) -> Option<SigningKey> {
        let public = ed25519_dalek::SigningKey::from_bytes(seed)
            .verifying_key()
            .to_bytes();
        let x = URL_SAFE_NO_PAD.encode(public);
        let mut der = PKCS8_ED25519_PREFIX.to_vec();
        der.extend_from_slice(seed);
        let pem = format!("{PEM_BEGIN}\n{}\n{PEM_END}\n", STANDARD.encode(&der));
        let encoding = EncodingKey::from_ed_pem(pem.as_bytes()).ok()?;
        Some(SigningKey {
            kid: thumbprint(&x),
            x,
            encoding,
        })
    }
}

/// RFC 7638 thumbprint of an Ed25519 JWK.
fn thumbprint(x: &str) -> String {
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// A PEM block for a fresh random key (used by tests that rotate keys).
pub fn generate_pem() -> Result<String, KeyError> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| KeyError::Random(e.to_string()))?;
    let mut der = PKCS8_ED25519_PREFIX.to_vec();
    der.extend_from_slice(&seed);
    Ok(format!(
        "{PEM_BEGIN}\n{}\n{PEM_END}\n",
        STANDARD.encode(&der)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_key_has_its_known_public_half() {
        let keys = SigningKeys::from_pem_blocks(okey_platform::testing::TEST_SIGNING_KEY_PEM)
            .unwrap()
            .unwrap();
        assert_eq!(keys.current().x, okey_platform::testing::TEST_PUBLIC_X);
        assert_eq!(keys.current().kid.len(), 43);
    }

    #[test]
    fn several_blocks_keep_their_order_and_garbage_is_refused() {
        let (a, b) = (generate_pem().unwrap(), generate_pem().unwrap());
        let keys = SigningKeys::from_pem_blocks(&format!("{a}{b}"))
            .unwrap()
            .unwrap();
        let first = SigningKeys::from_pem_blocks(&a).unwrap().unwrap();
        assert_eq!(keys.all().len(), 2);
        assert_eq!(keys.current().kid, first.current().kid);
        assert!(SigningKeys::from_pem_blocks("").unwrap().is_none());
        let bad = format!("{PEM_BEGIN}\nAAAA\n{PEM_END}");
        assert!(matches!(
            SigningKeys::from_pem_blocks(&bad),
            Err(KeyError::NotEd25519 { index: 1 })
        ));
    }
}
