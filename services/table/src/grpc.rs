//! The `okey.v1.TableService` API over gRPC: the only module of this service that knows the
//! generated (prost) types. It reads the caller the platform's authentication layer verified,
//! converts requests to domain commands and answers back by hand, and maps domain errors to `tonic::Status` in one place
//! ([`status_of`]).

use std::collections::BTreeMap;
use std::pin::Pin;

use okey_platform::auth::Caller;
use okey_platform::fields;
use okey_platform::status::{self, Reason};
use okey_platform::telemetry::{context_as_map, current_context};
use okey_proto::v1 as pb;
use okey_proto::v1::table_service_server::TableService;
use okey_rules::meld::{Form, MeldError};
use okey_rules::view::TakenView;
use okey_rules::{
    Command, Event, MatchLength, MeldTile, OpenKind, Outcome as HandOutcome, PlayableDiscard,
    Preset, RuleError, RuleSet, Seat, SeatView, TableMeld, Threshold, Tile,
};
use prost::Message;
use sqlx::types::Uuid;
use sqlx::types::chrono::{DateTime, Utc};
use tonic::codegen::tokio_stream::Stream;
use tonic::codegen::tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Request, Response, Status};

use crate::absence::{bot_level, bot_name};
use crate::chat::{Chat, ChatError, ChatMessage, SeatNow};
use crate::domain::{Admission, Noted, Origin, Shown, TableCommand, TableError, TableEvent};
use crate::presence::{Presence, Presences, Seen};
use crate::service::{Freshness, Outcome, PhaseName, ServiceError, Summary, Tables, Update};

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

/// How long a caller refused a stream is told to wait (RetryInfo): about the time a client
/// needs to notice one of its streams closed.
const STREAM_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

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
            let max = self.max;
            return Err(status::retry_after(
                Reason::TooManyStreams,
                STREAM_RETRY,
                format!(
                    "at most {max} WatchTable and WatchChat streams per caller are open at once: \
                     close one and try again"
                ),
            ));
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
}

