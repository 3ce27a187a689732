//! The gRPC host every service runs in: its API plus health and reflection (which also serves the
//! `google.rpc` error details), every tower layer in one `ServiceBuilder`, health that follows the
//! dependencies, and a graceful stop.
//!
//! Stopping: when the shutdown future resolves (SIGTERM/SIGINT in production), every health status
//! turns NOT_SERVING, the server stops accepting calls and lets in-flight ones finish, and after
//! `server.grace_period_ms` it returns anyway, so the process always exits within the grace period.
//! Server streams do not wait for it: each ends with UNAVAILABLE `server_stopping` once it has
//! sent what it already had ([`crate::streams`]), so the stop takes as long as the slowest unary
//! call, and at most a second more for streams whose clients read nothing.
//! The binaries catch the signals before they connect to anything ([`build_then_serve`]), so one
//! that comes while a service starts stops it cleanly too.
//!
//! Plain HTTP on the same port ([`ServiceHost::with_http`], the table service's replay page for
//! support): requests under the routes' prefix go to their own router before any gRPC layer (no
//! RPC span or duration, no access table: the routes check tokens themselves), everything else
//! is gRPC exactly as without them; HTTP/1.1 is accepted only when a service mounts such routes.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::server::NamedService;
use tonic::service::RoutesBuilder;
use tonic::transport::server::TcpIncoming;
use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

use crate::auth::{AccessTable, AuthLayer, TokenVerifier};
use crate::deadline::DeadlineLayer;
use crate::dependencies::Dependencies;
use crate::settings::ServerSettings;
use crate::status::Reason;
use crate::streams::{CallsInFlight, EndStreamsLayer, streaming_methods};
use crate::telemetry::GrpcServerLayer;

/// Most bytes of request headers (gRPC metadata) a call may carry, as HTTP/2 counts them (each
/// field's name and value plus 32), advertised in the server's SETTINGS. hyper's default is
/// 16 KiB; a larger header block never reaches the service, and h2 answers it with HTTP 431,
/// which gRPC clients report as UNKNOWN. Up to this limit an oversized token or field reaches the
/// service and gets its own precise refusal (`token_invalid` for an `authorization` header no
/// token could fill); the same bound as a request's message (64 KiB). A proxy in front of the
/// services may have a lower one of its own.
pub const MAX_HEADER_LIST_BYTES: u32 = crate::decode::MAX_REQUEST_BYTES as u32;

/// How long the streams ended at a stop have to send their last frames once every unary call has
/// answered; a client that reads its stream gets them in milliseconds.
const STREAMS_FLUSH: Duration = Duration::from_secs(1);

/// Why the server could not start or failed while running.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr} (settings `server.host`, `server.port`): {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The reflection service could not read the descriptor sets.
    #[error("cannot build gRPC reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The transport failed.
    #[error("gRPC server failed: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// Methods the service serves that its access table does not list (a bug of the build).
    #[error("the access table lists no rule for {0:?}: add each to the service's access table")]
    Unlisted(Vec<String>),
}

/// A bound gRPC server with its APIs, not yet serving.
pub struct ServiceHost {
    settings: ServerSettings,
    listener: TcpListener,
    routes: RoutesBuilder,
    api_names: Vec<&'static str>,
    health: HealthReporter,
    auth: Option<AuthLayer>,
    http: Option<HttpRoutes>,
}

