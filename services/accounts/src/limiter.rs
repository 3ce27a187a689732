//! Sign-in attempt limits, per account and per client address, in Redis; and the client's
//! address itself ([`client_address`]: behind trusted proxies, the one `x-forwarded-for` names).
//!
//! Each attempt increments two counters (`<prefix>:signin:fail:user:<username>` and
//! `…:addr:<address>`) that expire a fixed window after the first, before its password is checked
//! (so a burst of parallel attempts cannot all pass on the same count), and the counts before it
//! decide: below the free allowance the attempt goes ahead at once; above it
//! the answer is delayed, twice as long per extra failure (slowed); at the limit the attempt is
//! refused without checking the password until the window ends (refused). A correct password
//! clears the account counter and takes its own attempt off the address counter, whose earlier
//! failures stay.
//!
//! New guest accounts are counted per address too (`…:guest:new:addr:<address>`, a fixed window
//! from the first): past `sign_in.guests_per_address`, creating another is refused until the
//! window ends; signing in to an existing guest is never counted.
//!
//! Redis rather than memory: every replica of the accounts service sees the same counts, a
//! restart does not reset them, and expiry is Redis's job. If Redis does not answer, sign-in is
//! refused (UNAVAILABLE) rather than left unlimited.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use ipnet::IpNet;
use okey_platform::counters;
use redis::AsyncCommands;
use redis::aio::ConnectionManager;

/// How hard sign-in attempts are limited.
#[derive(Debug, Clone)]
pub struct LimitPolicy {
    /// Failures per account answered at once.
    pub account_free: u32,
    /// Failures per account after which attempts are refused until the window ends.
    pub account_limit: u32,
    /// Failures per address answered at once.
    pub address_free: u32,
    /// Failures per address after which attempts are refused.
    pub address_limit: u32,
    /// How long failures are remembered, from the first one.
    pub window: Duration,
    /// Delay after the first failure beyond the free allowance; doubles with each further one.
    pub first_delay: Duration,
    /// Longest delay.
    pub max_delay: Duration,
    /// New guests per address per `guest_window` (0: no limit).
    pub guests_per_address: u32,
    /// The window of `guests_per_address`, from the first guest it counts.
    pub guest_window: Duration,
}

impl Default for LimitPolicy {
    fn default() -> Self {
        LimitPolicy {
            account_free: 3,
            account_limit: 8,
            address_free: 10,
            address_limit: 50,
            window: Duration::from_secs(15 * 60),
            first_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(3),
            guests_per_address: 1000,
            guest_window: Duration::from_secs(60 * 60),
        }
    }
}

/// What to do with an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Check the password after waiting this long (zero: at once).
    Proceed(Duration),
    /// Refuse without checking; the client may try again after this long.
    Refuse(Duration),
}

/// The limiter over Redis.
#[derive(Clone)]
pub struct SignInLimiter {
    redis: ConnectionManager,
    prefix: String,
    policy: LimitPolicy,
}

impl SignInLimiter {
    /// A limiter writing keys under `prefix`.
    pub fn new(redis: ConnectionManager, prefix: &str, policy: LimitPolicy) -> Self {
        SignInLimiter {
            redis,
            prefix: prefix.to_owned(),
            policy,
        }
    }

    fn keys(&self, username: &str, address: &str) -> [String; 2] {
        [
            format!("{}:signin:fail:user:{username}", self.prefix),
            format!("{}:signin:fail:addr:{address}", self.prefix),
        ]
    }

    /// Counts an attempt on `username` from `address` as a failure before its password is
    /// checked, and returns the verdict on the failures counted before it. Counting first makes
    /// the limits hold against a burst of parallel attempts (each sees the ones before it); a
    /// right password gives its count back ([`SignInLimiter::record_success`]).
    pub async fn attempt(&self, username: &str, address: &str) -> redis::RedisResult<Verdict> {
        let [user_key, addr_key] = self.keys(username, address);
        let mut conn = self.redis.clone();
        let counted =
            counters::count(&mut conn, &[&user_key, &addr_key], self.policy.window).await?;
        let (user, addr) = (counted[0], counted[1]);
        Ok(decide(
            &self.policy,
            user.count.saturating_sub(1),
            addr.count.saturating_sub(1),
            user.retry_after(),
            addr.retry_after(),
        ))
    }

    /// Counts a new guest account from `address`: [`Verdict::Refuse`] once the address has made
    /// `guests_per_address` in the window (the refused attempt is counted too, which changes
    /// nothing: the window does not move).
    pub async fn new_guest(&self, address: &str) -> redis::RedisResult<Verdict> {
        let limit = self.policy.guests_per_address;
        if limit == 0 {
            return Ok(Verdict::Proceed(Duration::ZERO));
        }
        let key = format!("{}:guest:new:addr:{address}", self.prefix);
        let mut conn = self.redis.clone();
        let counted = counters::count_one(&mut conn, &key, self.policy.guest_window).await?;
        Ok(if counted.count > u64::from(limit) {
            Verdict::Refuse(counted.retry_after())
        } else {
            Verdict::Proceed(Duration::ZERO)
        })
    }

