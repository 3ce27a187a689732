//! The easy bot, seed 002's practice opponent: draw from the pile, open when the best melds reach
//! the threshold, lay new melds and lay off what fits once open, discard the highest loose tile.
//! At a `called` table it calls a playable discard before drawing, like every player there.

use okey_rules::{Command, OpenKind, SeatView};

use crate::rack::{Phase, Sight, best_melds, highest, without};
use crate::{Bot, Level};

/// Seed 002's heuristic. It remembers nothing, never takes the side discard, opens only with
/// melds and calls a discard only when it is playable.
#[derive(Clone, Copy, Debug, Default)]
pub struct Easy;

impl Bot for Easy {
    fn level(&self) -> Level {
        Level::Easy
    }

    fn act(&mut self, view: &SeatView) -> Command {
        let sight = Sight::of(view);
        if sight.should_call() {
            return Command::CallPlayable;
        }
        if matches!(sight.phase, Phase::Take | Phase::MustDraw) {
            return Command::Draw;
        }
        let best = best_melds(&sight, &sight.rack, None);
        if sight.phase == Phase::Act {
            match sight.opened {
                None => {
                    if let Some(b) = &best
                        && b.amount >= sight.meld_threshold()
                    {
                        return Command::Open {
                            melds: b.melds.clone(),
                        };
                    }
                }
                Some(o) if o.kind == OpenKind::Melds => {
                    if let Some(b) = &best {
                        return Command::Lay {
                            melds: b.melds.clone(),
                        };
                    }
                    if let Some(add) = sight.lay_off() {
                        return add;
                    }
                }
                Some(_) => {
                    if let Some(add) = sight.lay_off() {
                        return add;
                    }
                }
            }
        }
        Command::Discard {
            tile: loose_discard(&sight, best.as_ref().map(|b| b.melds.as_slice())),
        }
    }
}

/// The highest tile left out of the best melds, never an okey while anything else is left.
fn loose_discard(sight: &Sight, melds: Option<&[Vec<okey_rules::MeldTile>]>) -> okey_rules::Tile {
    let loose = melds.map_or_else(|| sight.rack.clone(), |m| without(&sight.rack, m));
    let okey = sight.okey;
    highest(okey, loose.kinds().filter(|t| !okey.is_okey(*t)))
        .or_else(|| highest(okey, sight.rack.kinds().filter(|t| !okey.is_okey(*t))))
        .unwrap_or_else(|| {
            sight
                .rack
                .iter()
                .next()
                .expect("a rack on turn is never empty")
        })
}