impl ServiceHost {
    /// Binds `server.host:server.port` (port 0 picks a free port; see [`Self::local_addr`]).
    pub async fn bind(settings: &ServerSettings) -> Result<Self, ServerError> {
        let addr = SocketAddr::new(settings.host, settings.port);
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServerError::Bind { addr, source })?;
        let (health, health_service) = tonic_health::server::health_reporter();
        let mut routes = RoutesBuilder::default();
        routes.add_service(health_service);
        Ok(ServiceHost {
            settings: settings.clone(),
            listener,
            routes,
            api_names: Vec::new(),
            health,
            auth: None,
            http: None,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// Adds an okey.v1 API. It is advertised by reflection, and its health status follows the
    /// dependencies.
    pub fn add_api<S>(mut self, service: S) -> Self
    where
        S: tower::Service<
                http::Request<tonic::body::Body>,
                Response = http::Response<tonic::body::Body>,
                Error = Infallible,
            > + NamedService
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
        self.routes.add_service(service);
        self.api_names.push(S::NAME);
        self
    }

    /// Mounts the authentication layer: every call is checked against the service's access table
    /// before it reaches a handler. A host without one refuses every call but health and
    /// reflection.
    pub fn with_auth(mut self, auth: AuthLayer) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Serves plain HTTP (1.1 and 2) on the gRPC port: a request whose path is `prefix` or
    /// below `prefix/` goes to `router`, past the gRPC layers, so its handlers check the caller
    /// themselves (with [`AuthLayer::authorize`], against a method of the access table). The
    /// prefix must not be a gRPC service's (`/package.Service`); gRPC calls are untouched. A
    /// request still unanswered after `server.request_timeout_ms` gets 504 with the JSON error
    /// body (`{"error": {"code": 504, "status": "DEADLINE_EXCEEDED", …}}`).
    pub fn with_http(mut self, prefix: &'static str, router: axum::Router) -> Self {
        let timeout = Duration::from_millis(self.settings.request_timeout_ms);
        self.http = Some(HttpRoutes {
            prefix,
            router,
            timeout,
        });
        self
    }

    /// Serves until `shutdown` resolves, then stops gracefully (see the module docs). Health says
    /// SERVING only while every dependency answers its probe.
    pub async fn run_until_stopped(
        mut self,
        dependencies: Dependencies,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        if let Some(auth) = &self.auth {
            let unlisted = auth.unlisted(&self.api_names);
            if !unlisted.is_empty() {
                return Err(ServerError::Unlisted(unlisted));
            }
        }
        self.routes
            .add_service(reflection_builder(&self.api_names).build_v1()?)
            .add_service(reflection_builder(&self.api_names).build_v1alpha()?);

        let mut health_names: Vec<&'static str> = vec![""];
        health_names.extend(&self.api_names);
        set_all(&self.health, &health_names, ServingStatus::NotServing).await;

        let (stopping_tx, stopping_rx) = watch::channel(false);
        // Flipped once health says NOT_SERVING: then the server streams end (`streams`).
        let (streams_end_tx, streams_end_rx) = watch::channel(false);
        let monitor = tokio::spawn(monitor_readiness(
            dependencies,
            self.health.clone(),
            health_names.clone(),
            Duration::from_millis(self.settings.probe_interval_ms),
            stopping_rx.clone(),
        ));

        let health = self.health.clone();
        let signal = async move {
            shutdown.await;
            tracing::info!("shutdown requested: NOT_SERVING, draining in-flight calls");
            let _ = stopping_tx.send(true);
            set_all(&health, &health_names, ServingStatus::NotServing).await;
            let _ = streams_end_tx.send(true);
        };

        let auth = self.auth.take().unwrap_or_else(|| {
            tracing::warn!("no authentication layer mounted: every API call is refused");
            AuthLayer::new(
                TokenVerifier::new(&crate::settings::AuthSettings {
                    issuer: String::new(),
                    audience: String::new(),
                    leeway_secs: 0,
                }),
                AccessTable::new(&[]),
            )
        });
        // Every tower layer of every service, in order: the call's span and duration first, so
        // refusals are traced and timed too, then the call's deadline (DEADLINE_EXCEEDED, where
        // tonic's own timeout would answer CANCELLED), then the error model for requests tonic
        // cannot decode, then authentication.
        let accept_http1 = self.http.is_some();
        let calls = Arc::new(CallsInFlight::default());
        let streams = streaming_methods(&self.api_names);
        let layers = tower::ServiceBuilder::new()
            .layer(HttpBranchLayer(self.http.take()))
            .layer(GrpcServerLayer::default())
            .layer(DeadlineLayer::new(
                Duration::from_millis(self.settings.request_timeout_ms),
                streams.clone(),
            ))
            .map_response(crate::decode::rewrite)
            .layer(EndStreamsLayer::new(streams, streams_end_rx, calls.clone()))
            .layer(auth);

        let addr = self.local_addr();
        tracing::info!(%addr, apis = ?self.api_names, "listening");
        let server = tonic::transport::Server::builder()
            .accept_http1(accept_http1)
            .max_concurrent_streams(self.settings.max_concurrent_streams)
            .http2_max_header_list_size(MAX_HEADER_LIST_BYTES)
            // A client gone without closing (a phone off the network) is found by PINGs it does
            // not answer, so its streams and their per-caller slots are freed.
            .http2_keepalive_interval(Some(Duration::from_millis(
                self.settings.keepalive_interval_ms,
            )))
            .http2_keepalive_timeout(Some(Duration::from_millis(
                self.settings.keepalive_timeout_ms,
            )))
            .layer(layers)
            .add_routes(self.routes.routes())
            .serve_with_incoming_shutdown(
                TcpIncoming::from(self.listener).with_nodelay(Some(true)),
                signal,
            );
        tokio::pin!(server);

        let grace = self.settings.grace_period();
        let mut stopping = stopping_rx;
        let result = tokio::select! {
            result = &mut server => result.map_err(ServerError::from),
            over = async {
                let _ = stopping.wait_for(|stop| *stop).await;
                // Done when every unary call has answered and the streams, told to end, have had
                // a moment to send their last frames: a stream whose client reads nothing would
                // hold the connection, and the stop, until the grace period ends.
                tokio::select! {
                    () = tokio::time::sleep(grace) => true,
                    () = async {
                        calls.none_running().await;
                        tokio::time::sleep(STREAMS_FLUSH).await;
                    } => false,
                }
            } => {
                if over {
                    tracing::warn!(?grace, "grace period over; dropping the calls still running");
                } else {
                    tracing::info!(
                        "every call answered; dropping the connections of streams that did not \
                         take their end"
                    );
                }
                Ok(())
            }
        };
        monitor.abort();
        tracing::info!("stopped");
        result
    }
}

/// A service's plain HTTP routes ([`ServiceHost::with_http`]).
#[derive(Clone)]
struct HttpRoutes {
    prefix: &'static str,
    router: axum::Router,
    /// Longest a request may take (`server.request_timeout_ms`).
    timeout: Duration,
}

impl HttpRoutes {
    fn serves(&self, path: &str) -> bool {
        path.strip_prefix(self.prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }
}

/// The outermost layer: sends a service's HTTP routes to their router, everything else on to
/// the gRPC layers.
#[derive(Clone)]
struct HttpBranchLayer(Option<HttpRoutes>);

impl<S> tower::Layer<S> for HttpBranchLayer {
    type Service = HttpBranch<S>;

