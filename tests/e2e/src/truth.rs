//! What the table's own events say every other record must be. The events are read from the
//! table service's event store with the table's own reader (`table::store::Store`); each hand is
//! re-dealt from its revealed seeds (the deal seed, and the server seed it was derived from when
//! the players helped choose it) and folded through the rules engine (a table whose stored
//! results the engine does not reproduce is itself a discrepancy). From them: every ledger entry
//! scoring must hold (per seat, per hand, per event), each match's result, and per player the
//! statistics accounts must show and the standings scoring must rank.

use std::collections::BTreeMap;

use okey_proto::v1 as pb;
use okey_rules::matches::HandResult;
use okey_rules::{Deal, Event, Hand, OpenKind, Outcome, RuleSet};
use okey_table::{Origin, Seed, Seeding, TableEvent, seed_from_hex};
use sqlx::PgPool;
use table::store::{Recorded, Store};
use uuid::Uuid;

/// One table's stored events.
pub struct TableTruth {
    /// `tables/{id}`.
    pub table: String,
    pub id: Uuid,
    pub events: Vec<Recorded>,
    /// Each deal's seed, by the version of its `HandDealt` (revealed by its `HandEnded`).
    pub deal_seeds: BTreeMap<u64, Seed>,
    /// Each deal's stored seed, by the version of its `HandDealt`: the server seed its deal
    /// seed was derived from (`okey_table::seeding`), or the deal seed itself for a hand dealt
    /// without client seeds. What `okey_table::show` re-deals a seat's rack from.
    pub stored_seeds: BTreeMap<u64, Seed>,
}

/// Reads `table`'s events from the table service's database.
pub async fn read_table(table_database_url: &str, table: &str) -> Result<TableTruth, String> {
    let id: Uuid = table
        .strip_prefix("tables/")
        .and_then(|id| id.parse().ok())
        .ok_or_else(|| format!("not a table name: {table}"))?;
    let pool = PgPool::connect(table_database_url)
        .await
        .map_err(|e| format!("the table database: {e}"))?;
    let events = Store::new(pool.clone())
        .load_after(id, 0, 1_000_000)
        .await
        .map_err(|e| format!("{table}: reading its events: {e}"));
    pool.close().await;
    let events = events?;
    let mut deal_seeds = BTreeMap::new();
    let mut stored_seeds = BTreeMap::new();
    let mut dealt: Option<(u64, String, Option<Seeding>)> = None;
    for r in &events {
        match &r.event {
            TableEvent::HandDealt {
                seed_sha256,
                seeding,
                ..
            } => {
                dealt = Some((r.version, seed_sha256.clone(), seeding.clone()));
            }
            TableEvent::HandEnded {
                seed, server_seed, ..
            } => {
                let Some((version, sha, seeding)) = dealt.take() else {
                    continue;
                };
                let Ok(deal) = seed_from_hex(seed, &sha) else {
                    continue;
                };
                // The stored seed: the revealed server seed, which must hash to the deal's
                // commitment and derive the revealed deal seed; else the deal seed itself.
                let stored = match (&seeding, server_seed) {
                    (None, _) => Some(deal),
                    (Some(seeding), Some(server)) => {
                        seed_from_hex(server, &seeding.server_seed_sha256)
                            .ok()
                            .filter(|s| {
                                okey_table::seeding::deal_seed(s, Some(seeding)).ok() == Some(deal)
                            })
                    }
                    (Some(_), None) => None,
                };
                if let Some(stored) = stored {
                    deal_seeds.insert(version, deal);
                    stored_seeds.insert(version, stored);
                }
            }
            _ => {}
        }
    }
    Ok(TableTruth {
        table: table.to_owned(),
        id,
        events,
        deal_seeds,
        stored_seeds,
    })
}

/// A ledger entry as the checks compare it (every field the table's events determine).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub table_version: i64,
    pub event_id: String,
    pub kind: i32,
    pub seat: i32,
    pub penalty_id: Option<i32>,
    pub points: i32,
    pub reason: String,
    pub hand_number: i32,
    pub voided_by: String,
    pub multiplier: i32,
    pub player: String,
    pub team: Option<i32>,
}

impl Entry {
    /// The same fields of an entry scoring answered with.
    pub fn of(e: &pb::LedgerEntry) -> Entry {
        Entry {
            table_version: e.table_version,
            event_id: e.event_id.clone(),
            kind: e.kind,
            seat: e.seat,
            penalty_id: e.penalty_id,
            points: e.points,
            reason: e.reason.clone(),
            hand_number: e.hand_number,
            voided_by: e.voided_by.clone(),
            multiplier: e.multiplier,
            player: e.player.clone(),
            team: e.team,
        }
    }
}

