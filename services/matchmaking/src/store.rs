//! PostgreSQL, the truth for tickets, claims and rooms (`migrations/matchmaking`).
//!
//! **The atomic claim.** Groups of tickets become tables through one transaction that locks
//! them `FOR UPDATE SKIP LOCKED`, records a `claims` row per group (the seats, the rules) and
//! points every ticket at its claim. Row locks make the claim atomic across any number of
//! replicas: two replicas scanning the same queue never get the same ticket (the second skips the
//! rows the first holds, and a ticket with a claim is no longer in the queue once the first
//! commits), and a CancelTicket or an expiry that meets a locked ticket waits for the claim to
//! commit and then sees it taken. SKIP LOCKED rather than plain FOR UPDATE so replicas never queue
//! behind each other, and rather than an advisory lock or a Redis lock because the lock is the row
//! itself: it dies with the transaction, so a replica killed mid-claim leaves nothing held.
//!
//! A claim is then made a table by the table service (its id is CreateTable's request id) and
//! finished: tickets MATCHED with the table, or the room STARTED. Finishing takes a batch of
//! claims in one transaction (one commit, one notification per statement), and is idempotent. A
//! claim whose `lease_until` passed unfinished (its replica died) is taken over by another
//! replica, which repeats the same CreateTable and gets the same table.
//!
//! **Retried commands.** A room command (JoinRoom, LeaveRoom, SetRoomSeat, RemoveRoomMember)
//! records its answer in `handled_requests` under the caller and its `request_id`, in the
//! transaction that made its change ([`Store::change_room`]); the same request again finds it there
//! and gets the same answer, changing nothing (common.proto's promise for every command).
//!
//! **Reading rows.** A ticket, a claim and a room are each read by one SELECT ([`Stored`]) and
//! turned into their value in one place, whatever selects them ([`Select`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::marker::PhantomData;

use chrono::{DateTime, Utc};
use okey_rules::RuleSet;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::postgres::{PgArguments, PgRow};
use sqlx::query::Query;
use sqlx::types::Json;
use sqlx::{PgExecutor, PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use crate::domain::{
    BotLevel, MatchmakingError, Occupant, RatingWindows, Room, RoomState, Ticket, TicketState,
    Waiting, bot_level_for, rules_key,
};

/// A free ticket as a claim reads it: ticket, player, when it opened, its rating.
type Candidate = (Uuid, Uuid, DateTime<Utc>, i32);

/// A due bot-fill ticket: ticket, player, rules, queue key, bot level, opened, rating.
type DueTicket = (
    Uuid,
    Uuid,
    Json<RuleSet>,
    String,
    String,
    DateTime<Utc>,
    i32,
);

/// Tickets read per group a claim may form: the longest waiting four times over, so that tickets
/// whose windows hold nobody yet leave room for those that fit.
pub const CANDIDATES_PER_GROUP: usize = 4;

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
    /// The trace contexts of the FindTable calls whose tickets this claim groups, for the span
    /// that makes its table to link to; empty for a claim read back from the store (one another
    /// replica left) or a room's.
    pub traces: Vec<BTreeMap<String, String>>,
}

/// What one [`Store::claim_groups`] took.
#[derive(Debug, Default)]
pub struct Claimed {
    pub claims: Vec<Claim>,
    /// A group it picked had a ticket another replica took or held: trying again at once may
    /// find more.
    pub lost: bool,
}

/// A ticket to open.
#[derive(Clone, Debug)]
pub struct NewTicket {
    pub player_id: Uuid,
    pub request_id: String,
    pub rules: RuleSet,
    pub allow_bots: bool,
    pub bot_level: BotLevel,
    /// The player's rating (from scoring), which the rating windows compare.
    pub rating: i32,
    pub now: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// The opening call's trace context (`okey_platform::telemetry::current_context_as_map`).
    pub trace: BTreeMap<String, String>,
    /// The display name the player's access token carried (empty: none).
    pub display_name: String,
}

/// A value kept in a row, read the same way wherever it is read.
trait Stored: Sized {
    /// `SELECT … FROM …` with every column [`Stored::of`] reads; a read adds its condition.
    const SELECT: &'static str;

    fn of(row: &PgRow) -> Result<Self, sqlx::Error>;

    /// The values `rest` (`WHERE …`, an order, a lock) selects; `$1`… are bound in order.
    fn select(rest: &str) -> Select<Self> {
        Select {
            query: sqlx::query(sqlx::AssertSqlSafe(format!("{} {rest}", Self::SELECT))),
            read: PhantomData,
        }
    }
}

