//! The `okey.v1.MatchmakingService` API over gRPC: with `tables` (the calls this service makes)
//! and `wire` (the conversions both share), the only module that knows the generated (prost) types. It converts them to domain types by
//! hand, reads the caller the platform's authentication layer verified, and maps
//! [`MatchmakingError`] to `tonic::Status` in one place ([`status_of`]). Requests are never
//! logged: room passwords travel in them.
//!
//! Every handler checks its request before anything else: the `request_id` of a command
//! ([`fields::request_id`]), then every string field ([`fields::text`]: no NUL, `invalid_text`),
//! then the rest. The reasons it sends are those of matchmaking.proto's table (a test below holds
//! the table to this crate's code).

use std::pin::Pin;

use chrono::{DateTime, Utc};
use okey_platform::Secret;
use okey_platform::auth::Caller;
use okey_platform::fields;
use okey_platform::occupant::{bot_summary, player_summary};
use okey_platform::page_token::PageTokens;
use okey_platform::status::{self, Reason};
use okey_proto::v1 as pb;
use okey_proto::v1::matchmaking_service_server::MatchmakingService;
use okey_rules::Preset;
use tonic::codegen::tokio_stream::Stream;
use tonic::codegen::tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use tonic_types::StatusExt;
use uuid::Uuid;

use crate::domain::{MatchmakingError, Room, RoomState, Ticket, TicketState, normalise_code};
use crate::service::{Matchmaking, RoomRequest};
use crate::wire::{
    bot_level_from_proto, bot_level_to_proto, invalid, rules_from_proto, rules_to_proto, timestamp,
};

/// A room password's length, in characters.
const PASSWORD_CHARS: std::ops::RangeInclusive<usize> = 4..=64;
/// Rooms per lobby page unless asked, and at most.
const DEFAULT_PAGE: i32 = 20;
const MAX_PAGE: i32 = 100;

/// The MatchmakingService implementation.
#[derive(Clone)]
pub struct MatchmakingApi {
    service: Matchmaking,
    /// Seals the lobby's page tokens.
    tokens: PageTokens,
}

impl MatchmakingApi {
    pub fn new(service: Matchmaking, tokens: PageTokens) -> Self {
        MatchmakingApi { service, tokens }
    }
}

/// The one mapping from domain errors to statuses (see matchmaking.proto's table of reasons).
pub fn status_of(error: MatchmakingError) -> Status {
    let precondition =
        |r: Reason, e: &MatchmakingError| status::rule_violation(r, r.as_str(), e.to_string());
    match error {
        e @ MatchmakingError::TicketNotFound => {
            status::error(Reason::TicketNotFound, e.to_string())
        }
        e @ MatchmakingError::TicketOpen(open) => with_metadata(
            precondition(Reason::TicketOpen, &e),
            [("ticket", format!("tickets/{open}"))],
        ),
        e @ MatchmakingError::TicketClosed => precondition(Reason::TicketClosed, &e),
        e @ MatchmakingError::RoomNotFound => status::error(Reason::RoomNotFound, e.to_string()),
        e @ MatchmakingError::WrongPassword => {
            status::error(Reason::WrongRoomPassword, e.to_string())
        }
        e @ MatchmakingError::TooManyAttempts { retry_after } => {
            status::retry_after(Reason::TooManyAttempts, retry_after, e.to_string())
        }
        e @ MatchmakingError::RoomFull => precondition(Reason::RoomFull, &e),
        e @ MatchmakingError::RoomStarted => precondition(Reason::RoomStarted, &e),
        e @ MatchmakingError::RoomClosed => precondition(Reason::RoomClosed, &e),
        e @ MatchmakingError::RoomNotFull => precondition(Reason::RoomNotFull, &e),
        e @ MatchmakingError::NotRoomHost => status::error(Reason::NotRoomHost, e.to_string()),
        e @ (MatchmakingError::NotRoomMember | MatchmakingError::HostNotRemovable) => {
            precondition(Reason::NotRoomMember, &e)
        }
        MatchmakingError::Invalid {
            field,
            reason,
            message,
        } => status::invalid_argument(reason, &field, message),
        e @ (MatchmakingError::Database(_)
        | MatchmakingError::Redis(_)
        | MatchmakingError::Tables(_)) => {
            tracing::warn!(error = %e, "dependency failed");
            status::retry_after(
                Reason::DependencyUnavailable,
                std::time::Duration::from_secs(1),
                "a dependency of the matchmaking service is unavailable; retry with the same request_id",
            )
        }
        e @ MatchmakingError::Internal(_) => {
            tracing::error!(error = %e, "internal error");
            status::internal()
        }
    }
}

