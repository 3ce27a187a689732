//! Bots play whole hands through `Hand::decide` without a rejected command, for every preset and
//! level, and what they do depends on their seat's view alone.

use okey_bots::{Bot, Level};
use okey_rules::{Command, Deal, Hand, Preset, RuleSet, SeatView};

fn seed(n: u64) -> [u8; 32] {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&n.to_le_bytes());
    s[8] = 0xb0;
    s
}

/// Plays one hand; returns the rejected commands (seat, command, error).
fn play(rules: &RuleSet, deal: Deal, lineup: [Level; 4]) -> (Hand, Vec<String>) {
    let mut bots: [Box<dyn Bot>; 4] = lineup.map(Level::bot);
    let mut hand = Hand::from_start(&Hand::start(rules.clone(), deal).unwrap());
    let mut rejected = Vec::new();
    let mut steps = 0;
    while !hand.is_over() {
        steps += 1;
        assert!(steps < 5_000, "the hand never ends");
        let seat = hand.turn.seat;
        let command = bots[seat as usize].act(&SeatView::of(&hand, seat));
        if let Err(e) = hand.apply(seat, &command) {
            rejected.push(format!(
                "{} seat {seat}: {command:?}: {e}",
                lineup[seat as usize]
            ));
            hand.apply(seat, &Command::Timeout)
                .expect("the timeout play is always legal");
        }
    }
    (hand, rejected)
}

#[test]
fn no_bot_command_is_rejected_in_200_hands_of_any_preset() {
    let lineups = [
        [Level::Easy; 4],
        [Level::Strong; 4],
        [Level::Easy, Level::Strong, Level::Easy, Level::Strong],
        [Level::Strong, Level::Easy, Level::Strong, Level::Easy],
    ];
    for preset in Preset::ALL {
        let rules = preset.rules();
        let mut rejected = Vec::new();
        let mut opened = 0;
        for n in 0..200u64 {
            let (hand, r) = play(
                &rules,
                Deal::from_seed(&seed(n), (n % 4) as u8),
                lineups[(n % 4) as usize],
            );
            rejected.extend(r);
            opened += hand.opened.iter().flatten().count();
        }
        assert!(
            rejected.is_empty(),
            "{}: {} rejected, first: {:?}",
            preset.name(),
            rejected.len(),
            &rejected[..3.min(rejected.len())]
        );
        assert!(
            opened > 200,
            "{}: bots opened only {opened} times in 200 hands",
            preset.name()
        );
    }
}

#[test]
fn partners_and_raising_tables_reject_nothing_either() {
    let rules = RuleSet {
        partners: true,
        threshold: okey_rules::Threshold::Raising,
        ..Preset::Classic.rules()
    };
    for n in 0..100u64 {
        let lineup = [Level::Strong, Level::Easy, Level::Strong, Level::Easy];
        let (_, rejected) = play(
            &rules,
            Deal::from_seed(&seed(1_000 + n), (n % 4) as u8),
            lineup,
        );
        assert!(rejected.is_empty(), "{rejected:?}");
    }
}

/// The same view, however it was built, gives the same command: a view that went through JSON
/// (so holds no pointer into a hand) and a hand whose hidden tiles differ.
#[test]
fn a_bot_reads_its_seat_view_and_nothing_else() {
    for level in Level::ALL {
        for n in 0..20u64 {
            let deal = Deal::from_seed(&seed(50 + n), 0);
            // Swap what seats 1 and 2 hold and turn the pile over: seat 0 cannot tell.
            let mut hidden = deal.clone();
            hidden.racks.swap(1, 2);
            hidden.pile.reverse();
            let rules = Preset::Classic.rules();
            let mut a = Hand::from_start(&Hand::start(rules.clone(), deal).unwrap());
            let mut b = Hand::from_start(&Hand::start(rules, hidden).unwrap());
            let (mut bot_a, mut bot_b, mut bot_json) = (level.bot(), level.bot(), level.bot());
            // Seat 0's whole first turn (it has no draw, so nothing hidden enters its rack).
            while a.turn.number == 0 && !a.is_over() {
                let view_a = SeatView::of(&a, 0);
                let view_b = SeatView::of(&b, 0);
                assert_eq!(view_a, view_b);
                let json: SeatView =
                    serde_json::from_str(&serde_json::to_string(&view_a).unwrap()).unwrap();
                let command = bot_a.act(&view_a);
                assert_eq!(bot_b.act(&view_b), command);
                assert_eq!(bot_json.act(&json), command);
                a.apply(0, &command).unwrap();
                b.apply(0, &command).unwrap();
            }
        }
    }
}

