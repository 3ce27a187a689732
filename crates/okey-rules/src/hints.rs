//! Hints for a seat: its legal actions, which discards are penalty-free, and the best opening its
//! rack allows. Used by bots and by clients' assisted play; every hinted action is checked with
//! `decide`, so a hint is always accepted.

use serde::{Deserialize, Serialize};

use crate::Seat;
use crate::hand::{Command, Event, Hand, OpenKind, Taken};
use crate::meld::{Form, MeldTile};
use crate::ruleset::PlayableDiscard;
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
    /// For each action of `legal` (same position), the points submitting it now charges `seat`:
    /// a wrong opening 101, a discard of an okey or (auto mode) of a playable tile 101, giving the
    /// side discard back after a table change 101; 0 for the rest.
    pub penalty_points: Vec<i32>,
    /// Rack tiles whose discard writes no penalty, neither at once nor by the next player's call.
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

/// How the search used the lowest remaining tile of a state.
#[derive(Clone, Copy, Debug)]
enum Choice {
    /// Nothing is left to lay.
    Done,
    /// One copy stays in the rack.
    Skip,
    /// A run of `len` from rank `lo`, the lowest real tile sitting at rank `at`.
    Run {
        color: Color,
        lo: u8,
        len: u8,
        at: u8,
    },
    /// A set of the tile's number in the colours of `mask` (bit per colour).
    Set { number: u8, mask: u8 },
}

/// Multiply-shift hashing for the memo's integer keys (the std SipHash is several times slower here).
#[derive(Default, Clone, Copy)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u128(&mut self, v: u128) {
        let folded = (v as u64) ^ ((v >> 64) as u64).rotate_left(29);
        self.0 = folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (folded >> 31);
    }
}

type Memo =
    std::collections::HashMap<u128, (i32, Choice), std::hash::BuildHasherDefault<KeyHasher>>;

const NO_WAY: i32 = -1;

/// Exact search for the most valuable runs and sets a rack can lay at once: a memoised recursion
/// over the lowest remaining tile (number-major order), which either stays in the rack or is the
/// lowest real tile of a run or set. Later positions use real tiles where the rack has them (an
/// okey can always swap with such a tile, so this loses nothing) and okeys elsewhere. The state
/// also tracks whether a forced tile (a side discard) is still to be used and whether a tile is kept
/// back for the closing discard.
struct MeldSearch {
    wraps: bool,
    count: [u8; 52],
    okeys: u8,
    forced: Option<usize>,
    forced_done: bool,
    kept: bool,
    key: u128,
    memo: Memo,
}

/// Powers of three: a rack's face counts (0-2 each) as one base-3 number, the memo key.
const POW3: [u128; 52] = {
    let mut p = [1u128; 52];
    let mut i = 1;
    while i < 52 {
        p[i] = p[i - 1] * 3;
        i += 1;
    }
    p
};

fn pow3() -> &'static [u128; 52] {
    &POW3
}

impl MeldSearch {
    fn state_key(&self) -> u128 {
        ((self.key * 3 + self.okeys as u128) << 2)
            | (self.forced_done as u128) << 1
            | self.kept as u128
    }

    fn take(&mut self, j: usize) {
        self.count[j] -= 1;
        self.key -= pow3()[j];
        if Some(j) == self.forced {
            self.forced_done = true;
        }
    }

    fn put(&mut self, j: usize) {
        self.count[j] += 1;
        self.key += pow3()[j];
    }

    /// The faces of a candidate meld: each as (face index, may use a real tile). The first is the
    /// lowest real tile itself.
    fn run_faces(
        &self,
        color: Color,
        number: u8,
        at: u8,
        lo: u8,
        len: u8,
        out: &mut [(usize, bool); 5],
    ) {
        out[0] = (fidx(color, number), true);
        let mut k = 1;
        for r in lo..lo + len {
            if r == at {
                continue;
            }
            // Lower ranks (and a wrapped 1) were already decided: okeys only.
            out[k] = (
                fidx(color, if r == 14 { 1 } else { r }),
                r > number && r != 14,
            );
            k += 1;
        }
    }

