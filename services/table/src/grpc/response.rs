//! Writing answers: the domain's tables, views, events and messages in their wire form.

/// The one wire form of commands is the platform's (also `okeyctl demo`'s).
pub use okey_platform::command::command_to_proto;
use okey_platform::rule_set::rules_to_proto;
use okey_proto::v1 as pb;
use okey_rules::meld::Form;
use okey_rules::view::TakenView;
use okey_rules::{
    Command, Event, OpenKind, Outcome as HandOutcome, Seat, SeatView, TableMeld, Tile,
};
use sqlx::types::chrono::{DateTime, Utc};
use tonic::Status;

use super::errors::{Failure, status_of};
use crate::chat::{Channel, ChatMessage};
use crate::domain::history::Entry;
use crate::domain::{Noted, Origin, Shown, TableEvent};
use crate::presence::Presence;
use crate::service::{HistoryEvent, Outcome, PhaseName, Summary};

pub(super) fn presence_to_proto(p: Presence) -> pb::Presence {
    match p {
        Presence::Unknown => pb::Presence::Unspecified,
        Presence::Connected => pb::Presence::Connected,
        Presence::Away => pb::Presence::Away,
        Presence::Gone => pb::Presence::Gone,
    }
}

pub(super) fn chat_to_proto(m: &ChatMessage) -> pb::ChatMessage {
    pb::ChatMessage {
        name: format!("tables/{}/messages/{}", m.table, m.id),
        channel: match m.channel {
            Channel::Table => pb::ChatChannel::Table,
            Channel::Team(_) => pb::ChatChannel::Partner,
        } as i32,
        sender_seat: i32::from(m.sender_seat),
        sender: m.sender.clone(),
        text: m.text.clone(),
        send_time: DateTime::from_timestamp_millis(m.sent_at_ms).map(timestamp),
    }
}

/// A seat's occupant as others see it: the platform's one wire form, which scoring and
/// matchmaking show too.
pub(super) use okey_platform::occupant::player_summary;

pub(super) fn origin_to_proto(origin: Origin) -> pb::TableOrigin {
    match origin {
        Origin::Operator => pb::TableOrigin::Operator,
        Origin::QuickPlay => pb::TableOrigin::QuickPlay,
        Origin::PrivateRoom => pb::TableOrigin::PrivateRoom,
    }
}

pub(super) fn timestamp(t: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: t.timestamp(),
        nanos: t.timestamp_subsec_nanos() as i32,
    }
}

pub(super) fn opening_kind(kind: Option<OpenKind>) -> i32 {
    let kind = match kind {
        None => pb::OpeningKind::Unspecified,
        Some(OpenKind::Melds) => pb::OpeningKind::Melds,
        Some(OpenKind::Pairs) => pb::OpeningKind::Pairs,
    };
    kind as i32
}

/// The match played at a table: a match is one table (`okey_rules::matches`), so it is named by
/// the table's UUID, `matches/{table}`.
pub(super) fn match_name(table_id: &str) -> String {
    format!("matches/{table_id}")
}

pub(super) fn table_to_proto(s: &Summary) -> pb::Table {
    let holders = s.holders();
    pb::Table {
        name: format!("tables/{}", s.table_id),
        rules: Some(rules_to_proto(&s.rules)),
        seats: (0..4)
            .map(|i| pb::SeatSummary {
                seat: i as i32,
                player: holders[i]
                    .as_deref()
                    .map(|p| player_summary(p, s.names[i].as_deref())),
                presence: pb::Presence::Unspecified as i32,
                rack_count: s.rack_counts[i] as i32,
                opened: opening_kind(s.opened[i]),
                total: s.totals[i] as i32,
                bot_substitute: s.substituted[i],
            })
            .collect(),
        state: match s.phase {
            PhaseName::Waiting => pb::TableState::Waiting,
            PhaseName::Playing => pb::TableState::Playing,
            PhaseName::Finished => pb::TableState::Finished,
        } as i32,
        hand_number: s.hand_number as i32,
        version: s.version as i64,
        r#match: match_name(&s.table_id),
        create_time: s
            .created_at
            .and_then(DateTime::from_timestamp_millis)
            .map(timestamp),
        origin: origin_to_proto(s.admission.origin) as i32,
        members: s.admission.members.clone(),
        spectators_allowed: s.admission.spectators,
        next_server_seed_sha256: s.next_server_seed_sha256.clone().unwrap_or_default(),
    }
}

