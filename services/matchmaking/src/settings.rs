//! The matchmaking service's own settings, read through the platform's layers (defaults, file,
//! `OKEY_…` variables: `okey_platform::Settings::own`): quick play (with its rating windows) and
//! private rooms
//! (`[matchmaking]`, `OKEY_MATCHMAKING__…`).

use okey_platform::settings::ServiceSettings;
use serde::Deserialize;

use crate::domain::RatingWindows;

/// What the matchmaking service reads besides the shared sections.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchmakingSettings {
    /// Quick play and private rooms.
    pub matchmaking: QueueSettings,
}

/// Quick play and private rooms .
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSettings {
    /// The table service's gRPC address (`http://host:port`), where matched tables are created.
    pub table_url: String,
    /// The scoring service's gRPC address, asked each new ticket's player's rating (GetRating,
    /// with this service's token); empty: every ticket searches at the new player's 1500.
    pub scoring_url: String,
    /// The rating window of a ticket, widening with its wait: `seconds:width` steps (width in
    /// rating points either side, or `any`), e.g. `0:100,5:250,10:any`. A table forms only of
    /// tickets whose windows all hold each other's ratings.
    pub rating_windows: String,
    /// A quick-play ticket that allows bots gets them for its empty seats after this long.
    pub bot_fill_after_secs: u64,
    /// A quick-play ticket without bots is EXPIRED after this long unmatched.
    pub ticket_ttl_secs: u64,
    /// The matcher's tick: how often each replica looks for groups, bot fills and expiries (it
    /// also runs at once on every ticket it opens). At most 250.
    pub tick_ms: u64,
    /// A replica that claimed a group and did not finish creating its table within this long
    /// (it died) leaves the group to another replica, which finishes it with the same request.
    pub claim_lease_secs: u64,
    /// An unstarted private room closes after this long.
    pub room_ttl_secs: u64,
    /// Wrong room codes or passwords a caller may try per window before RESOURCE_EXHAUSTED.
    pub join_attempts: u64,
    /// Wrong passwords a room may be given per window, by all callers together, before JoinRoom
    /// refuses every non-member of it with RESOURCE_EXHAUSTED (new guest accounts cost nothing,
    /// so the per-caller limit alone would not hold a password).
    pub room_password_attempts: u64,
    /// The window of `join_attempts` and `room_password_attempts`.
    pub join_window_secs: u64,
}

impl ServiceSettings for MatchmakingSettings {
    const DEFAULTS: &'static str = r#"
[matchmaking]
table_url = "http://127.0.0.1:50053"
scoring_url = "http://127.0.0.1:50054"
rating_windows = "0:100,5:250,10:any"
bot_fill_after_secs = 15
ticket_ttl_secs = 120
tick_ms = 100
claim_lease_secs = 10
room_ttl_secs = 1800
join_attempts = 10
room_password_attempts = 30
join_window_secs = 60
"#;

    fn check(&self) -> Result<(), (&'static str, String)> {
        let m = &self.matchmaking;
        for (setting, value) in [
            ("matchmaking.bot_fill_after_secs", m.bot_fill_after_secs),
            ("matchmaking.ticket_ttl_secs", m.ticket_ttl_secs),
            ("matchmaking.tick_ms", m.tick_ms),
            ("matchmaking.claim_lease_secs", m.claim_lease_secs),
            ("matchmaking.room_ttl_secs", m.room_ttl_secs),
            ("matchmaking.join_attempts", m.join_attempts),
            (
                "matchmaking.room_password_attempts",
                m.room_password_attempts,
            ),
            ("matchmaking.join_window_secs", m.join_window_secs),
        ] {
            if value == 0 {
                return Err((setting, "must be at least 1".into()));
            }
        }
        if m.tick_ms > 250 {
            return Err(("matchmaking.tick_ms", "must be at most 250".into()));
        }
        RatingWindows::parse(&m.rating_windows).map_err(|e| ("matchmaking.rating_windows", e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use okey_platform::{ServiceKind, Settings};

    use super::*;

    fn own(env: &[(&str, &str)]) -> Result<MatchmakingSettings, String> {
        Settings::from_sources(ServiceKind::Matchmaking, None, env.iter().copied())
            .map_err(|e| e.to_string())?
            .own()
            .map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_are_valid() {
        assert_eq!(own(&[]).unwrap().matchmaking.tick_ms, 100);
    }

    #[test]
    fn a_matcher_tick_over_250_ms_is_refused() {
        let err = own(&[("OKEY_MATCHMAKING__TICK_MS", "1000")]).unwrap_err();
        assert!(err.contains("matchmaking.tick_ms"), "{err}");
        let err = own(&[("OKEY_MATCHMAKING__JOIN_ATTEMPTS", "0")]).unwrap_err();
        assert!(err.contains("matchmaking.join_attempts"), "{err}");
        let err = own(&[("OKEY_MATCHMAKING__RATING_WINDOWS", "5:100")]).unwrap_err();
        assert!(err.contains("matchmaking.rating_windows"), "{err}");
    }
}
