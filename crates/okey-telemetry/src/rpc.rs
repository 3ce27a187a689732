//! One gRPC call as OpenTelemetry's RPC conventions record it, on either side: its name
//! (`{package.Service}/{Method}`), the `rpc.*` attributes, its status code once known (from the
//! response headers when it failed at once, else from the trailers at the end of the body, so a
//! stream's span and duration cover its whole life) and the error status with `error.type`.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use opentelemetry::trace::Status;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Histogram bucket bounds for call durations, in seconds: 0.5 ms to 10 s, then a stream's
/// minutes.
pub(crate) const DURATION_BOUNDS: [f64; 17] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0,
    300.0, 1800.0,
];

/// The status code a call ends with when its transport failed under it.
pub(crate) const UNAVAILABLE: i64 = 14;
const CANCELLED: i64 = 1;
const UNKNOWN: i64 = 2;

/// The gRPC status code's canonical name (`error.type` of a failed call).
pub fn code_name(code: i64) -> &'static str {
    match code {
        0 => "OK",
        1 => "CANCELLED",
        2 => "UNKNOWN",
        3 => "INVALID_ARGUMENT",
        4 => "DEADLINE_EXCEEDED",
        5 => "NOT_FOUND",
        6 => "ALREADY_EXISTS",
        7 => "PERMISSION_DENIED",
        8 => "RESOURCE_EXHAUSTED",
        9 => "FAILED_PRECONDITION",
        10 => "ABORTED",
        11 => "OUT_OF_RANGE",
        12 => "UNIMPLEMENTED",
        13 => "INTERNAL",
        14 => "UNAVAILABLE",
        15 => "DATA_LOSS",
        16 => "UNAUTHENTICATED",
        _ => "_OTHER",
    }
}

/// The service and method of a gRPC path (`/okey.v1.TableService/SubmitCommand`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rpc {
    /// `rpc.service`: the fully qualified service (`okey.v1.TableService`).
    pub service: String,
    /// `rpc.method`: the method alone (`SubmitCommand`).
    pub method: String,
}

impl Rpc {
    /// Reads the request path.
    pub fn of(path: &str) -> Rpc {
        let path = path.strip_prefix('/').unwrap_or(path);
        let (service, method) = path.split_once('/').unwrap_or((path, ""));
        Rpc {
            service: service.to_owned(),
            method: method.to_owned(),
        }
    }

    /// The span name: `{package.Service}/{Method}`.
    pub fn span_name(&self) -> String {
        format!("{}/{}", self.service, self.method)
    }

    /// The attributes every span and duration of this call carries.
    pub(crate) fn attributes(&self) -> Vec<KeyValue> {
        vec![
            KeyValue::new("rpc.system", "grpc"),
            KeyValue::new("rpc.service", self.service.clone()),
            KeyValue::new("rpc.method", self.method.clone()),
        ]
    }
}

/// Which end of the call this process is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Server,
    Client,
}

/// The `grpc-status` of a header map (the response headers of a call answered at once, or the
/// trailers).
pub(crate) fn status_in(headers: &http::HeaderMap) -> Option<i64> {
    headers
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<i64>().ok())
}

/// The `grpc-message` of a header map, decoded (it travels percent-encoded: `a%20tile`), as
/// tonic reads it.
fn message_in(headers: &http::HeaderMap) -> Option<String> {
    tonic::Status::from_header_map(headers)
        .map(|status| status.message().to_owned())
        .filter(|message| !message.is_empty())
}

/// A call in flight: what is recorded when it ends.
pub(crate) struct Call {
    pub(crate) span: tracing::Span,
    pub(crate) side: Side,
    pub(crate) started: Instant,
    pub(crate) duration: Histogram<f64>,
    pub(crate) attributes: Vec<KeyValue>,
}