pub(super) fn meld_text(m: &TableMeld) -> Vec<String> {
    m.tiles
        .iter()
        .map(|p| {
            if p.tile.printed() == Some(p.reads) {
                p.tile.name().to_owned()
            } else {
                format!("{}={}", p.tile, p.reads)
            }
        })
        .collect()
}

pub(super) fn meld_to_proto(number: usize, m: &TableMeld) -> pb::Meld {
    pb::Meld {
        number: number as i32,
        kind: match m.form {
            Form::Run { .. } => pb::MeldKind::Run,
            Form::Set { .. } => pb::MeldKind::Set,
            Form::Pair { .. } => pb::MeldKind::Pair,
        } as i32,
        tiles: meld_text(m),
        owner_seat: m.owner as i32,
        value: m.value() as i32,
    }
}

/// A turn deadline (ms since the Unix epoch) as a timestamp.
pub(super) fn deadline_to_proto(ms: u64) -> Option<prost_types::Timestamp> {
    DateTime::from_timestamp_millis(i64::try_from(ms).ok()?).map(timestamp)
}

/// The view in both forms (see [`view_in`]).
pub(super) fn view_to_proto(outcome: &Outcome) -> pb::SeatView {
    view_in(outcome, pb::SeatViewForm::Unspecified)
}

/// The view in the forms `form` asks for.
pub(super) fn view_in(outcome: &Outcome, form: pb::SeatViewForm) -> pb::SeatView {
    let s = &outcome.summary;
    let mut out = pb::SeatView {
        table: format!("tables/{}", s.table_id),
        seat: outcome.seat.map_or(-1, i32::from),
        version: s.version as i64,
        summary: Some(table_to_proto(s)),
        hand_number: s.hand_number as i32,
        ..Default::default()
    };
    // A spectator's view is the public one: everything but a rack, and neither the engine form
    // (whose `seat` would name a seat the caller does not hold) nor a seat's thresholds.
    let (v, seated) = match (&outcome.view, &outcome.public) {
        (Some(v), _) => (v, true),
        (None, Some(v)) => (v, false),
        (None, None) => return out,
    };
    out.turn_deadline = outcome.turn_deadline_ms.and_then(deadline_to_proto);
    let seat = v.seat as usize;
    out.phase = phase_of(v) as i32;
    out.turn_seat = v.turn_seat as i32;
    if seated && form != pb::SeatViewForm::Typed {
        out.engine_view = serde_json::to_string(v).expect("views serialize");
    }
    if form == pb::SeatViewForm::Engine {
        return out;
    }
    out.rack = v.rack.iter().map(|t| t.name().to_owned()).collect();
    out.indicator = v.indicator.name().to_owned();
    out.okey = v.okey.tile().name().to_owned();
    out.melds = v
        .table
        .iter()
        .enumerate()
        .map(|(i, m)| meld_to_proto(i, m))
        .collect();
    out.discards = v
        .discards
        .iter()
        .enumerate()
        .map(|(i, d)| pb::DiscardPile {
            seat: i as i32,
            tiles: d.iter().map(|t| t.name().to_owned()).collect(),
        })
        .collect();
    out.pile_count = v.pile_count as i32;
    if !seated {
        out.side_discard = v
            .side_discard
            .map(|t| t.name().to_owned())
            .unwrap_or_default();
        return out;
    }
    out.meld_threshold = v.meld_threshold[seat] as i32;
    out.pair_threshold = v.pair_threshold[seat] as i32;
    if let TakenView::SideDiscard { tile, used: false } = v.taken
        && v.turn_seat == v.seat
    {
        out.held_side_discard = tile.name().to_owned();
    }
    out.side_discard = v
        .side_discard
        .map(|t| t.name().to_owned())
        .unwrap_or_default();
    out
}

