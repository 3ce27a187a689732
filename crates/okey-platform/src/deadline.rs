//! A call's deadline: the client's `grpc-timeout`, never past `server.request_timeout_ms`. A call
//! still running when it passes is dropped and answered DEADLINE_EXCEEDED `deadline_exceeded`,
//! as gRPC and `common.proto` say ("the call ran out of time: retry with backoff, same
//! request_id"). tonic's own timeout answers CANCELLED, which tells a client the opposite (that
//! it gave up itself), so the host uses this layer instead.
//!
//! A server stream (WatchTable …) opened with a `grpc-timeout` ends at that deadline, after what
//! its handler has already produced, with DEADLINE_EXCEEDED in its trailers. One opened without
//! lasts as long as the client keeps it: `server.request_timeout_ms` bounds only how long its
//! response takes to start.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::time::Instant;

use crate::status::{self, Reason};
use crate::streams::EndsWhen;

/// How much sooner than the client's deadline `asked` a call still running is answered: a tenth
/// of it, from 1 to 10 ms. tonic's server reads `grpc-timeout` too (always, outside every layer
/// of ours) and answers CANCELLED at the same deadline; its timer starts a moment before this
/// layer's (microseconds, more if the thread is preempted in between), and the timers fire on
/// whole milliseconds, so without a lead its CANCELLED would now and then come first.
fn lead(asked: Duration) -> Duration {
    (asked / 10).clamp(Duration::from_millis(1), Duration::from_millis(10))
}

/// The layer giving each call the shorter of its `grpc-timeout` and `longest`, and each server
/// stream of `streams` (full gRPC paths) its `grpc-timeout`.
#[derive(Clone)]
pub struct DeadlineLayer {
    longest: Duration,
    streams: Arc<HashSet<String>>,
}

impl DeadlineLayer {
    pub fn new(longest: Duration, streams: HashSet<String>) -> DeadlineLayer {
        DeadlineLayer {
            longest,
            streams: Arc::new(streams),
        }
    }
}

impl<S> tower::Layer<S> for DeadlineLayer {
    type Service = Deadline<S>;

    fn layer(&self, inner: S) -> Deadline<S> {
        Deadline {
            inner,
            layer: self.clone(),
        }
    }
}

/// [`DeadlineLayer`]'s service.
#[derive(Clone)]
pub struct Deadline<S> {
    inner: S,
    layer: DeadlineLayer,
}

type Response = http::Response<tonic::body::Body>;

impl<S, B> tower::Service<http::Request<B>> for Deadline<S>
where
    S: tower::Service<http::Request<B>, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = DeadlineFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let asked = request
            .headers()
            .get("grpc-timeout")
            .and_then(|value| grpc_timeout(value.as_bytes()));
        let longest = self.layer.longest;
        // The deadline as the client or the server set it, and when this layer answers: ahead of
        // tonic's own timer for the client's (see [`lead`]).
        let deadline = asked.map_or(longest, |asked| asked.min(longest));
        let limit = match asked {
            Some(asked) if asked <= longest => asked.saturating_sub(lead(asked)),
            _ => longest,
        };
        let stream_ends = asked
            .filter(|_| self.layer.streams.contains(request.uri().path()))
            .map(|asked| (Instant::now() + asked, asked));
        DeadlineFuture {
            answer: self.inner.call(request),
            sleep: tokio::time::sleep(limit),
            asked: asked.is_some_and(|asked| asked <= longest),
            deadline,
            stream_ends,
        }
    }
}

pin_project_lite::pin_project! {
    /// A call's answer, or DEADLINE_EXCEEDED once its deadline passes.
    pub struct DeadlineFuture<F> {
        #[pin]
        answer: F,
        #[pin]
        sleep: tokio::time::Sleep,
        // Whether the deadline is the client's (else the server's longest).
        asked: bool,
        deadline: Duration,
        // A stream's deadline, and how long it was: the body ends then.
        stream_ends: Option<(Instant, Duration)>,
    }
}

