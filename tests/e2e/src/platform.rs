//! The four services as processes of their own, started from the built binaries (`accounts`,
//! `matchmaking`, `table`, `scoring` beside this test's executable in the target directory, or in
//! `OKEY_E2E_BIN_DIR`) on one set of PostgreSQL, NATS and Redis, wired as in production: accounts
//! signs every token, the others poll its keys, matchmaking creates tables with its service
//! identity, table publishes its events under the platform's NATS prefix and accounts' statistics
//! and scoring consume them. Each platform has databases, a NATS subject prefix and a Redis key
//! prefix of its own, so platforms run side by side on the same servers. A process can be killed
//! (`kill -9`) and started again on the same port; links between services can go through a
//! [`Proxy`].

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use okey_platform::ServiceKind;
use okey_platform::testing::{
    TestInfra, connect, free_port, test_public_keys, test_service_clients, wait_for_health,
};
use tonic_health::pb::health_check_response::ServingStatus;

use crate::proxy::{Faults, Proxy};

/// Where a service's binary is.
pub fn binary(service: ServiceKind) -> PathBuf {
    let dir = std::env::var_os("OKEY_E2E_BIN_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            // The test runs from `<target>/debug/deps/`; the binaries are in `<target>/debug/`.
            let exe = std::env::current_exe().expect("the test's executable");
            exe.parent()
                .and_then(|deps| deps.parent())
                .expect("the target directory")
                .to_path_buf()
        });
    let path = dir.join(service.name());
    assert!(
        path.exists(),
        "{} is missing: build the services first (`cargo build --bins`; `cargo test --workspace` \
         builds them), or point OKEY_E2E_BIN_DIR at them",
        path.display()
    );
    path
}

/// One service process, killed when dropped.
pub struct Process {
    pub service: ServiceKind,
    pub port: u16,
    env: Vec<(String, String)>,
    child: Option<Child>,
    log: PathBuf,
    /// Times it was started.
    pub starts: u32,
}

impl Process {
    fn new(service: ServiceKind, port: u16, env: Vec<(String, String)>, log: PathBuf) -> Process {
        Process {
            service,
            port,
            env,
            child: None,
            log,
            starts: 0,
        }
    }

    /// Starts the binary (again) on its port; its log is appended to [`Process::log_path`].
    pub fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("the service's log file");
        let child = Command::new(binary(self.service))
            .envs(self.env.iter().cloned())
            .env("OKEY_SERVER__PORT", self.port.to_string())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("a log handle"))
            .stderr(log)
            .spawn()
            .expect("the service's binary starts");
        self.child = Some(child);
        self.starts += 1;
    }

    /// Waits until it answers SERVING (within 30 s).
    pub async fn serving(&self) {
        let channel = connect(self.port, Duration::from_secs(30)).await;
        wait_for_health(channel, "", ServingStatus::Serving).await;
    }

    /// `kill -9`, and waits until it is gone.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn log_path(&self) -> &PathBuf {
        &self.log
    }

    /// The last `lines` lines of its log.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// How a platform is laid out.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Table service processes (replicas on the same database).
    pub table_replicas: usize,
    /// With `Some`, every link between services (to accounts, matchmaking to the table) goes
    /// through a [`Proxy`] with these faults.
    pub proxied: Option<Faults>,
    /// How long a table's bot waits before each of its commands.
    pub bot_pace_ms: u64,
    /// `OKEY_…` settings given to every service on top of the platform's own (a setting of
    /// another service is left to that service).
    pub extra_env: Vec<(String, String)>,
}

impl Default for Layout {
    fn default() -> Layout {
        Layout {
            table_replicas: 1,
            proxied: None,
            bot_pace_ms: 20,
            extra_env: Vec::new(),
        }
    }
}

/// Every service of one platform, running.
pub struct Platform {
    /// For the report and the log files' names.
    pub name: String,
    pub infra: TestInfra,
    /// NATS subject prefix and Redis key prefix of every service of this platform.
    pub prefix: String,
    pub accounts: Process,
    pub matchmaking: Process,
    pub tables: Vec<Process>,
    pub scoring: Process,
    /// The table service's database (the truth is read from its event store).
    pub table_database_url: String,
    pub proxies: Vec<Proxy>,
}

fn set(env: &mut Vec<(String, String)>, key: &str, value: impl Into<String>) {
    env.retain(|(k, _)| k != key);
    env.push((key.to_owned(), value.into()));
}

