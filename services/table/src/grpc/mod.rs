//! The `okey.v1.TableService` API over gRPC: the transport, and the only module of this service
//! that knows the generated (prost) types. `request` reads the caller and the fields into domain
//! types, `response` writes answers back, `errors` is the one mapping from errors to
//! `tonic::Status`; the handlers are grouped by what they do: `seats`, `play`, `views`, `chat`,
//! `history` (a hand's full history and the audit log of support's reads), and `page`: support's
//! replay page, the same read over plain HTTP with a JSON answer. Every call first has its
//! request's string fields checked (`texts`: no NUL, `invalid_text`), before its handler reads
//! any field.

mod chat;
mod errors;
mod history;
mod page;
mod play;
mod request;
mod response;
mod seats;
mod texts;
mod views;

use std::pin::Pin;

use okey_platform::auth::Caller;
use okey_platform::fields;
use okey_platform::page_token::PageTokens;
use okey_platform::rule_set::rules_from_proto;
use okey_platform::status::{self, Reason};
use okey_proto::v1 as pb;
use okey_proto::v1::table_service_server::TableService;
use sqlx::types::Uuid;
use sqlx::types::chrono::Utc;
use tonic::codegen::tokio_stream::Stream;
use tonic::codegen::tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::chat::{Chat, SeatNow};
use crate::domain::{TableCommand, TableError};
use crate::presence::{Presence, Presences, Seen};
use crate::service::{Freshness, Outcome, ServiceError, Submission, Summary, Tables, Update};
use errors::{Failure, status_of};
use request::*;
use response::*;
use texts::Texts;

pub use page::{PREFIX as REPLAY_PAGE, router as replay_page};
pub use request::command_from_proto;
pub use response::{command_to_proto, event_to_proto};

/// Largest command request accepted (bytes, encoded). A real command is far smaller.
pub const MAX_COMMAND_BYTES: usize = 4 * 1024;
/// Largest message the server decodes at all.
pub const MAX_MESSAGE_BYTES: usize = okey_platform::MAX_REQUEST_BYTES;

/// Open WatchTable and WatchChat streams per caller in this process, and the most one caller
/// may hold (`live.max_streams_per_caller`): a signed-in client cannot tie up the process with
/// streams.
#[derive(Clone)]
pub struct StreamSlots {
    open: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, u64>>>,
    max: u64,
}

/// One open stream of a caller; frees its slot when the stream is dropped.
pub struct StreamSlot {
    open: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, u64>>>,
    caller: String,
}

impl StreamSlots {
    pub fn new(max: u64) -> StreamSlots {
        StreamSlots {
            open: std::sync::Arc::default(),
            max: max.max(1),
        }
    }

    /// A slot for one more stream of `caller`, or RESOURCE_EXHAUSTED `too_many_streams` with
    /// RetryInfo.
    pub fn take(&self, caller: &str) -> Result<StreamSlot, Status> {
        let mut open = self.open.lock().expect("stream slots lock");
        let n = open.entry(caller.to_owned()).or_insert(0);
        if *n >= self.max {
            return Err(status_of(Failure::TooManyStreams { max: self.max }));
        }
        *n += 1;
        Ok(StreamSlot {
            open: self.open.clone(),
            caller: caller.to_owned(),
        })
    }

    /// Streams `caller` holds open now.
    pub fn open(&self, caller: &str) -> u64 {
        let open = self.open.lock().expect("stream slots lock");
        open.get(caller).copied().unwrap_or(0)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.open.lock().expect("stream slots lock");
        if let Some(n) = open.get_mut(&self.caller) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.caller);
            }
        }
    }
}

/// The TableService implementation.
#[derive(Clone)]
pub struct TableApi {
    tables: Tables,
    live: Option<(Presences, Chat)>,
    streams: StreamSlots,
    /// Seals the page tokens of GetHandHistory and ListHandReads.
    tokens: PageTokens,
}

impl TableApi {
    /// The API over `tables`, sealing page tokens with `tokens` (the key every replica shares).
    pub fn new(tables: Tables, tokens: PageTokens) -> Self {
        TableApi {
            tables,
            live: None,
            streams: StreamSlots::new(u64::MAX),
            tokens,
        }
    }

    /// With at most `max` open streams per caller.
    pub fn with_stream_limit(mut self, max: u64) -> Self {
        self.streams = StreamSlots::new(max);
        self
    }

    /// With presence and chat (issue 7's live tables).
    pub fn with_live(mut self, presences: Presences, chat: Chat) -> Self {
        self.live = Some((presences, chat));
        self
    }

    fn live(&self) -> Result<&(Presences, Chat), Status> {
        self.live
            .as_ref()
            .ok_or_else(|| status_of(Failure::LiveOff))
    }

