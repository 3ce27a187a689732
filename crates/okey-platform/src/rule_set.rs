//! The engine's rule set on the wire and back: one conversion for every service that takes or
//! shows a `okey.v1.RuleSet` (table, matchmaking, scoring), so a rule option is read the same way
//! everywhere and an unknown value is refused the same way everywhere.

use okey_proto::v1 as pb;
use okey_rules::{MatchLength, PlayableDiscard, Preset, RuleSet, Threshold};
use tonic::Status;

use crate::status::{Reason, invalid_argument};

/// A wire rule set as the engine's effective one: the preset, then every override, then the
/// engine's own validation (`RuleSet::validate`). Errors name the field (`rules.…`).
pub fn rules_from_proto(rules: Option<&pb::RuleSet>) -> Result<RuleSet, Status> {
    let default = pb::RuleSet::default();
    let r = rules.unwrap_or(&default);
    let preset = if r.preset.is_empty() {
        Preset::Classic
    } else {
        Preset::parse(&r.preset).ok_or_else(|| {
            invalid_argument(
                Reason::InvalidRules,
                "rules.preset",
                format!(
                    "unknown preset `{}` (ListPresets lists them)",
                    crate::fields::quoted(&r.preset)
                ),
            )
        })?
    };
    let mut out = preset.rules();
    match pb::ThresholdMode::try_from(r.threshold) {
        Ok(pb::ThresholdMode::Standard) => out.threshold = Threshold::Standard,
        Ok(pb::ThresholdMode::Raising) => out.threshold = Threshold::Raising,
        Ok(pb::ThresholdMode::Unspecified) => {}
        Err(_) => {
            return Err(invalid_argument(
                Reason::InvalidRules,
                "rules.threshold",
                "unknown threshold mode: use THRESHOLD_MODE_STANDARD or THRESHOLD_MODE_RAISING",
            ));
        }
    }
    match pb::PlayableDiscardMode::try_from(r.playable_discard) {
        Ok(pb::PlayableDiscardMode::Auto) => out.playable_discard = PlayableDiscard::Auto,
        Ok(pb::PlayableDiscardMode::Called) => out.playable_discard = PlayableDiscard::Called,
        Ok(pb::PlayableDiscardMode::Unspecified) => {}
        Err(_) => {
            return Err(invalid_argument(
                Reason::InvalidRules,
                "rules.playable_discard",
                "unknown playable discard mode: use PLAYABLE_DISCARD_MODE_AUTO or PLAYABLE_DISCARD_MODE_CALLED",
            ));
        }
    }
    if let Some(v) = r.partners {
        out.partners = v;
    }
    if let Some(v) = r.run_wraps_after_thirteen {
        out.run_wraps_12_13_1 = v;
    }
    if let Some(v) = r.in_play_penalties {
        out.in_play_penalties = v;
    }
    if let Some(v) = r.act_after_opening_same_turn {
        out.act_after_opening_same_turn = v;
    }
    if let Some(v) = r.pairs_take_discard {
        out.pairs_take_discard = v;
    }
    match r.match_length.as_ref().and_then(|m| m.length) {
        Some(pb::match_length::Length::Hands(n)) => {
            out.match_length = MatchLength::Hands(u32::try_from(n).unwrap_or(0));
        }
        Some(pb::match_length::Length::PenaltyLimit(n)) => {
            out.match_length = MatchLength::PenaltyLimit(i64::from(n));
        }
        None => {}
    }
    if r.turn_seconds < 0 {
        return Err(invalid_argument(
            Reason::InvalidRules,
            "rules.turn_seconds",
            "turn_seconds cannot be negative",
        ));
    }
    if r.turn_seconds > 0 {
        out.turn_seconds = r.turn_seconds as u32;
        out.turn_seconds_max = out.turn_seconds_max.max(out.turn_seconds);
    }
    out.validate().map_err(|e| {
        invalid_argument(
            Reason::InvalidRules,
            &format!("rules.{}", e.field),
            e.message.clone(),
        )
    })?;
    Ok(out)
}

/// The engine's rule set on the wire, every option spelled out.
pub fn rules_to_proto(r: &RuleSet) -> pb::RuleSet {
    pb::RuleSet {
        preset: r.preset.name().to_owned(),
        threshold: match r.threshold {
            Threshold::Standard => pb::ThresholdMode::Standard,
            Threshold::Raising => pb::ThresholdMode::Raising,
        } as i32,
        partners: Some(r.partners),
        run_wraps_after_thirteen: Some(r.run_wraps_12_13_1),
        in_play_penalties: Some(r.in_play_penalties),
        playable_discard: match r.playable_discard {
            PlayableDiscard::Auto => pb::PlayableDiscardMode::Auto,
            PlayableDiscard::Called => pb::PlayableDiscardMode::Called,
        } as i32,
        act_after_opening_same_turn: Some(r.act_after_opening_same_turn),
        pairs_take_discard: Some(r.pairs_take_discard),
        match_length: Some(pb::MatchLength {
            length: Some(match r.match_length {
                MatchLength::Hands(n) => pb::match_length::Length::Hands(n as i32),
                MatchLength::PenaltyLimit(n) => pb::match_length::Length::PenaltyLimit(n as i32),
            }),
        }),
        turn_seconds: r.turn_seconds as i32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_comes_back_from_the_wire_as_it_went() {
        for preset in Preset::ALL {
            let rules = preset.rules();
            assert_eq!(
                rules_from_proto(Some(&rules_to_proto(&rules))).unwrap(),
                rules
            );
        }
    }

    #[test]
    fn an_unknown_option_value_is_refused_naming_its_field() {
        for (wire, field) in [
            (
                pb::RuleSet {
                    threshold: 99,
                    ..Default::default()
                },
                "rules.threshold",
            ),
            (
                pb::RuleSet {
                    playable_discard: 7,
                    ..Default::default()
                },
                "rules.playable_discard",
            ),
            (
                pb::RuleSet {
                    preset: "chess".into(),
                    ..Default::default()
                },
                "rules.preset",
            ),
            (
                pb::RuleSet {
                    turn_seconds: -1,
                    ..Default::default()
                },
                "rules.turn_seconds",
            ),
        ] {
            use tonic_types::StatusExt;
            let status = rules_from_proto(Some(&wire)).unwrap_err();
            assert_eq!(status.code(), tonic::Code::InvalidArgument, "{field}");
            let details = status.get_error_details();
            let info = details.error_info().expect("ErrorInfo");
            assert_eq!(info.reason, Reason::InvalidRules.as_str(), "{field}");
            let violations = &details.bad_request().expect("BadRequest").field_violations;
            assert_eq!(violations[0].field, field);
        }
    }
}
