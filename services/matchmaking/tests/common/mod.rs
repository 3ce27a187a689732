//! The whole path a player takes, for the matchmaking tests: the real accounts service (guests sign
//! in, the matchmaking service gets its service token), the real table service (verifying tokens
//! with the keys it polls from accounts) and the matchmaking service, in-process on a manual clock
//! or as spawned binaries, all on the real PostgreSQL, Redis and NATS of `deploy/infra.sh`.
#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use matchmaking::clock::ManualClock;
use okey_platform::testing::{InProcess, TestInfra, connect, free_port, test_service_clients};
use okey_platform::{ServiceKind, Settings};
use okey_proto::v1 as pb;
use okey_proto::v1::accounts_service_client::AccountsServiceClient;
use okey_proto::v1::matchmaking_service_client::MatchmakingServiceClient;
use okey_proto::v1::table_service_client::TableServiceClient;
use tonic::transport::Channel;
use tonic::{Request, Status};

pub const BINARY: &str = env!("CARGO_BIN_EXE_matchmaking");

/// Accounts and table, running in this process.
pub struct Backends {
    pub infra: TestInfra,
    pub accounts: InProcess,
    pub table: InProcess,
    /// The environment every matchmaking replica of this test shares (same database, same Redis
    /// prefix, same table service), without its port.
    pub matchmaking_env: Vec<(String, String)>,
}

fn settings(service: ServiceKind, env: Vec<(String, String)>) -> Settings {
    Settings::from_sources(service, None, env).expect("valid test settings")
}

impl Backends {
    /// Starts accounts (issuing service tokens to the test client) and table (trusting what
    /// accounts signs, admitting the matchmaker role, bots playing without a pause).
    pub async fn start(infra: &TestInfra) -> Backends {
        let mut env = infra.env_for(ServiceKind::Accounts, 0);
        env.push((
            "OKEY_TOKENS__SERVICE_CLIENTS".into(),
            test_service_clients(),
        ));
        let app = accounts::startup::Application::build(&settings(ServiceKind::Accounts, env))
            .await
            .expect("accounts starts");
        let port = app.local_addr().port();
        let accounts = InProcess::spawn(port, |stop| app.run_until_stopped(stop));
        let accounts_url = accounts.url();

        let mut env = infra.env_for(ServiceKind::Table, 0);
        env.push(("OKEY_TOKENS__PUBLIC_KEYS".into(), String::new()));
        env.extend(infra.service_identity_env(&accounts_url));
        env.push(("OKEY_LIVE__BOT_PACE_MS".into(), "0".into()));
        env.push(("OKEY_DATABASE__MAX_CONNECTIONS".into(), "8".into()));
        let app = table::startup::Application::build(&settings(ServiceKind::Table, env))
            .await
            .expect("table starts");
        let port = app.local_addr().port();
        let table = InProcess::spawn(port, |stop| app.run_until_stopped(stop));

        let mut matchmaking_env = infra.env_for(ServiceKind::Matchmaking, 0);
        matchmaking_env.retain(|(k, _)| k != "OKEY_SERVER__PORT");
        matchmaking_env.push(("OKEY_TOKENS__PUBLIC_KEYS".into(), String::new()));
        matchmaking_env.extend(infra.service_identity_env(&accounts_url));
        matchmaking_env.push(("OKEY_MATCHMAKING__TABLE_URL".into(), table.url()));
        // No scoring unless a test starts one: every ticket searches at a new player's rating.
        matchmaking_env.push(("OKEY_MATCHMAKING__SCORING_URL".into(), String::new()));
        matchmaking_env.push(("OKEY_DATABASE__MAX_CONNECTIONS".into(), "8".into()));
        Backends {
            infra: infra.clone(),
            accounts,
            table,
            matchmaking_env,
        }
    }

    /// The matchmaking settings with `extra` variables, on a free port.
    pub fn matchmaking_settings(&self, extra: &[(&str, &str)]) -> Settings {
        let mut env = self.matchmaking_env.clone();
        env.push(("OKEY_SERVER__PORT".into(), "0".into()));
        env.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        settings(ServiceKind::Matchmaking, env)
    }

