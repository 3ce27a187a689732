//! The ledger as a fold of one table's public events: what each event charges whom, and what it
//! changes in the match and hand records. Pure (no I/O): `store` keeps the [`Tally`] of every
//! table between events and writes the [`Change`]s in the event's transaction.
//!
//! The charges of a seat add up to its match total: `penalty` rows (each `penalty_charged`),
//! `void` rows (minus a penalty a `table_rolled_back` or `hand_cancelled` voided), four
//! `hand_score` rows per `hand_ended` (zero points included) and a `floor` row when the rule set
//! floors a total at zero and that took points away.

use okey_bots::is_bot;
use okey_rules::hand::ScoreBasis;
use okey_rules::matches::HandResult;
use okey_rules::{Event, HandEnd, OpenKind, Outcome, PenaltyReason, RuleSet, Seat, Tile};
use okey_table::{Origin, Shown, TableEvent};
use serde::{Deserialize, Serialize};

use crate::skill;
use okey_table::verify::Verification;

/// What scoring keeps of one table between its events.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub rules: Option<RuleSet>,
    pub origin: Option<Origin>,
    /// The player (`players/{id}`) each seat belongs to for the match; `None`: a bot or nobody.
    pub players: [Option<String>; 4],
    /// Seats a bot occupies (`bots/…`), not counting a bot standing in for a player who left.
    #[serde(default)]
    pub bots: [bool; 4],
    /// The display name each seat's player sat down with, if the table was told.
    #[serde(default)]
    pub names: [Option<String>; 4],
    /// The occupant name of each seat a bot occupies (`bots/{level}-{seat}`), for its level.
    #[serde(default)]
    pub bot_names: [Option<String>; 4],
    /// A hand has been dealt: from then on a player who leaves keeps the seat's results.
    pub started: bool,
    pub hand: Option<InPlay>,
    /// Match totals after the last hand.
    pub totals: [i64; 4],
}

/// The hand being played.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InPlay {
    pub number: u32,
    pub dealt_version: u64,
    pub first: Seat,
    pub indicator: Tile,
    pub seed_sha256: String,
    pub penalties: Vec<Charged>,
    pub opened: [Option<OpenKind>; 4],
    /// Whether the seat's opening was made in its current turn (a rollback undoes it).
    pub opened_this_turn: [bool; 4],
}

/// A penalty charged in the hand being played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Charged {
    pub id: u32,
    pub seat: Seat,
    pub points: i32,
    pub reason: PenaltyReason,
    pub voided: bool,
}

/// The kind of a ledger row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Penalty,
    Void,
    HandScore,
    Floor,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Penalty => "penalty",
            Kind::Void => "void",
            Kind::HandScore => "hand_score",
            Kind::Floor => "floor",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        [Kind::Penalty, Kind::Void, Kind::HandScore, Kind::Floor]
            .into_iter()
            .find(|k| k.as_str() == text)
    }
}

/// One ledger row to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub hand_number: u32,
    pub dealt_version: u64,
    pub seat: Seat,
    pub team: Option<u8>,
    pub player: Option<String>,
    pub kind: Kind,
    pub reason: String,
    pub points: i32,
    pub penalty_id: Option<u32>,
    pub voided_by: Option<&'static str>,
    pub multiplier: Option<i32>,
    pub basis: Option<String>,
}

/// Who each seat is for the match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seating {
    pub players: [Option<String>; 4],
    pub bots: [bool; 4],
    pub names: [Option<String>; 4],
    /// The name the table gave each seat's bot (`bots/{level}-{seat}`), as it gave it; `None`
    /// for a person, a free seat, or a bot of a tally kept before bot names were.
    pub bot_names: [Option<String>; 4],
}

/// What one event changes besides the tally.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    MatchCreated {
        origin: Origin,
        rules: RuleSet,
        seating: Seating,
    },
    /// Who sits where changed.
    Seats(Seating),
    HandDealt {
        number: u32,
        dealt_version: u64,
        first: Seat,
        indicator: Tile,
        seed_sha256: String,
        first_of_match: bool,
    },
    Entry(Entry),
    HandEnded {
        dealt_version: u64,
        end: HandEnd,
        result: HandResult,
        totals: [i64; 4],
        seed: String,
        verified: bool,
        problem: Option<String>,
    },
    MatchEnded {
        totals: [i64; 4],
        winners: Vec<Seat>,
        seating: Seating,
        ranked: bool,
        /// Set when the match counts for ratings (`skill::is_rated`): who held each seat.
        rated: Option<[skill::Seat; 4]>,
        partners: bool,
    },
}

