//! Table chat and partner chat: checked (length, rate), kept in PostgreSQL (`chat_messages`, for
//! `live.chat_retention_secs`, then deleted by the retention sweep) and sent over core NATS.
//!
//! Subjects (prefix = `nats.subject_prefix`): `{prefix}.chat.{table}.table` for the whole table,
//! `{prefix}.chat.{table}.team.{0|1}` for one team (seats 0 and 2 are team 0, seats 1 and 3 team
//! 1). A reader subscribes to the table subject and to its own team's only, and reads kept
//! messages of those two channels only, so a partner message never reaches an opponent.
//!
//! Rate: at most `live.chat_burst` messages per `live.chat_window_ms` per player and table, a
//! fixed window counted in Redis (`{redis prefix}:chat:rate:{table}:{player}`).

use std::sync::Arc;
use std::time::Duration;

use okey_platform::counters;
use okey_rules::Seat;
use redis::aio::ConnectionManager;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use sqlx::Row;
use sqlx::types::Uuid;
use sqlx::types::chrono::{DateTime, Utc};
use tokio::sync::mpsc;
use tonic::codegen::tokio_stream::StreamExt;

use crate::clock::Clock;
use crate::ids::random_uuid;
use crate::settings::LiveSettings;

/// Who a message is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// Everyone at the table.
    Table,
    /// One team: 0 (seats 0 and 2) or 1 (seats 1 and 3).
    Team(u8),
}

impl Channel {
    fn stored(self) -> String {
        match self {
            Channel::Table => "table".into(),
            Channel::Team(t) => format!("team-{t}"),
        }
    }

    fn from_stored(text: &str) -> Channel {
        match text {
            "team-0" => Channel::Team(0),
            "team-1" => Channel::Team(1),
            _ => Channel::Table,
        }
    }
}

/// A seat's team.
pub fn team_of(seat: Seat) -> u8 {
    seat % 2
}

/// True when a reader in `seat` may read a message sent to `channel`.
pub fn readable(channel: Channel, seat: Seat) -> bool {
    match channel {
        Channel::Table => true,
        Channel::Team(t) => t == team_of(seat),
    }
}

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// The message's UUID.
    pub id: String,
    /// The table's UUID.
    pub table: String,
    pub channel: Channel,
    pub sender: String,
    pub sender_seat: Seat,
    pub text: String,
    /// Milliseconds since the Unix epoch.
    pub sent_at_ms: i64,
}

/// Why a message was refused.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error(
        "the message is empty or shows nothing: write 1 to {max} characters, at least one visible"
    )]
    Empty { max: u64 },
    #[error("the message has {chars} characters; the limit is {max}: shorten it and send again")]
    TooLong { chars: usize, max: u64 },
    #[error(
        "the message holds a control character or a bidirectional override, which would change \
         how the others' screens show it: send plain text"
    )]
    Unshowable,
    #[error(
        "more than {burst} messages in {window_secs} s: wait {} ms before sending again",
        retry_after.as_millis()
    )]
    TooFrequent {
        burst: u64,
        window_secs: u64,
        retry_after: Duration,
    },
    #[error("this table plays without partners: send to the table instead")]
    NoPartners,
    #[error("chat store: {0}")]
    Store(#[from] sqlx::Error),
    #[error("chat rate limiter: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("chat delivery: {0}")]
    Nats(String),
    #[error("you no longer sit at this table")]
    NotSeated,
    #[error("who sits where: {0}")]
    Seating(String),
}

/// Where the reader of a chat stream sits now (`None`: nowhere), asked before every message is
/// sent, so a stream follows its reader's seat rather than the one it was opened from.
pub type SeatNow = Arc<
    dyn Fn() -> std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<Option<Seat>, String>> + Send>,
        > + Send
        + Sync,
>;

/// The text as it is sent ([`okey_platform::fields::shown_text`]): none of its characters one
/// that would change how the other players' screens show it, at either end included; trimmed;
/// empty when it shows nothing (only zero-width or blank characters); then 1 to `max`
/// characters.
pub fn check_text(text: &str, max: u64) -> Result<String, ChatError> {
    let text = okey_platform::fields::shown_text(text).map_err(|_| ChatError::Unshowable)?;
    let chars = text.chars().count();
    if chars == 0 {
        return Err(ChatError::Empty { max });
    }
    if chars as u64 > max {
        return Err(ChatError::TooLong { chars, max });
    }
    Ok(text.to_owned())
}

/// The chat of this deployment.
#[derive(Clone)]
pub struct Chat {
    pool: PgPool,
    redis: ConnectionManager,
    nats: async_nats::Client,
    subject_prefix: String,
    key_prefix: String,
    clock: Arc<dyn Clock>,
    settings: LiveSettings,
}

fn decode(row: &sqlx::postgres::PgRow) -> Result<ChatMessage, sqlx::Error> {
    let sent_at: DateTime<Utc> = row.try_get("sent_at")?;
    Ok(ChatMessage {
        id: row.try_get::<Uuid, _>("message_id")?.to_string(),
        table: row.try_get::<Uuid, _>("table_id")?.to_string(),
        channel: Channel::from_stored(&row.try_get::<String, _>("channel")?),
        sender: row.try_get("sender")?,
        sender_seat: row.try_get::<i16, _>("sender_seat")? as Seat,
        text: row.try_get("body")?,
        sent_at_ms: sent_at.timestamp_millis(),
    })
}

