//! Turn deadlines and bot moves in Redis: what is due next at a table, and its arming and claim.
//!
//! Every table being played has one thing due next: the deadline of a person's turn, or the next
//! move of a bot (a seated bot, or one playing for an absent player). [`next_due`] works it out
//! from the table's state (pure); after an append it is armed here, and a sweeper claims what is
//! due (`live` plays it through the command path).
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
//! Every script is called by its SHA1 (`EVALSHA`), not sent whole with each call; a Redis that
//! lost its script cache (a restart, `SCRIPT FLUSH`) answers NOSCRIPT to the commands it did not
//! run, and those are sent again once the scripts are loaded.
//!
//! Redis is soft state: at start and every `live.reconcile_interval_ms` each process walks the
//! tables being played (from the event store) and arms whatever is missing, e.g. after a
//! `FLUSHALL`, or a claim whose process died before acting (after [`STALE_CLAIM_MS`]). A rebuilt
//! deadline gives the seat on turn a full `turn_seconds` from the rebuild: it never cuts a turn
//! short.

use std::sync::{Arc, LazyLock};

use okey_rules::{Event, PenaltyReason, Seat};
use redis::aio::ConnectionManager;
use redis::{ErrorKind, FromRedisValue, RedisResult, Script, ServerErrorKind, Value};
use sqlx::types::Uuid;

use crate::clock::Clock;
use crate::domain::{Phase, Table, TableEvent};

/// A claim older than this whose table did not move is armed again by the reconciler.
pub const STALE_CLAIM_MS: u64 = 10_000;
/// Due members claimed at once by one sweep.
const CLAIM_BATCH: usize = 32;

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

    /// The request id the server's command for it carries (with `live::SERVER_ACTOR`): the same on
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

/// What is armed at a table: the due thing, when (ms since the Unix epoch, by the service's
/// clock) and the table version it was armed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Armed {
    pub due: Due,
    pub at_ms: u64,
    pub version: u64,
}

impl Armed {
    /// When it falls due, if it was armed for `table`'s version and is what `table` waits for.
    pub fn at_for(&self, table: &Table) -> Option<u64> {
        (self.version == table.version && Arming::due_now(&self.due, table)).then_some(self.at_ms)
    }
}

impl Arming {
    /// What is armed once this arming is applied after `previous` (what was armed for the
    /// table's version before the append): what the arm script leaves in Redis, worked out in
    /// the process for the views' `turn_deadline`. The same turn keeps its deadline, plus the
    /// opening bonus (at most up to the cap, never earlier); anything else is due at `at_ms`.
    pub fn deadline_after(&self, previous: Option<Armed>) -> Armed {
        let at_ms = match previous {
            Some(p) if p.due == self.due => {
                if self.bonus_ms > 0 {
                    (p.at_ms + self.bonus_ms).min(p.at_ms.max(self.cap_ms))
                } else {
                    p.at_ms
                }
            }
            _ => self.at_ms,
        };
        Armed {
            due: self.due,
            at_ms,
            version: self.version,
        }
    }

    /// Whether `due` is what `table` waits for now (its turn, or its bot's move at its version).
    pub fn due_now(due: &Due, table: &Table) -> bool {
        let Some(hand) = hand_in_play(table) else {
            return false;
        };
        due.seat == hand.turn.seat
            && match due.kind {
                DueKind::Turn { hand: h, turn } => {
                    h == table.hand_number && turn == hand.turn.number
                }
                DueKind::Bot { version } => version == table.version,
            }
    }
}

