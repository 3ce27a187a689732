//! Riding out a service's restart the way an app does (common.proto's error model): a call that
//! fails with UNAVAILABLE (a service starting, draining — `server_stopping` — or not listening:
//! tonic reports a refused connection as UNAVAILABLE) is made again with capped exponential
//! backoff, the caller keeping the same `request_id` (commands are idempotent on it); any other
//! code is the answer. While a service is down one line says what the tool waits for (and another
//! when it answers again), and after [`GIVE_UP_AFTER`] of continuous failure it gives up.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use okey_platform::status::Reason;
use tonic::{Code, Status};

use crate::client::{NotAnswering, Refused};

/// How long a service may keep failing before the tool gives up on it.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(60);
/// The first wait before a call is made again; it doubles up to [`MAX_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(500);
/// The longest wait between two attempts.
const MAX_WAIT: Duration = Duration::from_secs(4);
/// While a service stays down, how often the tool says it still waits.
const REMIND_EVERY: Duration = Duration::from_secs(20);

/// Whether the contract says to retry: UNAVAILABLE (connection refused and other transport
/// failures included) or the `server_stopping` reason.
pub fn retryable(status: &Status) -> bool {
    status.code() == Code::Unavailable || okey_platform::status::is(status, Reason::ServerStopping)
}

/// A failure that may pass: what [`Outages::call`] retries.
pub trait Transient: Sized {
    /// The call may succeed if made again later.
    fn transient(&self) -> bool;
    /// A few words on the failure, for the waiting line.
    fn summary(&self) -> String;
    /// The failure, said to be the last after retrying for `after`.
    fn gave_up(self, after: Duration) -> Self;
}

impl Transient for Status {
    fn transient(&self) -> bool {
        retryable(self)
    }

    fn summary(&self) -> String {
        short(self.message())
    }

    fn gave_up(self, after: Duration) -> Self {
        let message = format!(
            "{} (still failing after {} s of retries)",
            self.message(),
            after.as_secs()
        );
        Status::new(self.code(), message)
    }
}

/// An error of a call made through [`crate::client`]: transient when it is a refused call
/// ([`Refused`]) whose status is [`retryable`], or a service that did not answer at all
/// ([`NotAnswering`]).
impl Transient for anyhow::Error {
    fn transient(&self) -> bool {
        self.chain().any(|cause| {
            cause.is::<NotAnswering>()
                || cause
                    .downcast_ref::<Refused>()
                    .is_some_and(|r| retryable(&r.status))
        })
    }

    fn summary(&self) -> String {
        self.chain()
            .find_map(|cause| cause.downcast_ref::<Refused>())
            .map_or_else(|| short(&self.to_string()), |r| short(r.status.message()))
    }

    fn gave_up(self, after: Duration) -> Self {
        self.context(format!(
            "still failing after {} s of retries",
            after.as_secs()
        ))
    }
}

/// The first words of a message (up to its first colon), for a line that stays short.
fn short(message: &str) -> String {
    message
        .split(':')
        .next()
        .unwrap_or(message)
        .trim()
        .to_owned()
}

/// Since when a service has been failing, and when that was last said.
struct Down {
    since: Instant,
    said: Instant,
}

/// The services found down, shared by the calls of one run (the demo plays and follows a table at
/// the same time: one outage is said once, not once per call).
#[derive(Default)]
pub struct Outages {
    down: Mutex<HashMap<String, Down>>,
    /// The spinner the lines are printed around, once there is one.
    bar: Mutex<Option<indicatif::ProgressBar>>,
}

impl Outages {
    /// Prints around `bar` from now on (a drawn spinner would garble the lines).
    pub fn set_bar(&self, bar: &indicatif::ProgressBar) {
        *self.bar.lock().expect("not poisoned") = Some(bar.clone());
    }

