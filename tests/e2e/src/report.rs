//! The table the suite prints: per scenario the faults injected, the matches completed, the moves
//! played and the discrepancies found (each listed below the table).

use std::time::Duration;

/// One scenario's line.
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub scenario: String,
    pub faults: u64,
    pub matches: usize,
    /// Engine events played at the completed tables (every seat's moves).
    pub moves: usize,
    /// Commands the players' own SubmitCommand calls had accepted.
    pub accepted: usize,
    pub discrepancies: Vec<String>,
    pub took: Duration,
    /// The services' last log lines, kept when something went wrong.
    pub logs: String,
}

/// The table, then every discrepancy (and the logs of a scenario that had any).
pub fn render(rows: &[Row]) -> String {
    let mut out = String::new();
    let w = rows
        .iter()
        .map(|r| r.scenario.chars().count())
        .max()
        .unwrap_or(0)
        .max(20);
    out.push_str(&format!(
        "{:<w$} {:>6} {:>8} {:>7} {:>9} {:>13} {:>7}\n",
        "scenario", "faults", "matches", "moves", "accepted", "discrepancies", "secs"
    ));
    for r in rows {
        out.push_str(&format!(
            "{:<w$} {:>6} {:>8} {:>7} {:>9} {:>13} {:>7.1}\n",
            r.scenario,
            r.faults,
            r.matches,
            r.moves,
            r.accepted,
            r.discrepancies.len(),
            r.took.as_secs_f64()
        ));
    }
    let total = |f: fn(&Row) -> usize| rows.iter().map(f).sum::<usize>();
    out.push_str(&format!(
        "{:<w$} {:>6} {:>8} {:>7} {:>9} {:>13}\n",
        "total",
        rows.iter().map(|r| r.faults).sum::<u64>(),
        total(|r| r.matches),
        total(|r| r.moves),
        total(|r| r.accepted),
        total(|r| r.discrepancies.len())
    ));
    for r in rows.iter().filter(|r| !r.discrepancies.is_empty()) {
        out.push_str(&format!("\n{}:\n", r.scenario));
        for d in &r.discrepancies {
            out.push_str(&format!("  - {d}\n"));
        }
        if !r.logs.is_empty() {
            out.push_str(&r.logs);
            out.push('\n');
        }
    }
    out
}

/// Writes `text` to the real standard error, which the test harness does not capture: the table
/// shows in every `cargo test` / `make test` log, passing or not.
pub fn show(text: &str) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.write_all(b"\n");
}