/// Why an event in order could not be applied (it is recorded as set aside).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FoldError {
    #[error("{0} before the table was created")]
    BeforeCreated(&'static str),
    #[error("{0} without a hand being played")]
    NoHand(&'static str),
    #[error("hand {got} ended while hand {playing} is played")]
    OtherHand { got: u32, playing: u32 },
}

/// The player a seat name stands for (`players/{id}`), or `None` (a bot, nobody).
fn person(name: &str) -> Option<String> {
    name.starts_with("players/").then(|| name.to_owned())
}

/// The hand in progress, if the event needs one, for `played` events.
fn hand_of<'a>(tally: &'a mut Tally, what: &'static str) -> Result<&'a mut InPlay, FoldError> {
    tally.hand.as_mut().ok_or(FoldError::NoHand(what))
}

impl Tally {
    fn seating(&self) -> Seating {
        Seating {
            players: self.players.clone(),
            bots: self.bots,
            names: self.names.clone(),
            bot_names: self.bot_names.clone(),
        }
    }

    /// Who holds each seat for the rating: its player, or the bot that occupies it (an unknown
    /// bot level plays as strong, the table's default); `None` for a free seat.
    fn rating_seats(&self) -> [Option<skill::Seat>; 4] {
        std::array::from_fn(|s| match (&self.players[s], self.bots[s]) {
            (Some(player), _) => Some(skill::Seat::Person(player.clone())),
            (None, true) => Some(skill::Seat::Bot(
                self.bot_names[s]
                    .as_deref()
                    .and_then(okey_bots::Level::of_occupant)
                    .unwrap_or(okey_bots::Level::Strong),
            )),
            (None, false) => None,
        })
    }

    fn team(&self, seat: Seat) -> Option<u8> {
        self.rules.as_ref().filter(|r| r.partners).map(|_| seat % 2)
    }

    fn entry(&self, hand: &InPlay, seat: Seat, kind: Kind, reason: &str, points: i32) -> Entry {
        Entry {
            hand_number: hand.number,
            dealt_version: hand.dealt_version,
            seat,
            team: self.team(seat),
            player: self.players[seat as usize % 4].clone(),
            kind,
            reason: reason.to_owned(),
            points,
            penalty_id: None,
            voided_by: None,
            multiplier: None,
            basis: None,
        }
    }
}

/// The end-of-hand state of a seat, the reason of its hand score.
fn seat_state(rules: Option<&RuleSet>, hand: &InPlay, end: &HandEnd, seat: Seat) -> &'static str {
    if end.outcome == Outcome::Cancelled {
        return "cancelled";
    }
    if end.winner == Some(seat) {
        return "finished";
    }
    if rules.is_some_and(|r| r.partners) && end.winner == Some(okey_rules::partner(seat)) {
        return "partner_finished";
    }
    match hand.opened[seat as usize % 4] {
        None => "never_opened",
        Some(OpenKind::Melds) => "opened_melds",
        Some(OpenKind::Pairs) => "opened_pairs",
    }
}

/// Folds the public copy of event `version` into the tally; returns what to write.
/// `verification` is the re-verification of a `hand_ended` (the shell runs it with the hand's
/// stored events; `None` for any other event).
pub fn fold(
    tally: &mut Tally,
    version: u64,
    shown: &Shown,
    verification: Option<&Verification>,
) -> Result<Vec<Change>, FoldError> {
    let mut changes = Vec::new();
    match shown {
        Shown::Dealt {
            hand_number,
            first,
            indicator,
            seed_sha256,
            ..
        }
        | Shown::Public {
            event:
                TableEvent::HandDealt {
                    hand_number,
                    first,
                    indicator,
                    seed_sha256,
                    ..
                },
        } => {
            if tally.rules.is_none() {
                return Err(FoldError::BeforeCreated("hand_dealt"));
            }
            let first_of_match = !tally.started;
            tally.started = true;
            tally.hand = Some(InPlay {
                number: *hand_number,
                dealt_version: version,
                first: *first,
                indicator: *indicator,
                seed_sha256: seed_sha256.clone(),
                penalties: Vec::new(),
                opened: [None; 4],
                opened_this_turn: [false; 4],
            });
            changes.push(Change::HandDealt {
                number: *hand_number,
                dealt_version: version,
                first: *first,
                indicator: *indicator,
                seed_sha256: seed_sha256.clone(),
                first_of_match,
            });
        }
        Shown::Drawn { .. } => {}
        Shown::Public { event } => fold_public(tally, event, verification, &mut changes)?,
    }
    Ok(changes)
}