    /// A right password: clears the account's failures and gives back the address's count of
    /// this attempt ([`SignInLimiter::attempt`] counted it). The address keeps its earlier
    /// failures.
    pub async fn record_success(&self, username: &str, address: &str) -> redis::RedisResult<()> {
        let [user_key, addr_key] = self.keys(username, address);
        let mut conn = self.redis.clone();
        conn.del::<_, ()>(&user_key).await?;
        counters::give_back(&mut conn, &[addr_key]).await
    }
}

/// The verdict for these failure counts and when their windows end.
fn decide(
    p: &LimitPolicy,
    user: u64,
    addr: u64,
    user_retry: Duration,
    addr_retry: Duration,
) -> Verdict {
    if user >= u64::from(p.account_limit) {
        return Verdict::Refuse(user_retry);
    }
    if addr >= u64::from(p.address_limit) {
        return Verdict::Refuse(addr_retry);
    }
    let delay = |failures: u64, free: u32| {
        let Some(extra) = failures.checked_sub(u64::from(free)) else {
            return Duration::ZERO;
        };
        (p.first_delay * 2u32.pow(extra.min(16) as u32)).min(p.max_delay)
    };
    Verdict::Proceed(delay(user, p.account_free).max(delay(addr, p.address_free)))
}

/// The address a call's limits are kept for: the peer's own, unless the peer is one of the
/// `trusted` proxies; then the right-most `x-forwarded-for` entry that is not a trusted proxy
/// itself (the entries left of it were written by the client, who may write anything), or the
/// left-most when all are. `unknown` without a peer address (a test's in-process call).
pub fn client_address(
    peer: Option<SocketAddr>,
    forwarded: Option<&str>,
    trusted: &[IpNet],
) -> String {
    let Some(peer) = peer.map(|p| p.ip()) else {
        return "unknown".to_owned();
    };
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer.to_string();
    }
    let mut client = peer;
    for entry in forwarded.unwrap_or("").rsplit(',').map(str::trim) {
        match entry.parse::<IpAddr>() {
            Ok(ip) => {
                client = ip;
                if !is_trusted(&ip) {
                    break;
                }
            }
            // Not an address (empty, a port, `unknown`): nothing left of it can be trusted.
            Err(_) => break,
        }
    }
    client.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_address_is_the_peers_unless_a_trusted_proxy_forwards() {
        let trusted: Vec<IpNet> = vec![
            "10.0.0.0/8".parse().unwrap(),
            "192.0.2.7/32".parse().unwrap(),
        ];
        let peer = |ip: &str| Some(SocketAddr::new(ip.parse().unwrap(), 40_000));
        // An untrusted peer is the client, whatever it forwards.
        assert_eq!(
            client_address(peer("203.0.113.9"), Some("1.2.3.4"), &trusted),
            "203.0.113.9"
        );
        // A trusted proxy: the right-most entry it did not write itself.
        assert_eq!(
            client_address(peer("10.1.2.3"), Some("198.51.100.4"), &trusted),
            "198.51.100.4"
        );
        assert_eq!(
            client_address(
                peer("10.1.2.3"),
                Some("6.6.6.6, 198.51.100.4, 10.9.9.9"),
                &trusted
            ),
            "198.51.100.4",
            "what the client wrote left of the first untrusted hop is never believed"
        );
        // Every hop trusted: the left-most; nothing forwarded, or garbage: the last trusted hop.
        assert_eq!(
            client_address(peer("10.1.2.3"), Some("192.0.2.7, 10.0.0.5"), &trusted),
            "192.0.2.7"
        );
        assert_eq!(client_address(peer("10.1.2.3"), None, &trusted), "10.1.2.3");
        assert_eq!(
            client_address(peer("10.1.2.3"), Some("unknown"), &trusted),
            "10.1.2.3"
        );
        assert_eq!(
            client_address(peer("10.1.2.3"), Some("1.2.3.4, x"), &trusted),
            "10.1.2.3"
        );
        // IPv6 entries, and no proxies configured.
        let v6: Vec<IpNet> = vec!["fd00::/8".parse().unwrap()];
        assert_eq!(
            client_address(peer("fd00::1"), Some("2001:db8::5"), &v6),
            "2001:db8::5"
        );
        assert_eq!(
            client_address(peer("10.1.2.3"), Some("1.2.3.4"), &[]),
            "10.1.2.3"
        );
        assert_eq!(client_address(None, Some("1.2.3.4"), &trusted), "unknown");
    }

    fn decide(user: u64, addr: u64) -> Verdict {
        let minute = Duration::from_secs(60);
        super::decide(&LimitPolicy::default(), user, addr, minute, minute)
    }

    #[test]
    fn free_then_slowed_then_refused() {
        assert_eq!(decide(0, 0), Verdict::Proceed(Duration::ZERO));
        assert_eq!(decide(2, 2), Verdict::Proceed(Duration::ZERO));
        assert_eq!(decide(3, 3), Verdict::Proceed(Duration::from_millis(200)));
        assert_eq!(decide(4, 4), Verdict::Proceed(Duration::from_millis(400)));
        assert_eq!(decide(7, 7), Verdict::Proceed(Duration::from_secs(3)));
        assert!(matches!(decide(8, 8), Verdict::Refuse(_)));
        assert!(matches!(decide(0, 50), Verdict::Refuse(_)));
    }
}
