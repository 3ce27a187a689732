//! Conversions between the wire (okey.v1 prost types) and the engine's and this service's types
//! that both directions of gRPC need: rule sets, bot levels, times. With `grpc` and `tables`, the
//! only module that knows the generated types.

use chrono::{DateTime, Utc};
use okey_platform::status::{self, Reason};
use okey_proto::v1 as pb;
use tonic::Status;

use crate::domain::BotLevel;

pub use okey_platform::rule_set::{rules_from_proto, rules_to_proto};

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

/// The wire's bot level (request field `field`) as this service's: UNSPECIFIED is the server's
/// default; a number this server does not know is INVALID_ARGUMENT `invalid_bot_level`, never
/// silently the default.
pub fn bot_level_from_proto(level: i32, field: &str) -> Result<BotLevel, Status> {
    match pb::BotLevel::try_from(level) {
        Ok(pb::BotLevel::Unspecified) => Ok(BotLevel::Default),
        Ok(pb::BotLevel::Easy) => Ok(BotLevel::Easy),
        Ok(pb::BotLevel::Medium) => Ok(BotLevel::Medium),
        Ok(pb::BotLevel::Hard) => Ok(BotLevel::Hard),
        Err(_) => Err(invalid(
            field,
            Reason::InvalidBotLevel,
            format!(
                "unknown bot level {level}: use BOT_LEVEL_UNSPECIFIED, BOT_LEVEL_EASY, \
                 BOT_LEVEL_MEDIUM or BOT_LEVEL_HARD"
            ),
        )),
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

#[cfg(test)]
mod tests {
    use tonic::Code;
    use tonic_types::StatusExt;

    use super::*;

    #[test]
    fn every_known_bot_level_is_read_and_an_unknown_one_is_refused() {
        for (wire, level) in [
            (pb::BotLevel::Unspecified, BotLevel::Default),
            (pb::BotLevel::Easy, BotLevel::Easy),
            (pb::BotLevel::Medium, BotLevel::Medium),
            (pb::BotLevel::Hard, BotLevel::Hard),
        ] {
            assert_eq!(
                bot_level_from_proto(wire as i32, "bot_level").unwrap(),
                level
            );
            assert_eq!(bot_level_to_proto(level), wire);
        }
        for unknown in [4, 99, -1] {
            let refused = bot_level_from_proto(unknown, "bot_level").unwrap_err();
            assert_eq!(refused.code(), Code::InvalidArgument);
            let details = refused.get_error_details();
            assert_eq!(details.error_info().unwrap().reason, "invalid_bot_level");
            assert_eq!(
                details.bad_request().unwrap().field_violations[0].field,
                "bot_level"
            );
        }
    }
}
