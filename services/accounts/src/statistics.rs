//! Player statistics from the table service's events on NATS JetStream.
//!
//! The contract (also in docs/design/statistics-contract.md) is what the table service's outbox
//! publishes:
//! - subject `<prefix>.table.<table>.events` (`<prefix>` is `nats.subject_prefix`), one message per
//!   stored event, in table order;
//! - payload: the table service's envelope, `okey_table::Published`, read through that type (a
//!   change to an event is a compile error here): `event` is the event as the public sees it, a
//!   deal without racks (`"shown":"dealt"`) or any other event as stored (`"shown":"public"`); this
//!   consumer reads `table_created` and `seat_taken`/`seat_left` (who sits where), `hand_dealt`,
//!   `played` (an `okey_rules::Event`: openings, rollbacks, penalties), `hand_ended` and
//!   `match_ended`; other types are skipped;
//! - the envelope's `event_id` (also the header `Nats-Msg-Id`): unique per event; JetStream drops
//!   republished duplicates within its window, and this consumer ignores an event id it already
//!   counted, forever, whatever header its copy came with.
//!
//! Counting is per hand: openings and penalties are tallied per table while the hand runs (a table
//! rollback undoes an opening made that turn and voids penalties; a cancelled hand counts for
//! nothing) and folded into `statistics` when the hand ends. Each event is handled in one
//! transaction with its id recorded in `consumed_events`, then acknowledged; a durable consumer
//! with one message in flight, and each table's events counted in version order ([`apply`]: an
//! event ahead of the next version waits in `early_table_events`), keep table order across
//! restarts and republishes.

use std::time::Duration;

use async_nats::jetstream;
use futures_util::StreamExt;
use okey_platform::table_events::{self, Durable};
use okey_platform::telemetry::{self, ConsumerLag};
use okey_rules::{Event, HandEnd, OpenKind, Outcome};
use okey_table::{Published, Shown, TableEvent as Stored};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use tracing::Instrument;
use uuid::Uuid;

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

/// One table event as this consumer reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum TableEvent {
    /// The table was created with these players seated (`None`: free or a bot).
    Seats([Option<Uuid>; 4]),
    /// A player (`Some`; `None`: a bot) took a seat.
    Seat {
        /// The seat, 0-3.
        seat: usize,
        /// Who sits there now.
        player: Option<Uuid>,
    },
    /// A player left a seat: free before the match, played by a bot during it
    /// (`bot_substitute`) until they take it back.
    SeatLeft {
        /// The seat, 0-3.
        seat: usize,
        /// Who left.
        player: Option<Uuid>,
        /// A bot plays the seat for the rest of the match (unless the player comes back).
        bot_substitute: bool,
    },
    /// A new hand was dealt.
    HandDealt,
    /// A hand event of the rules engine.
    Hand(Box<Event>),
    /// The hand ended with these end-of-hand scores.
    HandEnded(HandEnd),
    /// The match at the table ended; these seats (a player, or a team) won.
    MatchEnded {
        /// Winning seats.
        winners: Vec<usize>,
    },
}

fn player_id(name: &str) -> Option<Uuid> {
    Uuid::parse_str(name.trim_start_matches("players/")).ok()
}

impl TableEvent {
    /// Reads a published message (`okey_table::Published`, the table service's own envelope
    /// type); `None` for a message this consumer does not count or cannot read.
    pub fn parse(payload: &[u8]) -> Option<TableEvent> {
        TableEvent::from_published(Published::decode(payload).ok()?)
    }

