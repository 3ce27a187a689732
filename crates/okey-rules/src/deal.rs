//! The deal: who holds what, the indicator and the centre pile, as a deterministic function of a
//! 256-bit seed.
//!
//! # Algorithm (stable: changing it breaks every recorded hand)
//! 1. Start from the 106 tiles in canonical order: for each tile kind in the order R1..R13, Y1..Y13,
//!    B1..B13, K1..K13, F, both copies next to each other.
//! 2. Shuffle with Fisher–Yates driven by ChaCha20 seeded with the 32 seed bytes: for i from 105 down
//!    to 1, draw j uniformly from 0..=i (a 32-bit draw, rejecting values at or above the largest multiple
//!    of i+1) and swap positions i and j.
//! 3. The indicator is the last tile of the shuffled order that is not a false joker; it is taken out.
//! 4. The first player takes the first 22 tiles, then each following seat in play order 21 tiles.
//! 5. The remaining 20 tiles are the centre pile, drawn front first.

use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::tile::{Okey, Tile, Tiles};
use crate::{Seat, next_seat};

/// A hand's tiles as dealt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deal {
    pub indicator: Tile,
    /// The seat that plays first and holds 22 tiles.
    pub first: Seat,
    pub racks: [Vec<Tile>; 4],
    /// The centre pile, first tile drawn first.
    pub pile: Vec<Tile>,
}

/// Why a written deal cannot be played.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DealError {
    #[error("the indicator cannot be a false joker")]
    FalseJokerIndicator,
    #[error("first player must be seat 0-3, not {0}")]
    BadFirst(u8),
    #[error("seat {seat} holds {len} tiles; the first player holds 22 and the others 21")]
    RackSize { seat: Seat, len: usize },
    #[error("tile {tile} appears {count} times; the set has it twice")]
    TooMany { tile: Tile, count: usize },
}

impl Deal {
    /// Deals from a seed, the first player at `first`.
    pub fn from_seed(seed: &[u8; 32], first: Seat) -> Deal {
        let mut tiles = Tile::full_set();
        let mut rng = ChaCha20Rng::from_seed(*seed);
        for i in (1..tiles.len()).rev() {
            let j = uniform(&mut rng, i as u32 + 1) as usize;
            tiles.swap(i, j);
        }
        let pos = tiles
            .iter()
            .rposition(|t| !t.is_false_joker())
            .expect("the set has numbered tiles");
        let indicator = tiles.remove(pos);
        let mut racks: [Vec<Tile>; 4] = Default::default();
        let mut at = 0;
        let mut seat = first;
        for k in 0..4 {
            let n = if k == 0 { 22 } else { 21 };
            racks[seat as usize] = tiles[at..at + n].to_vec();
            at += n;
            seat = next_seat(seat);
        }
        Deal {
            indicator,
            first,
            racks,
            pile: tiles[at..].to_vec(),
        }
    }

    pub fn okey(&self) -> Okey {
        Okey::from_indicator(self.indicator).expect("validated deals have a numbered indicator")
    }

    /// Checks rack sizes and that no tile appears more often than the set has it. The pile may be
    /// shorter than 20 (conformance scenarios use short piles to end hands sooner).
    pub fn validate(&self) -> Result<(), DealError> {
        if self.indicator.is_false_joker() {
            return Err(DealError::FalseJokerIndicator);
        }
        if self.first > 3 {
            return Err(DealError::BadFirst(self.first));
        }
        for (s, rack) in self.racks.iter().enumerate() {
            let want = if s as Seat == self.first { 22 } else { 21 };
            if rack.len() != want {
                return Err(DealError::RackSize {
                    seat: s as Seat,
                    len: rack.len(),
                });
            }
        }
        let mut all = Tiles::new();
        all.insert(self.indicator);
        for t in self.racks.iter().flatten().chain(&self.pile) {
            all.insert(*t);
        }
        if let Some(tile) = all.kinds().find(|t| all.count(*t) > 2) {
            return Err(DealError::TooMany {
                tile,
                count: all.count(tile) as usize,
            });
        }
        Ok(())
    }
}

/// A uniform draw from 0..n without modulo bias.
fn uniform(rng: &mut ChaCha20Rng, n: u32) -> u32 {
    let zone = u32::MAX - (u32::MAX % n);
    loop {
        let v = rng.next_u32();
        if v < zone {
            return v % n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_deal_uses_every_tile_once_and_is_stable() {
        let d = Deal::from_seed(&[7u8; 32], 2);
        d.validate().unwrap();
        assert_eq!(d.racks[2].len(), 22);
        assert_eq!(d.pile.len(), 20);
        let mut all: Vec<Tile> = d.racks.iter().flatten().chain(&d.pile).copied().collect();
        all.push(d.indicator);
        all.sort();
        assert_eq!(all, Tile::full_set());
        assert_eq!(Deal::from_seed(&[7u8; 32], 2), d);
    }

    /// The test vector: changing the algorithm above must change this test deliberately.
    #[test]
    fn seed_test_vector() {
        let mut seed = [0u8; 32];
        for (i, b) in seed.iter_mut().enumerate() {
            *b = i as u8;
        }
        let d = Deal::from_seed(&seed, 0);
        let text = |v: &[Tile]| {
            v.iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let got = format!(
            "{} | {} | {}",
            d.indicator,
            text(&d.racks[0]),
            text(&d.pile)
        );
        assert_eq!(got, include_str!("../tests/data/seed_vector.txt").trim());
    }

    /// `docs/fairness.md` documents the algorithm for app teams with a full test vector (every
    /// rack and the pile); the engine must deal exactly that.
    #[test]
    fn the_documented_test_vector() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/fairness.md");
        let doc = std::fs::read_to_string(path).expect("docs/fairness.md");
        let block = doc
            .split("<!-- deal test vector -->")
            .nth(1)
            .and_then(|rest| rest.split("```").nth(1))
            .expect("the test vector block");
        let field = |name: &str| -> String {
            block
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name}:")))
                .unwrap_or_else(|| panic!("no `{name}:` line"))
                .trim()
                .to_owned()
        };
        let hex = field("seed");
        let seed: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let seed: [u8; 32] = seed.try_into().unwrap();
        let first: Seat = field("first").parse().unwrap();
        let d = Deal::from_seed(&seed, first);
        let text = |v: &[Tile]| {
            v.iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(field("indicator"), d.indicator.to_string());
        for seat in 0..4 {
            assert_eq!(
                field(&format!("seat {seat}")),
                text(&d.racks[seat]),
                "seat {seat}"
            );
        }
        assert_eq!(field("pile"), text(&d.pile));
    }
}
