//! The table service's own settings, read through the platform's layers (defaults, file,
//! `OKEY_…` variables: `okey_platform::Settings::own`): live tables (`[live]`,
//! `OKEY_LIVE__…`) and the event store's group commit (`database.commit_groups`,
//! `OKEY_DATABASE__COMMIT_GROUPS`).

use okey_platform::settings::ServiceSettings;
use serde::Deserialize;

/// What the table service reads besides the shared sections.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSettings {
    /// Live tables: deadline sweeps, bot pace, presence, chat, caches and streams.
    pub live: LiveSettings,
    /// The event store's own part of `[database]`.
    pub database: StoreSettings,
}

/// Live tables: how often deadlines are swept, how fast bots
/// play, when a player counts as away or gone, and the chat's limits and retention. Turn lengths
/// come from each table's rule set, not from here.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiveSettings {
    /// How often each process looks for expired deadlines (it is also woken at once when a bot
    /// is due now).
    pub sweep_interval_ms: u64,
    /// How often each process checks that every active table has its deadline in Redis
    /// (rebuilding any that are missing).
    pub reconcile_interval_ms: u64,
    /// How long a bot waits before each of its commands (0 in tests).
    pub bot_pace_ms: u64,
    /// A player seen (open stream, heartbeat or command) within this long is connected.
    pub connected_ms: u64,
    /// A player not seen for this long is gone (before that: away).
    pub gone_ms: u64,
    /// Longest chat message, in characters.
    pub chat_max_chars: u64,
    /// Chat messages a player may send per window at one table.
    pub chat_burst: u64,
    /// The chat rate-limit window.
    pub chat_window_ms: u64,
    /// How long chat messages are kept in PostgreSQL.
    pub chat_retention_secs: u64,
    /// How often old chat messages are deleted.
    pub chat_sweep_interval_ms: u64,
    /// Most tables one process holds in memory: past it, the table asked about longest ago and
    /// in use by no call is dropped (it is folded from the store again when asked for).
    pub max_cached_tables: u64,
    /// Most WatchTable plus WatchChat streams one caller may hold open on one process.
    pub max_streams_per_caller: u64,
    /// How often each process checks the event store for every table its WatchTable streams
    /// follow, in case a wake-up from another replica was missed (one statement for all of
    /// them; a table found ahead wakes its streams).
    pub stream_recheck_ms: u64,
    /// A table nobody asked about for this long (and no call is using) leaves memory, with its
    /// update feed unless a stream still follows it; a later call folds it from the store again.
    /// Checked every minute, or every `idle_table_secs` when that is shorter.
    pub idle_table_secs: u64,
}

/// The event store's group commit.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSettings {
    /// How many groups of appends may be committing at once. Appends that arrive while every
    /// group is committing wait and go in the next group, one statement and one commit for all
    /// of them. 1 commits the most appends per group; more lets an append start while another
    /// group waits for its commit (2, the default, gave the lowest tail latency at a player's
    /// pace and the same throughput as 1 under saturation).
    pub commit_groups: u32,
}

impl ServiceSettings for TableSettings {
    const DEFAULTS: &'static str = r#"
[live]
sweep_interval_ms = 200
reconcile_interval_ms = 5000
bot_pace_ms = 1500
connected_ms = 30000
gone_ms = 120000
chat_max_chars = 200
chat_burst = 5
chat_window_ms = 10000
chat_retention_secs = 604800
chat_sweep_interval_ms = 60000
max_cached_tables = 10000
max_streams_per_caller = 8
stream_recheck_ms = 1000
idle_table_secs = 1800

[database]
commit_groups = 2
"#;

    fn check(&self) -> Result<(), (&'static str, String)> {
        let live = &self.live;
        for (setting, value) in [
            ("live.sweep_interval_ms", live.sweep_interval_ms),
            ("live.reconcile_interval_ms", live.reconcile_interval_ms),
            ("live.connected_ms", live.connected_ms),
            ("live.chat_max_chars", live.chat_max_chars),
            ("live.chat_burst", live.chat_burst),
            ("live.chat_window_ms", live.chat_window_ms),
            ("live.chat_sweep_interval_ms", live.chat_sweep_interval_ms),
            ("live.max_cached_tables", live.max_cached_tables),
            ("live.max_streams_per_caller", live.max_streams_per_caller),
            ("live.stream_recheck_ms", live.stream_recheck_ms),
            ("live.idle_table_secs", live.idle_table_secs),
            (
                "database.commit_groups",
                u64::from(self.database.commit_groups),
            ),
        ] {
            if value == 0 {
                return Err((setting, "must be at least 1".into()));
            }
        }
        if live.gone_ms < live.connected_ms {
            return Err(("live.gone_ms", "must be at least live.connected_ms".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use okey_platform::{ServiceKind, Settings};

    use super::*;

    fn own(env: &[(&str, &str)]) -> Result<TableSettings, String> {
        Settings::from_sources(ServiceKind::Table, None, env.iter().copied())
            .map_err(|e| e.to_string())?
            .own()
            .map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_are_valid_and_variables_keep_their_names() {
        let defaults = own(&[]).unwrap();
        assert_eq!(defaults.live.bot_pace_ms, 1500);
        assert_eq!(defaults.database.commit_groups, 2);
        let set = own(&[
            ("OKEY_LIVE__BOT_PACE_MS", "0"),
            ("OKEY_DATABASE__COMMIT_GROUPS", "1"),
        ])
        .unwrap();
        assert_eq!(set.live.bot_pace_ms, 0);
        assert_eq!(set.database.commit_groups, 1);
    }

    #[test]
    fn what_types_cannot_say_is_checked() {
        let err = own(&[("OKEY_DATABASE__COMMIT_GROUPS", "0")]).unwrap_err();
        assert!(err.contains("database.commit_groups"), "{err}");
        let err = own(&[
            ("OKEY_LIVE__GONE_MS", "10"),
            ("OKEY_LIVE__CONNECTED_MS", "20"),
        ])
        .unwrap_err();
        assert!(
            err.contains("live.gone_ms") && err.contains("OKEY_LIVE__GONE_MS"),
            "{err}"
        );
        let err = own(&[("OKEY_LIVE__CHAT_BURST", "0")]).unwrap_err();
        assert!(err.contains("live.chat_burst"), "{err}");
        let err = own(&[("OKEY_LIVE__NO_SUCH", "1")]).unwrap_err();
        assert!(err.contains("unknown setting `live.no_such`"), "{err}");
    }
}
