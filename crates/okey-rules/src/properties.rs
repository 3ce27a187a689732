//! Property tests: random legal hands under every preset and option mix, with the engine's
//! invariants checked after every step (OpenSpiel's RandomSimTest, in spirit).

use proptest::prelude::*;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

use crate::hand::{Command, Event, Hand, RuleError};
use crate::meld::MeldTile;
use crate::ruleset::{PlayableDiscard, Preset, RuleSet, Threshold};
use crate::tile::{Tile, Tiles};
use crate::view::SeatView;
use crate::{Deal, Seat};

/// Every tile of the hand, wherever it is, must make up the 106-tile set exactly once.
fn conserved(hand: &Hand) -> Result<(), String> {
    let mut all = Tiles::new();
    all.insert(hand.indicator);
    for r in &hand.racks {
        for t in r.iter() {
            all.insert(t);
        }
    }
    for t in hand.pile_in_draw_order() {
        all.insert(t);
    }
    for t in hand.discards.iter().flatten() {
        all.insert(*t);
    }
    for m in &hand.table {
        for p in &m.tiles {
            all.insert(p.tile);
        }
    }
    if all != Tiles::from_slice(&Tile::full_set()) {
        return Err(format!("tiles not conserved: {} tiles", all.len()));
    }
    Ok(())
}

/// A seat's view must not change when only what it may not see changes: the other racks and the
/// pile order.
fn views_hide_secrets(hand: &Hand) -> Result<(), String> {
    for seat in 0..4u8 {
        let view = SeatView::of(hand, seat);
        if view.rack != hand.racks[seat as usize].to_vec() {
            return Err(format!(
                "seat {seat}'s view shows a rack that is not its own"
            ));
        }
        let mut scrambled = hand.clone();
        // Move one tile from one other rack to another, and reverse the pile.
        let others: Vec<usize> = (0..4).filter(|s| *s != seat as usize).collect();
        let (a, b) = (others[0], others[1]);
        let swap = scrambled.racks[a]
            .kinds()
            .find_map(|t| scrambled.racks[b].kinds().find(|u| *u != t).map(|u| (t, u)));
        if let Some((t, u)) = swap {
            scrambled.racks[a].remove(t);
            scrambled.racks[b].insert(t);
            scrambled.racks[b].remove(u);
            scrambled.racks[a].insert(u);
        }
        scrambled.pile.reverse();
        if SeatView::of(&scrambled, seat) != view {
            return Err(format!("seat {seat}'s view depends on hidden tiles"));
        }
    }
    Ok(())
}