fn fold_public(
    tally: &mut Tally,
    event: &TableEvent,
    verification: Option<&Verification>,
    changes: &mut Vec<Change>,
) -> Result<(), FoldError> {
    match event {
        TableEvent::TableCreated {
            rules,
            seats,
            admission,
            ..
        } => {
            tally.rules = Some(rules.clone());
            tally.origin = Some(admission.origin);
            tally.players = std::array::from_fn(|s| seats[s].as_deref().and_then(person));
            tally.bots = std::array::from_fn(|s| seats[s].as_deref().is_some_and(is_bot));
            tally.bot_names = std::array::from_fn(|s| seats[s].clone().filter(|n| is_bot(n)));
            changes.push(Change::MatchCreated {
                origin: admission.origin,
                rules: rules.clone(),
                seating: tally.seating(),
            });
        }
        TableEvent::SeatTaken { seat, player, name } => {
            if tally.rules.is_none() {
                return Err(FoldError::BeforeCreated("seat_taken"));
            }
            let s = *seat as usize % 4;
            let before = tally.seating();
            if person(player).is_some() {
                tally.players[s] = person(player);
                tally.bots[s] = false;
                tally.bot_names[s] = None;
                if name.is_some() {
                    tally.names[s] = name.clone();
                }
            } else if is_bot(player) {
                tally.bots[s] = true;
                tally.bot_names[s] = Some(player.clone());
            }
            if tally.seating() != before {
                changes.push(Change::Seats(tally.seating()));
            }
        }
        TableEvent::SeatLeft { seat, .. } => {
            // During the match the seat stays its player's (a bot plays it for them).
            let s = *seat as usize % 4;
            if !tally.started && (tally.players[s].is_some() || tally.bots[s]) {
                tally.players[s] = None;
                tally.bots[s] = false;
                tally.bot_names[s] = None;
                tally.names[s] = None;
                changes.push(Change::Seats(tally.seating()));
            }
        }
        TableEvent::HandDealt { .. } => unreachable!("folded by `fold`"),
        TableEvent::Played { event, .. } => fold_played(tally, event, changes)?,
        TableEvent::HandEnded {
            hand_number,
            end,
            result,
            totals,
            seed,
            ..
        } => {
            let hand = tally.hand.take().ok_or(FoldError::NoHand("hand_ended"))?;
            if hand.number != *hand_number {
                let playing = hand.number;
                tally.hand = Some(hand);
                return Err(FoldError::OtherHand {
                    got: *hand_number,
                    playing,
                });
            }
            for seat in 0..4u8 {
                let s = seat as usize;
                let reason = seat_state(tally.rules.as_ref(), &hand, end, seat);
                let mut entry = tally.entry(&hand, seat, Kind::HandScore, reason, end.scores[s]);
                entry.multiplier = Some(end.multiplier);
                entry.basis = verification
                    .and_then(|v| v.bases)
                    .map(|b: [ScoreBasis; 4]| b[s].to_string());
                changes.push(Change::Entry(entry));
            }
            for seat in 0..4u8 {
                let s = seat as usize;
                let counted = if end.outcome == Outcome::Cancelled {
                    0
                } else {
                    result.total(seat)
                };
                let lost = totals[s] - tally.totals[s] - counted;
                if lost != 0 {
                    let mut entry = tally.entry(
                        &hand,
                        seat,
                        Kind::Floor,
                        "floor_totals_at_zero",
                        i32::try_from(lost).unwrap_or(i32::MAX),
                    );
                    entry.basis = Some(format!(
                        "total {} + hand {counted} floored at zero to {}",
                        tally.totals[s], totals[s]
                    ));
                    changes.push(Change::Entry(entry));
                }
            }
            tally.totals = *totals;
            changes.push(Change::HandEnded {
                dealt_version: hand.dealt_version,
                end: *end,
                result: *result,
                totals: *totals,
                seed: seed.clone(),
                verified: verification.is_some_and(Verification::verified),
                problem: match verification {
                    Some(v) => v.problem.clone(),
                    None => Some("not re-verified".into()),
                },
            });
        }
        TableEvent::MatchEnded { totals, winners } => {
            let private_room = tally.origin == Some(Origin::PrivateRoom);
            let ranked = !private_room && tally.players.iter().any(Option::is_some);
            let seats = tally.rating_seats();
            let rated = skill::is_rated(private_room, &seats)
                .then(|| seats.map(|s| s.expect("a rated match has every seat held")));
            changes.push(Change::MatchEnded {
                totals: *totals,
                winners: winners.clone(),
                seating: tally.seating(),
                ranked,
                rated,
                partners: tally.rules.as_ref().is_some_and(|r| r.partners),
            });
        }
        TableEvent::SeatHandedToBot { .. }
        | TableEvent::SeatReclaimed { .. }
        | TableEvent::ClientSeedSent { .. } => {}
    }
    Ok(())
}