    fn layer(&self, inner: S) -> HttpBranch<S> {
        HttpBranch {
            http: self.0.clone(),
            inner,
        }
    }
}

#[derive(Clone)]
struct HttpBranch<S> {
    http: Option<HttpRoutes>,
    inner: S,
}

type BoxedResponse<E> = std::pin::Pin<
    Box<dyn Future<Output = Result<http::Response<tonic::body::Body>, E>> + Send + 'static>,
>;

impl<S, ResBody> tower::Service<http::Request<tonic::body::Body>> for HttpBranch<S>
where
    S: tower::Service<http::Request<tonic::body::Body>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResBody: http_body::Body<Data = tonic::codegen::Bytes> + Send + 'static,
    ResBody::Error: Into<tonic::codegen::StdError>,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = BoxedResponse<S::Error>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        use tower::ServiceExt as _;
        match &self.http {
            Some(http) if http.serves(request.uri().path()) => {
                let router = http.router.clone();
                let timeout = http.timeout;
                Box::pin(async move {
                    match tokio::time::timeout(timeout, router.oneshot(request)).await {
                        Ok(Ok(response)) => Ok(response.map(tonic::body::Body::new)),
                        Err(_) => Ok(http_timed_out(timeout)),
                    }
                })
            }
            _ => {
                let future = self.inner.call(request);
                Box::pin(async move { Ok(future.await?.map(tonic::body::Body::new)) })
            }
        }
    }
}

/// 504 with the JSON error body the plain HTTP routes answer with.
fn http_timed_out(timeout: Duration) -> http::Response<tonic::body::Body> {
    let body = http_error_body(
        504,
        "DEADLINE_EXCEEDED",
        Reason::DeadlineExceeded.as_str(),
        &format!(
            "no answer within {} ms (server.request_timeout_ms): try again later",
            timeout.as_millis()
        ),
    );
    http::Response::builder()
        .status(http::StatusCode::GATEWAY_TIMEOUT)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::CACHE_CONTROL, "no-cache")
        .body(tonic::body::Body::new(axum::body::Body::from(body)))
        .expect("a valid response")
}

