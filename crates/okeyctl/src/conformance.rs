//! Conformance scenarios (`shared/conformance/FORMAT.md`): a hand dealt exactly, played step by
//! step through the real engine (`okey_rules::Hand::decide`/`evolve`), compared with what each
//! step and the hand's end must produce.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use okey_rules::hand::{Command, Event, Hand, Outcome};
use okey_rules::ruleset::{PlayableDiscard, Preset, RuleSet, Threshold};
use okey_rules::{Deal, MeldTile, Seat, Tile};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A scenario file as written.
#[derive(Debug, Deserialize)]
pub struct Scenario {
    pub name: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub rules: BTreeMap<String, Value>,
    pub deal: DealSpec,
    #[serde(default, deserialize_with = "null_as_default")]
    pub steps: Vec<Step>,
    #[serde(default)]
    pub expect_end: Option<ExpectEnd>,
    /// Keys the format does not define (see [`load`]).
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

#[derive(Debug, Deserialize)]
pub struct DealSpec {
    pub indicator: String,
    pub first: u8,
    pub racks: Vec<Vec<String>>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub pile: Vec<String>,
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

#[derive(Debug, Deserialize)]
pub struct Step {
    pub seat: u8,
    pub act: String,
    #[serde(default)]
    pub tile: Option<String>,
    #[serde(default)]
    pub melds: Option<Vec<Vec<String>>>,
    #[serde(default)]
    pub meld: Option<usize>,
    #[serde(default)]
    pub tiles: Option<Vec<String>>,
    #[serde(default)]
    pub expect: Option<ExpectStep>,
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

#[derive(Debug, Deserialize)]
pub struct ExpectStep {
    #[serde(default = "yes")]
    pub ok: bool,
    #[serde(default, deserialize_with = "null_as_default")]
    pub penalties: Vec<PenaltyOut>,
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
pub struct ExpectEnd {
    pub outcome: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub winner: Option<Option<Seat>>,
    #[serde(default, deserialize_with = "present")]
    pub scores: Option<Option<Vec<i32>>>,
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

/// A field set to null read as left out (its default), as for `expect_end: null`.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Distinguishes a field set to null (`Some(None)`) from a missing one (`None`).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Some(Option::<T>::deserialize(d)?))
}

/// A penalty as the runner prints it. Expected, a key it does not have refuses the file: the
/// check it was meant to carry would not run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PenaltyOut {
    pub seat: Seat,
    pub points: i32,
    pub reason: String,
}

/// One step's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepOut {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub penalties: Option<Vec<PenaltyOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EndOut {
    pub outcome: String,
    pub winner: Option<Seat>,
    pub scores: Option<Vec<i32>>,
}

/// The output of `run` for one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunOut {
    pub name: String,
    pub steps: Vec<StepOut>,
    pub end: EndOut,
}

fn tile(s: &str) -> Result<Tile> {
    s.parse::<Tile>().map_err(|e| anyhow!("{e}"))
}

/// Builds the rule set: the preset's values, then each option given.
pub fn rules_from(spec: &BTreeMap<String, Value>) -> Result<(RuleSet, Vec<String>)> {
    let preset_name = spec.get("preset").map(|v| {
        v.as_str()
            .ok_or_else(|| anyhow!("rules.preset must be a string"))
    });
    let preset = match preset_name {
        None => Preset::Classic,
        Some(name) => {
            let name = name?;
            Preset::parse(name).ok_or_else(|| {
                anyhow!(
                    "rules.preset `{name}` is unknown; use one of {} (a preset's name, its \
                     seed's number or its seed document's name)",
                    Preset::ALL
                        .map(|p| format!("{} ({}, {})", p.name(), p.seed(), p.document()))
                        .join(", ")
                )
            })?
        }
    };
    let mut rules = preset.rules();
    let mut ignored = Vec::new();
    let boolean = |k: &str, v: &Value| {
        v.as_bool()
            .ok_or_else(|| anyhow!("rules.{k} must be true or false"))
    };
    for (k, v) in spec {
        match k.as_str() {
            "preset" => {}
            "threshold" => {
                rules.threshold = match v.as_str() {
                    Some("standard") => Threshold::Standard,
                    Some("raising") => Threshold::Raising,
                    _ => bail!("rules.threshold must be \"standard\" or \"raising\""),
                }
            }
            "partners" => rules.partners = boolean(k, v)?,
            "run_wraps_12_13_1" => rules.run_wraps_12_13_1 = boolean(k, v)?,
            "in_play_penalties" => rules.in_play_penalties = boolean(k, v)?,
            "playable_discard" => {
                rules.playable_discard = match v.as_str() {
                    Some("auto") => PlayableDiscard::Auto,
                    Some("called") => PlayableDiscard::Called,
                    _ => bail!("rules.playable_discard must be \"auto\" or \"called\""),
                }
            }
            "act_after_opening_same_turn" => rules.act_after_opening_same_turn = boolean(k, v)?,
            "pairs_take_discard" => rules.pairs_take_discard = boolean(k, v)?,
            "pairs_raise_threshold" => rules.pairs_raise_threshold = boolean(k, v)?,
            "floor_totals_at_zero" => rules.floor_totals_at_zero = boolean(k, v)?,
            "pair_opener_adds_per_turn" => {
                rules.pair_opener_adds_per_turn = match v {
                    Value::Null => None,
                    v => Some(
                        v.as_u64()
                            .filter(|n| (1..=255).contains(n))
                            .ok_or_else(|| {
                                anyhow!("rules.pair_opener_adds_per_turn must be 1-255 or null")
                            })? as u8,
                    ),
                }
            }
            other => ignored.push(other.to_string()),
        }
    }
    rules.validate().map_err(|e| anyhow!("rules: {e}"))?;
    Ok((rules, ignored))
}

/// Reads a scenario's deal into the engine's form.
pub fn deal_from(spec: &DealSpec) -> Result<Deal> {
    if spec.racks.len() != 4 {
        bail!("deal.racks must list 4 racks, found {}", spec.racks.len());
    }
    let racks: Vec<Vec<Tile>> = spec
        .racks
        .iter()
        .enumerate()
        .map(|(s, r)| {
            r.iter()
                .map(|t| tile(t))
                .collect::<Result<Vec<_>>>()
                .with_context(|| format!("deal.racks[{s}]"))
        })
        .collect::<Result<_>>()?;
    let deal = Deal {
        indicator: tile(&spec.indicator).context("deal.indicator")?,
        first: spec.first,
        racks: racks.try_into().expect("four racks"),
        pile: spec
            .pile
            .iter()
            .map(|t| tile(t))
            .collect::<Result<_>>()
            .context("deal.pile")?,
    };
    deal.validate().map_err(|e| anyhow!("deal: {e}"))?;
    Ok(deal)
}

/// A step's command, or why its fields do not make one ([`validate`] refuses such a file).
pub fn command_from(step: &Step) -> std::result::Result<Command, String> {
    let meld_tiles = |v: &Vec<String>| -> std::result::Result<Vec<MeldTile>, String> {
        v.iter()
            .map(|t| t.parse::<MeldTile>().map_err(|e| e.to_string()))
            .collect()
    };
    let melds = || -> std::result::Result<Vec<Vec<MeldTile>>, String> {
        step.melds
            .as_ref()
            .ok_or("this step needs `melds`")?
            .iter()
            .map(meld_tiles)
            .collect()
    };
    let tiles = || {
        step.tiles
            .as_ref()
            .ok_or_else(|| "this step needs `tiles`".to_string())
    };
    let meld = || {
        step.meld
            .ok_or_else(|| "this step needs `meld`".to_string())
    };
    Ok(match step.act.as_str() {
        "draw" => Command::Draw,
        "take_discard" => Command::TakeDiscard,
        "return_discard" => Command::ReturnDiscard,
        "open" => Command::Open { melds: melds()? },
        "lay" => Command::Lay { melds: melds()? },
        "add" => Command::Add {
            meld: meld()?,
            tiles: meld_tiles(tiles()?)?,
        },
        "retrieve" => Command::Retrieve {
            meld: meld()?,
            tiles: tiles()?
                .iter()
                .map(|t| t.parse::<Tile>().map_err(|e| e.to_string()))
                .collect::<Result<_, _>>()?,
        },
        "discard" => Command::Discard {
            tile: step
                .tile
                .as_ref()
                .ok_or("this step needs `tile`")?
                .parse()
                .map_err(|e: okey_rules::tile::TileParseError| e.to_string())?,
        },
        "call_playable" => Command::CallPlayable,
        "timeout" => Command::Timeout,
        other => return Err(format!("unknown act `{other}`")),
    })
}

/// Penalties a step's events wrote (and did not void in the same step).
pub fn penalties_of(events: &[Event]) -> Vec<PenaltyOut> {
    let voided: Vec<u32> = events
        .iter()
        .flat_map(|e| match e {
            Event::TableRolledBack { voided, .. } | Event::HandCancelled { voided } => {
                voided.clone()
            }
            _ => Vec::new(),
        })
        .collect();
    events
        .iter()
        .filter_map(|e| match e {
            Event::PenaltyCharged {
                id,
                seat,
                points,
                reason,
            } if !voided.contains(id) => Some(PenaltyOut {
                seat: *seat,
                points: *points,
                reason: reason.code().to_string(),
            }),
            _ => None,
        })
        .collect()
}

pub fn outcome_name(hand: &Hand) -> &'static str {
    match hand.end.map(|e| e.outcome) {
        None => "in_progress",
        Some(Outcome::Finished) => "finished",
        Some(Outcome::PileEmpty) => "pile_empty",
        Some(Outcome::Cancelled) => "cancelled",
    }
}

