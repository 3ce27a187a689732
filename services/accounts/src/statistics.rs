//! Player statistics from the table service's events on NATS JetStream.
//!
//! The contract (also in ARCHITECTURE.md):
//! - subject `<prefix>.table.<table>.events` (`<prefix>` is `nats.subject_prefix`), one message per
//!   stored event, in table order;
//! - payload: the event as JSON, either an `okey_rules::Event` (`{"type":"hand_opened",…}`) or the
//!   table-level `{"type":"match_ended","winners":[seat,…]}`; other types are skipped;
//! - header `Nats-Msg-Id`: the event id (unique; JetStream drops republished duplicates within
//!   its window, and this consumer ignores an id it already counted, forever);
//! - header `Okey-Seat-Players`: who sits where when the event happened, four comma-separated
//!   entries in seat order, each `players/{uuid}` (or a bare uuid) or empty for a bot or a free
//!   seat.
//!
//! Counting is per hand: openings and penalties are tallied per table while the hand runs (a table
//! rollback undoes an opening made that turn and voids penalties; a cancelled hand counts for
//! nothing) and folded into `statistics` when the hand ends. Each event is handled in one
//! transaction with its id recorded in `consumed_events`, then acknowledged; a durable consumer
//! with one message in flight keeps table order across restarts.

use std::time::Duration;

use async_nats::jetstream::{self, consumer::pull, stream};
use futures_util::StreamExt;
use okey_rules::{Event, OpenKind, Outcome};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use uuid::Uuid;

/// The header naming the seat's players.
pub const SEAT_PLAYERS_HEADER: &str = "Okey-Seat-Players";
/// The durable consumer's name.
const CONSUMER: &str = "accounts-statistics";

/// Why an event could not be counted (it is redelivered).
#[derive(Debug, thiserror::Error)]
pub enum StatisticsError {
    /// PostgreSQL failed.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// JetStream failed.
    #[error("jetstream: {0}")]
    JetStream(String),
}

/// The subjects the table service publishes on.
pub fn table_events_subject(prefix: &str) -> String {
    format!("{prefix}.table.*.events")
}

/// One table event as this consumer reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum TableEvent {
    /// A hand event of the rules engine.
    Hand(Box<Event>),
    /// The match at the table ended; these seats (a player, or a team) won.
    MatchEnded {
        /// Winning seats.
        winners: Vec<usize>,
    },
}

#[derive(Deserialize)]
struct MatchEnded {
    winners: Vec<usize>,
}

impl TableEvent {
    /// Reads a payload; `None` for a type this consumer does not count.
    pub fn parse(payload: &[u8]) -> Option<TableEvent> {
        let value: serde_json::Value = serde_json::from_slice(payload).ok()?;
        if value.get("type").and_then(|t| t.as_str()) == Some("match_ended") {
            let m: MatchEnded = serde_json::from_value(value).ok()?;
            return Some(TableEvent::MatchEnded { winners: m.winners });
        }
        serde_json::from_value::<Event>(value)
            .ok()
            .map(|e| TableEvent::Hand(Box::new(e)))
    }
}

/// Reads `Okey-Seat-Players`.
pub fn parse_seat_players(header: Option<&str>) -> [Option<Uuid>; 4] {
    let mut seats = [None; 4];
    if let Some(header) = header {
        for (seat, entry) in header.split(',').take(4).enumerate() {
            let id = entry.trim().trim_start_matches("players/");
            seats[seat] = Uuid::parse_str(id).ok();
        }
    }
    seats
}

/// What is known about the hand in progress at one table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandTally {
    /// How each seat opened, if it did.
    pub opened: [Option<OpenKind>; 4],
    /// Whether the seat's opening was made in its current turn (a rollback undoes it).
    pub opened_this_turn: [bool; 4],
    /// Penalties charged and not voided: (id, seat, points).
    pub penalties: Vec<(u32, usize, i32)>,
}

