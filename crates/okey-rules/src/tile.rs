//! Tiles, their text form, faces (what a tile stands for) and racks as tile multisets.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One of the four tile colours, in the order the rules use to break ties (R, Y, B, K).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Color {
    Red = 0,
    Yellow = 1,
    Blue = 2,
    Black = 3,
}

impl Color {
    pub const ALL: [Color; 4] = [Color::Red, Color::Yellow, Color::Blue, Color::Black];

    pub fn letter(self) -> char {
        match self {
            Color::Red => 'R',
            Color::Yellow => 'Y',
            Color::Blue => 'B',
            Color::Black => 'K',
        }
    }

    pub fn from_letter(c: char) -> Option<Color> {
        match c {
            'R' => Some(Color::Red),
            'Y' => Some(Color::Yellow),
            'B' => Some(Color::Blue),
            'K' => Some(Color::Black),
            _ => None,
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn from_index(i: usize) -> Color {
        Color::ALL[i]
    }
}

/// A physical tile: a coloured number 1–13, or a false joker.
///
/// Encoded as one byte: `colour * 13 + (number - 1)` for numbered tiles, 52 for the false joker.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tile(u8);

/// Number of distinct tile kinds (52 numbered faces plus the false joker).
pub const KINDS: usize = 53;

impl Tile {
    pub const FALSE_JOKER: Tile = Tile(52);

    pub fn new(color: Color, number: u8) -> Tile {
        debug_assert!((1..=13).contains(&number));
        Tile(color as u8 * 13 + (number - 1))
    }

    pub fn from_index(i: usize) -> Tile {
        debug_assert!(i < KINDS);
        Tile(i as u8)
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub fn is_false_joker(self) -> bool {
        self.0 == 52
    }

    /// The printed face, `None` for a false joker.
    pub fn printed(self) -> Option<Face> {
        if self.is_false_joker() {
            None
        } else {
            Some(Face {
                color: Color::from_index((self.0 / 13) as usize),
                rank: self.0 % 13 + 1,
            })
        }
    }

    /// The tile's text form (`R7`, `K13`, `F` for a false joker), without formatting.
    pub fn name(self) -> &'static str {
        TILE_NAMES[self.0 as usize]
    }

    /// Every tile of the 106-tile set, each kind as often as the set has it (two of each).
    pub fn full_set() -> Vec<Tile> {
        (0..KINDS)
            .flat_map(|i| [Tile(i as u8), Tile(i as u8)])
            .collect()
    }
}

/// Text forms of the tiles by index (see [`Tile`]); a test checks them against [`Face`].
const TILE_NAMES: [&str; KINDS] = [
    "R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11", "R12", "R13", //
    "Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7", "Y8", "Y9", "Y10", "Y11", "Y12", "Y13", //
    "B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9", "B10", "B11", "B12", "B13", //
    "K1", "K2", "K3", "K4", "K5", "K6", "K7", "K8", "K9", "K10", "K11", "K12", "K13", //
    "F",
];

impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a tile's text could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{text}` is not a tile: write a colour letter R, Y, B or K and a number 1-13 (like R7 or K13), or F for a false joker"
)]
pub struct TileParseError {
    pub text: String,
}

impl FromStr for Tile {
    type Err = TileParseError;

    fn from_str(s: &str) -> Result<Tile, TileParseError> {
        let err = || TileParseError {
            text: s.to_string(),
        };
        if s == "F" {
            return Ok(Tile::FALSE_JOKER);
        }
        let mut chars = s.chars();
        let color = chars.next().and_then(Color::from_letter).ok_or_else(err)?;
        let digits = chars.as_str();
        if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let number: u8 = digits.parse().map_err(|_| err())?;
        if !(1..=13).contains(&number) || digits.starts_with('0') {
            return Err(err());
        }
        Ok(Tile::new(color, number))
    }
}

impl Serialize for Tile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Tile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Tile, D::Error> {
        /// Reads the text form without copying it first.
        struct TileText;
        impl serde::de::Visitor<'_> for TileText {
            type Value = Tile;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a tile such as R7, K13 or F")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Tile, E> {
                s.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(TileText)
    }
}