    /// A matchmaking replica in this process, reading time from `clock`.
    pub async fn matchmaking(&self, clock: &ManualClock, extra: &[(&str, &str)]) -> InProcess {
        let app = matchmaking::startup::Application::build_with_clock(
            &self.matchmaking_settings(extra),
            Arc::new(clock.clone()),
        )
        .await
        .expect("matchmaking starts");
        let port = app.local_addr().port();
        InProcess::spawn(port, |stop| app.run_until_stopped(stop))
    }

    /// A matchmaking replica as its own process (so it can be killed), on a free port.
    pub fn matchmaking_binary(&self, extra: &[(&str, &str)]) -> Replica {
        let port = free_port();
        let child = Command::new(BINARY)
            .envs(self.matchmaking_env.iter().cloned())
            .env("OKEY_SERVER__PORT", port.to_string())
            .env("OKEY_TELEMETRY__LOG_FILTER", "warn")
            .envs(extra.iter().map(|(k, v)| (*k, *v)))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the binary starts");
        Replica { port, child }
    }

    pub async fn accounts_client(&self) -> AccountsServiceClient<Channel> {
        AccountsServiceClient::new(connect(self.accounts.port, Duration::from_secs(10)).await)
    }

    /// Signs in `n` new guests (named by accounts).
    pub async fn guests(&self, n: usize) -> Vec<Guest> {
        self.guests_named(&vec![""; n]).await
    }

    /// Signs in a new guest for each display name (empty: accounts picks one).
    pub async fn guests_named(&self, names: &[&str]) -> Vec<Guest> {
        let mut accounts = self.accounts_client().await;
        let mut out = Vec::new();
        for name in names {
            let r = accounts
                .sign_in_as_guest(pb::SignInAsGuestRequest {
                    request_id: uuid(),
                    device_id: format!("device-{}", uuid()),
                    display_name: (*name).to_owned(),
                })
                .await
                .expect("guest sign-in")
                .into_inner();
            let account = r.account.expect("account");
            let session = r.session.expect("session");
            let mut guest = Guest {
                player: account.name,
                display_name: String::new(),
                token: session.access_token,
            };
            guest.display_name = accounts
                .get_profile(guest.req(pb::GetProfileRequest {
                    name: "players/me".into(),
                }))
                .await
                .expect("the guest's profile")
                .into_inner()
                .profile
                .expect("a profile")
                .display_name;
            out.push(guest);
        }
        out
    }

    pub async fn table_client(&self) -> TableServiceClient<Channel> {
        TableServiceClient::new(connect(self.table.port, Duration::from_secs(10)).await)
    }

    pub async fn stop(self) {
        self.table.stop().await;
        self.accounts.stop().await;
    }
}

/// What most tests start from: accounts and table, one matchmaking replica in this process on a
/// manual clock, and a client of it.
pub struct World {
    pub backends: Backends,
    pub clock: ManualClock,
    pub mm: InProcess,
    pub api: MatchmakingServiceClient<Channel>,
}

impl World {
    /// Everything started, the replica with `extra` settings; `None` when the infrastructure is
    /// not up (the test then has nothing to run against; `make test` requires it).
    pub async fn start(extra: &[(&str, &str)]) -> Option<World> {
        let infra = TestInfra::from_env()?;
        let backends = Backends::start(&infra).await;
        let clock = ManualClock::new();
        let mm = backends.matchmaking(&clock, extra).await;
        let api = mm_client(mm.port).await;
        Some(World {
            backends,
            clock,
            mm,
            api,
        })
    }

    /// `n` new guests, signed in.
    pub async fn guests(&self, n: usize) -> Vec<Guest> {
        self.backends.guests(n).await
    }

    /// The table `name` as `guest` reads it from the table service.
    pub async fn table(&self, guest: &Guest, name: &str) -> Result<pb::Table, Status> {
        Ok(self
            .backends
            .table_client()
            .await
            .get_table(guest.req(pb::GetTableRequest {
                name: name.to_owned(),
            }))
            .await?
            .into_inner()
            .table
            .expect("a table"))
    }