/// Every view offers a side discard exactly while the seat on turn could still take one: a
/// legal take is of the tile the views show, and a tile they show is refused, if at all, only
/// for what it is (an okey, a playable tile, a pair opener's rule), never because the seat
/// already took a tile or gave it back.
fn side_discard_on_offer(hand: &Hand) -> Result<(), String> {
    let seat = hand.turn.seat;
    for viewer in 0..4u8 {
        let shown = SeatView::of(hand, viewer).side_discard;
        let take = hand.clone().apply(seat, &Command::TakeDiscard);
        match (take, shown) {
            (Ok(events), shown) => {
                let taken = events.iter().find_map(|e| match e {
                    Event::SideDiscardTaken { tile, .. } => Some(*tile),
                    _ => None,
                });
                if shown.is_none() || taken != shown {
                    return Err(format!(
                        "seat {viewer}'s view offers {shown:?}, seat {seat} takes {taken:?}"
                    ));
                }
            }
            (Err(e), Some(t))
                if !matches!(
                    e,
                    RuleError::SideDiscardIsOkey
                        | RuleError::SideDiscardPlayable(_)
                        | RuleError::PairsMayNotTakeDiscard
                ) =>
            {
                return Err(format!(
                    "seat {viewer}'s view offers {t}, which seat {seat} may not take: {e}"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

fn random_rules(rng: &mut ChaCha8Rng) -> RuleSet {
    let preset = Preset::ALL[(rng.next_u32() % 5) as usize];
    let mut rules = preset.rules();
    let bit = |rng: &mut ChaCha8Rng| rng.next_u32().is_multiple_of(2);
    if bit(rng) {
        rules.threshold = if bit(rng) {
            Threshold::Raising
        } else {
            Threshold::Standard
        };
        rules.partners = bit(rng);
        rules.run_wraps_12_13_1 = bit(rng);
        rules.in_play_penalties = !rng.next_u32().is_multiple_of(4);
        rules.playable_discard = if bit(rng) {
            PlayableDiscard::Called
        } else {
            PlayableDiscard::Auto
        };
        rules.act_after_opening_same_turn = bit(rng);
        rules.pairs_take_discard = bit(rng);
    }
    rules
}

/// Picks an action: table actions are favoured so hands open and finish, not only discard.
fn pick(rng: &mut ChaCha8Rng, legal: &[Command]) -> Command {
    let prefer: Vec<&Command> = legal
        .iter()
        .filter(|c| {
            matches!(
                c,
                Command::Open { .. }
                    | Command::Lay { .. }
                    | Command::Add { .. }
                    | Command::Retrieve { .. }
            )
        })
        .collect();
    if !prefer.is_empty() && rng.next_u32() % 10 < 8 {
        return prefer[(rng.next_u32() as usize) % prefer.len()].clone();
    }
    legal[(rng.next_u32() as usize) % legal.len()].clone()
}

/// Commands that are mostly illegal now: wrong seat, tiles not held, nonsense melds.
fn illegal_samples(rng: &mut ChaCha8Rng, hand: &Hand) -> Vec<(Seat, Command)> {
    let seat = hand.turn.seat;
    let other = (seat + 1 + (rng.next_u32() % 3) as u8) % 4;
    let random_tile = Tile::from_index((rng.next_u32() % 53) as usize);
    let mut v = vec![
        (other, Command::Draw),
        (other, Command::Discard { tile: random_tile }),
        (seat, Command::Discard { tile: random_tile }),
        (
            seat,
            Command::Open {
                melds: vec![vec![MeldTile::plain(random_tile); 3]],
            },
        ),
        (
            seat,
            Command::Add {
                meld: 99,
                tiles: vec![MeldTile::plain(random_tile)],
            },
        ),
        (
            seat,
            Command::Retrieve {
                meld: 0,
                tiles: vec![random_tile],
            },
        ),
        (seat, Command::Lay { melds: vec![] }),
        (seat, Command::TakeDiscard),
        (seat, Command::ReturnDiscard),
        (seat, Command::CallPlayable),
    ];
    if let Some(t) = hand.racks[seat as usize].iter().next() {
        v.push((
            seat,
            Command::Open {
                melds: vec![vec![MeldTile::plain(t)]],
            },
        ));
    }
    v
}

/// Plays one random hand from `seed`, checking everything after every step. Returns the steps.
fn play_checked(seed: u64) -> Result<usize, String> {
    play_checked_with(seed, None)
}

/// `play_checked` under `rules`, or under random rules when `None`.
fn play_checked_with(seed: u64, rules: Option<&RuleSet>) -> Result<usize, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut deal_seed = [0u8; 32];
    rng.fill_bytes(&mut deal_seed);
    let random = random_rules(&mut rng);
    let rules = rules.cloned().unwrap_or(random);
    let deal = Deal::from_seed(&deal_seed, (rng.next_u32() % 4) as u8);
    let start = Hand::start(rules, deal).map_err(|e| e.to_string())?;
    let mut hand = Hand::from_start(&start);
    let mut log: Vec<Event> = vec![start];
    let mut steps = 0;
    while !hand.is_over() {
        steps += 1;
        if steps > 2000 {
            return Err("hand did not end".into());
        }
        let seat = hand.turn.seat;
        let hints = hand.hints(seat);
        if hints.legal.is_empty() {
            return Err(format!("seat {seat} has no legal action"));
        }
        if hints.penalty_points.len() != hints.legal.len() {
            return Err("hints give penalty points for another number of actions".into());
        }
        // Every hinted action is accepted, keeps the invariants and charges the seat exactly the
        // points the hint lists (read off the seat's penalty total, not off the events).
        for (c, points) in hints.actions() {
            let mut probe = hand.clone();
            let events = probe
                .apply(seat, c)
                .map_err(|e| format!("hinted {c:?} rejected: {e}"))?;
            conserved(&probe)?;
            let cancelled = events
                .iter()
                .any(|e| matches!(e, Event::HandCancelled { .. }));
            let charged =
                probe.penalty_totals()[seat as usize] - hand.penalty_totals()[seat as usize];
            if !cancelled && charged != points {
                return Err(format!(
                    "hinted {c:?} lists {points} penalty points and charges {charged}"
                ));
            }
            if let Command::Discard { tile } = c {
                let free = hints.penalty_free_discards.contains(tile);
                if free && charged != 0 {
                    return Err(format!(
                        "{tile} is listed penalty-free and charges {charged}"
                    ));
                }
            }
        }
        // Sampled illegal actions change nothing.
        for (s, c) in illegal_samples(&mut rng, &hand) {
            let before = hand.clone();
            let mut probe = hand.clone();
            if probe.apply(s, &c).is_err() && probe != before {
                return Err(format!("rejected {c:?} changed the state"));
            }
        }
        // Sometimes the deadline passes instead.
        let command = if rng.next_u32().is_multiple_of(25) {
            Command::Timeout
        } else {
            pick(&mut rng, &hints.legal)
        };
        let events = hand
            .apply(seat, &command)
            .map_err(|e| format!("{command:?}: {e}"))?;
        log.extend(events);
        conserved(&hand)?;
        views_hide_secrets(&hand)?;
        side_discard_on_offer(&hand)?;
        let refolded = Hand::replay(&log).expect("log has a start");
        if refolded != hand {
            return Err(format!(
                "re-folding {} events gives another state",
                log.len()
            ));
        }
    }
    let end = hand.end.expect("over");
    // The engine's explanation of each score gives the score it wrote.
    let explained = hand.score_bases().expect("ended").map(|b| b.points());
    if explained != end.scores {
        return Err(format!(
            "scores {:?} but their bases give {explained:?}",
            end.scores
        ));
    }
    let finished = end.winner.is_some();
    if finished && end.scores.iter().filter(|s| **s < 0).count() != 1 {
        return Err(format!(
            "a finished hand has exactly one negative score: {:?}",
            end.scores
        ));
    }
    Ok(steps)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn random_legal_hands_keep_every_invariant(seed in any::<u64>()) {
        let r = play_checked(seed);
        prop_assert!(r.is_ok(), "seed {}: {}", seed, r.unwrap_err());
    }
}

/// Every preset as it comes, the same number of hands each (the proptest draws presets at random
/// and mixes options in).
#[test]
fn every_preset_keeps_every_invariant() {
    for preset in Preset::ALL {
        let rules = preset.rules();
        for seed in 0..60 {
            if let Err(e) = play_checked_with(seed, Some(&rules)) {
                panic!("{} seed {seed}: {e}", preset.name());
            }
        }
    }
}

/// A larger fixed sweep of seeds (runs in release with `--ignored`; the proptest covers CI).
#[test]
#[ignore = "long: run with cargo test --release -- --ignored"]
fn five_thousand_hands() {
    for seed in 0..5000 {
        if let Err(e) = play_checked(seed) {
            panic!("seed {seed}: {e}");
        }
    }
}

/// In called mode the first player's first turn follows no discard: a call then is
/// `nothing_to_call` (there is no discard to call), not `call_after_taking`, though the dealt
/// 22nd tile stands for the turn's take; after the first player's discard the next seat may
/// call before taking, and not after.
#[test]
fn the_first_turn_has_nothing_to_call() {
    let rules = RuleSet {
        playable_discard: PlayableDiscard::Called,
        ..Preset::Classic.rules()
    };
    for seed in 0..20u8 {
        let deal = Deal::from_seed(&[seed; 32], seed % 4);
        let first = deal.first;
        let start = Hand::start(rules.clone(), deal).unwrap();
        let mut hand = Hand::from_start(&start);
        assert_eq!(
            hand.decide(first, &Command::CallPlayable),
            Err(RuleError::NothingToCall),
            "seed {seed}"
        );
        let tile = hand.racks[first as usize].iter().next().unwrap();
        for event in hand.decide(first, &Command::Discard { tile }).unwrap() {
            hand.evolve(&event);
        }
        let next = (first + 1) % 4;
        assert!(
            hand.decide(next, &Command::CallPlayable).is_ok(),
            "seed {seed}"
        );
        for event in hand.decide(next, &Command::Draw).unwrap() {
            hand.evolve(&event);
        }
        assert_eq!(
            hand.decide(next, &Command::CallPlayable),
            Err(RuleError::CallAfterTaking),
            "seed {seed}"
        );
    }
}
