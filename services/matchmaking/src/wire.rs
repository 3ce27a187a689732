//! Conversions between the wire (okey.v1 prost types) and the engine's and this service's types
//! that both directions of gRPC need: rule sets, bot levels, times. With `grpc` and `tables`, the
//! only module that knows the generated types.

use chrono::{DateTime, Utc};
use okey_platform::status::{self, Reason};
use okey_proto::v1 as pb;
use okey_rules::{MatchLength, PlayableDiscard, Preset, RuleSet, Threshold};
use tonic::Status;

use crate::domain::BotLevel;

/// INVALID_ARGUMENT naming the field.
pub fn invalid(field: &str, reason: Reason, message: impl Into<String>) -> Status {
    status::invalid_argument(reason, field, message)
}

pub fn timestamp(t: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: t.timestamp(),
        nanos: t.timestamp_subsec_nanos() as i32,
    }
}

/// The wire's bot level as this service's.
pub fn bot_level_from_proto(level: i32) -> BotLevel {
    match pb::BotLevel::try_from(level) {
        Ok(pb::BotLevel::Easy) => BotLevel::Easy,
        Ok(pb::BotLevel::Medium) => BotLevel::Medium,
        Ok(pb::BotLevel::Hard) => BotLevel::Hard,
        _ => BotLevel::Default,
    }
}

/// A wire rule set as the engine's effective one: the preset, then every override, then the
/// engine's own validation (`RuleSet::validate`). Errors name the field (`rules.…`).
pub fn rules_from_proto(rules: Option<&pb::RuleSet>) -> Result<RuleSet, Status> {
    let default = pb::RuleSet::default();
    let r = rules.unwrap_or(&default);
    let preset = if r.preset.is_empty() {
        Preset::Classic
    } else {
        Preset::parse(&r.preset).ok_or_else(|| {
            invalid(
                "rules.preset",
                Reason::InvalidRules,
                format!("unknown preset `{}` (ListPresets lists them)", r.preset),
            )
        })?
    };
    let mut out = preset.rules();
    match pb::ThresholdMode::try_from(r.threshold) {
        Ok(pb::ThresholdMode::Standard) => out.threshold = Threshold::Standard,
        Ok(pb::ThresholdMode::Raising) => out.threshold = Threshold::Raising,
        Ok(pb::ThresholdMode::Unspecified) => {}
        Err(_) => {
            return Err(invalid(
                "rules.threshold",
                Reason::InvalidRules,
                "unknown threshold",
            ));
        }
    }
    match pb::PlayableDiscardMode::try_from(r.playable_discard) {
        Ok(pb::PlayableDiscardMode::Auto) => out.playable_discard = PlayableDiscard::Auto,
        Ok(pb::PlayableDiscardMode::Called) => out.playable_discard = PlayableDiscard::Called,
        Ok(pb::PlayableDiscardMode::Unspecified) => {}
        Err(_) => {
            return Err(invalid(
                "rules.playable_discard",
                Reason::InvalidRules,
                "unknown playable discard mode",
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
        return Err(invalid(
            "rules.turn_seconds",
            Reason::InvalidRules,
            "turn_seconds cannot be negative",
        ));
    }
    if r.turn_seconds > 0 {
        out.turn_seconds = r.turn_seconds as u32;
        out.turn_seconds_max = out.turn_seconds_max.max(out.turn_seconds);
    }
    out.validate().map_err(|e| {
        invalid(
            &format!("rules.{}", e.field),
            Reason::InvalidRules,
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

/// The wire's bot level.
pub fn bot_level_to_proto(level: BotLevel) -> pb::BotLevel {
    match level {
        BotLevel::Default => pb::BotLevel::Unspecified,
        BotLevel::Easy => pb::BotLevel::Easy,
        BotLevel::Medium => pb::BotLevel::Medium,
        BotLevel::Hard => pb::BotLevel::Hard,
    }
}
