//! Server streams end when the server stops: a stream (WatchTable, WatchTicket, health's Watch …)
//! lasts as long as its client wants, so a graceful stop that waited for them would always wait
//! out `server.grace_period_ms` and then cut them. Instead, once the stop begins, each stream
//! first sends what its handler has already produced, then ends with UNAVAILABLE
//! `server_stopping`, which tells the client to call again (another replica answers; a stream
//! that resumes from a version misses nothing). Unary calls in flight finish as before; the layer
//! counts them ([`CallsInFlight`]), so the host can stop once they are done, without waiting out
//! the grace period for a stream whose client reads nothing (its last frames wait on flow control
//! that never opens).

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};

use futures_util::future::Either;
use http_body::{Body, Frame};
use tokio::sync::{Notify, watch};
use tonic::codegen::Bytes;

use crate::status::{self, Reason};

/// The full gRPC paths (`/okey.v1.TableService/WatchTable`) of the server-streaming methods of
/// `services` in the okey.v1 contract, plus health's Watch.
pub fn streaming_methods(services: &[&str]) -> HashSet<String> {
    let mut paths = HashSet::from(["/grpc.health.v1.Health/Watch".to_owned()]);
    paths.extend(
        okey_proto::methods_of(services)
            .into_iter()
            .filter(|m| m.server_streaming)
            .map(|m| m.path),
    );
    paths
}

/// The calls other than server streams that are running (their handlers have not answered yet).
#[derive(Default)]
pub struct CallsInFlight {
    running: AtomicUsize,
    none_left: Notify,
}

impl CallsInFlight {
    /// Resolves once no call is running (at once when none is).
    pub async fn none_running(&self) {
        loop {
            let notified = self.none_left.notified();
            if self.running.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }

    fn start(self: &Arc<Self>) -> Running {
        self.running.fetch_add(1, Ordering::AcqRel);
        Running(self.clone())
    }
}

/// One call counted in [`CallsInFlight`] until it is dropped (answered, or cancelled).
struct Running(Arc<CallsInFlight>);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.none_left.notify_waiters();
        }
    }
}

pin_project_lite::pin_project! {
    /// A call's future, counted as running until it completes or is dropped.
    pub struct Counted<F> {
        #[pin]
        inner: F,
        running: Running,
    }
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.project().inner.poll(cx)
    }
}

/// The layer that ends the server streams of `paths` once `stopping` turns true, and counts the
/// other calls in `calls`.
#[derive(Clone)]
pub struct EndStreamsLayer {
    paths: Arc<HashSet<String>>,
    stopping: watch::Receiver<bool>,
    calls: Arc<CallsInFlight>,
}

impl EndStreamsLayer {
    pub fn new(
        paths: HashSet<String>,
        stopping: watch::Receiver<bool>,
        calls: Arc<CallsInFlight>,
    ) -> EndStreamsLayer {
        EndStreamsLayer {
            paths: Arc::new(paths),
            stopping,
            calls,
        }
    }
}

impl<S> tower::Layer<S> for EndStreamsLayer {
    type Service = EndStreams<S>;

    fn layer(&self, inner: S) -> EndStreams<S> {
        EndStreams {
            inner,
            layer: self.clone(),
        }
    }
}

/// [`EndStreamsLayer`]'s service.
#[derive(Clone)]
pub struct EndStreams<S> {
    inner: S,
    layer: EndStreamsLayer,
}

type Response = http::Response<tonic::body::Body>;

impl<S, B> tower::Service<http::Request<B>> for EndStreams<S>
where
    S: tower::Service<http::Request<B>, Response = Response>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    /// A unary call's future, counted (no allocation on the hot path); a stream's, boxed.
    type Future = Either<
        Counted<S::Future>,
        Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        if !self.layer.paths.contains(request.uri().path()) {
            let running = self.layer.calls.start();
            return Either::Left(Counted {
                inner: self.inner.call(request),
                running,
            });
        }
        let stopping = self.layer.stopping.clone();
        let answer = self.inner.call(request);
        Either::Right(Box::pin(async move {
            let response = answer.await?;
            // A refusal is answered with its status in the headers and no body: nothing to end.
            if response.headers().contains_key("grpc-status") {
                return Ok(response);
            }
            Ok(response.map(|body| tonic::body::Body::new(until_stopping(body, stopping))))
        }))
    }
}

/// A stream's body that ends with UNAVAILABLE `server_stopping` once the server stops, after
/// the frames its handler has already produced.
fn until_stopping(inner: tonic::body::Body, mut stopping: watch::Receiver<bool>) -> EndsWhen {
    EndsWhen::new(
        inner,
        async move {
            // A closed channel (the host is gone) stops the stream too.
            let _ = stopping.wait_for(|stop| *stop).await;
        },
        || {
            status::error(
                Reason::ServerStopping,
                "the server is stopping: open the stream again, another replica answers \
                 (WatchTable from the last version received misses nothing; the other streams \
                 start with the state now)",
            )
        },
    )
}

/// A stream's body that, once `end` completes, ends with the status `status` makes, after the
/// frames its handler has already produced (the server stopping, the call's deadline).
pub(crate) struct EndsWhen {
    inner: tonic::body::Body,
    end: Pin<Box<dyn Future<Output = ()> + Send>>,
    status: Option<Box<dyn FnOnce() -> tonic::Status + Send>>,
    ended: bool,
}

impl EndsWhen {
    pub(crate) fn new(
        inner: tonic::body::Body,
        end: impl Future<Output = ()> + Send + 'static,
        status: impl FnOnce() -> tonic::Status + Send + 'static,
    ) -> EndsWhen {
        EndsWhen {
            inner,
            end: Box::pin(end),
            status: Some(Box::new(status)),
            ended: false,
        }
    }
}

impl Body for EndsWhen {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if frame.is_trailers() {
                    self.ended = true;
                }
                return Poll::Ready(Some(Ok(frame)));
            }
            Poll::Ready(Some(Err(e))) => {
                self.ended = true;
                return Poll::Ready(Some(Err(e)));
            }
            Poll::Ready(None) => {
                self.ended = true;
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        ready!(self.end.as_mut().poll(cx));
        self.ended = true;
        let Some(status) = self.status.take() else {
            return Poll::Ready(None);
        };
        // The status as trailers: the headers tonic answers a refusal with, less the content
        // type.
        let (mut trailers, ()) = status().into_http::<()>().into_parts();
        trailers.headers.remove(http::header::CONTENT_TYPE);
        Poll::Ready(Some(Ok(Frame::trailers(trailers.headers))))
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contracts_server_streams_and_healths_watch() {
        let paths = streaming_methods(&["okey.v1.TableService", "okey.v1.MatchmakingService"]);
        for path in [
            "/okey.v1.TableService/WatchTable",
            "/okey.v1.TableService/WatchChat",
            "/okey.v1.MatchmakingService/WatchTicket",
            "/okey.v1.MatchmakingService/WatchRoom",
            "/grpc.health.v1.Health/Watch",
        ] {
            assert!(paths.contains(path), "{path}");
        }
        assert!(!paths.contains("/okey.v1.TableService/SubmitCommand"));
        assert_eq!(paths.len(), 5);
    }
}
