//! Hints for a seat: its legal actions, which discards are penalty-free, and the best opening its
//! rack allows. Used by bots and by clients' assisted play; every hinted action is checked with
//! `decide`, so a hint is always accepted.

use serde::{Deserialize, Serialize};

use crate::Seat;
use crate::hand::{Command, Hand, OpenKind, Taken};
use crate::meld::{Form, MeldTile};
use crate::tile::{Color, Face, Okey, Tile, Tiles};

/// The best opening a rack allows, of one kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BestOpening {
    pub kind: OpenKind,
    pub melds: Vec<Vec<MeldTile>>,
    /// Meld value, or number of pairs.
    pub amount: u32,
}

/// Everything a client needs to help a player.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hints {
    pub seat: Seat,
    /// Actions `decide` accepts now (opening, laying and adding are sampled, not exhaustive).
    pub legal: Vec<Command>,
    /// Rack tiles whose discard writes no penalty.
    pub penalty_free_discards: Vec<Tile>,
    pub best_melds: Option<BestOpening>,
    pub best_pairs: Option<BestOpening>,
}

/// Face index in number-major order: (number - 1) * 4 + colour.
fn fidx(color: Color, number: u8) -> usize {
    (number as usize - 1) * 4 + color.index()
}

/// A rack as supply per face (a false joker supplies the okey's face) plus its okeys.
struct Supply {
    count: [u8; 52],
    okeys: u8,
}

impl Supply {
    fn of(okey: Okey, rack: &Tiles) -> Supply {
        let mut count = [0u8; 52];
        let mut okeys = 0;
        for t in rack.kinds() {
            let c = rack.count(t);
            match okey.face_of(t) {
                None => okeys += c,
                Some(f) => count[fidx(f.color, f.number())] += c,
            }
        }
        Supply { count, okeys }
    }
}

/// The physical tile that shows `face` in this hand (a false joker for the okey's face).
fn tile_for(okey: Okey, face: Face) -> Tile {
    let f = Face::new(face.color, face.number());
    if f == okey.face {
        Tile::FALSE_JOKER
    } else {
        f.tile()
    }
}

struct MeldSearch<'a> {
    okey: Okey,
    wraps: bool,
    supply: Supply,
    /// Remaining numbers of real tiles, for the bound.
    remaining: u32,
    stack: Vec<Vec<MeldTile>>,
    best: u32,
    best_melds: Vec<Vec<MeldTile>>,
    forced: Option<(usize, u8)>,
    rack_len: usize,
    used_tiles: usize,
    nodes: u32,
    _p: std::marker::PhantomData<&'a ()>,
}

const NODE_LIMIT: u32 = 200_000;

impl MeldSearch<'_> {
    fn leaf(&mut self, value: u32) {
        if let Some((i, orig)) = self.forced
            && self.supply.count[i] >= orig
        {
            return;
        }
        if self.used_tiles >= self.rack_len {
            return;
        }
        if value > self.best {
            self.best = value;
            self.best_melds = self.stack.clone();
        }
    }

    fn dfs(&mut self, from: usize, value: u32) {
        self.nodes += 1;
        if self.nodes > NODE_LIMIT {
            return;
        }
        let Some(i) = (from..52).find(|&i| self.supply.count[i] > 0) else {
            self.leaf(value);
            return;
        };
        if value + self.remaining + self.supply.okeys as u32 * 13 <= self.best {
            return;
        }
        let number = (i / 4) as u8 + 1;
        let color = Color::from_index(i % 4);
        // Melds whose lowest real tile (in number-major order) is this one.
        self.try_runs(i, color, number, value);
        self.try_sets(i, color, number, value);
        // Or leave one copy out of every meld.
        self.supply.count[i] -= 1;
        self.remaining -= number as u32;
        self.dfs(i, value);
        self.supply.count[i] += 1;
        self.remaining += number as u32;
    }

    /// Places `faces` (the first is the lowest real tile, always real), using real tiles where the
    /// later faces are still available and okeys elsewhere, then recurses.
    fn place(&mut self, i: usize, faces: &[(Face, bool)], value: u32) {
        let mut tiles = Vec::with_capacity(faces.len());
        let mut took: Vec<usize> = Vec::with_capacity(faces.len());
        let mut okeys = 0u8;
        for (k, (face, may_be_real)) in faces.iter().enumerate() {
            let j = fidx(face.color, face.number());
            if k == 0 || (*may_be_real && self.supply.count[j] > 0) {
                self.supply.count[j] -= 1;
                self.remaining -= face.number() as u32;
                took.push(j);
                tiles.push(MeldTile::plain(tile_for(self.okey, *face)));
            } else {
                okeys += 1;
                tiles.push(MeldTile {
                    tile: self.okey.tile(),
                    reading: Some(Face::new(face.color, face.number())),
                });
            }
        }
        if okeys <= self.supply.okeys {
            let gain: u32 = faces.iter().map(|(f, _)| f.value()).sum();
            self.supply.okeys -= okeys;
            self.used_tiles += faces.len();
            self.stack.push(tiles);
            self.dfs(i, value + gain);
            self.stack.pop();
            self.used_tiles -= faces.len();
            self.supply.okeys += okeys;
        }
        for j in took {
            self.supply.count[j] += 1;
            self.remaining += (j / 4) as u32 + 1;
        }
    }

    fn try_runs(&mut self, i: usize, color: Color, number: u8, value: u32) {
        let top = if self.wraps { 14 } else { 13 };
        let mut ranks = vec![number];
        if number == 1 && self.wraps {
            ranks.push(14);
        }
        for at in ranks {
            for len in 3..=5u8 {
                for lo in at.saturating_sub(len - 1).max(1)..=at {
                    let hi = lo + len - 1;
                    if hi > top {
                        continue;
                    }
                    let mut faces = Vec::with_capacity(len as usize);
                    faces.push((Face::new(color, at), true));
                    for r in lo..=hi {
                        if r == at {
                            continue;
                        }
                        // Lower ranks (and a wrapped 1) were already decided: okeys only.
                        let real = r > number && r != 14;
                        faces.push((Face::new(color, r), real));
                    }
                    self.place(i, &faces, value);
                }
            }
        }
    }

    fn try_sets(&mut self, i: usize, color: Color, number: u8, value: u32) {
        let others: Vec<Color> = Color::ALL.into_iter().filter(|c| *c != color).collect();
        for mask in 1u8..8 {
            let n = mask.count_ones();
            if !(2..=3).contains(&n) {
                continue;
            }
            let mut faces = vec![(Face::new(color, number), true)];
            for (k, c) in others.iter().enumerate() {
                if mask & (1 << k) != 0 {
                    faces.push((Face::new(*c, number), *c > color));
                }
            }
            self.place(i, &faces, value);
        }
    }
}

