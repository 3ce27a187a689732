//! Servers a fault test starts for itself: PostgreSQL, Redis and NATS (JetStream) on free
//! loopback ports with their data in a temporary directory, so the test can stop, restart or
//! flush them without touching the shared infrastructure (`deploy/infra.sh`) that other tests use
//! at the same time. Where the server programs are: `OKEY_TEST_PG_BINDIR` and
//! `OKEY_TEST_NATS_SERVER` (written to `.run/infra.env` by `deploy/infra.sh up`), else the newest
//! `/usr/lib/postgresql/*/bin` and `nats-server` on the `PATH`; `redis-server` on the `PATH`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use okey_platform::testing::free_port;

/// A fresh directory under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "okey-e2e-{what}-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A certificate authority of the test's own and a certificate it signed for `127.0.0.1`, made
/// with `openssl` (installed with the infrastructure), for servers that speak TLS only.
pub struct TestCertificates {
    scratch: Scratch,
}

impl TestCertificates {
    pub fn generate() -> TestCertificates {
        let scratch = Scratch::new("tls");
        let openssl = |args: &[&str]| {
            let mut command = Command::new("openssl");
            command.args(args).current_dir(&scratch.0);
            run_checked(
                command,
                &format!("openssl (apt-get install openssl) {args:?}"),
            );
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        openssl(
            &[
                &["req", "-x509"][..],
                &ec,
                &["-keyout", "ca.key", "-out", "ca.crt", "-days", "2"],
                &["-subj", "/CN=okey test CA"],
                &["-addext", "basicConstraints=critical,CA:TRUE"],
                &["-addext", "keyUsage=critical,keyCertSign,cRLSign"],
            ]
            .concat(),
        );
        openssl(
            &[
                &["req"][..],
                &ec,
                &[
                    "-keyout",
                    "server.key",
                    "-out",
                    "server.csr",
                    "-subj",
                    "/CN=127.0.0.1",
                ],
            ]
            .concat(),
        );
        std::fs::write(
            scratch.0.join("server.ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
             keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
        )
        .expect("the extensions file");
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ]);
        TestCertificates { scratch }
    }

    /// The authority's certificate (PEM): what a client trusts.
    pub fn ca(&self) -> PathBuf {
        self.scratch.0.join("ca.crt")
    }

    fn server_cert(&self) -> PathBuf {
        self.scratch.0.join("server.crt")
    }

    fn server_key(&self) -> PathBuf {
        self.scratch.0.join("server.key")
    }
}

/// Runs `command` to its end (`what` names it); panics with what it printed unless it succeeded.
fn run_checked(mut command: Command, what: &str) {
    let out = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what} does not run: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until something accepts TCP connections on `port` (within `within`).