#[test]
fn the_same_views_give_the_same_commands() {
    let rules = Preset::Yudum.rules();
    let lineup = [Level::Strong, Level::Easy, Level::Strong, Level::Easy];
    for n in 0..10u64 {
        let (a, _) = play(&rules, Deal::from_seed(&seed(n), 1), lineup);
        let (b, _) = play(&rules, Deal::from_seed(&seed(n), 1), lineup);
        assert_eq!(a, b);
    }
}

#[test]
fn strong_opens_more_often_than_easy() {
    let rules = Preset::Classic.rules();
    let (mut easy, mut strong) = (0, 0);
    for n in 0..100u64 {
        let lineup = if n % 2 == 0 {
            [Level::Easy, Level::Strong, Level::Easy, Level::Strong]
        } else {
            [Level::Strong, Level::Easy, Level::Strong, Level::Easy]
        };
        let (hand, _) = play(
            &rules,
            Deal::from_seed(&seed(300 + n), (n % 4) as u8),
            lineup,
        );
        for (opened, level) in hand.opened.iter().zip(lineup) {
            if opened.is_some() {
                match level {
                    Level::Easy => easy += 1,
                    Level::Strong => strong += 1,
                }
            }
        }
    }
    assert!(strong > easy, "strong opened {strong} times, easy {easy}");
}

/// At a `called` table every bot calls a discard a table meld could take, before it takes a
/// tile, and never calls one that does not fit: checked at every turn where a call is open.
#[test]
fn both_levels_call_playable_discards_and_only_those() {
    let rules = Preset::Yudum.rules();
    assert_eq!(rules.playable_discard, okey_rules::PlayableDiscard::Called);
    let lineups = [
        [Level::Easy; 4],
        [Level::Strong; 4],
        [Level::Easy, Level::Strong, Level::Easy, Level::Strong],
        [Level::Strong, Level::Easy, Level::Strong, Level::Easy],
    ];
    let mut calls = std::collections::BTreeMap::<Level, u32>::new();
    let mut charged = 0;
    for n in 0..200u64 {
        let lineup = lineups[(n % 4) as usize];
        let mut bots: [Box<dyn Bot>; 4] = lineup.map(Level::bot);
        let deal = Deal::from_seed(&seed(2_000 + n), (n % 4) as u8);
        let mut hand = Hand::from_start(&Hand::start(rules.clone(), deal).unwrap());
        while !hand.is_over() {
            let seat = hand.turn.seat;
            let view = SeatView::of(&hand, seat);
            let command = bots[seat as usize].act(&view);
            if let Some(call) = hand.pending_call {
                let level = lineup[seat as usize];
                let called = command == Command::CallPlayable;
                assert_eq!(
                    called, call.fits,
                    "{level} seat {seat} after {} was discarded (fits: {}): {command:?}",
                    call.tile, call.fits
                );
                if called {
                    *calls.entry(level).or_default() += 1;
                }
            } else {
                assert_ne!(
                    command,
                    Command::CallPlayable,
                    "a call with nothing to call"
                );
            }
            let events = hand
                .apply(seat, &command)
                .expect("bots play legal commands");
            charged += events
                .iter()
                .filter(|e| {
                    matches!(
                        e,
                        okey_rules::Event::PenaltyCharged {
                            reason: okey_rules::PenaltyReason::DiscardPlayable,
                            ..
                        }
                    )
                })
                .count();
        }
    }
    for level in Level::ALL {
        assert!(
            calls.get(&level).copied().unwrap_or(0) > 0,
            "{level} never called: {calls:?}"
        );
    }
    assert!(charged > 0, "no playable discard was charged");
}
