//! Page tokens a client cannot make up. A listing's `next_page_token` holds the position the next
//! page starts after; a token altered or written by hand must be refused (`invalid_page_token`),
//! not served from wherever it points. So every token is its position's bytes followed by an
//! HMAC-SHA256 of them (the first 16 bytes), under a key every replica of a service shares, in
//! URL-safe base64 without padding. The key is made once, from the operating system's random
//! source, and kept in the service's own database (`page_token_key`, each service's migrations),
//! so it needs no setting and a token given by one replica is taken by another and after a
//! restart.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use okey_table::seeding::hmac_sha256;
use sqlx::PgPool;

/// The MAC's length in a token: 128 bits.
const MAC_BYTES: usize = 16;

/// A service's page-token key.
#[derive(Clone)]
pub struct PageTokens {
    key: [u8; 32],
}

impl std::fmt::Debug for PageTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PageTokens(..)")
    }
}

impl PageTokens {
    /// The key in `page_token_key`, made there first if no replica has made it yet.
    pub async fn load(pool: &PgPool) -> Result<PageTokens, sqlx::Error> {
        let mut fresh = [0u8; 32];
        getrandom::fill(&mut fresh).map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
        sqlx::query(
            "INSERT INTO page_token_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&fresh[..])
        .execute(pool)
        .await?;
        let key: Vec<u8> = sqlx::query_scalar("SELECT key FROM page_token_key WHERE id = 1")
            .fetch_one(pool)
            .await?;
        let key = key
            .try_into()
            .map_err(|_| sqlx::Error::Protocol("page_token_key.key is not 32 bytes".into()))?;
        Ok(PageTokens { key })
    }

    /// Tokens under a given key (tests).
    pub fn with_key(key: [u8; 32]) -> PageTokens {
        PageTokens { key }
    }

    /// The token of `position`.
    pub fn seal(&self, position: &[u8]) -> String {
        let mut bytes = Vec::with_capacity(position.len() + MAC_BYTES);
        bytes.extend_from_slice(position);
        bytes.extend_from_slice(&hmac_sha256(&self.key, position)[..MAC_BYTES]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The position a token this service gave holds; `None` for anything else (not base64, too
    /// short, or altered in any bit).
    pub fn open(&self, token: &str) -> Option<Vec<u8>> {
        let mut bytes = URL_SAFE_NO_PAD.decode(token).ok()?;
        let at = bytes.len().checked_sub(MAC_BYTES)?;
        let expected = hmac_sha256(&self.key, &bytes[..at]);
        // Compared in constant time: the difference of every byte, folded.
        let difference = bytes[at..]
            .iter()
            .zip(&expected[..MAC_BYTES])
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        (difference == 0).then(|| {
            bytes.truncate(at);
            bytes
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_position_opens_and_any_change_is_refused() {
        let tokens = PageTokens::with_key([7; 32]);
        let token = tokens.seal(b"h1.v3");
        assert_eq!(tokens.open(&token).as_deref(), Some(&b"h1.v3"[..]));
        assert_eq!(tokens.seal(b""), tokens.seal(b""));
        assert_eq!(tokens.open(&tokens.seal(b"")).as_deref(), Some(&b""[..]));

        // Every bit of the token matters.
        let bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut changed = bytes.clone();
                changed[i] ^= 1 << bit;
                assert_eq!(
                    tokens.open(&URL_SAFE_NO_PAD.encode(&changed)),
                    None,
                    "byte {i} bit {bit}"
                );
            }
        }
        // Another key's token, a position without its MAC, text that is not base64.
        assert_eq!(PageTokens::with_key([8; 32]).open(&token), None);
        assert_eq!(tokens.open(&URL_SAFE_NO_PAD.encode(b"h1.v4")), None);
        assert_eq!(tokens.open("h1.v4"), None);
        assert_eq!(tokens.open("not a token!"), None);
        assert_eq!(tokens.open(""), None);
    }
}