/// One read of [`Stored`] values: the only place this module turns rows into values.
struct Select<T> {
    query: Query<'static, Postgres, PgArguments>,
    read: PhantomData<fn() -> T>,
}

impl<T: Stored> Select<T> {
    fn bind<'t, V: sqlx::Encode<'t, Postgres> + sqlx::Type<Postgres>>(mut self, value: V) -> Self {
        self.query = self.query.bind(value);
        self
    }

    async fn all<'c>(self, db: impl PgExecutor<'c>) -> Result<Vec<T>, MatchmakingError> {
        let rows = self.query.fetch_all(db).await?;
        Ok(rows.iter().map(T::of).collect::<Result<_, _>>()?)
    }

    async fn optional<'c>(self, db: impl PgExecutor<'c>) -> Result<Option<T>, MatchmakingError> {
        let row = self.query.fetch_optional(db).await?;
        Ok(row.as_ref().map(T::of).transpose()?)
    }
}

impl Stored for Ticket {
    /// `players_found` of a free searching ticket counts the free tickets of its queue through
    /// the queue's index and stops at four (counting every searching row of the key read the
    /// rows a rush leaves until they are vacuumed, on every stream's every read); of a claimed
    /// or matched one, its claim's players.
    const SELECT: &'static str = "SELECT t.ticket_id, t.player_id, t.rules, t.rules_key, \
         t.allow_bots, t.bot_level, t.state, t.table_name, t.seat, t.created_at, t.expires_at, \
         t.request_id, \
         CASE WHEN t.state = 'searching' AND t.claim_id IS NULL THEN (SELECT count(*) FROM \
                  (SELECT 1 FROM tickets o WHERE o.rules_key = t.rules_key \
                       AND o.state = 'searching' AND o.claim_id IS NULL \
                   ORDER BY o.created_at LIMIT 4) AS q)::int \
              WHEN t.state IN ('searching', 'matched') THEN (SELECT count(*) FROM tickets o \
                  WHERE o.claim_id = t.claim_id)::int \
              ELSE 1 END AS players_found \
         FROM tickets t";

    fn of(row: &PgRow) -> Result<Ticket, sqlx::Error> {
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
            request_id: row.try_get("request_id")?,
            players_found: row.try_get("players_found")?,
        })
    }
}

impl Stored for Claim {
    /// With what a private room adds (members, spectators), read from its room.
    const SELECT: &'static str = "SELECT c.claim_id, c.origin, c.rules, c.seats, c.room_id, \
         COALESCE((SELECT jsonb_agg('players/' || m.player_id::text ORDER BY m.seat) \
                   FROM room_members m WHERE m.room_id = c.room_id), '[]'::jsonb) AS members, \
         COALESCE((SELECT r.spectators_allowed FROM rooms r WHERE r.room_id = c.room_id), true) \
             AS spectators_allowed \
         FROM claims c";

    fn of(row: &PgRow) -> Result<Claim, sqlx::Error> {
        let Json(rules): Json<RuleSet> = row.try_get("rules")?;
        let Json(seats): Json<Vec<Value>> = row.try_get("seats")?;
        let seat = |i: usize| {
            seats
                .get(i)
                .map(occupant_of)
                .unwrap_or(Occupant::Bot(BotLevel::Default))
        };
        let origin: &str = row.try_get("origin")?;
        let Json(members): Json<Vec<String>> = row.try_get("members")?;
        Ok(Claim {
            claim_id: row.try_get("claim_id")?,
            origin: if origin == ClaimOrigin::PrivateRoom.as_str() {
                ClaimOrigin::PrivateRoom
            } else {
                ClaimOrigin::QuickPlay
            },
            rules,
            seats: [seat(0), seat(1), seat(2), seat(3)],
            room_id: row.try_get("room_id")?,
            members,
            spectators_allowed: row.try_get("spectators_allowed")?,
            traces: Vec::new(),
        })
    }
}

/// A room as stored: with its members, when it was created (the lobby's order) and whether a
/// claim is making its table now.
struct StoredRoom {
    room: Room,
    created_at: DateTime<Utc>,
    starting: bool,
}

/// A member as the room's row reads them (`jsonb_agg` of `room_members`).
#[derive(Deserialize)]
struct StoredMember {
    seat: usize,
    player: Uuid,
    name: String,
}