impl TableApi {
    pub fn new(tables: Tables) -> Self {
        TableApi {
            tables,
            live: None,
            streams: StreamSlots::new(u64::MAX),
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
        self.live.as_ref().ok_or_else(|| {
            status::error(
                Reason::DependencyUnavailable,
                "presence and chat are not configured on this server",
            )
        })
    }

    /// The public table with each seat's presence filled in (left unspecified if Redis fails).
    async fn table_with_presence(&self, s: &Summary) -> pb::Table {
        let mut table = table_to_proto(s);
        if let (Some((presences, _)), Ok(id)) = (&self.live, Uuid::parse_str(&s.table_id)) {
            match presences.of_seats(id, &s.seats, &s.substituted).await {
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

fn presence_to_proto(p: Presence) -> pb::Presence {
    match p {
        Presence::Unknown => pb::Presence::Unspecified,
        Presence::Connected => pb::Presence::Connected,
        Presence::Away => pb::Presence::Away,
        Presence::Gone => pb::Presence::Gone,
    }
}

/// The one mapping from chat errors to statuses.
fn chat_status(error: ChatError) -> Status {
    match error {
        e @ ChatError::Empty { .. } => {
            status::invalid_argument(Reason::MissingField, "text", e.to_string())
        }
        e @ ChatError::TooLong { .. } => {
            status::invalid_argument(Reason::ChatTooLong, "text", e.to_string())
        }
        e @ ChatError::TooFrequent { retry_after, .. } => {
            status::retry_after(Reason::ChatRateLimited, retry_after, e.to_string())
        }
        e @ ChatError::NoPartners => {
            status::rule_violation(Reason::NoPartners, "partners", e.to_string())
        }
        e @ ChatError::NotSeated => status::error(Reason::NotSeated, e.to_string()),
        e @ (ChatError::Store(_)
        | ChatError::Redis(_)
        | ChatError::Nats(_)
        | ChatError::Seating(_)) => {
            tracing::error!(error = %e, "chat failed");
            status::error(
                Reason::DependencyUnavailable,
                "chat is not available now; retry with the same request_id",
            )
        }
    }
}

fn chat_to_proto(m: &ChatMessage) -> pb::ChatMessage {
    pb::ChatMessage {
        name: format!("tables/{}/messages/{}", m.table, m.id),
        channel: match m.channel {
            crate::chat::Channel::Table => pb::ChatChannel::Table,
            crate::chat::Channel::Team(_) => pb::ChatChannel::Partner,
        } as i32,
        sender_seat: i32::from(m.sender_seat),
        sender: m.sender.clone(),
        text: m.text.clone(),
        send_time: DateTime::from_timestamp_millis(m.sent_at_ms).map(timestamp),
    }
}

/// A wire bot level as the server's (unspecified: strong).
fn bot_level_from_proto(level: i32) -> okey_bots::Level {
    match pb::BotLevel::try_from(level) {
        Ok(pb::BotLevel::Easy) => okey_bots::Level::Easy,
        _ => okey_bots::Level::Strong,
    }
}

/// A seat's occupant as others see it: a bot by its level, a person by the display name they
/// sat down with (empty while the table has not learned it: never the player id).
fn player_summary(occupant: &str, name: Option<&str>) -> pb::PlayerSummary {
    let bot = bot_level(occupant);
    pb::PlayerSummary {
        player: occupant.to_owned(),
        display_name: match bot {
            Some(level) => format!("{level} bot"),
            None => name.unwrap_or_default().to_owned(),
        },
        avatar_ref: String::new(),
        bot: bot.is_some(),
    }
}

/// The player calling, as the platform's authentication layer verified it (`players/{id}`).
fn caller<T>(request: &Request<T>) -> Result<String, Status> {
    request
        .extensions()
        .get::<Caller>()
        .map(|c| format!("players/{}", c.player_id))
        .ok_or_else(|| status::error(Reason::TokenInvalid, "no verified caller"))
}

fn trace() -> BTreeMap<String, String> {
    context_as_map(&current_context()).into_iter().collect()
}

/// The one mapping from domain errors to statuses.
fn status_of(error: ServiceError) -> Status {
    match error {
        ServiceError::Table(e) => {
            let reason = table_reason(&e);
            match reason.code() {
                Code::InvalidArgument => status::invalid_argument(reason, "command", e.to_string()),
                Code::FailedPrecondition => {
                    status::rule_violation(reason, reason.as_str(), e.to_string())
                }
                _ => status::error(reason, e.to_string()),
            }
        }
        ServiceError::NotFound => status::error(Reason::TableNotFound, "no such table"),
        ServiceError::InvalidRules(message) => {
            status::invalid_argument(Reason::InvalidRules, "rules", message)
        }
        e @ (ServiceError::VersionConflict { .. } | ServiceError::Busy) => {
            status::error(Reason::VersionConflict, e.to_string())
        }
        e @ ServiceError::VersionAhead { .. } => status::error(Reason::VersionAhead, e.to_string()),
        e @ ServiceError::StoredAnswer => status::error(
            Reason::StoredAnswerUnreadable,
            format!("{e}; the request was handled once and is not played again"),
        ),
        ServiceError::Store(e) => {
            tracing::error!(error = %e, "event store failed");
            status::error(
                Reason::DependencyUnavailable,
                "the event store is not available; retry with the same request_id",
            )
        }
    }
}

/// The reason (and so the code) of a refused command: the one place the engine's and the
/// table's rejections meet common.proto's reason table.
fn table_reason(error: &TableError) -> Reason {
    match error {
        TableError::Rule(rule) => rule_reason(rule),
        TableError::NotSeated => Reason::NotSeated,
        TableError::NotMember => Reason::NotTableMember,
        TableError::SeatTaken(_) => Reason::SeatTaken,
        TableError::TableFull => Reason::TableFull,
        TableError::NotStarted => Reason::MatchNotStarted,
        TableError::MatchOver => Reason::MatchOver,
        TableError::ServerOnly => Reason::ServerOnly,
        TableError::NotBotSeat(_) => Reason::NotBotSeat,
        TableError::StaleTimeout => Reason::StaleTimeout,
    }
}

fn rule_reason(error: &RuleError) -> Reason {
    match error {
        RuleError::HandOver => Reason::HandOver,
        RuleError::NotYourTurn { .. } => Reason::NotYourTurn,
        RuleError::TakeFirst => Reason::TakeFirst,
        RuleError::AlreadyTook => Reason::AlreadyTook,
        RuleError::FirstTurnNoTake => Reason::FirstTurnNoTake,
        RuleError::MustDraw => Reason::MustDraw,
        RuleError::NoSideDiscard => Reason::SideDiscardUnavailable,
        RuleError::SideDiscardIsOkey => Reason::OkeyNotTakeable,
        RuleError::SideDiscardPlayable(_) => Reason::PlayableNotTakeable,
        RuleError::PairsMayNotTakeDiscard => Reason::PairsTakeDiscard,
        RuleError::NoSideDiscardHeld => Reason::NoSideDiscardHeld,
        RuleError::SideDiscardUnused(_) => Reason::SideDiscardNotUsed,
        RuleError::SideDiscardLeftOut(_) => Reason::SideDiscardLeftOut,
        RuleError::OnlyDiscardLeft => Reason::OnlyDiscardLeft,
        RuleError::NotInRack(_) => Reason::TileNotInRack,
        RuleError::AlreadyOpened => Reason::AlreadyOpened,
        RuleError::NotOpened => Reason::NotOpened,
        RuleError::NoActionsInOpeningTurn => Reason::ActAfterOpeningSameTurn,
        RuleError::MixedOpening => Reason::MixedOpening,
        RuleError::NoMelds => Reason::NoMelds,
        RuleError::Meld(meld) => match meld {
            MeldError::TooLong(..) => Reason::MeldTooLong,
            MeldError::NoRealTile => Reason::MeldNeedsRealTile,
            MeldError::ReadingOnRealTile(_) => Reason::ReadingOnRealTile,
            MeldError::NotRunOrSet(_) => Reason::InvalidMeld,
            MeldError::NotPair(_) => Reason::InvalidPair,
            MeldError::CannotAdd(..) => Reason::CannotAdd,
            MeldError::CannotRetrieve(_) => Reason::CannotRetrieve,
        },
        RuleError::MeldOpenerLaysMelds => Reason::MeldOpenerLaysMelds,
        RuleError::PairOpenerLaysPairs => Reason::PairOpenerLaysPairs,
        RuleError::MustKeepOneTile => Reason::RackWouldBeEmpty,
        RuleError::NoSuchMeld(_) => Reason::NoSuchMeld,
        RuleError::PairOpenerAddLimit(_) => Reason::PairOpenerAddLimit,
        RuleError::BelowThreshold { .. } => Reason::OpeningBelowThreshold,
        RuleError::NotCalledMode => Reason::NotCalledMode,
        RuleError::NothingToCall => Reason::NoCallPossible,
        RuleError::CallAfterTaking => Reason::CallAfterTaking,
        RuleError::PileEmpty => Reason::PileEmpty,
    }
}

/// A table version sent in `field`: not negative (`invalid_version`).
fn version_arg(value: i64, field: &str) -> Result<u64, Status> {
    u64::try_from(value).map_err(|_| {
        status::invalid_argument(Reason::InvalidVersion, field, "versions are not negative")
    })
}

fn table_id(name: &str, field: &str) -> Result<Uuid, Status> {
    name.strip_prefix("tables/")
        .and_then(|id| Uuid::parse_str(id).ok())
        .ok_or_else(|| {
            status::invalid_argument(
                Reason::InvalidTable,
                field,
                format!("`{name}` is not a table name (tables/{{uuid}})"),
            )
        })
}

fn request_id(id: &str) -> Result<&str, Status> {
    fields::request_id(id)
}

fn not_too_large(request: &impl Message) -> Result<(), Status> {
    if request.encoded_len() > MAX_COMMAND_BYTES {
        return Err(status::invalid_argument(
            Reason::RequestTooLarge,
            "command",
            format!("requests are limited to {MAX_COMMAND_BYTES} bytes"),
        ));
    }
    Ok(())
}

fn seat_arg(seat: i32, field: &str) -> Result<Seat, Status> {
    if (0..4).contains(&seat) {
        Ok(seat as Seat)
    } else {
        Err(status::invalid_argument(
            Reason::InvalidSeat,
            field,
            format!("seat {seat} is not 0-3"),
        ))
    }
}

fn tile_arg(text: &str, field: &str) -> Result<Tile, Status> {
    text.parse().map_err(|_| {
        status::invalid_argument(
            Reason::InvalidTile,
            field,
            format!("`{text}` is not a tile"),
        )
    })
}

fn meld_tile_arg(text: &str, field: &str) -> Result<MeldTile, Status> {
    text.parse().map_err(|_| {
        status::invalid_argument(
            Reason::InvalidTile,
            field,
            format!("`{text}` is not a tile"),
        )
    })
}

fn melds_arg(melds: &[pb::MeldTiles], field: &str) -> Result<Vec<Vec<MeldTile>>, Status> {
    melds
        .iter()
        .enumerate()
        .map(|(i, m)| {
            m.tiles
                .iter()
                .enumerate()
                .map(|(j, t)| meld_tile_arg(t, &format!("{field}.melds[{i}].tiles[{j}]")))
                .collect()
        })
        .collect()
}

fn meld_number(n: i32, field: &str) -> Result<usize, Status> {
    usize::try_from(n).map_err(|_| {
        status::invalid_argument(
            Reason::InvalidMeldNumber,
            field,
            format!("meld {n} does not exist"),
        )
    })
}

/// A wire command as a domain command.
pub fn command_from_proto(command: Option<&pb::Command>) -> Result<Command, Status> {
    use pb::command::Command as C;
    let missing = || status::invalid_argument(Reason::MissingField, "command", "name one command");
    Ok(
        match command
            .and_then(|c| c.command.as_ref())
            .ok_or_else(missing)?
        {
            C::Draw(_) => Command::Draw,
            C::TakeSideDiscard(_) => Command::TakeDiscard,
            C::ReturnSideDiscard(_) => Command::ReturnDiscard,
            C::Open(o) => Command::Open {
                melds: melds_arg(&o.melds, "command.open")?,
            },
            C::Lay(l) => Command::Lay {
                melds: melds_arg(&l.melds, "command.lay")?,
            },
            C::Add(a) => Command::Add {
                meld: meld_number(a.meld, "command.add.meld")?,
                tiles: a
                    .tiles
                    .iter()
                    .enumerate()
                    .map(|(j, t)| meld_tile_arg(t, &format!("command.add.tiles[{j}]")))
                    .collect::<Result<_, _>>()?,
            },
            C::RetrieveOkey(r) => Command::Retrieve {
                meld: meld_number(r.meld, "command.retrieve_okey.meld")?,
                tiles: r
                    .tiles
                    .iter()
                    .enumerate()
                    .map(|(j, t)| tile_arg(t, &format!("command.retrieve_okey.tiles[{j}]")))
                    .collect::<Result<_, _>>()?,
            },
            C::Discard(d) => Command::Discard {
                tile: tile_arg(&d.tile, "command.discard.tile")?,
            },
            C::CallPlayable(_) => Command::CallPlayable,
        },
    )
}

fn meld_tiles(melds: &[Vec<MeldTile>]) -> Vec<pb::MeldTiles> {
    melds
        .iter()
        .map(|m| pb::MeldTiles {
            tiles: m.iter().map(ToString::to_string).collect(),
        })
        .collect()
}

/// A domain command as a wire command (`None` for the server-only timeout).
pub fn command_to_proto(command: &Command) -> Option<pb::Command> {
    use pb::command::Command as C;
    let c = match command {
        Command::Draw => C::Draw(pb::DrawCommand {}),
        Command::TakeDiscard => C::TakeSideDiscard(pb::TakeSideDiscardCommand {}),
        Command::ReturnDiscard => C::ReturnSideDiscard(pb::ReturnSideDiscardCommand {}),
        Command::Open { melds } => C::Open(pb::OpenCommand {
            melds: meld_tiles(melds),
        }),
        Command::Lay { melds } => C::Lay(pb::LayCommand {
            melds: meld_tiles(melds),
        }),
        Command::Add { meld, tiles } => C::Add(pb::AddCommand {
            meld: *meld as i32,
            tiles: tiles.iter().map(ToString::to_string).collect(),
        }),
        Command::Retrieve { meld, tiles } => C::RetrieveOkey(pb::RetrieveOkeyCommand {
            meld: *meld as i32,
            tiles: tiles.iter().map(|t| t.name().to_owned()).collect(),
        }),
        Command::Discard { tile } => C::Discard(pb::DiscardCommand {
            tile: tile.name().to_owned(),
        }),
        Command::CallPlayable => C::CallPlayable(pb::CallPlayableCommand {}),
        Command::Timeout => return None,
    };
    Some(pb::Command { command: Some(c) })
}

/// A wire rule set as the engine's, starting from its preset.
fn rules_from_proto(rules: Option<&pb::RuleSet>) -> Result<RuleSet, Status> {
    let default = pb::RuleSet::default();
    let r = rules.unwrap_or(&default);
    let preset = if r.preset.is_empty() {
        Preset::Classic
    } else {
        Preset::parse(&r.preset).ok_or_else(|| {
            status::invalid_argument(
                Reason::InvalidRules,
                "rules.preset",
                format!("unknown preset `{}`", r.preset),
            )
        })?
    };
    let mut out = preset.rules();
    match pb::ThresholdMode::try_from(r.threshold) {
        Ok(pb::ThresholdMode::Standard) => out.threshold = Threshold::Standard,
        Ok(pb::ThresholdMode::Raising) => out.threshold = Threshold::Raising,
        _ => {}
    }
    match pb::PlayableDiscardMode::try_from(r.playable_discard) {
        Ok(pb::PlayableDiscardMode::Auto) => out.playable_discard = PlayableDiscard::Auto,
        Ok(pb::PlayableDiscardMode::Called) => out.playable_discard = PlayableDiscard::Called,
        _ => {}
    }
    if let Some(v) = r.partners {
        out.partners = v;
    }
    if let Some(v) = r.run_wraps_after_thirteen {
        out.run_wraps_12_13_1 = v;
    }
    if let Some(v) = r.in_play_penalties {
        out.in_play_penalties = v;
    }
    if let Some(v) = r.act_after_opening_same_turn {
        out.act_after_opening_same_turn = v;
    }
    if let Some(v) = r.pairs_take_discard {
        out.pairs_take_discard = v;
    }
    match r.match_length.as_ref().and_then(|m| m.length) {
        Some(pb::match_length::Length::Hands(n)) => {
            out.match_length = MatchLength::Hands(u32::try_from(n).unwrap_or(0));
        }
        Some(pb::match_length::Length::PenaltyLimit(n)) => {
            out.match_length = MatchLength::PenaltyLimit(n as i64);
        }
        None => {}
    }
    if r.turn_seconds < 0 {
        return Err(status::invalid_argument(
            Reason::InvalidRules,
            "rules.turn_seconds",
            "turn_seconds cannot be negative",
        ));
    }
    if r.turn_seconds > 0 {
        out.turn_seconds = r.turn_seconds as u32;
        out.turn_seconds_max = out.turn_seconds_max.max(out.turn_seconds);
    }
    // The engine's own check (for one, a preset plays only the match lengths its seed offers),
    // naming the field at fault.
    out.validate().map_err(|e| {
        status::invalid_argument(
            Reason::InvalidRules,
            &format!("rules.{}", e.field),
            e.to_string(),
        )
    })?;
    Ok(out)
}

fn rules_to_proto(r: &RuleSet) -> pb::RuleSet {
    pb::RuleSet {
        preset: r.preset.name().to_owned(),
        threshold: match r.threshold {
            Threshold::Standard => pb::ThresholdMode::Standard,
            Threshold::Raising => pb::ThresholdMode::Raising,
        } as i32,
        partners: Some(r.partners),
        run_wraps_after_thirteen: Some(r.run_wraps_12_13_1),
        in_play_penalties: Some(r.in_play_penalties),
        playable_discard: match r.playable_discard {
            PlayableDiscard::Auto => pb::PlayableDiscardMode::Auto,
            PlayableDiscard::Called => pb::PlayableDiscardMode::Called,
        } as i32,
        act_after_opening_same_turn: Some(r.act_after_opening_same_turn),
        pairs_take_discard: Some(r.pairs_take_discard),
        match_length: Some(pb::MatchLength {
            length: Some(match r.match_length {
                MatchLength::Hands(n) => pb::match_length::Length::Hands(n as i32),
                MatchLength::PenaltyLimit(n) => pb::match_length::Length::PenaltyLimit(n as i32),
            }),
        }),
        turn_seconds: r.turn_seconds as i32,
    }
}

fn origin_to_proto(origin: Origin) -> pb::TableOrigin {
    match origin {
        Origin::Operator => pb::TableOrigin::Operator,
        Origin::QuickPlay => pb::TableOrigin::QuickPlay,
        Origin::PrivateRoom => pb::TableOrigin::PrivateRoom,
    }
}

/// Where a new table comes from and whom it admits, as the creator asked; the role `matchmaker`
/// may make only quick-play and private-room tables.
fn admission_from_proto(
    r: &pb::CreateTableRequest,
    caller: Option<&Caller>,
) -> Result<Admission, Status> {
    let matchmaker = caller.is_some_and(|c| {
        c.roles.contains(&okey_platform::auth::Role::Matchmaker)
            && !c.roles.contains(&okey_platform::auth::Role::Admin)
    });
    let origin = match pb::TableOrigin::try_from(r.origin) {
        Ok(pb::TableOrigin::QuickPlay) => Origin::QuickPlay,
        Ok(pb::TableOrigin::PrivateRoom) => Origin::PrivateRoom,
        Ok(pb::TableOrigin::Operator) if matchmaker => {
            return Err(status::error(
                Reason::RoleRequired,
                "an operator's table needs the role admin",
            ));
        }
        Ok(pb::TableOrigin::Operator) => Origin::Operator,
        _ if matchmaker => {
            return Err(status::invalid_argument(
                Reason::MissingField,
                "origin",
                "say where the table comes from: quick play or a private room",
            ));
        }
        Ok(pb::TableOrigin::Unspecified) => Origin::Operator,
        Err(_) => {
            return Err(status::invalid_argument(
                Reason::InvalidOrigin,
                "origin",
                "unknown origin",
            ));
        }
    };
    for (i, m) in r.members.iter().enumerate() {
        if !m.starts_with("players/") || m.len() > 128 {
            return Err(status::invalid_argument(
                Reason::InvalidName,
                &format!("members[{i}]"),
                "name a member as players/{id}",
            ));
        }
    }
    Ok(Admission {
        origin,
        members: r.members.clone(),
        spectators: r.spectators_allowed.unwrap_or(true),
    })
}

/// A caller with no seat may read the table only if it admits spectators or them as a member.
fn admit_reader(outcome: &Outcome, caller: &str) -> Result<(), Status> {
    if outcome.seat.is_none() && !outcome.summary.admission.may_watch(caller) {
        return Err(status_of(TableError::NotMember.into()));
    }
    Ok(())
}

fn timestamp(t: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: t.timestamp(),
        nanos: t.timestamp_subsec_nanos() as i32,
    }
}

fn opening_kind(kind: Option<OpenKind>) -> i32 {
    let kind = match kind {
        None => pb::OpeningKind::Unspecified,
        Some(OpenKind::Melds) => pb::OpeningKind::Melds,
        Some(OpenKind::Pairs) => pb::OpeningKind::Pairs,
    };
    kind as i32
}

/// The match played at a table: a match is one table (`okey_rules::matches`), so it is named by
/// the table's UUID, `matches/{table}`.
fn match_name(table_id: &str) -> String {
    format!("matches/{table_id}")
}

fn table_to_proto(s: &Summary) -> pb::Table {
    pb::Table {
        name: format!("tables/{}", s.table_id),
        rules: Some(rules_to_proto(&s.rules)),
        seats: (0..4)
            .map(|i| pb::SeatSummary {
                seat: i as i32,
                player: s.seats[i]
                    .as_deref()
                    .map(|p| player_summary(p, s.names[i].as_deref())),
                presence: pb::Presence::Unspecified as i32,
                rack_count: s.rack_counts[i] as i32,
                opened: opening_kind(s.opened[i]),
                total: s.totals[i] as i32,
                bot_substitute: s.substituted[i],
            })
            .collect(),
        state: match s.phase {
            PhaseName::Waiting => pb::TableState::Waiting,
            PhaseName::Playing => pb::TableState::Playing,
            PhaseName::Finished => pb::TableState::Finished,
        } as i32,
        hand_number: s.hand_number as i32,
        version: s.version as i64,
        r#match: match_name(&s.table_id),
        create_time: s
            .created_at
            .and_then(DateTime::from_timestamp_millis)
            .map(timestamp),
        origin: origin_to_proto(s.admission.origin) as i32,
        members: s.admission.members.clone(),
        spectators_allowed: s.admission.spectators,
    }
}

fn meld_text(m: &TableMeld) -> Vec<String> {
    m.tiles
        .iter()
        .map(|p| {
            if p.tile.printed() == Some(p.reads) {
                p.tile.name().to_owned()
            } else {
                format!("{}={}", p.tile, p.reads)
            }
        })
        .collect()
}

fn meld_to_proto(number: usize, m: &TableMeld) -> pb::Meld {
    pb::Meld {
        number: number as i32,
        kind: match m.form {
            Form::Run { .. } => pb::MeldKind::Run,
            Form::Set { .. } => pb::MeldKind::Set,
            Form::Pair { .. } => pb::MeldKind::Pair,
        } as i32,
        tiles: meld_text(m),
        owner_seat: m.owner as i32,
        value: m.value() as i32,
    }
}

/// The view in both forms (see [`view_in`]).
fn view_to_proto(outcome: &Outcome) -> pb::SeatView {
    view_in(outcome, pb::SeatViewForm::Unspecified)
}

/// A request's `view_form`, or INVALID_ARGUMENT for a value this server does not know.
fn view_form(value: i32) -> Result<pb::SeatViewForm, Status> {
    pb::SeatViewForm::try_from(value).map_err(|_| {
        status::invalid_argument(
            Reason::InvalidViewForm,
            "view_form",
            format!("{value} is not a SeatViewForm: send 0 (both), 1 (typed) or 2 (engine)"),
        )
    })
}

/// The view in the forms `form` asks for.
fn view_in(outcome: &Outcome, form: pb::SeatViewForm) -> pb::SeatView {
    let s = &outcome.summary;
    let mut out = pb::SeatView {
        table: format!("tables/{}", s.table_id),
        seat: outcome.seat.map_or(-1, i32::from),
        version: s.version as i64,
        summary: Some(table_to_proto(s)),
        hand_number: s.hand_number as i32,
        ..Default::default()
    };
    // A spectator's view is the public one: everything but a rack, and neither the engine form
    // (whose `seat` would name a seat the caller does not hold) nor a seat's thresholds.
    let (v, seated) = match (&outcome.view, &outcome.public) {
        (Some(v), _) => (v, true),
        (None, Some(v)) => (v, false),
        (None, None) => return out,
    };
    let seat = v.seat as usize;
    out.phase = phase_of(v) as i32;
    out.turn_seat = v.turn_seat as i32;
    if seated && form != pb::SeatViewForm::Typed {
        out.engine_view = serde_json::to_string(v).expect("views serialize");
    }
    if form == pb::SeatViewForm::Engine {
        return out;
    }
    out.rack = v.rack.iter().map(|t| t.name().to_owned()).collect();
    out.indicator = v.indicator.name().to_owned();
    out.okey = v.okey.tile().name().to_owned();
    out.melds = v
        .table
        .iter()
        .enumerate()
        .map(|(i, m)| meld_to_proto(i, m))
        .collect();
    out.discards = v
        .discards
        .iter()
        .enumerate()
        .map(|(i, d)| pb::DiscardPile {
            seat: i as i32,
            tiles: d.iter().map(|t| t.name().to_owned()).collect(),
        })
        .collect();
    out.pile_count = v.pile_count as i32;
    if !seated {
        out.side_discard = v
            .side_discard
            .map(|t| t.name().to_owned())
            .unwrap_or_default();
        return out;
    }
    out.meld_threshold = v.meld_threshold[seat] as i32;
    out.pair_threshold = v.pair_threshold[seat] as i32;
    if let TakenView::SideDiscard { tile, used: false } = v.taken
        && v.turn_seat == v.seat
    {
        out.held_side_discard = tile.name().to_owned();
    }
    out.side_discard = v
        .side_discard
        .map(|t| t.name().to_owned())
        .unwrap_or_default();
    out
}

fn phase_of(v: &SeatView) -> pb::HandPhase {
    if v.end.is_some() {
        pb::HandPhase::Ended
    } else if v.wrong_opening {
        pb::HandPhase::DiscardOnly
    } else if matches!(v.taken, TakenView::Nothing) {
        pb::HandPhase::Take
    } else {
        pb::HandPhase::Act
    }
}

fn texts(tiles: &[Tile]) -> Vec<String> {
    tiles.iter().map(|t| t.name().to_owned()).collect()
}

fn penalty_to_proto(seat: Seat, points: i32, reason: okey_rules::PenaltyReason) -> pb::Penalty {
    pb::Penalty {
        seat: seat as i32,
        points,
        reason: reason.code().to_owned(),
    }
}

/// An event the wire has no form for (a deal not shown through `Shown::Dealt`, an engine event
/// the table stores in its own form): a stored event this build does not read as it expects.
/// INTERNAL `unexpected_event`, never a panic of the call.
fn unexpected_event(what: &str) -> Status {
    tracing::error!(event = what, "an event has no wire form here");
    status::error(
        Reason::UnexpectedEvent,
        "the server cannot show a stored event; retry later",
    )
}

/// An event of table `table_id` (its UUID as text) as the viewer sees it, on the wire.
pub fn event_to_proto(shown: &Shown, table_id: &str) -> Result<pb::TableEvent, Status> {
    let match_name = match_name(table_id);
    use pb::table_event::Event as E;
    let e = match shown {
        Shown::Dealt {
            hand_number,
            first,
            indicator,
            seed_sha256,
            rack,
        } => E::HandStarted(pb::HandStarted {
            hand_number: *hand_number as i32,
            indicator: indicator.name().to_owned(),
            okey: okey_rules::Okey::from_indicator(*indicator)
                .map(|o| o.tile().name().to_owned())
                .unwrap_or_default(),
            first_seat: *first as i32,
            rack: texts(rack),
            seed_sha256: seed_sha256.clone(),
        }),
        Shown::Drawn { seat, tile, .. } => E::TileDrawn(pb::TileDrawn {
            seat: *seat as i32,
            tile: tile.map(|t| t.name().to_owned()).unwrap_or_default(),
        }),
        Shown::Public { event } => match event {
            TableEvent::TableCreated {
                rules, admission, ..
            } => E::TableCreated(pb::TableCreated {
                rules: Some(rules_to_proto(rules)),
                origin: origin_to_proto(admission.origin) as i32,
                members: admission.members.clone(),
                spectators_allowed: admission.spectators,
            }),
            TableEvent::SeatTaken { seat, player, name } => E::SeatTaken(pb::SeatTaken {
                seat: *seat as i32,
                player: Some(player_summary(player, name.as_deref())),
            }),
            TableEvent::SeatHandedToBot { seat, player } => {
                E::SeatHandedToBot(pb::SeatHandedToBot {
                    seat: *seat as i32,
                    player: player.clone(),
                })
            }
            TableEvent::SeatReclaimed { seat, player } => E::SeatReclaimed(pb::SeatReclaimed {
                seat: *seat as i32,
                player: player.clone(),
            }),
            TableEvent::SeatLeft {
                seat,
                bot_substitute,
                ..
            } => E::SeatLeft(pb::SeatLeft {
                seat: *seat as i32,
                bot_substitute: *bot_substitute,
            }),
            TableEvent::HandDealt { .. } => return Err(unexpected_event("HandDealt")),
            TableEvent::Played {
                event,
                first_meld,
                noted,
                ..
            } => played_to_proto(event, first_meld.unwrap_or(0), noted)?,
            TableEvent::HandEnded {
                hand_number,
                end,
                result,
                totals,
                seed,
                racks,
            } => E::HandEnded(pb::HandEnded {
                hand_number: *hand_number as i32,
                outcome: match end.outcome {
                    HandOutcome::Finished => pb::HandOutcome::Finished,
                    HandOutcome::PileEmpty => pb::HandOutcome::PileEmpty,
                    HandOutcome::Cancelled => pb::HandOutcome::Cancelled,
                } as i32,
                winner: end.winner.map(i32::from),
                scores: end.scores.to_vec(),
                totals: totals.iter().map(|t| *t as i32).collect(),
                seed: seed.clone(),
                final_racks: racks
                    .iter()
                    .map(|r| pb::MeldTiles { tiles: texts(r) })
                    .collect(),
                penalties: result.penalties.to_vec(),
            }),
            TableEvent::MatchEnded { totals, winners } => E::MatchEnded(pb::MatchEnded {
                totals: totals.iter().map(|t| *t as i32).collect(),
                winners: winners.iter().map(|s| *s as i32).collect(),
                r#match: match_name,
            }),
        },
    };
    Ok(pb::TableEvent { event: Some(e) })
}

fn played_to_proto(
    event: &Event,
    first_meld: usize,
    noted: &Noted,
) -> Result<pb::table_event::Event, Status> {
    use pb::table_event::Event as E;
    let melds = |ms: &[TableMeld]| {
        ms.iter()
            .enumerate()
            .map(|(i, m)| meld_to_proto(first_meld + i, m))
            .collect()
    };
    Ok(match event {
        Event::HandStarted { .. } | Event::HandEnded { .. } => {
            return Err(unexpected_event(event.name()));
        }
        Event::TileDrawn { seat, tile } => E::TileDrawn(pb::TileDrawn {
            seat: *seat as i32,
            tile: tile.to_string(),
        }),
        Event::SideDiscardTaken { seat, tile } => E::SideDiscardTaken(pb::SideDiscardTaken {
            seat: *seat as i32,
            tile: tile.to_string(),
        }),
        Event::SideDiscardReturned { seat, tile } => {
            E::SideDiscardReturned(pb::SideDiscardReturned {
                seat: *seat as i32,
                tile: tile.to_string(),
                rolled_back: noted.rolled_back,
            })
        }
        Event::TableRolledBack { seat, voided } => E::TableRolledBack(pb::TableRolledBack {
            seat: *seat as i32,
            voided_penalties: voided.iter().map(|v| *v as i32).collect(),
        }),
        Event::HandOpened {
            seat,
            kind,
            melds: ms,
            ..
        } => E::HandOpened(pb::HandOpened {
            seat: *seat as i32,
            kind: opening_kind(Some(*kind)),
            melds: melds(ms),
        }),
        Event::WrongOpening {
            seat,
            kind,
            amount,
            needed,
        } => E::WrongOpening(pb::WrongOpening {
            seat: *seat as i32,
            kind: opening_kind(Some(*kind)),
            amount: *amount as i32,
            needed: *needed as i32,
        }),
        Event::MeldsLaid { seat, melds: ms } => E::MeldsLaid(pb::MeldsLaid {
            seat: *seat as i32,
            melds: melds(ms),
        }),
        Event::TilesAdded {
            seat,
            meld,
            tiles,
            result,
        } => E::TilesAdded(pb::TilesAdded {
            seat: *seat as i32,
            meld: Some(meld_to_proto(*meld, result)),
            tiles: texts(tiles),
        }),
        Event::OkeyRetrieved {
            seat,
            meld,
            okeys,
            result,
            ..
        } => E::OkeyRetrieved(pb::OkeyRetrieved {
            seat: *seat as i32,
            meld: Some(meld_to_proto(*meld, result)),
            okey: okeys
                .iter()
                .map(|p| p.tile.to_string())
                .collect::<Vec<_>>()
                .join(","),
        }),
        Event::TileDiscarded { seat, tile, .. } => E::TileDiscarded(pb::TileDiscarded {
            seat: *seat as i32,
            tile: tile.to_string(),
        }),
        Event::PlayableCalled { seat, fits } => E::PlayableCalled(pb::PlayableCalled {
            seat: *seat as i32,
            tile: noted
                .called
                .map(|t| t.name().to_owned())
                .unwrap_or_default(),
            fitted: *fits,
        }),
        Event::TurnTimedOut { seat } => E::TurnTimedOut(pb::TurnTimedOut {
            seat: *seat as i32,
            in_a_row: noted.in_a_row.map_or(0, i32::from),
        }),
        Event::PenaltyCharged {
            seat,
            points,
            reason,
            ..
        } => E::PenaltyCharged(pb::PenaltyCharged {
            penalty: Some(penalty_to_proto(*seat, *points, *reason)),
        }),
        Event::HandCancelled { voided } => E::HandCancelled(pb::HandCancelled {
            voided_penalties: voided.iter().map(|v| *v as i32).collect(),
        }),
    })
}

fn penalties_of(events: &[(u64, Shown)]) -> Vec<pb::Penalty> {
    events
        .iter()
        .filter_map(|(_, shown)| match shown {
            Shown::Public {
                event:
                    TableEvent::Played {
                        event:
                            Event::PenaltyCharged {
                                seat,
                                points,
                                reason,
                                ..
                            },
                        ..
                    },
            } => Some(penalty_to_proto(*seat, *points, *reason)),
            _ => None,
        })
        .collect()
}

fn hint_text(command: &Command) -> String {
    match command {
        Command::Draw => "draw from the centre pile".into(),
        Command::TakeDiscard => "take the side discard".into(),
        Command::ReturnDiscard => "give the side discard back".into(),
        Command::Open { melds } => format!("open with {} melds", melds.len()),
        Command::Lay { melds } => format!("lay {} melds", melds.len()),
        Command::Add { meld, tiles } => format!("add {} tiles to meld {meld}", tiles.len()),
        Command::Retrieve { meld, .. } => format!("take the okey back from meld {meld}"),
        Command::Discard { tile } => format!("discard {tile}"),
        Command::CallPlayable => "call the previous discard playable".into(),
        Command::Timeout => "timeout".into(),
    }
}

type WatchStream = Pin<Box<dyn Stream<Item = Result<pb::WatchTableResponse, Status>> + Send>>;

#[tonic::async_trait]
impl TableService for TableApi {
    async fn create_table(
        &self,
        request: Request<pb::CreateTableRequest>,
    ) -> Result<Response<pb::CreateTableResponse>, Status> {
        // The authentication layer let only `admin` and `matchmaker` callers through.
        let admission_caller = request.extensions().get::<Caller>().cloned();
        let caller = caller(&request)?;
        let r = request.into_inner();
        not_too_large(&r)?;
        let id = request_id(&r.request_id)?;
        let rules = rules_from_proto(r.rules.as_ref())?;
        let admission = admission_from_proto(&r, admission_caller.as_ref())?;
        let mut seats: [Option<String>; 4] = Default::default();
        for (i, a) in r.seats.iter().enumerate() {
            let seat = seat_arg(a.seat, &format!("seats[{i}].seat"))?;
            match &a.occupant {
                Some(pb::seat_assignment::Occupant::Player(p)) if p.starts_with("players/") => {
                    fields::text(&format!("seats[{i}].player"), p)?;
                    if seats[seat as usize].replace(p.clone()).is_some() {
                        return Err(status::invalid_argument(
                            Reason::InvalidSeat,
                            &format!("seats[{i}].seat"),
                            "a seat is assigned twice",
                        ));
                    }
                }
                Some(pb::seat_assignment::Occupant::Bot(level)) => {
                    let name = bot_name(bot_level_from_proto(*level), seat);
                    if seats[seat as usize].replace(name).is_some() {
                        return Err(status::invalid_argument(
                            Reason::InvalidSeat,
                            &format!("seats[{i}].seat"),
                            "a seat is assigned twice",
                        ));
                    }
                }
                _ => {
                    return Err(status::invalid_argument(
                        Reason::MissingField,
                        &format!("seats[{i}].player"),
                        "name a player as players/{id}",
                    ));
                }
            }
        }
        if let Some(level) = r.empty_seat_bots {
            for (seat, occupant) in seats.iter_mut().enumerate() {
                if occupant.is_none() {
                    *occupant = Some(bot_name(bot_level_from_proto(level), seat as u8));
                }
            }
        }
        let outcome = self
            .tables
            .create(&caller, id, rules, seats, admission, trace())
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::CreateTableResponse {
            table: Some(table_to_proto(&outcome.summary)),
        }))
    }

    async fn get_table(
        &self,
        request: Request<pb::GetTableRequest>,
    ) -> Result<Response<pb::GetTableResponse>, Status> {
        let caller = caller(&request)?;
        let id = table_id(&request.get_ref().name, "name")?;
        let outcome = self.tables.read(id, &caller).await.map_err(status_of)?;
        admit_reader(&outcome, &caller)?;
        Ok(Response::new(pb::GetTableResponse {
            table: Some(self.table_with_presence(&outcome.summary).await),
        }))
    }

    async fn join_seat(
        &self,
        request: Request<pb::JoinSeatRequest>,
    ) -> Result<Response<pb::JoinSeatResponse>, Status> {
        let caller = caller(&request)?;
        // Shown to the other players as is: accounts checked it (1-24 characters) when it
        // signed the token.
        let name = request
            .extensions()
            .get::<Caller>()
            .and_then(|c| c.name.clone());
        let r = request.into_inner();
        let id = table_id(&r.table, "table")?;
        let rid = request_id(&r.request_id)?;
        let seat = r.seat.map(|s| seat_arg(s, "seat")).transpose()?;
        let command = TableCommand::Join {
            name,
            player: caller.clone(),
            seat,
        };
        let outcome = self
            .tables
            .submit(id, &caller, rid, command, None, trace())
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::JoinSeatResponse {
            view: Some(view_to_proto(&outcome)),
        }))
    }

