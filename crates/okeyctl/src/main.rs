//! `okeyctl`: the 101 Okey platform's command-line tool.

/// `println!` for the commands' output: when standard output is closed (`okeyctl replay … |
/// head`), the program ends quietly with 141, as a Unix tool stopped by SIGPIPE does, instead of
/// panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(141);
            }
            panic!("cannot write to standard output: {e}");
        }
    }};
}

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use okey_bots::Level;
use okey_rules::Preset;
use okeyctl::{conformance, simulate};

#[derive(Parser)]
#[command(
    name = "okeyctl",
    version,
    about = "Command-line tool for the 101 Okey platform"
)]
struct Cli {
    #[command(subcommand)]
    command: Top,
}

#[derive(Subcommand)]
enum Top {
    /// Play conformance scenarios through the rules engine.
    Conformance {
        #[command(subcommand)]
        command: ConformanceCmd,
    },
    /// Let bots play hands through the engine, checking its invariants after every step; the last
    /// line of output is one JSON object with the totals.
    Simulate(SimulateArgs),
    /// Tell a hand step by step: every event, and exactly why each penalty and score was written.
    /// From a file, or a hand fetched from the table service (`tables/{id} --hand N`, a token);
    /// a hand still in play (support tokens) is told up to its latest event, marked in play.
    /// Exits 1 when the hand is not what the rules give (a file is told up to the difference; a
    /// fetched hand whose deal or seeds do not hold together is not told), 2 when it cannot be
    /// read (a missing or broken file; a hand not fetched: not found, not allowed, the service
    /// not answering).
    Replay(ReplayArgs),
    /// Play a match on the running platform (`make run`) and tell it hand by hand: signs a
    /// guest in, who finds a table with bots through matchmaking (--matchmaking, as `make run`
    /// does) and plays its seat, or else a table of four bots created with an operator token;
    /// follows it and writes each hand for `okeyctl replay`.
    Demo(DemoArgs),
    /// Write a hand's events, fetched from the table service (`GetHandHistory`, with a token), as
    /// a file `okeyctl replay` reads (one JSON event per line). A hand still in play (support
    /// tokens) is written up to its latest event, without `hand_ended`. Exits 2 when the hand
    /// cannot be fetched (not found, not allowed, the service not answering).
    ExportHand(ExportHandArgs),
    /// Check a hand alone (a player's token, once it has ended): the revealed seed against the
    /// commitment, the deal dealt again, every event re-folded through the rules, every penalty
    /// and score re-derived. Prints each check; exits 1 naming the event of a difference, 2 when
    /// it cannot check (a hand still in play: its seed is revealed at its end). Given a file
    /// `export-hand` wrote instead, checks every move, penalty and score of it the same way.
    Verify(VerifyArgs),
    /// Print an access token minted with the local development signing key (`make run` writes it
    /// into its run directory, `.run/` or OKEY_RUN_DIR), e.g. a support token for `export-hand` on
    /// any table. Local runs only.
    Token(TokenArgs),
}

