//! Turn deadlines and bot moves, kept in Redis and acted on by exactly one process.
//!
//! Every table being played has one thing due next: the deadline of a person's turn, or the next
//! move of a bot (a seated bot, or one playing for an absent player). [`next_due`] works it out
//! from the table's state (pure); the process that appended the events arms it in Redis, and a
//! sweeper in every process claims what is due and acts through the same command path as a
//! person: [`TableCommand::Server`] via [`Tables::submit`], with a request id derived from the
//! table and the turn (or version), so a repeat is answered from the store and changes nothing.
//!
//! Redis keys (prefix = `redis.key_prefix`):
//! * `{prefix}:table:due` — sorted set, member = the due thing ([`Due::member`]), score = when
//!   (ms since the Unix epoch, by the service's [`Clock`]).
//! * `{prefix}:table:due:{table}` — hash: `member`, `at`, `version` (the table version it was
//!   armed for) and `claimed` (when a sweeper took it).
//!
//! Claim: one Lua script reads the members due and removes them in the same step; Redis runs a
//! script at a time, so each member goes to exactly one sweeper. Arming is a script too: it never
//! goes back to an older table version, keeps a turn's deadline while the turn goes on (a person's
//! draw does not restart the clock), applies the opening bonus once, and never re-adds a deadline
//! that a sweeper already claimed.
//!
//! Redis is soft state: at start and every `live.reconcile_interval_ms` each process walks the
//! tables being played (from the event store) and arms whatever is missing, e.g. after a
//! `FLUSHALL`, or a claim whose process died before acting (after [`STALE_CLAIM_MS`]). A rebuilt
//! deadline gives the seat on turn a full `turn_seconds` from the rebuild: it never cuts a turn
//! short.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use okey_platform::LiveSettings;
use okey_rules::{Command, Event, PenaltyReason, Seat};
use redis::aio::ConnectionManager;
use sqlx::types::Uuid;
use tokio::sync::{Notify, mpsc};

use crate::domain::server_command;
use crate::domain::{Phase, Table, TableError, TableEvent};
use crate::service::{ServiceError, Tables};

/// The actor recorded on everything the server plays for a seat.
pub const SERVER_ACTOR: &str = "server";
/// A claim older than this whose table did not move is armed again by the reconciler.
pub const STALE_CLAIM_MS: u64 = 10_000;
/// Due members claimed at once by one sweep.
const CLAIM_BATCH: usize = 32;

/// What time it is, for deadlines: the system clock in production, a hand-moved one in tests.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }
}

/// A clock that moves only when told (tests; several in-process replicas may share one).
#[derive(Debug)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock reading `start_ms`.
    pub fn new(start_ms: u64) -> Arc<ManualClock> {
        Arc::new(ManualClock(AtomicU64::new(start_ms)))
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_millis() as u64, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// What is due at a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DueKind {
    /// A person's turn `turn` of hand `hand` runs out.
    Turn { hand: u32, turn: u32 },
    /// A bot moves at table version `version`.
    Bot { version: u64 },
}

/// One due thing: its table, seat and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    pub table: Uuid,
    pub seat: Seat,
    pub kind: DueKind,
}

impl Due {
    /// Its member in the sorted set: `turn|{table}|{seat}|{hand}|{turn}` or
    /// `bot|{table}|{seat}|{version}`. A turn's member is the same for the whole turn.
    pub fn member(&self) -> String {
        match self.kind {
            DueKind::Turn { hand, turn } => {
                format!("turn|{}|{}|{hand}|{turn}", self.table, self.seat)
            }
            DueKind::Bot { version } => format!("bot|{}|{}|{version}", self.table, self.seat),
        }
    }

    /// Reads a member back.
    pub fn parse(member: &str) -> Option<Due> {
        let parts: Vec<&str> = member.split('|').collect();
        let table = Uuid::parse_str(parts.get(1)?).ok()?;
        let seat: Seat = parts.get(2)?.parse().ok().filter(|s| *s < 4)?;
        let kind = match (parts[0], parts.len()) {
            ("turn", 5) => DueKind::Turn {
                hand: parts[3].parse().ok()?,
                turn: parts[4].parse().ok()?,
            },
            ("bot", 4) => DueKind::Bot {
                version: parts[3].parse().ok()?,
            },
            _ => return None,
        };
        Some(Due { table, seat, kind })
    }

