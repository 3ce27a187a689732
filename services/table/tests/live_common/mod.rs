//! Helpers of the live-table tests: in-process table services on a hand-moved clock with short
//! sweeps and zero bot pace, waiting on the stored events, and the admin's table creation.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use okey_platform::testing::TestInfra;
use okey_platform::{ServiceKind, Settings};
use okey_proto::v1 as pb;
use table::clock::ManualClock;
use table::domain::TableEvent;
use table::store::Recorded;

use crate::common::{Client, rules, stored, uuid};

/// A turn plus a second: enough to pass any deadline of the default rule set.
pub const PAST_A_TURN: Duration = Duration::from_secs(61);

/// Settings for live tests: sweeps every 20 ms, reconciles every 200 ms, bots without pause,
/// plus `extra` `OKEY_…` overrides.
pub fn live_settings(infra: &TestInfra, extra: &[(&str, &str)]) -> Settings {
    let mut env = infra.env_for(ServiceKind::Table, 0);
    for (k, v) in [
        ("OKEY_LIVE__SWEEP_INTERVAL_MS", "20"),
        ("OKEY_LIVE__RECONCILE_INTERVAL_MS", "200"),
        ("OKEY_LIVE__BOT_PACE_MS", "0"),
        ("OKEY_TELEMETRY__LOG_FILTER", "warn"),
        ("OKEY_SERVER__GRACE_PERIOD_MS", "2000"),
    ]
    .into_iter()
    .chain(extra.iter().copied())
    {
        env.retain(|(name, _)| name != k);
        env.push((k.to_owned(), v.to_owned()));
    }
    Settings::from_sources(ServiceKind::Table, None, env).expect("test settings are valid")
}

/// A table service in this process on `clock`.
pub struct Replica {
    pub port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl Replica {
    pub async fn start(settings: &Settings, clock: Arc<ManualClock>) -> Replica {
        let app = table::startup::Application::build_with_clock(settings, clock)
            .await
            .expect("the service starts");
        let port = app.local_addr().port();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            app.run_until_stopped(async {
                let _ = stopped.await;
            })
            .await
            .expect("clean stop");
        });
        Replica {
            port,
            stop: Some(stop),
            server: Some(server),
        }
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

/// A clock starting at a fixed, plausible time.
pub fn clock() -> Arc<ManualClock> {
    ManualClock::new(1_800_000_000_000)
}

/// The admin creates a table of `hands` hands (optionally with partners) with `people` in seats
/// 0.. and bots of `bots` in the other seats (`None`: they stay free).
pub async fn create(
    admin: &mut Client,
    hands: i32,
    partners: bool,
    people: &[String],
    bots: Option<pb::BotLevel>,
) -> String {
    let mut r = rules(hands);
    r.partners = Some(partners);
    let seats = people
        .iter()
        .enumerate()
        .map(|(i, p)| pb::SeatAssignment {
            seat: i as i32,
            occupant: Some(pb::seat_assignment::Occupant::Player(p.clone())),
            ..Default::default()
        })
        .collect();
    let request = admin.req(pb::CreateTableRequest {
        request_id: uuid(),
        rules: Some(r),
        seats,
        empty_seat_bots: bots.map(|b| b as i32),
        ..Default::default()
    });
    admin
        .api
        .create_table(request)
        .await
        .expect("table created")
        .into_inner()
        .table
        .unwrap()
        .name
}

/// Polls the stored events of `table` until `done` holds (at most `within`).
pub async fn wait_for(
    settings: &Settings,
    table: &str,
    within: Duration,
    what: &str,
    done: impl Fn(&[Recorded]) -> bool,
) -> Vec<Recorded> {
    let deadline = Instant::now() + within;
    loop {
        let (events, _) = stored(settings, table).await;
        if done(&events) {
            return events;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// How many stored events match.
pub fn count(events: &[Recorded], f: impl Fn(&TableEvent) -> bool) -> usize {
    events.iter().filter(|e| f(&e.event)).count()
}

pub fn is_timeout(e: &TableEvent) -> bool {
    matches!(
        e,
        TableEvent::Played {
            event: okey_rules::Event::TurnTimedOut { .. },
            ..
        }
    )
}

pub fn match_ended(events: &[Recorded]) -> bool {
    events
        .iter()
        .any(|e| matches!(e.event, TableEvent::MatchEnded { .. }))
}

/// What is armed in Redis for `table` (`tables/{uuid}`) once it is armed for `version` or a
/// later one: `(member, at_ms)`. The arming runs after the append (on the service's own task), so
/// a test that moves the clock waits for it first: a deadline armed after the clock moved would
/// be a full turn from the moved time.
pub async fn wait_armed_for(settings: &Settings, table: &str, version: u64) -> (String, u64) {
    let id = table.strip_prefix("tables/").unwrap();
    let prefix = &settings.redis.key_prefix;
    let redis = redis::Client::open(settings.redis.url.expose().as_str()).unwrap();
    let mut conn = redis.get_multiplexed_async_connection().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (member, at, armed_for): (Option<String>, Option<u64>, Option<u64>) =
            redis::cmd("HMGET")
                .arg(format!("{prefix}:table:due:{id}"))
                .arg("member")
                .arg("at")
                .arg("version")
                .query_async(&mut conn)
                .await
                .unwrap();
        if let (Some(member), Some(at), Some(v)) = (member, at, armed_for)
            && v >= version
        {
            let score: Option<f64> = redis::cmd("ZSCORE")
                .arg(format!("{prefix}:table:due"))
                .arg(&member)
                .query_async(&mut conn)
                .await
                .unwrap();
            if score.is_some() {
                return (member, at);
            }
        }
        assert!(
            Instant::now() < deadline,
            "nothing armed for {table} at version {version}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
