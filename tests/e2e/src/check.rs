//! The agreement: once play is over, every record the platform keeps, read through the public
//! APIs, must equal what the table's own events say ([`crate::truth`]): each player's accepted
//! commands are in the table's log as they were answered (no accepted move lost), each update
//! stream delivered every event once, in order, as that seat may see it; scoring's ledger holds
//! exactly the entries the events make (nothing missing, nothing twice), each match result its
//! hands and totals, the standings their ranks; accounts' statistics their counts. Each
//! difference is one line of the returned discrepancies.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use okey_proto::v1 as pb;
use table::grpc::event_to_proto;

use crate::player::{Apis, Guest, SeatRecord, Seating, analyst_token, retry, with_token};
use crate::truth::{Entry, MatchExpect, PlayerExpect, TableTruth, expect, read_table};

/// What a check found.
#[derive(Debug, Default)]
pub struct Checked {
    /// Tables whose match ended.
    pub matches: usize,
    /// Engine events played at those tables (every seat's).
    pub moves: usize,
    /// Commands the players had accepted.
    pub accepted: usize,
    pub discrepancies: Vec<String>,
}

/// At most this many lines about one kind of difference (the count says the rest).
const SHOWN: usize = 5;

fn differ<T: std::fmt::Debug + Ord + Clone>(
    what: &str,
    expected: &[T],
    got: &[T],
    out: &mut Vec<String>,
) {
    let e: BTreeMap<&T, usize> = expected.iter().fold(BTreeMap::new(), |mut m, x| {
        *m.entry(x).or_default() += 1;
        m
    });
    let g: BTreeMap<&T, usize> = got.iter().fold(BTreeMap::new(), |mut m, x| {
        *m.entry(x).or_default() += 1;
        m
    });
    let missing: Vec<&T> = e
        .iter()
        .filter(|(k, n)| g.get(*k).copied().unwrap_or(0) < **n)
        .map(|(k, _)| *k)
        .collect();
    let extra: Vec<&T> = g
        .iter()
        .filter(|(k, n)| e.get(*k).copied().unwrap_or(0) < **n)
        .map(|(k, _)| *k)
        .collect();
    if !missing.is_empty() {
        out.push(format!(
            "{what}: {} expected and missing, e.g. {:?}",
            missing.len(),
            &missing[..missing.len().min(SHOWN)]
        ));
    }
    if !extra.is_empty() {
        out.push(format!(
            "{what}: {} unexpected (or counted twice), e.g. {:?}",
            extra.len(),
            &extra[..extra.len().min(SHOWN)]
        ));
    }
}

/// What seat `seat` may be shown of stored event `i` (0-based) of `truth`.
fn shown_to(truth: &TableTruth, i: usize, seat: i32) -> Option<pb::TableEvent> {
    let r = truth.events.get(i)?;
    let seed = truth.stored_seeds.get(&r.version).copied();
    let shown = okey_table::show(&r.event, Some(seat as u8), |_| seed);
    event_to_proto(&shown, &r.table_id.to_string()).ok()
}

/// A player's answers and stream against the table's log.
fn check_seat(record: &SeatRecord, truth: &TableTruth, out: &mut Vec<String>) {
    let who = format!("{} seat {}", record.table, record.seat);
    let last = truth.events.len() as i64;
    for a in &record.accepted {
        let n = a.events.len() as i64;
        for (k, got) in a.events.iter().enumerate() {
            let v = a.version - n + 1 + k as i64;
            if !(1..=last).contains(&v) {
                out.push(format!(
                    "{who}: accepted command {} answered version {v}, the log has {last}: an accepted move lost",
                    a.request_id
                ));
                continue;
            }
            if shown_to(truth, v as usize - 1, record.seat).as_ref() != Some(got) {
                out.push(format!(
                    "{who}: accepted command {} answered {got:?} at version {v}, the log holds {:?}",
                    a.request_id,
                    shown_to(truth, v as usize - 1, record.seat)
                ));
            }
        }
    }
    let Some(&first) = record.snapshots.first() else {
        out.push(format!("{who}: the stream sent no snapshot first"));
        return;
    };
    let mut cursor = first;
    let mut wrong = 0;
    for (v, got) in &record.streamed {
        let resumed = record
            .snapshots
            .iter()
            .any(|s| *s >= cursor && *v == *s + 1);
        if *v != cursor + 1 && !resumed {
            out.push(format!(
                "{who}: the stream delivered version {v} after {cursor} (a gap or a repeat)"
            ));
        }
        cursor = *v;
        if !(1..=last).contains(v)
            || shown_to(truth, *v as usize - 1, record.seat).as_ref() != Some(got)
        {
            wrong += 1;
            if wrong <= SHOWN {
                out.push(format!(
                    "{who}: the stream delivered {got:?} as version {v}, the log holds {:?}",
                    (1..=last)
                        .contains(v)
                        .then(|| shown_to(truth, *v as usize - 1, record.seat))
                ));
            }
        }
    }
    if cursor != last {
        out.push(format!(
            "{who}: the stream ended at version {cursor}, the log at {last}"
        ));
    }
}