/// Where the table service is and who calls it.
#[derive(Args)]
struct Remote {
    /// The table service (by default on the port OKEY_TABLE_PORT names, as for `make run`).
    #[arg(long, env = "OKEY_TABLE_URL", default_value_t = okeyctl::local::local_url("table"))]
    table_url: String,
    /// An access token: a player's (hands they sat in, once ended) or a support token (any
    /// hand, also one still in play; the read is audited).
    #[arg(long, env = "OKEY_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

impl Remote {
    fn token(&self) -> Result<&str, String> {
        // A token copied with its header's scheme (`Bearer eyJ…`) is the same token.
        let token = self.token.as_deref().map(|t| {
            let t = t.trim();
            t.strip_prefix("Bearer ")
                .or_else(|| t.strip_prefix("bearer "))
                .unwrap_or(t)
                .trim()
        });
        token.filter(|t| !t.is_empty()).ok_or_else(|| {
            "an access token is needed: --token or OKEY_TOKEN (a player's from SignInAsGuest, or \
             `okeyctl token --role support` on a local run)"
                .to_owned()
        })
    }
}

#[derive(Args)]
struct VerifyArgs {
    /// The table: `tables/{id}` (with --hand); or a file `okeyctl export-hand` wrote, whose
    /// deal is taken as written (a file holds no seed commitment) and whose every move, penalty
    /// and score is re-derived.
    table: String,
    /// The hand of the table, 1-based.
    #[arg(long, value_parser = hand_number())]
    hand: Option<u32>,
    #[command(flatten)]
    remote: Remote,
}

#[derive(Args)]
struct TokenArgs {
    /// The roles the token carries: player, support, analyst or admin (repeat for several).
    #[arg(long = "role", default_value = "support")]
    roles: Vec<String>,
    /// The token's subject (its player id).
    #[arg(long, default_value = "okeyctl-support")]
    subject: String,
    /// How long it lives, in seconds (1 to 86,400).
    #[arg(long, default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    ttl_secs: u64,
    /// The accounts service: its published keys, issuer and audience (by default on the port
    /// OKEY_ACCOUNTS_PORT names, as for `make run`).
    #[arg(long, default_value_t = okeyctl::local::local_url("accounts"))]
    accounts: String,
    /// The PKCS#8 Ed25519 private key (PEM) the accounts service signs with (by default the one
    /// `make run` wrote into OKEY_RUN_DIR, else .run).
    #[arg(long, default_value_os_t = okeyctl::local::local_signing_key())]
    signing_key: PathBuf,
}

#[derive(Args)]
struct DemoArgs {
    /// The accounts service (by default on the port OKEY_ACCOUNTS_PORT names, as for `make run`).
    #[arg(long, default_value_t = okeyctl::local::local_url("accounts"))]
    accounts: String,
    /// The table service (by default on the port OKEY_TABLE_PORT names, as for `make run`).
    #[arg(long, default_value_t = okeyctl::local::local_url("table"))]
    table: String,
    /// The matchmaking service: the guest finds a table there with bots (quick play) and plays
    /// its seat, no operator token needed. Without it, a table of four bots is made with an
    /// operator token from --signing-key.
    #[arg(long)]
    matchmaking: Option<String>,
    /// A PKCS#8 Ed25519 private key (PEM) the accounts service signs with; `make run` generates
    /// one there (in OKEY_RUN_DIR, else .run) and starts accounts with it.
    #[arg(long, default_value_os_t = okeyctl::local::local_signing_key())]
    signing_key: PathBuf,
    /// Write no hand files (each hand is otherwise fetched through GetHandHistory).
    #[arg(long)]
    no_export: bool,
    /// Where the hand files go (`<dir>/<table id>/hand-<n>.jsonl`; by default in the run
    /// directory, OKEY_RUN_DIR or .run).
    #[arg(long, default_value_os_t = okeyctl::local::local_run_dir().join("demo"))]
    hands_dir: PathBuf,
    /// Rule preset: classic, yudum, practice, solo, penalties.
    #[arg(long, default_value = "classic")]
    preset: String,
    /// The bots' level: easy or strong.
    #[arg(long, default_value = "strong", value_parser = parse_bot_level)]
    bots: okey_proto::v1::BotLevel,
    /// Give up when the match has not ended after this long.
    #[arg(long, default_value_t = 900)]
    timeout_secs: u64,
    /// No spinner, even on a terminal.
    #[arg(long)]
    no_progress: bool,
    /// How the printed hints call grpcurl.
    #[arg(long, default_value = ".tools/venv/bin/grpcurl")]
    grpcurl: String,
    /// How the printed hints call okeyctl (deploy/demo.sh passes the binary it runs when
    /// OKEY_SERVICES_BIN names prebuilt ones).
    #[arg(long, default_value = "cargo run -q -p okeyctl --")]
    okeyctl: String,
}

/// A hand number as the tables count them: 1 to 2^31 − 1 (the contract's 32-bit signed number).
fn hand_number() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..=i64::from(i32::MAX))
}

#[derive(Args)]
struct ExportHandArgs {
    /// The table: `tables/{id}` or the bare id.
    table: String,
    /// The hand number, 1-based.
    #[arg(value_parser = hand_number())]
    hand: u32,
    #[command(flatten)]
    remote: Remote,
    /// Write here instead of standard output.
    #[arg(long, short)]
    out: Option<PathBuf>,
}

fn parse_bot_level(s: &str) -> Result<okey_proto::v1::BotLevel, String> {
    match s {
        "easy" => Ok(okey_proto::v1::BotLevel::Easy),
        "strong" => Ok(okey_proto::v1::BotLevel::Hard),
        _ => Err(format!("`{s}` is not a bot level: use easy or strong")),
    }
}