/// One ended deal of a match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandExpect {
    pub hand_number: i32,
    pub outcome: i32,
    pub winner: Option<i32>,
    pub scores: Vec<i32>,
    pub penalties: Vec<i32>,
    pub totals: Vec<i64>,
    pub seed: String,
    pub multiplier: i32,
}

/// What one table's events make of its match.
#[derive(Clone, Debug, Default)]
pub struct MatchExpect {
    pub table: String,
    /// `matches/{id}`.
    pub name: String,
    /// The players at the end, index = seat (`None`: a bot or nobody).
    pub seats: [Option<String>; 4],
    /// Seats a bot occupies.
    pub bots: [bool; 4],
    /// The name of the bot in each seat a bot occupies at the end (`bots/{level}-{seat}`).
    pub bot_names: [Option<String>; 4],
    pub ranked: bool,
    /// A `MatchEnded` was stored.
    pub ended: bool,
    pub totals: Vec<i32>,
    pub winners: Vec<i32>,
    pub hands: Vec<HandExpect>,
    /// Every ledger entry, sorted.
    pub entries: Vec<Entry>,
    /// Engine events played (every seat's moves, bots' and timeouts' included).
    pub moves: usize,
    /// Where the table's own records disagree with the engine's re-derivation.
    pub problems: Vec<String>,
}

/// A player's figures over the tables read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlayerExpect {
    pub hands_played: i64,
    pub hands_won: i64,
    pub score_sum: i64,
    pub hands_opened: i64,
    pub pair_openings: i64,
    pub matches_played: i64,
    pub matches_won: i64,
    /// Ranked matches only (standings).
    pub ranked_played: i64,
    pub ranked_won: i64,
    pub ranked_total_sum: i64,
}

fn outcome_code(o: Outcome) -> i32 {
    match o {
        Outcome::Finished => pb::HandOutcome::Finished as i32,
        Outcome::PileEmpty => pb::HandOutcome::PileEmpty as i32,
        Outcome::Cancelled => pb::HandOutcome::Cancelled as i32,
    }
}

/// The reason of a seat's hand score (see `LedgerEntry.reason`).
fn seat_state(
    rules: &RuleSet,
    hand: &Hand,
    outcome: Outcome,
    winner: Option<u8>,
    seat: u8,
) -> &'static str {
    if outcome == Outcome::Cancelled {
        return "cancelled";
    }
    if winner == Some(seat) {
        return "finished";
    }
    if rules.partners && winner == Some(okey_rules::partner(seat)) {
        return "partner_finished";
    }
    match hand.opened[seat as usize].as_ref().map(|o| o.kind) {
        None => "never_opened",
        Some(OpenKind::Melds) => "opened_melds",
        Some(OpenKind::Pairs) => "opened_pairs",
    }
}

