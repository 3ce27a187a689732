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

/// The wire's bot level as this service's.
pub fn bot_level_from_proto(level: i32) -> BotLevel {
    match pb::BotLevel::try_from(level) {
        Ok(pb::BotLevel::Easy) => BotLevel::Easy,
        Ok(pb::BotLevel::Medium) => BotLevel::Medium,
        Ok(pb::BotLevel::Hard) => BotLevel::Hard,
        _ => BotLevel::Default,
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