    /// The request id the server's command for it carries (with [`SERVER_ACTOR`]): the same on
    /// every replica, so a second attempt is answered from the store.
    pub fn request_id(&self) -> String {
        match self.kind {
            DueKind::Turn { hand, turn } => format!("timeout/{hand}/{turn}/{}", self.seat),
            DueKind::Bot { version } => format!("bot/{version}/{}", self.seat),
        }
    }
}

/// What to write to Redis for a table after it reached `version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arming {
    pub due: Due,
    pub version: u64,
    /// When it is due if nothing is armed for it yet.
    pub at_ms: u64,
    /// Added once to an armed turn (a person's first opening attempt of the hand).
    pub bonus_ms: u64,
    /// The bonus never takes a deadline past this.
    pub cap_ms: u64,
}

/// What is due next at `table` now that it is at its version, having just appended `appended`
/// (empty when rebuilding); `None` when nothing is (waiting for players, between states, over).
pub fn next_due(
    table_id: Uuid,
    table: &Table,
    appended: &[TableEvent],
    now_ms: u64,
    bot_pace_ms: u64,
) -> Option<Arming> {
    if table.phase != Phase::Playing {
        return None;
    }
    let hand = table.hand.as_ref().filter(|h| !h.is_over())?;
    let seat = hand.turn.seat;
    if table.bot_holds(seat) {
        return Some(Arming {
            due: Due {
                table: table_id,
                seat,
                kind: DueKind::Bot {
                    version: table.version,
                },
            },
            version: table.version,
            at_ms: now_ms + bot_pace_ms,
            bonus_ms: 0,
            cap_ms: now_ms + bot_pace_ms,
        });
    }
    let rules = &table.rules;
    let attempted = appended.iter().any(|e| {
        matches!(e, TableEvent::Played { event: Event::HandOpened { seat: s, .. } | Event::WrongOpening { seat: s, .. }, .. } if *s == seat)
    });
    let attempts = hand.opened[seat as usize].is_some() as usize
        + hand
            .penalties
            .iter()
            .filter(|p| p.seat == seat && p.reason == PenaltyReason::WrongOpening)
            .count();
    let bonus = if attempted && attempts == 1 {
        u64::from(rules.opening_bonus_seconds) * 1000
    } else {
        0
    };
    Some(Arming {
        due: Due {
            table: table_id,
            seat,
            kind: DueKind::Turn {
                hand: table.hand_number,
                turn: hand.turn.number,
            },
        },
        version: table.version,
        at_ms: now_ms + u64::from(rules.turn_seconds) * 1000,
        bonus_ms: bonus,
        cap_ms: now_ms + u64::from(rules.turn_seconds_max) * 1000,
    })
}

/// Arms a due thing (see the module docs). ARGV: member, version, at, bonus, cap, mode
/// (`apply` after an append, `rebuild` from the reconciler), now, stale claim ms.
const ARM: &str = r#"
local cur = redis.call('HMGET', KEYS[2], 'member', 'at', 'version', 'claimed')
local version = tonumber(ARGV[2])
if cur[3] and tonumber(cur[3]) > version then return 0 end
local armed = cur[1] and redis.call('ZSCORE', KEYS[1], cur[1])
local at = tonumber(ARGV[3])
if cur[1] == ARGV[1] then
  if ARGV[6] == 'rebuild' then
    if armed then return 0 end
    if cur[4] and tonumber(ARGV[7]) - tonumber(cur[4]) < tonumber(ARGV[8]) then return 0 end
  else
    if not armed then
      redis.call('HSET', KEYS[2], 'version', ARGV[2])
      return 0
    end
    at = tonumber(cur[2])
    local bonus = tonumber(ARGV[4])
    if bonus > 0 then at = math.min(at + bonus, math.max(at, tonumber(ARGV[5]))) end
  end
elseif cur[1] then
  redis.call('ZREM', KEYS[1], cur[1])