    /// The event an envelope carries; `None` for one this consumer does not count.
    pub fn from_published(published: Published) -> Option<TableEvent> {
        Some(match published.event {
            // The public copy of a deal: no rack, but a new hand all the same.
            Shown::Dealt { .. } => TableEvent::HandDealt,
            Shown::Drawn { .. } => return None,
            Shown::Public { event } => match event {
                Stored::TableCreated { seats, .. } => TableEvent::Seats(std::array::from_fn(|s| {
                    seats[s].as_deref().and_then(player_id)
                })),
                Stored::SeatTaken { seat, player, .. } => TableEvent::Seat {
                    seat: usize::from(seat) % 4,
                    player: player_id(&player),
                },
                Stored::SeatLeft {
                    seat,
                    player,
                    bot_substitute,
                } => TableEvent::SeatLeft {
                    seat: usize::from(seat) % 4,
                    player: player_id(&player),
                    bot_substitute,
                },
                Stored::HandDealt { .. } => TableEvent::HandDealt,
                Stored::Played { event, .. } => TableEvent::Hand(Box::new(event)),
                Stored::HandEnded { end, .. } => TableEvent::HandEnded(end),
                Stored::MatchEnded { winners, .. } => TableEvent::MatchEnded {
                    winners: winners.into_iter().map(usize::from).collect(),
                },
                // A player whose turns ran out too often left the seat to a bot just as one who
                // called LeaveSeat did (accounts.proto, `Statistics`), and one who comes back
                // sits in it again.
                Stored::SeatHandedToBot { seat, player } => TableEvent::SeatLeft {
                    seat: usize::from(seat) % 4,
                    player: player_id(&player),
                    bot_substitute: true,
                },
                Stored::SeatReclaimed { seat, player } => TableEvent::Seat {
                    seat: usize::from(seat) % 4,
                    player: player_id(&player),
                },
                Stored::ClientSeedSent { .. } => return None,
            },
        })
    }
}

/// How long after its commit at the table an event is read here (the envelope's `time`).
fn since_commit(published: Option<&Published>) -> Duration {
    published
        .and_then(|p| chrono::DateTime::parse_from_rfc3339(&p.time).ok())
        .and_then(|t| {
            (chrono::Utc::now() - t.with_timezone(&chrono::Utc))
                .to_std()
                .ok()
        })
        .unwrap_or_default()
}

/// What is known about the hand in progress at one table.
///
/// **Whose a hand is.** A seat's hand is the player's who held the seat when it was dealt, or who
/// sat down in it (came back) while it ran: a player who leaves during a hand (a bot plays on)
/// still has that hand counted, score and penalties included, so leaving never erases a bad
/// hand; the hands dealt while a bot plays the seat are the bot's and count for nobody. A
/// player who left during the match and did not come back has the match counted as played and
/// not won, whatever the bot or the partner made of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandTally {
    /// Who sits where (from the table's seat events).
    #[serde(default)]
    pub players: [Option<Uuid>; 4],
    /// Whose each seat's hand in progress is (see above; tallies stored before this field
    /// have none, and then the seat's player counts, as before).
    #[serde(default)]
    pub hand_players: [Option<Uuid>; 4],
    /// Who left each seat during the match for a bot and has not come back.
    #[serde(default)]
    pub departed: [Option<Uuid>; 4],
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
    /// Per player: (hands played, hands won, score, opened, pairs opening).
    pub hands: Vec<(Uuid, i64, i64, i64, i64, i64)>,
    /// Per player: (matches played, matches won).
    pub matches: Vec<(Uuid, i64, i64)>,
}

impl HandTally {
    /// Forgets the hand, keeps the seats: the next hand is the seated players'.
    fn new_hand(&mut self) {
        *self = HandTally {
            players: self.players,
            hand_players: self.players,
            departed: self.departed,
            ..HandTally::default()
        };
    }

    /// Whose seat `s`'s hand in progress is.
    fn hand_player(&self, s: usize) -> Option<Uuid> {
        self.hand_players[s].or(self.players[s])
    }
}

/// Folds one event into the tally; returns what to add to the players' statistics.
pub fn fold(tally: &mut HandTally, event: &TableEvent) -> Increments {
    let mut out = Increments::default();
    match event {
        TableEvent::MatchEnded { winners } => {
            out.matches = (0..4)
                .filter_map(|s| match (tally.players[s], tally.departed[s]) {
                    (Some(p), _) => Some((p, 1, i64::from(winners.contains(&s)))),
                    (None, Some(left)) => Some((left, 1, 0)),
                    (None, None) => None,
                })
                .collect();
        }
        TableEvent::Seats(players) => {
            tally.players = *players;
            tally.hand_players = *players;
        }
        TableEvent::Seat { seat, player } => {
            tally.players[*seat] = *player;
            if player.is_some() {
                // A player coming back plays the rest of the hand: it is theirs.
                tally.hand_players[*seat] = *player;
                tally.departed[*seat] = None;
            }
        }
        TableEvent::SeatLeft {
            seat,
            player,
            bot_substitute,
        } => {
            tally.players[*seat] = None;
            if *bot_substitute {
                // The hand in progress stays theirs (`hand_players`); the next ones are the bot's.
                tally.departed[*seat] = *player;
            } else {
                tally.hand_players[*seat] = None;
            }
        }
        TableEvent::HandDealt => tally.new_hand(),
        TableEvent::HandEnded(end) => {
            if end.outcome != Outcome::Cancelled {
                out.hands = hand_increments(tally, end);
            }
            tally.new_hand();
        }
        TableEvent::Hand(event) => match event.as_ref() {
            Event::HandStarted { .. } | Event::HandCancelled { .. } => tally.new_hand(),
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
                    out.hands = hand_increments(tally, end);
                }
                tally.new_hand();
            }
            _ => {}
        },
    }
    out
}

