//! A hand step by step, as support's replay page shows it: after every event of the hand's full
//! history, the whole state (every rack, the melds on the table, the pile count, the discards,
//! who sits where), the event told in the game's words with the reason for each penalty
//! (`okey_rules::replay`), and at the end every seat's score with its basis. The state is folded
//! by the engine (`okey_rules::Hand::evolve`) from the history's entries, so the page renders
//! what the server computed and holds no rule of its own. [`HandReplay`] is the one definition of
//! the JSON the table service serves at `GET /replay/v1/tables/{id}/hands/{n}`
//! (`docs/replay-page.md`); the page reads nothing else.

use okey_rules::hand::{OpenKind, Outcome};
use okey_rules::replay::{meld_text, narrate};
use okey_rules::{Event, Hand, RuleSet, Seat, Tile};
use serde::{Deserialize, Serialize};

use crate::absence::Absence;
use crate::event::TableEvent;
use crate::history::{Entry, HandSpan};

/// A hand's replay: every step from its deal to its end (or, while it is played, to its latest
/// event).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandReplay {
    /// The table, `tables/{id}`.
    pub table: String,
    /// The hand's number in the match, from 1.
    pub hand_number: u32,
    /// The hand has ended. While it is played (support reads it live) the steps stop at its
    /// latest event and no step has scores.
    pub ended: bool,
    /// Table version of the hand's (first) deal.
    pub first_version: u64,
    /// Table version of its last step.
    pub last_version: u64,
    /// The match's rules, as the engine reads them.
    pub rules: RuleSet,
    /// The match totals before this hand, per seat.
    pub totals_before: [i64; 4],
    /// Every step, in order; `steps[i].step == i`.
    pub steps: Vec<Step>,
}

/// One event of the hand and the state after it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Its place in [`HandReplay::steps`], from 0 (the page's `step=`).
    pub step: usize,
    /// The table version of the event.
    pub version: u64,
    /// The event's stable name as the table stores it: `HandDealt` for a deal, the engine's
    /// names for the play (`TileDrawn`, `PenaltyCharged`, ...), `HandEnded`, the table's for seat
    /// changes.
    pub event: String,
    /// The seat the event is about, if it is about one.
    pub seat: Option<Seat>,
    /// What happened and why, in the game's words: `okey_rules::replay`'s line for an engine
    /// event (a penalty names its rule and points, the end every seat's score basis).
    pub told: String,
    /// The penalty this step charged, if it charged one.
    pub penalty: Option<StepPenalty>,
    /// The whole state after the event.
    pub state: StepState,
}

/// The state of the hand after a step, nothing hidden.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepState {
    /// Which deal of the hand number this is: 1 (a hand cancelled because all four opened with
    /// pairs is dealt again as the next number; more only should a stream hold several).
    pub deal: u32,
    /// The indicator tile (`R7`: colour letter and number; `F` is a false joker).
    pub indicator: String,
    /// The okey tile (the wild tile, one above the indicator).
    pub okey: String,
    /// The seat whose turn it is.
    pub turn: Seat,
    /// Tiles left in the centre pile.
    pub pile: usize,
    /// The latest discard while the next player may still take it, and who discarded it.
    pub side_discard: Option<SideDiscard>,
    /// Each seat, 0 to 3.
    pub seats: [SeatState; 4],
    /// The melds on the table, in the order they were laid (their index is how events name
    /// them).
    pub melds: Vec<MeldState>,
    /// Every penalty of the hand so far, voided ones included (marked).
    pub penalties: Vec<StepPenalty>,
    /// Once the hand has ended: every seat's score and its basis.
    pub scores: Option<HandScores>,
}

/// The discard the next player may take.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideDiscard {
    pub seat: Seat,
    pub tile: String,
}

