//! Support's replay page, over plain HTTP on the gRPC port (`ServiceHost::with_http`): the page
//! itself (HTML, JS and CSS built into the binary, under `/replay/`) and one JSON read,
//! `GET /replay/v1/tables/{id}/hands/{n}` with `Authorization: Bearer <token>`, answering the
//! hand step by step (`okey_table::steps::HandReplay`, computed here by the engine; the page only
//! renders it). The read is GetHandHistory's: the same access-table entry checks the token, the
//! same arguments are refused with the same reasons, and the same service call lets the reader in
//! and audits support's reads. A refusal is the status GetHandHistory would answer, as an HTTP
//! status and a JSON body naming the `common.proto` reason (`docs/replay-page.md`).

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use okey_platform::auth::AuthLayer;
use tonic_types::StatusExt;

use super::*;

/// Where the page lives on the service's port.
pub const PREFIX: &str = "/replay";
/// The gRPC method whose access-table entry the JSON read is checked against.
const READS_AS: &str = "/okey.v1.TableService/GetHandHistory";

const INDEX_HTML: &str = include_str!("../../page/index.html");
const REPLAY_JS: &str = include_str!("../../page/replay.js");
const REPLAY_CSS: &str = include_str!("../../page/replay.css");

/// No script but the page's own, nothing loaded from elsewhere, never framed.
const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; \
     base-uri 'none'";

#[derive(Clone)]
struct Page {
    tables: Tables,
    auth: AuthLayer,
}

