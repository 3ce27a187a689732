//! Requests that never reach a handler because tonic cannot decode them get the error model too.
//!
//! tonic answers a request whose bytes do not decode (invalid UTF-8 in a string, a wrong wire
//! type, a truncated message) with a bare INTERNAL, and one over the size limit with a bare
//! OUT_OF_RANGE, neither with details. Both are the client's fault, so [`rewrite`] (mounted on
//! every service by the host's `ServiceBuilder`) answers them as INVALID_ARGUMENT with ErrorInfo:
//! `malformed_request` and `request_too_large`. It recognises them by what tonic puts in the
//! response: the `Status` it answered with, without details (every status the okey services build
//! has ErrorInfo), and a message of tonic's decoder. A compressed request (no service decodes
//! one) keeps tonic's UNIMPLEMENTED and gets ErrorInfo `unsupported_compression`.

use tonic::{Code, Status};

use crate::status::{self, Reason};

/// The largest request message every okey service decodes (64 KiB); set it with
/// `max_decoding_message_size` on each generated server.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// How tonic's and prost's decoders begin the messages of the INTERNAL statuses they answer a
/// request that does not decode with.
const UNDECODABLE: &[&str] = &[
    "failed to decode Protobuf message",
    "Unexpected EOF decoding stream",
    "Missing request message",
    "protocol error: received message with",
    "Error decompressing",
];

/// The response, or the error-model answer when it is tonic's refusal of an undecodable or
/// oversized request.
pub fn rewrite(response: http::Response<tonic::body::Body>) -> http::Response<tonic::body::Body> {
    match response
        .extensions()
        .get::<Status>()
        .and_then(request_error)
    {
        Some(status) => status.into_http(),
        None => response,
    }
}

/// What to answer instead of `refused`, if tonic's decoder refused the request.
fn request_error(refused: &Status) -> Option<Status> {
    if !refused.details().is_empty() {
        return None;
    }
    let message = refused.message();
    if refused.code() == Code::Unimplemented && message.starts_with("Content is compressed with") {
        return Some(status::error(
            Reason::UnsupportedCompression,
            format!("{message}: send the request uncompressed (`grpc-encoding: identity`)"),
        ));
    }
    let too_large = match refused.code() {
        Code::Internal if UNDECODABLE.iter().any(|m| message.starts_with(m)) => false,
        Code::OutOfRange if message.starts_with("Error, decoded message length too large") => true,
        Code::ResourceExhausted if message.starts_with("Error decompressing: size limit") => true,
        _ => return None,
    };
    // The whole request is the bad field (its path is empty): BadRequest, as every
    // INVALID_ARGUMENT carries.
    Some(if too_large {
        status::invalid_argument(
            Reason::RequestTooLarge,
            "",
            format!(
                "the request is larger than the {MAX_REQUEST_BYTES} bytes this service accepts \
                 ({message})"
            ),
        )
    } else {
        status::invalid_argument(
            Reason::MalformedRequest,
            "",
            format!("the request does not decode as the RPC's message: {message}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use tonic_types::StatusExt;

    use super::*;

    fn answered(status: Status) -> Status {
        let response = rewrite(status.into_http());
        Status::from_header_map(response.headers()).expect("a status in the headers")
    }

    fn reason(status: &Status) -> String {
        status
            .get_error_details()
            .error_info()
            .unwrap()
            .reason
            .clone()
    }

    #[test]
    fn the_decoders_refusals_become_invalid_argument_with_error_info() {
        for message in [
            "failed to decode Protobuf message: SignInAsGuestRequest.device_id: invalid string value: data is not UTF-8 encoded",
            "failed to decode Protobuf message: invalid wire type: LengthDelimited (expected Varint)",
            "Unexpected EOF decoding stream.",
            "Missing request message.",
        ] {
            let status = answered(Status::internal(message));
            assert_eq!(status.code(), Code::InvalidArgument, "{message}");
            assert_eq!(reason(&status), "malformed_request");
            assert_eq!(
                status
                    .get_error_details()
                    .bad_request()
                    .unwrap()
                    .field_violations
                    .len(),
                1
            );
        }
        let status = answered(Status::out_of_range(
            "Error, decoded message length too large: found 70000 bytes, the limit is: 65536 bytes",
        ));
        assert_eq!(status.code(), Code::InvalidArgument);
        assert_eq!(reason(&status), "request_too_large");
        assert!(status.get_error_details().bad_request().is_some());
    }

    #[test]
    fn a_compressed_request_is_unsupported_compression_with_error_info() {
        let status = answered(Status::unimplemented(
            "Content is compressed with `gzip` which isn't supported",
        ));
        assert_eq!(status.code(), Code::Unimplemented);
        assert_eq!(reason(&status), "unsupported_compression");
        assert!(status.message().contains("uncompressed"), "{status:?}");
    }

    #[test]
    fn other_statuses_pass_unchanged() {
        for status in [
            Status::internal("something else broke"),
            status::internal(),
            status::error(
                Reason::VersionAhead,
                "Error, decoded message length too large",
            ),
            Status::out_of_range("a version the table has not reached"),
        ] {
            let (code, message) = (status.code(), status.message().to_owned());
            let answered = answered(status);
            assert_eq!(answered.code(), code);
            assert_eq!(answered.message(), message);
        }
    }
}