impl<F, E> Future for DeadlineFuture<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(result) = this.answer.poll(cx) {
            let Some((at, asked)) = *this.stream_ends else {
                return Poll::Ready(result);
            };
            return Poll::Ready(result.map(|response| {
                // A refusal is answered with its status in the headers and no body.
                if response.headers().contains_key("grpc-status") {
                    return response;
                }
                response.map(|body| {
                    tonic::body::Body::new(EndsWhen::new(
                        body,
                        tokio::time::sleep_until(at),
                        move || stream_over(asked),
                    ))
                })
            }));
        }
        ready!(this.sleep.poll(cx));
        Poll::Ready(Ok(exceeded(*this.deadline, *this.asked).into_http()))
    }
}

/// DEADLINE_EXCEEDED `deadline_exceeded` for a deadline of `limit`, the client's when `asked`.
fn exceeded(limit: Duration, asked: bool) -> tonic::Status {
    let whose = if asked {
        "the deadline the call was sent with (grpc-timeout)"
    } else {
        "the server's longest call (server.request_timeout_ms)"
    };
    status::error(
        Reason::DeadlineExceeded,
        format!(
            "the call ran out of time: {} ms, {whose}, passed before it was answered; retry \
             with backoff and the same request_id (a retried command is applied once)",
            limit.as_millis()
        ),
    )
}

/// DEADLINE_EXCEEDED `deadline_exceeded` ending a stream opened with a deadline of `asked`.
fn stream_over(asked: Duration) -> tonic::Status {
    status::error(
        Reason::DeadlineExceeded,
        format!(
            "the stream's deadline passed: it was opened with {} ms (grpc-timeout); open it \
             again to go on (WatchTable from the last version received misses nothing; the \
             other streams start with the state now)",
            asked.as_millis()
        ),
    )
}