fn fold_played(
    tally: &mut Tally,
    event: &Event,
    changes: &mut Vec<Change>,
) -> Result<(), FoldError> {
    match event {
        Event::PenaltyCharged {
            id,
            seat,
            points,
            reason,
        } => {
            let hand = hand_of(tally, "penalty_charged")?;
            hand.penalties.push(Charged {
                id: *id,
                seat: *seat,
                points: *points,
                reason: *reason,
                voided: false,
            });
            let hand = tally.hand.as_ref().expect("just used");
            let mut entry = tally.entry(hand, *seat, Kind::Penalty, reason.code(), *points);
            entry.penalty_id = Some(*id);
            changes.push(Change::Entry(entry));
        }
        Event::TableRolledBack { seat, voided } => {
            let hand = hand_of(tally, "table_rolled_back")?;
            let s = *seat as usize % 4;
            if hand.opened_this_turn[s] {
                hand.opened[s] = None;
                hand.opened_this_turn[s] = false;
            }
            void(tally, voided, "table_rolled_back", changes);
        }
        Event::HandCancelled { voided } => {
            hand_of(tally, "hand_cancelled")?;
            void(tally, voided, "hand_cancelled", changes);
        }
        Event::HandOpened { seat, kind, .. } => {
            let hand = hand_of(tally, "hand_opened")?;
            hand.opened[*seat as usize % 4] = Some(*kind);
            hand.opened_this_turn[*seat as usize % 4] = true;
        }
        Event::TileDiscarded { seat, .. } => {
            let hand = hand_of(tally, "tile_discarded")?;
            hand.opened_this_turn[*seat as usize % 4] = false;
        }
        _ => {}
    }
    Ok(())
}

/// A `void` row for each listed penalty still standing.
fn void(tally: &mut Tally, ids: &[u32], by: &'static str, changes: &mut Vec<Change>) {
    let Some(hand) = tally.hand.as_mut() else {
        return;
    };
    let mut voided = Vec::new();
    for charged in hand.penalties.iter_mut() {
        if ids.contains(&charged.id) && !charged.voided {
            charged.voided = true;
            voided.push(*charged);
        }
    }
    let hand = tally.hand.as_ref().expect("just used");
    for charged in voided {
        let mut entry = tally.entry(
            hand,
            charged.seat,
            Kind::Void,
            charged.reason.code(),
            -charged.points,
        );
        entry.penalty_id = Some(charged.id);
        entry.voided_by = Some(by);
        changes.push(Change::Entry(entry));
    }
}

#[cfg(test)]
mod tests {
    use okey_rules::Preset;
    use okey_table::{Admission, hex, seed_hash};

    use super::*;

    fn public(event: TableEvent) -> Shown {
        okey_table::shown::public(&event)
    }

    fn played(event: &str) -> Shown {
        public(TableEvent::Played {
            hand_number: 1,
            event: serde_json::from_str(event).expect(event),
            first_meld: None,
            noted: Default::default(),
        })
    }

    fn entries(changes: &[Change]) -> Vec<(Seat, Kind, String, i32)> {
        changes
            .iter()
            .filter_map(|c| match c {
                Change::Entry(e) => Some((e.seat, e.kind, e.reason.clone(), e.points)),
                _ => None,
            })
            .collect()
    }