impl Stored for StoredRoom {
    const SELECT: &'static str = "SELECT r.room_id, r.code, r.host_player_id, r.rules, r.state, \
         r.fill_with_bots, r.bot_level, r.table_name, r.expires_at, r.created_at, \
         r.password_hash IS NOT NULL AS has_password, r.public, r.spectators_allowed, \
         EXISTS (SELECT 1 FROM claims c WHERE c.room_id = r.room_id AND c.table_name IS NULL) \
             AS starting, \
         COALESCE((SELECT jsonb_agg(jsonb_build_object('seat', m.seat, 'player', m.player_id, \
                       'name', m.display_name)) \
                   FROM room_members m WHERE m.room_id = r.room_id), '[]'::jsonb) AS members \
         FROM rooms r";

    fn of(row: &PgRow) -> Result<StoredRoom, sqlx::Error> {
        let Json(rules): Json<RuleSet> = row.try_get("rules")?;
        let Json(members): Json<Vec<StoredMember>> = row.try_get("members")?;
        let mut room = Room {
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
        };
        for m in members {
            if let Some(seat) = room.members.get_mut(m.seat) {
                *seat = Some(m.player);
                room.names.insert(m.player, m.name);
            }
        }
        Ok(StoredRoom {
            room,
            created_at: row.try_get("created_at")?,
            starting: row.try_get("starting")?,
        })
    }
}

fn occupant_json(o: &Occupant) -> Value {
    match o {
        Occupant::Player { name, display_name } => {
            json!({ "player": name, "display_name": display_name })
        }
        Occupant::Bot(level) => json!({ "bot": level.as_str() }),
    }
}

