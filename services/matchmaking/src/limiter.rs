//! Guessing room codes and passwords is rate-limited per caller: each unknown code or wrong
//! password counts in Redis (`<prefix>:mm:join:fail:<player>`, a window from the first failure), and
//! a caller at the limit is refused before the code is even looked up. A room's password is also
//! limited per room, whoever guesses (`<prefix>:mm:join:room:<room>`): many callers (new guest
//! accounts cost nothing) cannot share out the guessing of one password. Redis so that every
//! replica sees the same counts; if Redis fails, JoinRoom answers UNAVAILABLE rather than running
//! unlimited.

use std::time::Duration;

use redis::aio::ConnectionManager;
use uuid::Uuid;

/// Counts wrong codes and passwords.
#[derive(Clone)]
pub struct JoinLimiter {
    redis: ConnectionManager,
    prefix: String,
    attempts: u64,
    room_attempts: u64,
    window: Duration,
}

impl JoinLimiter {
    /// `attempts` wrong codes or passwords per caller, and `room_attempts` wrong passwords per
    /// room, in each `window`.
    pub fn new(
        redis: ConnectionManager,
        prefix: &str,
        attempts: u64,
        room_attempts: u64,
        window: Duration,
    ) -> Self {
        JoinLimiter {
            redis,
            prefix: prefix.to_owned(),
            attempts,
            room_attempts,
            window,
        }
    }

    fn key(&self, player: Uuid) -> String {
        format!("{}:mm:join:fail:{player}", self.prefix)
    }

    fn room_key(&self, room: Uuid) -> String {
        format!("{}:mm:join:room:{room}", self.prefix)
    }

    /// `Some(retry after)` when the caller used up their attempts.
    pub async fn refused(&self, player: Uuid) -> redis::RedisResult<Option<Duration>> {
        self.used_up(&self.key(player), self.attempts).await
    }

    /// `Some(retry after)` when the room's password was guessed wrong too often, by anyone.
    pub async fn room_refused(&self, room: Uuid) -> redis::RedisResult<Option<Duration>> {
        self.used_up(&self.room_key(room), self.room_attempts).await
    }

    async fn used_up(&self, key: &str, limit: u64) -> redis::RedisResult<Option<Duration>> {
        let mut conn = self.redis.clone();
        let (count, ttl): (Option<u64>, i64) = redis::pipe()
            .get(key)
            .ttl(key)
            .query_async(&mut conn)
            .await?;
        Ok((count.unwrap_or(0) >= limit).then(|| Duration::from_secs(ttl.max(1) as u64)))
    }

    /// Counts one unknown code by `player`.
    pub async fn failed(&self, player: Uuid) -> redis::RedisResult<()> {
        self.count(&[self.key(player)]).await
    }

    /// Counts one wrong password for `room` by `player`.
    pub async fn wrong_password(&self, player: Uuid, room: Uuid) -> redis::RedisResult<()> {
        self.count(&[self.key(player), self.room_key(room)]).await
    }

    async fn count(&self, keys: &[String]) -> redis::RedisResult<()> {
        let mut conn = self.redis.clone();
        let mut pipe = redis::pipe();
        for key in keys {
            pipe.incr(key, 1)
                .cmd("EXPIRE")
                .arg(key)
                .arg(self.window.as_secs().max(1))
                .arg("NX");
        }
        pipe.exec_async(&mut conn).await
    }
}