impl Call {
    /// Ends the call with `code`: its status on the span (an error for any code but OK, except
    /// CANCELLED on the server, where the caller went away and nothing failed) and its duration.
    pub(crate) fn finish(self, code: i64, message: Option<String>) {
        let failed = code != 0 && !(self.side == Side::Server && code == CANCELLED);
        self.end(code, message, failed);
    }

    fn end(self, code: i64, message: Option<String>, failed: bool) {
        let Call {
            span,
            side: _,
            started,
            duration,
            mut attributes,
        } = self;
        span.set_attribute("rpc.grpc.status_code", code);
        attributes.push(KeyValue::new("rpc.grpc.status_code", code));
        if failed {
            let name = code_name(code);
            span.set_attribute("error.type", name);
            let description = match message {
                Some(message) if !message.is_empty() => format!("{name}: {message}"),
                _ => name.to_owned(),
            };
            span.set_status(Status::error(description));
            attributes.push(KeyValue::new("error.type", name));
        }
        duration.record(started.elapsed().as_secs_f64(), &attributes);
    }

    /// The call's response arrived: a status in its headers ends it now, otherwise its body
    /// carries the call on until the trailers.
    pub(crate) fn answered<B>(self, response: http::Response<B>) -> http::Response<Observed<B>> {
        let (parts, body) = response.into_parts();
        let call = match status_in(&parts.headers) {
            Some(code) => {
                self.finish(code, message_in(&parts.headers));
                None
            }
            None => Some(self),
        };
        http::Response::from_parts(parts, Observed { inner: body, call })
    }
}

/// A response body that ends its call's span and records its duration when the trailers come
/// (or the body ends or is dropped without them). Polled inside the call's span, so whatever
/// the stream does is traced under it and the span ends at the stream's last frame.
pub struct Observed<B> {
    inner: B,
    call: Option<Call>,
}

impl<B> http_body::Body for Observed<B>
where
    B: http_body::Body + Unpin,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        let span = this.call.as_ref().map(|c| c.span.clone());
        let _entered = span.as_ref().map(|s| s.enter());
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(trailers) = frame.trailers_ref()
                    && let Some(call) = this.call.take()
                {
                    call.finish(status_in(trailers).unwrap_or(UNKNOWN), message_in(trailers));
                }
            }
            Poll::Ready(Some(Err(_))) => {
                if let Some(call) = this.call.take() {
                    let code = match call.side {
                        Side::Server => UNKNOWN,
                        Side::Client => UNAVAILABLE,
                    };
                    call.finish(code, Some("the response body failed".into()));
                }
            }
            Poll::Ready(None) => {
                if let Some(call) = this.call.take() {
                    call.finish(UNKNOWN, Some("the response ended without a status".into()));
                }
            }
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for Observed<B> {
    fn drop(&mut self) {
        // Dropped before its status: the client closed it (an app leaving a stream, a client
        // that stopped reading): CANCELLED, and nothing failed.
        if let Some(call) = self.call.take() {
            call.end(CANCELLED, None, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_its_service_and_method() {
        let rpc = Rpc::of("/okey.v1.TableService/SubmitCommand");
        assert_eq!(rpc.service, "okey.v1.TableService");
        assert_eq!(rpc.method, "SubmitCommand");
        assert_eq!(rpc.span_name(), "okey.v1.TableService/SubmitCommand");
        assert_eq!(code_name(9), "FAILED_PRECONDITION");
        assert_eq!(code_name(16), "UNAUTHENTICATED");
    }

    #[test]
    fn a_status_message_is_read_decoded() {
        let mut headers = http::HeaderMap::new();
        tonic::Status::failed_precondition("a tile was already taken: `R7`, 100% sure")
            .add_header(&mut headers)
            .unwrap();
        assert!(headers["grpc-message"].to_str().unwrap().contains("%20"));
        assert_eq!(
            message_in(&headers).as_deref(),
            Some("a tile was already taken: `R7`, 100% sure")
        );
        assert_eq!(message_in(&http::HeaderMap::new()), None);
    }
}