#[derive(Args)]
struct ReplayArgs {
    /// A conformance scenario, or a hand's events as a JSON array (or one JSON event per line),
    /// starting with `hand_started`; or `tables/{id}` (or the bare id) with --hand, fetched
    /// from the table service.
    source: String,
    /// The hand of `tables/{id}` to fetch, 1-based.
    #[arg(long, value_parser = hand_number())]
    hand: Option<u32>,
    #[command(flatten)]
    remote: Remote,
}

#[derive(Args)]
struct SimulateArgs {
    /// How many hands to play.
    #[arg(long, default_value_t = 1000)]
    hands: u64,
    /// The run's seed; hand i is dealt from SHA-256("okeyctl simulate v1", seed, i).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Rule preset: classic, yudum, practice, solo, penalties (or the seed number, 000-004).
    #[arg(long, default_value = "classic", value_parser = parse_preset)]
    preset: Preset,
    /// The lineup, seats 0-3 (one level fills all four seats).
    #[arg(long, default_value = "easy", value_parser = parse_lineup)]
    bots: Lineup,
    /// Turn the lineup one seat every four hands, so every bot plays every seat.
    #[arg(long)]
    rotate: bool,
    /// Play with partners (seats 0+2 against 1+3) whatever the preset says.
    #[arg(long)]
    partners: bool,
    /// Replay the event log after every command, not only at the end of each hand (slow).
    #[arg(long)]
    replay_every_step: bool,
    /// No progress bar, even on a terminal.
    #[arg(long)]
    no_progress: bool,
}

#[derive(Clone, Copy)]
struct Lineup([Level; 4]);

fn parse_preset(s: &str) -> Result<Preset, String> {
    Preset::parse(s).ok_or_else(|| {
        format!(
            "`{s}` is not a preset: use classic, yudum, practice, solo or penalties (or the \
             seed number each follows, 000 to 004)"
        )
    })
}

fn parse_lineup(s: &str) -> Result<Lineup, String> {
    let levels = s
        .split(',')
        .map(|l| l.trim().parse::<Level>())
        .collect::<Result<Vec<_>, _>>();
    match levels.map_err(|e| e.to_string())?.as_slice() {
        [one] => Ok(Lineup([*one; 4])),
        [a, b, c, d] => Ok(Lineup([*a, *b, *c, *d])),
        other => Err(format!(
            "name one level or four (one per seat), not {}",
            other.len()
        )),
    }
}

#[derive(Subcommand)]
enum ConformanceCmd {
    /// Play each file and print one JSON object per file (compares nothing).
    Run {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Play each file and compare with its `expect` fields; exit 1 if any failed (a file that
    /// cannot be read or parsed fails too, with the reason).
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Top::Conformance {
            command: ConformanceCmd::Run { files },
        } => conformance_run(&files),
        Top::Conformance {
            command: ConformanceCmd::Check { files },
        } => conformance_check(&files),
        Top::Simulate(args) => simulate(&args),
        Top::Demo(args) => demo(args),
        Top::ExportHand(args) => export_hand(&args),
        Top::Replay(args) => replay(&args),
        Top::Token(args) => token(&args),
        Top::Verify(args) => verify(&args),
    }
}

/// Verifies a hand; exits 1 on a difference, 2 when it could not be read.
fn verify(args: &VerifyArgs) -> ExitCode {
    // As `replay` reads its argument, so a mistyped file name is said to be missing, not taken
    // for a table.
    let Some(table) = okeyctl::history::named_table(&args.table) else {
        return verify_file(std::path::Path::new(&args.table));
    };
    let Some(hand) = args.hand else {
        eprintln!("okeyctl verify {}: which hand? Pass --hand N", args.table);
        return ExitCode::from(2);
    };
    let token = match args.remote.token() {
        Ok(token) => token,
        Err(e) => {
            eprintln!("okeyctl verify: {e}");
            return ExitCode::from(2);
        }
    };
    let report = runtime().block_on(okeyctl::verify::run(
        &args.remote.table_url,
        token,
        &table,
        hand,
    ));
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            eprintln!("okeyctl verify: {e:#}");
            return ExitCode::from(2);
        }
    };
    say!("{table} hand {}", hand);
    for line in &report.checked {
        say!("  {line}");
    }
    match &report.difference {
        None => {
            say!(
                "verified: hand {} is what its seed and the rules give",
                hand
            );
            ExitCode::SUCCESS
        }
        Some(d) => {
            say!("  DIFFERS     v{} {}: {}", d.version, d.event, d.problem);
            say!(
                "not verified: the first difference is in v{} ({})",
                d.version,
                d.event
            );
            ExitCode::from(1)
        }
    }
}