/// The runs and sets worth most that `rack` can lay at once, keeping at least one tile back.
/// `forced` must be part of it (a side discard taken this turn).
pub fn best_meld_opening(
    okey: Okey,
    wraps: bool,
    rack: &Tiles,
    forced: Option<Tile>,
) -> Option<BestOpening> {
    let supply = Supply::of(okey, rack);
    let remaining = (0..52)
        .map(|i| supply.count[i] as u32 * ((i / 4) as u32 + 1))
        .sum();
    let forced = forced.and_then(|t| okey.face_of(t)).map(|f| {
        let i = fidx(f.color, f.number());
        (i, supply.count[i])
    });
    let mut search = MeldSearch {
        okey,
        wraps,
        supply,
        remaining,
        stack: Vec::new(),
        best: 0,
        best_melds: Vec::new(),
        forced,
        rack_len: rack.len(),
        used_tiles: 0,
        nodes: 0,
        _p: std::marker::PhantomData,
    };
    search.dfs(0, 0);
    (search.best > 0).then_some(BestOpening {
        kind: OpenKind::Melds,
        melds: search.best_melds,
        amount: search.best,
    })
}

/// The most pairs `rack` can lay at once, keeping at least one tile back.
pub fn best_pair_opening(okey: Okey, rack: &Tiles, forced: Option<Tile>) -> Option<BestOpening> {
    let mut melds: Vec<Vec<MeldTile>> = Vec::new();
    let mut singles: Vec<Tile> = Vec::new();
    let mut okeys = 0;
    for t in rack.kinds() {
        let c = rack.count(t);
        if okey.is_okey(t) {
            okeys += c;
            continue;
        }
        for _ in 0..c / 2 {
            melds.push(vec![MeldTile::plain(t), MeldTile::plain(t)]);
        }
        if c % 2 == 1 {
            singles.push(t);
        }
    }
    // Pair the forced tile with an okey first if it has no twin; then the highest singles.
    singles.sort_by_key(|t| (Some(*t) != forced, std::cmp::Reverse(okey.number_of(*t))));
    for t in singles.into_iter().take(okeys as usize) {
        let face = okey.face_of(t).expect("not an okey");
        melds.push(vec![
            MeldTile::plain(t),
            MeldTile {
                tile: okey.tile(),
                reading: Some(face),
            },
        ]);
    }
    if let Some(f) = forced
        && !melds.iter().any(|m| m.iter().any(|mt| mt.tile == f))
    {
        return None;
    }
    let used: usize = melds.len() * 2;
    if used >= rack.len() {
        // Keep a tile back: drop a pair that does not hold the forced tile.
        let pos = melds
            .iter()
            .rposition(|m| !m.iter().any(|mt| Some(mt.tile) == forced))?;
        melds.remove(pos);
    }
    (!melds.is_empty()).then_some(BestOpening {
        kind: OpenKind::Pairs,
        amount: melds.len() as u32,
        melds,
    })
}

