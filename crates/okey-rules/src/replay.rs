//! Replays for people: folds a hand's events one by one and says, in the game's words, what each
//! did and exactly why every penalty and end-of-hand score was written. Support staff use it to
//! settle a disputed hand; `okeyctl replay` prints it.

use crate::hand::{Event, Hand, OpenKind, PenaltyReason};
use crate::meld::{Form, TableMeld, can_take};
use crate::ruleset::{PlayableDiscard, RuleSet};
use crate::tile::Tile;

/// One event of the hand, told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayLine {
    /// The hand's version after this event (1 = dealt).
    pub version: u64,
    /// The event's stable name.
    pub event: &'static str,
    /// What happened, and why where a rule decided it.
    pub text: String,
}

fn tiles(ts: &[Tile]) -> String {
    ts.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A meld as a reader sees it: its tiles and, for okeys, what they stand for.
pub fn meld_text(hand: &Hand, m: &TableMeld) -> String {
    let parts: Vec<String> = m
        .tiles
        .iter()
        .map(|p| {
            if hand.okey.is_okey(p.tile) {
                format!("{}={}", p.tile, p.reads)
            } else {
                p.tile.to_string()
            }
        })
        .collect();
    let kind = match m.form {
        Form::Run { .. } => "run",
        Form::Set { .. } => "set",
        Form::Pair { .. } => "pair",
    };
    format!("{kind} [{}] worth {}", parts.join(" "), m.value())
}

/// Tells a whole hand. The first event must be `HandStarted`.
pub fn narrate(events: &[Event]) -> Vec<ReplayLine> {
    let Some(first) = events.first() else {
        return Vec::new();
    };
    let mut hand = Hand::from_start(first);
    let mut out = Vec::with_capacity(events.len());
    out.push(ReplayLine {
        version: hand.version,
        event: first.name(),
        text: format!(
            "dealt: indicator {}, okey {} (a false joker plays as {}); seat {} plays first with 22 tiles; {} in the centre pile; rules {} ({:?} threshold{}){}",
            hand.indicator,
            hand.okey.tile(),
            hand.okey.face,
            hand.first,
            hand.pile_len(),
            hand.rules.preset.name(),
            hand.rules.threshold,
            if hand.rules.partners { ", partners" } else { "" },
            options_text(&hand.rules),
        ),
    });
    let mut last_discard: Option<(u8, Tile)> = None;
    for e in &events[1..] {
        let before = hand.clone();
        hand.evolve(e);
        let text = match e {
            Event::HandStarted { .. } => "dealt again".to_string(),
            Event::TileDrawn { seat, tile } => format!(
                "seat {seat} drew {tile} from the centre pile ({} left)",
                hand.pile_len()
            ),
            Event::SideDiscardTaken { seat, tile } => {
                format!(
                    "seat {seat} took the side discard {tile} (it must be used on the table this turn)"
                )
            }
            Event::SideDiscardReturned { seat, tile } => {
                format!(
                    "seat {seat} gave the side discard {tile} back and must draw from the centre pile"
                )
            }
            Event::TableRolledBack { seat, voided } => format!(
                "seat {seat}'s table actions this turn were undone{}",
                if voided.is_empty() {
                    String::new()
                } else {
                    format!(" and {} voided", penalties_text(&before, voided))
                }
            ),
            Event::HandOpened {
                seat,
                kind,
                amount,
                melds,
            } => {
                let what = match kind {
                    OpenKind::Melds => format!(
                        "melds worth {amount} (needed {})",
                        before.meld_threshold[*seat as usize]
                    ),
                    OpenKind::Pairs => format!(
                        "{amount} pairs (needed {})",
                        before.pair_threshold[*seat as usize]
                    ),
                };
                let ms: Vec<String> = melds.iter().map(|m| meld_text(&hand, m)).collect();
                format!("seat {seat} opened with {what}: {}", ms.join("; "))
            }
            Event::WrongOpening {
                seat,
                kind,
                amount,
                needed,
                melds,
            } => {
                let unit = if *kind == OpenKind::Pairs {
                    "pairs"
                } else {
                    "points"
                };
                let shown = if melds.is_empty() {
                    String::new()
                } else {
                    let ms: Vec<String> = melds.iter().map(|m| meld_text(&before, m)).collect();
                    format!(" ({})", ms.join("; "))
                };
                format!(
                    "seat {seat} tried to open with {amount} {unit}{shown} but needed {needed}: a wrong opening, the tiles stay in the rack and only a discard is left"
                )
            }
            Event::MeldsLaid { seat, melds } => {
                let ms: Vec<String> = melds.iter().map(|m| meld_text(&hand, m)).collect();
                format!("seat {seat} laid {}", ms.join("; "))
            }
            Event::TilesAdded {
                seat,
                meld,
                tiles: ts,
                result,
            } => {
                format!(
                    "seat {seat} added {} to meld {meld}, now {}",
                    tiles(ts),
                    meld_text(&hand, result)
                )
            }
            Event::OkeyRetrieved {
                seat,
                meld,
                supplied,
                okeys,
                ..
            } => {
                let placers: Vec<String> = okeys
                    .iter()
                    .map(|p| format!("placed by seat {} as {}", p.by, p.reads))
                    .collect();
                format!(
                    "seat {seat} supplied {} to meld {meld} and took back {} okey(s) ({})",
                    tiles(supplied),
                    okeys.len(),
                    placers.join(", ")
                )
            }
            Event::TileDiscarded {
                seat,
                tile,
                playable,
            } => {
                last_discard = Some((*seat, *tile));
                let mut t = format!("seat {seat} discarded {tile}");
                if *playable {
                    let fits: Vec<String> = before
                        .table
                        .iter()
                        .enumerate()
                        .filter(|(_, m)| {
                            can_take(before.okey, before.rules.run_wraps_12_13_1, m, *tile)
                        })
                        .map(|(i, _)| format!("meld {i}"))
                        .collect();
                    t.push_str(&format!(" (playable: {} could take it)", fits.join(", ")));
                    if before.racks[usize::from(*seat)].len() == 1 {
                        t.push_str("; not charged: it is the last tile, it finishes the hand");
                    } else if !before.rules.in_play_penalties {
                        t.push_str("; not charged: in-play penalties are off");
                    } else if before.rules.playable_discard == PlayableDiscard::Called {
                        t.push_str("; charged only if the next player calls it");
                    }
                }
                t
            }
            Event::PlayableCalled { seat, fits } => match (fits, last_discard) {
                (true, Some((d, t))) => format!(
                    "seat {seat} called {t} playable: it fits a table meld, so seat {d} is charged"
                ),
                (false, Some((_, t))) => {
                    format!("seat {seat} called {t} playable: it fits no meld, nobody is charged")
                }
                _ => format!("seat {seat} called the last discard playable"),
            },
            Event::TurnTimedOut { seat } => {
                format!(
                    "seat {seat}'s move deadline passed: the server plays for it (return an unused side discard, draw, discard the highest tile)"
                )
            }
            Event::PenaltyCharged {
                id,
                seat,
                points,
                reason,
            } => {
                format!(
                    "penalty #{id}: seat {seat} +{points} ({}): {}",
                    reason.code(),
                    why(&before, *reason, last_discard)
                )
            }
            Event::HandCancelled { voided } => {
                format!(
                    "all four players opened with pairs: the hand is cancelled, {} and it is dealt again",
                    if voided.is_empty() {
                        "no penalty to void".to_owned()
                    } else {
                        format!(
                            "{} {} void",
                            penalties_text(&before, voided),
                            if voided.len() == 1 { "is" } else { "are" }
                        )
                    }
                )
            }
            Event::HandEnded { end } => {
                let mut t = format!("the hand ended: {:?}", end.outcome);
                if let Some(w) = end.winner {
                    t.push_str(&format!(
                        ", seat {w} went out (multiplier {})",
                        end.multiplier
                    ));
                }
                if let Some(bases) = hand.score_bases() {
                    for (s, b) in bases.iter().enumerate() {
                        let rack = tiles(&hand.racks[s].to_vec());
                        t.push_str(&format!("\n    seat {s}: {b}   [rack: {rack}]"));
                    }
                }
                t
            }
        };
        out.push(ReplayLine {
            version: hand.version,
            event: e.name(),
            text,
        });
    }
    out
}

/// The penalties `ids` of `hand`, each as its own line told it: "penalty #0 (seat 0 +101
/// discard_okey)".
fn penalties_text(hand: &Hand, ids: &[u32]) -> String {
    ids.iter()
        .map(|id| match hand.penalties.iter().find(|p| p.id == *id) {
            Some(p) => format!(
                "penalty #{id} (seat {} +{} {})",
                p.seat,
                p.points,
                p.reason.code()
            ),
            None => format!("penalty #{id}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The options of `rules` that decide penalties and scores, said when they are not what the
/// preset plays by itself: ", with in-play penalties off, playable discards charged when called".
fn options_text(rules: &RuleSet) -> String {
    let preset = rules.preset.rules();
    let on_off = |on: bool| if on { "on" } else { "off" };
    let mut changed: Vec<String> = Vec::new();
    if rules.in_play_penalties != preset.in_play_penalties {
        changed.push(format!(
            "in-play penalties {}",
            on_off(rules.in_play_penalties)
        ));
    }
    if rules.playable_discard != preset.playable_discard {
        changed.push(match rules.playable_discard {
            PlayableDiscard::Auto => "playable discards charged at once".into(),
            PlayableDiscard::Called => "playable discards charged only when called".into(),
        });
    }
    if rules.run_wraps_12_13_1 != preset.run_wraps_12_13_1 {
        changed.push(format!(
            "runs ending 12-13-1 {}",
            on_off(rules.run_wraps_12_13_1)
        ));
    }
    if rules.act_after_opening_same_turn != preset.act_after_opening_same_turn {
        changed.push(format!(
            "laying and adding in the turn of opening {}",
            on_off(rules.act_after_opening_same_turn)
        ));
    }
    if rules.pairs_take_discard != preset.pairs_take_discard {
        changed.push(format!(
            "pair openers taking the side discard {}",
            on_off(rules.pairs_take_discard)
        ));
    }
    if rules.threshold != preset.threshold {
        changed.push(format!(
            "{:?} threshold instead of the preset's",
            rules.threshold
        ));
    }
    if changed.is_empty() {
        String::new()
    } else {
        format!(", with {}", changed.join(", "))
    }
}

fn why(before: &Hand, reason: PenaltyReason, last_discard: Option<(u8, Tile)>) -> String {
    match reason {
        PenaltyReason::WrongOpening => "valid melds or pairs below the threshold".into(),
        PenaltyReason::DiscardOkey => "discarded an okey without finishing the hand".into(),
        PenaltyReason::DiscardPlayable => match last_discard {
            Some((_, t)) => {
                format!("discarded {t}, which a table meld could take, without finishing")
            }
            None => "discarded a playable tile".into(),
        },
        PenaltyReason::SideDiscardOpening => match before.turn.taken {
            crate::hand::Taken::SideDiscard { tile, .. } => format!(
                "its discard {tile} was used in the next player's opening: {} x {} (10x for melds, 20x for pairs)",
                if before.opened[before.turn.seat as usize].map(|o| o.kind) == Some(OpenKind::Pairs)
                {
                    20
                } else {
                    10
                },
                before.okey.number_of(tile)
            ),
            _ => "its discard was used in an opening".into(),
        },
        PenaltyReason::OkeyRetrieved => {
            "another player took back an okey this seat had placed".into()
        }
        PenaltyReason::TableRollback => {
            "gave the side discard back after changing the table".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hand::ScoreBasis;
    use crate::{Command, Deal, Preset};

    #[test]
    fn a_finish_names_its_facts_and_whether_the_table_doubled_them() {
        let finish = |multiplier, direct, okey, pairs| {
            ScoreBasis::Finisher {
                multiplier,
                direct,
                okey,
                pairs,
            }
            .to_string()
        };
        assert_eq!(
            finish(4, true, false, true),
            "went out: -101 x 4 (direct finish, opened with pairs) = -404"
        );
        // A stored rule set may turn factors off (no preset does): the text says which were not
        // doubled.
        assert_eq!(
            finish(1, false, false, true),
            "went out: -101 x 1 (opened with pairs: not doubled under this table's rules) = -101"
        );
        assert_eq!(
            finish(2, true, true, false),
            "went out: -101 x 2 (direct finish, final discard an okey: only some doubled under \
             this table's rules) = -202"
        );
        assert_eq!(finish(1, false, false, false), "went out: -101 x 1 = -101");
    }

    #[test]
    fn a_replay_tells_every_event_and_every_score() {
        let start = Hand::start(Preset::Classic.rules(), Deal::from_seed(&[9; 32], 0)).unwrap();
        let mut hand = Hand::from_start(&start);
        let mut log = vec![start];
        while !hand.is_over() {
            let seat = hand.turn.seat;
            let cmd = Command::Timeout;
            log.extend(hand.apply(seat, &cmd).unwrap());
        }
        let lines = narrate(&log);
        assert_eq!(lines.len(), log.len());
        assert_eq!(lines.last().unwrap().version, hand.version);
        let end = &lines.last().unwrap().text;
        for s in 0..4 {
            assert!(end.contains(&format!("seat {s}: ")), "{end}");
        }
        assert!(end.contains("never opened: 202 x 1 = 202"), "{end}");
    }

    #[test]
    fn an_end_no_hand_can_reach_has_no_score_bases_and_is_told_without_them() {
        // A finish by a seat that never discarded: only a forged or corrupted log holds one.
        let start = Hand::start(Preset::Classic.rules(), Deal::from_seed(&[9; 32], 0)).unwrap();
        let mut hand = Hand::from_start(&start);
        let forged = Event::HandEnded {
            end: crate::HandEnd {
                outcome: crate::Outcome::Finished,
                winner: Some(2),
                multiplier: 1,
                scores: [0; 4],
            },
        };
        hand.evolve(&forged);
        assert!(hand.is_over());
        assert_eq!(hand.score_bases(), None);
        assert_eq!(narrate(&[start, forged]).len(), 2);
    }
}