/// Checks a file `export-hand` wrote: every move re-decided, every penalty and score re-derived.
fn verify_file(path: &std::path::Path) -> ExitCode {
    let events = match okeyctl::replay::load_events(path) {
        Ok(events) => events,
        Err(e) => {
            eprintln!("{}: {e:#}", path.display());
            return ExitCode::from(2);
        }
    };
    let checked = okey_table::verify::verify_events(&events);
    match checked.problem {
        None => {
            say!(
                "verified: {} events of {}: every move is one the rules allow from the deal the \
                 file gives, every penalty and end-of-hand score is the one they give{}",
                events.len(),
                path.display(),
                if okeyctl::history::has_end(&events) {
                    ""
                } else {
                    " (the hand has no end in the file: checked as far as it goes)"
                }
            );
            say!(
                "  the deal itself is taken from the file: to check it against the seed the \
                 table committed to, verify tables/{{id}} --hand N"
            );
            ExitCode::SUCCESS
        }
        Some(problem) => {
            say!("not verified: {problem}");
            ExitCode::from(1)
        }
    }
}

/// Tells a hand from a file, or fetched from the table service.
fn replay(args: &ReplayArgs) -> ExitCode {
    let Some(source) = okeyctl::history::named_table(&args.source) else {
        let path = PathBuf::from(&args.source);
        if args.hand.is_some() {
            eprintln!(
                "okeyctl replay: --hand is for tables/{{id}}; the file {} holds one hand, told \
                 whole",
                path.display()
            );
        }
        return match okeyctl::replay::load_events(&path) {
            Ok(events) => {
                // A file is told only as far as the rules explain it: a changed number or tile
                // is said, and the telling stops before it.
                let checked = okey_table::verify::verify_events(&events);
                if let (Some(problem), Some(at)) = (&checked.problem, checked.at) {
                    say!(
                        "NOT AS THE RULES GIVE IT: {problem}. The file was changed, or is not \
                         what this engine wrote; told up to version {}",
                        at.saturating_sub(1)
                    );
                    print_replay(&events[..(at.saturating_sub(1) as usize).min(events.len())]);
                    return ExitCode::from(1);
                }
                print_file_replay(&events);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{}: {e:#}", path.display());
                ExitCode::from(2)
            }
        };
    };
    let Some(hand) = args.hand else {
        eprintln!("okeyctl replay {source}: which hand? Pass --hand N");
        return ExitCode::from(2);
    };
    let token = match args.remote.token() {
        Ok(token) => token,
        Err(e) => {
            eprintln!("okeyctl replay: {e}");
            return ExitCode::from(2);
        }
    };
    let fetched = runtime().block_on(okeyctl::history::fetch(
        &args.remote.table_url,
        token,
        &source,
        hand,
    ));
    // Not fetched (no such hand, not allowed, the service not answering): nothing to tell, as
    // `verify` says it (exit 2); exit 1 stays for a hand that is not what the rules give.
    let fetched = match fetched {
        Ok(fetched) => fetched,
        Err(e) => {
            eprintln!("okeyctl replay: {e:#}");
            return ExitCode::from(2);
        }
    };
    let read = fetched
        .deals()
        .map(|deals| (fetched.in_play_note(), fetched.told(&deals)));
    match read {
        Ok((in_play, lines)) => {
            if let Some(note) = in_play {
                say!("{note}");
            }
            for line in lines {
                if line.event.is_empty() {
                    say!("{}", line.text);
                } else {
                    say!("v{:<4} {:<20} {}", line.version, line.event, line.text);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("okeyctl replay: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn print_replay(events: &[okey_rules::Event]) {
    for line in okey_rules::replay::narrate(events) {
        say!("v{:<4} {:<20} {}", line.version, line.event, line.text);
    }
}

/// Tells a hand read from a file; one without its end (exported while in play, or events
/// stopping short) says so first, so it is not taken for a finished hand.
fn print_file_replay(events: &[okey_rules::Event]) {
    let lines = okey_rules::replay::narrate(events);
    if !okeyctl::history::has_end(events) {
        say!(
            "this hand has no end here (exported while in play, or its events stop short): told \
             up to its version {}; no end-of-hand scores",
            lines.last().map_or(0, |l| l.version)
        );
    }
    for line in lines {
        say!("v{:<4} {:<20} {}", line.version, line.event, line.text);
    }
}

/// Prints a token minted with the local signing key.
fn token(args: &TokenArgs) -> ExitCode {
    let roles: Vec<&str> = args.roles.iter().map(String::as_str).collect();
    if let Some(bad) = roles
        .iter()
        .find(|r| !["player", "support", "analyst", "admin"].contains(*r))
    {
        eprintln!("okeyctl token: `{bad}` is not a role: use player, support, analyst or admin");
        return ExitCode::from(2);
    }
    let minted = runtime().block_on(okeyctl::demo::local_token(
        &args.accounts,
        &args.signing_key,
        &args.subject,
        &roles,
        std::time::Duration::from_secs(args.ttl_secs),
    ));
    match minted {
        Ok(token) => {
            say!("{token}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("okeyctl token: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime starts")
}

/// With `OKEY_TELEMETRY__OTLP_ENDPOINT` set (as for the services), the demo's calls are client
/// spans sent there: each call starts the trace the services continue. No log lines: the
/// demo's output is its story.
fn demo_telemetry() -> Option<okey_telemetry::Telemetry> {
    let endpoint = std::env::var("OKEY_TELEMETRY__OTLP_ENDPOINT").unwrap_or_default();
    if endpoint.is_empty() {
        return None;
    }
    let settings = okey_telemetry::TelemetrySettings {
        log_filter: "off".into(),
        log_format: okey_telemetry::LogFormat::Text,
        otlp_endpoint: endpoint,
    };
    match okey_telemetry::init("okeyctl", env!("CARGO_PKG_VERSION"), &settings) {
        Ok(telemetry) => Some(telemetry),
        Err(e) => {
            eprintln!("okeyctl demo: no traces: {e}");
            None
        }
    }
}

/// Plays the demo; exits 1 with the reason when something on the way failed.
fn demo(args: DemoArgs) -> ExitCode {
    let demo = okeyctl::demo::Demo {
        accounts_url: args.accounts,
        table_url: args.table,
        matchmaking_url: args.matchmaking,
        signing_key: args.signing_key,
        export: !args.no_export,
        hands_dir: args.hands_dir,
        preset: args.preset,
        bots: args.bots,
        timeout: std::time::Duration::from_secs(args.timeout_secs),
        progress: !args.no_progress,
        grpcurl: args.grpcurl,
        okeyctl: args.okeyctl,
    };
    let mut out = std::io::stdout();
    let played = runtime().block_on(async {
        let telemetry = demo_telemetry();
        let played = okeyctl::demo::run(&demo, &mut out).await;
        if let Some(telemetry) = telemetry {
            // Flushing waits for the export, which this (one-thread) runtime drives.
            let _ = tokio::task::spawn_blocking(move || drop(telemetry)).await;
        }
        played
    });
    match played {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("okeyctl demo: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// Writes a finished hand for `okeyctl replay`, fetched from the table service.
fn export_hand(args: &ExportHandArgs) -> ExitCode {
    let token = match args.remote.token() {
        Ok(token) => token,
        Err(e) => {
            eprintln!("okeyctl export-hand: {e}");
            return ExitCode::from(2);
        }
    };
    let fetched = runtime().block_on(okeyctl::history::fetch(
        &args.remote.table_url,
        token,
        &args.table,
        args.hand,
    ));
    let read = fetched.and_then(|f| {
        let deals = f.deals()?;
        Ok((f.in_play_note(), deals))
    });
    let (in_play, deals) = match read {
        Ok(read) => read,
        Err(e) => {
            // Not fetched or not readable: exit 2, as `replay` and `verify` say it.
            eprintln!("okeyctl export-hand: {e:#}");
            return ExitCode::from(2);
        }
    };
    let count = deals.all().count();
    if count > 1 {
        eprintln!(
            "hand {} was dealt {count} times (void hands are dealt again); writing the last deal",
            args.hand,
        );
    }
    if let Some(note) = in_play {
        // The file itself stops before `hand_ended`: `okeyctl replay FILE` tells it as a hand
        // without its end, and it cannot be verified until the hand has ended.
        eprintln!(
            "{note}; the file has no hand_ended: `okeyctl verify` checks it only as far as it \
             goes until the hand ends (its seed is revealed then)"
        );
    }
    let text = okeyctl::history::to_jsonl(deals.last().expect("at least one deal"));
    match &args.out {
        Some(path) => match std::fs::write(path, &text) {
            Ok(()) => {
                eprintln!(
                    "wrote hand {} ({} events) to {}: `okeyctl replay {}` tells it, `okeyctl \
                     verify {}` checks it",
                    args.hand,
                    text.lines().count(),
                    path.display(),
                    path.display(),
                    path.display()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("okeyctl export-hand: cannot write {}: {e}", path.display());
                ExitCode::from(1)
            }
        },
        None => {
            print!("{text}");
            ExitCode::SUCCESS
        }
    }
}

/// Runs the simulation; exits 1 if an invariant broke or a bot command was rejected.
fn simulate(args: &SimulateArgs) -> ExitCode {
    let mut rules = args.preset.rules();
    rules.partners |= args.partners;
    let sim = simulate::Simulation {
        hands: args.hands,
        seed: args.seed,
        rules,
        bots: args.bots.0,
        rotate: args.rotate,
        replay_every_step: args.replay_every_step,
    };
    let bar = if args.no_progress || args.hands < 500 {
        indicatif::ProgressBar::hidden()
    } else {
        let style = indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} hands, {per_sec}, {eta} left",
        )
        .expect("the template is valid");
        indicatif::ProgressBar::with_draw_target(
            Some(args.hands),
            indicatif::ProgressDrawTarget::stderr(),
        )
        .with_style(style)
    };
    let report = simulate::run(&sim, &mut |done| {
        if done % 64 == 0 {
            bar.set_position(done);
        }
    });
    bar.finish_and_clear();
    for line in &report.details {
        eprintln!("{line}");
    }
    if let Some(c) = &report.comparison {
        let d = &c.score_diff;
        eprintln!(
            "{} - {}: mean end-of-hand score difference {:.2} (stddev {:.2}, 95% CI ±{:.2}, {} hands): {}",
            c.a,
            c.b,
            d.mean,
            d.stddev,
            d.ci95,
            d.n,
            if d.mean + d.ci95 < 0.0 {
                "lower beyond the interval"
            } else if d.mean - d.ci95 > 0.0 {
                "higher beyond the interval"
            } else {
                "within the interval"
            }
        );
    }
    say!("{}", report.to_json());
    if report.invariant_violations > 0 || report.rejected_commands > 0 || report.stuck_turns > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn conformance_run(files: &[PathBuf]) -> ExitCode {
    let mut bad = false;
    for f in files {
        match conformance::load(f).and_then(|s| conformance::play(&s)) {
            Ok((out, _, _)) => say!(
                "{}",
                serde_json::to_string(&out).expect("output serializes")
            ),
            Err(e) => {
                eprintln!("{}: {e:#}", f.display());
                bad = true;
            }
        }
    }
    if bad {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

fn conformance_check(files: &[PathBuf]) -> ExitCode {
    let (mut passed, mut failed) = (0, 0);
    for f in files {
        let scenario = match conformance::load(f) {
            Ok(s) => s,
            Err(e) => {
                say!("{}: cannot be played: {e:#}", f.display());
                failed += 1;
                continue;
            }
        };
        match conformance::play(&scenario) {
            Ok((out, _, _)) => {
                let diffs = conformance::compare(&scenario, &out);
                if diffs.is_empty() {
                    passed += 1;
                } else {
                    failed += 1;
                    // One line per failing file, whatever the name holds.
                    let name: String = scenario
                        .name
                        .chars()
                        .map(|c| {
                            if okey_platform::fields::unfit_to_show(c) {
                                ' '
                            } else {
                                c
                            }
                        })
                        .collect();
                    say!("{} ({name}): {}", f.display(), diffs.join("; "));
                }
            }
            Err(e) => {
                say!("{}: cannot be played: {e:#}", f.display());
                failed += 1;
            }
        }
    }
    say!("{passed} passed, {failed} failed");
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