pub(super) fn phase_of(v: &SeatView) -> pb::HandPhase {
    if v.end.is_some() {
        pb::HandPhase::Ended
    } else if v.wrong_opening {
        pb::HandPhase::DiscardOnly
    } else if matches!(v.taken, TakenView::Nothing) {
        pb::HandPhase::Take
    } else {
        pb::HandPhase::Act
    }
}

pub(super) fn texts(tiles: &[Tile]) -> Vec<String> {
    tiles.iter().map(|t| t.name().to_owned()).collect()
}

pub(super) fn penalty_to_proto(
    seat: Seat,
    points: i32,
    reason: okey_rules::PenaltyReason,
) -> pb::Penalty {
    pb::Penalty {
        seat: seat as i32,
        points,
        reason: reason.code().to_owned(),
    }
}

/// An event the wire has no form for (a deal not shown through `Shown::Dealt`, an engine event
/// the table stores in its own form): a stored event this build does not read as it expects.
/// INTERNAL `unexpected_event`, never a panic of the call.
fn unexpected_event(what: &str) -> Status {
    status_of(Failure::UnexpectedEvent(what.to_owned()))
}

/// An event of table `table_id` (its UUID as text) as the viewer sees it, on the wire.
pub fn event_to_proto(shown: &Shown, table_id: &str) -> Result<pb::TableEvent, Status> {
    let match_name = match_name(table_id);
    use pb::table_event::Event as E;
    let e = match shown {
        Shown::Dealt {
            hand_number,
            first,
            indicator,
            seed_sha256,
            rack,
            seeding,
        } => E::HandStarted(pb::HandStarted {
            hand_number: *hand_number as i32,
            indicator: indicator.name().to_owned(),
            okey: okey_rules::Okey::from_indicator(*indicator)
                .map(|o| o.tile().name().to_owned())
                .unwrap_or_default(),
            first_seat: *first as i32,
            rack: texts(rack),
            seed_sha256: seed_sha256.clone(),
            seed_derivation: seeding.as_ref().map_or(0, |s| i32::from(s.derivation)),
            server_seed_sha256: seeding
                .as_ref()
                .map(|s| s.server_seed_sha256.clone())
                .unwrap_or_default(),
            client_seeds: seeding
                .as_ref()
                .map(|s| {
                    s.client_seeds
                        .iter()
                        .map(|c| c.clone().unwrap_or_default())
                        .collect()
                })
                .unwrap_or_default(),
            next_server_seed_sha256: seeding
                .as_ref()
                .map(|s| s.next_server_seed_sha256.clone())
                .unwrap_or_default(),
            server_seed_committed_version: seeding.as_ref().map_or(0, |s| s.committed_at as i64),
        }),
        Shown::Drawn { seat, tile, .. } => E::TileDrawn(pb::TileDrawn {
            seat: *seat as i32,
            tile: tile.map(|t| t.name().to_owned()).unwrap_or_default(),
        }),
        Shown::Public { event } => match event {
            TableEvent::TableCreated {
                rules,
                admission,
                server_seed_sha256,
                ..
            } => E::TableCreated(pb::TableCreated {
                rules: Some(rules_to_proto(rules)),
                origin: origin_to_proto(admission.origin) as i32,
                members: admission.members.clone(),
                spectators_allowed: admission.spectators,
                server_seed_sha256: server_seed_sha256.clone().unwrap_or_default(),
            }),
            TableEvent::ClientSeedSent {
                hand_number,
                seat,
                seed,
                ..
            } => E::ClientSeedSent(pb::ClientSeedSent {
                hand_number: *hand_number as i32,
                seat: i32::from(*seat),
                seed: seed.clone(),
            }),
            TableEvent::SeatTaken { seat, player, name } => E::SeatTaken(pb::SeatTaken {
                seat: *seat as i32,
                player: Some(player_summary(player, name.as_deref())),
            }),
            TableEvent::SeatHandedToBot { seat, player } => {
                E::SeatHandedToBot(pb::SeatHandedToBot {
                    seat: *seat as i32,
                    player: player.clone(),
                })
            }
            TableEvent::SeatReclaimed { seat, player } => E::SeatReclaimed(pb::SeatReclaimed {
                seat: *seat as i32,
                player: player.clone(),
            }),
            TableEvent::SeatLeft {
                seat,
                bot_substitute,
                ..
            } => E::SeatLeft(pb::SeatLeft {
                seat: *seat as i32,
                bot_substitute: *bot_substitute,
            }),
            TableEvent::HandDealt { .. } => return Err(unexpected_event("HandDealt")),
            TableEvent::Played {
                event,
                first_meld,
                noted,
                ..
            } => played_to_proto(event, first_meld.unwrap_or(0), noted)?,
            TableEvent::HandEnded {
                hand_number,
                end,
                result,
                totals,
                seed,
                racks,
                server_seed,
            } => E::HandEnded(pb::HandEnded {
                hand_number: *hand_number as i32,
                outcome: match end.outcome {
                    HandOutcome::Finished => pb::HandOutcome::Finished,
                    HandOutcome::PileEmpty => pb::HandOutcome::PileEmpty,
                    HandOutcome::Cancelled => pb::HandOutcome::Cancelled,
                } as i32,
                winner: end.winner.map(i32::from),
                scores: end.scores.to_vec(),
                totals: totals.iter().map(|t| *t as i32).collect(),
                seed: seed.clone(),
                final_racks: racks
                    .iter()
                    .map(|r| pb::MeldTiles { tiles: texts(r) })
                    .collect(),
                penalties: result.penalties.to_vec(),
                server_seed: server_seed.clone().unwrap_or_default(),
            }),
            TableEvent::MatchEnded { totals, winners } => E::MatchEnded(pb::MatchEnded {
                totals: totals.iter().map(|t| *t as i32).collect(),
                winners: winners.iter().map(|s| *s as i32).collect(),
                r#match: match_name,
            }),
        },
    };
    Ok(pb::TableEvent { event: Some(e) })
}