/// Plays a parsed scenario; also returns the events it produced, in order.
pub fn play(s: &Scenario) -> Result<(RunOut, Hand, Vec<Event>)> {
    let (rules, _) = rules_from(&s.rules)?;
    let deal = deal_from(&s.deal)?;
    let start = Hand::start(rules, deal).map_err(|e| anyhow!("deal: {e}"))?;
    let mut hand = Hand::from_start(&start);
    let mut log = vec![start];
    let mut steps = Vec::with_capacity(s.steps.len());
    for step in &s.steps {
        let result =
            command_from(step).and_then(|c| hand.apply(step.seat, &c).map_err(|e| e.to_string()));
        steps.push(match result {
            Ok(events) => {
                let out = StepOut {
                    ok: true,
                    penalties: Some(penalties_of(&events)),
                    error: None,
                };
                log.extend(events);
                out
            }
            Err(error) => StepOut {
                ok: false,
                penalties: None,
                error: Some(error),
            },
        });
    }
    let end = EndOut {
        outcome: outcome_name(&hand).to_string(),
        winner: hand.end.and_then(|e| e.winner),
        scores: hand.end.map(|e| e.scores.to_vec()),
    };
    Ok((
        RunOut {
            name: s.name.clone(),
            steps,
            end,
        },
        hand,
        log,
    ))
}

