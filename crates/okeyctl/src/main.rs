//! `okeyctl`: the 101 Okey platform's command-line tool.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use okeyctl::conformance;

#[derive(Parser)]
#[command(name = "okeyctl", version, about = "Command-line tool for the 101 Okey platform")]
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
        Top::Conformance { command: ConformanceCmd::Run { files } } => conformance_run(&files),
        Top::Conformance { command: ConformanceCmd::Check { files } } => conformance_check(&files),
    }
}

fn conformance_run(files: &[PathBuf]) -> ExitCode {
    let mut bad = false;
    for f in files {
        match conformance::load(f).and_then(|s| conformance::play(&s)) {
            Ok((out, _, _)) => println!("{}", serde_json::to_string(&out).expect("output serializes")),
            Err(e) => {
                eprintln!("{}: {e:#}", f.display());
                bad = true;
            }
        }
    }
    if bad { ExitCode::from(2) } else { ExitCode::SUCCESS }
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