/// What an event changes in the statistics of the players at the table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Increments {
    /// Per seat: (hands played, hands won, score, opened, pairs opening).
    pub hands: Vec<(usize, i64, i64, i64, i64, i64)>,
    /// Per seat: (matches played, matches won).
    pub matches: Vec<(usize, i64, i64)>,
}

/// Folds one event into the tally; returns what to add to the players' statistics.
pub fn fold(tally: &mut HandTally, event: &TableEvent) -> Increments {
    let mut out = Increments::default();
    match event {
        TableEvent::MatchEnded { winners } => {
            out.matches = (0..4)
                .map(|s| (s, 1, i64::from(winners.contains(&s))))
                .collect();
        }
        TableEvent::Hand(event) => match event.as_ref() {
            Event::HandStarted { .. } | Event::HandCancelled { .. } => {
                *tally = HandTally::default()
            }
            Event::HandOpened { seat, kind, .. } => {
                let s = usize::from(*seat) % 4;
                tally.opened[s] = Some(*kind);
                tally.opened_this_turn[s] = true;
            }
            Event::TileDiscarded { seat, .. } => {
                tally.opened_this_turn[usize::from(*seat) % 4] = false;
            }
            Event::TableRolledBack { seat, voided } => {
                let s = usize::from(*seat) % 4;
                if tally.opened_this_turn[s] {
                    tally.opened[s] = None;
                    tally.opened_this_turn[s] = false;
                }
                tally.penalties.retain(|(id, _, _)| !voided.contains(id));
            }
            Event::PenaltyCharged {
                id, seat, points, ..
            } => tally.penalties.push((*id, usize::from(*seat) % 4, *points)),
            Event::HandEnded { end } => {
                if end.outcome != Outcome::Cancelled {
                    out.hands = (0..4)
                        .map(|s| {
                            let penalties: i64 = tally
                                .penalties
                                .iter()
                                .filter(|(_, seat, _)| *seat == s)
                                .map(|(_, _, p)| i64::from(*p))
                                .sum();
                            (
                                s,
                                1,
                                i64::from(end.winner.map(usize::from) == Some(s)),
                                i64::from(end.scores[s]) + penalties,
                                i64::from(tally.opened[s].is_some()),
                                i64::from(tally.opened[s] == Some(OpenKind::Pairs)),
                            )
                        })
                        .collect();
                }
                *tally = HandTally::default();
            }
            _ => {}
        },
    }
    out
}

