//! The one mapping from every error the service's layers return to a `tonic::Status`, through
//! `okey_platform::status` (so each reason goes with its one documented code).

use okey_platform::status::{self, Reason};
use okey_rules::RuleError;
use okey_rules::meld::MeldError;
use tonic::{Code, Status};

use crate::chat::ChatError;
use crate::domain::TableError;
use crate::service::ServiceError;

/// Everything a call can fail with below the transport, as one type for [`status_of`].
#[derive(Debug)]
pub(super) enum Failure {
    /// The application: the table, the store, versions.
    Service(ServiceError),
    /// Chat.
    Chat(ChatError),
    /// Presence could not be recorded (Redis).
    Presence(redis::RedisError),
    /// Presence and chat are not configured on this server.
    LiveOff,
    /// The caller holds as many streams as it may.
    TooManyStreams { max: u64 },
    /// A stored event this build has no wire form for (its name).
    UnexpectedEvent(String),
}

impl From<ServiceError> for Failure {
    fn from(e: ServiceError) -> Failure {
        Failure::Service(e)
    }
}

impl From<TableError> for Failure {
    fn from(e: TableError) -> Failure {
        Failure::Service(ServiceError::Table(e))
    }
}

impl From<ChatError> for Failure {
    fn from(e: ChatError) -> Failure {
        Failure::Chat(e)
    }
}

/// How long a caller refused a stream is told to wait (RetryInfo): about the time a client
/// needs to notice one of its streams closed.
const STREAM_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

/// The one mapping from errors to statuses. Internals are logged here, never sent.
pub(super) fn status_of(error: impl Into<Failure>) -> Status {
    match error.into() {
        Failure::Service(e) => service_status(e),
        Failure::Chat(e) => chat_status(e),
        Failure::Presence(e) => {
            tracing::warn!(error = %e, "cannot record presence");
            status::error(
                Reason::DependencyUnavailable,
                "presence is not available now; send the next heartbeat as usual",
            )
        }
        Failure::LiveOff => status::error(
            Reason::DependencyUnavailable,
            "presence and chat are not configured on this server",
        ),
        Failure::TooManyStreams { max } => status::retry_after(
            Reason::TooManyStreams,
            STREAM_RETRY,
            format!(
                "at most {max} WatchTable and WatchChat streams per caller are open at once: \
                 close one and try again"
            ),
        ),
        Failure::UnexpectedEvent(what) => {
            tracing::error!(event = what, "an event has no wire form here");
            status::error(
                Reason::UnexpectedEvent,
                "the server cannot show a stored event; retry later",
            )
        }
    }
}

fn service_status(error: ServiceError) -> Status {
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
        e @ ServiceError::InvalidPageToken => {
            status::invalid_argument(Reason::InvalidPageToken, "page_token", e.to_string())
        }
        ServiceError::History(e) => {
            tracing::error!(error = %e, "a stored hand cannot be shown");
            status::internal()
        }
        ServiceError::Store(e) => {
            tracing::error!(error = %e, "event store failed");
            status::error(
                Reason::DependencyUnavailable,
                "the event store is not available; retry with the same request_id",
            )
        }
    }
}

fn chat_status(error: ChatError) -> Status {
    match error {
        e @ ChatError::Empty { .. } => {
            status::invalid_argument(Reason::MissingField, "text", e.to_string())
        }
        e @ ChatError::TooLong { .. } => {
            status::invalid_argument(Reason::ChatTooLong, "text", e.to_string())
        }
        e @ ChatError::Unshowable => {
            status::invalid_argument(Reason::InvalidText, "text", e.to_string())
        }
        e @ ChatError::TooFrequent { retry_after, .. } => {
            status::retry_after(Reason::ChatRateLimited, retry_after, e.to_string())
        }
        e @ ChatError::NoPartners => status::rule_violation(
            Reason::NoPartners,
            Reason::NoPartners.as_str(),
            e.to_string(),
        ),
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
        TableError::HandInProgress(_) => Reason::HandInProgress,
        TableError::NotInHand(_) => Reason::NotInHand,
        TableError::NoSuchHand(_) => Reason::HandNotFound,
        TableError::ClientSeedTooLate(_) => Reason::ClientSeedTooLate,
        TableError::ClientSeedNotOpen(_) => Reason::ClientSeedNotOpen,
        TableError::ClientSeedAlreadySent(_) => Reason::ClientSeedAlreadySent,
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