pub(super) fn played_to_proto(
    event: &Event,
    first_meld: usize,
    noted: &Noted,
) -> Result<pb::table_event::Event, Status> {
    use pb::table_event::Event as E;
    let melds = |ms: &[TableMeld]| {
        ms.iter()
            .enumerate()
            .map(|(i, m)| meld_to_proto(first_meld + i, m))
            .collect()
    };
    Ok(match event {
        Event::HandStarted { .. } | Event::HandEnded { .. } => {
            return Err(unexpected_event(event.name()));
        }
        Event::TileDrawn { seat, tile } => E::TileDrawn(pb::TileDrawn {
            seat: *seat as i32,
            tile: tile.to_string(),
        }),
        Event::SideDiscardTaken { seat, tile } => E::SideDiscardTaken(pb::SideDiscardTaken {
            seat: *seat as i32,
            tile: tile.to_string(),
        }),
        Event::SideDiscardReturned { seat, tile } => {
            E::SideDiscardReturned(pb::SideDiscardReturned {
                seat: *seat as i32,
                tile: tile.to_string(),
                rolled_back: noted.rolled_back,
            })
        }
        Event::TableRolledBack { seat, voided } => E::TableRolledBack(pb::TableRolledBack {
            seat: *seat as i32,
            voided_penalties: voided.iter().map(|v| *v as i32).collect(),
        }),
        Event::HandOpened {
            seat,
            kind,
            melds: ms,
            ..
        } => E::HandOpened(pb::HandOpened {
            seat: *seat as i32,
            kind: opening_kind(Some(*kind)),
            melds: melds(ms),
        }),
        // The melds shown stay in the rack: never on the wire, where other seats would see
        // them (the full history, read after the hand or by support, has them).
        Event::WrongOpening {
            seat,
            kind,
            amount,
            needed,
            melds: _,
        } => E::WrongOpening(pb::WrongOpening {
            seat: *seat as i32,
            kind: opening_kind(Some(*kind)),
            amount: *amount as i32,
            needed: *needed as i32,
        }),
        Event::MeldsLaid { seat, melds: ms } => E::MeldsLaid(pb::MeldsLaid {
            seat: *seat as i32,
            melds: melds(ms),
        }),
        Event::TilesAdded {
            seat,
            meld,
            tiles,
            result,
        } => E::TilesAdded(pb::TilesAdded {
            seat: *seat as i32,
            meld: Some(meld_to_proto(*meld, result)),
            tiles: texts(tiles),
        }),
        Event::OkeyRetrieved {
            seat,
            meld,
            okeys,
            result,
            ..
        } => E::OkeyRetrieved(pb::OkeyRetrieved {
            seat: *seat as i32,
            meld: Some(meld_to_proto(*meld, result)),
            okey: okeys
                .iter()
                .map(|p| p.tile.to_string())
                .collect::<Vec<_>>()
                .join(","),
        }),
        Event::TileDiscarded { seat, tile, .. } => E::TileDiscarded(pb::TileDiscarded {
            seat: *seat as i32,
            tile: tile.to_string(),
        }),
        Event::PlayableCalled { seat, fits } => E::PlayableCalled(pb::PlayableCalled {
            seat: *seat as i32,
            tile: noted
                .called
                .map(|t| t.name().to_owned())
                .unwrap_or_default(),
            fitted: *fits,
        }),
        Event::TurnTimedOut { seat } => E::TurnTimedOut(pb::TurnTimedOut {
            seat: *seat as i32,
            in_a_row: noted.in_a_row.map_or(0, i32::from),
        }),
        Event::PenaltyCharged {
            seat,
            points,
            reason,
            ..
        } => E::PenaltyCharged(pb::PenaltyCharged {
            penalty: Some(penalty_to_proto(*seat, *points, *reason)),
        }),
        Event::HandCancelled { voided } => E::HandCancelled(pb::HandCancelled {
            voided_penalties: voided.iter().map(|v| *v as i32).collect(),
        }),
    })
}