/// The outcomes `expect_end.outcome` may name.
pub const OUTCOMES: [&str; 4] = ["finished", "pile_empty", "cancelled", "in_progress"];

/// The rule options a scenario's `rules` may set, besides `preset` (see [`rules_from`]).
const RULE_OPTIONS: [&str; 11] = [
    "preset",
    "threshold",
    "partners",
    "run_wraps_12_13_1",
    "in_play_penalties",
    "playable_discard",
    "act_after_opening_same_turn",
    "pairs_take_discard",
    "pairs_raise_threshold",
    "floor_totals_at_zero",
    "pair_opener_adds_per_turn",
];

/// Where an unknown key may stand for a note and where it would change what is checked.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unknown {
    /// The scenario, its rules, its deal and its steps: a key the format does not define (a
    /// comment, a note or a setting from the suite it came from, such as a match length, which
    /// one hand never reads) is reported and ignored, unless it is close to a defined key or, at
    /// the top, names an expectation (`expect…`).
    Noted,
    /// The expectations: every key there is a check, so one the runner does not know refuses the
    /// file (the check would silently not run, and the file pass for the wrong reason).
    Refused,
}

/// Keys a scenario holds that the format does not define, at `place` (`steps[2].expect`, …):
/// one close to a defined key (at most two edits away, one for short names) is a misspelling, and
/// the file is refused, for the check it was meant to carry would silently not run; so is any
/// where `policy` is [`Unknown::Refused`]; any other is reported in `notes` and ignored.
fn unknown_keys<'a>(
    place: &str,
    keys: impl IntoIterator<Item = &'a String>,
    known: &[&str],
    policy: Unknown,
    notes: &mut Vec<String>,
) -> Result<()> {
    for key in keys {
        let at = if place.is_empty() {
            key.clone()
        } else {
            format!("{place}.{key}")
        };
        // Two edits between longer names, one between short ones (`meta` is not `meld`).
        let close = |k: &&str| {
            let most = if k.len().min(key.len()) <= 4 { 1 } else { 2 };
            strsim::damerau_levenshtein(k, key) <= most
        };
        if let Some(meant) = known.iter().find(|k| close(k)) {
            bail!("`{at}` is not a field of the format: did you mean `{meant}`?");
        }
        if policy == Unknown::Refused || (place.is_empty() && names_an_expectation(key)) {
            bail!(
                "`{at}` is not a field of the format, and there it would change what is played \
                 or checked: use one of {}",
                known.join(", ")
            );
        }
        notes.push(at);
    }
    Ok(())
}