/// The page's routes, all under [`PREFIX`]: the tables to read from and the layer whose access
/// table and token verifier the gRPC calls use.
pub fn router(tables: Tables, auth: AuthLayer) -> Router {
    Router::new()
        .route(PREFIX, get(to_page))
        .route(
            "/replay/",
            get(|| asset(INDEX_HTML, "text/html; charset=utf-8")),
        )
        .route(
            "/replay/replay.js",
            get(|| asset(REPLAY_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/replay/replay.css",
            get(|| asset(REPLAY_CSS, "text/css; charset=utf-8")),
        )
        .route("/replay/v1/{*rest}", get(read_hand))
        .fallback(not_found)
        .method_not_allowed_fallback(only_get)
        .with_state(Page { tables, auth })
}

async fn to_page() -> Response {
    (
        StatusCode::PERMANENT_REDIRECT,
        [(header::LOCATION, "/replay/")],
    )
        .into_response()
}

async fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PAGE_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The HTTP status of a gRPC code, as `google/rpc/code.proto` maps them.
fn http_status(code: tonic::Code) -> StatusCode {
    use tonic::Code as C;
    match code {
        C::Ok => StatusCode::OK,
        C::InvalidArgument | C::FailedPrecondition | C::OutOfRange => StatusCode::BAD_REQUEST,
        C::Unauthenticated => StatusCode::UNAUTHORIZED,
        C::PermissionDenied => StatusCode::FORBIDDEN,
        C::NotFound => StatusCode::NOT_FOUND,
        C::AlreadyExists | C::Aborted => StatusCode::CONFLICT,
        C::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        C::Cancelled => StatusCode::from_u16(499).expect("499 is a status code"),
        C::Unimplemented => StatusCode::NOT_IMPLEMENTED,
        C::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        C::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
        C::Unknown | C::Internal | C::DataLoss => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn json(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    // Every rack of a hand: never kept by a cache.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// The JSON error body every plain HTTP route answers with (`http_error_body`): `grpc` is the
/// gRPC code GetHandHistory answers with, by name; `reason` is empty for a path that names no read.
fn refusal(code: StatusCode, grpc: &str, reason: String, message: &str) -> Response {
    json(
        code,
        okey_platform::server::http_error_body(code.as_u16(), grpc, &reason, message),
    )
}

/// The refusal GetHandHistory answers with `status`, in HTTP.
fn refused(status: &Status) -> Response {
    let code = http_status(status.code());
    let reason = status
        .get_error_details()
        .error_info()
        .map(|info| info.reason.clone())
        .unwrap_or_default();
    refusal(code, code_name(status.code()), reason, status.message())
}

/// The gRPC code's name as `google/rpc/code.proto` spells it.
fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code as C;
    match code {
        C::Ok => "OK",
        C::Cancelled => "CANCELLED",
        C::Unknown => "UNKNOWN",
        C::InvalidArgument => "INVALID_ARGUMENT",
        C::DeadlineExceeded => "DEADLINE_EXCEEDED",
        C::NotFound => "NOT_FOUND",
        C::AlreadyExists => "ALREADY_EXISTS",
        C::PermissionDenied => "PERMISSION_DENIED",
        C::ResourceExhausted => "RESOURCE_EXHAUSTED",
        C::FailedPrecondition => "FAILED_PRECONDITION",
        C::Aborted => "ABORTED",
        C::OutOfRange => "OUT_OF_RANGE",
        C::Unimplemented => "UNIMPLEMENTED",
        C::Internal => "INTERNAL",
        C::Unavailable => "UNAVAILABLE",
        C::DataLoss => "DATA_LOSS",
        C::Unauthenticated => "UNAUTHENTICATED",
    }
}

async fn not_found(uri: Uri) -> Response {
    refusal(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        String::new(),
        &format!(
            "nothing at `{}`: the page is {PREFIX}/, a hand {PREFIX}/v1/tables/{{id}}/hands/{{n}}",
            uri.path()
        ),
    )
}

/// Any method but GET (and HEAD) on a path that exists: the JSON error body, not an empty 405.
async fn only_get(method: axum::http::Method, uri: Uri) -> Response {
    let mut answer = refusal(
        StatusCode::METHOD_NOT_ALLOWED,
        "UNIMPLEMENTED",
        String::new(),
        &format!(
            "{method} is not served at `{}`: the page and the hands are read with GET",
            uri.path()
        ),
    );
    answer
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    answer
}

/// `tables/{id}/hands/{n}` of the read's path, as GetHandHistory's `table` and `hand_number`.
fn hand_path(rest: &str) -> Option<(String, &str)> {
    let rest = rest.strip_prefix("tables/")?;
    let (id, hand) = rest.split_once("/hands/")?;
    (!id.contains('/') && !hand.contains('/')).then(|| (format!("tables/{id}"), hand))
}

/// A hand number written in a path: what GetHandHistory's `hand_number` accepts (1 or more,
/// within its 32 bits) in plain digits (no sign, no leading zero: one path a hand), refused
/// with its reason otherwise.
fn hand_text(text: &str) -> Result<u32, Status> {
    let plain = text.bytes().all(|b| b.is_ascii_digit()) && !text.starts_with('0');
    match text.parse::<i32>().ok().filter(|_| plain) {
        Some(n) => hand_number_arg(n),
        None => Err(status::invalid_argument(
            Reason::InvalidHandNumber,
            "hand_number",
            format!("hands are numbered from 1 (a 32-bit number), not `{text}`"),
        )),
    }
}

async fn read_hand(
    axum::extract::State(page): axum::extract::State<Page>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let rest = uri.path().strip_prefix("/replay/v1/").unwrap_or_default();
    let Some((table, hand)) = hand_path(rest) else {
        return not_found(uri).await;
    };
    match hand_replay(&page, &headers, &table, hand).await {
        Ok(body) => json(StatusCode::OK, body),
        Err(status) => refused(&status),
    }
}

/// The hand as JSON, or GetHandHistory's refusal: the token first (the access table's entry for
/// GetHandHistory), then the arguments, then the service's rule (which audits support's reads).
async fn hand_replay(
    page: &Page,
    headers: &HeaderMap,
    table: &str,
    hand: &str,
) -> Result<String, Status> {
    let caller = page
        .auth
        .authorize(READS_AS, headers)?
        .ok_or_else(|| status::error(Reason::TokenInvalid, "no verified caller"))?;
    let id = table_id(table, "table")?;
    let hand = hand_text(hand)?;
    let name = format!("players/{}", caller.player_id);
    let reader = super::history::reader_of(Some(&caller), &name);
    let replay = page
        .tables
        .hand_replay(id, reader, &name, hand)
        .await
        .map_err(status_of)?;
    tracing::info!(table = %id, hand, reader = %name, steps = replay.steps.len(), "replay page read");
    Ok(serde_json::to_string(&replay).expect("a hand replay serializes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_path_names_one_table_and_one_hand() {
        assert_eq!(
            hand_path("tables/abc/hands/3"),
            Some(("tables/abc".to_owned(), "3"))
        );
        for bad in [
            "tables/abc",
            "tables/a/b/hands/3",
            "tables/abc/hands/3/x",
            "abc/hands/3",
        ] {
            assert_eq!(hand_path(bad), None, "{bad}");
        }
        assert_eq!(hand_text("2").unwrap(), 2);
        assert_eq!(hand_text("10").unwrap(), 10);
        for bad in ["0", "-1", "99999999999999", "x", "", "+1", "01", " 1"] {
            assert_eq!(
                hand_text(bad).unwrap_err().code(),
                tonic::Code::InvalidArgument,
                "{bad}"
            );
        }
        assert_eq!(http_status(tonic::Code::FailedPrecondition), 400);
        assert_eq!(http_status(tonic::Code::PermissionDenied), 403);
        assert_eq!(http_status(tonic::Code::Unauthenticated), 401);
    }
}