    /// Lays `faces` if the okeys suffice, recurses, and restores. Returns the value reached.
    fn try_meld(&mut self, from: usize, faces: &[(usize, bool)], gain: u32) -> i32 {
        let need = faces[1..]
            .iter()
            .filter(|(j, real)| !(*real && self.count[*j] > 0))
            .count() as u8;
        if need > self.okeys {
            return NO_WAY;
        }
        let mut took = [usize::MAX; 5];
        let mut okeys = 0;
        let saved_forced = self.forced_done;
        for (k, (j, may_be_real)) in faces.iter().enumerate() {
            if k == 0 || (*may_be_real && self.count[*j] > 0) {
                self.take(*j);
                took[k] = *j;
            } else {
                okeys += 1;
            }
        }
        let mut result = NO_WAY;
        if okeys <= self.okeys {
            self.okeys -= okeys;
            let rest = self.solve(from);
            if rest != NO_WAY {
                result = rest + gain as i32;
            }
            self.okeys += okeys;
        }
        for j in took.into_iter().filter(|j| *j != usize::MAX) {
            self.put(j);
        }
        self.forced_done = saved_forced;
        result
    }

    fn solve(&mut self, from: usize) -> i32 {
        let Some(i) = (from..52).find(|&i| self.count[i] > 0) else {
            let ok = (self.kept || self.okeys > 0) && (self.forced.is_none() || self.forced_done);
            return if ok { 0 } else { NO_WAY };
        };
        let key = self.state_key();
        if let Some((v, _)) = self.memo.get(&key) {
            return *v;
        }
        let number = (i / 4) as u8 + 1;
        let color = Color::from_index(i % 4);
        let mut best = NO_WAY;
        let mut choice = Choice::Done;

        // Leave one copy in the rack.
        {
            let (saved_kept, saved_forced) = (self.kept, self.forced_done);
            self.count[i] -= 1;
            self.key -= pow3()[i];
            self.kept = true;
            let v = self.solve(i);
            self.count[i] += 1;
            self.key += pow3()[i];
            self.kept = saved_kept;
            self.forced_done = saved_forced;
            if v > best {
                best = v;
                choice = Choice::Skip;
            }
        }

        let top = if self.wraps { 14 } else { 13 };
        let mut faces = [(0usize, false); 5];
        let ats: &[u8] = if number == 1 && self.wraps {
            &[1, 14]
        } else {
            &[number]
        };
        for &at in ats {
            for len in 3..=5u8 {
                for lo in at.saturating_sub(len - 1).max(1)..=at {
                    if lo + len - 1 > top {
                        continue;
                    }
                    // An okey below the lowest real tile is only worth it where the run cannot
                    // move up: shifting up one rank uses no more okeys and is worth more.
                    if lo < at && lo + len - 1 < 13 {
                        continue;
                    }
                    self.run_faces(color, number, at, lo, len, &mut faces);
                    // lo + … + hi, where a wrapped 1 at rank 14 is worth 1, not 14.
                    let hi = lo + len - 1;
                    let gain =
                        (lo as u32 + hi as u32) * len as u32 / 2 - if hi == 14 { 13 } else { 0 };
                    let v = self.try_meld(i, &faces[..len as usize], gain);
                    if v > best {
                        best = v;
                        choice = Choice::Run { color, lo, len, at };
                    }
                }
            }
        }
        for mask in 0u8..16 {
            let n = mask.count_ones();
            if mask & (1 << color.index()) == 0 || !(3..=4).contains(&n) {
                continue;
            }
            let mut k = 1;
            faces[0] = (i, true);
            for c in Color::ALL {
                if c != color && mask & (1 << c.index()) != 0 {
                    faces[k] = (fidx(c, number), c > color);
                    k += 1;
                }
            }
            let v = self.try_meld(i, &faces[..k], number as u32 * n);
            if v > best {
                best = v;
                choice = Choice::Set { number, mask };
            }
        }
        self.memo.insert(key, (best, choice));
        best
    }