    async fn leave_seat(
        &self,
        request: Request<pb::LeaveSeatRequest>,
    ) -> Result<Response<pb::LeaveSeatResponse>, Status> {
        let caller = caller(&request)?;
        let r = request.into_inner();
        let id = table_id(&r.table, "table")?;
        let rid = request_id(&r.request_id)?;
        let command = TableCommand::Leave {
            player: caller.clone(),
        };
        self.tables
            .submit(id, &caller, rid, command, None, trace())
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::LeaveSeatResponse {}))
    }

    async fn get_seat_view(
        &self,
        request: Request<pb::GetSeatViewRequest>,
    ) -> Result<Response<pb::GetSeatViewResponse>, Status> {
        let caller = caller(&request)?;
        let id = table_id(&request.get_ref().table, "table")?;
        let form = view_form(request.get_ref().view_form)?;
        let freshness = match request.get_ref().min_version {
            None => Freshness::Latest,
            Some(v) => Freshness::AtLeast(version_arg(v, "min_version")?),
        };
        let outcome = self
            .tables
            .read_fresh(id, &caller, freshness)
            .await
            .map_err(status_of)?;
        if outcome.seat.is_none() {
            return Err(status_of(TableError::NotSeated.into()));
        }
        let mut view = view_in(&outcome, form);
        view.summary = Some(self.table_with_presence(&outcome.summary).await);
        Ok(Response::new(pb::GetSeatViewResponse { view: Some(view) }))
    }

    async fn submit_command(
        &self,
        request: Request<pb::SubmitCommandRequest>,
    ) -> Result<Response<pb::SubmitCommandResponse>, Status> {
        let caller = caller(&request)?;
        let r = request.into_inner();
        not_too_large(&r)?;
        let id = table_id(&r.table, "table")?;
        let rid = request_id(&r.request_id)?;
        let form = view_form(r.view_form)?;
        let command = command_from_proto(r.command.as_ref())?;
        let expected = r
            .expected_version
            .map(|v| version_arg(v, "expected_version"))
            .transpose()?;
        let submitted = self
            .tables
            .submit(
                id,
                &caller,
                rid,
                TableCommand::Play {
                    player: caller.clone(),
                    command,
                },
                expected,
                trace(),
            )
            .await;
        // The player showed up at a table that exists and where they sit (a command the rules
        // refused counts): never a presence record for an unknown table or a stranger.
        match &submitted {
            Ok(outcome) if outcome.seat.is_some() => self.seen(id, &caller),
            Err(ServiceError::Table(TableError::Rule(_))) => self.seen(id, &caller),
            _ => {}
        }
        if let Err(ServiceError::Table(TableError::Rule(_))) = &submitted {
            // Refused, but the player is back: a bot holding the seat gives it up.
            let _ = self.tables.reclaim(id, &caller).await;
        }
        let outcome = submitted.map_err(status_of)?;
        Ok(Response::new(pb::SubmitCommandResponse {
            version: outcome.summary.version as i64,
            penalties: penalties_of(&outcome.events),
            events: outcome
                .events
                .iter()
                .map(|(_, shown)| event_to_proto(shown, &outcome.summary.table_id))
                .collect::<Result<_, _>>()?,
            view: Some(view_in(&outcome, form)),
        }))
    }

    async fn list_legal_actions(
        &self,
        request: Request<pb::ListLegalActionsRequest>,
    ) -> Result<Response<pb::ListLegalActionsResponse>, Status> {
        let caller = caller(&request)?;
        let id = table_id(&request.get_ref().table, "table")?;
        let (version, hints) = self.tables.hints(id, &caller).await.map_err(status_of)?;
        let actions = hints
            .map(|h| {
                // The engine says what each action charges the caller if submitted now.
                h.actions()
                    .filter_map(|(c, penalty)| {
                        Some(pb::LegalAction {
                            command: Some(command_to_proto(c)?),
                            hint: hint_text(c),
                            penalty_points: penalty,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Response::new(pb::ListLegalActionsResponse {
            version: version as i64,
            actions,
        }))
    }

    type WatchTableStream = WatchStream;

    async fn watch_table(
        &self,
        request: Request<pb::WatchTableRequest>,
    ) -> Result<Response<Self::WatchTableStream>, Status> {
        let caller = caller(&request)?;
        let r = request.into_inner();
        let id = table_id(&r.table, "table")?;
        let after = version_arg(r.after_version, "after_version")?;
        match self.tables.reclaim(id, &caller).await {
            Ok(()) | Err(ServiceError::Table(_)) => {}
            Err(e) => return Err(status_of(e)),
        }
        let first = self.tables.read(id, &caller).await.map_err(status_of)?;
        admit_reader(&first, &caller)?;
        // Only a stream of a table that exists, to a caller it admits, counts against the limit.
        let slot = self.streams.take(&caller)?;
        let rx = self
            .tables
            .watch(id, &caller, after)
            .await
            .map_err(status_of)?;
        let presence = self
            .live
            .as_ref()
            .map(|(presences, _)| presences.streaming(id, &caller));
        use tonic::codegen::tokio_stream::StreamExt;
        let table_text = id.to_string();
        let stream = ReceiverStream::new(rx).map(move |update| {
            let _open = (&presence, &slot);
            let update = update.map_err(status_of)?;
            let (version, time, kind) = match update {
                Update::Snapshot(outcome) => (
                    outcome.summary.version,
                    None,
                    pb::table_update::Kind::Snapshot(view_to_proto(&outcome)),
                ),
                Update::Event {
                    version,
                    time,
                    shown,
                } => (
                    version,
                    Some(timestamp(time)),
                    pb::table_update::Kind::Event(event_to_proto(&shown, &table_text)?),
                ),
                Update::Heartbeat { version } => (
                    version,
                    Some(timestamp(Utc::now())),
                    pb::table_update::Kind::Heartbeat(pb::Heartbeat {}),
                ),
            };
            Ok(pb::WatchTableResponse {
                update: Some(pb::TableUpdate {
                    version: version as i64,
                    time,
                    kind: Some(kind),
                }),
            })
        });
        Ok(Response::new(Box::pin(stream)))
    }

    async fn send_heartbeat(
        &self,
        request: Request<pb::SendHeartbeatRequest>,
    ) -> Result<Response<pb::SendHeartbeatResponse>, Status> {
        let caller = caller(&request)?;
        let id = table_id(&request.get_ref().table, "table")?;
        let (presences, _) = self.live()?;
        let outcome = self.tables.read(id, &caller).await.map_err(status_of)?;
        let seat = outcome
            .seat
            .ok_or_else(|| status_of(TableError::NotSeated.into()))?;
        presences
            .touch(id, &caller, Seen::Heartbeat)
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, "cannot record presence");
                status::error(
                    Reason::DependencyUnavailable,
                    "presence is not available now; send the next heartbeat as usual",
                )
            })?;
        let s = &outcome.summary;
        let states = presences
            .of_seats(id, &s.seats, &s.substituted)
            .await
            .unwrap_or([Presence::Unknown; 4]);
        Ok(Response::new(pb::SendHeartbeatResponse {
            presence: presence_to_proto(states[seat as usize]) as i32,
        }))
    }

    async fn send_chat_message(
        &self,
        request: Request<pb::SendChatMessageRequest>,
    ) -> Result<Response<pb::SendChatMessageResponse>, Status> {
        let caller = caller(&request)?;
        let r = request.into_inner();
        not_too_large(&r)?;
        let id = table_id(&r.table, "table")?;
        let rid = request_id(&r.request_id)?;
        fields::text("text", &r.text)?;
        let partner = match pb::ChatChannel::try_from(r.channel) {
            Ok(pb::ChatChannel::Table) => false,
            Ok(pb::ChatChannel::Partner) => true,
            _ => {
                return Err(status::invalid_argument(
                    Reason::MissingField,
                    "channel",
                    "name the channel: CHAT_CHANNEL_TABLE or CHAT_CHANNEL_PARTNER",
                ));
            }
        };
        let (_, chat) = self.live()?;
        let table = self.tables.state(id).await.map_err(status_of)?;
        let seat = table
            .seat_of(&caller)
            .ok_or_else(|| status_of(TableError::NotSeated.into()))?;
        self.seen(id, &caller);
        let message = chat
            .send(
                id,
                &caller,
                seat,
                table.rules.partners,
                partner,
                rid,
                &r.text,
            )
            .await
            .map_err(chat_status)?;
        Ok(Response::new(pb::SendChatMessageResponse {
            message: Some(chat_to_proto(&message)),
        }))
    }

    type WatchChatStream =
        Pin<Box<dyn Stream<Item = Result<pb::WatchChatResponse, Status>> + Send>>;

    async fn watch_chat(
        &self,
        request: Request<pb::WatchChatRequest>,
    ) -> Result<Response<Self::WatchChatStream>, Status> {
        let caller = caller(&request)?;
        let id = table_id(&request.get_ref().table, "table")?;
        let (_, chat) = self.live()?;
        let seat = self
            .tables
            .seat_of(id, &caller)
            .await
            .map_err(status_of)?
            .ok_or_else(|| status_of(TableError::NotSeated.into()))?;
        // Only a stream of a table that exists, to a seated caller, counts against the limit.
        let slot = self.streams.take(&caller)?;
        let tables = self.tables.clone();
        let seat_now: SeatNow = std::sync::Arc::new(move || {
            let (tables, caller) = (tables.clone(), caller.clone());
            Box::pin(async move { tables.seat_of(id, &caller).await.map_err(|e| e.to_string()) })
        });
        let rx = chat.watch(id, seat, seat_now).await.map_err(chat_status)?;
        use tonic::codegen::tokio_stream::StreamExt;
        let stream = ReceiverStream::new(rx).map(move |m| {
            let _open = &slot;
            Ok(pb::WatchChatResponse {
                message: Some(chat_to_proto(&m.map_err(chat_status)?)),
            })
        });
        Ok(Response::new(Box::pin(stream)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_without_a_wire_form_is_internal_not_a_panic() {
        let deal = Shown::Public {
            event: TableEvent::HandDealt {
                hand_number: 1,
                first: 0,
                indicator: "R1".parse().unwrap(),
                seed_sha256: String::new(),
            },
        };
        let e = event_to_proto(&deal, "t").unwrap_err();
        assert_eq!(e.code(), Code::Internal);
        let ended = Shown::Public {
            event: TableEvent::Played {
                hand_number: 1,
                event: Event::HandEnded {
                    end: okey_rules::HandEnd {
                        outcome: HandOutcome::PileEmpty,
                        winner: None,
                        multiplier: 1,
                        scores: [0; 4],
                    },
                },
                first_meld: None,
                noted: Default::default(),
            },
        };
        assert_eq!(
            event_to_proto(&ended, "t").unwrap_err().code(),
            Code::Internal
        );
    }
}