/// What a tile stands for on the table: a colour and a rank.
///
/// Rank 1–13 is the number itself; rank 14 is a 1 placed after 13 in a wrapping run (12-13-1),
/// which is worth 1.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Face {
    pub color: Color,
    pub rank: u8,
}

impl Face {
    pub fn new(color: Color, rank: u8) -> Face {
        Face { color, rank }
    }

    /// The number printed on a tile showing this face (a wrapped 1 is a 1).
    pub fn number(self) -> u8 {
        if self.rank == 14 { 1 } else { self.rank }
    }

    /// Points this face is worth in a meld.
    pub fn value(self) -> u32 {
        self.number() as u32
    }

    /// The physical tile kind that prints this face.
    pub fn tile(self) -> Tile {
        Tile::new(self.color, self.number())
    }
}

impl fmt::Display for Face {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.color.letter(), self.number())
    }
}

impl fmt::Debug for Face {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.rank == 14 {
            write!(f, "{}1(after 13)", self.color.letter())
        } else {
            fmt::Display::fmt(self, f)
        }
    }
}

/// The stored form of faces: colour letter and rank (a wrapped 1 is rank 14).
const FACE_NAMES: [[&str; 14]; 4] = [
    [
        "R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11", "R12", "R13", "R14",
    ],
    [
        "Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7", "Y8", "Y9", "Y10", "Y11", "Y12", "Y13", "Y14",
    ],
    [
        "B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9", "B10", "B11", "B12", "B13", "B14",
    ],
    [
        "K1", "K2", "K3", "K4", "K5", "K6", "K7", "K8", "K9", "K10", "K11", "K12", "K13", "K14",
    ],
];

impl Serialize for Face {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match FACE_NAMES[self.color.index()].get(self.rank.wrapping_sub(1) as usize) {
            Some(name) => s.serialize_str(name),
            None => s.serialize_str(&format!("{}{}", self.color.letter(), self.rank)),
        }
    }
}

impl<'de> Deserialize<'de> for Face {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Face, D::Error> {
        let s = String::deserialize(d)?;
        let mut chars = s.chars();
        let color = chars
            .next()
            .and_then(Color::from_letter)
            .ok_or_else(|| serde::de::Error::custom("bad face"))?;
        let rank: u8 = chars.as_str().parse().map_err(serde::de::Error::custom)?;
        if !(1..=14).contains(&rank) {
            return Err(serde::de::Error::custom("bad face rank"));
        }
        Ok(Face { color, rank })
    }
}

/// The hand's okey: the tile kind one above the indicator, whose two physical tiles are wild.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Okey {
    /// The okey's face; a false joker plays as exactly this face.
    pub face: Face,
}

impl Okey {
    /// The okey for an indicator: same colour, one higher, 13 → 1.
    pub fn from_indicator(indicator: Tile) -> Option<Okey> {
        let face = indicator.printed()?;
        let rank = if face.rank == 13 { 1 } else { face.rank + 1 };
        Some(Okey {
            face: Face::new(face.color, rank),
        })
    }

    /// The physical tile kind that is wild this hand.
    pub fn tile(self) -> Tile {
        self.face.tile()
    }

    pub fn is_okey(self, tile: Tile) -> bool {
        tile == self.tile()
    }

    /// The face a non-wild tile plays as: its print, or the okey's face for a false joker.
    /// `None` for an okey (it has no face of its own).
    pub fn face_of(self, tile: Tile) -> Option<Face> {
        if self.is_okey(tile) {
            None
        } else if tile.is_false_joker() {
            Some(self.face)
        } else {
            tile.printed()
        }
    }

    /// The number a tile counts for in a rack: its number, or the okey's for a false joker or an okey.
    pub fn number_of(self, tile: Tile) -> u8 {
        match tile.printed() {
            None => self.face.number(),
            Some(f) => f.number(),
        }
    }
}

/// A multiset of tiles (a rack), stored as a count per tile kind.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Tiles {
    counts: [u8; KINDS],
    len: u8,
}

impl Tiles {
    pub fn new() -> Tiles {
        Tiles {
            counts: [0; KINDS],
            len: 0,
        }
    }

