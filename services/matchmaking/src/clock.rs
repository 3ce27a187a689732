//! Where matchmaking reads the time: every deadline (bot fill, expiry, claim leases, room expiry)
//! is computed from a [`Clock`] and written to PostgreSQL as a value, never from the database's
//! `now()`, so tests move a [`ManualClock`] instead of sleeping.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

/// The time now.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// The system clock moved forward by what [`ManualClock::advance`] added (tests).
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    ahead: Arc<Mutex<Duration>>,
}

impl ManualClock {
    pub fn new() -> ManualClock {
        ManualClock::default()
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        *self.ahead.lock().expect("clock lock") += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        let ahead = *self.ahead.lock().expect("clock lock");
        Utc::now() + ahead
    }
}
