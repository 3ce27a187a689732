//! Guessing room codes and passwords is rate-limited per caller: each unknown code or wrong
//! password counts in Redis (`<prefix>:mm:join:fail:<player>`, a window from the first attempt
//! that counts), and a caller at the limit is refused before the code is even looked up. A room's
//! password is also limited per room, whoever guesses (`<prefix>:mm:join:room:<room>`): many
//! callers (new guest accounts cost nothing) cannot share out the guessing of one password. Redis
//! so that every replica sees the same counts; if Redis fails, JoinRoom answers UNAVAILABLE rather
//! than running unlimited.
//!
//! Reserve, then settle: an attempt takes its place in the count (INCR, with the window's EXPIRE
//! NX, in one transaction) before the code is looked up or the password checked, and is decided
//! on the count that INCR returned. So parallel attempts cannot all pass a check made before any
//! of them counted: of a burst, at most the limit are checked and the rest are refused. A refused
//! attempt, a right password, a room without one, or a call that failed otherwise gives its place
//! back ([`Reservation::give_back`]); only an unknown code or a wrong password keeps it
//! ([`Reservation::keep`]). Sequentially that counts exactly what counting after the check did;
//! under a burst, places held by attempts still in flight may refuse a concurrent one that would
//! have passed once they were given back (never the other way round).

use std::time::Duration;

use okey_platform::counters;
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

    /// Reserves one of the caller's attempts, before anything is looked up: `Err(retry after)`
    /// when they are used up (by failures, or by attempts still in flight); nothing is then
    /// held.
    pub async fn reserve(&self, player: Uuid) -> redis::RedisResult<Result<Reservation, Duration>> {
        let mut held = Reservation {
            redis: self.redis.clone(),
            keys: Vec::new(),
            settled: false,
        };
        Ok(
            match held
                .take(self.key(player), self.attempts, self.window)
                .await?
            {
                None => Ok(held),
                Some(retry_after) => Err(retry_after),
            },
        )
    }

    /// Reserves one of `room`'s password attempts too, before the password is checked (the
    /// caller's own is already held): `Some(retry after)` when the room's are used up, by anyone;
    /// `held` then holds only what it held before.
    pub async fn reserve_room(
        &self,
        held: &mut Reservation,
        room: Uuid,
    ) -> redis::RedisResult<Option<Duration>> {
        held.take(self.room_key(room), self.room_attempts, self.window)
            .await
    }
}

/// Attempts counted in advance: [`keep`](Reservation::keep) them when they failed (an unknown
/// code, a wrong password), [`give_back`](Reservation::give_back) them otherwise. Dropped
/// unsettled (an error returned early, or the call cancelled), they are given back in the
/// background.
#[must_use = "keep or give back the reserved attempts"]
pub struct Reservation {
    redis: ConnectionManager,
    keys: Vec<String>,
    settled: bool,
}

impl Reservation {
    /// Takes a place in `key`; `Some(retry after)` (and the place given back at once) when the
    /// count it returned is over `limit`.
    async fn take(
        &mut self,
        key: String,
        limit: u64,
        window: Duration,
    ) -> redis::RedisResult<Option<Duration>> {
        let mut conn = self.redis.clone();
        let counted = counters::count_one(&mut conn, &key, window).await?;
        if counted.count > limit {
            counters::give_back(&mut conn, std::slice::from_ref(&key)).await?;
            return Ok(Some(counted.retry_after()));
        }
        self.keys.push(key);
        Ok(None)
    }

    /// The attempts failed: they stay counted for the rest of the window.
    pub fn keep(mut self) {
        self.settled = true;
    }

    /// The attempts did not fail (or were not needed): they count no more. Not giving them back
    /// only counts too much, so a Redis error is logged rather than failing the call.
    pub async fn give_back(mut self) {
        self.settled = true;
        let keys = std::mem::take(&mut self.keys);
        let mut conn = self.redis.clone();
        if let Err(e) = counters::give_back(&mut conn, &keys).await {
            tracing::warn!(error = %e, "join attempts not given back; they count until the window ends");
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.settled || self.keys.is_empty() {
            return;
        }
        let keys = std::mem::take(&mut self.keys);
        let mut conn = self.redis.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = counters::give_back(&mut conn, &keys).await {
                    tracing::warn!(error = %e, "join attempts not given back; they count until the window ends");
                }
            });
        }
    }
}
