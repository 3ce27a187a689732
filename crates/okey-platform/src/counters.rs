//! Fixed-window counters in Redis, the one way every limit counts (accounts' sign-in attempts and
//! new guests, matchmaking's room codes and passwords, the table's chat).
//!
//! [`count`] takes a place in each key (INCR) and starts the key's window with its first count
//! (PEXPIRE NX), in one transaction: a crash between the two cannot leave a count that never
//! expires, and parallel callers each see the counts before them, so a limit checked on the
//! returned count holds against a burst. [`give_back`] returns places that should not have
//! counted (a right password, a refused attempt), only while the key's window lasts.

use std::sync::LazyLock;
use std::time::Duration;

use redis::aio::ConnectionLike;

/// Gives back one place in each of KEYS, unless that key has expired meanwhile (a DECR would
/// create it again, negative and with no window); a count back at zero is deleted, so the next
/// window starts with the next attempt that counts. Built once (its SHA-1 too).
static GIVE_BACK: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
for _, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 and redis.call('DECR', key) <= 0 then
    redis.call('DEL', key)
  end
end
return 0
",
    )
});

/// One key's count after [`count`] took its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    /// The count, this place included.
    pub count: u64,
    /// What is left of the key's window (at least 1 ms).
    pub window_left: Duration,
}

impl Counted {
    /// When a refused caller may try again: the window's rest rounded up to whole seconds (at
    /// least one), so a client that waits that long finds the window over.
    pub fn retry_after(&self) -> Duration {
        Duration::from_secs(self.window_left.as_millis().div_ceil(1000).max(1) as u64)
    }
}

/// Counts one in each of `keys`, each in a window of `window` from its first count, in one
/// transaction; returns each key's count and window left, in the order of `keys`.
pub async fn count<C: ConnectionLike>(
    conn: &mut C,
    keys: &[&str],
    window: Duration,
) -> redis::RedisResult<Vec<Counted>> {
    let window_ms = u64::try_from(window.as_millis()).unwrap_or(u64::MAX).max(1);
    let mut pipe = redis::pipe();
    pipe.atomic();
    for key in keys {
        pipe.incr(*key, 1)
            .cmd("PEXPIRE")
            .arg(*key)
            .arg(window_ms)
            .arg("NX")
            .ignore()
            .cmd("PTTL")
            .arg(*key);
    }
    let replies: Vec<i64> = pipe.query_async(conn).await?;
    Ok(replies
        .chunks_exact(2)
        .map(|pair| Counted {
            count: pair[0].max(0) as u64,
            // PTTL is negative only for a key without a window, which the transaction rules out.
            window_left: Duration::from_millis(if pair[1] > 0 {
                pair[1] as u64
            } else {
                window_ms
            }),
        })
        .collect())
}

/// [`count`] for one key.
pub async fn count_one<C: ConnectionLike>(
    conn: &mut C,
    key: &str,
    window: Duration,
) -> redis::RedisResult<Counted> {
    let counted = count(conn, &[key], window).await?;
    Ok(counted[0])
}

/// Gives back one place in each of `keys` while its window lasts (see [`count`]).
pub async fn give_back<C: ConnectionLike>(conn: &mut C, keys: &[String]) -> redis::RedisResult<()> {
    if keys.is_empty() {
        return Ok(());
    }
    let mut invocation = GIVE_BACK.prepare_invoke();
    for key in keys {
        invocation.key(key);
    }
    invocation.invoke_async::<()>(conn).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_the_window_up_to_whole_seconds() {
        let left = |ms| Counted {
            count: 1,
            window_left: Duration::from_millis(ms),
        };
        assert_eq!(left(1).retry_after(), Duration::from_secs(1));
        assert_eq!(left(1_000).retry_after(), Duration::from_secs(1));
        assert_eq!(left(1_001).retry_after(), Duration::from_secs(2));
        assert_eq!(left(899_400).retry_after(), Duration::from_secs(900));
    }

    #[tokio::test]
    async fn a_burst_counts_every_place_once_and_giving_back_never_makes_a_key() {
        let Some(infra) = crate::testing::TestInfra::from_env() else {
            return;
        };
        let client = redis::Client::open(infra.redis_url.as_str()).expect("a Redis URL");
        let conn = client
            .get_multiplexed_async_connection()
            .await
            .expect("Redis answers");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_nanos();
        let key = format!("test:counters:{}:{nanos}", std::process::id());
        let other = format!("{key}:other");
        let window = Duration::from_secs(60);

        // Twenty parallel counts: each sees a different count, 1 to 20, in one window.
        let burst = (0..20).map(|_| {
            let mut conn = conn.clone();
            let key = key.clone();
            async move { count(&mut conn, &[&key], window).await }
        });
        let mut counts: Vec<u64> = futures_util::future::join_all(burst)
            .await
            .into_iter()
            .map(|c| {
                let c = c.expect("counted")[0];
                assert!(
                    c.window_left <= window && c.window_left > window - Duration::from_secs(10)
                );
                c.count
            })
            .collect();
        counts.sort_unstable();
        assert_eq!(counts, (1..=20).collect::<Vec<u64>>());

        // Two keys in one call, each its own count; the window does not restart.
        let mut c = conn.clone();
        let both = count(&mut c, &[&key, &other], Duration::from_secs(600))
            .await
            .expect("counted");
        assert_eq!((both[0].count, both[1].count), (21, 1));
        assert!(
            both[0].window_left <= window,
            "the first count's window stays"
        );
        assert!(
            both[1].window_left > window,
            "a new key's window starts now"
        );

        // Given back to zero, the key goes; giving back a key that is gone leaves it gone.
        for _ in 0..21 {
            give_back(&mut c, std::slice::from_ref(&key))
                .await
                .expect("given back");
        }
        let exists: bool = redis::cmd("EXISTS")
            .arg(&key)
            .query_async(&mut c)
            .await
            .unwrap();
        assert!(!exists, "a count back at zero is deleted");
        give_back(&mut c, &[key.clone(), other.clone()])
            .await
            .expect("given back");
        let (a, b): (bool, bool) = redis::pipe()
            .exists(&key)
            .exists(&other)
            .query_async(&mut c)
            .await
            .unwrap();
        assert!(!a && !b, "no key made by giving back");
    }
}