/// Waits (until `deadline`) for the consumers to have caught up: the ledger has nothing left to
/// apply, every match result has its end, every player's statistics count every match. Returns
/// what is still behind, if anything.
async fn caught_up(
    apis: &Apis,
    matches: &[MatchExpect],
    players: &BTreeMap<String, PlayerExpect>,
    guests: &BTreeMap<String, Guest>,
    deadline: Instant,
) -> Option<String> {
    let analyst = analyst_token();
    loop {
        let behind = async {
            let status = apis
                .scoring()
                .get_ledger_status(with_token(&analyst, pb::GetLedgerStatusRequest {}))
                .await
                .map_err(|e| format!("GetLedgerStatus: {e:?}"))?
                .into_inner();
            if status.lag_events > 0 {
                return Err(format!("the ledger lags {} events", status.lag_events));
            }
            for m in matches.iter().filter(|m| m.ended) {
                let result = apis
                    .scoring()
                    .get_match_result(with_token(
                        &analyst,
                        pb::GetMatchResultRequest {
                            name: m.name.clone(),
                        },
                    ))
                    .await
                    .map_err(|e| format!("GetMatchResult {}: {e:?}", m.name))?
                    .into_inner()
                    .result;
                if result.is_none_or(|r| r.end_time.is_none()) {
                    return Err(format!("{} has no end in scoring", m.name));
                }
            }
            for (player, want) in players {
                let Some(guest) = guests.get(player) else {
                    continue;
                };
                let stats = apis
                    .accounts()
                    .get_statistics(guest.req(pb::GetStatisticsRequest {
                        name: format!("{player}/statistics"),
                    }))
                    .await
                    .map_err(|e| format!("GetStatistics {player}: {e:?}"))?
                    .into_inner()
                    .statistics
                    .unwrap_or_default();
                if stats.matches_played < want.matches_played {
                    return Err(format!(
                        "{player}'s statistics count {} of {} matches",
                        stats.matches_played, want.matches_played
                    ));
                }
            }
            Ok::<(), String>(())
        }
        .await;
        match behind {
            Ok(()) => return None,
            Err(why) if Instant::now() > deadline => return Some(why),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

async fn ledger_of(apis: &Apis, name: &str, deadline: Instant) -> Result<Vec<Entry>, String> {
    let analyst = analyst_token();
    let mut entries = Vec::new();
    let mut token = String::new();
    loop {
        let page = retry(deadline, |_| {
            let mut api = apis.scoring();
            let r = with_token(
                &analyst,
                pb::ListLedgerEntriesRequest {
                    parent: "players/-".into(),
                    r#match: name.to_owned(),
                    page_size: 500,
                    page_token: token.clone(),
                },
            );
            async move { api.list_ledger_entries(r).await }
        })
        .await
        .map_err(|e| format!("ListLedgerEntries {name}: {e:?}"))?
        .into_inner();
        entries.extend(page.entries.iter().map(Entry::of));
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    entries.sort();
    Ok(entries)
}

fn check_result(m: &MatchExpect, r: &pb::MatchResult, out: &mut Vec<String>) {
    let name = &m.name;
    let mut same = |what: &str, e: String, g: String| {
        if e != g {
            out.push(format!(
                "{name}: {what}: the table's events say {e}, scoring says {g}"
            ));
        }
    };
    same(
        "totals",
        format!("{:?}", m.totals),
        format!("{:?}", r.totals),
    );
    let sorted = |w: &[i32]| {
        let mut w = w.to_vec();
        w.sort_unstable();
        format!("{w:?}")
    };
    same("winners", sorted(&m.winners), sorted(&r.winners));
    same(
        "draw",
        format!("{}", m.winners.is_empty()),
        format!("{}", r.draw),
    );
    same("ranked", format!("{}", m.ranked), format!("{}", r.ranked));
    same("table", m.table.clone(), r.table.clone());
    // A person by their name, a bot by the name the table gave it.
    let seats: Vec<(String, bool)> = (0..4)
        .map(|s| {
            let name = m.seats[s].clone().or_else(|| m.bot_names[s].clone());
            (name.unwrap_or_default(), m.bots[s])
        })
        .collect();
    let got: Vec<(String, bool)> = r.seats.iter().map(|s| (s.player.clone(), s.bot)).collect();
    same("seats", format!("{seats:?}"), format!("{got:?}"));
    let hands: Vec<String> = m.hands.iter().map(|h| format!("{h:?}")).collect();
    let got: Vec<String> = r
        .hands
        .iter()
        .map(|h| {
            format!(
                "{:?}",
                crate::truth::HandExpect {
                    hand_number: h.hand_number,
                    outcome: h.outcome,
                    winner: h.winner,
                    scores: h.scores.clone(),
                    penalties: h.penalties.clone(),
                    totals: h.totals.clone(),
                    seed: h.seed.clone(),
                    multiplier: h.multiplier,
                }
            )
        })
        .collect();
    same("hands", format!("{hands:#?}"), format!("{got:#?}"));
    if !r.verified || r.hands.iter().any(|h| !h.verified) {
        out.push(format!("{name}: scoring did not verify every hand"));
    }
    if r.end_time.is_none() {
        out.push(format!("{name}: no end time"));
    }
}

/// The standings every player must have, in the order ListStandings answers: matches won (more
/// first), mean match total (lower first), matches played (more first); equal players share a
/// place and are listed by player id.
fn expected_standings(players: &BTreeMap<String, PlayerExpect>) -> Vec<(i32, String, i64, i64)> {
    let ranked: Vec<(&String, &PlayerExpect)> = players
        .iter()
        .filter(|(_, p)| p.ranked_played > 0)
        .collect();
    let better = |a: &PlayerExpect, b: &PlayerExpect| -> std::cmp::Ordering {
        // Mean totals compared exactly: sa / pa against sb / pb.
        let mean = (i128::from(a.ranked_total_sum) * i128::from(b.ranked_played))
            .cmp(&(i128::from(b.ranked_total_sum) * i128::from(a.ranked_played)));
        b.ranked_won
            .cmp(&a.ranked_won)
            .then(mean)
            .then(b.ranked_played.cmp(&a.ranked_played))
    };
    let mut rows: Vec<(i32, String, i64, i64)> = ranked
        .iter()
        .map(|(player, p)| {
            let rank = 1 + ranked
                .iter()
                .filter(|(_, q)| better(q, p) == std::cmp::Ordering::Less)
                .count() as i32;
            ((*player).clone(), rank, p.ranked_played, p.ranked_won)
        })
        .map(|(player, rank, played, won)| (rank, player, played, won))
        .collect();
    rows.sort();
    rows
}

/// Everything, once play is over: `seatings` are where every guest sat, `records` what each saw.
pub async fn check(
    apis: &Apis,
    table_database_url: &str,
    seatings: &[Seating],
    records: &[SeatRecord],
    within: Duration,
) -> Checked {
    let deadline = Instant::now() + within;
    let mut out = Checked::default();
    let d = &mut out.discrepancies;
    let tables: BTreeSet<&String> = seatings.iter().map(|s| &s.table).collect();
    let guests: BTreeMap<String, Guest> = seatings
        .iter()
        .map(|s| (s.guest.player.clone(), s.guest.clone()))
        .collect();
    let mut players: BTreeMap<String, PlayerExpect> = BTreeMap::new();
    let mut truths = BTreeMap::new();
    let mut matches = Vec::new();
    for table in &tables {
        match read_table(table_database_url, table).await {
            Ok(truth) => {
                let m = expect(&truth, &mut players);
                d.extend(m.problems.iter().cloned());
                if !m.ended {
                    d.push(format!("{table}: the match did not finish"));
                } else {
                    out.matches += 1;
                    out.moves += m.moves;
                }
                matches.push(m);
                truths.insert((*table).clone(), truth);
            }
            Err(e) => d.push(e),
        }
    }
    // Every guest was seated where its ticket or room said, once.
    for s in seatings {
        let seated = matches
            .iter()
            .find(|m| m.table == s.table)
            .and_then(|m| m.seats.get(s.seat as usize).cloned().flatten());
        if seated.as_deref() != Some(s.guest.player.as_str()) {
            d.push(format!(
                "{} ({}) was told seat {} of {}, the table seats {seated:?} there",
                s.guest.player, s.via, s.seat, s.table
            ));
        }
    }
    for r in records {
        out.accepted += r.accepted.len();
        match truths.get(&r.table) {
            Some(truth) => check_seat(r, truth, d),
            None => d.push(format!("{}: a record of a table never read", r.table)),
        }
    }

    if let Some(behind) = caught_up(apis, &matches, &players, &guests, deadline).await {
        d.push(format!(
            "the consumers did not catch up in {within:?}: {behind}"
        ));
    }
    let analyst = analyst_token();
    for m in matches.iter().filter(|m| m.ended) {
        match ledger_of(apis, &m.name, deadline).await {
            Ok(got) => differ(&format!("{} ledger", m.name), &m.entries, &got, d),
            Err(e) => d.push(e),
        }
        let result = retry(deadline, |_| {
            let mut api = apis.scoring();
            let r = with_token(
                &analyst,
                pb::GetMatchResultRequest {
                    name: m.name.clone(),
                },
            );
            async move { api.get_match_result(r).await }
        })
        .await;
        match result.map(|r| r.into_inner().result) {
            Ok(Some(r)) => check_result(m, &r, d),
            Ok(None) => d.push(format!("{}: GetMatchResult without a result", m.name)),
            Err(e) => d.push(format!("{}: GetMatchResult: {e:?}", m.name)),
        }
    }
    for (player, want) in &players {
        let Some(guest) = guests.get(player) else {
            continue;
        };
        let stats = retry(deadline, |_| {
            let mut api = apis.accounts();
            let r = guest.req(pb::GetStatisticsRequest {
                name: format!("{player}/statistics"),
            });
            async move { api.get_statistics(r).await }
        })
        .await;
        let stats = match stats {
            Ok(s) => s.into_inner().statistics.unwrap_or_default(),
            Err(e) => {
                d.push(format!("GetStatistics {player}: {e:?}"));
                continue;
            }
        };
        let got = (
            stats.hands_played,
            stats.hands_won,
            stats.matches_played,
            stats.matches_won,
            stats.hands_opened,
            stats.pair_openings,
        );
        let expected = (
            want.hands_played,
            want.hands_won,
            want.matches_played,
            want.matches_won,
            want.hands_opened,
            want.pair_openings,
        );
        if got != expected {
            d.push(format!(
                "{player}: statistics (hands played, won, matches played, won, hands opened, \
                 pair openings) are {got:?}, the table's events say {expected:?}"
            ));
        }
        let mean = if want.hands_played > 0 {
            want.score_sum as f64 / want.hands_played as f64
        } else {
            0.0
        };
        if (stats.mean_hand_score - mean).abs() > 1e-6 {
            d.push(format!(
                "{player}: mean hand score {} , the table's events say {mean}",
                stats.mean_hand_score
            ));
        }
    }
    // Standings: this platform's scoring counts only these players' matches.
    let mut standings = Vec::new();
    let mut token = String::new();
    loop {
        let page = retry(deadline, |_| {
            let mut api = apis.scoring();
            let r = with_token(
                &analyst,
                pb::ListStandingsRequest {
                    period: pb::StandingsPeriod::Unspecified as i32,
                    page_size: 500,
                    page_token: token.clone(),
                },
            );
            async move { api.list_standings(r).await }
        })
        .await;
        match page {
            Ok(p) => {
                let p = p.into_inner();
                standings.extend(p.standings);
                if p.next_page_token.is_empty() {
                    break;
                }
                token = p.next_page_token;
            }
            Err(e) => {
                d.push(format!("ListStandings: {e:?}"));
                break;
            }
        }
    }
    let got: Vec<(i32, String, i64, i64)> = standings
        .iter()
        .map(|s| {
            (
                s.rank,
                s.player
                    .as_ref()
                    .map(|p| p.player.clone())
                    .unwrap_or_default(),
                s.matches_played,
                s.matches_won,
            )
        })
        .collect();
    let expected = expected_standings(&players);
    if got != expected {
        d.push(format!(
            "standings (rank, player, played, won): scoring says {got:?}, the table's events say {expected:?}"
        ));
    }
    for s in &standings {
        let player = s.player.as_ref().map(|p| p.player.as_str()).unwrap_or("");
        if let Some(p) = players.get(player).filter(|p| p.ranked_played > 0) {
            let mean = p.ranked_total_sum as f64 / p.ranked_played as f64;
            if (s.mean_match_total - mean).abs() > 1e-6 {
                d.push(format!(
                    "{player}: standing's mean match total {}, the table's events say {mean}",
                    s.mean_match_total
                ));
            }
        }
    }
    match apis
        .scoring()
        .get_ledger_status(with_token(&analyst, pb::GetLedgerStatusRequest {}))
        .await
    {
        Ok(s) => {
            let s = s.into_inner();
            if s.events_set_aside != 0 || s.hands_unverified != 0 {
                d.push(format!(
                    "the ledger set {} events aside and could not verify {} hands",
                    s.events_set_aside, s.hands_unverified
                ));
            }
        }
        Err(e) => d.push(format!("GetLedgerStatus: {e:?}")),
    }
    out
}