end
redis.call('HSET', KEYS[2], 'member', ARGV[1], 'at', at, 'version', ARGV[2])
redis.call('HDEL', KEYS[2], 'claimed')
redis.call('ZADD', KEYS[1], at, ARGV[1])
return 1
"#;

/// Nothing is due any more at a table (ARGV: version).
const CLEAR: &str = r#"
local cur = redis.call('HMGET', KEYS[2], 'member', 'version')
if cur[2] and tonumber(cur[2]) > tonumber(ARGV[1]) then return 0 end
if cur[1] then redis.call('ZREM', KEYS[1], cur[1]) end
redis.call('DEL', KEYS[2])
return 1
"#;

/// Takes what is due (ARGV: now, batch, hash key prefix): each member is returned once, to one
/// caller, and its table's hash remembers when it was claimed.
const CLAIM: &str = r#"
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, m in ipairs(due) do
  redis.call('ZREM', KEYS[1], m)
  local table = string.match(m, '^[a-z]+|([^|]+)|')
  if table then redis.call('HSET', ARGV[3] .. table, 'claimed', ARGV[1]) end
end
return due
"#;

/// The deadlines of this deployment in Redis, and the clock they are read with.
#[derive(Clone)]
pub struct Deadlines {
    redis: ConnectionManager,
    prefix: String,
    clock: Arc<dyn Clock>,
}

impl Deadlines {
    pub fn new(redis: ConnectionManager, prefix: &str, clock: Arc<dyn Clock>) -> Deadlines {
        Deadlines {
            redis,
            prefix: prefix.to_owned(),
            clock,
        }
    }

    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    fn set_key(&self) -> String {
        format!("{}:table:due", self.prefix)
    }

    fn hash_prefix(&self) -> String {
        format!("{}:table:due:", self.prefix)
    }

    fn hash_key(&self, table: Uuid) -> String {
        format!("{}{table}", self.hash_prefix())
    }

    /// Arms `arming`; `rebuild` only fills in what is missing. True when something was written.
    pub async fn arm(&self, arming: &Arming, rebuild: bool) -> redis::RedisResult<bool> {
        let mut conn = self.redis.clone();
        let written: i64 = self.arm_cmd(arming, rebuild).query_async(&mut conn).await?;
        Ok(written == 1)
    }

    fn arm_cmd(&self, arming: &Arming, rebuild: bool) -> redis::Cmd {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(ARM)
            .arg(2)
            .arg(self.set_key())
            .arg(self.hash_key(arming.due.table))
            .arg(arming.due.member())
            .arg(arming.version)
            .arg(arming.at_ms)
            .arg(arming.bonus_ms)
            .arg(arming.cap_ms)
            .arg(if rebuild { "rebuild" } else { "apply" })
            .arg(self.now_ms())
            .arg(STALE_CLAIM_MS);
        cmd
    }