pub fn wait_port(port: u16, within: Duration) -> Result<(), String> {
    let deadline = Instant::now() + within;
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    loop {
        if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("nothing answers on port {port} after {within:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends SIGTERM to `child` and waits for it to exit (SIGKILL after `grace`).
fn terminate(child: &mut Child, grace: Duration) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The directory of PostgreSQL's server programs (`initdb`, `pg_ctl`).
fn pg_bindir() -> PathBuf {
    if let Some(dir) = std::env::var_os("OKEY_TEST_PG_BINDIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").exists() {
            return dir;
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .expect("PostgreSQL's server programs (set OKEY_TEST_PG_BINDIR, or run deploy/infra.sh up)")
}

/// A PostgreSQL cluster of the test's own (role `okey`, trusted on loopback).
pub struct OwnPostgres {
    pub port: u16,
    bindir: PathBuf,
    data: PathBuf,
    as_postgres: bool,
    /// Serves TLS only (see [`OwnPostgres::start_tls`]).
    tls: bool,
    scratch: Scratch,
}

impl OwnPostgres {
    /// initdb and start (about a second).
    pub fn start() -> OwnPostgres {
        OwnPostgres::start_with(None)
    }

    /// Like [`OwnPostgres::start`], with TLS on `certificates`' server certificate, and every
    /// connection over TCP without TLS refused (`hostnossl … reject`).
    pub fn start_tls(certificates: &TestCertificates) -> OwnPostgres {
        OwnPostgres::start_with(Some(certificates))
    }

    fn start_with(certificates: Option<&TestCertificates>) -> OwnPostgres {
        let scratch = Scratch::new("pg");
        let as_postgres = running_as_root();
        if let Some(c) = certificates {
            // The server reads its key only if the key is its own and private: copied into the
            // directory given to the postgres user below.
            for (from, to) in [
                (c.server_cert(), "server.crt"),
                (c.server_key(), "server.key"),
            ] {
                std::fs::copy(from, scratch.0.join(to)).expect("the certificate is copied");
            }
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(
                scratch.0.join("server.key"),
                std::fs::Permissions::from_mode(0o600),
            )
            .expect("the key is private");
        }
        let pg = OwnPostgres {
            port: free_port(),
            bindir: pg_bindir(),
            data: scratch.0.join("data"),
            as_postgres,
            tls: certificates.is_some(),
            scratch,
        };
        if as_postgres {
            // PostgreSQL refuses to run as root: the cluster belongs to the postgres user.
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&pg.scratch.0)
                .status()
                .expect("chown runs");
            assert!(status.success(), "chown of the PostgreSQL directory");
        }
        let data = pg.data.display().to_string();
        pg.run(
            "initdb",
            &["-D", &data, "-U", "okey", "--auth=trust", "-E", "UTF8"],
        );
        if pg.tls {
            std::fs::write(
                pg.data.join("pg_hba.conf"),
                "local all all trust\n\
                 hostssl all all 127.0.0.1/32 trust\n\
                 hostnossl all all 127.0.0.1/32 reject\n",
            )
            .expect("pg_hba.conf is written");
        }
        // A port is free when it is picked, but the other scenarios' processes (and their
        // outgoing connections) draw from the same range: it is picked after initdb's second,
        // and a port taken meanwhile is picked again.
        let mut pg = pg;
        pg.port = free_port();
        for attempt in 1.. {
            match pg.try_start_server() {
                Ok(()) => break,
                Err(log) if attempt < 5 && log.contains("could not bind") => {
                    pg.port = free_port();
                }
                Err(log) => panic!("PostgreSQL did not start on port {}: {log}", pg.port),
            }
        }
        pg
    }

    /// `program` of PostgreSQL's, to run as the postgres user when this test runs as root.
    fn command(&self, program: &str) -> Command {
        let path = self.bindir.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    fn run(&self, program: &str, args: &[&str]) {
        let mut command = self.command(program);
        command.args(args);
        run_checked(command, &format!("{program} {args:?}"));
    }

    fn start_server(&self) {
        if let Err(log) = self.try_start_server() {
            panic!(
                "PostgreSQL did not start again on port {}: {log}",
                self.port
            );
        }
    }

    /// `pg_ctl start`; on failure, what pg_ctl said and the end of the server's log.
    fn try_start_server(&self) -> Result<(), String> {
        let mut options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c max_connections=100 -c fsync=off",
            self.port,
            self.scratch.0.display()
        );
        if self.tls {
            let dir = self.scratch.0.display();
            options.push_str(&format!(
                " -c ssl=on -c ssl_cert_file={dir}/server.crt -c ssl_key_file={dir}/server.key"
            ));
        }
        let log = self.scratch.0.join("postgres.log");
        let out = self
            .command("pg_ctl")
            .args(["-D", &self.data.display().to_string(), "-l"])
            .arg(&log)
            .args(["-w", "-t", "60", "-o", &options, "start"])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("pg_ctl runs: {e}"));
        if out.status.success() {
            return Ok(());
        }
        let server_log = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = server_log.lines().rev().take(20).collect();
        Err(format!(
            "{}{}\n--- {}:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            log.display(),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ))
    }

    /// A URL of the cluster's `postgres` database (services replace the database part).
    pub fn url(&self) -> String {
        format!("postgres://okey@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops the server with a fast shutdown (sessions are disconnected, then a checkpoint).
    pub fn stop_fast(&self) {
        let data = self.data.display().to_string();
        self.run(
            "pg_ctl",
            &["-D", &data, "-m", "fast", "-w", "-t", "60", "stop"],
        );
    }

    /// Starts it again on the same port.
    pub fn start_again(&self) {
        self.start_server();
    }

    /// Where the server's log is.
    pub fn log(&self) -> &Path {
        &self.scratch.0
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let data = self.data.display().to_string();
        let _ = self
            .command("pg_ctl")
            .args(["-D", &data, "-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A Redis server of the test's own (no persistence: a restart loses every key).
pub struct OwnRedis {
    pub port: u16,
    child: Option<Child>,
    /// The certificate, key and authority of a server that speaks TLS only.
    tls: Option<[PathBuf; 3]>,
    scratch: Scratch,
}

impl OwnRedis {
    pub fn start() -> OwnRedis {
        let mut redis = OwnRedis {
            port: free_port(),
            child: None,
            tls: None,
            scratch: Scratch::new("redis"),
        };
        redis.start_again();
        redis
    }

    /// Like [`OwnRedis::start`], speaking TLS only on its port, with `certificates`' server
    /// certificate (clients are not asked for one).
    pub fn start_tls(certificates: &TestCertificates) -> OwnRedis {
        let mut redis = OwnRedis {
            port: free_port(),
            child: None,
            tls: Some([
                certificates.server_cert(),
                certificates.server_key(),
                certificates.ca(),
            ]),
            scratch: Scratch::new("redis"),
        };
        redis.start_again();
        redis
    }

    /// Starts the server (again) on its port.
    pub fn start_again(&mut self) {
        let port = self.port.to_string();
        let mut command = Command::new("redis-server");
        match &self.tls {
            None => command.args(["--port", &port]),
            Some([cert, key, ca]) => command
                .args([
                    "--port",
                    "0",
                    "--tls-port",
                    &port,
                    "--tls-auth-clients",
                    "no",
                ])
                .arg("--tls-cert-file")
                .arg(cert)
                .arg("--tls-key-file")
                .arg(key)
                .arg("--tls-ca-cert-file")
                .arg(ca),
        };
        let child = command
            .args(["--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&self.scratch.0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts (apt-get install redis-server)");
        self.child = Some(child);
        wait_port(self.port, Duration::from_secs(20)).expect("Redis answers");
    }

    /// Stops the server (SIGTERM).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            terminate(&mut child, Duration::from_secs(10));
        }
    }

    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A NATS server with JetStream of the test's own; its store survives a restart.
pub struct OwnNats {
    pub port: u16,
    program: PathBuf,
    child: Option<Child>,
    scratch: Scratch,
    /// The user and password every client must give, if any.
    user: Option<(String, String)>,
}

impl OwnNats {
    pub fn start() -> OwnNats {
        OwnNats::start_with(None)
    }

    /// A server that refuses any client without this user and password.
    pub fn start_with_user(user: &str, password: &str) -> OwnNats {
        OwnNats::start_with(Some((user.to_owned(), password.to_owned())))
    }

    fn start_with(user: Option<(String, String)>) -> OwnNats {
        let program = std::env::var_os("OKEY_TEST_NATS_SERVER")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("nats-server"));
        let mut nats = OwnNats {
            port: free_port(),
            program,
            child: None,
            scratch: Scratch::new("nats"),
            user,
        };
        nats.start_again();
        nats
    }

    /// Starts the server (again) on its port, with the same JetStream store.
    pub fn start_again(&mut self) {
        let mut command = Command::new(&self.program);
        if let Some((user, password)) = &self.user {
            command.args(["--user", user, "--pass", password]);
        }
        let child = command
            .args(["-js", "-a", "127.0.0.1", "-p", &self.port.to_string()])
            .arg("-sd")
            .arg(self.scratch.0.join("store"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{} starts (set OKEY_TEST_NATS_SERVER or run deploy/infra.sh up): {e}",
                    self.program.display()
                )
            });
        self.child = Some(child);
        wait_port(self.port, Duration::from_secs(20)).expect("NATS answers");
    }

    /// Stops the server (SIGTERM: it shuts down cleanly, keeping its store).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            terminate(&mut child, Duration::from_secs(10));
        }
    }

    /// The server's URL, without credentials.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// The URL with the server's user and password in it, percent-encoded, as a deployment
    /// gives it (`nats://user:password@host:port`).
    pub fn url_with_credentials(&self) -> String {
        let Some((user, password)) = &self.user else {
            return self.url();
        };
        let encode = |s: &str| {
            percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
        };
        format!(
            "nats://{}:{}@127.0.0.1:{}",
            encode(user),
            encode(password),
            self.port
        )
    }
}

impl Drop for OwnNats {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