    pub fn from_slice(tiles: &[Tile]) -> Tiles {
        let mut t = Tiles::new();
        for &tile in tiles {
            t.insert(tile);
        }
        t
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn count(&self, tile: Tile) -> u8 {
        self.counts[tile.index()]
    }

    pub fn contains(&self, tile: Tile) -> bool {
        self.counts[tile.index()] > 0
    }

    pub fn insert(&mut self, tile: Tile) {
        self.counts[tile.index()] += 1;
        self.len += 1;
    }

    /// Removes one copy; false if there was none.
    pub fn remove(&mut self, tile: Tile) -> bool {
        let c = &mut self.counts[tile.index()];
        if *c == 0 {
            return false;
        }
        *c -= 1;
        self.len -= 1;
        true
    }

    /// True if every tile of `tiles` (with repeats) is here.
    pub fn contains_all(&self, tiles: &[Tile]) -> bool {
        let mut need = [0u8; KINDS];
        for t in tiles {
            need[t.index()] += 1;
            if need[t.index()] > self.counts[t.index()] {
                return false;
            }
        }
        true
    }

    /// The tiles in canonical order (colour, number; false jokers last).
    pub fn iter(&self) -> impl Iterator<Item = Tile> + '_ {
        self.counts
            .iter()
            .enumerate()
            .flat_map(|(i, &c)| std::iter::repeat_n(Tile::from_index(i), c as usize))
    }

    /// Distinct tile kinds held.
    pub fn kinds(&self) -> impl Iterator<Item = Tile> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, _)| Tile::from_index(i))
    }

    pub fn to_vec(&self) -> Vec<Tile> {
        self.iter().collect()
    }

    pub fn counts(&self) -> &[u8; KINDS] {
        &self.counts
    }
}

impl Default for Tiles {
    fn default() -> Tiles {
        Tiles::new()
    }
}

impl fmt::Debug for Tiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Tiles {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Tiles {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Tiles, D::Error> {
        let v = Vec::<Tile>::deserialize(d)?;
        Ok(Tiles::from_slice(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_round_trips() {
        for t in Tile::full_set() {
            let s = t.to_string();
            assert_eq!(s.parse::<Tile>().unwrap(), t);
        }
        for bad in ["", "R", "R0", "R14", "X3", "r3", "R07", "FF", "R1x"] {
            assert!(bad.parse::<Tile>().is_err(), "{bad}");
        }
    }

    #[test]
    fn names_are_the_colour_letter_and_number_and_serde_uses_them() {
        for i in 0..KINDS {
            let t = Tile::from_index(i);
            let spelled = match t.printed() {
                None => "F".to_string(),
                Some(face) => format!("{}{}", face.color.letter(), face.number()),
            };
            assert_eq!(t.name(), spelled);
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{spelled}\""));
            assert_eq!(serde_json::from_str::<Tile>(&json).unwrap(), t);
            let value = serde_json::to_value(t).unwrap();
            assert_eq!(serde_json::from_value::<Tile>(value).unwrap(), t);
        }
        for color in Color::ALL {
            for rank in 1..=14 {
                let face = Face::new(color, rank);
                let json = serde_json::to_string(&face).unwrap();
                assert_eq!(json, format!("\"{}{rank}\"", color.letter()));
                assert_eq!(serde_json::from_str::<Face>(&json).unwrap(), face);
            }
        }
        let err = serde_json::from_str::<Tile>("\"R14\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not a tile"), "{err}");
        assert!(serde_json::from_str::<Tile>("7").is_err());
    }

    #[test]
    fn okey_is_one_above_the_indicator_and_13_wraps_to_1() {
        let ok = Okey::from_indicator("K6".parse().unwrap()).unwrap();
        assert_eq!(ok.tile().to_string(), "K7");
        let ok = Okey::from_indicator("R13".parse().unwrap()).unwrap();
        assert_eq!(ok.tile().to_string(), "R1");
        assert!(Okey::from_indicator(Tile::FALSE_JOKER).is_none());
        assert_eq!(ok.face_of(Tile::FALSE_JOKER), Some(ok.face));
        assert_eq!(ok.face_of(ok.tile()), None);
    }
}