    /// Nothing is due at `table` from `version` on.
    pub async fn clear(&self, table: Uuid, version: u64) -> redis::RedisResult<()> {
        let mut conn = self.redis.clone();
        let _: i64 = self
            .clear_cmd(table, version)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    fn clear_cmd(&self, table: Uuid, version: u64) -> redis::Cmd {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(CLEAR)
            .arg(2)
            .arg(self.set_key())
            .arg(self.hash_key(table))
            .arg(version);
        cmd
    }

    /// Arms (or clears) after each append of `appended`, in order, in one round trip: Redis
    /// runs a pipeline's scripts one after another, exactly as if they were sent one by one.
    async fn apply_all(&self, appended: &[Appended]) -> redis::RedisResult<()> {
        let mut pipe = redis::pipe();
        for a in appended {
            match &a.arming {
                Some(arming) => pipe.add_command(self.arm_cmd(arming, false)).ignore(),
                None => pipe
                    .add_command(self.clear_cmd(a.table_id, a.version))
                    .ignore(),
            };
        }
        let mut conn = self.redis.clone();
        pipe.exec_async(&mut conn).await
    }

    /// Claims what is due now (each member goes to one caller only).
    pub async fn claim(&self) -> redis::RedisResult<Vec<Due>> {
        let mut conn = self.redis.clone();
        let members: Vec<String> = redis::cmd("EVAL")
            .arg(CLAIM)
            .arg(1)
            .arg(self.set_key())
            .arg(self.now_ms())
            .arg(CLAIM_BATCH)
            .arg(self.hash_prefix())
            .query_async(&mut conn)
            .await?;
        Ok(members.iter().filter_map(|m| Due::parse(m)).collect())
    }

    /// When `table`'s armed thing is due, if one is armed (for tests and tools).
    pub async fn armed(&self, table: Uuid) -> redis::RedisResult<Option<(Due, u64)>> {
        let mut conn = self.redis.clone();
        let (member, at): (Option<String>, Option<u64>) = redis::cmd("HMGET")
            .arg(self.hash_key(table))
            .arg("member")
            .arg("at")
            .query_async(&mut conn)
            .await?;
        Ok(member.and_then(|m| Due::parse(&m)).zip(at))
    }
}

/// A table reached a new version here: what the arming task is told.
struct Appended {
    table_id: Uuid,
    version: u64,
    arming: Option<Arming>,
}

/// Appends armed in one Redis round trip, at most.
const ARM_BATCH: usize = 256;

/// Told by [`Tables`] after every append in this process.
pub trait AppendObserver: Send + Sync {
    fn appended(&self, table_id: Uuid, after: &Table, events: &[TableEvent]);
}

/// The live side of the tables in this process: arms after appends, sweeps, reconciles.
#[derive(Clone)]
pub struct Live {
    deadlines: Deadlines,
    settings: LiveSettings,
    tx: mpsc::UnboundedSender<Appended>,
    nudge: Arc<Notify>,
}

impl AppendObserver for Live {
    fn appended(&self, table_id: Uuid, after: &Table, events: &[TableEvent]) {
        let now = self.deadlines.now_ms();
        let arming = next_due(table_id, after, events, now, self.settings.bot_pace_ms);
        let _ = self.tx.send(Appended {
            table_id,
            version: after.version,
            arming,
        });
    }
}

impl Live {
    /// The live side, and the receiver its arming task reads (start it with [`Live::run`]).
    pub fn new(deadlines: Deadlines, settings: LiveSettings) -> (Live, LiveTasks) {
        let (tx, rx) = mpsc::unbounded_channel();
        let live = Live {
            deadlines,
            settings,
            tx,
            nudge: Arc::new(Notify::new()),
        };
        (live, LiveTasks { rx })
    }

    pub fn deadlines(&self) -> &Deadlines {
        &self.deadlines
    }

    /// Arms or clears after a batch of appends (in append order).
    async fn write(&self, appended: &[Appended]) {
        match self.deadlines.apply_all(appended).await {
            Ok(()) => {
                let now = self.deadlines.now_ms();
                if appended
                    .iter()
                    .any(|a| a.arming.is_some_and(|a| a.at_ms <= now))
                {
                    self.nudge.notify_one();
                }
            }
            // The reconciler arms them later.
            Err(e) => {
                tracing::warn!(error = %e, appends = appended.len(), "cannot arm deadlines")
            }
        }
    }

    /// Arms or clears what is due at `table_id` from its current state (the reconciler).
    pub async fn rebuild(&self, tables: &Tables, table_id: Uuid) -> Result<(), ServiceError> {
        let table = tables.state(table_id).await?;
        let now = self.deadlines.now_ms();
        let armed = match next_due(table_id, &table, &[], now, self.settings.bot_pace_ms) {
            Some(arming) => self.deadlines.arm(&arming, true).await,
            None => return Ok(()),
        };
        match armed {
            Ok(true) => {
                tracing::info!(%table_id, version = table.version, "deadline rebuilt");
                self.nudge.notify_one();
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, %table_id, "cannot rebuild a deadline"),
        }
        Ok(())
    }