/// Counts one event, once: returns false when its id was already counted.
pub async fn apply(
    pool: &PgPool,
    event_id: &str,
    table: &str,
    seats: [Option<Uuid>; 4],
    event: &TableEvent,
) -> Result<bool, StatisticsError> {
    let mut tx = pool.begin().await?;
    let fresh =
        sqlx::query("INSERT INTO consumed_events (event_id) VALUES ($1) ON CONFLICT DO NOTHING")
            .bind(event_id)
            .execute(&mut *tx)
            .await?
            .rows_affected()
            == 1;
    if !fresh {
        tx.rollback().await?;
        return Ok(false);
    }
    let stored: Option<sqlx::types::Json<HandTally>> =
        sqlx::query_scalar("SELECT tally FROM hand_tallies WHERE table_id = $1 FOR UPDATE")
            .bind(table)
            .fetch_optional(&mut *tx)
            .await?;
    let mut tally = stored.map(|t| t.0).unwrap_or_default();
    let increments = fold(&mut tally, event);
    for (seat, played, won, score, opened, pairs) in increments.hands {
        let Some(player) = seats[seat] else { continue };
        sqlx::query(
            "UPDATE statistics SET hands_played = hands_played + $2, hands_won = hands_won + $3,
                score_sum = score_sum + $4, hands_opened = hands_opened + $5,
                pair_openings = pair_openings + $6, updated_at = now() WHERE player_id = $1",
        )
        .bind(player)
        .bind(played)
        .bind(won)
        .bind(score)
        .bind(opened)
        .bind(pairs)
        .execute(&mut *tx)
        .await?;
    }
    for (seat, played, won) in increments.matches {
        let Some(player) = seats[seat] else { continue };
        sqlx::query(
            "UPDATE statistics SET matches_played = matches_played + $2,
                matches_won = matches_won + $3, updated_at = now() WHERE player_id = $1",
        )
        .bind(player)
        .bind(played)
        .bind(won)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query(
        "INSERT INTO hand_tallies (table_id, tally) VALUES ($1, $2)
         ON CONFLICT (table_id) DO UPDATE SET tally = EXCLUDED.tally, updated_at = now()",
    )
    .bind(table)
    .bind(sqlx::types::Json(&tally))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(true)
}

/// The stream holding `subject`: the table service's if it made one, else one made here with the
/// same subjects (whoever starts first creates it).
async fn table_events_stream(
    jetstream: &jetstream::Context,
    prefix: &str,
) -> Result<stream::Stream, StatisticsError> {
    let subject = table_events_subject(prefix);
    if let Ok(name) = jetstream.stream_by_subject(subject.clone()).await {
        return jetstream
            .get_stream(name)
            .await
            .map_err(|e| StatisticsError::JetStream(e.to_string()));
    }
    let name = format!(
        "{}_TABLE_EVENTS",
        prefix
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            })
            .collect::<String>()
            .to_uppercase()
    );
    match jetstream
        .create_stream(stream::Config {
            name: name.clone(),
            subjects: vec![subject.clone()],
            ..Default::default()
        })
        .await
    {
        Ok(stream) => Ok(stream),
        // Someone else created it meanwhile.
        Err(_) => {
            let name = jetstream
                .stream_by_subject(subject)
                .await
                .map_err(|e| StatisticsError::JetStream(e.to_string()))?;
            jetstream
                .get_stream(name)
                .await
                .map_err(|e| StatisticsError::JetStream(e.to_string()))
        }
    }
}

fn js_err(e: impl std::fmt::Display) -> StatisticsError {
    StatisticsError::JetStream(e.to_string())
}