/// `status` with `extra` added to its ErrorInfo metadata (its other details kept).
fn with_metadata<const N: usize>(status: Status, extra: [(&str, String); N]) -> Status {
    let mut details = status.get_error_details();
    let Some(info) = details.error_info() else {
        return status;
    };
    let mut metadata = info.metadata.clone();
    metadata.extend(extra.map(|(k, v)| (k.to_owned(), v)));
    let reason = info.reason.clone();
    let domain = info.domain.clone();
    details.set_error_info(reason, domain, metadata);
    let (code, message) = (status.code(), status.message().to_owned());
    Status::with_error_details(code, message, details)
}

/// The calling player, as the authentication layer verified them.
fn caller<T>(request: &Request<T>) -> Result<Uuid, Status> {
    let caller = request
        .extensions()
        .get::<Caller>()
        .ok_or_else(|| status::error(Reason::TokenInvalid, "no verified caller"))?;
    caller.account()
}

/// The display name the caller's token carries (accounts checked it when it signed the token);
/// empty when it carries none: never the player id.
fn caller_name<T>(request: &Request<T>) -> String {
    request
        .extensions()
        .get::<Caller>()
        .and_then(|c| c.name.clone())
        .unwrap_or_default()
}

fn request_id(id: &str) -> Result<&str, Status> {
    fields::request_id(id)
}

/// The string fields of a request (named as the request names them): text the service can keep,
/// no NUL ([`fields::text`]: `invalid_text`).
fn texts(fields: &[(&str, &str)]) -> Result<(), Status> {
    fields
        .iter()
        .try_for_each(|(field, value)| fields::text(field, value).map(drop))
}

/// `rules.preset`, the one string field of a `RuleSet`.
fn preset_text(rules: Option<&pb::RuleSet>) -> &str {
    rules.map_or("", |r| r.preset.as_str())
}

fn resource_id(name: &str, collection: &str, field: &str) -> Result<Uuid, Status> {
    name.strip_prefix(collection)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(fields::name_id)
        .ok_or_else(|| {
            invalid(
                field,
                if name.is_empty() {
                    Reason::MissingField
                } else {
                    Reason::InvalidName
                },
                format!("expected `{collection}/{{id}}`"),
            )
        })
}

fn ticket_to_proto(t: &Ticket) -> pb::Ticket {
    let matched = t.state == TicketState::Matched;
    pb::Ticket {
        name: format!("tickets/{}", t.ticket_id),
        state: match t.state {
            TicketState::Searching => pb::TicketState::Searching,
            TicketState::Matched => pb::TicketState::Matched,
            TicketState::Cancelled => pb::TicketState::Cancelled,
            TicketState::Expired => pb::TicketState::Expired,
        } as i32,
        rules: Some(rules_to_proto(&t.rules)),
        table: if matched {
            t.table.clone().unwrap_or_default()
        } else {
            String::new()
        },
        seat: if matched { t.seat.unwrap_or(0) } else { 0 },
        create_time: Some(timestamp(t.created_at)),
        expire_time: Some(timestamp(t.expires_at)),
        players_found: t.players_found,
        allow_bots: t.allow_bots,
        bot_level: bot_level_to_proto(t.bot_level) as i32,
    }
}