    /// Acts on one claimed due thing through the command path.
    pub async fn act(&self, tables: &Tables, due: Due) {
        let result = match due.kind {
            DueKind::Turn { hand, turn } => {
                let command = server_command(due.seat, Command::Timeout, Some((hand, turn)));
                tables
                    .submit(
                        due.table,
                        SERVER_ACTOR,
                        &due.request_id(),
                        command,
                        None,
                        BTreeMap::new(),
                    )
                    .await
                    .map(|_| ())
            }
            DueKind::Bot { version } => self.bot_move(tables, due, version).await,
        };
        match result {
            Ok(()) => {}
            Err(ServiceError::Table(TableError::StaleTimeout | TableError::NotBotSeat(_)))
            | Err(ServiceError::VersionConflict { .. }) => {
                tracing::debug!(table = %due.table, "due thing overtaken by the table");
            }
            Err(e) => tracing::warn!(error = %e, table = %due.table, "server play failed"),
        }
    }

    /// A bot's command for its seat, decided on that seat's view alone. A command the rules
    /// refuse (which a bot should never send) falls back to the timeout play, so a table never
    /// stalls.
    async fn bot_move(&self, tables: &Tables, due: Due, version: u64) -> Result<(), ServiceError> {
        let table = tables.state(due.table).await?;
        if table.version != version {
            return Ok(());
        }
        let (Some(level), Some(view), Some(hand)) = (
            table.bot_level_of(due.seat),
            table.seat_view(due.seat),
            table.hand.as_ref(),
        ) else {
            return Ok(());
        };
        let turn = Some((table.hand_number, hand.turn.number));
        let command = level.bot().act(&view);
        let played = tables
            .submit(
                due.table,
                SERVER_ACTOR,
                &due.request_id(),
                server_command(due.seat, command, None),
                Some(version),
                BTreeMap::new(),
            )
            .await;
        match played {
            Err(ServiceError::Table(TableError::Rule(rule))) => {
                tracing::warn!(%rule, table = %due.table, seat = due.seat, "bot command refused; playing the timeout");
                tables
                    .submit(
                        due.table,
                        SERVER_ACTOR,
                        &format!("{}/timeout", due.request_id()),
                        server_command(due.seat, Command::Timeout, turn),
                        Some(version),
                        BTreeMap::new(),
                    )
                    .await
                    .map(|_| ())
            }
            other => other.map(|_| ()),
        }
    }

    /// Walks every table being played and rebuilds what is missing.
    pub async fn reconcile(&self, tables: &Tables) {
        let active = match active_tables(tables.store().pool()).await {
            Ok(ids) => ids,
            Err(e) => {
                tracing::warn!(error = %e, "cannot list the tables being played");
                return;
            }
        };
        for table_id in active {
            if let Err(e) = self.rebuild(tables, table_id).await {
                tracing::warn!(error = %e, %table_id, "cannot rebuild a deadline");
            }
        }
    }
}

/// The tables being played: dealt and not ended (partial indexes of `0003_live_tables.sql`).
pub async fn active_tables(pool: &sqlx::PgPool) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT t.table_id FROM tables t \
         WHERE EXISTS (SELECT 1 FROM events e WHERE e.stream_id = 'table-' || t.table_id::text \
                       AND e.event_type = 'HandDealt') \
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.stream_id = 'table-' || t.table_id::text \
                           AND e.event_type = 'MatchEnded')",
    )
    .fetch_all(pool)
    .await
}

/// The receiving end of the arming channel, consumed by [`Live::run`].
pub struct LiveTasks {
    rx: mpsc::UnboundedReceiver<Appended>,
}

