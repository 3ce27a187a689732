//! Conformance scenarios under `cargo test`: every file of the project's `tests/conformance/` and of
//! the shared examples (`../shared/conformance/examples/`, next to the repository, skipped when that
//! directory is absent) is played through the runner and compared with its expectations; and the
//! built `okeyctl` binary is checked against the output contract of `conformance/FORMAT.md`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use okey_rules::ruleset::{HeldOkey, Multipliers, UnopenedScoring};
use okey_rules::{Hand, Outcome, RuleSet, Threshold};
use okeyctl::conformance::{command_from, compare, deal_from, load, play, rules_from};
use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn project_dir() -> PathBuf {
    repo_root().join("tests/conformance")
}

fn shared_dir() -> PathBuf {
    repo_root().join("../shared/conformance/examples")
}

/// The `.json` files directly in `dir`, sorted by name.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Plays every file and returns one line per file that cannot be played or differs.
fn failures(files: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files {
        let result = load(f).and_then(|s| play(&s).map(|(run, _, _)| (s, run)));
        match result {
            Ok((scenario, run)) => {
                let diffs = compare(&scenario, &run);
                if !diffs.is_empty() {
                    out.push(format!(
                        "{} ({}): {}",
                        file_name(f),
                        scenario.name,
                        diffs.join("; ")
                    ));
                }
            }
            Err(e) => out.push(format!("{}: cannot be played: {e:#}", file_name(f))),
        }
    }
    out
}

