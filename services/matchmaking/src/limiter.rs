//! Guessing room codes and passwords is rate-limited per caller: each unknown code or wrong
//! password counts in Redis (`<prefix>:mm:join:fail:<player>`, a window from the first failure), and
//! a caller at the limit is refused before the code is even looked up. Redis so that every replica
//! sees the same count; if Redis fails, JoinRoom answers UNAVAILABLE rather than running unlimited.

use std::time::Duration;

use redis::aio::ConnectionManager;
use uuid::Uuid;

/// Counts wrong codes and passwords.
#[derive(Clone)]
pub struct JoinLimiter {
    redis: ConnectionManager,
    prefix: String,
    attempts: u64,
    window: Duration,
}

impl JoinLimiter {
    pub fn new(redis: ConnectionManager, prefix: &str, attempts: u64, window: Duration) -> Self {
        JoinLimiter {
            redis,
            prefix: prefix.to_owned(),
            attempts,
            window,
        }
    }

    fn key(&self, player: Uuid) -> String {
        format!("{}:mm:join:fail:{player}", self.prefix)
    }

    /// `Some(retry after)` when the caller used up their attempts.
    pub async fn refused(&self, player: Uuid) -> redis::RedisResult<Option<Duration>> {
        let key = self.key(player);
        let mut conn = self.redis.clone();
        let (count, ttl): (Option<u64>, i64) = redis::pipe()
            .get(&key)
            .ttl(&key)
            .query_async(&mut conn)
            .await?;
        Ok((count.unwrap_or(0) >= self.attempts).then(|| Duration::from_secs(ttl.max(1) as u64)))
    }

    /// Counts one wrong code or password.
    pub async fn failed(&self, player: Uuid) -> redis::RedisResult<()> {
        let key = self.key(player);
        let mut conn = self.redis.clone();
        redis::pipe()
            .incr(&key, 1)
            .cmd("EXPIRE")
            .arg(&key)
            .arg(self.window.as_secs().max(1))
            .arg("NX")
            .exec_async(&mut conn)
            .await
    }
}