/// The hand `table` is playing, if a turn (or a bot's move) runs at it now: none while it waits
/// for players, between hands and after the match.
pub fn hand_in_play(table: &Table) -> Option<&okey_rules::Hand> {
    if table.phase != Phase::Playing {
        return None;
    }
    table.hand.as_ref().filter(|h| !h.is_over())
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
    let hand = hand_in_play(table)?;
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

/// Whether what a table has in Redis is what a rebuild at its stored version would leave there
/// (ARGV: that version, now, stale claim ms): armed (or freshly claimed) for exactly that
/// version. 1 when the reconciler may skip the table.
const SETTLED: &str = r#"
local cur = redis.call('HMGET', KEYS[2], 'member', 'version', 'claimed')
if not cur[1] or tonumber(cur[2]) ~= tonumber(ARGV[1]) then return 0 end
if redis.call('ZSCORE', KEYS[1], cur[1]) then return 1 end
if cur[3] and tonumber(ARGV[2]) - tonumber(cur[3]) < tonumber(ARGV[3]) then return 1 end
return 0
"#;

/// This module's Lua scripts.
#[derive(Clone, Copy, Debug)]
enum Lua {
    Arm,
    Clear,
    Claim,
    Settled,
}

impl Lua {
    const ALL: [Lua; 4] = [Lua::Arm, Lua::Clear, Lua::Claim, Lua::Settled];

    fn text(self) -> &'static str {
        match self {
            Lua::Arm => ARM,
            Lua::Clear => CLEAR,
            Lua::Claim => CLAIM,
            Lua::Settled => SETTLED,
        }
    }

    /// Its SHA1, the name `EVALSHA` calls it by.
    fn hash(self) -> &'static str {
        static SCRIPTS: LazyLock<[Script; 4]> =
            LazyLock::new(|| Lua::ALL.map(|lua| Script::new(lua.text())));
        SCRIPTS[self as usize].get_hash()
    }

    /// A call of it with `keys` keys; the keys, then the arguments, follow.
    fn call(self, keys: usize) -> redis::Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(self.hash()).arg(keys);
        cmd
    }
}

fn is_noscript(answer: &RedisResult<Value>) -> bool {
    matches!(answer, Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript))
}

/// Tables asked about in one Redis round trip by [`Deadlines::settled`].
const SETTLED_BATCH: usize = 512;