const COLUMNS: &str = "message_id, table_id, channel, sender, sender_seat, body, sent_at";

impl Chat {
    /// The text as it would be sent (see [`check_text`]), by this deployment's limit.
    pub fn checked_text(&self, text: &str) -> Result<String, ChatError> {
        check_text(text, self.settings.chat_max_chars)
    }

    pub fn new(
        pool: PgPool,
        redis: ConnectionManager,
        nats: async_nats::Client,
        subject_prefix: &str,
        key_prefix: &str,
        clock: Arc<dyn Clock>,
        settings: LiveSettings,
    ) -> Chat {
        Chat {
            pool,
            redis,
            nats,
            subject_prefix: subject_prefix.to_owned(),
            key_prefix: key_prefix.to_owned(),
            clock,
            settings,
        }
    }

    fn subject(&self, table: Uuid, channel: Channel) -> String {
        match channel {
            Channel::Table => format!("{}.chat.{table}.table", self.subject_prefix),
            Channel::Team(t) => format!("{}.chat.{table}.team.{t}", self.subject_prefix),
        }
    }

    /// Sends `text` from `sender` in `seat` to the table or (`partner`) to the partner only.
    /// A retry with the same request id returns the first message and sends nothing.
    #[allow(clippy::too_many_arguments)]
    pub async fn send(
        &self,
        table: Uuid,
        sender: &str,
        seat: Seat,
        occupants: &[Option<String>; 4],
        partners: bool,
        partner: bool,
        request_id: &str,
        text: &str,
    ) -> Result<ChatMessage, ChatError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM chat_messages \
             WHERE table_id = $1 AND sender = $2 AND request_id = $3"
        );
        if let Some(row) = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
            .bind(table)
            .bind(sender)
            .bind(request_id)
            .fetch_optional(&self.pool)
            .await?
        {
            return Ok(decode(&row)?);
        }
        let text = check_text(text, self.settings.chat_max_chars)?;
        let channel = match (partner, partners) {
            (false, _) => Channel::Table,
            (true, true) => Channel::Team(team_of(seat)),
            (true, false) => return Err(ChatError::NoPartners),
        };
        let sent_at =
            DateTime::from_timestamp_millis(self.clock.now_ms() as i64).unwrap_or_else(Utc::now);
        let id = random_uuid();
        let message = ChatMessage {
            id: id.to_string(),
            table: table.to_string(),
            channel,
            sender: sender.to_owned(),
            sender_seat: seat,
            text,
            sent_at_ms: sent_at.timestamp_millis(),
        };
        // A partner message is for the players in the team's seats now, and only them.
        let recipients: Option<Vec<&str>> = match channel {
            Channel::Table => None,
            Channel::Team(team) => Some(
                [team, team + 2]
                    .iter()
                    .filter_map(|s| occupants[*s as usize].as_deref())
                    .collect(),
            ),
        };
        // The row is inserted before the message is counted, in one transaction: a retry racing
        // the first send waits on the row, then answers with it, and is never counted itself.
        let mut tx = self.pool.begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO chat_messages \
             (message_id, table_id, channel, sender, sender_seat, request_id, body, sent_at, \
              recipients) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
             ON CONFLICT (table_id, sender, request_id) DO NOTHING",
        )
        .bind(id)
        .bind(table)
        .bind(channel.stored())
        .bind(sender)
        .bind(i16::from(seat))
        .bind(request_id)
        .bind(&message.text)
        .bind(sent_at)
        .bind(recipients)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            // A retry raced the first send: answer with the first.
            tx.rollback().await?;
            let row = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(table)
                .bind(sender)
                .bind(request_id)
                .fetch_one(&self.pool)
                .await?;
            return Ok(decode(&row)?);
        }
        // Refused past the burst: dropping the transaction takes the row back.
        self.admit(table, sender).await?;
        tx.commit().await?;
        let payload = serde_json::to_vec(&message).expect("messages serialize");
        self.nats
            .publish(self.subject(table, channel), payload.into())
            .await
            .map_err(|e| ChatError::Nats(e.to_string()))?;
        Ok(message)
    }

    /// Counts a message against the sender's window; refuses it past the burst.
    async fn admit(&self, table: Uuid, sender: &str) -> Result<(), ChatError> {
        let key = format!("{}:chat:rate:{table}:{sender}", self.key_prefix);
        let mut conn = self.redis.clone();
        let window = self.settings.chat_window_ms;
        let counted = counters::count_one(&mut conn, &key, Duration::from_millis(window)).await?;
        if counted.count > self.settings.chat_burst {
            return Err(ChatError::TooFrequent {
                burst: self.settings.chat_burst,
                window_secs: window.div_ceil(1000),
                retry_after: counted.window_left,
            });
        }
        Ok(())
    }

    /// The messages `reader` may read at `table`, kept ones first (as `seat`, where it sits
    /// when the stream opens: the table's, and the partner messages sent to it in that team),
    /// then live ones, until the receiver is dropped. Every live message
    /// is checked against where the reader sits when it arrives ([`SeatNow`]): a partner message
    /// goes only to a reader in that team's seats then, and a reader who sits nowhere any more
    /// gets [`ChatError::NotSeated`] and the stream ends.
    pub async fn watch(
        &self,
        table: Uuid,
        reader: &str,
        seat: Seat,
        seat_now: SeatNow,
    ) -> Result<mpsc::Receiver<Result<ChatMessage, ChatError>>, ChatError> {
        let team = Channel::Team(team_of(seat));
        let nats_error = |e: async_nats::SubscribeError| ChatError::Nats(e.to_string());
        let mut everyone = self
            .nats
            .subscribe(self.subject(table, Channel::Table))
            .await
            .map_err(nats_error)?;
        // Both teams' subjects: the reader may change team while the stream is open.
        let mut teams = self
            .nats
            .subscribe(format!("{}.chat.{table}.team.*", self.subject_prefix))
            .await
            .map_err(nats_error)?;
        let sql = format!(
            "SELECT {COLUMNS} FROM chat_messages \
             WHERE table_id = $1 AND (channel = 'table' OR (channel = $2 \
               AND (recipients IS NULL OR $3 = ANY(recipients)))) ORDER BY seq"
        );
        let kept: Vec<ChatMessage> = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(table)
            .bind(team.stored())
            .bind(reader)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(decode)
            .collect::<Result<_, _>>()?;
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(async move {
            let mut seen = std::collections::HashSet::new();
            for m in kept {
                seen.insert(m.id.clone());
                if tx.send(Ok(m)).await.is_err() {
                    return;
                }
            }
            loop {
                let next = tokio::select! {
                    () = tx.closed() => return,
                    m = everyone.next() => m,
                    m = teams.next() => m,
                };
                let Some(m) = next else { return };
                let Ok(message) = serde_json::from_slice::<ChatMessage>(&m.payload) else {
                    continue;
                };
                if !seen.insert(message.id.clone()) {
                    continue;
                }
                let seat = match seat_now().await {
                    Ok(Some(seat)) => seat,
                    Ok(None) => {
                        let _ = tx.send(Err(ChatError::NotSeated)).await;
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(Err(ChatError::Seating(e))).await;
                        return;
                    }
                };
                if !readable(message.channel, seat) {
                    continue; // Never another team's.
                }
                if tx.send(Ok(message)).await.is_err() {
                    return;
                }
            }
        });
        Ok(rx)
    }

    /// Deletes messages older than the retention. Returns how many.
    pub async fn sweep(&self) -> Result<u64, sqlx::Error> {
        let retention = self.settings.chat_retention_secs.saturating_mul(1000);
        let cutoff_ms = self.clock.now_ms().saturating_sub(retention) as i64;
        let cutoff = DateTime::from_timestamp_millis(cutoff_ms).unwrap_or_default();
        let done = sqlx::query("DELETE FROM chat_messages WHERE sent_at < $1")
            .bind(cutoff)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// Runs the retention sweep until the process stops.
    pub async fn run_retention(self) {
        let every = Duration::from_millis(self.settings.chat_sweep_interval_ms);
        loop {
            match self.sweep().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(deleted = n, "old chat messages deleted"),
                Err(e) => tracing::warn!(error = %e, "chat retention sweep failed"),
            }
            tokio::time::sleep(every).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_trimmed_and_limited_in_characters() {
        assert_eq!(check_text("  merhaba ", 10).unwrap(), "merhaba");
        for blank in ["   ", "\u{200B}", " \u{200B}\u{2060} "] {
            assert!(
                matches!(check_text(blank, 10), Err(ChatError::Empty { .. })),
                "{blank:?}"
            );
        }
        assert!(
            check_text("çççççççççç", 10).is_ok(),
            "characters, not bytes"
        );
        let err = check_text("çççççççççççç", 10).unwrap_err();
        assert!(matches!(err, ChatError::TooLong { chars: 12, max: 10 }));
        for text in [
            "a\u{1b}[2Jb",
            "gg\rwp",
            "\u{202E}gnikcah",
            "line\nbreak",
            "hi\n",
            "\u{2029}hi",
            "\thi",
        ] {
            assert!(
                matches!(check_text(text, 200), Err(ChatError::Unshowable)),
                "{text:?}"
            );
        }
        assert_eq!(
            check_text(" iyi oyunlar \u{200F} ", 200).unwrap(),
            "iyi oyunlar \u{200F}"
        );
        assert!(err.to_string().contains("shorten it"));
    }

    #[test]
    fn partners_share_a_team() {
        assert_eq!(team_of(0), team_of(2));
        assert_eq!(team_of(1), team_of(3));
        assert_ne!(team_of(0), team_of(1));
        assert!(readable(Channel::Team(0), 2) && !readable(Channel::Team(0), 3));
        assert!((0..4).all(|s| readable(Channel::Table, s)));
    }
}
