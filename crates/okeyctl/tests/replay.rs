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
    std::fs::remove_dir_all(&dir).ok();
}
