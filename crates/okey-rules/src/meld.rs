//! Melds: reading a group of tiles as a run, a set or a pair (with okey readings), table melds,
//! adding to them, retrieving okeys from them, and whether a tile is playable.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::Seat;
use crate::tile::{Color, Face, Okey, Tile, TileParseError};

/// Tiles in a newly laid meld, at most (adding grows a meld beyond this).
pub const NEW_MELD_MAX: usize = 5;

/// A tile as a command names it: the physical tile, and for an okey optionally what it stands for
/// (text `K7=Y13`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct MeldTile {
    pub tile: Tile,
    pub reading: Option<Face>,
}

impl MeldTile {
    pub fn plain(tile: Tile) -> MeldTile {
        MeldTile {
            tile,
            reading: None,
        }
    }
}

impl From<Tile> for MeldTile {
    fn from(tile: Tile) -> MeldTile {
        MeldTile::plain(tile)
    }
}

impl fmt::Display for MeldTile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reading {
            None => write!(f, "{}", self.tile),
            Some(r) => write!(f, "{}={}", self.tile, r),
        }
    }
}

impl fmt::Debug for MeldTile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for MeldTile {
    type Err = TileParseError;

    fn from_str(s: &str) -> Result<MeldTile, TileParseError> {
        match s.split_once('=') {
            None => Ok(MeldTile::plain(s.parse()?)),
            Some((t, r)) => {
                let tile: Tile = t.parse()?;
                let read: Tile = r.parse()?;
                let face = read.printed().ok_or_else(|| TileParseError {
                    text: s.to_string(),
                })?;
                Ok(MeldTile {
                    tile,
                    reading: Some(face),
                })
            }
        }
    }
}

impl From<MeldTile> for String {
    fn from(m: MeldTile) -> String {
        m.to_string()
    }
}

impl TryFrom<String> for MeldTile {
    type Error = TileParseError;
    fn try_from(s: String) -> Result<MeldTile, TileParseError> {
        s.parse()
    }
}

/// What kind of meld a table meld is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "form")]
pub enum Form {
    /// Consecutive ranks of one colour.
    Run { color: Color },
    /// One number in three or four different colours.
    Set { number: u8 },
    /// Two identical tiles, or a tile and an okey.
    Pair { face: Face },
}

/// A tile on the table: the physical tile, what it stands for, and who put it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placed {
    pub tile: Tile,
    pub reads: Face,
    pub by: Seat,
}

/// A meld on the table. Runs keep their tiles in rank order; sets keep real tiles first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableMeld {
    pub form: Form,
    pub tiles: Vec<Placed>,
    /// The seat that laid it.
    pub owner: Seat,
}

impl TableMeld {
    pub fn value(&self) -> u32 {
        self.tiles.iter().map(|p| p.reads.value()).sum()
    }

    pub fn len(&self) -> usize {
        self.tiles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tiles.is_empty()
    }
}

/// Why tiles do not make the meld asked for, or cannot be added or exchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MeldError {
    #[error("a meld needs at least one real tile, not only okeys")]
    NoRealTile,
    #[error("{0} is not an okey this hand: only an okey may be given a reading")]
    ReadingOnRealTile(Tile),
    #[error(
        "[{0}] is neither a run (3+ consecutive numbers of one colour) nor a set (one number in 3-4 different colours)"
    )]
    NotRunOrSet(String),
    #[error("[{0}] is not a pair: two identical tiles, or one tile with an okey")]
    NotPair(String),
    #[error("a newly laid meld has at most 5 tiles; [{0}] has {1}")]
    TooLong(String, usize),
    #[error("{0} cannot be added to this meld: {1}")]
    CannotAdd(String, &'static str),
    #[error("{0}")]
    CannotRetrieve(String),
}