    /// Makes `call` (a call of `service`'s `method`), again with capped exponential backoff while
    /// it fails [`Transient`]ly, until it succeeds, fails otherwise, or `service` has been failing
    /// for [`GIVE_UP_AFTER`]. `call` builds its request anew each time: with the same
    /// `request_id`.
    pub async fn call<T, E, F, Fut>(&self, service: &str, method: &str, mut call: F) -> Result<T, E>
    where
        E: Transient,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let mut wait = FIRST_WAIT;
        loop {
            match call().await {
                Ok(answer) => {
                    self.answered(service);
                    return Ok(answer);
                }
                Err(e) if e.transient() => {
                    let down_for = self.failed(service, method, &e.summary());
                    if down_for >= GIVE_UP_AFTER {
                        self.say(&format!(
                            "the {service} service has not answered for {} s: giving up",
                            down_for.as_secs()
                        ));
                        self.down.lock().expect("not poisoned").remove(service);
                        return Err(e.gave_up(down_for));
                    }
                    // The last attempt comes when the minute is up.
                    tokio::time::sleep(wait.min(GIVE_UP_AFTER - down_for)).await;
                    wait = (wait * 2).min(MAX_WAIT);
                }
                Err(e) => {
                    // An answer (a refusal): the service is there.
                    self.answered(service);
                    return Err(e);
                }
            }
        }
    }

    /// `service` failed a call (`method`, `why`): says so when it was not known to be down, or
    /// now and then while it stays down. Returns for how long it has been failing.
    pub fn failed(&self, service: &str, method: &str, why: &str) -> Duration {
        let why = short(why);
        let now = Instant::now();
        let mut down = self.down.lock().expect("not poisoned");
        let line = match down.get_mut(service) {
            None => {
                down.insert(
                    service.to_owned(),
                    Down {
                        since: now,
                        said: now,
                    },
                );
                Some(format!(
                    "the {service} service is unavailable ({method}: {why}); retrying with \
                     backoff for up to {} s",
                    GIVE_UP_AFTER.as_secs()
                ))
            }
            Some(d) if now.duration_since(d.said) >= REMIND_EVERY => {
                d.said = now;
                Some(format!(
                    "still waiting for the {service} service ({} s)",
                    now.duration_since(d.since).as_secs()
                ))
            }
            Some(_) => None,
        };
        let since = down.get(service).map_or(now, |d| d.since);
        drop(down);
        if let Some(line) = line {
            self.say(&line);
        }
        now.duration_since(since)
    }

    /// `service` answered: says so when it was down.
    pub fn answered(&self, service: &str) {
        let was = self.down.lock().expect("not poisoned").remove(service);
        if let Some(d) = was {
            self.say(&format!(
                "the {service} service answers again (after {:.1} s)",
                d.since.elapsed().as_secs_f64()
            ));
        }
    }

    fn say(&self, line: &str) {
        let bar = self.bar.lock().expect("not poisoned").clone();
        let print = || eprintln!("[{line}]");
        match bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[test]
    fn only_unavailable_and_server_stopping_are_retried() {
        assert!(retryable(&Status::unavailable("tcp connect error")));
        assert!(retryable(&okey_platform::status::error(
            Reason::ServerStopping,
            "stopping"
        )));
        for code in [
            Code::InvalidArgument,
            Code::FailedPrecondition,
            Code::Aborted,
            Code::NotFound,
            Code::Unauthenticated,
            Code::Internal,
            Code::Unknown,
        ] {
            assert!(!retryable(&Status::new(code, "no")), "{code:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_is_made_again_until_it_answers_and_a_refusal_is_not_retried() {
        let outages = Outages::default();
        let attempts = Cell::new(0);
        let answer = outages
            .call("table", "SubmitCommand", || {
                attempts.set(attempts.get() + 1);
                let n = attempts.get();
                async move {
                    if n < 4 {
                        Err(Status::unavailable("tcp connect error"))
                    } else {
                        Ok(n)
                    }
                }
            })
            .await
            .unwrap();
        assert_eq!(answer, 4);
        assert!(outages.down.lock().unwrap().is_empty());

        attempts.set(0);
        let refused = outages
            .call("table", "SubmitCommand", || {
                attempts.set(attempts.get() + 1);
                async { Err::<(), _>(Status::failed_precondition("not_your_turn")) }
            })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::FailedPrecondition);
        assert_eq!(attempts.get(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn it_gives_up_after_a_minute_of_failures() {
        let outages = Outages::default();
        let started = tokio::time::Instant::now();
        let error = outages
            .call("accounts", "SignInAsGuest", || async {
                Err::<(), _>(Status::unavailable("tcp connect error"))
            })
            .await
            .unwrap_err();
        assert_eq!(error.code(), Code::Unavailable);
        assert!(
            error.message().contains("still failing after 60 s"),
            "{}",
            error.message()
        );
        assert!(started.elapsed() >= GIVE_UP_AFTER);
    }
}
