//! Presence in Redis: per table and player, when they were last seen and how (an open update
//! stream, a heartbeat or a command, a stream that closed). [`presence_of`] turns that into
//! connected / away / gone (pure); a seat a bot plays for its absent player is gone.
//!
//! Key: `{prefix}:presence:{table}`, a hash `players/{id}` → `{ms}:{how}` where `how` is `s`
//! (a stream is open; refreshed every third of `live.connected_ms` while it stays open), `h` (a
//! heartbeat or a command) or `c` (the stream closed). It expires [`KEPT`] after the last write
//! at the table: a player long gone stays gone, not unknown, while their table lasts.
//!
//! Reads are served from memory for [`READ_FOR`] after a table's records were read (views come
//! several times a second per table; presence moves in seconds): another replica's write shows
//! here at most that late. This process's own writes show at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;
use sqlx::types::Uuid;

use crate::clock::Clock;
use crate::settings::LiveSettings;

/// How long a table's presence records outlive its last write. Far beyond `live.gone_ms`: a
/// seated player not seen for that long is still gone, which a record that expired could not
/// tell from never seen.
pub const KEPT: Duration = Duration::from_secs(7 * 24 * 3600);

/// Whether a seat's player is at the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// Never seen (or a free seat).
    Unknown,
    Connected,
    Away,
    Gone,
}

/// How a player was last seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// An update stream is open.
    Streaming,
    /// A heartbeat or a command.
    Heartbeat,
    /// The update stream closed.
    Closed,
}

impl Seen {
    fn code(self) -> char {
        match self {
            Seen::Streaming => 's',
            Seen::Heartbeat => 'h',
            Seen::Closed => 'c',
        }
    }
}

/// A stored `{ms}:{how}` record.
pub fn parse_record(text: &str) -> Option<(u64, Seen)> {
    let (ms, how) = text.split_once(':')?;
    let how = match how {
        "s" => Seen::Streaming,
        "h" => Seen::Heartbeat,
        "c" => Seen::Closed,
        _ => return None,
    };
    Some((ms.parse().ok()?, how))
}

/// What a record means at `now_ms`. A closed stream is away at once; anything else is connected
/// for `connected_ms`, away until `gone_ms`, then gone. A substituted seat is gone.
pub fn presence_of(
    record: Option<(u64, Seen)>,
    now_ms: u64,
    settings: &LiveSettings,
    substituted: bool,
) -> Presence {
    if substituted {
        return Presence::Gone;
    }
    let Some((at, how)) = record else {
        return Presence::Unknown;
    };
    let age = now_ms.saturating_sub(at);
    if age >= settings.gone_ms {
        Presence::Gone
    } else if how == Seen::Closed || age >= settings.connected_ms {
        Presence::Away
    } else {
        Presence::Connected
    }
}

/// Presence records of this deployment.
#[derive(Clone)]
pub struct Presences {
    redis: ConnectionManager,
    prefix: String,
    clock: Arc<dyn Clock>,
    settings: LiveSettings,
    written: Arc<WriteMemo>,
    read: Arc<ReadMemo>,
}

/// How long a table's records read from Redis serve its views.
pub const READ_FOR: Duration = Duration::from_secs(1);
/// Tables whose records are kept in memory before stale ones are dropped.
const READ_CAPACITY: usize = 10_000;

/// A table's presence records: player → when and how last seen.
type Records = HashMap<String, (u64, Seen)>;

/// Per table, the records last read from Redis (and written here since), and when they were
/// read (`None`: only written here, never read).
#[derive(Default)]
struct ReadMemo {
    tables: Mutex<HashMap<Uuid, (Option<Instant>, Records)>>,
}

impl ReadMemo {
    /// `show` of the table's records, if they were read less than [`READ_FOR`] ago.
    fn fresh<R>(&self, table: Uuid, show: impl FnOnce(&Records) -> R) -> Option<R> {
        let tables = self.tables.lock().expect("presence reads lock");
        tables
            .get(&table)
            .filter(|(at, _)| at.is_some_and(|at| at.elapsed() < READ_FOR))
            .map(|(_, records)| show(records))
    }