/// Per player whose hand it was: (player, hands played, won, score with penalties, opened,
/// opened with pairs).
fn hand_increments(tally: &HandTally, end: &HandEnd) -> Vec<(Uuid, i64, i64, i64, i64, i64)> {
    (0..4)
        .filter_map(|s| Some((s, tally.hand_player(s)?)))
        .map(|(s, player)| {
            let penalties: i64 = tally
                .penalties
                .iter()
                .filter(|(_, seat, _)| *seat == s)
                .map(|(_, _, p)| i64::from(*p))
                .sum();
            (
                player,
                1,
                i64::from(end.winner.map(usize::from) == Some(s)),
                i64::from(end.scores[s]) + penalties,
                i64::from(tally.opened[s].is_some()),
                i64::from(tally.opened[s] == Some(OpenKind::Pairs)),
            )
        })
        .collect()
}

/// What became of one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// Counted now (with any kept early events that came next).
    Counted,
    /// Its event id, or its table version, was counted already: nothing changed.
    Duplicate,
    /// A later version of its table than the next one: kept until the versions before it are
    /// counted (a connection lost in the middle of a publish can deliver a table's events out of
    /// order; docs/design/table-service.md, "Outbox").
    Early,
}

/// Counts one message of `table` once and in its table's version order: `payload` is the
/// published envelope (read with [`TableEvent::parse`]; one this consumer does not count still
/// takes its version), `version` the message's `Okey-Version` header. A message without one (an
/// older publisher's) is counted as it comes.
pub async fn apply(
    pool: &PgPool,
    event_id: &str,
    table: &str,
    version: Option<u64>,
    payload: &[u8],
) -> Result<Handled, StatisticsError> {
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
        return Ok(Handled::Duplicate);
    }
    let stored: Option<(sqlx::types::Json<HandTally>, Option<i64>)> =
        sqlx::query_as("SELECT tally, version FROM hand_tallies WHERE table_id = $1 FOR UPDATE")
            .bind(table)
            .fetch_optional(&mut *tx)
            .await?;
    // The last version counted: none for a table not seen yet (its first event is version 1),
    // unknown for one counted before versions were kept (what comes next is taken as next).
    let (mut tally, counted) = match stored {
        Some((tally, counted)) => (tally.0, counted.map(|v| v as u64)),
        None => (HandTally::default(), Some(0)),
    };
    let mut at = counted;
    if let (Some(version), Some(counted)) = (version, counted) {
        if version <= counted {
            tx.rollback().await?;
            return Ok(Handled::Duplicate);
        }
        if version > counted + 1 {
            sqlx::query(
                "INSERT INTO early_table_events (table_id, version, payload) VALUES ($1, $2, $3)
                 ON CONFLICT DO NOTHING",
            )
            .bind(table)
            .bind(version as i64)
            .bind(payload)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            return Ok(Handled::Early);
        }
    }
    count(&mut tx, &mut tally, payload).await?;
    if let Some(version) = version {
        at = Some(version);
        // The kept events that are next now, in order.
        loop {
            let next = at.map_or(0, |v| v + 1);
            let kept: Option<Vec<u8>> = sqlx::query_scalar(
                "DELETE FROM early_table_events WHERE table_id = $1 AND version = $2
                 RETURNING payload",
            )
            .bind(table)
            .bind(next as i64)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(kept) = kept else { break };
            count(&mut tx, &mut tally, &kept).await?;
            at = Some(next);
        }
    }
    sqlx::query(
        "INSERT INTO hand_tallies (table_id, tally, version) VALUES ($1, $2, $3)
         ON CONFLICT (table_id) DO UPDATE SET tally = EXCLUDED.tally,
             version = COALESCE(EXCLUDED.version, hand_tallies.version), updated_at = now()",
    )
    .bind(table)
    .bind(sqlx::types::Json(&tally))
    .bind(at.map(|v| v as i64))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Handled::Counted)
}