#[test]
fn every_project_scenario_passes() {
    let files = json_files(&project_dir());
    assert!(
        files.len() >= 90,
        "expected at least 90 project scenarios, found {}",
        files.len()
    );
    let failed = failures(&files);
    assert!(
        failed.is_empty(),
        "{} of {} project scenarios differ:\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}

#[test]
fn every_shared_example_passes() {
    let dir = shared_dir();
    if !dir.is_dir() {
        eprintln!("shared conformance examples not found next to the repository; skipped");
        return;
    }
    let files = json_files(&dir);
    let failed = failures(&files);
    assert!(
        failed.is_empty(),
        "{} of {} shared examples differ:\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}

/// Plays a project scenario's deal and commands under `rules` instead of its own rule set (a step
/// the engine refuses is skipped, as in `play`); the hand as it ends.
fn replay_under(file: &str, rules: impl FnOnce(RuleSet) -> RuleSet) -> Hand {
    let s = load(&project_dir().join(file)).expect("the scenario loads");
    let (preset_rules, _) = rules_from(&s.rules).expect("its rules");
    let start = Hand::start(rules(preset_rules), deal_from(&s.deal).expect("its deal"))
        .expect("a valid deal");
    let mut hand = Hand::from_start(&start);
    for step in &s.steps {
        if let Ok(command) = command_from(step) {
            let _ = hand.apply(step.seat, &command);
        }
    }
    hand
}

/// No preset sets `held_okey`, `unopened_scoring`, `multipliers` or `pairs_raise_threshold` away
/// from RULES.md any more, but tables stored with the earlier `solo`, `penalties`, `practice` and
/// `yudum` rule sets keep them and must replay to the scores they were played with. Each case
/// replays a scenario's hand under such a stored rule set; the scores are those the scenario
/// expected when its preset set these options.
#[test]
fn stored_rule_sets_with_the_options_no_preset_sets_still_replay() {
    let okey_finish_only = Multipliers {
        direct_finish: false,
        okey_finish: true,
        pairs_finish: false,
    };
    let old_solo = |r: RuleSet| RuleSet {
        held_okey: HeldOkey::OkeyNumber,
        multipliers: okey_finish_only,
        ..r
    };
    let old_penalties = |r: RuleSet| RuleSet {
        unopened_scoring: UnopenedScoring::Seed004,
        ..r
    };
    let scores = |hand: &Hand| hand.end.map(|e| e.scores);
    // Pile-out, a held okey at its number: 18 + 10.
    let hand = replay_under(
        "118_solo_no_lay_in_the_opening_turn_and_a_held_okey_costs_101.json",
        old_solo,
    );
    assert_eq!(scores(&hand), Some([28, 202, 202, 202]));
    // A pair opener's finish with m = 1; a pair opener's okey counts 10 inside 2 x (37 + 10).
    let hand = replay_under(
        "141_solo_pair_finish_doubles_and_a_held_okey_costs_101.json",
        old_solo,
    );
    assert_eq!(scores(&hand), Some([-101, 49, 202, 94]));
    // A direct finish without the direct factor.
    let hand = replay_under("115_practice_direct_finish_doubles.json", |r| RuleSet {
        multipliers: okey_finish_only,
        ..r
    });
    assert_eq!(scores(&hand), Some([-101, 202, 202, 202]));
    // Seed 004 read literally: a flat 404 to every opponent after a direct finish ...
    let hand = replay_under(
        "119_penalties_preset_direct_finish_opened_rack_x2_never_opened_404.json",
        old_penalties,
    );
    assert_eq!(scores(&hand), Some([404, -202, 404, 404]));
    // ... and after an okey finish 404 for the never-opened, opened racks at face value.
    let hand = replay_under(
        "142_penalties_okey_finish_doubles_opened_racks_too.json",
        old_penalties,
    );
    assert_eq!(scores(&hand), Some([-202, 34, 217, 404]));
    // Raising where pair openings do not raise: 5 pairs after 5 and 6 after 6 are accepted, and
    // the fourth accepted pair opening cancels the hand.
    let old_yudum = |r: RuleSet| RuleSet {
        threshold: Threshold::Raising,
        pairs_raise_threshold: false,
        ..r
    };
    let hand = replay_under(
        "287_yudum_raising_after_5_pairs_the_next_pair_opening_needs_6.json",
        old_yudum,
    );
    assert!(hand.opened.iter().all(Option::is_some));
    assert_eq!(hand.end.map(|e| e.outcome), Some(Outcome::Cancelled));
}

#[test]
fn project_scenario_files_are_numbered_and_named() {
    for f in json_files(&project_dir()) {
        let name = file_name(&f);
        let (num, rest) = name.split_at(3.min(name.len()));
        assert!(
            num.chars().all(|c| c.is_ascii_digit()),
            "{name}: must start with a 3-digit number"
        );
        assert!(
            rest.starts_with('_') && rest.len() > ".json".len() + 1,
            "{name}: NNN_short_description.json"
        );
    }
}

fn okeyctl(args: &[&str], files: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_okeyctl"))
        .args(args)
        .args(files)
        .output()
        .expect("the okeyctl binary runs")
}

fn check_penalty(v: &Value, ctx: &str) {
    let p = v
        .as_object()
        .unwrap_or_else(|| panic!("{ctx}: a penalty is an object"));
    assert_eq!(p.len(), 3, "{ctx}: a penalty has seat, points, reason: {v}");
    assert!(
        p["seat"].as_u64().is_some_and(|s| s < 4),
        "{ctx}: seat 0-3: {v}"
    );
    assert!(p["points"].is_i64(), "{ctx}: points is an integer: {v}");
    let reason = p["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("{ctx}: reason is a string: {v}"));
    let known = [
        "wrong_opening",
        "discard_okey",
        "discard_playable",
        "side_discard_opening",
        "okey_retrieved",
        "table_rollback",
    ];
    assert!(
        known.contains(&reason),
        "{ctx}: unknown reason code {reason}"
    );
}

/// Checks one output line against the `run` shape of FORMAT.md.
fn check_run_line(line: &str, steps: usize, ctx: &str) -> Value {
    let v: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{ctx}: not one JSON object per line: {e}: {line}"));
    let o = v
        .as_object()
        .unwrap_or_else(|| panic!("{ctx}: a line is a JSON object"));
    let mut keys: Vec<&str> = o.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["end", "name", "steps"], "{ctx}: top-level keys");
    assert!(o["name"].is_string(), "{ctx}: name is a string");
    let out_steps = o["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("{ctx}: steps is an array"));
    assert_eq!(out_steps.len(), steps, "{ctx}: one result per step");
    for (i, s) in out_steps.iter().enumerate() {
        let ctx = format!("{ctx} step {}", i + 1);
        let s = s
            .as_object()
            .unwrap_or_else(|| panic!("{ctx}: a step result is an object"));
        match s["ok"].as_bool() {
            Some(true) => {
                assert!(
                    !s.contains_key("error"),
                    "{ctx}: an accepted step has no error"
                );
                let pens = s["penalties"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{ctx}: penalties is an array"));
                pens.iter().for_each(|p| check_penalty(p, &ctx));
            }
            Some(false) => {
                assert!(
                    s["error"].as_str().is_some_and(|e| !e.is_empty()),
                    "{ctx}: a rejection has an error text"
                );
                assert!(
                    !s.contains_key("penalties"),
                    "{ctx}: a rejected step writes no penalties"
                );
            }
            None => panic!("{ctx}: ok is a boolean"),
        }
    }
    let end = o["end"]
        .as_object()
        .unwrap_or_else(|| panic!("{ctx}: end is an object"));
    let mut keys: Vec<&str> = end.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["outcome", "scores", "winner"], "{ctx}: end keys");
    let outcome = end["outcome"]
        .as_str()
        .unwrap_or_else(|| panic!("{ctx}: outcome is a string"));
    assert!(
        ["finished", "pile_empty", "cancelled", "in_progress"].contains(&outcome),
        "{ctx}: outcome {outcome}"
    );
    match outcome {
        "finished" => assert!(
            end["winner"].as_u64().is_some_and(|w| w < 4),
            "{ctx}: a finished hand has a winner"
        ),
        _ => assert!(end["winner"].is_null(), "{ctx}: no winner unless finished"),
    }
    if outcome == "in_progress" {
        assert!(
            end["scores"].is_null(),
            "{ctx}: no scores while the hand runs"
        );
    } else {
        let scores = end["scores"]
            .as_array()
            .unwrap_or_else(|| panic!("{ctx}: an ended hand has scores"));
        assert!(
            scores.len() == 4 && scores.iter().all(Value::is_i64),
            "{ctx}: four integer scores"
        );
    }
    v
}

#[test]
fn run_prints_one_object_per_file_in_the_format_shape() {
    let all = json_files(&project_dir());
    let pick = |prefix: &str| {
        all.iter()
            .find(|f| file_name(f).starts_with(prefix))
            .expect("scenario exists")
            .clone()
    };
    // in progress with rejections, cancelled, finished, pile empty, penalties of several kinds
    let files: Vec<PathBuf> = ["003_", "047_", "094_", "093_", "107_"]
        .iter()
        .map(|p| pick(p))
        .collect();
    let out = okeyctl(&["conformance", "run"], &files);
    assert!(
        out.status.success(),
        "run exits 0: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), files.len(), "one line per file:\n{stdout}");
    for (line, f) in lines.iter().zip(&files) {
        let scenario = load(f).expect("scenario loads");
        let v = check_run_line(line, scenario.steps.len(), &file_name(f));
        assert_eq!(
            v["name"],
            Value::String(scenario.name.clone()),
            "{}: the scenario's name",
            file_name(f)
        );
    }
    let cancelled: Value = serde_json::from_str(lines[1]).expect("json");
    assert_eq!(cancelled["end"]["outcome"], "cancelled");
    let finished: Value = serde_json::from_str(lines[2]).expect("json");
    assert_eq!(finished["end"]["winner"], 0);
}

/// A scratch directory for files this test writes, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("okeyctl-conformance-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).expect("write scratch file");
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn run_rejects_an_unparseable_file_with_exit_2_naming_it() {
    let scratch = Scratch::new("bad");
    let broken = scratch.file(
        "broken_scenario.json",
        "{ \"name\": \"half a scenario\", \"deal\": ",
    );
    let short_rack = {
        let good =
            std::fs::read_to_string(project_dir().join(file_name(&json_files(&project_dir())[0])))
                .expect("read a project scenario");
        let mut v: Value = serde_json::from_str(&good).expect("json");
        v["deal"]["racks"][1].as_array_mut().expect("rack").pop();
        scratch.file("short_rack.json", &v.to_string())
    };
    for bad in [&broken, &short_rack] {
        let out = okeyctl(&["conformance", "run"], std::slice::from_ref(bad));
        assert_eq!(out.status.code(), Some(2), "{}: exit 2", file_name(bad));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&file_name(bad)),
            "{}: the message names the file: {stderr}",
            file_name(bad)
        );
    }
    // A good file next to a bad one is still played; the exit code reports the bad one.
    let good = json_files(&project_dir())[0].clone();
    let out = okeyctl(&["conformance", "run"], &[good, broken.clone()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        1,
        "the good file's line is printed"
    );
}

#[test]
fn check_reports_differences_and_exits_1() {
    let scratch = Scratch::new("check");
    let good = json_files(&project_dir())
        .into_iter()
        .find(|f| file_name(f).starts_with("067_"))
        .expect("067");
    let out = okeyctl(&["conformance", "check"], std::slice::from_ref(&good));
    assert!(out.status.success(), "a passing file exits 0");
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .trim_end()
            .ends_with("1 passed, 0 failed")
    );

    // Expect no penalty where the engine writes one: check must name the step and fail.
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(&good).expect("read")).expect("json");
    v["steps"][1]["expect"]["penalties"] = Value::Array(Vec::new());
    let wrong = scratch.file("wrong_expectation.json", &v.to_string());
    let out = okeyctl(&["conformance", "check"], &[good, wrong]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("wrong_expectation.json") && stdout.contains("step 2"),
        "{stdout}"
    );
    assert!(
        stdout.trim_end().ends_with("1 passed, 1 failed"),
        "{stdout}"
    );
}

/// A step or key that does not make sense is a broken file, never an engine rejection: `run`
/// refuses it (exit 2, naming the file and the place), `check` counts it failed (exit 1). A key
/// the format does not define is refused when it is a misspelling of one it does, when it stands
/// in an expectation, or names an expectation at the top (the check it was meant to carry would
/// silently not run), else noted and ignored (a comment, a setting one hand never reads).
#[test]
fn a_broken_step_or_a_misspelled_key_is_refused_and_a_comment_ignored() {
    let scratch = Scratch::new("keys");
    let good = json_files(&project_dir())
        .into_iter()
        .find(|f| file_name(f).starts_with("067_"))
        .expect("067");
    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(&good).expect("read")).expect("json");
    let variant = |name: &str, edit: &dyn Fn(&mut Value)| {
        let mut v = original.clone();
        edit(&mut v);
        scratch.file(name, &v.to_string())
    };
    let broken = [
        (
            variant("unknown_act.json", &|v| {
                v["steps"][1]["act"] = "discrad".into()
            }),
            "steps[1]",
        ),
        (
            variant("bad_step_tile.json", &|v| {
                v["steps"][1]["tile"] = "B55".into()
            }),
            "steps[1]",
        ),
        (
            variant("bad_seat.json", &|v| v["steps"][1]["seat"] = 9.into()),
            "steps[1].seat",
        ),
        (
            variant("no_melds.json", &|v| {
                v["steps"][0] = serde_json::json!({"seat": 0, "act": "open"})
            }),
            "melds",
        ),
        (
            variant("expect_ned.json", &|v| {
                let end = v["expect_end"].take();
                v["expect_ned"] = end;
            }),
            "did you mean `expect_end`",
        ),
        (
            variant("partnerz.json", &|v| v["rules"]["partnerz"] = true.into()),
            "did you mean `partners`",
        ),
        (
            variant("bad_outcome.json", &|v| {
                v["expect_end"] = serde_json::json!({"outcome": "done"})
            }),
            "expect_end.outcome",
        ),
        (
            variant("bad_winner.json", &|v| {
                v["expect_end"] = serde_json::json!({"winner": 7})
            }),
            "expect_end.winner",
        ),
        (
            variant("three_scores.json", &|v| {
                v["expect_end"] = serde_json::json!({"scores": [1, 2, 3]})
            }),
            "expect_end.scores",
        ),
        // In an expectation every key is a check, so one the runner does not know is refused
        // however far it is from a known one: the file would pass for the wrong reason.
        (
            variant("unknown_expectation.json", &|v| {
                v["expect_end"]["final_totals"] = serde_json::json!([0, 0, 0, 0])
            }),
            "expect_end.final_totals",
        ),
        (
            variant("unknown_step_expectation.json", &|v| {
                v["steps"][0]["expect"] = serde_json::json!({"ok": true, "view": {}})
            }),
            "steps[0].expect.view",
        ),
        (
            variant("unknown_penalty_key.json", &|v| {
                v["steps"][0]["expect"] = serde_json::json!({
                    "penalties": [{"seat": 0, "points": 101, "reason": "x", "hand": 1}]
                })
            }),
            "unknown field `hand`",
        ),
        (
            variant("top_level_expectation.json", &|v| {
                v["expectations"] = serde_json::json!({"outcome": "finished"})
            }),
            "`expectations` is not a field",
        ),
        (
            variant("top_level_end.json", &|v| {
                v["End"] = serde_json::json!({"outcome": "finished"})
            }),
            "`End` is not a field",
        ),
    ];
    for (file, place) in &broken {
        let out = okeyctl(&["conformance", "run"], std::slice::from_ref(file));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", file_name(file));
        assert!(
            stderr.contains(&file_name(file)) && stderr.contains(place),
            "{}: names the file and {place}: {stderr}",
            file_name(file)
        );
        let out = okeyctl(&["conformance", "check"], std::slice::from_ref(file));
        assert_eq!(out.status.code(), Some(1), "{}", file_name(file));
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .trim_end()
                .ends_with("0 passed, 1 failed")
        );
    }
    // A byte order mark, a field set to null and a name over two lines are read as meant.
    let text = std::fs::read_to_string(&good).expect("read");
    let bom = scratch.file("bom.json", &format!("\u{feff}{text}"));
    let nulls = variant("nulls.json", &|v| {
        v["rules"] = Value::Null;
        v["steps"][0]["expect"] = serde_json::json!({"ok": true, "penalties": null});
    });
    for file in [&bom, &nulls] {
        let out = okeyctl(&["conformance", "check"], std::slice::from_ref(file));
        assert!(out.status.success(), "{}: {out:?}", file_name(file));
    }
    let two_lines = variant("two_lines.json", &|v| {
        v["name"] = "first line\nsecond line".into();
        v["expect_end"] = serde_json::json!({"outcome": "cancelled"});
    });
    let out = okeyctl(&["conformance", "check"], std::slice::from_ref(&two_lines));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(
        stdout.lines().count(),
        2,
        "one line for the file, one summary: {stdout}"
    );

    // A comment anywhere, or a setting one hand never reads, is noted and ignored: the file
    // still passes.
    let commented = variant("commented.json", &|v| {
        v["comment"] = "from another engine's suite".into();
        v["steps"][0]["source"] = "suite 12".into();
        v["rules"]["match_length"] = 5.into();
    });
    let out = okeyctl(&["conformance", "check"], std::slice::from_ref(&commented));
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("comment")
            && stderr.contains("steps[0].source")
            && stderr.contains("rules.match_length"),
        "{stderr}"
    );
}
