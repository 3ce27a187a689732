//! PostgreSQL, the truth for tickets, claims and rooms (`migrations/matchmaking`).
//!
//! **The atomic claim.** A group of tickets becomes a table through one transaction that selects
//! them `FOR UPDATE SKIP LOCKED`, records a `claims` row (the seats, the rules) and points every
//! ticket at it. Row locks make the claim atomic across any number of replicas: two replicas
//! scanning the same queue never get the same ticket (the second skips the rows the first holds,
//! and a ticket with a claim is no longer in the queue once the first commits), and a CancelTicket
//! or an expiry that meets a locked ticket waits for the claim to commit and then sees it taken.
//! SKIP LOCKED rather than plain FOR UPDATE so replicas never queue behind each other, and rather
//! than an advisory lock or a Redis lock because the lock is the row itself: it dies with the
//! transaction, so a replica killed mid-claim leaves nothing held.
//!
//! A claim is then made a table by the table service (its id is CreateTable's request id) and
//! finished: tickets MATCHED with the table, or the room STARTED. A claim whose `lease_until`
//! passed unfinished (its replica died) is taken over by another replica, which repeats the same
//! CreateTable and gets the same table.

use chrono::{DateTime, Utc};
use okey_rules::RuleSet;
use serde_json::{Value, json};
use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use crate::domain::{
    BotLevel, MatchmakingError, Occupant, Room, RoomState, Ticket, TicketState, rules_key,
};

/// Where a table comes from, as the claim records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimOrigin {
    QuickPlay,
    PrivateRoom,
}

impl ClaimOrigin {
    fn as_str(self) -> &'static str {
        match self {
            ClaimOrigin::QuickPlay => "quick_play",
            ClaimOrigin::PrivateRoom => "private_room",
        }
    }
}

/// A group taken to become a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    pub claim_id: Uuid,
    pub origin: ClaimOrigin,
    pub rules: RuleSet,
    pub seats: [Occupant; 4],
    pub room_id: Option<Uuid>,
    /// Private rooms: who may sit (the members) and whether others may watch.
    pub members: Vec<String>,
    pub spectators_allowed: bool,
}