/// Whether a top-level key the format does not define reads as an expectation of the hand's end
/// (`expect…`, `outcome`, `end`, …): ignored, the check it carries would silently not run.
fn names_an_expectation(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.starts_with("expect")
        || ["end", "outcome", "result", "results", "scores", "winner"].contains(&key.as_str())
}

/// Everything in a scenario beyond its JSON shape that [`play`] relies on: the rules and the
/// deal are valid, every step names a seat (0-3), an `act` of the format and the fields that act
/// needs, in tile text that parses, and `expect_end.outcome` is one of [`OUTCOMES`]. A step that
/// breaks one of these is a broken file (exit 2), never a step the engine rejected. Returns the
/// keys the format does not define, which are ignored.
pub fn validate(s: &Scenario) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    unknown_keys(
        "",
        s.unknown.keys(),
        &["name", "rules", "deal", "steps", "expect_end"],
        Unknown::Noted,
        &mut notes,
    )?;
    let (_, ignored) = rules_from(&s.rules)?;
    unknown_keys("rules", &ignored, &RULE_OPTIONS, Unknown::Noted, &mut notes)?;
    unknown_keys(
        "deal",
        s.deal.unknown.keys(),
        &["indicator", "first", "racks", "pile"],
        Unknown::Noted,
        &mut notes,
    )?;
    deal_from(&s.deal)?;
    for (i, step) in s.steps.iter().enumerate() {
        let place = format!("steps[{i}]");
        unknown_keys(
            &place,
            step.unknown.keys(),
            &["seat", "act", "tile", "melds", "meld", "tiles", "expect"],
            Unknown::Noted,
            &mut notes,
        )?;
        if step.seat > 3 {
            bail!("{place}.seat is {}: a seat is 0-3", step.seat);
        }
        command_from(step).map_err(|e| anyhow!("{place}: {e}"))?;
        if let Some(e) = &step.expect {
            unknown_keys(
                &format!("{place}.expect"),
                e.unknown.keys(),
                &["ok", "penalties"],
                Unknown::Refused,
                &mut notes,
            )?;
        }
    }
    if let Some(e) = &s.expect_end {
        unknown_keys(
            "expect_end",
            e.unknown.keys(),
            &["outcome", "winner", "scores"],
            Unknown::Refused,
            &mut notes,
        )?;
        if let Some(o) = &e.outcome
            && !OUTCOMES.contains(&o.as_str())
        {
            bail!(
                "expect_end.outcome `{o}` is not an outcome: use one of {}",
                OUTCOMES.join(", ")
            );
        }
        if let Some(Some(w)) = e.winner
            && w > 3
        {
            bail!("expect_end.winner is {w}: a seat is 0-3 (or null: no winner)");
        }
        if let Some(Some(scores)) = &e.scores
            && scores.len() != 4
        {
            bail!(
                "expect_end.scores has {} numbers: one per seat, 4 (or null: no scores)",
                scores.len()
            );
        }
    }
    Ok(notes)
}