    /// Stops the replica, then the services behind it.
    pub async fn stop(self) {
        self.mm.stop().await;
        self.backends.stop().await;
    }
}

/// A spawned matchmaking process, killed (SIGKILL) when dropped.
pub struct Replica {
    pub port: u16,
    pub child: Child,
}

impl Replica {
    /// `kill -9`.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A signed-in guest.
#[derive(Clone, Debug)]
pub struct Guest {
    /// `players/{id}`.
    pub player: String,
    /// The display name accounts gave the guest (its tokens carry it).
    pub display_name: String,
    pub token: String,
}

impl Guest {
    pub fn req<T>(&self, message: T) -> Request<T> {
        let mut r = Request::new(message);
        r.metadata_mut().insert(
            "authorization",
            format!("Bearer {}", self.token).parse().unwrap(),
        );
        r
    }
}

pub async fn mm_client(port: u16) -> MatchmakingServiceClient<Channel> {
    MatchmakingServiceClient::new(connect(port, Duration::from_secs(30)).await)
}

pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// FindTable for `guest` with `rules`.
pub async fn find(
    mm: &mut MatchmakingServiceClient<Channel>,
    guest: &Guest,
    rules: pb::RuleSet,
    allow_bots: bool,
) -> Result<pb::Ticket, Status> {
    Ok(mm
        .find_table(guest.req(pb::FindTableRequest {
            request_id: uuid(),
            rules: Some(rules),
            allow_bots,
            bot_level: pb::BotLevel::Easy as i32,
        }))
        .await?
        .into_inner()
        .ticket
        .expect("a ticket"))
}

/// Reads the ticket until `done` says so, within `within`.
pub async fn wait_ticket(
    mm: &mut MatchmakingServiceClient<Channel>,
    guest: &Guest,
    name: &str,
    within: Duration,
    done: impl Fn(&pb::Ticket) -> bool,
) -> pb::Ticket {
    let deadline = Instant::now() + within;
    loop {
        let t = mm
            .get_ticket(guest.req(pb::GetTicketRequest {
                name: name.to_owned(),
            }))
            .await
            .expect("ticket")
            .into_inner()
            .ticket
            .unwrap();
        if done(&t) {
            return t;
        }
        assert!(Instant::now() < deadline, "ticket never got there: {t:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Reads the room until `done` says so, within `within`.
pub async fn wait_room(
    mm: &mut MatchmakingServiceClient<Channel>,
    guest: &Guest,
    name: &str,
    within: Duration,
    done: impl Fn(&pb::Room) -> bool,
) -> pb::Room {
    let deadline = Instant::now() + within;
    loop {
        let r = mm
            .get_room(guest.req(pb::GetRoomRequest {
                name: name.to_owned(),
            }))
            .await
            .expect("room")
            .into_inner()
            .room
            .unwrap();
        if done(&r) {
            return r;
        }
        assert!(Instant::now() < deadline, "room never got there: {r:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The `reason` of a status's ErrorInfo.
pub fn reason(status: &Status) -> String {
    use tonic_types::StatusExt;
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_default()
}

/// Classic rules with a match of one hand.
pub fn one_hand(preset: &str) -> pb::RuleSet {
    pb::RuleSet {
        preset: preset.into(),
        match_length: Some(pb::MatchLength {
            length: Some(pb::match_length::Length::Hands(1)),
        }),
        ..Default::default()
    }
}

pub fn is_matched(t: &pb::Ticket) -> bool {
    t.state == pb::TicketState::Matched as i32
}

/// Four different one-hand rule sets (classic with partners and 12-13-1 runs on or off).
pub fn variant(i: usize) -> pb::RuleSet {
    pb::RuleSet {
        partners: Some(i & 1 == 1),
        run_wraps_after_thirteen: Some(i & 2 == 2),
        ..one_hand("classic")
    }
}