fn occupant_of(v: &Value) -> Occupant {
    match v.get("player").and_then(Value::as_str) {
        Some(p) => Occupant::Player {
            name: p.to_owned(),
            // Claims recorded before names were kept have none.
            display_name: v
                .get("display_name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        },
        None => Occupant::Bot(BotLevel::parse(
            v.get("bot").and_then(Value::as_str).unwrap_or(""),
        )),
    }
}

fn seats_json(seats: &[Occupant; 4]) -> Value {
    Value::Array(seats.iter().map(occupant_json).collect())
}

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
                     bot_level, state, created_at, expires_at, fill_at, request_id, updated_at, \
                     rating, trace, display_name) \
                 VALUES ($1, $2, $3, $4, $5, $6, 'searching', $7, $8, \
                     CASE WHEN $5 THEN $8 END, $9, $7, $10, $11, $12) \
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
            .bind(new.rating)
            .bind(Json(&new.trace))
            .bind(&new.display_name)
            .fetch_optional(&self.pool)
            .await?;
            if let Some(id) = inserted {
                return self.ticket(id, new.player_id).await;
            }
            // A retry of the same request, or another searching ticket.
            let found = Ticket::select(
                "WHERE t.player_id = $1 AND (t.request_id = $2 OR t.state = 'searching') \
                 ORDER BY (t.request_id = $2) DESC NULLS LAST LIMIT 1",
            )
            .bind(new.player_id)
            .bind(&new.request_id)
            .optional(&self.pool)
            .await?;
            let Some(found) = found else {
                continue; // the other ticket closed in between: try again
            };
            if found.request_id.as_deref() == Some(new.request_id.as_str())
                || found.rules_key == key
            {
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
        Ticket::select("WHERE t.ticket_id = $1 AND t.player_id = $2")
            .bind(ticket_id)
            .bind(player)
            .optional(&self.pool)
            .await?
            .ok_or(MatchmakingError::TicketNotFound)
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

    /// Queue keys with at least four tickets waiting: a walk of the queue index from key to key
    /// that looks at four tickets of each, whatever the number of tickets. (A GROUP BY counts
    /// every row, and when the statistics still say the table is full of searching tickets, as
    /// right after a rush, PostgreSQL reads the whole table for it on every tick; every step
    /// here is ordered by the index, so the index it is.)
    pub async fn full_queues(&self) -> Result<Vec<String>, MatchmakingError> {
        Ok(sqlx::query_scalar(
            "WITH RECURSIVE k AS ( \
                 (SELECT rules_key FROM tickets WHERE state = 'searching' AND claim_id IS NULL \
                  ORDER BY rules_key LIMIT 1) \
                 UNION ALL \
                 SELECT (SELECT o.rules_key FROM tickets o \
                         WHERE o.state = 'searching' AND o.claim_id IS NULL \
                             AND o.rules_key > k.rules_key \
                         ORDER BY o.rules_key LIMIT 1) \
                 FROM k WHERE k.rules_key IS NOT NULL) \
             SELECT rules_key FROM k WHERE rules_key IS NOT NULL \
                 AND (SELECT count(*) FROM (SELECT 1 FROM tickets o \
                          WHERE o.rules_key = k.rules_key AND o.state = 'searching' \
                              AND o.claim_id IS NULL \
                          ORDER BY o.created_at LIMIT 4) AS q) = 4",
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// Takes the longest-waiting free tickets of `key` into up to `groups` claims of four whose
    /// rating windows all hold each other's ratings (`RatingWindows::tables`), in one
    /// transaction whatever the number of groups (one commit for the batch, not one per table: a
    /// queue of thousands is claimed as fast as tables can be made).
    ///
    /// It reads the [`CANDIDATES_PER_GROUP`] × `groups` longest waiting without locking them, so
    /// a ticket that fits nobody yet does not hide the others behind it, and then locks only the
    /// tickets of the groups it picked (`FOR UPDATE SKIP LOCKED`, checking again that each still
    /// searches unclaimed): a lock writes to the row, and locking every candidate cost more than
    /// claiming the picked ones. A group with a ticket another replica took or holds is left out
    /// ([`Claimed::lost`]); its other tickets stay free for the next try.
    pub async fn claim_groups(
        &self,
        key: &str,
        groups: usize,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        windows: &RatingWindows,
    ) -> Result<Claimed, MatchmakingError> {
        let mut tx = self.pool.begin().await?;
        let rows: Vec<Candidate> = sqlx::query_as(
            "SELECT ticket_id, player_id, created_at, rating FROM tickets \
             WHERE rules_key = $1 AND state = 'searching' AND claim_id IS NULL \
             ORDER BY created_at, ticket_id LIMIT $2",
        )
        .bind(key)
        .bind((groups.max(1) * 4 * CANDIDATES_PER_GROUP) as i64)
        .fetch_all(&mut *tx)
        .await?;
        let waiting: Vec<Waiting> = rows
            .iter()
            .map(|(_, _, created_at, rating)| Waiting {
                created_at: *created_at,
                rating: *rating,
            })
            .collect();
        let picked: Vec<Vec<(Uuid, Uuid)>> = windows
            .tables(&waiting, now)
            .into_iter()
            .take(groups.max(1))
            .map(|table| table.iter().map(|&i| (rows[i].0, rows[i].1)).collect())
            .collect();
        if picked.is_empty() {
            return Ok(Claimed::default());
        }
        let wanted: Vec<Uuid> = picked.iter().flatten().map(|(ticket, _)| *ticket).collect();
        // The rules once (every ticket of the key has the same), not with every candidate.
        let locked: Vec<(Uuid, Option<Json<RuleSet>>)> = sqlx::query_as(
            "SELECT ticket_id, CASE WHEN ticket_id = $2 THEN rules END FROM tickets \
             WHERE ticket_id = ANY($1) AND state = 'searching' AND claim_id IS NULL \
             ORDER BY ticket_id FOR UPDATE SKIP LOCKED",
        )
        .bind(&wanted)
        .bind(wanted[0])
        .fetch_all(&mut *tx)
        .await?;
        let Some(Json(rules)) = locked.iter().find_map(|(_, rules)| rules.clone()) else {
            // The first ticket picked was taken meanwhile: try again with the rest.
            return Ok(Claimed {
                claims: Vec::new(),
                lost: true,
            });
        };
        let locked: HashSet<Uuid> = locked.into_iter().map(|(ticket, _)| ticket).collect();
        let (whole, broken): (Vec<_>, Vec<_>) = picked
            .into_iter()
            .partition(|group| group.iter().all(|(ticket, _)| locked.contains(ticket)));
        if whole.is_empty() {
            return Ok(Claimed {
                claims: Vec::new(),
                lost: !broken.is_empty(),
            });
        }
        let claims =
            claim_tickets(&mut tx, &rules, &whole, BotLevel::Default, now, lease_until).await?;
        tx.commit().await?;
        Ok(Claimed {
            claims,
            lost: !broken.is_empty(),
        })
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

    /// Takes a due ticket and up to three other free tickets of its rules that allow bots (longest
    /// waiting first, each in the others' rating windows) into a claim whose other seats get bots
    /// at the due ticket's level (for the server's default, the level nearest its rating:
    /// `domain::bot_level_for`).
    pub async fn claim_bot_fill(
        &self,
        ticket_id: Uuid,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        windows: &RatingWindows,
    ) -> Result<Option<Claim>, MatchmakingError> {
        let mut tx = self.pool.begin().await?;
        let first: Option<DueTicket> = sqlx::query_as(
            "SELECT ticket_id, player_id, rules, rules_key, bot_level, created_at, rating \
             FROM tickets \
             WHERE ticket_id = $1 AND state = 'searching' AND claim_id IS NULL AND allow_bots \
                 AND expires_at <= $2 \
             FOR UPDATE SKIP LOCKED",
        )
        .bind(ticket_id)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((first, player, Json(rules), key, level, created_at, rating)) = first else {
            return Ok(None);
        };
        let others: Vec<(Uuid, Uuid, DateTime<Utc>, i32)> = sqlx::query_as(
            "SELECT ticket_id, player_id, created_at, rating FROM tickets \
             WHERE rules_key = $1 AND state = 'searching' AND claim_id IS NULL AND allow_bots \
                 AND ticket_id <> $2 \
             ORDER BY created_at, ticket_id LIMIT 12 FOR UPDATE SKIP LOCKED",
        )
        .bind(&key)
        .bind(first)
        .fetch_all(&mut *tx)
        .await?;
        let mut picked = vec![(first, player)];
        let mut seated = vec![Waiting { created_at, rating }];
        for (ticket, player, created_at, rating) in others {
            let other = Waiting { created_at, rating };
            if picked.len() < 4 && seated.iter().all(|s| windows.fit(s, &other, now)) {
                picked.push((ticket, player));
                seated.push(other);
            }
        }
        let level = bot_level_for(BotLevel::parse(&level), rating);
        let claim = claim_tickets(&mut tx, &rules, &[picked], level, now, lease_until)
            .await?
            .pop();
        tx.commit().await?;
        Ok(claim)
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
        Claim::select("WHERE c.claim_id = ANY($1)")
            .bind(&ids)
            .all(&self.pool)
            .await
    }

    /// A claim by id (with its room's members).
    pub async fn claim(&self, claim_id: Uuid) -> Result<Option<Claim>, MatchmakingError> {
        Claim::select("WHERE c.claim_id = $1")
            .bind(claim_id)
            .optional(&self.pool)
            .await
    }

    /// The tables were made (claim, `tables/{id}`): every claim's tickets are MATCHED with its
    /// table, or its room STARTED, all in one transaction: one commit, and one notification per
    /// statement for the batch, however many tables. Idempotent: a claim finished already (by a
    /// replica that took it over, with the same table) changes nothing.
    pub async fn finish_claims(
        &self,
        made: &[(Uuid, String)],
        now: DateTime<Utc>,
    ) -> Result<(), MatchmakingError> {
        // In claim order, so two batches that share claims lock them in the same order.
        let mut made = made.to_vec();
        made.sort();
        made.dedup_by_key(|(claim, _)| *claim);
        let (claims, tables): (Vec<Uuid>, Vec<String>) = made.into_iter().unzip();
        let mut tx = self.pool.begin().await?;
        // `= ANY($1)` beside the join: the rows are found by key, not through a partial index
        // that holds every claim not vacuumed yet.
        let finished: Vec<(Option<Uuid>, String)> = sqlx::query_as(
            "UPDATE claims c SET table_name = m.table_name \
             FROM UNNEST($1::uuid[], $2::text[]) AS m(claim_id, table_name) \
             WHERE c.claim_id = ANY($1) AND c.claim_id = m.claim_id AND c.table_name IS NULL \
             RETURNING c.room_id, c.table_name",
        )
        .bind(&claims)
        .bind(&tables)
        .fetch_all(&mut *tx)
        .await?;
        let rooms: Vec<(Uuid, String)> = finished
            .into_iter()
            .filter_map(|(room, table)| Some((room?, table)))
            .collect();
        sqlx::query(
            "UPDATE tickets t SET state = 'matched', table_name = m.table_name, updated_at = $3 \
             FROM UNNEST($1::uuid[], $2::text[]) AS m(claim_id, table_name) \
             WHERE t.claim_id = ANY($1) AND t.claim_id = m.claim_id AND t.state = 'searching'",
        )
        .bind(&claims)
        .bind(&tables)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if !rooms.is_empty() {
            let (rooms, tables): (Vec<Uuid>, Vec<String>) = rooms.into_iter().unzip();
            sqlx::query(
                "UPDATE rooms r SET state = 'started', table_name = m.table_name, updated_at = $3 \
                 FROM UNNEST($1::uuid[], $2::text[]) AS m(room_id, table_name) \
                 WHERE r.room_id = m.room_id AND r.state = 'open'",
            )
            .bind(&rooms)
            .bind(&tables)
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

    /// A room with its members.
    pub async fn room(&self, room_id: Uuid) -> Result<Option<Room>, MatchmakingError> {
        Ok(StoredRoom::select("WHERE r.room_id = $1")
            .bind(room_id)
            .optional(&self.pool)
            .await?
            .map(|r| r.room))
    }

    /// Creates a room with its host in seat 0, under a code no open room has. `Ok(None)`: the
    /// code was taken (pick another).
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
        insert_member(
            &mut tx,
            room.room_id,
            0,
            room.host,
            room.names.get(&room.host).map_or("", String::as_str),
        )
        .await?;
        let created = StoredRoom::select("WHERE r.room_id = $1")
            .bind(room.room_id)
            .optional(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(created.map(|r| r.room))
    }

    /// The room of a code (the open one, else the latest that had it), with its password hash.
    pub async fn room_by_code(
        &self,
        code: &str,
    ) -> Result<Option<(Uuid, Option<String>)>, MatchmakingError> {
        Ok(sqlx::query_as(
            "SELECT room_id, password_hash FROM rooms WHERE code = $1 \
             ORDER BY state = 'open' DESC, created_at DESC LIMIT 1",
        )
        .bind(code)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Runs `change` on the locked room and its members (and whether a claim is starting it);
    /// writes what it returns and gives the room as it is then. With a `command`, the room it gives
    /// is recorded as that command's answer in the same transaction, and a command already
    /// handled (the same caller, request id and RPC) changes nothing and gets its first answer.
    pub async fn change_room<F>(
        &self,
        room_id: Uuid,
        command: Option<&Command<'_>>,
        change: F,
    ) -> Result<Room, MatchmakingError>
    where
        F: FnOnce(&Room, bool) -> Result<RoomChange, MatchmakingError>,
    {
        let mut tx = self.pool.begin().await?;
        // Lock the room first, then read it whole in a statement of its own: a statement that
        // waited for the lock sees the locked row again but its members subquery as of its own
        // start (READ COMMITTED), so two concurrent joins both took the same free seat and the
        // second failed on the seat's key.
        sqlx::query_scalar::<_, i32>("SELECT 1 FROM rooms WHERE room_id = $1 FOR UPDATE")
            .bind(room_id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(MatchmakingError::RoomNotFound)?;
        let locked = StoredRoom::select("WHERE r.room_id = $1")
            .bind(room_id)
            .optional(&mut *tx)
            .await?
            .ok_or(MatchmakingError::RoomNotFound)?;
        // Read after the lock: a duplicate that raced the first waited for it to commit.
        if let Some(command) = command
            && let Some(answer) = handled_answer(&mut *tx, command).await?
        {
            return Ok(answer);
        }
        let room = &locked.room;
        match change(room, locked.starting)? {
            RoomChange::Nothing => {}
            RoomChange::Members(members) => {
                sqlx::query("DELETE FROM room_members WHERE room_id = $1")
                    .bind(room_id)
                    .execute(&mut *tx)
                    .await?;
                for (seat, m) in members.iter().enumerate() {
                    if let Some(player) = m {
                        let name = room.names.get(player).map_or("", String::as_str);
                        insert_member(&mut tx, room_id, seat, *player, name).await?;
                    }
                }
                touch_room(&mut tx, room_id).await?;
            }
            RoomChange::Join { seat, player, name } => {
                insert_member(&mut tx, room_id, seat, player, &name).await?;
                touch_room(&mut tx, room_id).await?;
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
                     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                )
                .bind(claim_id)
                .bind(ClaimOrigin::PrivateRoom.as_str())
                .bind(Json(&room.rules))
                .bind(Json(seats_json(&seats)))
                .bind(room_id)
                .bind(lease_until)
                .execute(&mut *tx)
                .await?;
            }
        }
        let after = StoredRoom::select("WHERE r.room_id = $1")
            .bind(room_id)
            .optional(&mut *tx)
            .await?
            .ok_or(MatchmakingError::RoomNotFound)?;
        if let Some(command) = command {
            let answer = serde_json::to_vec(&RoomAnswer::of(&after.room))
                .map_err(|e| MatchmakingError::Internal(format!("room answer: {e}")))?;
            sqlx::query(
                "INSERT INTO handled_requests (request_id, caller, rpc, response) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            )
            .bind(command.request_id)
            .bind(command.caller.to_string())
            .bind(command.rpc)
            .bind(answer)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(after.room)
    }

    /// The room a room command already handled answered (see [`Self::change_room`]), if it was.
    pub async fn handled_room(
        &self,
        command: &Command<'_>,
    ) -> Result<Option<Room>, MatchmakingError> {
        handled_answer(&self.pool, command).await
    }

    /// Forgets the answers of commands handled more than `kept` ago (a client retries within
    /// minutes); returns how many.
    pub async fn forget_handled_requests(
        &self,
        kept: std::time::Duration,
    ) -> Result<u64, MatchmakingError> {
        Ok(sqlx::query(
            "DELETE FROM handled_requests WHERE (caller, request_id) IN ( \
                 SELECT caller, request_id FROM handled_requests \
                 WHERE handled_at < now() - make_interval(secs => $1) LIMIT 10000)",
        )
        .bind(kept.as_secs_f64())
        .execute(&self.pool)
        .await?
        .rows_affected())
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

    /// Open public rooms, oldest first, after `after` (created_at, room_id), of `preset` if set,
    /// each with when it was created.
    pub async fn lobby(
        &self,
        preset: Option<&str>,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Vec<(Room, DateTime<Utc>)>, MatchmakingError> {
        let (after_time, after_id) = after.unzip();
        let rooms = StoredRoom::select(
            "WHERE r.state = 'open' AND r.public AND ($1::text IS NULL OR r.preset = $1) \
                 AND ($2::timestamptz IS NULL OR (r.created_at, r.room_id) > ($2, $3)) \
             ORDER BY r.created_at, r.room_id LIMIT $4",
        )
        .bind(preset)
        .bind(after_time)
        .bind(after_id)
        .bind(limit)
        .all(&self.pool)
        .await?;
        Ok(rooms.into_iter().map(|r| (r.room, r.created_at)).collect())
    }
}

/// A room command as [`Store::change_room`] records it: who sent it, its client request id and
/// its RPC (`LeaveRoom`, …).
#[derive(Clone, Copy, Debug)]
pub struct Command<'a> {
    pub caller: Uuid,
    pub request_id: &'a str,
    pub rpc: &'static str,
}

/// The stored answer of `command`, if it was handled.
async fn handled_answer<'e>(
    executor: impl PgExecutor<'e>,
    command: &Command<'_>,
) -> Result<Option<Room>, MatchmakingError> {
    let stored: Option<Vec<u8>> = sqlx::query_scalar(
        "SELECT response FROM handled_requests \
         WHERE caller = $1 AND request_id = $2 AND rpc = $3",
    )
    .bind(command.caller.to_string())
    .bind(command.request_id)
    .bind(command.rpc)
    .fetch_optional(executor)
    .await?;
    stored
        .map(|bytes| {
            serde_json::from_slice::<RoomAnswer>(&bytes)
                .map_err(|e| {
                    MatchmakingError::Internal(format!("a stored room answer is unreadable: {e}"))
                })
                .and_then(RoomAnswer::into_room)
        })
        .transpose()
}

/// A room as a handled command answered it (`handled_requests.response`, JSON).
#[derive(Serialize, Deserialize)]
struct RoomAnswer {
    room_id: Uuid,
    code: String,
    rules: RuleSet,
    host: Uuid,
    members: [Option<Uuid>; 4],
    names: BTreeMap<Uuid, String>,
    state: String,
    fill_with_bots: bool,
    bot_level: String,
    table: Option<String>,
    expires_at_micros: i64,
    has_password: bool,
    public: bool,
    spectators_allowed: bool,
}

impl RoomAnswer {
    fn of(room: &Room) -> RoomAnswer {
        RoomAnswer {
            room_id: room.room_id,
            code: room.code.clone(),
            rules: room.rules.clone(),
            host: room.host,
            members: room.members,
            names: room.names.clone(),
            state: room.state.as_str().to_owned(),
            fill_with_bots: room.fill_with_bots,
            bot_level: room.bot_level.as_str().to_owned(),
            table: room.table.clone(),
            expires_at_micros: room.expires_at.timestamp_micros(),
            has_password: room.has_password,
            public: room.public,
            spectators_allowed: room.spectators_allowed,
        }
    }

    fn into_room(self) -> Result<Room, MatchmakingError> {
        Ok(Room {
            room_id: self.room_id,
            code: self.code,
            rules: self.rules,
            host: self.host,
            members: self.members,
            names: self.names,
            state: RoomState::parse(&self.state),
            fill_with_bots: self.fill_with_bots,
            bot_level: BotLevel::parse(&self.bot_level),
            table: self.table,
            expires_at: DateTime::from_timestamp_micros(self.expires_at_micros).ok_or_else(
                || MatchmakingError::Internal("a stored room answer has no valid time".into()),
            )?,
            has_password: self.has_password,
            public: self.public,
            spectators_allowed: self.spectators_allowed,
        })
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

async fn insert_member(
    tx: &mut Transaction<'_, Postgres>,
    room_id: Uuid,
    seat: usize,
    player: Uuid,
    name: &str,
) -> Result<(), MatchmakingError> {
    sqlx::query(
        "INSERT INTO room_members (room_id, seat, player_id, display_name) VALUES ($1, $2, $3, $4)",
    )
    .bind(room_id)
    .bind(seat as i32)
    .bind(player)
    .bind(name)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn touch_room(
    tx: &mut Transaction<'_, Postgres>,
    room_id: Uuid,
) -> Result<(), MatchmakingError> {
    sqlx::query("UPDATE rooms SET updated_at = now() WHERE room_id = $1")
        .bind(room_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Records a quick-play claim per group of `picked` (ticket, player), seated in that order, the
/// other seats bots of `level`: one statement for every claim, one for every ticket.
async fn claim_tickets(
    tx: &mut Transaction<'_, Postgres>,
    rules: &RuleSet,
    picked: &[Vec<(Uuid, Uuid)>],
    level: BotLevel,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
) -> Result<Vec<Claim>, MatchmakingError> {
    // The names the players' tokens carried when they opened their tickets.
    let picked_tickets: Vec<Uuid> = picked.iter().flatten().map(|(ticket, _)| *ticket).collect();
    let names: HashMap<Uuid, String> =
        sqlx::query_as("SELECT ticket_id, display_name FROM tickets WHERE ticket_id = ANY($1)")
            .bind(&picked_tickets)
            .fetch_all(&mut **tx)
            .await?
            .into_iter()
            .collect();
    let mut claims: Vec<Claim> = picked
        .iter()
        .map(|group| Claim {
            claim_id: Uuid::new_v4(),
            origin: ClaimOrigin::QuickPlay,
            rules: rules.clone(),
            seats: std::array::from_fn(|i| match group.get(i) {
                Some((ticket, player)) => Occupant::Player {
                    name: format!("players/{player}"),
                    display_name: names.get(ticket).cloned().unwrap_or_default(),
                },
                None => Occupant::Bot(level),
            }),
            room_id: None,
            members: Vec::new(),
            spectators_allowed: true,
            traces: Vec::new(),
        })
        .collect();
    let ids: Vec<Uuid> = claims.iter().map(|c| c.claim_id).collect();
    let seats: Vec<Value> = claims.iter().map(|c| seats_json(&c.seats)).collect();
    sqlx::query(
        "INSERT INTO claims (claim_id, origin, rules, seats, lease_until, created_at) \
         SELECT c.claim_id, $3, $4, c.seats, $5, $6 \
         FROM UNNEST($1::uuid[], $2::jsonb[]) AS c(claim_id, seats)",
    )
    .bind(&ids)
    .bind(&seats)
    .bind(ClaimOrigin::QuickPlay.as_str())
    .bind(Json(rules))
    .bind(lease_until)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    let mut tickets = Vec::new();
    let mut of_claim = Vec::new();
    let mut seat_numbers = Vec::new();
    for (claim, group) in claims.iter().zip(picked) {
        for (seat, (ticket, _)) in group.iter().enumerate() {
            tickets.push(*ticket);
            of_claim.push(claim.claim_id);
            seat_numbers.push(seat as i32);
        }
    }
    let traces: Vec<(Uuid, Json<BTreeMap<String, String>>)> = sqlx::query_as(
        "UPDATE tickets SET claim_id = s.claim_id, seat = s.seat, updated_at = $4 \
         FROM UNNEST($1::uuid[], $2::uuid[], $3::int[]) AS s(ticket_id, claim_id, seat) \
         WHERE tickets.ticket_id = s.ticket_id \
         RETURNING tickets.claim_id, tickets.trace",
    )
    .bind(&tickets)
    .bind(&of_claim)
    .bind(&seat_numbers)
    .bind(now)
    .fetch_all(&mut **tx)
    .await?;
    for (claim_id, Json(trace)) in traces {
        if let Some(claim) = claims.iter_mut().find(|c| c.claim_id == claim_id)
            && !trace.is_empty()
        {
            claim.traces.push(trace);
        }
    }
    Ok(claims)
}