/// Reads and parses a scenario file, and [`validate`]s it; errors name the problem. Keys the
/// format does not define are noted on standard error and ignored.
pub fn load(path: &Path) -> Result<Scenario> {
    if path.is_dir() {
        bail!(
            "is a directory: pass its scenario files, e.g. {}/*.json",
            path.display()
        );
    }
    let text = std::fs::read_to_string(path).with_context(|| "cannot read the file".to_string())?;
    // A byte order mark some editors write is not JSON, and not part of the scenario.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let scenario: Scenario =
        serde_json::from_str(text).context("not a scenario (see conformance/FORMAT.md)")?;
    let notes = validate(&scenario)?;
    if !notes.is_empty() {
        eprintln!(
            "{}: note: not part of the scenario format, ignored: {}",
            path.display(),
            notes.join(", ")
        );
    }
    Ok(scenario)
}

/// Compares a run with the scenario's expectations; returns one message per difference.
pub fn compare(s: &Scenario, out: &RunOut) -> Vec<String> {
    let mut diffs = Vec::new();
    for (i, (step, got)) in s.steps.iter().zip(&out.steps).enumerate() {
        let (want_ok, want_pen) = match &step.expect {
            None => (true, Vec::new()),
            Some(e) => (e.ok, e.penalties.clone()),
        };
        let label = format!("step {} ({} {})", i + 1, step.act, describe(step));
        if got.ok != want_ok {
            let why = got
                .error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            diffs.push(format!(
                "{label}: expected {} but it was {}{why}",
                if want_ok { "accepted" } else { "rejected" },
                if got.ok { "accepted" } else { "rejected" }
            ));
            continue;
        }
        let mut want = want_pen;
        let mut have = got.penalties.clone().unwrap_or_default();
        want.sort();
        have.sort();
        if want != have {
            diffs.push(format!(
                "{label}: penalties expected {} got {}",
                pens(&want),
                pens(&have)
            ));
        }
    }
    if let Some(e) = &s.expect_end {
        if let Some(o) = &e.outcome
            && *o != out.end.outcome
        {
            diffs.push(format!("end: outcome expected {o} got {}", out.end.outcome));
        }
        if let Some(w) = &e.winner
            && *w != out.end.winner
        {
            diffs.push(format!(
                "end: winner expected {} got {}",
                seat_text(*w),
                seat_text(out.end.winner)
            ));
        }
        if let Some(sc) = &e.scores
            && *sc != out.end.scores
        {
            diffs.push(format!(
                "end: scores expected {} got {}",
                scores_text(sc),
                scores_text(&out.end.scores)
            ));
        }
    }
    diffs
}

fn describe(step: &Step) -> String {
    let mut parts = vec![format!("seat {}", step.seat)];
    if let Some(t) = &step.tile {
        parts.push(t.clone());
    }
    if let Some(m) = step.meld {
        parts.push(format!("meld {m}"));
    }
    if let Some(t) = &step.tiles {
        parts.push(t.join(" "));
    }
    if let Some(ms) = &step.melds {
        parts.push(
            ms.iter()
                .map(|m| format!("[{}]", m.join(" ")))
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    parts.join(", ")
}

fn pens(p: &[PenaltyOut]) -> String {
    if p.is_empty() {
        return "none".into();
    }
    p.iter()
        .map(|p| format!("{} to seat {} ({})", p.points, p.seat, p.reason))
        .collect::<Vec<_>>()
        .join(", ")
}

fn seat_text(s: Option<Seat>) -> String {
    s.map(|s| format!("seat {s}"))
        .unwrap_or_else(|| "none".into())
}

fn scores_text(s: &Option<Vec<i32>>) -> String {
    match s {
        None => "none".into(),
        Some(v) => format!("{v:?}"),
    }
}