    /// The public table with each seat's presence filled in (left unspecified if Redis fails).
    async fn table_with_presence(&self, s: &Summary) -> pb::Table {
        let mut table = table_to_proto(s);
        if let (Some((presences, _)), Ok(id)) = (&self.live, Uuid::parse_str(&s.table_id)) {
            match presences.of_seats(id, &s.holders(), &s.substituted).await {
                Ok(states) => {
                    for (seat, state) in table.seats.iter_mut().zip(states) {
                        seat.presence = presence_to_proto(state) as i32;
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot read presence"),
            }
        }
        table
    }

    /// Records that `player` showed up (a command), without waiting for Redis.
    fn seen(&self, table: Uuid, player: &str) {
        if let Some((presences, _)) = &self.live {
            let (presences, player) = (presences.clone(), player.to_owned());
            tokio::spawn(async move {
                let _ = presences.touch(table, &player, Seen::Heartbeat).await;
            });
        }
    }
}

/// A caller with no seat may read the table only if it admits spectators or them as a member,
/// if they left a seat a bot now plays for them (theirs to take back: they follow the table as a
/// spectator meanwhile, LeaveSeat says), or if they are support staff (or an admin), who read
/// every table.
fn admit_reader(outcome: &Outcome, caller: &str, staff: bool) -> Result<(), Status> {
    let left_a_seat = || {
        outcome
            .summary
            .vacated
            .iter()
            .any(|p| p.as_deref() == Some(caller))
    };
    if outcome.seat.is_none()
        && !staff
        && !outcome.summary.admission.may_watch(caller)
        && !left_a_seat()
    {
        return Err(status_of(TableError::NotMember));
    }
    Ok(())
}

type WatchStream = Pin<Box<dyn Stream<Item = Result<pb::WatchTableResponse, Status>> + Send>>;
type ChatStream = Pin<Box<dyn Stream<Item = Result<pb::WatchChatResponse, Status>> + Send>>;

#[tonic::async_trait]
impl TableService for TableApi {
    async fn create_table(
        &self,
        request: Request<pb::CreateTableRequest>,
    ) -> Result<Response<pb::CreateTableResponse>, Status> {
        request.get_ref().texts()?;
        seats::create_table(self, request).await
    }

    async fn join_seat(
        &self,
        request: Request<pb::JoinSeatRequest>,
    ) -> Result<Response<pb::JoinSeatResponse>, Status> {
        request.get_ref().texts()?;
        seats::join_seat(self, request).await
    }

    async fn leave_seat(
        &self,
        request: Request<pb::LeaveSeatRequest>,
    ) -> Result<Response<pb::LeaveSeatResponse>, Status> {
        request.get_ref().texts()?;
        seats::leave_seat(self, request).await
    }

    async fn submit_command(
        &self,
        request: Request<pb::SubmitCommandRequest>,
    ) -> Result<Response<pb::SubmitCommandResponse>, Status> {
        request.get_ref().texts()?;
        play::submit_command(self, request).await
    }

    async fn list_legal_actions(
        &self,
        request: Request<pb::ListLegalActionsRequest>,
    ) -> Result<Response<pb::ListLegalActionsResponse>, Status> {
        request.get_ref().texts()?;
        play::list_legal_actions(self, request).await
    }

    async fn get_table(
        &self,
        request: Request<pb::GetTableRequest>,
    ) -> Result<Response<pb::GetTableResponse>, Status> {
        request.get_ref().texts()?;
        views::get_table(self, request).await
    }

    async fn get_seat_view(
        &self,
        request: Request<pb::GetSeatViewRequest>,
    ) -> Result<Response<pb::GetSeatViewResponse>, Status> {
        request.get_ref().texts()?;
        views::get_seat_view(self, request).await
    }

    type WatchTableStream = WatchStream;

    async fn watch_table(
        &self,
        request: Request<pb::WatchTableRequest>,
    ) -> Result<Response<Self::WatchTableStream>, Status> {
        request.get_ref().texts()?;
        views::watch_table(self, request).await
    }

    async fn send_heartbeat(
        &self,
        request: Request<pb::SendHeartbeatRequest>,
    ) -> Result<Response<pb::SendHeartbeatResponse>, Status> {
        request.get_ref().texts()?;
        views::send_heartbeat(self, request).await
    }

    async fn send_chat_message(
        &self,
        request: Request<pb::SendChatMessageRequest>,
    ) -> Result<Response<pb::SendChatMessageResponse>, Status> {
        request.get_ref().texts()?;
        chat::send_chat_message(self, request).await
    }

    type WatchChatStream = ChatStream;

    async fn watch_chat(
        &self,
        request: Request<pb::WatchChatRequest>,
    ) -> Result<Response<Self::WatchChatStream>, Status> {
        request.get_ref().texts()?;
        chat::watch_chat(self, request).await
    }

    async fn get_hand_history(
        &self,
        request: Request<pb::GetHandHistoryRequest>,
    ) -> Result<Response<pb::GetHandHistoryResponse>, Status> {
        request.get_ref().texts()?;
        history::get_hand_history(self, request).await
    }

    async fn list_hand_reads(
        &self,
        request: Request<pb::ListHandReadsRequest>,
    ) -> Result<Response<pb::ListHandReadsResponse>, Status> {
        request.get_ref().texts()?;
        history::list_hand_reads(self, request).await
    }

    async fn submit_client_seed(
        &self,
        request: Request<pb::SubmitClientSeedRequest>,
    ) -> Result<Response<pb::SubmitClientSeedResponse>, Status> {
        request.get_ref().texts()?;
        play::submit_client_seed(self, request).await
    }
}