    /// Keeps what was just read (the read began at `read_at`, `read_from_ms` by the service's
    /// clock) and returns `show` of it. A record written here while the read was on its way,
    /// and newer than what it found, stays.
    fn keep<R>(
        &self,
        table: Uuid,
        read_at: Instant,
        read_from_ms: u64,
        mut records: Records,
        show: impl FnOnce(&Records) -> R,
    ) -> R {
        let mut tables = self.tables.lock().expect("presence reads lock");
        if let Some((_, known)) = tables.get(&table) {
            for (player, record) in known {
                if record.0 >= read_from_ms && records.get(player).is_none_or(|r| r.0 < record.0) {
                    records.insert(player.clone(), *record);
                }
            }
        }
        if tables.len() >= READ_CAPACITY {
            tables.retain(|_, (at, _)| at.is_some_and(|at| at.elapsed() < READ_FOR));
        }
        let shown = show(&records);
        tables.insert(table, (Some(read_at), records));
        shown
    }

    /// A record this process wrote shows at once: in the table's records in memory, or (none
    /// yet) in those of a read that may be on its way.
    fn wrote(&self, table: Uuid, player: &str, record: (u64, Seen)) {
        let mut tables = self.tables.lock().expect("presence reads lock");
        if tables.len() >= READ_CAPACITY && !tables.contains_key(&table) {
            return;
        }
        tables
            .entry(table)
            .or_insert_with(|| (None, HashMap::new()))
            .1
            .insert(player.to_owned(), record);
    }
}

/// Entries of a [`WriteMemo`] kept before old ones are dropped.
const WRITTEN_CAPACITY: usize = 100_000;

/// When this process last wrote a heartbeat or stream record per (table, player). A command
/// within `window_ms` (a third of `live.connected_ms`) of it changes nothing anyone could see, so
/// it is not written again: a player who plays fast costs no Redis write per command. A closed
/// stream forgets the entry, so the next command is written. (Another replica's record may be
/// newer; then a command here is written at the latest `window_ms` after this one's last write.)
struct WriteMemo {
    written: Mutex<HashMap<(Uuid, String), u64>>,
    window_ms: u64,
}

impl WriteMemo {
    fn new(settings: &LiveSettings) -> WriteMemo {
        WriteMemo {
            written: Mutex::default(),
            window_ms: settings.connected_ms / 3,
        }
    }

    /// Whether a record written at `now` would tell anything new; notes the write if so.
    fn worth_writing(&self, table: Uuid, player: &str, how: Seen, now: u64) -> bool {
        let mut written = self.written.lock().expect("presence memo lock");
        let key = (table, player.to_owned());
        match how {
            Seen::Closed => {
                written.remove(&key);
                true
            }
            Seen::Heartbeat
                if written
                    .get(&key)
                    .is_some_and(|&at| now >= at && now - at < self.window_ms) =>
            {
                false
            }
            Seen::Heartbeat | Seen::Streaming => {
                if written.len() >= WRITTEN_CAPACITY {
                    written.retain(|_, at| now.saturating_sub(*at) < self.window_ms);
                }
                written.insert(key, now);
                true
            }
        }
    }
}

impl Presences {
    pub fn new(
        redis: ConnectionManager,
        prefix: &str,
        clock: Arc<dyn Clock>,
        settings: LiveSettings,
    ) -> Presences {
        Presences {
            redis,
            prefix: prefix.to_owned(),
            clock,
            written: Arc::new(WriteMemo::new(&settings)),
            read: Arc::default(),
            settings,
        }
    }

    fn key(&self, table: Uuid) -> String {
        format!("{}:presence:{table}", self.prefix)
    }