/// A table reached a new version here: what the arming task is told.
pub struct Appended {
    pub table_id: Uuid,
    pub version: u64,
    pub arming: Option<Arming>,
}

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
        let written: i64 = self.run_one(self.arm_cmd(arming, rebuild)).await?;
        Ok(written == 1)
    }

    fn arm_cmd(&self, arming: &Arming, rebuild: bool) -> redis::Cmd {
        let mut cmd = Lua::Arm.call(2);
        cmd.arg(self.set_key())
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
        let _: i64 = self.run_one(self.clear_cmd(table, version)).await?;
        Ok(())
    }

    fn clear_cmd(&self, table: Uuid, version: u64) -> redis::Cmd {
        let mut cmd = Lua::Clear.call(2);
        cmd.arg(self.set_key())
            .arg(self.hash_key(table))
            .arg(version);
        cmd
    }

    /// Arms (or clears) after each append of `appended`, in order, in one round trip: Redis
    /// runs a pipeline's scripts one after another, exactly as if they were sent one by one.
    pub async fn apply_all(&self, appended: &[Appended]) -> redis::RedisResult<()> {
        let cmds = appended.iter().map(|a| match &a.arming {
            Some(arming) => self.arm_cmd(arming, false),
            None => self.clear_cmd(a.table_id, a.version),
        });
        self.run(cmds).await.map(|_| ())
    }

    /// Sends `cmds` (calls of this module's scripts) in one pipeline and returns their answers
    /// in order. The commands a Redis without the scripts refused with NOSCRIPT did not run:
    /// they are sent again, in the same order, once the scripts are loaded. (Redis runs a
    /// client's pipeline without another client's commands in between, so the scripts loaded
    /// together are either all there or none.)
    async fn run(&self, cmds: impl IntoIterator<Item = redis::Cmd>) -> RedisResult<Vec<Value>> {
        let mut conn = self.redis.clone();
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for cmd in cmds {
            pipe.add_command(cmd);
        }
        let mut answers: Vec<RedisResult<Value>> = pipe.query_async(&mut conn).await?;
        let refused: Vec<usize> = (0..answers.len())
            .filter(|&i| is_noscript(&answers[i]))
            .collect();
        if !refused.is_empty() {
            let mut load = redis::pipe();
            for lua in Lua::ALL {
                load.cmd("SCRIPT").arg("LOAD").arg(lua.text()).ignore();
            }
            load.exec_async(&mut conn).await?;
            let mut again = redis::pipe();
            for (i, cmd) in pipe.cmd_iter().enumerate() {
                if refused.contains(&i) {
                    again.add_command(cmd.clone());
                }
            }
            let retried: Vec<Value> = again.query_async(&mut conn).await?;
            for (i, answer) in refused.into_iter().zip(retried) {
                answers[i] = Ok(answer);
            }
        }
        answers.into_iter().collect()
    }

    /// [`Self::run`] for one command, its answer read as `T`.
    async fn run_one<T: FromRedisValue>(&self, cmd: redis::Cmd) -> RedisResult<T> {
        let answer = self.run([cmd]).await?.pop().unwrap_or(Value::Nil);
        Ok(T::from_redis_value(answer)?)
    }

    /// Claims what is due now (each member goes to one caller only).
    pub async fn claim(&self) -> redis::RedisResult<Vec<Due>> {
        let mut claim = Lua::Claim.call(1);
        claim
            .arg(self.set_key())
            .arg(self.now_ms())
            .arg(CLAIM_BATCH)
            .arg(self.hash_prefix());
        let members: Vec<String> = self.run_one(claim).await?;
        Ok(members.iter().filter_map(|m| Due::parse(m)).collect())
    }

    /// For each `(table, stored version)`, whether Redis already holds what a rebuild would
    /// write: the hash was armed for that very version (every append arms or clears its
    /// version, so the member is the one due at it) and its member is in the sorted set, or was
    /// claimed less than [`STALE_CLAIM_MS`] ago. A rebuild of such a table changes nothing (the
    /// `ARM` script returns 0), so the reconciler skips it without loading the table.
    pub async fn settled(&self, tables: &[(Uuid, u64)]) -> redis::RedisResult<Vec<bool>> {
        let mut out = Vec::with_capacity(tables.len());
        let now = self.now_ms();
        for chunk in tables.chunks(SETTLED_BATCH) {
            let cmds = chunk.iter().map(|(table, version)| {
                let mut cmd = Lua::Settled.call(2);
                cmd.arg(self.set_key())
                    .arg(self.hash_key(*table))
                    .arg(*version)
                    .arg(now)
                    .arg(STALE_CLAIM_MS);
                cmd
            });
            for answer in self.run(cmds).await? {
                out.push(i64::from_redis_value(answer)? == 1);
            }
        }
        Ok(out)
    }

    /// What is armed at `table`, if anything (the views' `turn_deadline` of a turn this process
    /// did not see start; tests).
    pub async fn armed(&self, table: Uuid) -> redis::RedisResult<Option<Armed>> {
        let mut conn = self.redis.clone();
        let (member, at, version): (Option<String>, Option<u64>, Option<u64>) = redis::cmd("HMGET")
            .arg(self.hash_key(table))
            .arg("member")
            .arg("at")
            .arg("version")
            .query_async(&mut conn)
            .await?;
        Ok(match (member.and_then(|m| Due::parse(&m)), at, version) {
            (Some(due), Some(at_ms), Some(version)) => Some(Armed {
                due,
                at_ms,
                version,
            }),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use okey_rules::{MatchLength, Preset, RuleSet};

    use super::*;

    fn table(seats: [Option<String>; 4]) -> Table {
        let rules = RuleSet {
            match_length: MatchLength::Hands(1),
            ..Preset::Classic.rules()
        };
        let d = Table::create(rules, seats, &[5; 32]).unwrap();
        let seeds: BTreeMap<u32, [u8; 32]> = d.seeds.iter().copied().collect();
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
            std::array::from_fn(|s| Some(okey_bots::Level::Easy.occupant(s as Seat)));
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
                melds: Vec::new(),
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
