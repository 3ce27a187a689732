//! A property of the whole path, not of the crate: two players whose seats a strong bot plays
//! and two whose seats an easy bot plays meet in many simulated matches (the table's own
//! aggregate, `okey_table::Table`, decides every move, so the events are the table service's),
//! the events go through the consumer's own path (`store::apply_batch`: projection, ledger,
//! re-verification, ratings; only NATS is left out), and the strong players end with higher
//! ratings than the easy ones, alone and as partners, as the API shows them.

mod common;

use chrono::{DateTime, Utc};
use common::*;
use okey_bots::Level;
use okey_platform::auth::Role;
use okey_proto::v1 as pb;
use okey_rules::{Command, MatchLength, Preset};
use okey_table::{Admission, Origin, Phase, Published, Table, TableCommand, TableEvent};
use scoring::store::{self, Incoming, Item};
use uuid::Uuid;

/// Matches played per table kind.
const MATCHES: u64 = 12;

/// Commands one turn may take before the server's timeout play finishes it.
const MAX_COMMANDS_PER_TURN: u32 = 40;

/// The events of a one-hand match of `players` at seats 0–3, each seat played by a bot of its
/// level from that seat's view alone, as the table service plays a bot seat (a command the
/// rules refuse falls back to the timeout play).
fn simulated(players: &[String; 4], levels: [Level; 4], partners: bool, m: u64) -> Vec<TableEvent> {
    let mut rules = Preset::Classic.rules();
    rules.partners = partners;
    rules.match_length = MatchLength::Hands(1);
    let seed = |k: u64| {
        let mut s = [0u8; 32];
        s[..8].copy_from_slice(&m.to_le_bytes());
        s[8..16].copy_from_slice(&k.to_le_bytes());
        s[16] = u8::from(partners);
        s
    };
    let created = Table::create_with(
        rules,
        players.clone().map(Some),
        Default::default(),
        Admission {
            origin: Origin::QuickPlay,
            ..Admission::default()
        },
        &seed(0),
    )
    .expect("a valid table");
    let mut table = Table::replay(&created.events, created.seeds.iter().copied().collect());
    let mut events = created.events;
    let (mut k, mut this_turn, mut last) = (0, 0u32, None);
    while table.phase != Phase::Finished {
        let hand = table
            .hand
            .as_ref()
            .expect("a hand is dealt while the match runs");
        let seat = hand.turn.seat;
        let turn = (table.hand_number, hand.turn.number);
        if last != Some(turn) {
            (last, this_turn) = (Some(turn), 0);
        }
        this_turn += 1;
        let view = table.seat_view(seat).expect("a hand is dealt");
        let command = if this_turn > MAX_COMMANDS_PER_TURN {
            Command::Timeout
        } else {
            levels[seat as usize].bot().act(&view)
        };
        k += 1;
        let played = TableCommand::Play {
            player: players[seat as usize].clone(),
            command,
            name: None,
        };
        let decision = table
            .decide(&played, &seed(k))
            .or_else(|_| {
                table.decide(
                    &okey_table::server_command(seat, Command::Timeout, Some(turn)),
                    &seed(k),
                )
            })
            .expect("the timeout play is always accepted");
        table.apply(&decision);
        events.extend(decision.events);
    }
    events
}

/// Applies `events` of table `table` as the consumer does, stored from `start` on.
async fn apply(scoring: &Scoring, table: Uuid, events: &[TableEvent], start: DateTime<Utc>) {
    let bytes: Vec<Vec<u8>> = events
        .iter()
        .enumerate()
        .map(|(i, event)| {
            Published::public(
                format!("tables/{table}"),
                i as u64 + 1,
                uuid(),
                (start + chrono::Duration::milliseconds(i as i64)).to_rfc3339(),
                event,
            )
            .encode()
        })
        .collect();
    let incoming: Vec<Incoming> = bytes
        .iter()
        .map(|b| Incoming::decode(b).expect("the envelope reads"))
        .collect();
    let items: Vec<Item<'_>> = incoming
        .iter()
        .zip(&bytes)
        .map(|(i, b)| Item::Event(i, b))
        .collect();
    store::apply_batch(&scoring.pool, &items)
        .await
        .expect("applied");
}

async fn rating(scoring: &Scoring, player: &str) -> pb::Rating {
    scoring
        .client()
        .await
        .get_rating(req(
            pb::GetRatingRequest {
                player: player.to_owned(),
            },
            "reader",
            &[Role::Player],
        ))
        .await
        .unwrap()
        .into_inner()
        .rating
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strong_bot_seats_end_rated_above_easy_ones_alone_and_as_partners() {
    let Some(scoring) = Scoring::start().await else {
        return;
    };
    let start = Utc::now() - chrono::Duration::hours(1);
    for partners in [false, true] {
        // Strong players in seats 0 and 2 (partners when the table has partners), easy ones in
        // 1 and 3; the seats turn round by one each match.
        let players: [String; 4] = std::array::from_fn(|_| format!("players/{}", uuid()));
        let levels = [Level::Strong, Level::Easy, Level::Strong, Level::Easy];
        let mut strong_first = 0;
        for m in 0..MATCHES {
            let turn = |s: usize| (s + m as usize) % 4;
            let seated: [String; 4] = std::array::from_fn(|s| players[turn(s)].clone());
            let seat_levels: [Level; 4] = std::array::from_fn(|s| levels[turn(s)]);
            let events = simulated(&seated, seat_levels, partners, m);
            let Some(TableEvent::MatchEnded { winners, .. }) = events.last() else {
                panic!("the match ended");
            };
            if winners
                .iter()
                .any(|&w| seat_levels[w as usize] == Level::Strong)
            {
                strong_first += 1;
            }
            let ended =
                start + chrono::Duration::seconds((m + MATCHES * u64::from(partners)) as i64);
            apply(&scoring, Uuid::new_v4(), &events, ended).await;
        }
        let mut ratings = Vec::new();
        for p in &players {
            ratings.push(rating(&scoring, p).await);
        }
        let shown: Vec<(i32, i64)> = ratings.iter().map(|r| (r.rating, r.matches)).collect();
        eprintln!(
            "partners {partners}: strong won {strong_first}/{MATCHES}; ratings (strong, easy, strong, easy): {shown:?}"
        );
        assert!(
            ratings.iter().all(|r| r.matches == MATCHES as i64),
            "every match rated: {shown:?}"
        );
        let lowest_strong = ratings[0].rating.min(ratings[2].rating);
        let highest_easy = ratings[1].rating.max(ratings[3].rating);
        assert!(
            lowest_strong > highest_easy,
            "partners {partners}: {shown:?}"
        );
    }
    scoring.stop().await;
}