impl Platform {
    /// Starts accounts, then table (each replica), scoring and matchmaking, each SERVING.
    pub async fn start(name: &str, infra: &TestInfra, layout: Layout) -> Platform {
        let database = infra.unique_database_url("e2e");
        let prefix = database
            .split('?')
            .next()
            .and_then(|url| url.rsplit('/').next())
            .unwrap_or("e2e")
            .replace("test_", "e2e_");
        let logs = std::env::temp_dir().join(format!("okey-e2e-logs-{}", std::process::id()));
        std::fs::create_dir_all(&logs).expect("a log directory");
        let log = |svc: &str| logs.join(format!("{name}-{svc}.log"));
        let db = |svc: &str| infra.unique_database_url(&format!("e2e_{svc}"));

        let mut common = Vec::new();
        let extra = layout.extra_env.clone();
        let with_extra = move |mut env: Vec<(String, String)>| {
            for (k, v) in &extra {
                set(&mut env, k, v.clone());
            }
            env
        };
        set(&mut common, "OKEY_SERVER__STARTUP_TIMEOUT_MS", "30000");
        set(&mut common, "OKEY_SERVER__PROBE_INTERVAL_MS", "200");
        set(&mut common, "OKEY_SERVER__GRACE_PERIOD_MS", "2000");
        set(&mut common, "OKEY_DATABASE__MAX_CONNECTIONS", "4");
        set(&mut common, "OKEY_NATS__URL", infra.nats_url.clone());
        set(&mut common, "OKEY_NATS__SUBJECT_PREFIX", prefix.clone());
        set(&mut common, "OKEY_NATS__EVENTS_MAX_AGE_SECS", "3600");
        set(&mut common, "OKEY_REDIS__URL", infra.redis_url.clone());
        set(&mut common, "OKEY_REDIS__KEY_PREFIX", prefix.clone());
        // Operators' tokens (the checks read every seat's ledger) are signed by the platform's
        // test key; players' and the matchmaker's by accounts.
        set(&mut common, "OKEY_TOKENS__PUBLIC_KEYS", test_public_keys());
        set(&mut common, "OKEY_TELEMETRY__LOG_FILTER", "warn");

        let mut proxies = Vec::new();
        let accounts_port = free_port();
        let mut env = common.clone();
        set(&mut env, "OKEY_DATABASE__URL", db("accounts"));
        set(&mut env, "OKEY_TOKENS__KEYS_URL", "");
        let key = accounts::keys::generate_pem().expect("a signing key");
        set(&mut env, "OKEY_TOKENS__SIGNING_KEYS_PEM", key);
        set(
            &mut env,
            "OKEY_TOKENS__SERVICE_CLIENTS",
            test_service_clients(),
        );
        let mut accounts = Process::new(
            ServiceKind::Accounts,
            accounts_port,
            with_extra(env),
            log("accounts"),
        );
        accounts.spawn();
        accounts.serving().await;

        // What the other services call accounts at (through a proxy when faults are asked for).
        let accounts_url = match &layout.proxied {
            Some(faults) => {
                let proxy = Proxy::start(accounts_port, faults.clone()).await;
                let url = proxy.url();
                proxies.push(proxy);
                url
            }
            None => accounts.url(),
        };

        let table_database_url = db("table");
        let mut tables = Vec::new();
        for replica in 0..layout.table_replicas.max(1) {
            let mut env = common.clone();
            env.extend(infra.service_identity_env(&accounts_url));
            set(&mut env, "OKEY_DATABASE__URL", table_database_url.clone());
            set(&mut env, "OKEY_DATABASE__MAX_CONNECTIONS", "8");
            set(
                &mut env,
                "OKEY_LIVE__BOT_PACE_MS",
                layout.bot_pace_ms.to_string(),
            );
            set(&mut env, "OKEY_LIVE__SWEEP_INTERVAL_MS", "20");
            set(&mut env, "OKEY_LIVE__RECONCILE_INTERVAL_MS", "500");
            let mut table = Process::new(
                ServiceKind::Table,
                free_port(),
                with_extra(env),
                log(&format!("table-{replica}")),
            );
            table.spawn();
            table.serving().await;
            tables.push(table);
        }

        let mut env = common.clone();
        env.extend(infra.service_identity_env(&accounts_url));
        set(&mut env, "OKEY_DATABASE__URL", db("scoring"));
        let mut scoring = Process::new(
            ServiceKind::Scoring,
            free_port(),
            with_extra(env),
            log("scoring"),
        );
        scoring.spawn();
        scoring.serving().await;

        let table_url = match &layout.proxied {
            Some(faults) => {
                let proxy = Proxy::start(tables[0].port, faults.clone()).await;
                let url = proxy.url();
                proxies.push(proxy);
                url
            }
            None => tables[0].url(),
        };
        let mut env = common.clone();
        env.extend(infra.service_identity_env(&accounts_url));
        set(&mut env, "OKEY_DATABASE__URL", db("matchmaking"));
        set(&mut env, "OKEY_MATCHMAKING__TABLE_URL", table_url);
        set(&mut env, "OKEY_MATCHMAKING__SCORING_URL", scoring.url());
        set(&mut env, "OKEY_MATCHMAKING__BOT_FILL_AFTER_SECS", "1");
        set(&mut env, "OKEY_MATCHMAKING__CLAIM_LEASE_SECS", "2");
        let mut matchmaking = Process::new(
            ServiceKind::Matchmaking,
            free_port(),
            with_extra(env),
            log("matchmaking"),
        );
        matchmaking.spawn();
        matchmaking.serving().await;

        Platform {
            name: name.to_owned(),
            infra: infra.clone(),
            prefix,
            accounts,
            matchmaking,
            tables,
            scoring,
            table_database_url,
            proxies,
        }
    }

    /// The process of `service` (the first table replica for the table).
    pub fn process_mut(&mut self, service: ServiceKind) -> &mut Process {
        match service {
            ServiceKind::Accounts => &mut self.accounts,
            ServiceKind::Matchmaking => &mut self.matchmaking,
            ServiceKind::Table => &mut self.tables[0],
            ServiceKind::Scoring => &mut self.scoring,
        }
    }

    /// `kill -9` of `service`, then the same binary started again on the same port, SERVING.
    pub async fn kill9_and_restart(&mut self, service: ServiceKind) {
        let process = self.process_mut(service);
        process.kill9();
        process.spawn();
        process.serving().await;
    }

    /// The last lines of every process's log, for a failure's report.
    pub fn log_tails(&self, lines: usize) -> String {
        let mut out = String::new();
        for p in [&self.accounts, &self.matchmaking, &self.scoring]
            .into_iter()
            .chain(self.tables.iter())
        {
            out.push_str(&format!(
                "--- {} ({}):\n{}\n",
                p.service.name(),
                p.log_path().display(),
                p.log_tail(lines)
            ));
        }
        out
    }
}