    fn created(rules: RuleSet) -> Tally {
        let mut tally = Tally::default();
        fold(
            &mut tally,
            1,
            &public(TableEvent::TableCreated {
                rules,
                seats: [
                    Some("players/a".into()),
                    Some("bots/strong-1".into()),
                    None,
                    None,
                ],
                admission: Admission::default(),
                server_seed_sha256: None,
            }),
            None,
        )
        .unwrap();
        let seed = [1; 32];
        fold(
            &mut tally,
            2,
            &public(TableEvent::HandDealt {
                hand_number: 1,
                first: 0,
                indicator: "R5".parse().unwrap(),
                seed_sha256: seed_hash(&seed),
                seeding: None,
            }),
            None,
        )
        .unwrap();
        tally
    }

    fn ended(
        tally: &mut Tally,
        end: HandEnd,
        penalties: [i32; 4],
        totals: [i64; 4],
    ) -> Vec<Change> {
        fold(
            tally,
            20,
            &public(TableEvent::HandEnded {
                hand_number: 1,
                end,
                result: HandResult {
                    outcome: end.outcome,
                    winner: end.winner,
                    penalties,
                    scores: end.scores,
                },
                totals,
                seed: hex(&[1; 32]),
                racks: Default::default(),
                server_seed: None,
            }),
            None,
        )
        .unwrap()
    }

    #[test]
    fn a_verified_cancelled_deal_gives_every_hand_score_its_basis() {
        let mut tally = created(Preset::Classic.rules());
        let end = HandEnd {
            outcome: Outcome::Cancelled,
            winner: None,
            multiplier: 1,
            scores: [0; 4],
        };
        let verified = Verification {
            problem: None,
            at: None,
            bases: Some([ScoreBasis::Cancelled; 4]),
        };
        let changes = fold(
            &mut tally,
            20,
            &public(TableEvent::HandEnded {
                hand_number: 1,
                end,
                result: HandResult {
                    outcome: Outcome::Cancelled,
                    winner: None,
                    penalties: [0; 4],
                    scores: [0; 4],
                },
                totals: [0; 4],
                seed: hex(&[1; 32]),
                racks: Default::default(),
                server_seed: None,
            }),
            Some(&verified),
        )
        .unwrap();
        let bases: Vec<_> = changes
            .iter()
            .filter_map(|c| match c {
                Change::Entry(e) if e.kind == Kind::HandScore => Some(e.basis.as_deref()),
                _ => None,
            })
            .collect();
        assert_eq!(bases, vec![Some("hand cancelled: 0"); 4]);
    }