    /// Follows the memo's choices from the start state and writes the melds out.
    fn melds(&mut self, okey: Okey) -> Vec<Vec<MeldTile>> {
        let mut out = Vec::new();
        let mut from = 0;
        loop {
            let Some(i) = (from..52).find(|&i| self.count[i] > 0) else {
                return out;
            };
            from = i;
            let (_, choice) = self.memo[&self.state_key()];
            let number = (i / 4) as u8 + 1;
            let mut faces = [(0usize, false); 5];
            let (n, readings): (usize, Vec<Face>) = match choice {
                Choice::Done => return out,
                Choice::Skip => {
                    self.count[i] -= 1;
                    self.key -= pow3()[i];
                    self.kept = true;
                    continue;
                }
                Choice::Run { color, lo, len, at } => {
                    self.run_faces(color, number, at, lo, len, &mut faces);
                    let mut r: Vec<Face> = vec![Face::new(color, at)];
                    r.extend(
                        (lo..lo + len)
                            .filter(|x| *x != at)
                            .map(|x| Face::new(color, x)),
                    );
                    (len as usize, r)
                }
                Choice::Set { number, mask } => {
                    let color = Color::from_index(i % 4);
                    let mut r = vec![Face::new(color, number)];
                    faces[0] = (i, true);
                    let mut k = 1;
                    for c in Color::ALL {
                        if c != color && mask & (1 << c.index()) != 0 {
                            faces[k] = (fidx(c, number), c > color);
                            r.push(Face::new(c, number));
                            k += 1;
                        }
                    }
                    (k, r)
                }
            };
            let mut meld = Vec::with_capacity(n);
            for (k, ((j, may_be_real), face)) in faces[..n].iter().zip(&readings).enumerate() {
                if k == 0 || (*may_be_real && self.count[*j] > 0) {
                    self.take(*j);
                    meld.push(MeldTile::plain(tile_for(okey, *face)));
                } else {
                    self.okeys -= 1;
                    meld.push(MeldTile {
                        tile: okey.tile(),
                        reading: Some(Face::new(face.color, face.number())),
                    });
                }
            }
            out.push(meld);
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
    let key = (0..52).map(|i| supply.count[i] as u128 * pow3()[i]).sum();
    let forced = forced
        .and_then(|t| okey.face_of(t))
        .map(|f| fidx(f.color, f.number()));
    let mut search = MeldSearch {
        wraps,
        count: supply.count,
        okeys: supply.okeys,
        forced,
        forced_done: false,
        kept: false,
        key,
        memo: Memo::with_capacity_and_hasher(1024, Default::default()),
    };
    let best = search.solve(0);
    if best <= 0 {
        return None;
    }
    let melds = search.melds(okey);
    Some(BestOpening {
        kind: OpenKind::Melds,
        melds,
        amount: best as u32,
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
    /// The tiles `seat` could discard now without a penalty, now or by a call: every tile when it
    /// is the last (it finishes) or in-play penalties are off; else no okey, and no playable tile
    /// unless it is called for and this discard empties the pile (the hand ends before a call).
    pub fn penalty_free_discards(&self, seat: Seat) -> Vec<Tile> {
        let rack = &self.racks[seat as usize];
        let finishing = rack.len() == 1;
        let uncallable =
            self.rules.playable_discard == PlayableDiscard::Called && self.pile.is_empty();
        rack.kinds()
            .filter(|t| {
                finishing
                    || !self.rules.in_play_penalties
                    || (!self.okey.is_okey(*t) && (uncallable || !self.is_playable(*t)))
            })
            .collect()
    }

    /// The points `command` from `seat` would charge that seat if submitted now; `None` when it
    /// would be rejected. Points charged to other seats (a retrieved okey's placer, a called
    /// discarder) are not counted.
    pub fn penalty_points(&self, seat: Seat, command: &Command) -> Option<i32> {
        let events = self.decide(seat, command).ok()?;
        Some(charged_to(&events, seat))
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
        let mut legal = Vec::with_capacity(candidates.len());
        let mut penalty_points = Vec::with_capacity(candidates.len());
        for c in candidates {
            if let Ok(events) = self.decide(seat, &c) {
                penalty_points.push(charged_to(&events, seat));
                legal.push(c);
            }
        }
        Hints {
            seat,
            legal,
            penalty_points,
            penalty_free_discards: self.penalty_free_discards(seat),
            best_melds,
            best_pairs,
        }
    }
}

/// The points `events` charge `seat`.
fn charged_to(events: &[Event], seat: Seat) -> i32 {
    events
        .iter()
        .map(|e| match e {
            Event::PenaltyCharged {
                seat: s, points, ..
            } if *s == seat => *points,
            _ => 0,
        })
        .sum()
}

impl Hints {
    /// Each legal action with the points submitting it charges the seat.
    pub fn actions(&self) -> impl Iterator<Item = (&Command, i32)> {
        self.legal.iter().zip(self.penalty_points.iter().copied())
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
    fn a_hinted_opening_below_the_threshold_lists_the_wrong_opening_penalty() {
        use crate::ruleset::Preset;
        use crate::{Deal, hand::PENALTY};
        let mut found = 0;
        for seed in 0u8..=255 {
            let deal = Deal::from_seed(&[seed; 32], 0);
            let start = Hand::start(Preset::Classic.rules(), deal).unwrap();
            let hand = Hand::from_start(&start);
            let hints = hand.hints(0);
            let Some(best) = hints.best_melds.as_ref().filter(|b| b.amount < 101) else {
                continue;
            };
            let open = Command::Open {
                melds: best.melds.clone(),
            };
            let (_, points) = hints
                .actions()
                .find(|(c, _)| **c == open)
                .expect("the best opening is hinted");
            assert_eq!(points, PENALTY, "seed {seed}: {} points", best.amount);
            assert_eq!(hand.penalty_points(0, &open), Some(PENALTY));
            // Discards on the first turn cost nothing unless they are an okey.
            for (c, points) in hints.actions() {
                if let Command::Discard { tile } = c {
                    let want = if hand.okey.is_okey(*tile) { PENALTY } else { 0 };
                    assert_eq!(points, want, "seed {seed}: {tile}");
                }
            }
            found += 1;
        }
        assert!(
            found > 10,
            "only {found} deals with a best opening below 101"
        );
    }

    #[test]
    fn with_penalties_off_every_hinted_action_is_free() {
        use crate::Deal;
        use crate::ruleset::Preset;
        let rules = crate::RuleSet {
            in_play_penalties: false,
            ..Preset::Classic.rules()
        };
        let start = Hand::start(rules, Deal::from_seed(&[7; 32], 0)).unwrap();
        let hand = Hand::from_start(&start);
        let hints = hand.hints(0);
        assert!(hints.penalty_points.iter().all(|p| *p == 0));
        assert_eq!(
            hints.penalty_free_discards,
            hand.racks[0].kinds().collect::<Vec<_>>()
        );
    }

    #[test]
    fn pairs_use_okeys_for_singles() {
        let okey = Okey::from_indicator("R9".parse().unwrap()).unwrap();
        let r = rack("K1 K1 B2 B2 Y3 Y3 R4 R4 K13 R10 B7 Y8");
        let best = best_pair_opening(okey, &r, None).unwrap();
        assert_eq!(best.amount, 5);
    }

    /// Exhaustive reference: every subset of 3-5 tiles the engine reads as a run or set, packed
    /// disjointly in every way, keeping one tile back.
    fn reference(okey: Okey, wraps: bool, rack: &[Tile]) -> u32 {
        let n = rack.len();
        let mut melds: Vec<(u32, u32)> = Vec::new();
        for mask in 0u32..(1 << n) {
            let k = mask.count_ones();
            if !(3..=5).contains(&k) {
                continue;
            }
            let tiles: Vec<MeldTile> = (0..n)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| MeldTile::plain(rack[i]))
                .collect();
            if let Ok(m) = crate::meld::read_run_or_set(okey, wraps, &tiles, 0) {
                melds.push((mask, m.value()));
            }
        }
        fn pack(melds: &[(u32, u32)], used: u32, full: u32) -> u32 {
            let mut best = 0;
            for (k, (m, v)) in melds.iter().enumerate() {
                if used & m == 0 && (used | m) != full {
                    best = best.max(v + pack(&melds[k + 1..], used | m, full));
                }
            }
            best
        }
        pack(&melds, 0, (1u32 << n) - 1)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 1000, .. Default::default() })]
        #[test]
        fn the_search_matches_an_exhaustive_reference(seed in proptest::prelude::any::<u64>(), wraps in proptest::prelude::any::<bool>()) {
            use rand_core::{RngCore, SeedableRng};
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let okey = Okey::from_indicator(Tile::from_index((rng.next_u32() % 52) as usize)).unwrap();
            // Draw 10 tiles from a few numbers and colours so melds are common.
            let mut pool: Vec<Tile> = Vec::new();
            let base = 1 + (rng.next_u32() % 9) as u8;
            for c in Color::ALL {
                for n in base..base + 5 {
                    if Tile::new(c, n) != okey.tile() {
                        pool.push(Tile::new(c, n));
                        pool.push(Tile::new(c, n));
                    }
                }
            }
            pool.push(okey.tile());
            pool.push(okey.tile());
            pool.push(Tile::FALSE_JOKER);
            let mut rack = Vec::new();
            for _ in 0..10 {
                let k = (rng.next_u32() as usize) % pool.len();
                rack.push(pool.swap_remove(k));
            }
            let want = reference(okey, wraps, &rack);
            let got = best_meld_opening(okey, wraps, &Tiles::from_slice(&rack), None);
            let got_amount = got.as_ref().map(|b| b.amount).unwrap_or(0);
            proptest::prop_assert_eq!(got_amount, want, "rack {:?}", rack);
            if let Some(b) = got {
                let mut sum = 0;
                let mut left = Tiles::from_slice(&rack);
                for m in &b.melds {
                    for t in m {
                        proptest::prop_assert!(left.remove(t.tile), "meld uses a tile not in the rack");
                    }
                    sum += crate::meld::read_run_or_set(okey, wraps, m, 0).unwrap().value();
                }
                proptest::prop_assert!(!left.is_empty());
                proptest::prop_assert_eq!(sum, b.amount);
            }
        }
    }
}
