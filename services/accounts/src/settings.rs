//! The accounts service's own settings, read through the platform's layers (defaults, file,
//! `OKEY_…` variables: `okey_platform::Settings::own`): what it signs with and for how long, and
//! the service clients it issues tokens to (its part of `[tokens]`, `OKEY_TOKENS__…`).

use okey_platform::Secret;
use okey_platform::settings::ServiceSettings;
use serde::Deserialize;

/// What the accounts service reads besides the shared sections.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountsSettings {
    /// Its part of `[tokens]` (where verifiers find the keys is shared).
    pub tokens: IssuingSettings,
    /// Who a caller is on the network, and what one address may do.
    pub sign_in: SignInSettings,
}

/// Client addresses and the limits kept per address (`[sign_in]`, `OKEY_SIGN_IN__…`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignInSettings {
    /// The proxies in front of the service (load balancers, ingress controllers), as IP
    /// addresses or CIDR blocks separated by whitespace or commas. A call from one of them is
    /// counted against the client its `x-forwarded-for` header names (the right-most entry that
    /// is not itself a trusted proxy); a call from anywhere else against its own address. Empty:
    /// every call counts against the address it comes from, so behind a proxy every client
    /// would share the proxy's limits.
    pub trusted_proxies: String,
    /// New guest accounts one client address may create per `guest_window_secs` (signing in to
    /// an existing guest never counts); more are RESOURCE_EXHAUSTED `too_many_attempts`. 0: no
    /// limit.
    pub guests_per_address: u32,
    /// The window of `guests_per_address`, seconds from the first guest it counts.
    pub guest_window_secs: u64,
}

/// Signing keys and token lifetimes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuingSettings {
    /// The Ed25519 private keys, PKCS#8 PEM blocks one after the other. The first signs new
    /// tokens; the others are still published so tokens they signed keep verifying until they
    /// expire. Empty: a throwaway key is generated at start (local runs only).
    pub signing_keys_pem: Secret<String>,
    /// Lifetime of an access token.
    pub access_ttl_secs: u64,
    /// Lifetime of a refresh token.
    pub refresh_ttl_secs: u64,
    /// The service clients it issues service tokens to (role `matchmaker`), as `id:sha256hex`
    /// entries separated by whitespace or commas, the hex being the SHA-256 of the client's
    /// secret (`printf %s "$SECRET" | sha256sum`). Empty: no service tokens.
    pub service_clients: String,
    /// Lifetime of a service token.
    pub service_ttl_secs: u64,
}

impl ServiceSettings for AccountsSettings {
    const DEFAULTS: &'static str = r#"
[tokens]
signing_keys_pem = ""
access_ttl_secs = 900
refresh_ttl_secs = 2592000
service_clients = ""
service_ttl_secs = 900

[sign_in]
trusted_proxies = ""
guests_per_address = 1000
guest_window_secs = 3600
"#;

    fn check(&self) -> Result<(), (&'static str, String)> {
        let t = &self.tokens;
        if t.access_ttl_secs == 0 {
            return Err(("tokens.access_ttl_secs", "must be at least 1".into()));
        }
        if t.refresh_ttl_secs == 0 {
            return Err(("tokens.refresh_ttl_secs", "must be at least 1".into()));
        }
        if let Err(e) = parse_service_clients(&t.service_clients) {
            return Err(("tokens.service_clients", e));
        }
        if t.service_ttl_secs < 60 {
            return Err(("tokens.service_ttl_secs", "must be at least 60".into()));
        }
        if let Err(e) = parse_trusted_proxies(&self.sign_in.trusted_proxies) {
            return Err(("sign_in.trusted_proxies", e));
        }
        if self.sign_in.guest_window_secs == 0 {
            return Err(("sign_in.guest_window_secs", "must be at least 1".into()));
        }
        Ok(())
    }
}

/// Reads `sign_in.trusted_proxies`: IP addresses (a block of one) and CIDR blocks, whitespace
/// or commas between them.
pub fn parse_trusted_proxies(text: &str) -> Result<Vec<ipnet::IpNet>, String> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            entry
                .parse::<ipnet::IpNet>()
                .or_else(|_| entry.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    format!("`{entry}` is neither an IP address nor a CIDR block (10.0.0.0/8)")
                })
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use okey_platform::{ServiceKind, Settings};

    use super::*;

    fn own(env: &[(&str, &str)]) -> Result<AccountsSettings, String> {
        Settings::from_sources(ServiceKind::Accounts, None, env.iter().copied())
            .map_err(|e| e.to_string())?
            .own()
            .map_err(|e| e.to_string())
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
        let err = own(&[("OKEY_TOKENS__SERVICE_CLIENTS", "mm:zz")]).unwrap_err();
        assert!(err.contains("tokens.service_clients"), "{err}");
    }

    #[test]
    fn trusted_proxies_are_addresses_and_blocks() {
        let nets = parse_trusted_proxies(" 10.0.0.0/8,192.0.2.7 fd00::/8\n").unwrap();
        assert_eq!(nets.len(), 3);
        assert!(nets[1].contains(&"192.0.2.7".parse::<std::net::IpAddr>().unwrap()));
        assert!(parse_trusted_proxies("").unwrap().is_empty());
        let err = own(&[("OKEY_SIGN_IN__TRUSTED_PROXIES", "10.0.0.0/33")]).unwrap_err();
        assert!(err.contains("sign_in.trusted_proxies"), "{err}");
        let err = own(&[("OKEY_SIGN_IN__GUEST_WINDOW_SECS", "0")]).unwrap_err();
        assert!(err.contains("sign_in.guest_window_secs"), "{err}");
        assert_eq!(own(&[]).unwrap().sign_in.guests_per_address, 1000);
    }

    #[test]
    fn lifetimes_are_checked_and_keys_never_shown() {
        assert_eq!(own(&[]).unwrap().tokens.access_ttl_secs, 900);
        let err = own(&[("OKEY_TOKENS__SERVICE_TTL_SECS", "59")]).unwrap_err();
        assert!(err.contains("tokens.service_ttl_secs"), "{err}");
        let own = own(&[("OKEY_TOKENS__SIGNING_KEYS_PEM", "hunter2")]).unwrap();
        assert_eq!(own.tokens.signing_keys_pem.expose(), "hunter2");
        assert!(!format!("{own:?}").contains("hunter2"));
    }
}