/// One seat after a step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatState {
    pub seat: Seat,
    /// Who sits there: `players/{id}`, `bots/{level}-{seat}`, or nobody.
    pub occupant: Option<String>,
    /// A bot plays the seat for its absent player.
    pub bot_playing: bool,
    /// Its rack, in the engine's order.
    pub rack: Vec<String>,
    /// Its discards, oldest first (the last one may be the side discard).
    pub discards: Vec<String>,
    /// How it opened (`melds worth 104`, `5 pairs`), if it has.
    pub opened: Option<String>,
    /// Its in-play penalties so far, voided ones left out.
    pub penalty_points: i32,
}

/// A meld on the table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeldState {
    /// Its index on the table.
    pub index: usize,
    /// The seat that laid it.
    pub owner: Seat,
    /// Its form, tiles (an okey as `tile=what it stands for`) and worth, told.
    pub text: String,
    /// Its tiles as placed.
    pub tiles: Vec<String>,
}

/// An in-play penalty.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepPenalty {
    /// Numbers the hand's penalties from 0.
    pub id: u32,
    pub seat: Seat,
    pub points: i32,
    /// The rule's stable code (`wrong_opening`, `discard_okey`, ...).
    pub rule: String,
    /// Undone by a table rollback or a cancelled hand.
    pub voided: bool,
}

/// The end of the hand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandScores {
    /// `finished`, `pile_empty` or `cancelled`.
    pub outcome: String,
    /// The seat that went out.
    pub winner: Option<Seat>,
    /// The finish multiplier (1 with no winner).
    pub multiplier: i32,
    /// Each seat, 0 to 3.
    pub seats: [SeatScore; 4],
    /// With partners, each team (seats 0 and 2, seats 1 and 3): what decides the match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teams: Option<[TeamScore; 2]>,
}

/// A team's score at the end of the hand: its two seats' together.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamScore {
    /// 0 for seats 0 and 2, 1 for seats 1 and 3.
    pub team: u8,
    pub seats: [Seat; 2],
    /// The seats' end-of-hand scores added.
    pub hand_score: i32,
    /// The seats' in-play penalties that stand, added.
    pub penalties: i32,
    /// The team's match total after this hand (its seats' totals added).
    pub total: i64,
}

/// One seat's score at the end of the hand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatScore {
    pub seat: Seat,
    /// Why the end-of-hand score is what it is (`opened with melds: rack 23 x 1 = 23`).
    pub basis: String,
    /// The end-of-hand score (in-play penalties not included).
    pub hand_score: i32,
    /// The in-play penalties that stand.
    pub penalties: i32,
    /// The match total after this hand.
    pub total: i64,
}

fn texts(tiles: impl IntoIterator<Item = Tile>) -> Vec<String> {
    tiles.into_iter().map(|t| t.to_string()).collect()
}

/// The seat an engine event is about: the mover's, the winner's for the end, the first
/// player's for the deal.
fn seat_of(event: &Event) -> Option<Seat> {
    match event {
        Event::HandEnded { end } => end.winner,
        Event::HandStarted { deal, .. } => Some(deal.first),
        _ => event.seat(),
    }
}

/// A table event that is not the engine's (seat changes, client seeds), told: the page's words,
/// which `okeyctl replay` prints too.
pub fn table_told(event: &TableEvent) -> (Option<Seat>, String) {
    match event {
        TableEvent::SeatTaken { seat, player, .. } => {
            (Some(*seat), format!("{player} sat down in seat {seat}"))
        }
        TableEvent::SeatLeft {
            seat,
            player,
            bot_substitute,
        } => (
            Some(*seat),
            if *bot_substitute {
                format!("{player} left seat {seat}: a bot plays it until they come back")
            } else {
                format!("{player} left seat {seat}")
            },
        ),
        TableEvent::SeatHandedToBot { seat, player } => (
            Some(*seat),
            format!(
                "seat {seat}'s move deadline passed too often in a row: a bot plays it for {player} until they come back"
            ),
        ),
        TableEvent::SeatReclaimed { seat, player } => (
            Some(*seat),
            format!("{player} came back and plays seat {seat} again"),
        ),
        TableEvent::ClientSeedSent {
            seat, hand_number, ..
        } => (
            Some(*seat),
            format!("seat {seat} sent a client seed for hand {hand_number}"),
        ),
        other => (None, other.name().to_owned()),
    }
}

