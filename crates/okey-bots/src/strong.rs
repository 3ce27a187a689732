//! The strong bot: it plans its opening (keeping the tiles that build melds, shedding low loose
//! ones), weighs a pair opening against a meld opening by what each leaves in the rack, takes the
//! side discard when it opens or lays with it, calls a playable discard, retrieves an opponent's
//! okey, never throws away the okey or a playable tile unless it must, and sheds its highest
//! tiles once open.

use okey_rules::hints::best_pair_opening;
use okey_rules::meld::{self, Form};
use okey_rules::{Command, Face, MeldTile, OpenKind, SeatView, Tile, Tiles, partner};

use crate::rack::{Phase, Sight, best_melds, fits_table, highest, rack_cost, without};
use crate::{Bot, Level};

/// A held okey is laid off onto the table once the pile is this low: the hand is likely to end
/// with the pile empty, and an okey still in the rack then costs 101.
const SHED_OKEY_PILE: usize = 12;

/// Below this many tiles in the pile a loose tile's neighbours are unlikely to arrive: after
/// opening the bot then sheds purely by number.
const KEEP_PARTIALS_PILE: usize = 6;

/// A pair opening doubles what the rack costs and allows only pairs later: it must leave this
/// much less than a meld opening would to be chosen.
const PAIR_BIAS: u32 = 10;

/// The strong bot. It keeps no memory: what it needs to know about its own turn (whether the
/// discard may still be called, how many tiles it added as a pair opener) is in the view, so a
/// fresh bot asked for each command (as the table service does) plays the same.
#[derive(Clone, Copy, Debug, Default)]
pub struct Strong;

impl Bot for Strong {
    fn level(&self) -> Level {
        Level::Strong
    }

    fn act(&mut self, view: &SeatView) -> Command {
        let sight = Sight::of(view);
        match sight.phase {
            Phase::MustDraw => Command::Draw,
            Phase::Take => self.take(&sight),
            Phase::DiscardOnly => Command::Discard {
                tile: discard(&sight),
            },
            Phase::Act => {
                let action = match sight.opened {
                    None => open(&sight),
                    Some(o) if o.kind == OpenKind::Melds => self.act_meld_opener(&sight),
                    Some(_) => self.act_pair_opener(&sight),
                };
                action.unwrap_or_else(|| Command::Discard {
                    tile: discard(&sight),
                })
            }
        }
    }
}

impl Strong {
    /// Call a playable discard, take the side discard when it opens or lays at once, else draw.
    fn take(&mut self, s: &Sight) -> Command {
        let view = s.view;
        let Some(side) = view.side_discard else {
            return Command::Draw;
        };
        if s.should_call() {
            return Command::CallPlayable;
        }
        if s.okey.is_okey(side) || s.playable(side) {
            return Command::Draw;
        }
        if s.opened_with(OpenKind::Pairs) && !view.rules.pairs_take_discard {
            return Command::Draw;
        }
        let mut with = s.rack.clone();
        with.insert(side);
        let helps = match s.opened {
            None => {
                open_plan(s, &with, Some(side)).is_some() && open_plan(s, &s.rack, None).is_none()
            }
            Some(o) if o.kind == OpenKind::Melds => {
                best_melds(s, &with, Some(side)).is_some() || add_with_side(s, side).is_some()
            }
            Some(_) => s.rack.contains(side) || s.rack.contains(s.okey.tile()),
        };
        if helps {
            Command::TakeDiscard
        } else {
            Command::Draw
        }
    }

    fn act_meld_opener(&mut self, s: &Sight) -> Option<Command> {
        if let Some(side) = s.held_side {
            if let Some(b) = best_melds(s, &s.rack, Some(side)) {
                return Some(Command::Lay { melds: b.melds });
            }
            return Some(add_with_side(s, side).unwrap_or(Command::ReturnDiscard));
        }
        if let Some(b) = best_melds(s, &s.rack, None) {
            return Some(Command::Lay { melds: b.melds });
        }
        retrieve(s).or_else(|| s.lay_off()).or_else(|| shed_okey(s))
    }