    /// Records that `player` was seen now, `how`.
    pub async fn touch(&self, table: Uuid, player: &str, how: Seen) -> redis::RedisResult<()> {
        let now = self.clock.now_ms();
        if !self.written.worth_writing(table, player, how, now) {
            return Ok(());
        }
        let mut conn = self.redis.clone();
        let key = self.key(table);
        let record = format!("{now}:{}", how.code());
        redis::pipe()
            .cmd("HSET")
            .arg(&key)
            .arg(player)
            .arg(record)
            .ignore()
            .cmd("PEXPIRE")
            .arg(&key)
            .arg(KEPT.as_millis() as u64)
            .ignore()
            .exec_async(&mut conn)
            .await?;
        self.read.wrote(table, player, (now, how));
        Ok(())
    }

    /// The presence of each seat's occupant (`Unknown` for free seats and bots).
    pub async fn of_seats(
        &self,
        table: Uuid,
        seats: &[Option<String>; 4],
        substituted: &[bool; 4],
    ) -> redis::RedisResult<[Presence; 4]> {
        let show = |records: &Records| {
            let now = self.clock.now_ms();
            std::array::from_fn(|s| match &seats[s] {
                Some(p) if p.starts_with("players/") => {
                    presence_of(records.get(p).copied(), now, &self.settings, substituted[s])
                }
                _ => Presence::Unknown,
            })
        };
        if let Some(states) = self.read.fresh(table, show) {
            return Ok(states);
        }
        let (read_at, read_from_ms) = (Instant::now(), self.clock.now_ms());
        let mut conn = self.redis.clone();
        let stored: HashMap<String, String> = redis::cmd("HGETALL")
            .arg(self.key(table))
            .query_async(&mut conn)
            .await?;
        let records: Records = stored
            .into_iter()
            .filter_map(|(player, r)| Some((player, parse_record(&r)?)))
            .collect();
        Ok(self.read.keep(table, read_at, read_from_ms, records, show))
    }

    /// Keeps `player` connected while the returned guard lives (an open update stream); when it
    /// is dropped the player shows as away.
    pub fn streaming(&self, table: Uuid, player: &str) -> StreamPresence {
        let presences = self.clone();
        let who = player.to_owned();
        let every = Duration::from_millis((self.settings.connected_ms / 3).max(1));
        let refresher = tokio::spawn(async move {
            loop {
                if let Err(e) = presences.touch(table, &who, Seen::Streaming).await {
                    tracing::debug!(error = %e, "cannot record presence");
                }
                tokio::time::sleep(every).await;
            }
        });
        StreamPresence {
            presences: self.clone(),
            table,
            player: player.to_owned(),
            refresher,
        }
    }
}

/// An open update stream's presence: refreshed while it lives, closed when dropped.
pub struct StreamPresence {
    presences: Presences,
    table: Uuid,
    player: String,
    refresher: tokio::task::JoinHandle<()>,
}

