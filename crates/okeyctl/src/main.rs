//! `okeyctl`: the 101 Okey platform's command-line tool.

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
    Replay(ReplayArgs),
}

#[derive(Args)]
struct ReplayArgs {
    /// A conformance scenario, or a hand's events as a JSON array (or one JSON event per line),
    /// starting with `hand_started`.
    file: PathBuf,
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
        format!("`{s}` is not a preset: use classic, yudum, practice, solo or penalties")
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
    /// Play each file and compare with its `expect` fields; exit 1 if any failed.
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
        Top::Replay(args) => match okeyctl::replay::load_events(&args.file) {
            Ok(events) => {
                for line in okey_rules::replay::narrate(&events) {
                    println!("v{:<4} {:<20} {}", line.version, line.event, line.text);
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{}: {e:#}", args.file.display());
                ExitCode::from(2)
            }
        },
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
    println!("{}", report.to_json());
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
            Ok((out, _, _)) => println!(
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
    let (mut passed, mut failed, mut unreadable) = (0, 0, false);
    for f in files {
        let scenario = match conformance::load(f) {
            Ok(s) => s,
            Err(e) => {
                println!("{}: cannot be played: {e:#}", f.display());
                failed += 1;
                unreadable = true;
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
                    println!("{} ({}): {}", f.display(), scenario.name, diffs.join("; "));
                }
            }
            Err(e) => {
                println!("{}: cannot be played: {e:#}", f.display());
                failed += 1;
                unreadable = true;
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if unreadable {
        ExitCode::from(2)
    } else if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