/// One event of a hand's full history on the wire: a deal whole, any other event with nothing
/// hidden (a draw names its tile), and the event as stored.
pub(super) fn history_entry_to_proto(
    e: &HistoryEvent,
    table_id: &str,
) -> Result<pb::HandHistoryEntry, Status> {
    use pb::hand_history_entry::Entry as H;
    let entry = match &e.entry {
        Entry::Deal {
            hand_number,
            seed_sha256,
            deal,
        } => H::Deal(pb::HandDeal {
            hand_number: *hand_number as i32,
            first_seat: i32::from(deal.first),
            indicator: deal.indicator.name().to_owned(),
            okey: deal.okey().tile().name().to_owned(),
            seed_sha256: seed_sha256.clone(),
            racks: deal
                .racks
                .iter()
                .map(|r| pb::MeldTiles { tiles: texts(r) })
                .collect(),
            pile: texts(&deal.pile),
        }),
        Entry::Event => {
            let shown = match &e.event {
                TableEvent::Played {
                    hand_number,
                    event: Event::TileDrawn { seat, tile },
                    ..
                } => Shown::Drawn {
                    hand_number: *hand_number,
                    seat: *seat,
                    tile: Some(*tile),
                },
                other => Shown::Public {
                    event: other.clone(),
                },
            };
            H::Event(event_to_proto(&shown, table_id)?)
        }
    };
    Ok(pb::HandHistoryEntry {
        version: e.version as i64,
        time: Some(timestamp(e.time)),
        entry: Some(entry),
        stored_event: serde_json::to_string(&e.event).expect("events serialize"),
    })
}

/// An event a hand's deal depends on (a seed commitment, a client seed): its stored form only,
/// which is public; never the typed form, which for an earlier deal would show its racks.
pub(super) fn input_entry_to_proto(e: &HistoryEvent) -> pb::HandHistoryEntry {
    pb::HandHistoryEntry {
        version: e.version as i64,
        time: Some(timestamp(e.time)),
        entry: None,
        stored_event: serde_json::to_string(&e.event).expect("events serialize"),
    }
}

