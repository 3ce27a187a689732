//! `okeyctl replay`: tells a hand from a scenario or from its events, with the reason for every
//! penalty and score.

use std::path::PathBuf;
use std::process::Command;

fn okeyctl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_okeyctl"))
}

fn scenario(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/conformance")
        .join(name)
}

#[test]
fn replays_a_scenario_with_reasons_for_penalties_and_scores() {
    let out = okeyctl()
        .arg("replay")
        .arg(scenario(
            "134_four_tile_set_with_two_okeys_gives_back_one.json",
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("penalty #0: seat 0 +101 (okey_retrieved)"),
        "{text}"
    );
    assert!(text.contains("placed by seat 0 as B5"), "{text}");
}

#[test]
fn a_scenario_with_a_step_the_format_cannot_read_is_a_broken_file() {
    let mut broken: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(scenario(
            "134_four_tile_set_with_two_okeys_gives_back_one.json",
        ))
        .unwrap(),
    )
    .unwrap();
    broken["steps"][0]["act"] = "fly".into();
    let path = std::env::temp_dir().join(format!("okeyctl-broken-{}.json", std::process::id()));
    std::fs::write(&path, broken.to_string()).unwrap();
    let out = okeyctl().arg("replay").arg(&path).output().unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(out.status.code(), Some(2), "as `conformance run` says");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("steps[0]: unknown act `fly`"), "{said}");
}

#[test]
fn replays_an_event_file_the_same_way() {
    let path = scenario("134_four_tile_set_with_two_okeys_gives_back_one.json");
    let s = okeyctl::conformance::load(&path).unwrap();
    let (_, _, events) = okeyctl::conformance::play(&s).unwrap();
    let dir = std::env::temp_dir().join(format!("okeyctl-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("events.jsonl");
    let lines: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let from_events = okeyctl().arg("replay").arg(&file).output().unwrap();
    let from_scenario = okeyctl().arg("replay").arg(&path).output().unwrap();
    assert!(from_events.status.success());
    assert_eq!(from_events.stdout, from_scenario.stdout);
    std::fs::write(
        &file,
        "[{\"type\":\"tile_drawn\",\"seat\":0,\"tile\":\"R1\"}]",
    )
    .unwrap();
    let bad = okeyctl().arg("replay").arg(&file).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("start with hand_started"));
    // A file of one line, the deal alone, is a hand of one event.
    std::fs::write(&file, format!("{}\n", lines[0])).unwrap();
    let dealt = okeyctl().arg("replay").arg(&file).output().unwrap();
    assert!(
        dealt.status.success(),
        "{}",
        String::from_utf8_lossy(&dealt.stderr)
    );
    assert!(String::from_utf8_lossy(&dealt.stdout).contains("v1    HandStarted"));
    // A bare table id is a table, not a file: asked of the table service (none answers here).
    let table = okeyctl()
        .args([
            "replay",
            "3f1c0000-0000-4000-8000-000000000000",
            "--hand",
            "1",
        ])
        .args(["--table-url", "http://127.0.0.1:9", "--token", "x"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&table.stderr);
    assert!(said.contains("table service"), "{said}");
    assert!(!said.contains("cannot read the file"), "{said}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A file whose numbers or tiles were changed is not told as if the rules had written it:
/// `replay` says where it stops holding together and exits 1, `verify FILE` names the event.
#[test]
fn a_changed_file_is_said_to_be_changed_by_replay_and_verify() {
    let path = scenario("134_four_tile_set_with_two_okeys_gives_back_one.json");
    let s = okeyctl::conformance::load(&path).unwrap();
    let (_, _, events) = okeyctl::conformance::play(&s).unwrap();
    let dir = std::env::temp_dir().join(format!("okeyctl-changed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, events: &[serde_json::Value]| {
        let file = dir.join(name);
        let lines: Vec<String> = events.iter().map(|e| e.to_string()).collect();
        std::fs::write(&file, lines.join("\n")).unwrap();
        file
    };
    let values: Vec<serde_json::Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    let whole = write("whole.jsonl", &values);
    let verified = okeyctl().arg("verify").arg(&whole).output().unwrap();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );

    // The penalty's points changed.
    let mut changed = values.clone();
    let at = changed
        .iter()
        .position(|e| e["type"] == "penalty_charged")
        .expect("scenario 134 charges a penalty");
    changed[at]["points"] = serde_json::json!(1);
    let file = write("changed.jsonl", &changed);
    let told = okeyctl().arg("replay").arg(&file).output().unwrap();
    assert_eq!(told.status.code(), Some(1));
    let text = String::from_utf8_lossy(&told.stdout).to_string();
    assert!(text.starts_with("NOT AS THE RULES GIVE IT"), "{text}");
    assert!(!text.contains("penalty #0"), "told past the change: {text}");
    let checked = okeyctl().arg("verify").arg(&file).output().unwrap();
    assert_eq!(checked.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&checked.stdout).contains(&format!("version {}", at + 1)),
        "{}",
        String::from_utf8_lossy(&checked.stdout)
    );

    // Two hands in one file, each as the rules give it: neither told nor verified as one.
    let ended = okeyctl::conformance::load(&scenario(
        "034_keep_one_tile_then_finish_with_a_playable_tile.json",
    ))
    .unwrap();
    let (_, _, first) = okeyctl::conformance::play(&ended).unwrap();
    let mut two: Vec<serde_json::Value> = first
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    let after = two.len() + 1;
    two.extend(values.iter().cloned());
    let file = write("two.jsonl", &two);
    for command in ["replay", "verify"] {
        let out = okeyctl().arg(command).arg(&file).output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {said}");
        assert!(
            said.contains("more than one hand") && said.contains(&format!("event {after}")),
            "{command}: {said}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