/// Folds one published envelope into `tally` and adds what it changes to the players'
/// statistics (nothing for a message this consumer does not count).
async fn count(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    tally: &mut HandTally,
    payload: &[u8],
) -> Result<(), StatisticsError> {
    let Some(event) = TableEvent::parse(payload) else {
        return Ok(());
    };
    let increments = fold(tally, &event);
    for (player, played, won, score, opened, pairs) in increments.hands {
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
        .execute(&mut **tx)
        .await?;
    }
    for (player, played, won) in increments.matches {
        sqlx::query(
            "UPDATE statistics SET matches_played = matches_played + $2,
                matches_won = matches_won + $3, updated_at = now() WHERE player_id = $1",
        )
        .bind(player)
        .bind(played)
        .bind(won)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

fn js_err(e: impl std::fmt::Display) -> StatisticsError {
    StatisticsError::JetStream(e.to_string())
}

/// Consumes table events into statistics until the task is aborted. Failures are logged and
/// retried with a pause; the events wait in JetStream meanwhile.
pub async fn run(jetstream: jetstream::Context, pool: PgPool, prefix: String) {
    let lag = ConsumerLag::new("okey.accounts.statistics");
    // The lag is also asked of JetStream, so a stuck consumer's gauges move.
    let watch = table_events::watch_lag(
        jetstream.clone(),
        table_events::public_subject(&prefix),
        CONSUMER,
        lag.clone(),
    );
    let consume = async {
        loop {
            if let Err(error) = consume(&jetstream, &pool, &prefix, &lag).await {
                tracing::warn!(%error, "statistics consumer stopped; restarting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    };
    tokio::join!(watch, consume);
}

async fn consume(
    jetstream: &jetstream::Context,
    pool: &PgPool,
    prefix: &str,
    lag: &ConsumerLag,
) -> Result<(), StatisticsError> {
    let subject = table_events::public_subject(prefix);
    let stream = table_events::stream(jetstream, &subject)
        .await
        .map_err(js_err)?;
    let consumer = table_events::durable_consumer(
        &stream,
        &Durable {
            name: CONSUMER,
            filter_subject: subject.clone(),
            // One message in flight keeps each table's order across restarts.
            max_ack_pending: 1,
            ack_wait: Duration::from_secs(30),
        },
    )
    .await
    .map_err(js_err)?;
    let mut messages = consumer.messages().await.map_err(js_err)?;
    tracing::info!(%subject, "statistics consumer running");
    while let Some(message) = messages.next().await {
        let message = message.map_err(js_err)?;
        // Processed in a CONSUMER span, a child of the table's publish span.
        let span = telemetry::process_span(&message, CONSUMER);
        let published = Published::decode(&message.payload).ok();
        if let Ok(info) = message.info() {
            lag.observe(info.pending, since_commit(published.as_ref()));
        }
        // The envelope's event id is the key: a copy republished under another `Nats-Msg-Id`
        // (past JetStream's duplicate window, or by hand) is still the same event. One this
        // build cannot read still takes its table version, by the id it was published under.
        let event_id = published
            .as_ref()
            .map(|p| p.event_id.clone())
            .filter(|id| !id.is_empty())
            .or_else(|| table_events::header(&message, "Nats-Msg-Id").map(str::to_owned));
        let version =
            table_events::header(&message, "Okey-Version").and_then(|v| v.parse::<u64>().ok());
        let table = message
            .subject
            .as_str()
            .rsplit('.')
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        match event_id {
            Some(event_id) => match apply(pool, &event_id, &table, version, &message.payload)
                .instrument(span.clone())
                .await
            {
                Ok(handled) => {
                    tracing::debug!(%event_id, %table, ?version, ?handled, "table event handled");
                }
                Err(error) => {
                    telemetry::record_error(&span, "database", &error);
                    tracing::warn!(%event_id, %error, "table event not counted yet; retrying");
                    let _ = message
                        .ack_with(jetstream::AckKind::Nak(Some(Duration::from_millis(500))))
                        .await;
                    continue;
                }
            },
            None => tracing::warn!(%table, "table event without an event id skipped"),
        }
        message.ack().await.map_err(js_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use okey_rules::matches::HandResult;
    use okey_table::{Seed, hex, seed_hash};

    use super::*;

    /// The bytes the table service's outbox publishes on the public subject for `event`: the
    /// table crate's own envelope code, not a hand-written fixture.
    pub fn published(event: &Stored) -> Vec<u8> {
        Published::public(
            "tables/t".into(),
            7,
            "e".into(),
            "2026-01-01T00:00:00Z".into(),
            event,
        )
        .encode()
    }

    fn stored(json: &str) -> Stored {
        serde_json::from_str(json).expect(json)
    }

    /// An engine event of the hand, as the table stores and publishes it.
    fn hand(engine: &str) -> TableEvent {
        let event: Event = serde_json::from_str(engine).expect(engine);
        let stored = match event {
            Event::HandEnded { end } => Stored::HandEnded {
                hand_number: 1,
                end,
                result: HandResult {
                    outcome: end.outcome,
                    winner: end.winner,
                    penalties: [0; 4],
                    scores: end.scores,
                },
                totals: [0; 4],
                seed: hex(&[0; 32]),
                racks: Default::default(),
                server_seed: None,
            },
            event => Stored::Played {
                hand_number: 1,
                event,
                first_meld: None,
                noted: Default::default(),
            },
        };
        TableEvent::parse(&published(&stored)).expect(engine)
    }

    #[test]
    fn seats_come_from_the_tables_own_events() {
        let a = Uuid::new_v4();
        let b = Uuid::new_v4();
        let mut tally = HandTally::default();
        let created = Stored::TableCreated {
            rules: okey_rules::Preset::Classic.rules(),
            seats: [Some(format!("players/{a}")), None, None, None],
            admission: Default::default(),
            server_seed_sha256: None,
        };
        fold(
            &mut tally,
            &TableEvent::parse(&published(&created)).unwrap(),
        );
        let taken = stored(&format!(
            r#"{{"type":"seat_taken","seat":2,"player":"players/{b}"}}"#
        ));
        fold(&mut tally, &TableEvent::parse(&published(&taken)).unwrap());
        assert_eq!(tally.players, [Some(a), None, Some(b), None]);
        let left = stored(&format!(
            r#"{{"type":"seat_left","seat":0,"player":"players/{a}"}}"#
        ));
        fold(&mut tally, &TableEvent::parse(&published(&left)).unwrap());
        let dealt = stored(
            r#"{"type":"hand_dealt","hand_number":2,"first":1,"indicator":"R9","seed_sha256":"00"}"#,
        );
        fold(&mut tally, &TableEvent::parse(&published(&dealt)).unwrap());
        assert_eq!(
            tally.players,
            [None, None, Some(b), None],
            "a new hand keeps the seats"
        );
    }

    #[test]
    fn a_deal_as_the_outbox_publishes_it_starts_a_new_hand() {
        let seed: Seed = [5; 32];
        let dealt = Stored::HandDealt {
            hand_number: 3,
            first: 2,
            indicator: "B7".parse().unwrap(),
            seed_sha256: seed_hash(&seed),
            seeding: None,
        };
        let bytes = published(&dealt);
        assert!(
            String::from_utf8_lossy(&bytes).contains(r#""shown":"dealt""#),
            "the public copy of a deal is a deal without racks"
        );
        assert_eq!(TableEvent::parse(&bytes), Some(TableEvent::HandDealt));
        let mut tally = HandTally {
            opened: [Some(OpenKind::Pairs), None, None, None],
            penalties: vec![(0, 1, 101)],
            ..HandTally::default()
        };
        fold(&mut tally, &TableEvent::HandDealt);
        assert_eq!(tally, HandTally::default(), "the last hand's tally is gone");
    }

    #[test]
    fn match_end_and_unknown_types_parse() {
        assert_eq!(
            TableEvent::parse(&published(&stored(
                r#"{"type":"match_ended","totals":[1,2,3,4],"winners":[0,2]}"#
            ))),
            Some(TableEvent::MatchEnded {
                winners: vec![0, 2]
            })
        );
        let unknown = r#"{"table":"tables/t","version":3,"event_id":"e","time":"t","event":{"shown":"public","event":{"type":"seat_joined","seat":1}}}"#;
        assert_eq!(TableEvent::parse(unknown.as_bytes()), None);
        let private = r#"{"table":"tables/t","version":3,"event_id":"e","time":"t","event":{"shown":"drawn","hand_number":1,"seat":0,"tile":"R1"}}"#;
        assert_eq!(TableEvent::parse(private.as_bytes()), None);
    }
    #[test]
    fn a_hand_counts_openings_penalties_and_the_winner() {
        let p: [Uuid; 4] = std::array::from_fn(|_| Uuid::new_v4());
        let mut tally = HandTally::default();
        fold(&mut tally, &TableEvent::Seats(p.map(Some)));
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
                (p[0], 1, 0, 50, 0, 0),
                (p[1], 1, 1, -202, 1, 1),
                (p[2], 1, 0, 181, 0, 0),
                (p[3], 1, 0, 30, 0, 0)
            ]
        );
        assert_eq!(
            tally,
            HandTally {
                players: p.map(Some),
                hand_players: p.map(Some),
                ..HandTally::default()
            },
            "the hand is forgotten, the seats kept"
        );
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
            &TableEvent::Seats(std::array::from_fn(|_| Some(Uuid::new_v4()))),
        );
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

    /// `players/{p}` leaves `seat` during the match: a bot plays on.
    fn left_for_a_bot(seat: u8, p: Uuid) -> TableEvent {
        let left = Stored::SeatLeft {
            seat,
            player: format!("players/{p}"),
            bot_substitute: true,
        };
        TableEvent::parse(&published(&left)).expect("seat_left parses")
    }

    fn deal(hand_number: u32) -> TableEvent {
        let dealt = Stored::HandDealt {
            hand_number,
            first: 0,
            indicator: "R9".parse().expect("a tile"),
            seed_sha256: seed_hash(&Seed::default()),
            seeding: None,
        };
        TableEvent::parse(&published(&dealt)).expect("hand_dealt parses")
    }

    const SCORES: &str = r#"{"type":"hand_ended","end":{"outcome":"finished","winner":0,"multiplier":1,"scores":[-101,40,50,60]}}"#;

    #[test]
    fn a_player_who_leaves_for_a_bot_keeps_that_hand_and_the_lost_match_not_the_bots_hands() {
        let p: [Uuid; 4] = std::array::from_fn(|_| Uuid::new_v4());
        let created = Stored::TableCreated {
            rules: okey_rules::Preset::Classic.rules(),
            seats: p.map(|p| Some(format!("players/{p}"))),
            admission: Default::default(),
            server_seed_sha256: None,
        };
        let mut tally = HandTally::default();
        fold(
            &mut tally,
            &TableEvent::parse(&published(&created)).unwrap(),
        );
        fold(&mut tally, &deal(1));
        fold(
            &mut tally,
            &hand(r#"{"type":"hand_opened","seat":0,"kind":"melds","amount":101,"melds":[]}"#),
        );
        // Seat 0 leaves in the middle of hand 1; the bot finishes it (and wins it).
        let left = left_for_a_bot(0, p[0]);
        assert_eq!(
            left,
            TableEvent::SeatLeft {
                seat: 0,
                player: Some(p[0]),
                bot_substitute: true
            }
        );
        assert_eq!(fold(&mut tally, &left), Increments::default());
        let first = fold(&mut tally, &hand(SCORES));
        assert_eq!(
            first.hands,
            vec![
                (p[0], 1, 1, -101, 1, 0),
                (p[1], 1, 0, 40, 0, 0),
                (p[2], 1, 0, 50, 0, 0),
                (p[3], 1, 0, 60, 0, 0)
            ],
            "the hand they left is theirs, with its score"
        );
        // Hand 2 is dealt to the bot in seat 0: the bot's hand counts for nobody.
        fold(&mut tally, &deal(2));
        let second = fold(&mut tally, &hand(SCORES));
        let who: Vec<Uuid> = second.hands.iter().map(|h| h.0).collect();
        assert_eq!(who, vec![p[1], p[2], p[3]], "not the departed player's");
        // The bot wins the match for seat 0: the player who left played it and did not win it.
        let ended = stored(r#"{"type":"match_ended","totals":[1,2,3,4],"winners":[0]}"#);
        let m = fold(&mut tally, &TableEvent::parse(&published(&ended)).unwrap());
        assert_eq!(
            m.matches,
            vec![(p[0], 1, 0), (p[1], 1, 0), (p[2], 1, 0), (p[3], 1, 0)]
        );
    }

    /// Turns that run out too often hand the seat to a bot (`seat_handed_to_bot`): the player
    /// left it as surely as with LeaveSeat, and a reclaim is coming back.
    #[test]
    fn a_seat_handed_to_a_bot_after_timeouts_counts_as_left_until_reclaimed() {
        let p: [Uuid; 4] = std::array::from_fn(|_| Uuid::new_v4());
        let parse = |e: Stored| TableEvent::parse(&published(&e)).expect("parses");
        let mut tally = HandTally::default();
        fold(&mut tally, &TableEvent::Seats(p.map(Some)));
        fold(&mut tally, &deal(1));
        let handed = parse(Stored::SeatHandedToBot {
            seat: 0,
            player: format!("players/{}", p[0]),
        });
        assert_eq!(handed, left_for_a_bot(0, p[0]));
        fold(&mut tally, &handed);
        let first = fold(&mut tally, &hand(SCORES));
        assert!(
            first.hands.contains(&(p[0], 1, 1, -101, 0, 0)),
            "hand 1 is theirs"
        );
        fold(&mut tally, &deal(2));
        let second = fold(&mut tally, &hand(SCORES));
        assert!(
            second.hands.iter().all(|h| h.0 != p[0]),
            "hand 2 is the bot's"
        );
        let ended = stored(r#"{"type":"match_ended","totals":[1,2,3,4],"winners":[0]}"#);
        let m = fold(&mut tally, &parse(ended.clone()));
        assert!(m.matches.contains(&(p[0], 1, 0)), "played, not won");

        // The same, but the player comes back in hand 2: that hand and the win are theirs.
        let mut tally = HandTally::default();
        fold(&mut tally, &TableEvent::Seats(p.map(Some)));
        fold(&mut tally, &deal(1));
        fold(&mut tally, &handed);
        fold(&mut tally, &hand(SCORES));
        fold(&mut tally, &deal(2));
        fold(
            &mut tally,
            &parse(Stored::SeatReclaimed {
                seat: 0,
                player: format!("players/{}", p[0]),
            }),
        );
        let second = fold(&mut tally, &hand(SCORES));
        assert!(second.hands.contains(&(p[0], 1, 1, -101, 0, 0)));
        let m = fold(&mut tally, &parse(ended));
        assert!(m.matches.contains(&(p[0], 1, 1)));
    }

    #[test]
    fn a_player_who_comes_back_plays_the_hand_and_the_match_again() {
        let p: [Uuid; 4] = std::array::from_fn(|_| Uuid::new_v4());
        let mut tally = HandTally::default();
        fold(&mut tally, &TableEvent::Seats(p.map(Some)));
        fold(&mut tally, &deal(1));
        fold(&mut tally, &left_for_a_bot(2, p[2]));
        fold(&mut tally, &hand(SCORES));
        fold(&mut tally, &deal(2));
        // Back in the middle of hand 2 (the table's JoinSeat for who left: `seat_taken`).
        let back = Stored::SeatTaken {
            seat: 2,
            player: format!("players/{}", p[2]),
            name: Some("Ayşe".into()),
        };
        fold(&mut tally, &TableEvent::parse(&published(&back)).unwrap());
        let second = fold(&mut tally, &hand(SCORES));
        assert_eq!(second.hands.len(), 4);
        assert!(second.hands.contains(&(p[2], 1, 0, 50, 0, 0)));
        let ended = stored(r#"{"type":"match_ended","totals":[1,2,3,4],"winners":[0,2]}"#);
        let m = fold(&mut tally, &TableEvent::parse(&published(&ended)).unwrap());
        assert_eq!(
            m.matches,
            vec![(p[0], 1, 1), (p[1], 1, 0), (p[2], 1, 1), (p[3], 1, 0)]
        );
    }
}
