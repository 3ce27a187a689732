//! Self-play speed: `okeyctl simulate --hands 2000` with each lineup, timed in-process. Run on
//! one core with `taskset -c 0 cargo bench -p okeyctl --bench simulate`; the target is 1,000
//! complete hands per second for four easy bots. Pass `-- --hands N` or `-- --runs N` to change
//! the workload.

use std::time::Instant;

use okey_bots::Level;
use okey_rules::Preset;
use okeyctl::simulate::{self, Simulation};

/// Hands per second the issue asks of four easy bots.
const TARGET: f64 = 1_000.0;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let hands = arg("--hands", 2_000);
    let runs = arg("--runs", 5);
    let lineups: [(&str, [Level; 4]); 3] = [
        ("easy x4", [Level::Easy; 4]),
        (
            "easy,strong x2",
            [Level::Easy, Level::Strong, Level::Easy, Level::Strong],
        ),
        ("strong x4", [Level::Strong; 4]),
    ];
    let mut easy_rate = 0.0;
    for (name, bots) in lineups {
        let sim = Simulation {
            hands,
            seed: 2_000,
            rules: Preset::Classic.rules(),
            bots,
            rotate: true,
            replay_every_step: false,
        };
        let mut rates = Vec::new();
        for _ in 0..runs {
            let started = Instant::now();
            let report = simulate::run(&sim, &mut |_| {});
            let rate = hands as f64 / started.elapsed().as_secs_f64();
            assert_eq!(report.invariant_violations, 0, "{:?}", report.details);
            assert_eq!(report.rejected_commands, 0, "{:?}", report.details);
            rates.push(rate);
        }
        rates.sort_by(f64::total_cmp);
        let median = rates[rates.len() / 2];
        if bots == [Level::Easy; 4] {
            easy_rate = median;
        }
        println!(
            "simulate {hands} hands, {name:<15} {median:>9.0} hands/s (median of {runs}, min {:.0}, max {:.0}){}",
            rates[0],
            rates[rates.len() - 1],
            if easy_rate > 0.0 && bots != [Level::Easy; 4] {
                format!(", easy is {:.1}x faster", easy_rate / median)
            } else {
                String::new()
            }
        );
    }
    println!(
        "easy x4: {easy_rate:.0} hands/s against the target of {TARGET:.0}: {}",
        if easy_rate >= TARGET {
            "met"
        } else {
            "NOT met"
        }
    );
}