fn room_to_proto(r: &Room) -> pb::Room {
    let bot_seats = r.state == RoomState::Started && r.fill_with_bots;
    pb::Room {
        name: format!("rooms/{}", r.room_id),
        code: r.code.clone(),
        rules: Some(rules_to_proto(&r.rules)),
        host: format!("players/{}", r.host),
        members: r
            .members
            .iter()
            .zip(0..)
            .map(|(m, seat)| match m {
                Some(p) => {
                    player_summary(&format!("players/{p}"), r.names.get(p).map(String::as_str))
                }
                // The bot the room's table seated there (`StartRoom` asks for one of the room's
                // level in every free seat), as the table shows it.
                None if bot_seats => bot_summary(bot_level_to_proto(r.bot_level), seat),
                None => pb::PlayerSummary::default(),
            })
            .collect(),
        state: match r.state {
            RoomState::Open => pb::RoomState::Open,
            RoomState::Started => pb::RoomState::Started,
            RoomState::Closed => pb::RoomState::Closed,
        } as i32,
        fill_with_bots: r.fill_with_bots,
        bot_level: bot_level_to_proto(r.bot_level) as i32,
        table: r.table.clone().unwrap_or_default(),
        expire_time: Some(timestamp(r.expires_at)),
        has_password: r.has_password,
        public: r.public,
        spectators_allowed: r.spectators_allowed,
        free_seats: if r.state == RoomState::Open {
            r.free_seats() as i32
        } else {
            0
        },
    }
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

#[tonic::async_trait]
impl MatchmakingService for MatchmakingApi {
    async fn find_table(
        &self,
        request: Request<pb::FindTableRequest>,
    ) -> Result<Response<pb::FindTableResponse>, Status> {
        let player = caller(&request)?;
        let name = caller_name(&request);
        let r = request.into_inner();
        let id = request_id(&r.request_id)?;
        texts(&[("rules.preset", preset_text(r.rules.as_ref()))])?;
        let rules = rules_from_proto(r.rules.as_ref())?;
        let bot_level = bot_level_from_proto(r.bot_level, "bot_level")?;
        let ticket = self
            .service
            .find_table(player, &name, id, rules, r.allow_bots, bot_level)
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::FindTableResponse {
            ticket: Some(ticket_to_proto(&ticket)),
        }))
    }

    async fn get_ticket(
        &self,
        request: Request<pb::GetTicketRequest>,
    ) -> Result<Response<pb::GetTicketResponse>, Status> {
        let player = caller(&request)?;
        texts(&[("name", &request.get_ref().name)])?;
        let id = resource_id(&request.get_ref().name, "tickets", "name")?;
        let ticket = self.service.ticket(player, id).await.map_err(status_of)?;
        Ok(Response::new(pb::GetTicketResponse {
            ticket: Some(ticket_to_proto(&ticket)),
        }))
    }

    type WatchTicketStream = BoxStream<pb::WatchTicketResponse>;

    async fn watch_ticket(
        &self,
        request: Request<pb::WatchTicketRequest>,
    ) -> Result<Response<Self::WatchTicketStream>, Status> {
        let player = caller(&request)?;
        texts(&[("name", &request.get_ref().name)])?;
        let id = resource_id(&request.get_ref().name, "tickets", "name")?;
        let rx = self
            .service
            .watch_ticket(player, id)
            .await
            .map_err(status_of)?;
        use tonic::codegen::tokio_stream::StreamExt;
        // A change of the ticket's stored state that its wire form does not show (the server
        // taking its group into a table) sends nothing: each message shows a change.
        let mut last: Option<pb::Ticket> = None;
        let stream = ReceiverStream::new(rx).filter_map(move |t| match t {
            Ok(t) => {
                let ticket = ticket_to_proto(&t);
                if last.as_ref() == Some(&ticket) {
                    return None;
                }
                last = Some(ticket.clone());
                Some(Ok(pb::WatchTicketResponse {
                    ticket: Some(ticket),
                }))
            }
            Err(e) => Some(Err(status_of(e))),
        });
        Ok(Response::new(Box::pin(stream)))
    }

    async fn cancel_ticket(
        &self,
        request: Request<pb::CancelTicketRequest>,
    ) -> Result<Response<pb::CancelTicketResponse>, Status> {
        let player = caller(&request)?;
        let r = request.into_inner();
        request_id(&r.request_id)?;
        texts(&[("name", &r.name)])?;
        let id = resource_id(&r.name, "tickets", "name")?;
        let ticket = self
            .service
            .cancel_ticket(player, id)
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::CancelTicketResponse {
            ticket: Some(ticket_to_proto(&ticket)),
        }))
    }

    async fn create_room(
        &self,
        request: Request<pb::CreateRoomRequest>,
    ) -> Result<Response<pb::CreateRoomResponse>, Status> {
        let host = caller(&request)?;
        let name = caller_name(&request);
        let r = request.into_inner();
        let id = request_id(&r.request_id)?;
        texts(&[
            ("rules.preset", preset_text(r.rules.as_ref())),
            ("password", &r.password),
        ])?;
        let rules = rules_from_proto(r.rules.as_ref())?;
        let bot_level = bot_level_from_proto(r.bot_level, "bot_level")?;
        if !r.password.is_empty() && !PASSWORD_CHARS.contains(&r.password.chars().count()) {
            return Err(invalid(
                "password",
                Reason::InvalidPassword,
                "a room password has 4–64 characters (or none)",
            ));
        }
        let room = self
            .service
            .create_room(
                host,
                &name,
                id,
                RoomRequest {
                    rules,
                    fill_with_bots: r.fill_with_bots,
                    bot_level,
                    password: Secret::new(r.password),
                    public: r.public,
                    spectators_allowed: r.spectators_allowed,
                },
            )
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::CreateRoomResponse {
            room: Some(room_to_proto(&room)),
        }))
    }

    async fn join_room(
        &self,
        request: Request<pb::JoinRoomRequest>,
    ) -> Result<Response<pb::JoinRoomResponse>, Status> {
        let player = caller(&request)?;
        let name = caller_name(&request);
        let r = request.into_inner();
        let id = request_id(&r.request_id)?;
        texts(&[("code", &r.code), ("password", &r.password)])?;
        if r.code.trim().is_empty() {
            return Err(invalid(
                "code",
                Reason::MissingField,
                "give the room's code",
            ));
        }
        // A code that cannot be one counts as a wrong guess (the service says room_not_found).
        let (room, seat) = self
            .service
            .join_room(
                player,
                &name,
                id,
                normalise_code(&r.code),
                Secret::new(r.password),
            )
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::JoinRoomResponse {
            room: Some(room_to_proto(&room)),
            seat: seat as i32,
        }))
    }

    async fn get_room(
        &self,
        request: Request<pb::GetRoomRequest>,
    ) -> Result<Response<pb::GetRoomResponse>, Status> {
        let player = caller(&request)?;
        texts(&[("name", &request.get_ref().name)])?;
        let id = resource_id(&request.get_ref().name, "rooms", "name")?;
        let room = self.service.room(player, id).await.map_err(status_of)?;
        Ok(Response::new(pb::GetRoomResponse {
            room: Some(room_to_proto(&room)),
        }))
    }

    async fn leave_room(
        &self,
        request: Request<pb::LeaveRoomRequest>,
    ) -> Result<Response<pb::LeaveRoomResponse>, Status> {
        let player = caller(&request)?;
        let r = request.into_inner();
        let request = request_id(&r.request_id)?;
        texts(&[("name", &r.name)])?;
        let id = resource_id(&r.name, "rooms", "name")?;
        self.service
            .leave_room(player, request, id)
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::LeaveRoomResponse {}))
    }

    async fn start_room(
        &self,
        request: Request<pb::StartRoomRequest>,
    ) -> Result<Response<pb::StartRoomResponse>, Status> {
        let host = caller(&request)?;
        let r = request.into_inner();
        request_id(&r.request_id)?;
        texts(&[("name", &r.name)])?;
        let id = resource_id(&r.name, "rooms", "name")?;
        let room = self.service.start_room(host, id).await.map_err(status_of)?;
        Ok(Response::new(pb::StartRoomResponse {
            room: Some(room_to_proto(&room)),
        }))
    }

    type WatchRoomStream = BoxStream<pb::WatchRoomResponse>;

    async fn watch_room(
        &self,
        request: Request<pb::WatchRoomRequest>,
    ) -> Result<Response<Self::WatchRoomStream>, Status> {
        let player = caller(&request)?;
        texts(&[("name", &request.get_ref().name)])?;
        let id = resource_id(&request.get_ref().name, "rooms", "name")?;
        let rx = self
            .service
            .watch_room(player, id)
            .await
            .map_err(status_of)?;
        use tonic::codegen::tokio_stream::StreamExt;
        let stream = ReceiverStream::new(rx).map(|r| {
            r.map(|r| pb::WatchRoomResponse {
                room: Some(room_to_proto(&r)),
            })
            .map_err(status_of)
        });
        Ok(Response::new(Box::pin(stream)))
    }

    async fn set_room_seat(
        &self,
        request: Request<pb::SetRoomSeatRequest>,
    ) -> Result<Response<pb::SetRoomSeatResponse>, Status> {
        let host = caller(&request)?;
        let r = request.into_inner();
        let request = request_id(&r.request_id)?;
        texts(&[("name", &r.name), ("player", &r.player)])?;
        let id = resource_id(&r.name, "rooms", "name")?;
        let member = resource_id(&r.player, "players", "player")?;
        if !(0..4).contains(&r.seat) {
            return Err(invalid("seat", Reason::InvalidSeat, "a seat is 0–3"));
        }
        let room = self
            .service
            .set_room_seat(host, request, id, member, r.seat as usize)
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::SetRoomSeatResponse {
            room: Some(room_to_proto(&room)),
        }))
    }

    async fn remove_room_member(
        &self,
        request: Request<pb::RemoveRoomMemberRequest>,
    ) -> Result<Response<pb::RemoveRoomMemberResponse>, Status> {
        let host = caller(&request)?;
        let r = request.into_inner();
        let request = request_id(&r.request_id)?;
        texts(&[("name", &r.name), ("player", &r.player)])?;
        let id = resource_id(&r.name, "rooms", "name")?;
        let member = resource_id(&r.player, "players", "player")?;
        let room = self
            .service
            .remove_member(host, request, id, member)
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::RemoveRoomMemberResponse {
            room: Some(room_to_proto(&room)),
        }))
    }

    async fn list_rooms(
        &self,
        request: Request<pb::ListRoomsRequest>,
    ) -> Result<Response<pb::ListRoomsResponse>, Status> {
        // A public listing: any person the access table admits, an account or not (staff).
        let r = request.into_inner();
        texts(&[("page_token", &r.page_token), ("preset", &r.preset)])?;
        if !(0..=MAX_PAGE).contains(&r.page_size) {
            return Err(invalid(
                "page_size",
                Reason::InvalidPageSize,
                "page_size is 0–100",
            ));
        }
        let size = if r.page_size == 0 {
            DEFAULT_PAGE
        } else {
            r.page_size
        };
        let preset = if r.preset.is_empty() {
            None
        } else {
            Some(
                Preset::parse(&r.preset)
                    .ok_or_else(|| invalid("preset", Reason::InvalidRules, "unknown preset"))?
                    .name(),
            )
        };
        let after = if r.page_token.is_empty() {
            None
        } else {
            Some(
                page_token(&self.tokens, &r.page_token, preset).ok_or_else(|| {
                    invalid(
                        "page_token",
                        Reason::InvalidPageToken,
                        "not a token this server gave",
                    )
                })?,
            )
        };
        let mut rooms = self
            .service
            .lobby(preset, after, i64::from(size) + 1)
            .await
            .map_err(status_of)?;
        let next = if rooms.len() > size as usize {
            rooms.truncate(size as usize);
            rooms
                .last()
                .map(|(room, created)| lobby_token(&self.tokens, preset, *created, room.room_id))
                .unwrap_or_default()
        } else {
            String::new()
        };
        Ok(Response::new(pb::ListRoomsResponse {
            rooms: rooms.iter().map(|(r, _)| room_to_proto(r)).collect(),
            next_page_token: next,
        }))
    }

    async fn list_presets(
        &self,
        _request: Request<pb::ListPresetsRequest>,
    ) -> Result<Response<pb::ListPresetsResponse>, Status> {
        Ok(Response::new(pb::ListPresetsResponse {
            presets: Preset::ALL
                .iter()
                .map(|p| pb::RulePreset {
                    name: p.name().to_owned(),
                    seed: p.seed().to_owned(),
                    rules: Some(rules_to_proto(&p.rules())),
                })
                .collect(),
        }))
    }
}

