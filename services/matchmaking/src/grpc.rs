//! The `okey.v1.MatchmakingService` API over gRPC: with `tables` (the calls this service makes)
//! and `wire` (the conversions both share), the only module that knows the generated (prost) types. It converts them to domain types by
//! hand, reads the caller the platform's authentication layer verified, and maps
//! [`MatchmakingError`] to `tonic::Status` in one place ([`status_of`]). Requests are never
//! logged: room passwords travel in them.

use std::collections::HashMap;
use std::pin::Pin;

use chrono::{DateTime, Utc};
use okey_platform::Secret;
use okey_platform::auth::Caller;
use okey_platform::status::{self, Reason};
use okey_proto::v1 as pb;
use okey_proto::v1::matchmaking_service_server::MatchmakingService;
use okey_rules::Preset;
use tonic::codegen::tokio_stream::Stream;
use tonic::codegen::tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use uuid::Uuid;

use crate::domain::{MatchmakingError, Room, RoomState, Ticket, TicketState, normalise_code};
use crate::service::{Matchmaking, RoomRequest};
use crate::wire::{
    bot_level_from_proto, bot_level_to_proto, invalid, rules_from_proto, rules_to_proto, timestamp,
};

/// Longest client request id.
const MAX_REQUEST_ID: usize = 64;
/// A room password's length, in characters.
const PASSWORD_CHARS: std::ops::RangeInclusive<usize> = 4..=64;
/// Rooms per lobby page unless asked, and at most.
const DEFAULT_PAGE: i32 = 20;
const MAX_PAGE: i32 = 100;

/// The MatchmakingService implementation.
#[derive(Clone)]
pub struct MatchmakingApi {
    service: Matchmaking,
}

impl MatchmakingApi {
    pub fn new(service: Matchmaking) -> Self {
        MatchmakingApi { service }
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
        e @ MatchmakingError::TicketOpen(open) => status::with_metadata(
            Reason::TicketOpen,
            HashMap::from([("ticket".to_owned(), format!("tickets/{open}"))]),
            e.to_string(),
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
        e @ MatchmakingError::NotRoomMember => precondition(Reason::NotRoomMember, &e),
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

/// The calling player, as the authentication layer verified them.
fn caller<T>(request: &Request<T>) -> Result<Uuid, Status> {
    let caller = request
        .extensions()
        .get::<Caller>()
        .ok_or_else(|| status::error(Reason::TokenInvalid, "no verified caller"))?;
    Uuid::parse_str(&caller.player_id)
        .map_err(|_| status::error(Reason::RoleRequired, "matchmaking is for players"))
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
    if id.is_empty() || id.chars().count() > MAX_REQUEST_ID || id.chars().any(char::is_control) {
        return Err(invalid(
            "request_id",
            Reason::InvalidRequestId,
            "request_id must be 1–64 printable characters",
        ));
    }
    Ok(id)
}

fn resource_id(name: &str, collection: &str, field: &str) -> Result<Uuid, Status> {
    name.strip_prefix(collection)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|id| Uuid::parse_str(id).ok())
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
            .map(|m| match m {
                Some(p) => pb::PlayerSummary {
                    player: format!("players/{p}"),
                    display_name: r.names.get(p).cloned().unwrap_or_default(),
                    avatar_ref: String::new(),
                    bot: false,
                },
                None if bot_seats => pb::PlayerSummary {
                    player: String::new(),
                    display_name: "bot".into(),
                    avatar_ref: String::new(),
                    bot: true,
                },
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
        let r = request.into_inner();
        let id = request_id(&r.request_id)?;
        let rules = rules_from_proto(r.rules.as_ref())?;
        let ticket = self
            .service
            .find_table(
                player,
                id,
                rules,
                r.allow_bots,
                bot_level_from_proto(r.bot_level),
            )
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
        let id = resource_id(&request.get_ref().name, "tickets", "name")?;
        let rx = self
            .service
            .watch_ticket(player, id)
            .await
            .map_err(status_of)?;
        use tonic::codegen::tokio_stream::StreamExt;
        let stream = ReceiverStream::new(rx).map(|t| {
            t.map(|t| pb::WatchTicketResponse {
                ticket: Some(ticket_to_proto(&t)),
            })
            .map_err(status_of)
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
        let rules = rules_from_proto(r.rules.as_ref())?;
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
                    bot_level: bot_level_from_proto(r.bot_level),
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
        request_id(&r.request_id)?;
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
        request_id(&r.request_id)?;
        let id = resource_id(&r.name, "rooms", "name")?;
        self.service
            .leave_room(player, id)
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
        request_id(&r.request_id)?;
        let id = resource_id(&r.name, "rooms", "name")?;
        let member = resource_id(&r.player, "players", "player")?;
        if !(0..4).contains(&r.seat) {
            return Err(invalid("seat", Reason::InvalidSeat, "a seat is 0–3"));
        }
        let room = self
            .service
            .set_room_seat(host, id, member, r.seat as usize)
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
        request_id(&r.request_id)?;
        let id = resource_id(&r.name, "rooms", "name")?;
        let member = resource_id(&r.player, "players", "player")?;
        let room = self
            .service
            .remove_member(host, id, member)
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
        caller(&request)?;
        let r = request.into_inner();
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
            Some(page_token(&r.page_token).ok_or_else(|| {
                invalid(
                    "page_token",
                    Reason::InvalidPageToken,
                    "not a token this server gave",
                )
            })?)
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
                .map(|(room, created)| format!("{}_{}", created.timestamp_micros(), room.room_id))
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

/// Reads a lobby page token: `{created_at µs}_{room id}`.
fn page_token(token: &str) -> Option<(DateTime<Utc>, Uuid)> {
    let (micros, id) = token.split_once('_')?;
    Some((
        DateTime::from_timestamp_micros(micros.parse().ok()?)?,
        Uuid::parse_str(id).ok()?,
    ))
}
