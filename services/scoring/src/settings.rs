//! The scoring service's own settings, read through the platform's layers (defaults, file,
//! `OKEY_…` variables: `okey_platform::Settings::own`): how ratings are shown and listed
//! (`[rating]`, `OKEY_RATING__…`). They change what is read, never what is stored, so a new
//! value needs no rebuild.

use okey_platform::settings::ServiceSettings;
use serde::Deserialize;

/// What the scoring service reads besides the shared sections.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoringSettings {
    /// Ratings and leaderboards.
    pub rating: RatingSettings,
}

/// Ratings and leaderboards.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatingSettings {
    /// A rating is provisional (shown with a `?`) while its uncertainty is at least this. A new
    /// player's is 500; about 10 free-for-all matches bring it below 250.
    pub provisional_uncertainty: u32,
    /// The fewest rated matches a player needs to be listed on the all-time leaderboard (and to
    /// have a rank there); the day, week and month boards list everyone with a rated match in the
    /// period. A request may ask for more, never fewer.
    pub leaderboard_min_matches: u32,
}

impl ServiceSettings for ScoringSettings {
    const DEFAULTS: &'static str = r#"
[rating]
provisional_uncertainty = 250
leaderboard_min_matches = 10
"#;

    fn check(&self) -> Result<(), (&'static str, String)> {
        if self.rating.provisional_uncertainty == 0 {
            return Err((
                "rating.provisional_uncertainty",
                "must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use okey_platform::{ServiceKind, Settings};

    use super::*;

    fn own(env: &[(&str, &str)]) -> Result<ScoringSettings, String> {
        Settings::from_sources(ServiceKind::Scoring, None, env.iter().copied())
            .map_err(|e| e.to_string())?
            .own()
            .map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_are_valid_and_variables_override_them() {
        assert_eq!(own(&[]).unwrap().rating.provisional_uncertainty, 250);
        let set = own(&[("OKEY_RATING__LEADERBOARD_MIN_MATCHES", "1")]).unwrap();
        assert_eq!(set.rating.leaderboard_min_matches, 1);
        let err = own(&[("OKEY_RATING__PROVISIONAL_UNCERTAINTY", "0")]).unwrap_err();
        assert!(err.contains("rating.provisional_uncertainty"), "{err}");
    }
}