/// A ticket to open.
#[derive(Clone, Debug)]
pub struct NewTicket {
    pub player_id: Uuid,
    pub request_id: String,
    pub rules: RuleSet,
    pub allow_bots: bool,
    pub bot_level: BotLevel,
    pub now: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

const TICKET_COLUMNS: &str = "t.ticket_id, t.player_id, t.rules, t.rules_key, t.allow_bots, \
     t.bot_level, t.state, t.table_name, t.seat, t.created_at, t.expires_at, \
     CASE WHEN t.state = 'searching' THEN LEAST(4, (SELECT count(*) FROM tickets o \
              WHERE o.rules_key = t.rules_key AND o.state = 'searching'))::int \
          WHEN t.state = 'matched' THEN (SELECT count(*) FROM tickets o \
              WHERE o.claim_id = t.claim_id)::int \
          ELSE 1 END AS players_found";

fn ticket_of(row: &PgRow) -> Result<Ticket, sqlx::Error> {
    let Json(rules): Json<RuleSet> = row.try_get("rules")?;
    Ok(Ticket {
        ticket_id: row.try_get("ticket_id")?,
        player_id: row.try_get("player_id")?,
        rules,
        rules_key: row.try_get("rules_key")?,
        allow_bots: row.try_get("allow_bots")?,
        bot_level: BotLevel::parse(row.try_get::<&str, _>("bot_level")?),
        state: TicketState::parse(row.try_get::<&str, _>("state")?),
        table: row.try_get("table_name")?,
        seat: row.try_get("seat")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        players_found: row.try_get("players_found")?,
    })
}

fn occupant_json(o: &Occupant) -> Value {
    match o {
        Occupant::Player(p) => json!({ "player": p }),
        Occupant::Bot(level) => json!({ "bot": level.as_str() }),
    }
}

fn occupant_of(v: &Value) -> Occupant {
    match v.get("player").and_then(Value::as_str) {
        Some(p) => Occupant::Player(p.to_owned()),
        None => Occupant::Bot(BotLevel::parse(
            v.get("bot").and_then(Value::as_str).unwrap_or(""),
        )),
    }
}

fn claim_of(row: &PgRow) -> Result<Claim, sqlx::Error> {
    let Json(rules): Json<RuleSet> = row.try_get("rules")?;
    let Json(seats): Json<Value> = row.try_get("seats")?;
    let list = seats.as_array().cloned().unwrap_or_default();
    let seat = |i: usize| {
        list.get(i)
            .map(occupant_of)
            .unwrap_or(Occupant::Bot(BotLevel::Default))
    };
    let origin: &str = row.try_get("origin")?;
    let Json(members): Json<Vec<String>> = row.try_get("members")?;
    Ok(Claim {
        claim_id: row.try_get("claim_id")?,
        origin: if origin == "private_room" {
            ClaimOrigin::PrivateRoom
        } else {
            ClaimOrigin::QuickPlay
        },
        rules,
        seats: [seat(0), seat(1), seat(2), seat(3)],
        room_id: row.try_get("room_id")?,
        members,
        spectators_allowed: row.try_get("spectators_allowed")?,
    })
}

/// The claim's row with what a private room adds (members, spectators), read from its room.
const CLAIM_COLUMNS: &str = "c.claim_id, c.origin, c.rules, c.seats, c.room_id, \
     COALESCE((SELECT jsonb_agg('players/' || m.player_id::text ORDER BY m.seat) \
               FROM room_members m WHERE m.room_id = c.room_id), '[]'::jsonb) AS members, \
     COALESCE((SELECT r.spectators_allowed FROM rooms r WHERE r.room_id = c.room_id), true) \
         AS spectators_allowed";

/// The service's PostgreSQL.
#[derive(Clone, Debug)]
pub struct Store {
    pool: PgPool,
}

impl Store {
    pub fn new(pool: PgPool) -> Store {
        Store { pool }
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Opens a ticket, or returns the one this request opened before, or the player's searching
    /// ticket when its rules are the same; another searching ticket is `TicketOpen`.
    pub async fn open_ticket(&self, new: &NewTicket) -> Result<Ticket, MatchmakingError> {
        let key = rules_key(&new.rules);
        for _ in 0..3 {
            let inserted: Option<Uuid> = sqlx::query_scalar(
                "INSERT INTO tickets (ticket_id, player_id, rules, rules_key, allow_bots, \
                     bot_level, state, created_at, expires_at, fill_at, request_id, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, 'searching', $7, $8, \
                     CASE WHEN $5 THEN $8 END, $9, $7) \
                 ON CONFLICT DO NOTHING RETURNING ticket_id",
            )
            .bind(Uuid::new_v4())
            .bind(new.player_id)
            .bind(Json(&new.rules))
            .bind(&key)
            .bind(new.allow_bots)
            .bind(new.bot_level.as_str())
            .bind(new.now)
            .bind(new.expires_at)
            .bind(&new.request_id)
            .fetch_optional(&self.pool)
            .await?;
            if let Some(id) = inserted {
                return self.ticket(id, new.player_id).await;
            }
            // A retry of the same request, or another searching ticket.
            let query = format!(
                "SELECT {TICKET_COLUMNS} FROM tickets t \
                 WHERE t.player_id = $1 AND (t.request_id = $2 OR t.state = 'searching') \
                 ORDER BY (t.request_id = $2) DESC LIMIT 1"
            );
            let row = sqlx::query(sqlx::AssertSqlSafe(query))
                .bind(new.player_id)
                .bind(&new.request_id)
                .fetch_optional(&self.pool)
                .await?;
            let Some(row) = row else {
                continue; // the other ticket closed in between: try again
            };
            let found = ticket_of(&row)?;
            let same_request: Option<String> =
                sqlx::query_scalar("SELECT request_id FROM tickets WHERE ticket_id = $1")
                    .bind(found.ticket_id)
                    .fetch_one(&self.pool)
                    .await?;
            if same_request.as_deref() == Some(new.request_id.as_str()) || found.rules_key == key {
                return Ok(found);
            }
            return Err(MatchmakingError::TicketOpen(found.ticket_id));
        }
        Err(MatchmakingError::Internal(
            "the open ticket kept changing".into(),
        ))
    }

    /// The player's ticket (another player's is not found).
    pub async fn ticket(&self, ticket_id: Uuid, player: Uuid) -> Result<Ticket, MatchmakingError> {
        let query = format!(
            "SELECT {TICKET_COLUMNS} FROM tickets t WHERE t.ticket_id = $1 AND t.player_id = $2"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(query))
            .bind(ticket_id)
            .bind(player)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(MatchmakingError::TicketNotFound)?;
        Ok(ticket_of(&row)?)
    }

    /// Cancels a searching ticket not yet taken into a table. A locked ticket (being claimed) is
    /// waited for, then seen as taken.
    pub async fn cancel_ticket(
        &self,
        ticket_id: Uuid,
        player: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Ticket, MatchmakingError> {
        sqlx::query(
            "UPDATE tickets SET state = 'cancelled', updated_at = $3 \
             WHERE ticket_id = $1 AND player_id = $2 AND state = 'searching' AND claim_id IS NULL",
        )
        .bind(ticket_id)
        .bind(player)
        .bind(now)
        .execute(&self.pool)
        .await?;
        let ticket = self.ticket(ticket_id, player).await?;
        match ticket.state {
            TicketState::Cancelled => Ok(ticket),
            _ => Err(MatchmakingError::TicketClosed),
        }
    }

    /// Queue keys with at least four tickets waiting.
    pub async fn full_queues(&self) -> Result<Vec<String>, MatchmakingError> {
        Ok(sqlx::query_scalar(
            "SELECT rules_key FROM tickets WHERE state = 'searching' AND claim_id IS NULL \
             GROUP BY rules_key HAVING count(*) >= 4",
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// Takes the longest-waiting free tickets of `key`, four by four, into up to `groups` claims
    /// in one transaction (one commit for the batch, not one per table: a queue of thousands is
    /// claimed as fast as tables can be made); nothing when fewer than four are free (locked
    /// ones are skipped, never waited for).
    pub async fn claim_groups(
        &self,
        key: &str,
        groups: usize,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<Vec<Claim>, MatchmakingError> {
        let mut tx = self.pool.begin().await?;
        let rows = sqlx::query(
            "SELECT ticket_id, player_id, rules FROM tickets \
             WHERE rules_key = $1 AND state = 'searching' AND claim_id IS NULL \
             ORDER BY created_at, ticket_id LIMIT $2 FOR UPDATE SKIP LOCKED",
        )
        .bind(key)
        .bind((groups.max(1) * 4) as i64)
        .fetch_all(&mut *tx)
        .await?;
        let mut claims = Vec::new();
        for group in rows.chunks_exact(4) {
            let Json(rules): Json<RuleSet> = group[0].try_get("rules")?;
            let picked: Vec<(Uuid, Uuid)> = group
                .iter()
                .map(|r| Ok((r.try_get("ticket_id")?, r.try_get("player_id")?)))
                .collect::<Result<_, sqlx::Error>>()?;
            claims.push(
                claim_tickets(&mut tx, rules, &picked, BotLevel::Default, now, lease_until).await?,
            );
        }
        if claims.is_empty() {
            return Ok(claims);
        }
        tx.commit().await?;
        Ok(claims)
    }

    /// Tickets that allow bots and whose wait is over, longest waiting first.
    pub async fn due_bot_fills(&self, now: DateTime<Utc>) -> Result<Vec<Uuid>, MatchmakingError> {
        Ok(sqlx::query_scalar(
            "SELECT ticket_id FROM tickets \
             WHERE state = 'searching' AND claim_id IS NULL AND allow_bots AND expires_at <= $1 \
             ORDER BY created_at LIMIT 100",
        )
        .bind(now)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Takes a due ticket and up to three other free tickets of its rules that allow bots into a
    /// claim whose other seats get bots at the due ticket's level.
    pub async fn claim_bot_fill(
        &self,
        ticket_id: Uuid,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<Option<Claim>, MatchmakingError> {
        let mut tx = self.pool.begin().await?;
        let Some(first) = sqlx::query(
            "SELECT ticket_id, player_id, rules, rules_key, bot_level FROM tickets \
             WHERE ticket_id = $1 AND state = 'searching' AND claim_id IS NULL AND allow_bots \
                 AND expires_at <= $2 \
             FOR UPDATE SKIP LOCKED",
        )
        .bind(ticket_id)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?
        else {
            return Ok(None);
        };
        let key: String = first.try_get("rules_key")?;
        let level = BotLevel::parse(first.try_get::<&str, _>("bot_level")?);
        let Json(rules): Json<RuleSet> = first.try_get("rules")?;
        let mut picked: Vec<(Uuid, Uuid)> =
            vec![(first.try_get("ticket_id")?, first.try_get("player_id")?)];
        let others = sqlx::query(
            "SELECT ticket_id, player_id FROM tickets \
             WHERE rules_key = $1 AND state = 'searching' AND claim_id IS NULL AND allow_bots \
                 AND ticket_id <> $2 \
             ORDER BY created_at, ticket_id LIMIT 3 FOR UPDATE SKIP LOCKED",
        )
        .bind(&key)
        .bind(ticket_id)
        .fetch_all(&mut *tx)
        .await?;
        for r in &others {
            picked.push((r.try_get("ticket_id")?, r.try_get("player_id")?));
        }
        let claim = claim_tickets(&mut tx, rules, &picked, level, now, lease_until).await?;
        tx.commit().await?;
        Ok(Some(claim))
    }

    /// Expires the searching tickets without bots whose time is up; returns how many.
    pub async fn expire_tickets(&self, now: DateTime<Utc>) -> Result<u64, MatchmakingError> {
        Ok(sqlx::query(
            "UPDATE tickets SET state = 'expired', updated_at = $1 WHERE ticket_id IN ( \
                 SELECT ticket_id FROM tickets \
                 WHERE state = 'searching' AND claim_id IS NULL AND NOT allow_bots \
                     AND expires_at <= $1 \
                 LIMIT 1000 FOR UPDATE SKIP LOCKED)",
        )
        .bind(now)
        .execute(&self.pool)
        .await?
        .rows_affected())
    }

    /// Unfinished claims whose lease ran out, taken over with a new lease.
    pub async fn take_over_claims(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<Vec<Claim>, MatchmakingError> {
        let ids: Vec<Uuid> = sqlx::query_scalar(
            "UPDATE claims SET lease_until = $2 WHERE claim_id IN ( \
                 SELECT claim_id FROM claims WHERE table_name IS NULL AND lease_until <= $1 \
                 ORDER BY lease_until LIMIT 50 FOR UPDATE SKIP LOCKED) \
             RETURNING claim_id",
        )
        .bind(now)
        .bind(lease_until)
        .fetch_all(&self.pool)
        .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let query = format!("SELECT {CLAIM_COLUMNS} FROM claims c WHERE c.claim_id = ANY($1)");
        let rows = sqlx::query(sqlx::AssertSqlSafe(query))
            .bind(&ids)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.iter().map(claim_of).collect::<Result<_, _>>()?)
    }

    /// A claim by id (with its room's members).
    pub async fn claim(&self, claim_id: Uuid) -> Result<Option<Claim>, MatchmakingError> {
        let query = format!("SELECT {CLAIM_COLUMNS} FROM claims c WHERE c.claim_id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(query))
            .bind(claim_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(claim_of).transpose()?)
    }

    /// The table was made: its tickets are MATCHED (or its room STARTED). Idempotent.
    pub async fn finish_claim(
        &self,
        claim_id: Uuid,
        table: &str,
        now: DateTime<Utc>,
    ) -> Result<(), MatchmakingError> {
        let mut tx = self.pool.begin().await?;
        let room: Option<Option<Uuid>> = sqlx::query_scalar(
            "UPDATE claims SET table_name = $2 WHERE claim_id = $1 AND table_name IS NULL \
             RETURNING room_id",
        )
        .bind(claim_id)
        .bind(table)
        .fetch_optional(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE tickets SET state = 'matched', table_name = $2, updated_at = $3 \
             WHERE claim_id = $1 AND state = 'searching'",
        )
        .bind(claim_id)
        .bind(table)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if let Some(Some(room)) = room {
            sqlx::query(
                "UPDATE rooms SET state = 'started', table_name = $2, updated_at = $3 \
                 WHERE room_id = $1 AND state = 'open'",
            )
            .bind(room)
            .bind(table)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The table service refused the claim for good (a bug, not a passing failure): its tickets
    /// are EXPIRED rather than retried forever, a room stays open for its host to try again.
    pub async fn abandon_claim(
        &self,
        claim_id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<(), MatchmakingError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "UPDATE tickets SET state = 'expired', updated_at = $2 \
             WHERE claim_id = $1 AND state = 'searching'",
        )
        .bind(claim_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM claims WHERE claim_id = $1 AND table_name IS NULL")
            .bind(claim_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    // ----- Rooms -----------------------------------------------------------------------------

    /// Reads a room with its members (`FOR UPDATE` inside `tx` when `lock`).
    async fn room_in(
        tx: &mut Transaction<'_, Postgres>,
        room_id: Uuid,
        lock: bool,
    ) -> Result<Option<(Room, bool)>, MatchmakingError> {
        let query = format!(
            "SELECT room_id, code, host_player_id, rules, state, fill_with_bots, bot_level, \
                 table_name, expires_at, password_hash IS NOT NULL AS has_password, public, \
                 spectators_allowed, \
                 EXISTS (SELECT 1 FROM claims c WHERE c.room_id = rooms.room_id \
                     AND c.table_name IS NULL) AS starting \
             FROM rooms WHERE room_id = $1 {}",
            if lock { "FOR UPDATE" } else { "" }
        );
        let Some(row) = sqlx::query(sqlx::AssertSqlSafe(query))
            .bind(room_id)
            .fetch_optional(&mut **tx)
            .await?
        else {
            return Ok(None);
        };
        let members = sqlx::query(
            "SELECT seat, player_id, display_name FROM room_members WHERE room_id = $1",
        )
        .bind(room_id)
        .fetch_all(&mut **tx)
        .await?;
        let mut room = room_of(&row)?;
        for m in &members {
            let seat: i32 = m.try_get("seat")?;
            let player: Uuid = m.try_get("player_id")?;
            room.members[seat as usize] = Some(player);
            room.names.insert(player, m.try_get("display_name")?);
        }
        Ok(Some((room, row.try_get("starting")?)))
    }

    /// A room with its members.
    pub async fn room(&self, room_id: Uuid) -> Result<Option<Room>, MatchmakingError> {
        let mut tx = self.pool.begin().await?;
        let room = Self::room_in(&mut tx, room_id, false).await?;
        tx.commit().await?;
        Ok(room.map(|(r, _)| r))
    }

    /// Creates a room with its host in seat 0, under a code no open room has. `Ok(None)`: the
    /// code was taken (pick another).
    #[allow(clippy::too_many_arguments)]
    pub async fn create_room(
        &self,
        room: &Room,
        password_hash: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Option<Room>, MatchmakingError> {
        let mut tx = self.pool.begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO rooms (room_id, code, host_player_id, rules, state, fill_with_bots, \
                 bot_level, created_at, expires_at, password_hash, public, spectators_allowed, \
                 preset, updated_at) \
             VALUES ($1, $2, $3, $4, 'open', $5, $6, $7, $8, $9, $10, $11, $12, $7) \
             ON CONFLICT DO NOTHING",
        )
        .bind(room.room_id)
        .bind(&room.code)
        .bind(room.host)
        .bind(Json(&room.rules))
        .bind(room.fill_with_bots)
        .bind(room.bot_level.as_str())
        .bind(now)
        .bind(room.expires_at)
        .bind(password_hash)
        .bind(room.public)
        .bind(room.spectators_allowed)
        .bind(room.rules.preset.name())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 0 {
            return Ok(None);
        }
        sqlx::query(
            "INSERT INTO room_members (room_id, seat, player_id, display_name) \
             VALUES ($1, 0, $2, $3)",
        )
        .bind(room.room_id)
        .bind(room.host)
        .bind(room.names.get(&room.host).map_or("", String::as_str))
        .execute(&mut *tx)
        .await?;
        let created = Self::room_in(&mut tx, room.room_id, false).await?;
        tx.commit().await?;
        Ok(created.map(|(r, _)| r))
    }

    /// The room of a code (the open one, else the latest that had it), with its password hash.
    pub async fn room_by_code(
        &self,
        code: &str,
    ) -> Result<Option<(Uuid, Option<String>)>, MatchmakingError> {
        let row = sqlx::query(
            "SELECT room_id, password_hash FROM rooms WHERE code = $1              ORDER BY state = 'open' DESC, created_at DESC LIMIT 1",
        )
        .bind(code)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row
            .map(|r| Ok::<_, sqlx::Error>((r.try_get("room_id")?, r.try_get("password_hash")?)))
            .transpose()?)
    }

    /// Runs `change` on the locked room and its members; `change` returns the member rows to
    /// write (index = seat) and whether the room closes.
    pub async fn change_room<F>(&self, room_id: Uuid, change: F) -> Result<Room, MatchmakingError>
    where
        F: FnOnce(&Room, bool) -> Result<RoomChange, MatchmakingError>,
    {
        let mut tx = self.pool.begin().await?;
        let (room, starting) = Self::room_in(&mut tx, room_id, true)
            .await?
            .ok_or(MatchmakingError::RoomNotFound)?;
        let outcome = change(&room, starting)?;
        match outcome {
            RoomChange::Nothing => {}
            RoomChange::Members(members) => {
                sqlx::query("DELETE FROM room_members WHERE room_id = $1")
                    .bind(room_id)
                    .execute(&mut *tx)
                    .await?;
                for (seat, m) in members.iter().enumerate() {
                    if let Some(player) = m {
                        sqlx::query(
                            "INSERT INTO room_members (room_id, seat, player_id, display_name) \
                             VALUES ($1, $2, $3, $4)",
                        )
                        .bind(room_id)
                        .bind(seat as i32)
                        .bind(player)
                        .bind(room.names.get(player).map_or("", String::as_str))
                        .execute(&mut *tx)
                        .await?;
                    }
                }
                sqlx::query("UPDATE rooms SET updated_at = now() WHERE room_id = $1")
                    .bind(room_id)
                    .execute(&mut *tx)
                    .await?;
            }
            RoomChange::Join { seat, player, name } => {
                sqlx::query(
                    "INSERT INTO room_members (room_id, seat, player_id, display_name) \
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(room_id)
                .bind(seat as i32)
                .bind(player)
                .bind(&name)
                .execute(&mut *tx)
                .await?;
                sqlx::query("UPDATE rooms SET updated_at = now() WHERE room_id = $1")
                    .bind(room_id)
                    .execute(&mut *tx)
                    .await?;
            }
            RoomChange::Close => {
                sqlx::query(
                    "UPDATE rooms SET state = 'closed', updated_at = now() WHERE room_id = $1",
                )
                .bind(room_id)
                .execute(&mut *tx)
                .await?;
            }
            RoomChange::Start {
                claim_id,
                seats,
                lease_until,
            } => {
                sqlx::query(
                    "INSERT INTO claims (claim_id, origin, rules, seats, room_id, lease_until) \
                     VALUES ($1, 'private_room', $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                )
                .bind(claim_id)
                .bind(Json(&room.rules))
                .bind(Json(Value::Array(
                    seats.iter().map(occupant_json).collect(),
                )))
                .bind(room_id)
                .bind(lease_until)
                .execute(&mut *tx)
                .await?;
            }
        }
        let (after, _) = Self::room_in(&mut tx, room_id, false)
            .await?
            .ok_or(MatchmakingError::RoomNotFound)?;
        tx.commit().await?;
        Ok(after)
    }

    /// The pending claim that starts a room, if any.
    pub async fn room_claim(&self, room_id: Uuid) -> Result<Option<Uuid>, MatchmakingError> {
        Ok(sqlx::query_scalar(
            "SELECT claim_id FROM claims WHERE room_id = $1 AND table_name IS NULL",
        )
        .bind(room_id)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Closes the open rooms whose time is up (and that are not being started).
    pub async fn expire_rooms(&self, now: DateTime<Utc>) -> Result<u64, MatchmakingError> {
        Ok(sqlx::query(
            "UPDATE rooms SET state = 'closed', updated_at = $1 WHERE room_id IN ( \
                 SELECT r.room_id FROM rooms r WHERE r.state = 'open' AND r.expires_at <= $1 \
                     AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.room_id = r.room_id \
                         AND c.table_name IS NULL) \
                 LIMIT 1000 FOR UPDATE SKIP LOCKED)",
        )
        .bind(now)
        .execute(&self.pool)
        .await?
        .rows_affected())
    }

    /// Open public rooms, oldest first, after `after` (created_at, room_id), of `preset` if set.
    pub async fn lobby(
        &self,
        preset: Option<&str>,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Vec<(Room, DateTime<Utc>)>, MatchmakingError> {
        let (after_time, after_id) = after.unzip();
        let ids = sqlx::query(
            "SELECT room_id, created_at FROM rooms \
             WHERE state = 'open' AND public AND ($1::text IS NULL OR preset = $1) \
                 AND ($2::timestamptz IS NULL OR (created_at, room_id) > ($2, $3)) \
             ORDER BY created_at, room_id LIMIT $4",
        )
        .bind(preset)
        .bind(after_time)
        .bind(after_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        let mut rooms = Vec::new();
        for row in &ids {
            let id: Uuid = row.try_get("room_id")?;
            if let Some(room) = self.room(id).await? {
                rooms.push((room, row.try_get("created_at")?));
            }
        }
        Ok(rooms)
    }
}

/// What [`Store::change_room`] writes.
#[derive(Debug)]
pub enum RoomChange {
    Nothing,
    /// The members, index = seat (each keeps the display name they joined with).
    Members([Option<Uuid>; 4]),
    /// A new member in a free seat, with the display name their token carries.
    Join {
        seat: usize,
        player: Uuid,
        name: String,
    },
    Close,
    /// A claim that makes the room's table.
    Start {
        claim_id: Uuid,
        seats: [Occupant; 4],
        lease_until: DateTime<Utc>,
    },
}

fn room_of(row: &PgRow) -> Result<Room, sqlx::Error> {
    let Json(rules): Json<RuleSet> = row.try_get("rules")?;
    Ok(Room {
        room_id: row.try_get("room_id")?,
        code: row.try_get("code")?,
        rules,
        host: row.try_get("host_player_id")?,
        members: [None; 4],
        names: Default::default(),
        state: RoomState::parse(row.try_get::<&str, _>("state")?),
        fill_with_bots: row.try_get("fill_with_bots")?,
        bot_level: BotLevel::parse(row.try_get::<&str, _>("bot_level")?),
        table: row.try_get("table_name")?,
        expires_at: row.try_get("expires_at")?,
        has_password: row.try_get("has_password")?,
        public: row.try_get("public")?,
        spectators_allowed: row.try_get("spectators_allowed")?,
    })
}

/// Records a quick-play claim over `picked` (ticket, player), seated in that order, the other
/// seats bots of `level`.
async fn claim_tickets(
    tx: &mut Transaction<'_, Postgres>,
    rules: RuleSet,
    picked: &[(Uuid, Uuid)],
    level: BotLevel,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
) -> Result<Claim, MatchmakingError> {
    let claim_id = Uuid::new_v4();
    let seats: [Occupant; 4] = std::array::from_fn(|i| match picked.get(i) {
        Some((_, player)) => Occupant::Player(format!("players/{player}")),
        None => Occupant::Bot(level),
    });
    sqlx::query(
        "INSERT INTO claims (claim_id, origin, rules, seats, lease_until, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(claim_id)
    .bind(ClaimOrigin::QuickPlay.as_str())
    .bind(Json(&rules))
    .bind(Json(Value::Array(
        seats.iter().map(occupant_json).collect(),
    )))
    .bind(lease_until)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    let ids: Vec<Uuid> = picked.iter().map(|(t, _)| *t).collect();
    let seat_numbers: Vec<i32> = (0..picked.len() as i32).collect();
    sqlx::query(
        "UPDATE tickets SET claim_id = $1, seat = s.seat, updated_at = $4 \
         FROM UNNEST($2::uuid[], $3::int[]) AS s(ticket_id, seat) \
         WHERE tickets.ticket_id = s.ticket_id",
    )
    .bind(claim_id)
    .bind(&ids)
    .bind(&seat_numbers)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(Claim {
        claim_id,
        origin: ClaimOrigin::QuickPlay,
        rules,
        seats,
        room_id: None,
        members: Vec::new(),
        spectators_allowed: true,
    })
}