fn penalty(p: &okey_rules::hand::Penalty) -> StepPenalty {
    StepPenalty {
        id: p.id,
        seat: p.seat,
        points: p.points,
        rule: p.reason.code().to_owned(),
        voided: p.voided,
    }
}

fn outcome(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Finished => "finished",
        Outcome::PileEmpty => "pile_empty",
        Outcome::Cancelled => "cancelled",
    }
}

/// The state of `hand` (deal `deal`), with who sits where.
fn state(
    hand: &Hand,
    deal: u32,
    seats: &[Option<String>; 4],
    absence: &Absence,
    (totals_before, totals): ([i64; 4], [i64; 4]),
) -> StepState {
    let penalties = hand.penalty_totals();
    // A total the table's rules floored at zero (yudum) is not the plain sum: the basis says so.
    let basis = |s: usize, basis: String, score: i32| {
        let summed = totals_before[s] + i64::from(score) + i64::from(penalties[s]);
        if summed == totals[s] {
            basis
        } else {
            format!(
                "{basis}; match total {} + {score} + {} = {summed}, written as {}: this table's \
                 rules floor totals at zero",
                totals_before[s], penalties[s], totals[s]
            )
        }
    };
    let scores = match (hand.end, hand.score_bases()) {
        (Some(end), Some(bases)) => Some(HandScores {
            outcome: outcome(end.outcome).to_owned(),
            winner: end.winner,
            multiplier: end.multiplier,
            seats: std::array::from_fn(|s| SeatScore {
                seat: s as Seat,
                basis: basis(s, bases[s].to_string(), end.scores[s]),
                hand_score: end.scores[s],
                penalties: penalties[s],
                total: totals[s],
            }),
            teams: hand.rules.partners.then(|| {
                std::array::from_fn(|team| {
                    let pair = [team, team + 2];
                    TeamScore {
                        team: team as u8,
                        seats: pair.map(|s| s as Seat),
                        hand_score: pair.iter().map(|&s| end.scores[s]).sum(),
                        penalties: pair.iter().map(|&s| penalties[s]).sum(),
                        total: pair.iter().map(|&s| totals[s]).sum(),
                    }
                })
            }),
        }),
        _ => None,
    };
    StepState {
        deal,
        indicator: hand.indicator.to_string(),
        okey: hand.okey.tile().to_string(),
        turn: hand.turn.seat,
        pile: hand.pile_len(),
        // As the seat views show it (`SeatView.side_discard`): no longer once it was taken, given
        // back or passed over with a draw.
        side_discard: hand.side_discard_on_offer().map(|tile| SideDiscard {
            seat: okey_rules::prev_seat(hand.turn.seat),
            tile: tile.to_string(),
        }),
        seats: std::array::from_fn(|s| SeatState {
            seat: s as Seat,
            occupant: seats[s].clone(),
            bot_playing: absence.substituted[s],
            rack: texts(hand.racks[s].iter()),
            discards: texts(hand.discards[s].iter().copied()),
            opened: hand.opened[s].map(|o| match o.kind {
                OpenKind::Melds => format!("melds worth {}", o.amount),
                OpenKind::Pairs => format!("{} pairs", o.amount),
            }),
            penalty_points: penalties[s],
        }),
        melds: hand
            .table
            .iter()
            .enumerate()
            .map(|(index, m)| MeldState {
                index,
                owner: m.owner,
                text: meld_text(hand, m),
                tiles: texts(m.tiles.iter().map(|p| p.tile)),
            })
            .collect(),
        penalties: hand.penalties.iter().map(penalty).collect(),
        scores,
    }
}

