//! Hot paths of the rules engine: the best-opening search, applying a command, and re-folding a
//! complete hand from its events. Baselines measured in the same run give ratios that survive a
//! noisy machine: the search is compared with reading one meld, a refold with cloning its log.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use okey_rules::hints::{best_meld_opening, best_pair_opening};
use okey_rules::meld::read_run_or_set;
use okey_rules::{Command, Deal, Event, Hand, MeldTile, Okey, Preset, Tile, Tiles};

fn tiles(s: &str) -> Vec<Tile> {
    s.split_whitespace().map(|t| t.parse().unwrap()).collect()
}

/// A 22-tile rack with both okeys (indicator R9, okey R10) and many overlapping runs and sets.
fn hard_rack() -> (Okey, Tiles) {
    let okey = Okey::from_indicator("R9".parse().unwrap()).unwrap();
    let rack = Tiles::from_slice(&tiles(
        "R10 R10 K3 K4 K5 K6 K7 Y5 Y6 Y7 B5 B6 B7 R5 R6 R7 K11 Y11 B11 K12 K13 F",
    ));
    (okey, rack)
}

/// A complete hand played by always taking the first hinted action that changes the table, else
/// drawing and discarding the first penalty-free tile.
fn complete_hand(seed: u8) -> Vec<Event> {
    let start = Hand::start(Preset::Classic.rules(), Deal::from_seed(&[seed; 32], 0)).unwrap();
    let mut hand = Hand::from_start(&start);
    let mut log = vec![start];
    while !hand.is_over() {
        let seat = hand.turn.seat;
        let hints = hand.hints(seat);
        let table = hints.legal.iter().find(|c| {
            matches!(
                c,
                Command::Open { .. } | Command::Lay { .. } | Command::Add { .. }
            )
        });
        let cmd = match table {
            Some(c) => c.clone(),
            None if hints.legal.contains(&Command::Draw) => Command::Draw,
            None => {
                let tile = hints.penalty_free_discards.first().copied();
                hints
                    .legal
                    .iter()
                    .find(|c| matches!(c, Command::Discard { tile: t } if Some(*t) == tile))
                    .or_else(|| {
                        hints
                            .legal
                            .iter()
                            .find(|c| matches!(c, Command::Discard { .. }))
                    })
                    .cloned()
                    .unwrap_or(Command::Timeout)
            }
        };
        log.extend(hand.apply(seat, &cmd).unwrap());
    }
    log
}

fn benches(c: &mut Criterion) {
    let (okey, rack) = hard_rack();
    let meld: Vec<MeldTile> = tiles("K3 K4 K5").into_iter().map(MeldTile::plain).collect();
    c.bench_function("baseline/read_one_meld", |b| {
        b.iter(|| read_run_or_set(okey, false, black_box(&meld), 0))
    });
    c.bench_function("best_meld_opening/22_tiles_two_okeys", |b| {
        b.iter(|| best_meld_opening(okey, false, black_box(&rack), None))
    });
    // The goal is stated at p99, which criterion does not report: time single calls too.
    let mut samples: Vec<u128> = (0..3000)
        .map(|_| {
            let t = std::time::Instant::now();
            black_box(best_meld_opening(okey, false, black_box(&rack), None));
            t.elapsed().as_nanos()
        })
        .collect();
    samples.sort_unstable();
    let pct = |p: f64| {
        samples[((samples.len() as f64 * p) as usize).min(samples.len() - 1)] as f64 / 1000.0
    };
    println!(
        "best_meld_opening single calls: p50 {:.1} us, p99 {:.1} us, max {:.1} us",
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    c.bench_function("best_pair_opening/22_tiles_two_okeys", |b| {
        b.iter(|| best_pair_opening(okey, black_box(&rack), None))
    });

    let start = Hand::start(Preset::Classic.rules(), Deal::from_seed(&[3; 32], 0)).unwrap();
    let hand = Hand::from_start(&start);
    let first_tile = hand.racks[0].iter().next().unwrap();
    let discard = Command::Discard { tile: first_tile };
    c.bench_function("apply/discard", |b| {
        b.iter_batched(
            || hand.clone(),
            |mut h| h.apply(0, black_box(&discard)).unwrap(),
            BatchSize::SmallInput,
        )
    });
    c.bench_function("baseline/clone_hand", |b| {
        b.iter(|| black_box(&hand).clone())
    });

    let logs: Vec<Vec<Event>> = (0..16).map(complete_hand).collect();
    let events: usize = logs.iter().map(Vec::len).sum();
    println!(
        "refold corpus: {} hands, {:.1} events per hand",
        logs.len(),
        events as f64 / logs.len() as f64
    );
    let mut i = 0;
    c.bench_function("refold/complete_hand", |b| {
        b.iter(|| {
            i = (i + 1) % logs.len();
            Hand::replay(black_box(&logs[i])).unwrap()
        })
    });
    c.bench_function("baseline/clone_event_log", |b| {
        b.iter(|| {
            i = (i + 1) % logs.len();
            black_box(&logs[i]).clone()
        })
    });
}

criterion_group!(engine, benches);
criterion_main!(engine);