impl Live {
    /// Runs the arming task, the sweeper and the reconciler until the process stops.
    pub async fn run(self, tables: Tables, tasks: LiveTasks) {
        let mut rx = tasks.rx;
        let armer = {
            let live = self.clone();
            async move {
                // Whatever queued up while the last batch was written goes in the next one.
                let mut batch = Vec::new();
                while rx.recv_many(&mut batch, ARM_BATCH).await > 0 {
                    live.write(&batch).await;
                    batch.clear();
                }
            }
        };
        let sweeper = {
            let live = self.clone();
            let tables = tables.clone();
            async move {
                let every = Duration::from_millis(live.settings.sweep_interval_ms);
                loop {
                    let _ = tokio::time::timeout(every, live.nudge.notified()).await;
                    loop {
                        let claimed = match live.deadlines.claim().await {
                            Ok(claimed) => claimed,
                            Err(e) => {
                                tracing::warn!(error = %e, "cannot sweep deadlines");
                                break;
                            }
                        };
                        if claimed.is_empty() {
                            break;
                        }
                        for due in claimed {
                            let live = live.clone();
                            let tables = tables.clone();
                            tokio::spawn(async move { live.act(&tables, due).await });
                        }
                    }
                }
            }
        };
        let reconciler = {
            let live = self.clone();
            async move {
                let every = Duration::from_millis(live.settings.reconcile_interval_ms);
                loop {
                    live.reconcile(&tables).await;
                    tokio::time::sleep(every).await;
                }
            }
        };
        tokio::join!(armer, sweeper, reconciler);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use okey_rules::{MatchLength, Preset, RuleSet};

    use super::*;
    use crate::absence::bot_name;

    fn table(seats: [Option<String>; 4]) -> Table {
        let rules = RuleSet {
            match_length: MatchLength::Hands(1),
            ..Preset::Classic.rules()
        };
        let d = Table::create(rules, seats, &[5; 32]).unwrap();
        let mut seeds = BTreeMap::new();
        if let Some((n, s)) = d.dealt {
            seeds.insert(n, s);
        }
        Table::replay(&d.events, seeds)
    }

    #[test]
    fn members_round_trip_and_name_their_request() {
        let table = Uuid::from_u128(7);
        for kind in [
            DueKind::Turn { hand: 2, turn: 9 },
            DueKind::Bot { version: 41 },
        ] {
            let due = Due {
                table,
                seat: 3,
                kind,
            };
            assert_eq!(Due::parse(&due.member()), Some(due));
        }
        assert_eq!(Due::parse("turn|nope|1|2|3"), None);
        let due = Due {
            table,
            seat: 1,
            kind: DueKind::Turn { hand: 1, turn: 4 },
        };
        assert_eq!(due.request_id(), "timeout/1/4/1");
    }

    #[test]
    fn a_persons_turn_gets_turn_seconds_and_a_bot_its_pace() {
        let people = ["a", "b", "c", "d"].map(|p| Some(format!("players/{p}")));
        let t = table(people);
        let id = Uuid::from_u128(1);
        let a = next_due(id, &t, &[], 1_000, 0).unwrap();
        assert_eq!(a.at_ms, 61_000);
        assert_eq!(a.cap_ms, 61_000);
        assert_eq!(a.bonus_ms, 0);
        assert!(matches!(a.due.kind, DueKind::Turn { hand: 1, turn: 0 }));

        let bots: [Option<String>; 4] =
            std::array::from_fn(|s| Some(bot_name(okey_bots::Level::Easy, s as Seat)));
        let t = table(bots);
        let a = next_due(id, &t, &[], 1_000, 250).unwrap();
        assert_eq!(a.at_ms, 1_250);
        assert_eq!(a.due.kind, DueKind::Bot { version: t.version });
    }

    #[test]
    fn the_first_opening_attempt_earns_the_bonus_once() {
        let people = ["a", "b", "c", "d"].map(|p| Some(format!("players/{p}")));
        let t = table(people);
        let seat = t.hand.as_ref().unwrap().turn.seat;
        let wrong = TableEvent::Played {
            hand_number: 1,
            first_meld: None,
            noted: Default::default(),
            event: Event::WrongOpening {
                seat,
                kind: okey_rules::OpenKind::Melds,
                amount: 30,
                needed: 101,
            },
        };
        let mut after = t.clone();
        after.evolve(&wrong);
        let penalty = okey_rules::Penalty {
            id: 0,
            seat,
            points: 101,
            reason: PenaltyReason::WrongOpening,
            voided: false,
        };
        after.hand.as_mut().unwrap().penalties.push(penalty);
        let a = next_due(Uuid::nil(), &after, std::slice::from_ref(&wrong), 0, 0).unwrap();
        assert_eq!(a.bonus_ms, 15_000);
        after.hand.as_mut().unwrap().penalties.push(penalty);
        let a = next_due(Uuid::nil(), &after, &[wrong], 0, 0).unwrap();
        assert_eq!(a.bonus_ms, 0, "a second attempt earns nothing");
    }
}