/// A `grpc-timeout` header's value (gRPC over HTTP/2: at most 8 digits, then a unit of `H`,
/// `M`, `S`, `m`, `u` or `n`); `None` for anything else, which then counts as not sent.
pub fn grpc_timeout(value: &[u8]) -> Option<Duration> {
    let (&unit, digits) = value.split_last()?;
    if digits.is_empty() || digits.len() > 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let amount: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some(match unit {
        b'H' => Duration::from_secs(amount * 3600),
        b'M' => Duration::from_secs(amount * 60),
        b'S' => Duration::from_secs(amount),
        b'm' => Duration::from_millis(amount),
        b'u' => Duration::from_micros(amount),
        b'n' => Duration::from_nanos(amount),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use tonic::Code;
    use tower::{Layer, ServiceExt};

    use super::*;

    #[test]
    fn grpc_timeout_values() {
        assert_eq!(grpc_timeout(b"100m"), Some(Duration::from_millis(100)));
        assert_eq!(grpc_timeout(b"2S"), Some(Duration::from_secs(2)));
        assert_eq!(grpc_timeout(b"1H"), Some(Duration::from_secs(3600)));
        assert_eq!(grpc_timeout(b"3M"), Some(Duration::from_secs(180)));
        assert_eq!(grpc_timeout(b"5u"), Some(Duration::from_micros(5)));
        assert_eq!(
            grpc_timeout(b"99999999n"),
            Some(Duration::from_nanos(99_999_999))
        );
        for bad in [
            &b""[..],
            b"m",
            b"123456789m",
            b"10x",
            b"-1S",
            b"1.5S",
            b" 1S",
        ] {
            assert_eq!(grpc_timeout(bad), None, "{bad:?}");
        }
    }

    fn slow(
        delay: Duration,
    ) -> impl tower::Service<
        http::Request<()>,
        Response = Response,
        Error = Infallible,
        Future = impl Future<Output = Result<Response, Infallible>> + Send,
    > + Clone {
        tower::service_fn(move |_: http::Request<()>| async move {
            tokio::time::sleep(delay).await;
            Ok::<_, Infallible>(http::Response::new(tonic::body::Body::empty()))
        })
    }

    fn request(timeout: Option<&str>) -> http::Request<()> {
        let mut request = http::Request::new(());
        if let Some(timeout) = timeout {
            request
                .headers_mut()
                .insert("grpc-timeout", timeout.parse().unwrap());
        }
        request
    }

    fn code(response: &Response) -> Option<Code> {
        response
            .headers()
            .get("grpc-status")
            .map(|v| Code::from_bytes(v.as_bytes()))
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_past_its_grpc_timeout_is_deadline_exceeded_with_its_reason() {
        let service = DeadlineLayer::new(Duration::from_secs(30), HashSet::new())
            .layer(slow(Duration::from_secs(5)));
        let started = Instant::now();
        let response = service.oneshot(request(Some("100m"))).await.unwrap();
        assert_eq!(code(&response), Some(Code::DeadlineExceeded));
        // Ahead of tonic's own timer for the same deadline, which would answer CANCELLED.
        assert_eq!(started.elapsed(), Duration::from_millis(90));
        let status = tonic::Status::from_header_map(response.headers()).unwrap();
        assert!(status::is(&status, Reason::DeadlineExceeded), "{status:?}");
        assert!(status.message().contains("100 ms"), "{}", status.message());
    }

    #[tokio::test(start_paused = true)]
    async fn the_servers_longest_bounds_a_longer_or_missing_grpc_timeout() {
        for timeout in [None, Some("1H"), Some("bad")] {
            let service = DeadlineLayer::new(Duration::from_secs(1), HashSet::new())
                .layer(slow(Duration::from_secs(5)));
            let response = service.oneshot(request(timeout)).await.unwrap();
            assert_eq!(code(&response), Some(Code::DeadlineExceeded), "{timeout:?}");
            let status = tonic::Status::from_header_map(response.headers()).unwrap();
            assert!(
                status.message().contains("request_timeout_ms"),
                "{timeout:?}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_answered_in_time_passes_through() {
        let service = DeadlineLayer::new(Duration::from_secs(30), HashSet::new())
            .layer(slow(Duration::from_secs(1)));
        let response = service.oneshot(request(Some("2S"))).await.unwrap();
        assert_eq!(code(&response), None);
    }

    /// A stream's body that never ends by itself.
    struct Endless;

    impl http_body::Body for Endless {
        type Data = tonic::codegen::Bytes;
        type Error = tonic::Status;

        fn poll_frame(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
            Poll::Pending
        }
    }

    const WATCH: &str = "/okey.v1.TableService/WatchTable";

    async fn next_frame(
        body: &mut tonic::body::Body,
    ) -> Option<Result<http_body::Frame<tonic::codegen::Bytes>, tonic::Status>> {
        std::future::poll_fn(|cx| http_body::Body::poll_frame(Pin::new(&mut *body), cx)).await
    }

    fn watch(timeout: Option<&str>) -> (impl Future<Output = Response>, Instant) {
        let streaming = tower::service_fn(|_: http::Request<()>| async {
            Ok::<_, Infallible>(http::Response::new(tonic::body::Body::new(Endless)))
        });
        let service = DeadlineLayer::new(Duration::from_secs(30), HashSet::from([WATCH.into()]))
            .layer(streaming);
        let mut request = request(timeout);
        *request.uri_mut() = WATCH.parse().unwrap();
        let started = Instant::now();
        (
            async move { service.oneshot(request).await.unwrap() },
            started,
        )
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_opened_with_a_grpc_timeout_ends_then_with_deadline_exceeded() {
        let (answer, started) = watch(Some("2S"));
        let mut body = answer.await.into_body();
        assert_eq!(
            started.elapsed(),
            Duration::ZERO,
            "the stream starts at once"
        );
        let frame = tokio::time::timeout(Duration::from_secs(60), next_frame(&mut body))
            .await
            .expect("the stream ended at its deadline")
            .expect("a last frame")
            .unwrap();
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        let trailers = frame.into_trailers().expect("the trailers");
        let status = tonic::Status::from_header_map(&trailers).unwrap();
        assert_eq!(status.code(), Code::DeadlineExceeded);
        assert!(status::is(&status, Reason::DeadlineExceeded), "{status:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_opened_without_one_outlives_the_servers_longest_call() {
        let (answer, _) = watch(None);
        let mut body = answer.await.into_body();
        let waited = tokio::time::timeout(Duration::from_secs(3600), next_frame(&mut body)).await;
        assert!(waited.is_err(), "still open after an hour");
    }
}