fn list(tiles: &[MeldTile]) -> String {
    tiles
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The highest rank a run may reach: 13, or 14 (a 1 after 13) where runs wrap 12-13-1.
pub fn max_rank(wraps: bool) -> u8 {
    if wraps { 14 } else { 13 }
}

/// Splits tiles into fixed faces (real tiles and okeys with a reading) and the count of free okeys.
/// Tiles with a fixed face (by index in the command) and the indices of free okeys.
type Split = (Vec<(usize, Face)>, Vec<usize>);

fn split(okey: Okey, tiles: &[MeldTile]) -> Result<Split, MeldError> {
    let mut fixed = Vec::with_capacity(tiles.len());
    let mut free = Vec::new();
    for (i, mt) in tiles.iter().enumerate() {
        if okey.is_okey(mt.tile) {
            match mt.reading {
                Some(r) => fixed.push((i, r)),
                None => free.push(i),
            }
        } else {
            if mt.reading.is_some() {
                return Err(MeldError::ReadingOnRealTile(mt.tile));
            }
            fixed.push((
                i,
                okey.face_of(mt.tile).expect("non-okey tiles have a face"),
            ));
        }
    }
    Ok((fixed, free))
}

fn real_count(okey: Okey, tiles: &[MeldTile]) -> usize {
    tiles.iter().filter(|t| !okey.is_okey(t.tile)).count()
}

/// Assigns each fixed face a distinct rank in `lo..=hi` (a 1 may sit at 14 where runs wrap).
/// Returns the ranks in the order of `fixed`, or None.
fn fit_ranks(
    fixed: &[(usize, Face)],
    lo: u8,
    hi: u8,
    wraps: bool,
    taken: &[u8],
) -> Option<Vec<u8>> {
    if fixed.len() > 14 {
        return None;
    }
    let mut used: u32 = taken.iter().fold(0, |m, r| m | 1 << r);
    let mut ranks = [0u8; 14];
    // Non-ones first, they have one choice; ones then take 1, or 14 where runs wrap.
    for pass_ones in [false, true] {
        for (k, (_, face)) in fixed.iter().enumerate() {
            let n = face.number();
            if (n == 1) != pass_ones {
                continue;
            }
            let fits = |r: u8| r >= lo && r <= hi && used & (1 << r) == 0;
            let r = if fits(n) {
                n
            } else if n == 1 && wraps && fits(14) {
                14
            } else {
                return None;
            };
            used |= 1 << r;
            ranks[k] = r;
        }
    }
    Some(ranks[..fixed.len()].to_vec())
}

fn rank_value(r: u8) -> u32 {
    if r == 14 { 1 } else { r as u32 }
}

/// Reads `tiles` as a new run or set (whichever is worth more), placed by `by`.
pub fn read_run_or_set(
    okey: Okey,
    wraps: bool,
    tiles: &[MeldTile],
    by: Seat,
) -> Result<TableMeld, MeldError> {
    if tiles.len() > NEW_MELD_MAX {
        return Err(MeldError::TooLong(list(tiles), tiles.len()));
    }
    let (fixed, free) = split(okey, tiles)?;
    if real_count(okey, tiles) == 0 {
        return Err(MeldError::NoRealTile);
    }
    let run = read_run(wraps, tiles, &fixed, &free, by);
    let set = read_set(tiles, &fixed, &free, by);
    match (run, set) {
        (Some(r), Some(s)) => Ok(if s.value() > r.value() { s } else { r }),
        (Some(r), None) => Ok(r),
        (None, Some(s)) => Ok(s),
        (None, None) => Err(MeldError::NotRunOrSet(list(tiles))),
    }
}

fn read_run(
    wraps: bool,
    tiles: &[MeldTile],
    fixed: &[(usize, Face)],
    free: &[usize],
    by: Seat,
) -> Option<TableMeld> {
    let n = tiles.len() as u8;
    if n < 3 {
        return None;
    }
    let color = fixed.first()?.1.color;
    if fixed.iter().any(|(_, f)| f.color != color) {
        return None;
    }
    let top = max_rank(wraps);
    let mut best: Option<(u32, u8, Vec<u8>)> = None;
    for lo in 1..=top.saturating_sub(n - 1) {
        let hi = lo + n - 1;
        if let Some(ranks) = fit_ranks(fixed, lo, hi, wraps, &[]) {
            let value: u32 = (lo..=hi).map(rank_value).sum();
            if best.as_ref().is_none_or(|(v, _, _)| value > *v) {
                best = Some((value, lo, ranks));
            }
        }
    }
    let (_, lo, ranks) = best?;
    let hi = lo + n - 1;
    let mut slots: Vec<Option<Placed>> = vec![None; n as usize];
    for ((i, _), r) in fixed.iter().zip(&ranks) {
        slots[(r - lo) as usize] = Some(Placed {
            tile: tiles[*i].tile,
            reads: Face::new(color, *r),
            by,
        });
    }
    let mut free_iter = free.iter();
    for (k, slot) in slots.iter_mut().enumerate() {
        if slot.is_none() {
            let i = *free_iter.next()?;
            *slot = Some(Placed {
                tile: tiles[i].tile,
                reads: Face::new(color, lo + k as u8),
                by,
            });
        }
    }
    debug_assert!(hi <= top);
    Some(TableMeld {
        form: Form::Run { color },
        tiles: slots.into_iter().map(|s| s.expect("filled")).collect(),
        owner: by,
    })
}

fn read_set(
    tiles: &[MeldTile],
    fixed: &[(usize, Face)],
    free: &[usize],
    by: Seat,
) -> Option<TableMeld> {
    let n = tiles.len();
    if !(3..=4).contains(&n) {
        return None;
    }
    let number = fixed.first()?.1.number();
    let mut colors = [false; 4];
    for (_, f) in fixed {
        if f.number() != number || f.rank == 14 || colors[f.color.index()] {
            return None;
        }
        colors[f.color.index()] = true;
    }
    let mut placed: Vec<Placed> = fixed
        .iter()
        .map(|(i, f)| Placed {
            tile: tiles[*i].tile,
            reads: Face::new(f.color, number),
            by,
        })
        .collect();
    for &i in free {
        placed.push(Placed {
            tile: tiles[i].tile,
            reads: Face::new(Color::Red, number),
            by,
        });
    }
    let mut meld = TableMeld {
        form: Form::Set { number },
        tiles: placed,
        owner: by,
    };
    assign_set_okeys(&mut meld, free.len());
    Some(meld)
}

/// Gives the last `okeys` tiles of a set (its okeys without a fixed colour) the missing colours in
/// colour order, so the set's readings are always distinct.
fn assign_set_okeys(meld: &mut TableMeld, okeys: usize) {
    let n = meld.tiles.len();
    let number = match meld.form {
        Form::Set { number } => number,
        _ => return,
    };
    let mut used = [false; 4];
    for p in &meld.tiles[..n - okeys] {
        used[p.reads.color.index()] = true;
    }
    let mut missing = Color::ALL.into_iter().filter(|c| !used[c.index()]);
    for p in &mut meld.tiles[n - okeys..] {
        p.reads = Face::new(
            missing
                .next()
                .expect("a set never has more tiles than colours"),
            number,
        );
    }
}

/// Reads two tiles as a pair placed by `by`.
pub fn read_pair(okey: Okey, tiles: &[MeldTile], by: Seat) -> Result<TableMeld, MeldError> {
    let err = || MeldError::NotPair(list(tiles));
    if tiles.len() != 2 {
        return Err(err());
    }
    let (fixed, free) = split(okey, tiles)?;
    if real_count(okey, tiles) == 0 {
        return Err(MeldError::NoRealTile);
    }
    let face = fixed[0].1;
    if fixed
        .iter()
        .any(|(_, f)| f.number() != face.number() || f.color != face.color)
    {
        return Err(err());
    }
    let face = Face::new(face.color, face.number());
    let mut placed: Vec<Placed> = Vec::with_capacity(2);
    for (i, _) in &fixed {
        placed.push(Placed {
            tile: tiles[*i].tile,
            reads: face,
            by,
        });
    }
    for &i in &free {
        placed.push(Placed {
            tile: tiles[i].tile,
            reads: face,
            by,
        });
    }
    Ok(TableMeld {
        form: Form::Pair { face },
        tiles: placed,
        owner: by,
    })
}

/// The meld after adding `tiles` to it (by `by`), or why it cannot take them.
pub fn add_to(
    okey: Okey,
    wraps: bool,
    meld: &TableMeld,
    tiles: &[MeldTile],
    by: Seat,
) -> Result<TableMeld, MeldError> {
    if tiles.is_empty() {
        return Err(MeldError::CannotAdd(
            String::new(),
            "name at least one tile to add",
        ));
    }
    let (fixed, free) = split(okey, tiles)?;
    match meld.form {
        Form::Pair { .. } => Err(MeldError::CannotAdd(
            list(tiles),
            "a pair takes no more tiles",
        )),
        Form::Run { color } => {
            if fixed.iter().any(|(_, f)| f.color != color) {
                return Err(MeldError::CannotAdd(
                    list(tiles),
                    "a run takes only its own colour",
                ));
            }
            let lo = meld
                .tiles
                .first()
                .expect("melds are never empty")
                .reads
                .rank;
            let hi = meld.tiles.last().expect("melds are never empty").reads.rank;
            let k = tiles.len() as u8;
            let top = max_rank(wraps);
            let mut best: Option<(u32, u8, Vec<u8>)> = None;
            for b in 0..=k.min(2) {
                let t = k - b;
                if t > 2 || b >= lo || hi + t > top {
                    continue;
                }
                let new_lo = lo - b;
                let new_hi = hi + t;
                let occupied: Vec<u8> = (lo..=hi).collect();
                if let Some(ranks) = fit_ranks(&fixed, new_lo, new_hi, wraps, &occupied) {
                    let value: u32 = (new_lo..lo).chain(hi + 1..=new_hi).map(rank_value).sum();
                    if best.as_ref().is_none_or(|(v, _, _)| value > *v) {
                        best = Some((value, b, ranks));
                    }
                }
            }
            let Some((_, b, ranks)) = best else {
                let why = if k > 4 {
                    "at most 2 tiles go onto the same end of a meld in one action"
                } else {
                    "the tiles must continue the run at its ends (at most 2 per end in one action)"
                };
                return Err(MeldError::CannotAdd(list(tiles), why));
            };
            let new_lo = lo - b;
            let new_hi = hi + (k - b);
            let mut slots: Vec<Option<Placed>> = vec![None; (new_hi - new_lo + 1) as usize];
            for p in &meld.tiles {
                slots[(p.reads.rank - new_lo) as usize] = Some(*p);
            }
            for ((i, _), r) in fixed.iter().zip(&ranks) {
                slots[(r - new_lo) as usize] = Some(Placed {
                    tile: tiles[*i].tile,
                    reads: Face::new(color, *r),
                    by,
                });
            }
            let mut free_iter = free.iter();
            for (pos, slot) in slots.iter_mut().enumerate() {
                if slot.is_none() {
                    let i = *free_iter.next().expect("counts match");
                    *slot = Some(Placed {
                        tile: tiles[i].tile,
                        reads: Face::new(color, new_lo + pos as u8),
                        by,
                    });
                }
            }
            Ok(TableMeld {
                form: meld.form,
                tiles: slots.into_iter().map(|s| s.expect("filled")).collect(),
                owner: meld.owner,
            })
        }
        Form::Set { number } => {
            if meld.tiles.len() + tiles.len() > 4 {
                return Err(MeldError::CannotAdd(
                    list(tiles),
                    "a set has at most one tile of each of the 4 colours",
                ));
            }
            let mut used = [false; 4];
            let mut reals: Vec<Placed> = Vec::new();
            let mut okeys: Vec<Placed> = Vec::new();
            for p in &meld.tiles {
                if okey.is_okey(p.tile) {
                    okeys.push(*p);
                } else {
                    used[p.reads.color.index()] = true;
                    reals.push(*p);
                }
            }
            for (i, f) in &fixed {
                if f.number() != number || f.rank == 14 {
                    return Err(MeldError::CannotAdd(
                        list(tiles),
                        "a set takes only its own number",
                    ));
                }
                if used[f.color.index()] {
                    return Err(MeldError::CannotAdd(
                        list(tiles),
                        "that colour is already in the set",
                    ));
                }
                used[f.color.index()] = true;
                reals.push(Placed {
                    tile: tiles[*i].tile,
                    reads: Face::new(f.color, number),
                    by,
                });
            }
            for &i in &free {
                okeys.push(Placed {
                    tile: tiles[i].tile,
                    reads: Face::new(Color::Red, number),
                    by,
                });
            }
            let n_okeys = okeys.len();
            reals.extend(okeys);
            let mut out = TableMeld {
                form: meld.form,
                tiles: reals,
                owner: meld.owner,
            };
            assign_set_okeys(&mut out, n_okeys);
            Ok(out)
        }
    }
}

/// Whether `tile` alone could be added to `meld`.
pub fn can_take(okey: Okey, wraps: bool, meld: &TableMeld, tile: Tile) -> bool {
    let top = max_rank(wraps);
    match meld.form {
        Form::Pair { .. } => false,
        Form::Set { number } => {
            if meld.tiles.len() >= 4 {
                return false;
            }
            match okey.face_of(tile) {
                None => true,
                Some(f) => {
                    f.number() == number
                        && !meld
                            .tiles
                            .iter()
                            .any(|p| !okey.is_okey(p.tile) && p.reads.color == f.color)
                }
            }
        }
        Form::Run { color } => {
            let lo = meld.tiles[0].reads.rank;
            let hi = meld.tiles[meld.tiles.len() - 1].reads.rank;
            match okey.face_of(tile) {
                None => lo > 1 || hi < top,
                Some(f) => {
                    if f.color != color {
                        return false;
                    }
                    let n = f.number();
                    (lo > 1 && n == lo - 1)
                        || (hi < top && (n == hi + 1 || (n == 1 && hi + 1 == 14)))
                }
            }
        }
    }
}

/// The result of retrieving okeys: the meld with the supplied tiles in their places, and the
/// okeys taken out with the seat that placed each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retrieval {
    pub meld: TableMeld,
    pub okeys: Vec<Placed>,
}