/// Consumes table events into statistics until the task is aborted. Failures are logged and
/// retried with a pause; the events wait in JetStream meanwhile.
pub async fn run(jetstream: jetstream::Context, pool: PgPool, prefix: String) {
    loop {
        if let Err(error) = consume(&jetstream, &pool, &prefix).await {
            tracing::warn!(%error, "statistics consumer stopped; restarting");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn consume(
    jetstream: &jetstream::Context,
    pool: &PgPool,
    prefix: &str,
) -> Result<(), StatisticsError> {
    let stream = table_events_stream(jetstream, prefix).await?;
    let consumer: jetstream::consumer::Consumer<pull::Config> = stream
        .get_or_create_consumer(
            CONSUMER,
            pull::Config {
                durable_name: Some(CONSUMER.to_owned()),
                filter_subject: table_events_subject(prefix),
                ack_policy: jetstream::consumer::AckPolicy::Explicit,
                max_ack_pending: 1,
                ack_wait: Duration::from_secs(30),
                ..Default::default()
            },
        )
        .await
        .map_err(js_err)?;
    let mut messages = consumer.messages().await.map_err(js_err)?;
    tracing::info!(subject = %table_events_subject(prefix), "statistics consumer running");
    while let Some(message) = messages.next().await {
        let message = message.map_err(js_err)?;
        let headers = message.headers.as_ref();
        let event_id = headers
            .and_then(|h| h.get("Nats-Msg-Id"))
            .map(|v| v.as_str().to_owned());
        let seats = parse_seat_players(
            headers
                .and_then(|h| h.get(SEAT_PLAYERS_HEADER))
                .map(|v| v.as_str()),
        );
        let table = message
            .subject
            .as_str()
            .rsplit('.')
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        match (event_id, TableEvent::parse(&message.payload)) {
            (Some(event_id), Some(event)) => {
                match apply(pool, &event_id, &table, seats, &event).await {
                    Ok(counted) => {
                        tracing::debug!(%event_id, %table, counted, "table event handled");
                    }
                    Err(error) => {
                        tracing::warn!(%event_id, %error, "table event not counted yet; retrying");
                        let _ = message
                            .ack_with(jetstream::AckKind::Nak(Some(Duration::from_millis(500))))
                            .await;
                        continue;
                    }
                }
            }
            (None, Some(_)) => tracing::warn!(%table, "table event without Nats-Msg-Id skipped"),
            _ => {}
        }
        message.ack().await.map_err(js_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hand(json: &str) -> TableEvent {
        TableEvent::parse(json.as_bytes()).expect(json)
    }

    #[test]
    fn seat_players_read_names_and_bare_ids() {
        let a = Uuid::new_v4();
        let b = Uuid::new_v4();
        let seats = parse_seat_players(Some(&format!("players/{a},,{b},bot")));
        assert_eq!(seats, [Some(a), None, Some(b), None]);
        assert_eq!(parse_seat_players(None), [None; 4]);
    }

    #[test]
    fn match_end_and_unknown_types_parse() {
        assert_eq!(
            TableEvent::parse(br#"{"type":"match_ended","winners":[0,2]}"#),
            Some(TableEvent::MatchEnded {
                winners: vec![0, 2]
            })
        );
        assert_eq!(
            TableEvent::parse(br#"{"type":"seat_joined","seat":1}"#),
            None
        );
    }

    #[test]
    fn a_hand_counts_openings_penalties_and_the_winner() {
        let mut tally = HandTally::default();
        fold(
            &mut tally,
            &hand(r#"{"type":"hand_opened","seat":1,"kind":"pairs","amount":5,"melds":[]}"#),
        );
        fold(
            &mut tally,
            &hand(
                r#"{"type":"penalty_charged","id":0,"seat":2,"points":101,"reason":"discard_okey"}"#,
            ),
        );
        let ended = fold(
            &mut tally,
            &hand(
                r#"{"type":"hand_ended","end":{"outcome":"finished","winner":1,"multiplier":2,"scores":[50,-202,80,30]}}"#,
            ),
        );
        assert_eq!(
            ended.hands,
            vec![
                (0, 1, 0, 50, 0, 0),
                (1, 1, 1, -202, 1, 1),
                (2, 1, 0, 181, 0, 0),
                (3, 1, 0, 30, 0, 0)
            ]
        );
        assert_eq!(tally, HandTally::default());
    }

    #[test]
    fn a_rollback_undoes_the_turns_opening_and_voids_penalties() {
        let mut tally = HandTally::default();
        fold(
            &mut tally,
            &hand(r#"{"type":"hand_opened","seat":0,"kind":"melds","amount":101,"melds":[]}"#),
        );
        fold(
            &mut tally,
            &hand(
                r#"{"type":"penalty_charged","id":3,"seat":0,"points":101,"reason":"okey_retrieved"}"#,
            ),
        );
        fold(
            &mut tally,
            &hand(r#"{"type":"table_rolled_back","seat":0,"voided":[3]}"#),
        );
        assert_eq!(tally.opened[0], None);
        assert!(tally.penalties.is_empty());
    }

    #[test]
    fn a_cancelled_hand_counts_nothing() {
        let mut tally = HandTally::default();
        fold(
            &mut tally,
            &hand(r#"{"type":"hand_opened","seat":0,"kind":"pairs","amount":5,"melds":[]}"#),
        );
        fold(
            &mut tally,
            &hand(r#"{"type":"hand_cancelled","voided":[]}"#),
        );
        let ended = fold(
            &mut tally,
            &hand(
                r#"{"type":"hand_ended","end":{"outcome":"cancelled","winner":null,"multiplier":1,"scores":[0,0,0,0]}}"#,
            ),
        );
        assert!(ended.hands.is_empty());
    }
}