    #[test]
    fn penalties_voids_and_four_hand_scores_add_up_to_the_totals() {
        let mut tally = created(Preset::Classic.rules());
        let charged = fold(
            &mut tally,
            3,
            &played(r#"{"type":"penalty_charged","id":0,"seat":2,"points":101,"reason":"discard_okey"}"#),
            None,
        )
        .unwrap();
        assert_eq!(
            entries(&charged),
            vec![(2, Kind::Penalty, "discard_okey".into(), 101)]
        );
        fold(
            &mut tally,
            4,
            &played(r#"{"type":"hand_opened","seat":1,"kind":"pairs","amount":5,"melds":[]}"#),
            None,
        )
        .unwrap();
        fold(
            &mut tally,
            5,
            &played(r#"{"type":"penalty_charged","id":1,"seat":1,"points":101,"reason":"okey_retrieved"}"#),
            None,
        )
        .unwrap();
        let rolled = fold(
            &mut tally,
            6,
            &played(r#"{"type":"table_rolled_back","seat":1,"voided":[1]}"#),
            None,
        )
        .unwrap();
        assert_eq!(
            entries(&rolled),
            vec![(1, Kind::Void, "okey_retrieved".into(), -101)]
        );
        let end = HandEnd {
            outcome: Outcome::Finished,
            winner: Some(0),
            multiplier: 1,
            scores: [-101, 202, 0, 30],
        };
        let changes = ended(&mut tally, end, [0, 0, 101, 0], [-101, 202, 101, 30]);
        assert_eq!(
            entries(&changes),
            vec![
                (0, Kind::HandScore, "finished".into(), -101),
                (1, Kind::HandScore, "never_opened".into(), 202),
                (2, Kind::HandScore, "never_opened".into(), 0),
                (3, Kind::HandScore, "never_opened".into(), 30),
            ],
            "the rollback undid seat 1's opening of that turn; zero scores are written"
        );
        let Change::Entry(first) = &changes[0] else {
            panic!()
        };
        assert_eq!(first.player.as_deref(), Some("players/a"));
        let Change::Entry(bot) = &changes[1] else {
            panic!()
        };
        assert_eq!(bot.player, None, "a bot seat charges nobody");
    }

    #[test]
    fn a_cancelled_hand_voids_every_penalty_and_scores_nothing() {
        let mut tally = created(Preset::Classic.rules());
        fold(
            &mut tally,
            3,
            &played(r#"{"type":"penalty_charged","id":0,"seat":3,"points":101,"reason":"discard_playable"}"#),
            None,
        )
        .unwrap();
        let cancelled = fold(
            &mut tally,
            4,
            &played(r#"{"type":"hand_cancelled","voided":[0]}"#),
            None,
        )
        .unwrap();
        assert_eq!(
            entries(&cancelled),
            vec![(3, Kind::Void, "discard_playable".into(), -101)]
        );
        let Change::Entry(void) = &cancelled[0] else {
            panic!()
        };
        assert_eq!(void.voided_by, Some("hand_cancelled"));
        let end = HandEnd {
            outcome: Outcome::Cancelled,
            winner: None,
            multiplier: 1,
            scores: [0; 4],
        };
        let changes = ended(&mut tally, end, [0; 4], [0; 4]);
        assert!(
            entries(&changes)
                .iter()
                .all(|(_, k, r, p)| *k == Kind::HandScore && r == "cancelled" && *p == 0)
        );
    }

    #[test]
    fn a_floored_total_is_a_floor_row() {
        let mut rules = Preset::Classic.rules();
        rules.floor_totals_at_zero = true;
        let mut tally = created(rules);
        let end = HandEnd {
            outcome: Outcome::Finished,
            winner: Some(0),
            multiplier: 2,
            scores: [-202, 404, 10, 20],
        };
        let changes = ended(&mut tally, end, [0; 4], [0, 404, 10, 20]);
        assert_eq!(
            entries(&changes).last(),
            Some(&(0, Kind::Floor, "floor_totals_at_zero".into(), 202))
        );
    }

    #[test]
    fn events_out_of_place_are_refused() {
        let mut tally = Tally::default();
        assert_eq!(
            fold(
                &mut tally,
                1,
                &played(
                    r#"{"type":"penalty_charged","id":0,"seat":3,"points":101,"reason":"discard_playable"}"#
                ),
                None
            ),
            Err(FoldError::NoHand("penalty_charged"))
        );
    }

    #[test]
    fn a_seats_bot_is_recorded_by_the_name_the_table_gave_it() {
        let mut tally = Tally::default();
        let changes = fold(
            &mut tally,
            1,
            &public(TableEvent::TableCreated {
                rules: Preset::Classic.rules(),
                seats: [
                    Some("players/a".into()),
                    Some("bots/easy-1".into()),
                    None,
                    None,
                ],
                admission: Admission::default(),
                server_seed_sha256: None,
            }),
            None,
        )
        .unwrap();
        let [Change::MatchCreated { seating, .. }] = &changes[..] else {
            panic!("{changes:?}");
        };
        assert_eq!(seating.bots, [false, true, false, false]);
        assert_eq!(
            seating.bot_names,
            [None, Some("bots/easy-1".into()), None, None]
        );
        // A bot that sits down later, then a person who takes a bot's seat before the deal.
        let seat_taken = |seat: Seat, player: &str| {
            public(TableEvent::SeatTaken {
                seat,
                player: player.into(),
                name: None,
            })
        };
        let changes = fold(&mut tally, 2, &seat_taken(2, "bots/strong-2"), None).unwrap();
        let [Change::Seats(seating)] = &changes[..] else {
            panic!("{changes:?}");
        };
        assert_eq!(
            seating.bot_names,
            [
                None,
                Some("bots/easy-1".into()),
                Some("bots/strong-2".into()),
                None
            ]
        );
        let changes = fold(&mut tally, 3, &seat_taken(1, "players/b"), None).unwrap();
        let [Change::Seats(seating)] = &changes[..] else {
            panic!("{changes:?}");
        };
        assert_eq!(seating.bots, [false, false, true, false]);
        assert_eq!(
            seating.bot_names,
            [None, None, Some("bots/strong-2".into()), None]
        );
    }
}