    fn act_pair_opener(&mut self, s: &Sight) -> Option<Command> {
        if let Some(side) = s.held_side {
            // The rack holds the side discard itself: pair it with its twin, or with an okey.
            let other = if s.rack.count(side) >= 2 {
                Some(MeldTile::plain(side))
            } else if s.rack.contains(s.okey.tile()) {
                Some(MeldTile {
                    tile: s.okey.tile(),
                    reading: s.okey.face_of(side),
                })
            } else {
                None
            };
            return Some(match other {
                Some(other) if s.rack.len() > 2 => Command::Lay {
                    melds: vec![vec![MeldTile::plain(side), other]],
                },
                _ => Command::ReturnDiscard,
            });
        }
        if let Some(b) = best_pair_opening(s.okey, &s.rack, None) {
            return Some(Command::Lay { melds: b.melds });
        }
        let done = s.view.adds_this_turn;
        if s.view
            .rules
            .pair_opener_adds_per_turn
            .is_some_and(|limit| done >= limit)
        {
            return None;
        }
        s.lay_off()
    }
}

/// The opening this rack allows now at the seat's thresholds, melds or pairs, whichever leaves
/// the rack cheaper.
fn open_plan(s: &Sight, rack: &Tiles, forced: Option<Tile>) -> Option<Vec<Vec<MeldTile>>> {
    let melds = best_melds(s, rack, forced).filter(|b| b.amount >= s.meld_threshold());
    let pairs = best_pair_opening(s.okey, rack, forced).filter(|b| b.amount >= s.pair_threshold());
    match (melds, pairs) {
        (Some(m), Some(p)) => {
            let after_melds = rack_cost(s.okey, &without(rack, &m.melds));
            let after_pairs = 2 * rack_cost(s.okey, &without(rack, &p.melds));
            Some(if after_pairs + PAIR_BIAS < after_melds {
                p.melds
            } else {
                m.melds
            })
        }
        (Some(m), None) => Some(m.melds),
        (None, Some(p)) => Some(p.melds),
        (None, None) => None,
    }
}

/// Opens if the rack (with a side discard taken this turn) allows it; gives an unusable side
/// discard back.
fn open(s: &Sight) -> Option<Command> {
    match open_plan(s, &s.rack, s.held_side) {
        Some(melds) => Some(Command::Open { melds }),
        None if s.held_side.is_some() => Some(Command::ReturnDiscard),
        None => None,
    }
}

/// Adds the side discard with one rack tile to a table meld (a run end needs both).
fn add_with_side(s: &Sight, side: Tile) -> Option<Command> {
    if s.rack.len() < 3 {
        return None;
    }
    for (at, m) in s.view.table.iter().enumerate() {
        for t in s.rack.kinds() {
            if s.okey.is_okey(t) || (t == side && s.rack.count(t) < 2) {
                continue;
            }
            let tiles = vec![MeldTile::plain(t), MeldTile::plain(side)];
            if meld::add_to(s.okey, s.wraps, m, &tiles, s.view.seat).is_ok() {
                return Some(Command::Add { meld: at, tiles });
            }
        }
    }
    None
}

/// Takes back an okey an opponent placed, by supplying the tile(s) it stands for: the placer pays
/// 101 and the bot gains a wild tile. Never an okey its partner placed, never its own.
fn retrieve(s: &Sight) -> Option<Command> {
    let seat = s.view.seat;
    for (at, m) in s.view.table.iter().enumerate() {
        let okeys: Vec<_> = m.tiles.iter().filter(|p| s.okey.is_okey(p.tile)).collect();
        if okeys.is_empty() {
            continue;
        }
        let pays = okeys
            .iter()
            .all(|p| p.by != seat && !(s.view.rules.partners && p.by == partner(seat)));
        if !pays {
            continue;
        }
        let need: Vec<Tile> = match m.form {
            Form::Set { number } if m.tiles.len() == 3 => {
                let used: Vec<_> = m
                    .tiles
                    .iter()
                    .filter(|p| !s.okey.is_okey(p.tile))
                    .map(|p| p.reads.color)
                    .collect();
                okey_rules::Color::ALL
                    .into_iter()
                    .filter(|c| !used.contains(c))
                    .map(|c| tile_for(s, Face::new(c, number)))
                    .collect()
            }
            _ => vec![tile_for(s, okeys[0].reads)],
        };
        if need.iter().all(|t| !s.okey.is_okey(*t)) && s.rack.contains_all(&need) {
            return Some(Command::Retrieve {
                meld: at,
                tiles: need,
            });
        }
    }
    None
}

/// The physical tile that shows `face` this hand (a false joker for the okey's face).
fn tile_for(s: &Sight, face: Face) -> Tile {
    let f = Face::new(face.color, face.number());
    if f == s.okey.face {
        Tile::FALSE_JOKER
    } else {
        f.tile()
    }
}