/// A lobby page token: the preset filter (`-` for all) and the last room served
/// (`{created_at µs}_{room id}`), sealed ([`PageTokens`]), so it continues that listing only and
/// cannot be altered or written by hand.
fn lobby_token(
    tokens: &PageTokens,
    preset: Option<&str>,
    created: DateTime<Utc>,
    room: Uuid,
) -> String {
    let position = format!(
        "{}{}_{room}",
        lobby_prefix(preset),
        created.timestamp_micros()
    );
    tokens.seal(position.as_bytes())
}

/// What a lobby token's position holds before the last room.
fn lobby_prefix(preset: Option<&str>) -> String {
    format!("rooms/{}/after/", preset.unwrap_or("-"))
}

/// Reads a lobby page token [`lobby_token`] gave for this preset filter; `None` for anything
/// else. Rooms are created after the epoch: an earlier time is not a token this server gave (and
/// PostgreSQL cannot hold every one of them).
fn page_token(
    tokens: &PageTokens,
    token: &str,
    preset: Option<&str>,
) -> Option<(DateTime<Utc>, Uuid)> {
    let position = String::from_utf8(tokens.open(token)?).ok()?;
    let (micros, id) = position
        .strip_prefix(&lobby_prefix(preset))?
        .split_once('_')?;
    let micros = micros.parse::<i64>().ok().filter(|m| *m >= 0)?;
    Some((
        DateTime::from_timestamp_micros(micros)?,
        Uuid::parse_str(id).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use tonic::Code;

    use super::*;

    /// This crate's source, where every reason it sends is named (`Reason::…`).
    const SOURCES: &[&str] = &[
        include_str!("clock.rs"),
        include_str!("domain.rs"),
        include_str!("grpc.rs"),
        include_str!("lib.rs"),
        include_str!("limiter.rs"),
        include_str!("main.rs"),
        include_str!("matcher.rs"),
        include_str!("notices.rs"),
        include_str!("ratings.rs"),
        include_str!("service.rs"),
        include_str!("settings.rs"),
        include_str!("startup.rs"),
        include_str!("store.rs"),
        include_str!("tables.rs"),
        include_str!("wire.rs"),
    ];

    /// What the platform sends on this service's behalf: the authentication layer, the decoder
    /// layer (and its 64 KiB limit), `fields`, the rule-set conversion and `Caller::account` (a
    /// staff token without a player account).
    const PLATFORM: &[Reason] = &[
        Reason::TokenInvalid,
        Reason::TokenExpired,
        Reason::RoleRequired,
        Reason::PlayerNotFound,
        Reason::RequestTooLarge,
        Reason::MalformedRequest,
        Reason::InvalidText,
        Reason::InvalidRequestId,
        Reason::InvalidRules,
        Reason::Internal,
    ];

    fn code_name(code: Code) -> String {
        let mut name = String::new();
        for (i, c) in format!("{code:?}").chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                name.push('_');
            }
            name.push(c.to_ascii_uppercase());
        }
        name
    }

    /// matchmaking.proto's table of reasons: reason → the code its row gives.
    fn proto_table() -> BTreeMap<String, String> {
        let proto = include_str!("../../../proto/okey/v1/matchmaking.proto");
        let mut table = BTreeMap::new();
        for line in proto.lines() {
            let Some(row) = line.strip_prefix("// | `") else {
                continue;
            };
            let row = format!("`{row}");
            let cells: Vec<&str> = row.split(" | ").map(str::trim).collect();
            for reason in cells[0].split(", ") {
                table.insert(reason.trim_matches('`').to_owned(), cells[1].to_owned());
            }
        }
        table
    }

    #[test]
    fn matchmaking_proto_lists_every_reason_the_service_sends_with_its_code() {
        let mut sent: BTreeSet<&str> = PLATFORM.iter().map(|r| r.as_str()).collect();
        for source in SOURCES {
            for (at, _) in source.match_indices("Reason::") {
                let name: String = source[at + "Reason::".len()..]
                    .chars()
                    .take_while(char::is_ascii_alphanumeric)
                    .collect();
                if name == "ALL" || name.is_empty() {
                    continue;
                }
                let reason = Reason::ALL
                    .iter()
                    .find(|r| format!("{r:?}") == name)
                    .unwrap_or_else(|| panic!("Reason::{name} is no reason"));
                sent.insert(reason.as_str());
            }
        }
        let table = proto_table();
        for reason in &sent {
            let listed = table
                .get(*reason)
                .unwrap_or_else(|| panic!("`{reason}` is sent but not in matchmaking.proto"));
            let code = Reason::ALL.iter().find(|r| r.as_str() == *reason).unwrap();
            assert_eq!(*listed, code_name(code.code()), "`{reason}`");
        }
        let listed: BTreeSet<&str> = table.keys().map(String::as_str).collect();
        let extra: Vec<_> = listed.difference(&sent).collect();
        assert!(extra.is_empty(), "listed but never sent: {extra:?}");
    }

    #[test]
    fn ticket_open_carries_precondition_failure_and_the_open_ticket() {
        let open = Uuid::new_v4();
        let status = status_of(MatchmakingError::TicketOpen(open));
        assert_eq!(status.code(), Code::FailedPrecondition);
        let details = status.get_error_details();
        let info = details.error_info().expect("ErrorInfo");
        assert_eq!(info.reason, "ticket_open");
        assert_eq!(info.metadata["ticket"], format!("tickets/{open}"));
        let failure = details.precondition_failure().expect("PreconditionFailure");
        assert_eq!(failure.violations[0].r#type, "rule");
        assert_eq!(failure.violations[0].subject, "ticket_open");
    }

    #[test]
    fn naming_the_host_for_removal_is_a_failed_precondition() {
        let status = status_of(MatchmakingError::HostNotRemovable);
        assert_eq!(status.code(), Code::FailedPrecondition);
        let details = status.get_error_details();
        assert_eq!(details.error_info().unwrap().reason, "not_room_member");
        assert!(details.precondition_failure().is_some());
    }

    #[test]
    fn lobby_page_tokens_continue_their_listing_and_hold_a_time_after_the_epoch() {
        let tokens = PageTokens::with_key([5; 32]);
        let room = Uuid::new_v4();
        let created = DateTime::from_timestamp_micros(1_796_227_200_000_000).unwrap();
        let given = lobby_token(&tokens, Some("classic"), created, room);
        assert_eq!(
            page_token(&tokens, &given, Some("classic")),
            Some((created, room))
        );
        // Another filter's listing, another key, the unsealed form, an altered token.
        assert_eq!(page_token(&tokens, &given, None), None);
        assert_eq!(page_token(&tokens, &given, Some("yudum")), None);
        assert_eq!(
            page_token(&PageTokens::with_key([6; 32]), &given, Some("classic")),
            None
        );
        assert_eq!(
            page_token(&tokens, &format!("1796227200000000_{room}"), None),
            None
        );
        assert_eq!(
            page_token(&tokens, &format!("{given}A"), Some("classic")),
            None
        );
        // Sealed, but not a time this server gives: -100000-01-01 (chrono holds it, PostgreSQL
        // does not; no room was created then), before the epoch, past chrono's range, no uuid.
        for bad in [
            format!("-3217862419200000000_{room}"),
            format!("-1_{room}"),
            format!("{}_{room}", i64::MAX),
            "12_x".to_owned(),
        ] {
            let sealed = tokens.seal(format!("rooms/-/after/{bad}").as_bytes());
            assert_eq!(page_token(&tokens, &sealed, None), None, "{bad}");
        }
    }
}
