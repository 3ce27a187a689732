//! Loading a hand's events for `okeyctl replay`: from a conformance scenario (played through the
//! engine) or from a file of events (a JSON array, or one JSON event per line).

use std::path::Path;

use anyhow::{Context, Result, bail};
use okey_rules::Event;

/// The events of the hand in `path`, starting with `hand_started`.
pub fn load_events(path: &Path) -> Result<Vec<Event>> {
    let text = std::fs::read_to_string(path).context("cannot read the file")?;
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        // Not one JSON document: one event per line.
        Err(_) => serde_json::Value::Array(
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .enumerate()
                .map(|(i, l)| {
                    serde_json::from_str(l).with_context(|| format!("line {} is not JSON", i + 1))
                })
                .collect::<Result<_>>()?,
        ),
    };
    let events: Vec<Event> = if value.get("deal").is_some() && value.get("steps").is_some() {
        let scenario: crate::conformance::Scenario = serde_json::from_value(value)
            .context("not a conformance scenario (see conformance/FORMAT.md)")?;
        // The checks `conformance run` makes: a step the format cannot read is a broken file,
        // not a step the engine rejected (which would cut the story short without a word).
        crate::conformance::validate(&scenario)?;
        crate::conformance::play(&scenario)?.2
    } else if value.is_object() {
        // One event on one line: a list of one.
        vec![serde_json::from_value(value).context("not a hand event (an object with a `type`)")?]
    } else {
        serde_json::from_value(value)
            .context("not a list of hand events (each an object with a `type`)")?
    };
    match events.first() {
        Some(Event::HandStarted { .. }) => {}
        Some(e) => bail!(
            "a hand's events start with hand_started, this one starts with {}",
            e.name()
        ),
        None => bail!("no events in the file"),
    }
    // One hand per file: nothing follows its end (a cancelled hand's new deal is the next hand).
    if let Some(end) = events
        .iter()
        .position(|e| matches!(e, Event::HandEnded { .. }))
        && let Some(after) = events.get(end + 1)
    {
        bail!(
            "the file holds more than one hand: event {} ({}) comes after the hand ended at \
             event {}; give each hand its own file (`okeyctl export-hand` writes one)",
            end + 2,
            after.name(),
            end + 1
        );
    }
    Ok(events)
}