/// Lays a held okey off onto the table when keeping it has become the bigger risk, or when that
/// leaves one tile to finish with.
fn shed_okey(s: &Sight) -> Option<Command> {
    let okey = s.okey.tile();
    if !s.rack.contains(okey) || s.rack.len() < 2 {
        return None;
    }
    if s.view.pile_count > SHED_OKEY_PILE && s.rack.len() > 2 {
        return None;
    }
    fits_table(s.okey, s.wraps, &s.view.table, okey).map(|at| Command::Add {
        meld: at,
        tiles: vec![MeldTile::plain(okey)],
    })
}

/// The discard: never the okey or a playable tile unless nothing else is left. Before opening it
/// keeps what builds melds (and high tiles, which reach the threshold sooner); after opening it
/// sheds the highest tile.
fn discard(s: &Sight) -> Tile {
    let rack = &s.rack;
    if rack.len() == 1 {
        return rack.iter().next().expect("one tile");
    }
    let safe: Vec<Tile> = rack
        .kinds()
        .filter(|t| !s.okey.is_okey(*t) && !s.playable(*t))
        .collect();
    if safe.is_empty() {
        return highest(s.okey, rack.kinds().filter(|t| !s.okey.is_okey(*t)))
            .unwrap_or_else(|| rack.iter().next().expect("a rack on turn is never empty"));
    }
    let best = best_melds(s, rack, None);
    let in_melds = best.as_ref().map_or_else(Tiles::new, |b| {
        let mut t = Tiles::new();
        for m in b.melds.iter().flatten() {
            t.insert(m.tile);
        }
        t
    });
    let loose = best
        .as_ref()
        .map_or_else(|| rack.clone(), |b| without(rack, &b.melds));
    let free: Vec<Tile> = safe
        .iter()
        .copied()
        .filter(|t| loose.contains(*t))
        .collect();
    match s.opened {
        None => {
            if free.is_empty() {
                // Every safe tile is in a meld: give up the one whose loss costs the least.
                let base = best.as_ref().map_or(0, |b| b.amount);
                return *safe
                    .iter()
                    .min_by_key(|t| {
                        let mut r = rack.clone();
                        r.remove(**t);
                        let left = best_melds(s, &r, None).map_or(0, |b| b.amount);
                        (base.saturating_sub(left), s.okey.number_of(**t))
                    })
                    .expect("safe is not empty");
            }
            // Loose tiles with no neighbours go first, the lowest of them first.
            *free
                .iter()
                .min_by_key(|t| {
                    (
                        connections(s, **t, &loose, &in_melds),
                        s.okey.number_of(**t),
                    )
                })
                .expect("free is not empty")
        }
        Some(o) => {
            let factor = if o.kind == OpenKind::Pairs { 2 } else { 1 };
            let pool = if free.is_empty() { &safe } else { &free };
            let keep_partials = s.view.pile_count >= KEEP_PARTIALS_PILE;
            *pool
                .iter()
                .max_by_key(|t| {
                    let keep = if keep_partials {
                        connections(s, **t, &loose, &in_melds)
                    } else {
                        0
                    };
                    // Ties go to the first tile in canonical order.
                    (
                        factor * s.okey.number_of(**t) as i32 * 2 - keep as i32,
                        std::cmp::Reverse(**t),
                    )
                })
                .expect("pool is not empty")
        }
    }
}

/// How much a loose tile builds toward a meld with the other loose tiles: a twin (a pair), a
/// neighbour in a run, the same number in another colour.
fn connections(s: &Sight, tile: Tile, loose: &Tiles, in_melds: &Tiles) -> u32 {
    let Some(face) = s.okey.face_of(tile) else {
        return 0;
    };
    let mut score = 0;
    if loose.count(tile) >= 2 {
        score += 2;
    }
    for other in loose.kinds() {
        if other == tile {
            continue;
        }
        let Some(f) = s.okey.face_of(other) else {
            continue;
        };
        if f.color == face.color {
            match f.number().abs_diff(face.number()) {
                1 => score += 3,
                2 => score += 2,
                _ => {}
            }
        } else if f.number() == face.number() {
            score += 2;
        }
    }
    // A tile that would extend a meld the rack already holds is nearly as good as in it.
    for other in in_melds.kinds() {
        if let Some(f) = s.okey.face_of(other)
            && f.color == face.color
            && f.number().abs_diff(face.number()) == 1
        {
            score += 1;
        }
    }
    score
}