/// Exchanges real tiles for the okeys they stand for in `meld`.
pub fn retrieve_from(
    okey: Okey,
    meld: &TableMeld,
    supplied: &[Tile],
    by: Seat,
) -> Result<Retrieval, MeldError> {
    let fail = |s: &str| Err(MeldError::CannotRetrieve(s.to_string()));
    if supplied.is_empty() {
        return fail("name the real tile(s) the okey stands for");
    }
    if supplied.iter().any(|t| okey.is_okey(*t)) {
        return fail("an okey never replaces an okey: supply the real tile it stands for");
    }
    let faces: Vec<Face> = supplied
        .iter()
        .map(|t| okey.face_of(*t).expect("not an okey"))
        .collect();
    let okey_slots: Vec<usize> = (0..meld.tiles.len())
        .filter(|&i| okey.is_okey(meld.tiles[i].tile))
        .collect();
    if okey_slots.is_empty() {
        return fail("this meld holds no okey");
    }
    let mut out = meld.clone();
    let mut taken: Vec<Placed> = Vec::new();
    match meld.form {
        Form::Run { .. } | Form::Pair { .. } => {
            let mut free_slots = okey_slots.clone();
            for (t, f) in supplied.iter().zip(&faces) {
                let pos = free_slots.iter().position(|&i| {
                    meld.tiles[i].reads.color == f.color
                        && meld.tiles[i].reads.number() == f.number()
                });
                let Some(pos) = pos else {
                    return fail(&format!(
                        "{t} is not the tile an okey in this meld stands for"
                    ));
                };
                let i = free_slots.remove(pos);
                taken.push(meld.tiles[i]);
                out.tiles[i] = Placed {
                    tile: *t,
                    reads: meld.tiles[i].reads,
                    by,
                };
            }
        }
        Form::Set { number } => {
            let mut used = [false; 4];
            for p in &meld.tiles {
                if !okey.is_okey(p.tile) {
                    used[p.reads.color.index()] = true;
                }
            }
            for (t, f) in supplied.iter().zip(&faces) {
                if f.number() != number || f.rank == 14 {
                    return fail(&format!("{t} is not this set's number"));
                }
                if used[f.color.index()] {
                    return fail(&format!(
                        "{t}: that colour is already in the set, or was supplied twice"
                    ));
                }
                used[f.color.index()] = true;
            }
            if meld.tiles.len() == 3 {
                let missing = used.iter().filter(|u| !**u).count();
                if missing != 0 {
                    return fail(
                        "to retrieve an okey from a 3-tile set, supply every missing colour at once (the set becomes 4 real tiles)",
                    );
                }
                let mut reals: Vec<Placed> = meld
                    .tiles
                    .iter()
                    .filter(|p| !okey.is_okey(p.tile))
                    .copied()
                    .collect();
                for (t, f) in supplied.iter().zip(&faces) {
                    reals.push(Placed {
                        tile: *t,
                        reads: Face::new(f.color, number),
                        by,
                    });
                }
                taken = okey_slots.iter().map(|&i| meld.tiles[i]).collect();
                out.tiles = reals;
            } else {
                if supplied.len() > okey_slots.len() {
                    return fail("more tiles supplied than this set has okeys");
                }
                let mut free_slots = okey_slots.clone();
                for (t, f) in supplied.iter().zip(&faces) {
                    let pos = free_slots
                        .iter()
                        .position(|&i| meld.tiles[i].reads.color == f.color)
                        .unwrap_or(0);
                    let i = free_slots.remove(pos);
                    taken.push(meld.tiles[i]);
                    out.tiles[i] = Placed {
                        tile: *t,
                        reads: Face::new(f.color, number),
                        by,
                    };
                }
                // Real tiles first, okeys after, with fresh readings.
                let n_okeys = free_slots.len();
                let mut reals: Vec<Placed> = out
                    .tiles
                    .iter()
                    .filter(|p| !okey.is_okey(p.tile))
                    .copied()
                    .collect();
                reals.extend(out.tiles.iter().filter(|p| okey.is_okey(p.tile)).copied());
                out.tiles = reals;
                assign_set_okeys(&mut out, n_okeys);
            }
        }
    }
    Ok(Retrieval {
        meld: out,
        okeys: taken,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn okey(ind: &str) -> Okey {
        Okey::from_indicator(ind.parse().unwrap()).unwrap()
    }

    fn mt(s: &str) -> Vec<MeldTile> {
        s.split_whitespace().map(|t| t.parse().unwrap()).collect()
    }

    #[test]
    fn an_unforced_okey_takes_the_reading_worth_most() {
        let ok = okey("R9"); // okey R10
        let m = read_run_or_set(ok, false, &mt("K11 K12 R10"), 0).unwrap();
        assert_eq!(m.value(), 36);
        assert_eq!(m.tiles[2].reads, Face::new(Color::Black, 13));
        let m = read_run_or_set(ok, false, &mt("K13 R10 R10"), 0).unwrap();
        assert_eq!(
            m.value(),
            39,
            "a tile with two okeys reads as whichever is worth more"
        );
        let m = read_run_or_set(ok, false, &mt("K1 R10 R10"), 0).unwrap();
        assert_eq!(m.value(), 6);
    }

    #[test]
    fn explicit_readings_fix_the_okey() {
        let ok = okey("R9");
        let m = read_run_or_set(ok, false, &mt("K11 K12 R10=K10"), 0).unwrap();
        assert_eq!(m.value(), 33);
        assert!(read_run_or_set(ok, false, &mt("K11 K12 R10=K9"), 0).is_err());
        assert!(read_run_or_set(ok, false, &mt("K11 K12 K3=K13"), 0).is_err());
    }

    #[test]
    fn runs_wrap_only_with_the_option() {
        let ok = okey("R9");
        assert!(read_run_or_set(ok, false, &mt("B12 B13 B1"), 0).is_err());
        let m = read_run_or_set(ok, true, &mt("B12 B13 B1"), 0).unwrap();
        assert_eq!(m.value(), 26);
        assert!(read_run_or_set(ok, true, &mt("B13 B1 B2"), 0).is_err());
    }

    #[test]
    fn false_joker_plays_as_the_okey_face() {
        let ok = okey("R9");
        let m = read_run_or_set(ok, false, &mt("R9 F R11"), 0).unwrap();
        assert_eq!(m.value(), 30);
        assert!(read_pair(ok, &mt("F F"), 0).is_ok());
        assert!(read_pair(ok, &mt("R10 R10"), 0).is_err());
        assert!(read_pair(ok, &mt("K3 R10"), 0).is_ok());
    }

    #[test]
    fn sets_take_missing_colours_and_retrieval_needs_all_of_them() {
        let ok = okey("R9");
        let set = read_run_or_set(ok, false, &mt("B3 K3 R10"), 1).unwrap();
        assert!(can_take(ok, false, &set, "R3".parse().unwrap()));
        assert!(!can_take(ok, false, &set, "B3".parse().unwrap()));
        let err = retrieve_from(ok, &set, &["R3".parse().unwrap()], 2);
        assert!(err.is_err());
        let r =
            retrieve_from(ok, &set, &["R3".parse().unwrap(), "Y3".parse().unwrap()], 2).unwrap();
        assert_eq!(r.okeys.len(), 1);
        assert_eq!(r.okeys[0].by, 1);
        assert_eq!(r.meld.tiles.len(), 4);
    }

    #[test]
    fn adding_keeps_an_okey_fixed_in_its_place() {
        let ok = okey("R9");
        let run = read_run_or_set(ok, false, &mt("K11 K12 R10"), 0).unwrap();
        assert!(can_take(ok, false, &run, "K10".parse().unwrap()));
        assert!(!can_take(ok, false, &run, "K13".parse().unwrap()));
        let grown = add_to(ok, false, &run, &mt("K9 K10"), 1).unwrap();
        assert_eq!(grown.len(), 5);
        assert!(add_to(ok, false, &grown, &mt("K6 K7 K8"), 1).is_err());
    }
}
