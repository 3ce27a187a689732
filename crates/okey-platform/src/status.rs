//! Builders for `tonic::Status` that follow the error model of `proto/okey/v1/common.proto`:
//! a gRPC code plus `google.rpc.ErrorInfo` (domain `okey.v1`, a stable reason code) and, where it
//! helps, `BadRequest` or `PreconditionFailure`. Each service maps its own domain errors through
//! these, in exactly one place.

use std::collections::HashMap;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

/// `ErrorInfo.domain` of every okey error.
pub const ERROR_DOMAIN: &str = "okey.v1";

fn with_info(reason: &str, metadata: HashMap<String, String>) -> ErrorDetails {
    ErrorDetails::with_error_info(reason, ERROR_DOMAIN, metadata)
}

/// A well-formed request that the rules forbid now: FAILED_PRECONDITION, naming the rule.
pub fn rule_violation(reason: &str, rule: &str, description: impl Into<String>) -> Status {
    let description = description.into();
    let mut details = with_info(
        reason,
        HashMap::from([("rule".to_owned(), rule.to_owned())]),
    );
    details.add_precondition_failure_violation("rule", rule, description.clone());
    Status::with_error_details(Code::FailedPrecondition, description, details)
}

/// A malformed request: INVALID_ARGUMENT, naming the bad field.
pub fn invalid_argument(reason: &str, field: &str, description: impl Into<String>) -> Status {
    let description = description.into();
    let mut details = with_info(reason, HashMap::new());
    details.add_bad_request_violation(field, description.clone());
    Status::with_error_details(Code::InvalidArgument, description, details)
}

/// Any other code with a reason (ABORTED `version_conflict`, UNAUTHENTICATED `token_expired`, …).
pub fn with_reason(code: Code, reason: &str, message: impl Into<String>) -> Status {
    let message = message.into();
    let details = with_info(reason, HashMap::new());
    Status::with_error_details(code, message, details)
}

/// An RPC of the contract that this server does not serve yet: UNIMPLEMENTED,
/// `not_implemented_yet`, saying which work item brings it.
pub fn not_implemented_yet(rpc: &str, arrives_with: &str) -> Status {
    let message = format!(
        "{rpc} is part of the okey.v1 contract but not served yet; it arrives with {arrives_with}"
    );
    let details = with_info(
        "not_implemented_yet",
        HashMap::from([("rpc".to_owned(), rpc.to_owned())]),
    );
    Status::with_error_details(Code::Unimplemented, message, details)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_violation_carries_reason_and_rule() {
        let status = rule_violation("wrong_opening", "threshold", "85 is below 101");
        assert_eq!(status.code(), Code::FailedPrecondition);
        let details = status.get_error_details();
        let info = details.error_info().expect("ErrorInfo");
        assert_eq!(info.reason, "wrong_opening");
        assert_eq!(info.domain, ERROR_DOMAIN);
        let failure = details.precondition_failure().expect("PreconditionFailure");
        assert_eq!(failure.violations[0].subject, "threshold");
    }

    #[test]
    fn a_bad_argument_names_the_field() {
        let status = invalid_argument("invalid_tile", "command.discard.tile", "no such tile: X9");
        assert_eq!(status.code(), Code::InvalidArgument);
        let details = status.get_error_details();
        assert_eq!(
            details.bad_request().unwrap().field_violations[0].field,
            "command.discard.tile"
        );
    }
}