impl Drop for StreamPresence {
    fn drop(&mut self) {
        self.refresher.abort();
        let presences = self.presences.clone();
        let (table, player) = (self.table, std::mem::take(&mut self.player));
        tokio::spawn(async move {
            let _ = presences.touch(table, &player, Seen::Closed).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use okey_platform::{ServiceKind, Settings};

    use super::*;

    #[test]
    fn connected_then_away_then_gone() {
        let settings =
            Settings::from_sources(ServiceKind::Table, None, Vec::<(String, String)>::new())
                .unwrap()
                .own::<crate::settings::TableSettings>()
                .unwrap()
                .live;
        let (c, g) = (settings.connected_ms, settings.gone_ms);
        let at = |ms, how| Some((ms, how));
        assert_eq!(presence_of(None, 0, &settings, false), Presence::Unknown);
        assert_eq!(
            presence_of(at(1000, Seen::Streaming), 1000 + c - 1, &settings, false),
            Presence::Connected
        );
        assert_eq!(
            presence_of(at(1000, Seen::Heartbeat), 1000 + c, &settings, false),
            Presence::Away
        );
        assert_eq!(
            presence_of(at(1000, Seen::Closed), 1001, &settings, false),
            Presence::Away
        );
        assert_eq!(
            presence_of(at(1000, Seen::Streaming), 1000 + g, &settings, false),
            Presence::Gone
        );
        assert_eq!(
            presence_of(at(1000, Seen::Streaming), 1000, &settings, true),
            Presence::Gone
        );
        assert_eq!(parse_record("12:s"), Some((12, Seen::Streaming)));
    }

    #[test]
    fn a_command_soon_after_the_last_write_is_not_written_again() {
        let settings =
            Settings::from_sources(ServiceKind::Table, None, Vec::<(String, String)>::new())
                .unwrap()
                .own::<crate::settings::TableSettings>()
                .unwrap()
                .live;
        let memo = WriteMemo::new(&settings);
        let w = settings.connected_ms / 3;
        let (t, other) = (Uuid::from_u128(1), Uuid::from_u128(2));
        assert!(memo.worth_writing(t, "players/a", Seen::Heartbeat, 1000));
        assert!(!memo.worth_writing(t, "players/a", Seen::Heartbeat, 1000 + w - 1));
        // Another player, or the same player at another table, is written.
        assert!(memo.worth_writing(t, "players/b", Seen::Heartbeat, 1001));
        assert!(memo.worth_writing(other, "players/a", Seen::Heartbeat, 1001));
        // Once the window has passed the record is refreshed, well before it turns away.
        assert!(memo.worth_writing(t, "players/a", Seen::Heartbeat, 1000 + w));
        // A closed stream is always written, and the next command after it too.
        assert!(memo.worth_writing(t, "players/a", Seen::Closed, 1000 + w + 1));
        assert!(memo.worth_writing(t, "players/a", Seen::Heartbeat, 1000 + w + 2));
        // An open stream's refresh is always written and counts as a write.
        assert!(memo.worth_writing(t, "players/c", Seen::Streaming, 5000));
        assert!(memo.worth_writing(t, "players/c", Seen::Streaming, 5001));
        assert!(!memo.worth_writing(t, "players/c", Seen::Heartbeat, 5002));
        // A clock that went back (a manual clock in tests) writes.
        assert!(memo.worth_writing(t, "players/c", Seen::Heartbeat, 10));
        assert_eq!(parse_record("12:x"), None);
    }

    #[test]
    fn reads_are_kept_a_while_and_show_this_process_writes() {
        let memo = ReadMemo::default();
        let (t, other) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let all = |r: &Records| r.clone();
        assert_eq!(memo.fresh(t, all), None);
        // Written here before anything was read: not a read yet, but a read on its way keeps it.
        memo.wrote(t, "players/a", (100, Seen::Streaming));
        assert_eq!(memo.fresh(t, all), None);
        let read = HashMap::from([
            ("players/a".to_owned(), (90, Seen::Heartbeat)),
            ("players/b".to_owned(), (95, Seen::Heartbeat)),
        ]);
        let kept = memo.keep(t, Instant::now(), 99, read, all);
        let fresh = memo.fresh(t, all).unwrap();
        assert_eq!(kept, fresh);
        assert_eq!(fresh["players/a"], (100, Seen::Streaming));
        assert_eq!(fresh["players/b"], (95, Seen::Heartbeat));
        // A write after the read shows at once; other tables are untouched.
        memo.wrote(t, "players/b", (120, Seen::Closed));
        assert_eq!(
            memo.fresh(t, all).unwrap()["players/b"],
            (120, Seen::Closed)
        );
        assert_eq!(memo.fresh(other, all), None);
        // A record written here long before the read began does not outlive what Redis says
        // (the key expired, or was flushed).
        memo.keep(t, Instant::now(), 200, HashMap::new(), all);
        assert!(memo.fresh(t, all).unwrap().is_empty());
        // A read older than READ_FOR is not served.
        let old = Instant::now().checked_sub(READ_FOR).unwrap();
        memo.keep(other, old, 0, HashMap::new(), all);
        assert_eq!(memo.fresh(other, all), None);
    }
}