impl Hand {
    /// The tiles `seat` could discard now without a penalty.
    pub fn penalty_free_discards(&self, seat: Seat) -> Vec<Tile> {
        let rack = &self.racks[seat as usize];
        let finishing = rack.len() == 1;
        rack.kinds()
            .filter(|t| finishing || (!self.okey.is_okey(*t) && !self.is_playable(*t)))
            .collect()
    }

    /// Legal actions, penalty-free discards and best openings for `seat`.
    pub fn hints(&self, seat: Seat) -> Hints {
        let rack = &self.racks[seat as usize];
        let wraps = self.rules.run_wraps_12_13_1;
        let forced = match self.turn.taken {
            Taken::SideDiscard { tile, used: false } if self.opened[seat as usize].is_none() => {
                Some(tile)
            }
            _ => None,
        };
        let best_melds = best_meld_opening(self.okey, wraps, rack, forced);
        let best_pairs = best_pair_opening(self.okey, rack, forced);
        let mut candidates: Vec<Command> = vec![
            Command::Draw,
            Command::TakeDiscard,
            Command::ReturnDiscard,
            Command::CallPlayable,
        ];
        for t in rack.kinds() {
            candidates.push(Command::Discard { tile: t });
        }
        match self.opened[seat as usize] {
            None => {
                for b in [&best_melds, &best_pairs].into_iter().flatten() {
                    candidates.push(Command::Open {
                        melds: b.melds.clone(),
                    });
                }
            }
            Some(o) => {
                let lay = match o.kind {
                    OpenKind::Melds => best_melds.as_ref(),
                    OpenKind::Pairs => best_pairs.as_ref(),
                };
                if let Some(b) = lay {
                    candidates.push(Command::Lay {
                        melds: b.melds.clone(),
                    });
                    for m in &b.melds {
                        candidates.push(Command::Lay {
                            melds: vec![m.clone()],
                        });
                    }
                }
                for (at, m) in self.table.iter().enumerate() {
                    for t in rack.kinds() {
                        if crate::meld::can_take(self.okey, wraps, m, t) {
                            candidates.push(Command::Add {
                                meld: at,
                                tiles: vec![MeldTile::plain(t)],
                            });
                        }
                    }
                    candidates.extend(
                        retrieve_candidates(self.okey, m, rack)
                            .map(|tiles| Command::Retrieve { meld: at, tiles }),
                    );
                }
            }
        }
        let legal = candidates
            .into_iter()
            .filter(|c| self.decide(seat, c).is_ok())
            .collect();
        Hints {
            seat,
            legal,
            penalty_free_discards: self.penalty_free_discards(seat),
            best_melds,
            best_pairs,
        }
    }
}

/// The real tiles that would free an okey from `meld`, where `rack` holds them.
fn retrieve_candidates(
    okey: Okey,
    meld: &crate::meld::TableMeld,
    rack: &Tiles,
) -> impl Iterator<Item = Vec<Tile>> {
    let mut out = Vec::new();
    let okeys: Vec<Face> = meld
        .tiles
        .iter()
        .filter(|p| okey.is_okey(p.tile))
        .map(|p| p.reads)
        .collect();
    if !okeys.is_empty() {
        match meld.form {
            Form::Set { number } if meld.tiles.len() == 3 => {
                let used: Vec<Color> = meld
                    .tiles
                    .iter()
                    .filter(|p| !okey.is_okey(p.tile))
                    .map(|p| p.reads.color)
                    .collect();
                let need: Vec<Tile> = Color::ALL
                    .into_iter()
                    .filter(|c| !used.contains(c))
                    .map(|c| tile_for(okey, Face::new(c, number)))
                    .collect();
                out.push(need);
            }
            _ => {
                for f in okeys {
                    out.push(vec![tile_for(okey, f)]);
                }
            }
        }
    }
    out.into_iter()
        .filter(move |need| rack.contains_all(need) && need.iter().all(|t| !okey.is_okey(*t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rack(s: &str) -> Tiles {
        Tiles::from_slice(
            &s.split_whitespace()
                .map(|t| t.parse().unwrap())
                .collect::<Vec<Tile>>(),
        )
    }

    #[test]
    fn finds_the_example_opening_of_103() {
        let okey = Okey::from_indicator("R9".parse().unwrap()).unwrap();
        let r =
            rack("Y10 Y11 Y12 Y13 K13 B13 R13 R5 R6 R7 B2 B6 Y12 B13 K13 B5 R6 R2 R4 K9 K10 B4");
        let best = best_meld_opening(okey, false, &r, None).unwrap();
        assert!(best.amount >= 103, "{best:?}");
    }

    #[test]
    fn pairs_use_okeys_for_singles() {
        let okey = Okey::from_indicator("R9".parse().unwrap()).unwrap();
        let r = rack("K1 K1 B2 B2 Y3 Y3 R4 R4 K13 R10 B7 Y8");
        let best = best_pair_opening(okey, &r, None).unwrap();
        assert_eq!(best.amount, 5);
    }
}