/// The JSON error body of the plain HTTP routes ([`ServiceHost::with_http`]): `{"error":
/// {"code": 403, "status": "PERMISSION_DENIED", "reason": "not_in_hand", "message": "..."}}`,
/// `code` the HTTP status, `status` the gRPC code's name, `reason` the `common.proto` reason
/// (empty when none applies).
pub fn http_error_body(code: u16, status: &str, reason: &str, message: &str) -> String {
    #[derive(serde::Serialize)]
    struct ErrorBody<'a> {
        error: ErrorFields<'a>,
    }
    #[derive(serde::Serialize)]
    struct ErrorFields<'a> {
        code: u16,
        status: &'a str,
        reason: &'a str,
        message: &'a str,
    }
    let body = ErrorBody {
        error: ErrorFields {
            code,
            status,
            reason,
            message,
        },
    };
    serde_json::to_string(&body).expect("an error body serializes")
}

fn reflection_builder(api_names: &[&'static str]) -> tonic_reflection::server::Builder<'static> {
    let mut builder = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(okey_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .with_service_name("grpc.health.v1.Health")
        .with_service_name("grpc.reflection.v1.ServerReflection")
        .with_service_name("grpc.reflection.v1alpha.ServerReflection");
    for name in api_names {
        builder = builder.with_service_name(*name);
    }
    builder
}

async fn set_all(health: &HealthReporter, names: &[&'static str], status: ServingStatus) {
    for name in names {
        health.set_service_status(*name, status).await;
    }
}

/// Probes the dependencies every `interval` and keeps the health statuses in step, until the
/// service starts stopping.
async fn monitor_readiness(
    dependencies: Dependencies,
    health: HealthReporter,
    names: Vec<&'static str>,
    interval: Duration,
    stopping: watch::Receiver<bool>,
) {
    let mut was_ready = None;
    loop {
        let readiness = dependencies.probe().await;
        if *stopping.borrow() {
            return;
        }
        let ready = readiness.is_ready();
        if was_ready != Some(ready) {
            if ready {
                tracing::info!("dependencies answer: SERVING");
            } else {
                tracing::warn!(down = ?readiness.down, "dependencies down: NOT_SERVING");
            }
            let status = if ready {
                ServingStatus::Serving
            } else {
                ServingStatus::NotServing
            };
            set_all(&health, &names, status).await;
            was_ready = Some(ready);
        }
        tokio::time::sleep(interval).await;
    }
}

/// A service binary's life after its settings: catches SIGTERM and SIGINT ([`shutdown_signal`])
/// before anything else, builds the service with `build` unless a signal comes first (then it
/// returns at once, `Ok`), and serves it with `serve` until one comes.
pub async fn build_then_serve<A, E, R>(
    build: impl Future<Output = Result<A, E>>,
    serve: impl FnOnce(A, std::pin::Pin<Box<dyn Future<Output = ()> + Send>>) -> R,
) -> Result<(), E>
where
    R: Future<Output = Result<(), E>>,
{
    let mut shutdown: std::pin::Pin<Box<dyn Future<Output = ()> + Send>> =
        Box::pin(shutdown_signal());
    let built = tokio::select! {
        built = build => built?,
        () = &mut shutdown => return Ok(()),
    };
    serve(built, shutdown).await
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C). The handlers are installed when this is called, not
/// when the future is first polled: a signal that arrives after the call (while the service
/// starts, or before the server first polls the future) is kept for the future instead of
/// taking the default action, which would kill the process without a graceful stop. Call it
/// inside the runtime, first thing.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{Signal, SignalKind, signal};
        // If a handler cannot be installed, rely on the other signal alone.
        let mut interrupt = signal(SignalKind::interrupt()).ok();
        let mut terminate = signal(SignalKind::terminate()).ok();
        async fn received(signal: &mut Option<Signal>) {
            match signal {
                Some(signal) => {
                    signal.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
        async move {
            tokio::select! {
                () = received(&mut interrupt) => tracing::info!("SIGINT received"),
                () = received(&mut terminate) => tracing::info!("SIGTERM received"),
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        tracing::info!("Ctrl-C received");
    }
}