/// Folds one table's events into its match and adds its players' figures to `players`.
pub fn expect(truth: &TableTruth, players: &mut BTreeMap<String, PlayerExpect>) -> MatchExpect {
    let mut m = MatchExpect {
        table: truth.table.clone(),
        name: format!("matches/{}", truth.id),
        ..MatchExpect::default()
    };
    let mut rules: Option<RuleSet> = None;
    let mut origin = Origin::Operator;
    let mut occupants: [Option<String>; 4] = Default::default();
    let mut seats: [Option<String>; 4] = Default::default();
    // The deal being played (its HandDealt version and first seat), its engine events so far
    // and its penalties by number.
    let mut dealt: Option<(u64, u8)> = None;
    let mut played: Vec<Event> = Vec::new();
    let mut penalties: BTreeMap<u32, (u8, i32, &'static str)> = BTreeMap::new();
    let mut voided_once: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();
    let team = |rules: &Option<RuleSet>, seat: u8| {
        rules
            .as_ref()
            .is_some_and(|r| r.partners)
            .then_some(i32::from(seat % 2))
    };
    // Whose each seat is for accounts' statistics (accounts.proto, `Statistics`): `active`, the
    // person playing it; `hand_players`, whose hand in progress it is (who held it at the deal
    // or came back during the hand); `departed`, who left it to a bot (LeaveSeat during the
    // match, or turns that ran out: `SeatHandedToBot`) and has not come back: they keep the
    // hand in progress, and the match counts as played and not won.
    let mut active: [Option<String>; 4] = Default::default();
    let mut hand_players: [Option<String>; 4] = Default::default();
    let mut departed: [Option<String>; 4] = Default::default();
    let person = |p: &String| p.starts_with("players/").then(|| p.clone());
    for r in &truth.events {
        match &r.event {
            TableEvent::TableCreated { seats: created, .. } => {
                active = std::array::from_fn(|s| created[s].as_ref().and_then(person));
                hand_players = active.clone();
            }
            TableEvent::SeatTaken { seat, player, .. }
            | TableEvent::SeatReclaimed { seat, player } => {
                let s = *seat as usize % 4;
                active[s] = person(player);
                if active[s].is_some() {
                    hand_players[s] = active[s].clone();
                    departed[s] = None;
                }
            }
            TableEvent::SeatLeft {
                seat,
                player,
                bot_substitute,
            } => {
                let s = *seat as usize % 4;
                active[s] = None;
                if *bot_substitute {
                    departed[s] = person(player);
                } else {
                    hand_players[s] = None;
                }
            }
            TableEvent::SeatHandedToBot { seat, player } => {
                let s = *seat as usize % 4;
                active[s] = None;
                departed[s] = person(player);
            }
            TableEvent::HandDealt { .. } => hand_players = active.clone(),
            _ => {}
        }
        r.event.reseat(&mut occupants);
        // Occupants are `players/{id}` or a bot's `bots/{level}-{seat}`.
        seats = std::array::from_fn(|s| {
            occupants[s]
                .clone()
                .filter(|name| name.starts_with("players/"))
        });
        m.bots = std::array::from_fn(|s| occupants[s].as_deref().is_some_and(okey_bots::is_bot));
        let event_id = r.event_id.to_string();
        let version = r.version as i64;
        let player_of = |seats: &[Option<String>; 4], seat: u8| {
            seats[seat as usize % 4].clone().unwrap_or_default()
        };
        match &r.event {
            TableEvent::TableCreated {
                rules: created,
                admission,
                ..
            } => {
                rules = Some(created.clone());
                origin = admission.origin;
            }
            TableEvent::HandDealt { first, .. } => {
                dealt = Some((r.version, *first));
                played.clear();
                penalties.clear();
                voided_once.clear();
            }
            TableEvent::Played {
                hand_number, event, ..
            } => {
                m.moves += 1;
                played.push(event.clone());
                match event {
                    Event::PenaltyCharged {
                        id,
                        seat,
                        points,
                        reason,
                    } => {
                        penalties.insert(*id, (*seat, *points, reason.code()));
                        m.entries.push(Entry {
                            table_version: version,
                            event_id: event_id.clone(),
                            kind: pb::LedgerEntryKind::Penalty as i32,
                            seat: i32::from(*seat),
                            penalty_id: Some(*id as i32),
                            points: *points,
                            reason: reason.code().to_owned(),
                            hand_number: *hand_number as i32,
                            voided_by: String::new(),
                            multiplier: 0,
                            player: player_of(&seats, *seat),
                            team: team(&rules, *seat),
                        });
                    }
                    Event::TableRolledBack { voided, .. } | Event::HandCancelled { voided } => {
                        let by = if matches!(event, Event::HandCancelled { .. }) {
                            "hand_cancelled"
                        } else {
                            "table_rolled_back"
                        };
                        for id in voided {
                            let Some((seat, points, reason)) = penalties.get(id).copied() else {
                                m.problems.push(format!(
                                    "{}: version {version} voids penalty {id}, never charged",
                                    truth.table
                                ));
                                continue;
                            };
                            // A penalty is voided once (a later void of it changes nothing).
                            if !voided_once.insert(*id) {
                                continue;
                            }
                            m.entries.push(Entry {
                                table_version: version,
                                event_id: event_id.clone(),
                                kind: pb::LedgerEntryKind::Voided as i32,
                                seat: i32::from(seat),
                                penalty_id: Some(*id as i32),
                                points: -points,
                                reason: reason.to_owned(),
                                hand_number: *hand_number as i32,
                                voided_by: by.to_owned(),
                                multiplier: 0,
                                player: player_of(&seats, seat),
                                team: team(&rules, seat),
                            });
                        }
                    }
                    _ => {}
                }
            }
            TableEvent::HandEnded {
                hand_number,
                end,
                result,
                totals,
                seed,
                ..
            } => {
                let Some(rules) = rules.as_ref() else {
                    m.problems
                        .push(format!("{}: a hand before TableCreated", truth.table));
                    continue;
                };
                let Some((dealt_version, first)) = dealt.take() else {
                    m.problems
                        .push(format!("{}: HandEnded without a deal", truth.table));
                    continue;
                };
                let Some(deal_seed) = truth.deal_seeds.get(&dealt_version) else {
                    m.problems.push(format!(
                        "{}: hand {hand_number}'s seed does not hash to its announcement",
                        truth.table
                    ));
                    continue;
                };
                let hand =
                    Hand::start(rules.clone(), Deal::from_seed(deal_seed, first)).map(|start| {
                        let mut hand = Hand::from_start(&start);
                        for e in &played {
                            hand.evolve(e);
                        }
                        hand.evolve(&Event::HandEnded { end: *end });
                        hand
                    });
                let hand = match hand {
                    Ok(hand) => hand,
                    Err(e) => {
                        m.problems.push(format!(
                            "{}: hand {hand_number} does not re-deal: {e:?}",
                            truth.table
                        ));
                        continue;
                    }
                };
                if HandResult::of(&hand).as_ref() != Some(result) {
                    m.problems.push(format!(
                        "{}: hand {hand_number}: the engine folds {:?}, the table stored {result:?}",
                        truth.table,
                        HandResult::of(&hand)
                    ));
                }
                for s in 0..4u8 {
                    m.entries.push(Entry {
                        table_version: version,
                        event_id: event_id.clone(),
                        kind: pb::LedgerEntryKind::HandScore as i32,
                        seat: i32::from(s),
                        penalty_id: None,
                        points: end.scores[s as usize],
                        reason: seat_state(rules, &hand, end.outcome, end.winner, s).to_owned(),
                        hand_number: *hand_number as i32,
                        voided_by: String::new(),
                        multiplier: end.multiplier,
                        player: player_of(&seats, s),
                        team: rules.partners.then_some(i32::from(s % 2)),
                    });
                }
                m.hands.push(HandExpect {
                    hand_number: *hand_number as i32,
                    outcome: outcome_code(end.outcome),
                    winner: end.winner.map(i32::from),
                    scores: result.scores.to_vec(),
                    penalties: result.penalties.to_vec(),
                    totals: totals.to_vec(),
                    seed: seed.clone(),
                    multiplier: end.multiplier,
                });
                if end.outcome != Outcome::Cancelled {
                    for s in 0..4u8 {
                        let Some(player) = hand_players[s as usize]
                            .as_ref()
                            .or(active[s as usize].as_ref())
                        else {
                            continue;
                        };
                        let p = players.entry(player.clone()).or_default();
                        p.hands_played += 1;
                        p.hands_won += i64::from(end.winner == Some(s));
                        p.score_sum += i64::from(result.scores[s as usize])
                            + i64::from(result.penalties[s as usize]);
                        let opened = hand.opened[s as usize].as_ref().map(|o| o.kind);
                        p.hands_opened += i64::from(opened.is_some());
                        p.pair_openings += i64::from(opened == Some(OpenKind::Pairs));
                    }
                }
                hand_players = active.clone();
                played.clear();
                penalties.clear();
                voided_once.clear();
            }
            TableEvent::MatchEnded { totals, winners } => {
                m.ended = true;
                m.totals = totals.iter().map(|t| *t as i32).collect();
                m.winners = winners.iter().map(|w| i32::from(*w)).collect();
                m.ranked = origin != Origin::PrivateRoom && seats.iter().any(Option::is_some);
                for s in 0..4u8 {
                    // Accounts: the person playing the seat, or the one who left it to a bot
                    // (played, not won).
                    let counted = match (&active[s as usize], &departed[s as usize]) {
                        (Some(p), _) => Some((p, i64::from(winners.contains(&s)))),
                        (None, Some(p)) => Some((p, 0)),
                        (None, None) => None,
                    };
                    if let Some((p, won)) = counted {
                        let p = players.entry(p.clone()).or_default();
                        p.matches_played += 1;
                        p.matches_won += won;
                    }
                    // Scoring's standings: the seat's player as the table seats it.
                    let Some(player) = &seats[s as usize] else {
                        continue;
                    };
                    let won = i64::from(winners.contains(&s));
                    let p = players.entry(player.clone()).or_default();
                    if m.ranked {
                        p.ranked_played += 1;
                        p.ranked_won += won;
                        p.ranked_total_sum += totals[s as usize];
                    }
                }
            }
            _ => {}
        }
    }
    m.seats = seats;
    m.bot_names = std::array::from_fn(|s| occupants[s].clone().filter(|_| m.bots[s]));
    m.entries.sort();
    m
}