pub(super) fn penalties_of(events: &[(u64, Shown)]) -> Vec<pb::Penalty> {
    events
        .iter()
        .filter_map(|(_, shown)| match shown {
            Shown::Public {
                event:
                    TableEvent::Played {
                        event:
                            Event::PenaltyCharged {
                                seat,
                                points,
                                reason,
                                ..
                            },
                        ..
                    },
            } => Some(penalty_to_proto(*seat, *points, *reason)),
            _ => None,
        })
        .collect()
}

/// A legal action for people (`LegalAction.hint`): what it does and, when it charges the caller
/// `penalty` points, what it costs.
pub(super) fn hint_text(command: &Command, penalty: i32) -> String {
    let does = action_text(command);
    if penalty > 0 {
        format!("{does} (costs you {penalty} points)")
    } else {
        does
    }
}

/// Whether the melds of an open or lay are pairs (two tiles each) or runs and sets.
fn melds_text(melds: &[Vec<okey_rules::MeldTile>]) -> String {
    let pairs = !melds.is_empty() && melds.iter().all(|m| m.len() == 2);
    match (melds.len(), pairs) {
        (1, true) => "1 pair".into(),
        (n, true) => format!("{n} pairs"),
        (1, false) => "1 meld".into(),
        (n, false) => format!("{n} melds"),
    }
}

fn action_text(command: &Command) -> String {
    match command {
        Command::Draw => "draw from the centre pile".into(),
        Command::TakeDiscard => "take the side discard".into(),
        Command::ReturnDiscard => "give the side discard back".into(),
        Command::Open { melds } => format!("open with {}", melds_text(melds)),
        Command::Lay { melds } => format!("lay {}", melds_text(melds)),
        Command::Add { meld, tiles } => format!("add {} tiles to meld {meld}", tiles.len()),
        Command::Retrieve { meld, .. } => format!("take the okey back from meld {meld}"),
        Command::Discard { tile } => format!("discard {tile}"),
        Command::CallPlayable => "call the previous discard playable".into(),
        Command::Timeout => "timeout".into(),
    }
}

#[cfg(test)]
mod tests {
    use tonic::Code;

    use super::*;

    #[test]
    fn a_hint_says_what_an_action_does_and_what_it_costs() {
        let tile = |t: &str| t.parse::<okey_rules::MeldTile>().unwrap();
        let discard = Command::Discard {
            tile: "R2".parse().unwrap(),
        };
        assert_eq!(hint_text(&discard, 0), "discard R2");
        assert_eq!(
            hint_text(&discard, 101),
            "discard R2 (costs you 101 points)"
        );
        let pairs = Command::Open {
            melds: vec![vec![tile("R2"), tile("R2")], vec![tile("K5"), tile("K5")]],
        };
        assert_eq!(hint_text(&pairs, 0), "open with 2 pairs");
        let melds = Command::Open {
            melds: vec![vec![tile("R2"), tile("R3"), tile("R4")]],
        };
        assert_eq!(
            hint_text(&melds, 101),
            "open with 1 meld (costs you 101 points)"
        );
    }

    #[test]
    fn an_event_without_a_wire_form_is_internal_not_a_panic() {
        let deal = Shown::Public {
            event: TableEvent::HandDealt {
                hand_number: 1,
                first: 0,
                indicator: "R1".parse().unwrap(),
                seed_sha256: String::new(),
                seeding: None,
            },
        };
        let e = event_to_proto(&deal, "t").unwrap_err();
        assert_eq!(e.code(), Code::Internal);
        let ended = Shown::Public {
            event: TableEvent::Played {
                hand_number: 1,
                event: Event::HandEnded {
                    end: okey_rules::HandEnd {
                        outcome: HandOutcome::PileEmpty,
                        winner: None,
                        multiplier: 1,
                        scores: [0; 4],
                    },
                },
                first_meld: None,
                noted: Default::default(),
            },
        };
        assert_eq!(
            event_to_proto(&ended, "t").unwrap_err().code(),
            Code::Internal
        );
    }
}