/// Every step of the hand `span` is, from its history `entries` (as
/// `crate::history::entries` gives them for the whole span) and `events`, the table's whole
/// stream in version order (who sits where is folded from it). `table` is the table's name,
/// `tables/{id}`. Entries before the hand's first deal are left out (a history never has any).
pub fn hand_replay(
    table: &str,
    events: &[TableEvent],
    span: &HandSpan,
    entries: &[(u64, Entry)],
) -> HandReplay {
    let mut seats: [Option<String>; 4] = Default::default();
    let mut absence = Absence::default();
    let before = (span.first_version.saturating_sub(1) as usize).min(events.len());
    for event in &events[..before] {
        event.reseat(&mut seats);
        absence.evolve(event);
    }
    // The deal being folded: its number, its engine events so far and the hand they fold to.
    let mut deal: Option<(u32, Vec<Event>, Hand)> = None;
    let mut deals = 0;
    // Per step: the deal (and its engine event's index) whose narration tells it.
    let mut told_by: Vec<Option<(usize, usize)>> = Vec::new();
    let mut engine_deals: Vec<Vec<Event>> = Vec::new();
    let mut steps = Vec::new();
    let mut totals = span.totals_before;
    let mut totals_before = span.totals_before;
    for (version, entry) in entries {
        let Some(stored) = events.get(*version as usize - 1) else {
            continue;
        };
        stored.reseat(&mut seats);
        absence.evolve(stored);
        let engine = match (entry, stored) {
            (Entry::Deal { deal: dealt, .. }, _) => Some(Event::HandStarted {
                rules: span.rules.clone(),
                deal: dealt.clone(),
            }),
            (Entry::Event, TableEvent::Played { event, .. }) => Some(event.clone()),
            (
                Entry::Event,
                TableEvent::HandEnded {
                    end, totals: after, ..
                },
            ) => {
                totals_before = totals;
                totals = *after;
                Some(Event::HandEnded { end: *end })
            }
            (Entry::Event, _) => None,
        };
        let (seat, told, charged) = match engine {
            Some(event) => {
                if let Event::HandStarted { .. } = event {
                    if let Some((_, folded, _)) = deal.take() {
                        engine_deals.push(folded);
                    }
                    deals += 1;
                    let hand = Hand::from_start(&event);
                    deal = Some((deals, vec![event.clone()], hand));
                } else if let Some((_, folded, hand)) = &mut deal {
                    hand.evolve(&event);
                    folded.push(event.clone());
                } else {
                    continue;
                }
                let at = deal.as_ref().map(|(_, folded, _)| folded.len() - 1);
                told_by.push(at.map(|i| (engine_deals.len(), i)));
                let charged = match &event {
                    Event::PenaltyCharged { id, .. } => deal.as_ref().and_then(|(_, _, hand)| {
                        hand.penalties.iter().find(|p| p.id == *id).map(penalty)
                    }),
                    _ => None,
                };
                (seat_of(&event), String::new(), charged)
            }
            None => {
                if deal.is_none() {
                    continue;
                }
                told_by.push(None);
                let (seat, told) = table_told(stored);
                (seat, told, None)
            }
        };
        let Some((number, _, hand)) = &deal else {
            continue;
        };
        steps.push(Step {
            step: steps.len(),
            version: *version,
            event: stored.name().to_owned(),
            seat,
            told,
            penalty: charged,
            state: state(hand, *number, &seats, &absence, (totals_before, totals)),
        });
    }
    if let Some((_, folded, _)) = deal.take() {
        engine_deals.push(folded);
    }
    let narrated: Vec<Vec<String>> = engine_deals
        .iter()
        .map(|d| narrate(d).into_iter().map(|line| line.text).collect())
        .collect();
    for (step, by) in steps.iter_mut().zip(told_by) {
        if let Some((d, i)) = by
            && let Some(text) = narrated.get(d).and_then(|lines| lines.get(i))
        {
            step.told = text.clone();
        }
    }
    HandReplay {
        table: table.to_owned(),
        hand_number: span.hand_number,
        ended: span.ended,
        first_version: span.first_version,
        last_version: steps.last().map_or(span.first_version, |s| s.version),
        rules: span.rules.clone(),
        totals_before: span.totals_before,
        steps,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use okey_rules::{Command, MatchLength, Preset};

    use super::*;
    use crate::history::{self, Reader};
    use crate::table::{Table, server_command};

    /// A table of three players and a bot whose first hand is played to its end by timeouts
    /// (the server's play).
    fn played() -> (Vec<TableEvent>, BTreeMap<u32, [u8; 32]>) {
        played_with(RuleSet {
            match_length: MatchLength::Hands(2),
            ..Preset::Classic.rules()
        })
    }

    fn played_with(rules: RuleSet) -> (Vec<TableEvent>, BTreeMap<u32, [u8; 32]>) {
        let seats = [
            Some("players/a".to_owned()),
            Some("players/b".to_owned()),
            Some("players/c".to_owned()),
            Some("bots/strong-3".to_owned()),
        ];
        let created = Table::create(rules, seats, &[7; 32]).unwrap();
        let mut events = created.events.clone();
        let mut stored: BTreeMap<u32, [u8; 32]> = created.seeds.iter().copied().collect();
        let mut table = Table::replay(&events, stored.clone());
        for _ in 0..500 {
            let seat = table.hand.as_ref().unwrap().turn.seat;
            let d = table
                .decide(&server_command(seat, Command::Timeout, None), &[2; 32])
                .unwrap();
            table.apply(&d);
            stored.extend(d.seeds.iter().copied());
            let ended = d
                .events
                .iter()
                .any(|e| matches!(e, TableEvent::HandEnded { .. }));
            events.extend(d.events);
            if ended {
                return (events, stored);
            }
        }
        panic!("the hand did not end");
    }

    #[test]
    fn every_step_is_the_engine_fold_told_by_the_replay() {
        let (events, stored) = played();
        let span = history::hand_span(&events, 1).unwrap();
        history::admit(Some(&span), 1, Reader::Support("players/s")).unwrap();
        let entries = history::entries(&events, &span, 0, |n| stored.get(&n).copied()).unwrap();
        let replay = hand_replay("tables/t", &events, &span, &entries);
        assert!(replay.ended);
        assert_eq!(replay.steps.len(), entries.len());
        assert_eq!(replay.last_version, span.last_version);

        // The engine's own fold and narration of the same hand.
        let hand_events: Vec<(u64, &TableEvent)> = (span.first_version..=span.last_version)
            .map(|v| (v, &events[v as usize - 1]))
            .collect();
        let deals = history::hand_deals(&span.rules, hand_events, 1).unwrap();
        assert_eq!(deals.len(), 1);
        let engine = &deals[0];
        let told = narrate(engine);
        // Every engine event is a step told by the replay; the table's own events between them
        // (here: seats handed to bots after their deadlines passed) are steps that change no tile.
        let mut k = 0;
        let mut handed = 0;
        for (i, step) in replay.steps.iter().enumerate() {
            assert_eq!(step.step, i);
            let table_event = matches!(
                events[step.version as usize - 1],
                TableEvent::SeatHandedToBot { .. }
            );
            if table_event {
                handed += 1;
                let seat = step.seat.unwrap() as usize;
                assert!(step.state.seats[seat].bot_playing, "{step:?}");
                assert!(step.told.contains("a bot plays it"), "{}", step.told);
            } else {
                assert_eq!(step.told, told[k].text, "step {i}");
                k += 1;
            }
            let hand = Hand::replay(&engine[..k]).unwrap();
            for s in 0..4 {
                assert_eq!(step.state.seats[s].rack, texts(hand.racks[s].iter()));
                assert_eq!(
                    step.state.seats[s].discards,
                    texts(hand.discards[s].iter().copied())
                );
            }
            assert_eq!(step.state.pile, hand.pile_len());
            // The side discard as the seat views show it: on offer until taken or passed over.
            assert_eq!(
                step.state.side_discard.as_ref().map(|d| d.tile.clone()),
                hand.side_discard_on_offer().map(|t| t.to_string()),
                "step {i}"
            );
            assert_eq!(step.state.melds.len(), hand.table.len());
            assert_eq!(
                step.state.seats[3].occupant.as_deref(),
                Some("bots/strong-3")
            );
            assert_eq!(step.penalty.is_some(), step.event == "PenaltyCharged");
        }
        assert_eq!(k, engine.len(), "every engine event is a step");
        assert!(handed > 0, "the players' seats went to bots");
        assert_eq!(replay.steps[0].event, "HandDealt");
        assert_eq!(replay.steps[0].state.pile, 20);

        // The end: every seat's score, its basis and the match total.
        let last = replay.steps.last().unwrap();
        assert_eq!(last.event, "HandEnded");
        let TableEvent::HandEnded { end, totals, .. } = &events[span.last_version as usize - 1]
        else {
            panic!("the hand ends")
        };
        let scores = last.state.scores.as_ref().expect("scores at the end");
        let hand = Hand::replay(engine).unwrap();
        let bases = hand.score_bases().unwrap();
        for s in 0..4 {
            assert_eq!(scores.seats[s].hand_score, end.scores[s]);
            assert_eq!(scores.seats[s].basis, bases[s].to_string());
            assert_eq!(scores.seats[s].total, totals[s]);
            assert!(last.told.contains(&scores.seats[s].basis));
        }
        assert_eq!(scores.teams, None, "no teams without partners");
        assert!(
            replay.steps[..replay.steps.len() - 1]
                .iter()
                .all(|s| s.state.scores.is_none())
        );

        // A live read (support) stops at the latest event, without scores.
        let live = history::hand_span(&events[..20], 1).unwrap();
        let entries =
            history::entries(&events[..20], &live, 0, |n| stored.get(&n).copied()).unwrap();
        let replay = hand_replay("tables/t", &events[..20], &live, &entries);
        assert!(!replay.ended);
        assert_eq!(replay.last_version, 20);
        assert!(replay.steps.iter().all(|s| s.state.scores.is_none()));

        // The JSON form reads back as it was written.
        let json = serde_json::to_string(&replay).unwrap();
        assert_eq!(serde_json::from_str::<HandReplay>(&json).unwrap(), replay);
    }

    #[test]
    fn with_partners_the_end_adds_each_team_s_scores() {
        let (events, stored) = played_with(RuleSet {
            partners: true,
            match_length: MatchLength::Hands(2),
            ..Preset::Classic.rules()
        });
        let span = history::hand_span(&events, 1).unwrap();
        let entries = history::entries(&events, &span, 0, |n| stored.get(&n).copied()).unwrap();
        let replay = hand_replay("tables/t", &events, &span, &entries);
        let scores = replay.steps.last().unwrap().state.scores.clone().unwrap();
        let teams = scores.teams.expect("team scores with partners");
        for (team, t) in teams.iter().enumerate() {
            let [a, b] = [&scores.seats[team], &scores.seats[team + 2]];
            assert_eq!(t.team as usize, team);
            assert_eq!(t.seats, [team as Seat, team as Seat + 2]);
            assert_eq!(t.hand_score, a.hand_score + b.hand_score);
            assert_eq!(t.penalties, a.penalties + b.penalties);
            assert_eq!(t.total, a.total + b.total);
        }
        let json = serde_json::to_string(&replay).unwrap();
        assert!(
            json.contains(r#""teams":[{"team":0,"seats":[0,2]"#),
            "{json}"
        );
    }
}
