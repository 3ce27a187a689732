//! `okeyctl simulate` through its library API: a short run keeps every invariant, the same seed
//! gives the same result, and hands are dealt from the documented seeds.

use okey_bots::Level;
use okey_rules::{Deal, Preset};
use okeyctl::simulate::{self, Simulation};

fn sim(preset: Preset, hands: u64, seed: u64) -> Simulation {
    Simulation {
        hands,
        seed,
        rules: preset.rules(),
        bots: [Level::Easy, Level::Strong, Level::Easy, Level::Strong],
        rotate: true,
        replay_every_step: false,
    }
}

/// The report as JSON without the one figure that depends on the machine.
fn without_speed(report: &simulate::Report) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    v.as_object_mut().unwrap().remove("hands_per_sec");
    v
}

#[test]
fn a_short_run_of_every_preset_keeps_the_invariants() {
    for preset in Preset::ALL {
        let report = simulate::run(&sim(preset, 40, 7), &mut |_| {});
        assert_eq!(report.hands, 40);
        assert_eq!(report.finished + report.pile_empty + report.cancelled, 40);
        assert_eq!(
            report.invariant_violations,
            0,
            "{}: {:?}",
            preset.name(),
            report.details
        );
        assert_eq!(
            report.rejected_commands,
            0,
            "{}: {:?}",
            preset.name(),
            report.details
        );
        assert_eq!(report.stuck_turns, 0);
        assert!(report.avg_turns > 0.0);
        assert_eq!(report.mean_score_by_bot.len(), 2);
        let c = report
            .comparison
            .as_ref()
            .expect("strong and easy both play");
        assert_eq!(c.score_diff.n, 40);
    }
}

#[test]
fn at_a_called_table_the_bots_call_playable_discards() {
    let report = simulate::run(&sim(Preset::Yudum, 80, 5), &mut |_| {});
    assert!(report.playable_discards > 0, "{}", report.to_json());
    assert!(report.calls > 0, "{}", report.to_json());
    assert_eq!(report.calls_not_fitting, 0, "{}", report.to_json());
    // At an auto table a playable discard is charged at once: nobody calls.
    let report = simulate::run(&sim(Preset::Classic, 40, 5), &mut |_| {});
    assert_eq!(report.calls, 0);
}

#[test]
fn replaying_after_every_step_finds_nothing_either() {
    let mut s = sim(Preset::Yudum, 10, 3);
    s.replay_every_step = true;
    let report = simulate::run(&s, &mut |_| {});
    assert_eq!(report.invariant_violations, 0, "{:?}", report.details);
}

#[test]
fn the_same_seed_gives_the_same_json() {
    let a = simulate::run(&sim(Preset::Classic, 30, 42), &mut |_| {});
    let b = simulate::run(&sim(Preset::Classic, 30, 42), &mut |_| {});
    assert_eq!(without_speed(&a), without_speed(&b));
    let c = simulate::run(&sim(Preset::Classic, 30, 43), &mut |_| {});
    assert_ne!(
        without_speed(&a),
        without_speed(&c),
        "another seed deals other hands"
    );
}

#[test]
fn the_json_has_the_contract_keys_first() {
    let report = simulate::run(&sim(Preset::Practice, 4, 1), &mut |_| {});
    let json = report.to_json();
    let keys = [
        "hands",
        "finished",
        "pile_empty",
        "cancelled",
        "avg_turns",
        "hands_per_sec",
        "invariant_violations",
        "mean_score_by_seat",
        "mean_score_by_bot",
    ];
    let mut at = 0;
    for k in keys {
        let pos = json[at..]
            .find(&format!("\"{k}\":"))
            .unwrap_or_else(|| panic!("{k} missing or out of order: {json}"));
        at += pos;
    }
    assert!(!json.contains('\n'));
}

#[test]
fn hands_are_dealt_from_the_documented_seeds_and_the_lineup_rotates() {
    let s = sim(Preset::Classic, 16, 9);
    let first = Deal::from_seed(&simulate::deal_seed(9, 0), simulate::first_seat(0));
    assert_eq!(first.first, 0);
    assert_ne!(simulate::deal_seed(9, 0), simulate::deal_seed(9, 1));
    assert_ne!(simulate::deal_seed(9, 0), simulate::deal_seed(10, 0));
    // Over 16 hands each lineup slot plays each seat four times.
    let mut seen = [[0; 4]; 4];
    for i in 0..16 {
        for (seat, slot) in simulate::slots(&s, i).into_iter().enumerate() {
            seen[slot][seat] += 1;
        }
    }
    assert_eq!(seen, [[4; 4]; 4]);
    let fixed = Simulation { rotate: false, ..s };
    assert_eq!(simulate::slots(&fixed, 5), [0, 1, 2, 3]);
}

#[test]
fn progress_is_reported_after_every_hand() {
    let mut seen = Vec::new();
    simulate::run(&sim(Preset::Solo, 5, 2), &mut |done| seen.push(done));
    assert_eq!(seen, vec![1, 2, 3, 4, 5]);
}
