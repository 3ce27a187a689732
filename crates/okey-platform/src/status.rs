//! Builders for `tonic::Status` that follow the error model of `proto/okey/v1/common.proto`:
//! a gRPC code plus `google.rpc.ErrorInfo` (domain `okey.v1`, a stable reason code) and, where it
//! helps, `BadRequest`, `PreconditionFailure` or `RetryInfo`. Each service maps its own domain
//! errors through these, in exactly one place.
//!
//! Every reason a service can send is a [`Reason`], and each reason has exactly one gRPC code, so
//! the code and the reason of an error always agree; [`Reason::ALL`] lists them for the test that
//! holds `common.proto`'s reason table to the code.

use std::collections::HashMap;
use std::time::Duration;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

/// `ErrorInfo.domain` of every okey error.
pub const ERROR_DOMAIN: &str = "okey.v1";

macro_rules! reasons {
    ($($(#[$doc:meta])* $variant:ident = $text:literal => $code:ident,)*) => {
        /// A reason code (`ErrorInfo.reason`) with the one gRPC code it is sent with, as
        /// `common.proto` documents them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Reason {
            $($(#[$doc])* $variant,)*
        }

        impl Reason {
            /// Every reason, in the order of `common.proto`'s table.
            pub const ALL: &[Reason] = &[$(Reason::$variant,)*];

            /// The wire spelling (lower_snake_case).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Reason::$variant => $text,)*
                }
            }

            /// The gRPC code this reason is always sent with.
            pub fn code(self) -> Code {
                match self {
                    $(Reason::$variant => Code::$code,)*
                }
            }
        }
    };
}

reasons! {
    // Request shape.
    /// A string is not tile text.
    InvalidTile = "invalid_tile" => InvalidArgument,
    /// A seat number is not 0–3, a seat is assigned twice, or a player is given two seats.
    InvalidSeat = "invalid_seat" => InvalidArgument,
    /// A required field is empty.
    MissingField = "missing_field" => InvalidArgument,
    /// The request is larger than the service accepts.
    RequestTooLarge = "request_too_large" => InvalidArgument,
    /// The `request_id` is empty, longer than 64 characters or holds a control character.
    InvalidRequestId = "invalid_request_id" => InvalidArgument,
    /// A string field holds text the service cannot keep (a NUL character).
    InvalidText = "invalid_text" => InvalidArgument,
    /// The request bytes do not decode as the RPC's message (invalid UTF-8 in a string, a wrong
    /// wire type, truncated bytes).
    MalformedRequest = "malformed_request" => InvalidArgument,
    /// A resource name is not of the form the field needs (`players/{player}`).
    InvalidName = "invalid_name" => InvalidArgument,
    /// A table name is not `tables/{uuid}`.
    InvalidTable = "invalid_table" => InvalidArgument,
    /// A table version is negative.
    InvalidVersion = "invalid_version" => InvalidArgument,
    /// A hand number is not 1 or more.
    InvalidHandNumber = "invalid_hand_number" => InvalidArgument,
    /// A client seed that is not 32 bytes as 64 hex digits.
    InvalidClientSeed = "invalid_client_seed" => InvalidArgument,
    /// A `view_form` this server does not know, or NONE where a view is asked for.
    InvalidViewForm = "invalid_view_form" => InvalidArgument,
    /// A rule set names an unknown preset or an impossible value.
    InvalidRules = "invalid_rules" => InvalidArgument,
    /// A bot level this server does not know.
    InvalidBotLevel = "invalid_bot_level" => InvalidArgument,
    /// A meld number is negative.
    InvalidMeldNumber = "invalid_meld_number" => InvalidArgument,
    /// An open or lay command names no meld.
    NoMelds = "no_melds" => InvalidArgument,
    /// A chat message is longer than the limit.
    ChatTooLong = "chat_too_long" => InvalidArgument,

    // Table rules.
    /// The hand is over.
    HandOver = "hand_over" => FailedPrecondition,
    /// Another seat is on turn.
    NotYourTurn = "not_your_turn" => FailedPrecondition,
    /// Take a tile (draw or the side discard) before acting on the table or discarding.
    TakeFirst = "take_first" => FailedPrecondition,
    /// A tile was already taken this turn.
    AlreadyTook = "already_took" => FailedPrecondition,
    /// The first player's first turn has no draw.
    FirstTurnNoTake = "first_turn_no_take" => FailedPrecondition,
    /// The side discard was given back: draw from the centre pile.
    MustDraw = "must_draw" => FailedPrecondition,
    /// There is no side discard to take.
    SideDiscardUnavailable = "side_discard_unavailable" => FailedPrecondition,
    /// A discarded okey can never be taken.
    OkeyNotTakeable = "okey_not_takeable" => FailedPrecondition,
    /// The side discard is playable on the table, so it cannot be taken.
    PlayableNotTakeable = "playable_not_takeable" => FailedPrecondition,
    /// A pair opener may not take the side discard at this table.
    PairsTakeDiscard = "pairs_take_discard" => FailedPrecondition,
    /// No side discard is held to return.
    NoSideDiscardHeld = "no_side_discard_held" => FailedPrecondition,
    /// The side discard taken this turn must be used on the table before discarding.
    SideDiscardNotUsed = "side_discard_not_used" => FailedPrecondition,
    /// The side discard taken this turn must be part of the opening.
    SideDiscardLeftOut = "side_discard_left_out" => FailedPrecondition,
    /// After a wrong opening the only move left this turn is to discard.
    OnlyDiscardLeft = "only_discard_left" => FailedPrecondition,
    /// A named tile is not in the seat's rack.
    TileNotInRack = "tile_not_in_rack" => FailedPrecondition,
    /// The seat has already opened.
    AlreadyOpened = "already_opened" => FailedPrecondition,
    /// Open before laying, adding or retrieving.
    NotOpened = "not_opened" => FailedPrecondition,
    /// No lay, add or retrieve in the turn the seat opened, at this table.
    ActAfterOpeningSameTurn = "act_after_opening_same_turn" => FailedPrecondition,
    /// An opening is all runs and sets or all pairs.
    MixedOpening = "mixed_opening" => FailedPrecondition,
    /// A newly laid meld has more than 5 tiles.
    MeldTooLong = "meld_too_long" => FailedPrecondition,
    /// A meld of okeys only.
    MeldNeedsRealTile = "meld_needs_real_tile" => FailedPrecondition,
    /// A reading (`=Y13`) given to a tile that is not this hand's okey.
    ReadingOnRealTile = "reading_on_real_tile" => FailedPrecondition,
    /// A meld is neither a run nor a set.
    InvalidMeld = "invalid_meld" => FailedPrecondition,
    /// A meld of a pair opening is not a pair.
    InvalidPair = "invalid_pair" => FailedPrecondition,
    /// The tiles cannot be added to that table meld.
    CannotAdd = "cannot_add" => FailedPrecondition,
    /// The okey cannot be retrieved with those tiles.
    CannotRetrieve = "cannot_retrieve" => FailedPrecondition,
    /// A seat that opened with melds lays runs and sets, not pairs.
    MeldOpenerLaysMelds = "meld_opener_lays_melds" => FailedPrecondition,
    /// A seat that opened with pairs lays pairs only.
    PairOpenerLaysPairs = "pair_opener_lays_pairs" => FailedPrecondition,
    /// The move would empty the rack: one tile is kept for the closing discard.
    RackWouldBeEmpty = "rack_would_be_empty" => FailedPrecondition,
    /// The named table meld does not exist.
    NoSuchMeld = "no_such_meld" => FailedPrecondition,
    /// A pair opener added more tiles this turn than the table allows.
    PairOpenerAddLimit = "pair_opener_add_limit" => FailedPrecondition,
    /// The opening is below the threshold and in-play penalties are off.
    OpeningBelowThreshold = "opening_below_threshold" => FailedPrecondition,
    /// Playable discards are charged automatically at this table: nothing to call.
    NotCalledMode = "not_called_mode" => FailedPrecondition,
    /// There is no discard to call.
    NoCallPossible = "no_call_possible" => FailedPrecondition,
    /// A call comes before taking a tile.
    CallAfterTaking = "call_after_taking" => FailedPrecondition,
    /// The centre pile is empty.
    PileEmpty = "pile_empty" => FailedPrecondition,
    /// The seat is taken.
    SeatTaken = "seat_taken" => FailedPrecondition,
    /// Every seat is taken.
    TableFull = "table_full" => FailedPrecondition,
    /// Seats are still free: the match has not started.
    MatchNotStarted = "match_not_started" => FailedPrecondition,
    /// The match is over.
    MatchOver = "match_over" => FailedPrecondition,
    /// The match is being played: the seat cannot be left now.
    MatchInProgress = "match_in_progress" => FailedPrecondition,
    /// A command only the server plays (a turn timeout).
    ServerOnly = "server_only" => FailedPrecondition,
    /// No bot plays that seat.
    NotBotSeat = "not_bot_seat" => FailedPrecondition,
    /// A deadline of a turn that is over.
    StaleTimeout = "stale_timeout" => FailedPrecondition,
    /// A partner message at a table without partners.
    NoPartners = "no_partners" => FailedPrecondition,
    /// A client seed for a hand already dealt.
    ClientSeedTooLate = "client_seed_too_late" => FailedPrecondition,
    /// Client seeds are taken for the next hand only, once its server seed is committed.
    ClientSeedNotOpen = "client_seed_not_open" => FailedPrecondition,
    /// The seat already sent its client seed for that hand.
    ClientSeedAlreadySent = "client_seed_already_sent" => FailedPrecondition,
    /// The hand is still being played: its full history is served to its players once it has
    /// ended.
    HandInProgress = "hand_in_progress" => FailedPrecondition,
    /// The caller does not sit at this table.
    NotSeated = "not_seated" => PermissionDenied,
    /// Only a private room's members may sit at its table (or watch it, unless spectators are
    /// allowed; support staff always may).
    NotTableMember = "not_table_member" => PermissionDenied,
    /// The caller did not sit in the hand (and is not support or an analyst): its full history is
    /// not theirs.
    NotInHand = "not_in_hand" => PermissionDenied,
    /// A table origin this server does not know.
    InvalidOrigin = "invalid_origin" => InvalidArgument,
    /// A chat channel this server does not know.
    InvalidChannel = "invalid_channel" => InvalidArgument,
    /// No such table, or not visible to the caller.
    TableNotFound = "table_not_found" => NotFound,
    /// The hand has not been dealt at the table.
    HandNotFound = "hand_not_found" => NotFound,
    /// The table moved past `expected_version`, or another change to it was being made.
    VersionConflict = "version_conflict" => Aborted,
    /// A version the table has not reached yet.
    VersionAhead = "version_ahead" => OutOfRange,
    /// Too many chat messages in the window.
    ChatRateLimited = "chat_rate_limited" => ResourceExhausted,
    /// Too many WatchTable and WatchChat streams of one caller open at once.
    TooManyStreams = "too_many_streams" => ResourceExhausted,

    // Accounts and tokens.
    /// Wrong username or password (never says which).
    InvalidCredentials = "invalid_credentials" => Unauthenticated,
    /// The access token has expired.
    TokenExpired = "token_expired" => Unauthenticated,
    /// No token, or a malformed, tampered or unknown one; or an unknown refresh token.
    TokenInvalid = "token_invalid" => Unauthenticated,
    /// A used refresh token was presented again: every session of its sign-in is ended.
    RefreshTokenReused = "refresh_token_reused" => Unauthenticated,
    /// The username belongs to another account.
    UsernameTaken = "username_taken" => AlreadyExists,
    /// A username that is not 3–32 letters, digits, `_` or `-`.
    InvalidUsername = "invalid_username" => InvalidArgument,
    /// A password shorter than 10 characters or longer than 256 bytes.
    WeakPassword = "weak_password" => InvalidArgument,
    /// A display name that is not 1–24 characters.
    InvalidDisplayName = "invalid_display_name" => InvalidArgument,
    /// An avatar reference longer than 256 characters or with control characters.
    InvalidAvatarRef = "invalid_avatar_ref" => InvalidArgument,
    /// An update mask naming a field that cannot be updated.
    InvalidUpdateMask = "invalid_update_mask" => InvalidArgument,
    /// A device id that is not 8–128 characters.
    InvalidDeviceId = "invalid_device_id" => InvalidArgument,
    /// The account is not a guest (it already has a password).
    NotAGuest = "not_a_guest" => PermissionDenied,
    /// Only the player may change their own profile.
    NotYourProfile = "not_your_profile" => PermissionDenied,
    /// The caller lacks the role the call needs.
    RoleRequired = "role_required" => PermissionDenied,
    /// No such player.
    PlayerNotFound = "player_not_found" => NotFound,
    /// Too many wrong passwords for the account or address, too many new guests from the
    /// address, or wrong room codes or passwords.
    TooManyAttempts = "too_many_attempts" => ResourceExhausted,
    /// An unknown service client or a wrong client secret (never says which).
    InvalidClientCredentials = "invalid_client_credentials" => Unauthenticated,

    // Matchmaking.
    /// No such ticket, or it is another player's.
    TicketNotFound = "ticket_not_found" => NotFound,
    /// FindTable with other rules while a ticket is searching.
    TicketOpen = "ticket_open" => FailedPrecondition,
    /// The ticket is matched, expired or already taken into a table.
    TicketClosed = "ticket_closed" => FailedPrecondition,
    /// No room with this code or name, or the caller may not read it.
    RoomNotFound = "room_not_found" => NotFound,
    /// A missing or wrong room password.
    WrongRoomPassword = "wrong_room_password" => PermissionDenied,
    /// The room's four seats are taken.
    RoomFull = "room_full" => FailedPrecondition,
    /// The room's match has started.
    RoomStarted = "room_started" => FailedPrecondition,
    /// The room is closed.
    RoomClosed = "room_closed" => FailedPrecondition,
    /// The room has free seats and was not set to fill them with bots.
    RoomNotFull = "room_not_full" => FailedPrecondition,
    /// Only the room's host may do this.
    NotRoomHost = "not_room_host" => PermissionDenied,
    /// The named player is not in the room.
    NotRoomMember = "not_room_member" => FailedPrecondition,
    /// A room password that is not 4–64 characters.
    InvalidPassword = "invalid_password" => InvalidArgument,
    /// A page size out of range.
    InvalidPageSize = "invalid_page_size" => InvalidArgument,
    /// A page token this server did not give.
    InvalidPageToken = "invalid_page_token" => InvalidArgument,
    /// A standings period this server does not know.
    InvalidPeriod = "invalid_period" => InvalidArgument,
    /// No such match, or the caller did not play it and may not read others'.
    MatchNotFound = "match_not_found" => NotFound,

    // Service.
    /// The RPC is in the contract but not served yet.
    NotImplementedYet = "not_implemented_yet" => Unimplemented,
    /// The called method is not one this service has (a wrong path, service or port).
    UnknownMethod = "unknown_method" => Unimplemented,
    /// The request is compressed with an encoding this server does not decode.
    UnsupportedCompression = "unsupported_compression" => Unimplemented,
    /// A dependency (store, Redis, NATS) is unavailable.
    DependencyUnavailable = "dependency_unavailable" => Unavailable,
    /// The server is stopping (a deploy): its open streams end; call again.
    ServerStopping = "server_stopping" => Unavailable,
    /// The call ran out of time: its `grpc-timeout`, or the server's longest call.
    DeadlineExceeded = "deadline_exceeded" => DeadlineExceeded,
    /// A bug on the server.
    Internal = "internal" => Internal,
    /// The stored answer to a handled request cannot be read by this build.
    StoredAnswerUnreadable = "stored_answer_unreadable" => Internal,
    /// A stored event this build has no wire form for.
    UnexpectedEvent = "unexpected_event" => Internal,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn with_info(reason: Reason, metadata: HashMap<String, String>) -> ErrorDetails {
    ErrorDetails::with_error_info(reason.as_str(), ERROR_DOMAIN, metadata)
}

/// Whether `status` is a refusal for `reason` (its ErrorInfo names it, in our domain): how a
/// client of another service tells one refusal from another without reading messages.
pub fn is(status: &Status, reason: Reason) -> bool {
    status
        .get_error_details()
        .error_info()
        .is_some_and(|info| info.reason == reason.as_str() && info.domain == ERROR_DOMAIN)
}

/// An error with `reason`, its code and ErrorInfo (no other details).
pub fn error(reason: Reason, message: impl Into<String>) -> Status {
    with_metadata(reason, HashMap::new(), message)
}

/// With UNAVAILABLE and RESOURCE_EXHAUSTED `common.proto` promises RetryInfo: this is the wait an
/// error of those codes carries when its builder names none ([`retry_after`] names one).
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// An error with `reason`, its code and ErrorInfo carrying `metadata` (and RetryInfo of
/// [`DEFAULT_RETRY_AFTER`] when the code is UNAVAILABLE or RESOURCE_EXHAUSTED).
pub fn with_metadata(
    reason: Reason,
    metadata: HashMap<String, String>,
    message: impl Into<String>,
) -> Status {
    let mut details = with_info(reason, metadata);
    if matches!(reason.code(), Code::Unavailable | Code::ResourceExhausted) {
        details.set_retry_info(Some(DEFAULT_RETRY_AFTER));
    }
    Status::with_error_details(reason.code(), message.into(), details)
}

/// A well-formed request that the rules forbid now (a FAILED_PRECONDITION reason), naming the
/// rule in ErrorInfo and PreconditionFailure.
pub fn rule_violation(reason: Reason, rule: &str, description: impl Into<String>) -> Status {
    let description = description.into();
    let mut details = with_info(
        reason,
        HashMap::from([("rule".to_owned(), rule.to_owned())]),
    );
    details.add_precondition_failure_violation("rule", rule, description.clone());
    Status::with_error_details(reason.code(), description, details)
}

/// A malformed request (an INVALID_ARGUMENT reason), naming the bad field in BadRequest.
pub fn invalid_argument(reason: Reason, field: &str, description: impl Into<String>) -> Status {
    let description = description.into();
    let mut details = with_info(reason, HashMap::new());
    details.add_bad_request_violation(field, description.clone());
    Status::with_error_details(reason.code(), description, details)
}

/// A refusal the client may try again after `retry_after` (RESOURCE_EXHAUSTED or UNAVAILABLE
/// reasons), with RetryInfo.
pub fn retry_after(reason: Reason, retry_after: Duration, message: impl Into<String>) -> Status {
    let mut details = with_info(reason, HashMap::new());
    details.set_retry_info(Some(retry_after));
    Status::with_error_details(reason.code(), message.into(), details)
}

/// A bug on the server: INTERNAL `internal`, saying nothing of the cause (log it before).
pub fn internal() -> Status {
    error(Reason::Internal, "internal error")
}

/// An RPC of the contract that this server does not serve yet: UNIMPLEMENTED,
/// `not_implemented_yet`, saying which work item brings it.
pub fn not_implemented_yet(rpc: &str, arrives_with: &str) -> Status {
    with_metadata(
        Reason::NotImplementedYet,
        HashMap::from([("rpc".to_owned(), rpc.to_owned())]),
        format!(
            "{rpc} is part of the okey.v1 contract but not served yet; it arrives with {arrives_with}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn a_rule_violation_carries_reason_and_rule() {
        let status = rule_violation(Reason::OpeningBelowThreshold, "threshold", "85 < 101");
        assert_eq!(status.code(), Code::FailedPrecondition);
        let details = status.get_error_details();
        let info = details.error_info().expect("ErrorInfo");
        assert_eq!(info.reason, "opening_below_threshold");
        assert_eq!(info.domain, ERROR_DOMAIN);
        let failure = details.precondition_failure().expect("PreconditionFailure");
        assert_eq!(failure.violations[0].subject, "threshold");
    }

    #[test]
    fn a_bad_argument_names_the_field() {
        let status = invalid_argument(Reason::InvalidTile, "command.discard.tile", "no tile X9");
        assert_eq!(status.code(), Code::InvalidArgument);
        let details = status.get_error_details();
        assert_eq!(
            details.bad_request().unwrap().field_violations[0].field,
            "command.discard.tile"
        );
    }

    /// `common.proto`'s reason table: reason → the code it documents.
    fn documented_reasons() -> BTreeMap<String, String> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../proto/okey/v1/common.proto"
        );
        let text = std::fs::read_to_string(path).expect("common.proto");
        let mut documented = BTreeMap::new();
        for line in text.lines() {
            // Rows of the reason table: // | `reason` | CODE | when |
            let Some(row) = line.trim().strip_prefix("// | `") else {
                continue;
            };
            let mut cells = row.split('|').map(str::trim);
            let reason = cells.next().unwrap().trim_end_matches('`');
            let code = cells.next().unwrap_or_default();
            let earlier = documented.insert(reason.to_owned(), code.to_owned());
            assert!(earlier.is_none(), "common.proto documents `{reason}` twice");
        }
        documented
    }

    /// The proto spelling of a code (`FAILED_PRECONDITION`).
    fn code_name(code: Code) -> String {
        let mut name = String::new();
        for (i, c) in format!("{code:?}").chars().enumerate() {
            if c.is_uppercase() && i > 0 {
                name.push('_');
            }
            name.push(c.to_ascii_uppercase());
        }
        name
    }

    #[test]
    fn common_proto_documents_every_reason_with_its_code_and_no_other() {
        let documented = documented_reasons();
        assert!(documented.len() > 50, "the reason table was not found");
        let mut wrong = Vec::new();
        for reason in Reason::ALL {
            let code = code_name(reason.code());
            match documented.get(reason.as_str()) {
                Some(doc) if *doc == code => {}
                Some(doc) => wrong.push(format!("`{reason}` is sent as {code}, documented {doc}")),
                None => wrong.push(format!("`{reason}` ({code}) is not documented")),
            }
        }
        for reason in documented.keys() {
            if !Reason::ALL.iter().any(|r| r.as_str() == reason) {
                wrong.push(format!("`{reason}` is documented but no service sends it"));
            }
        }
        assert!(
            wrong.is_empty(),
            "common.proto and the code disagree:\n{}",
            wrong.join("\n")
        );
    }

    #[test]
    fn reasons_are_lower_snake_case_and_distinct() {
        let mut seen = std::collections::HashSet::new();
        for reason in Reason::ALL {
            let text = reason.as_str();
            assert!(
                text.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{text}"
            );
            assert!(seen.insert(text), "`{text}` is spelled by two reasons");
        }
    }

    #[test]
    fn builders_send_the_code_of_their_reason() {
        assert_eq!(
            invalid_argument(Reason::InvalidTile, "f", "x").code(),
            Code::InvalidArgument
        );
        assert_eq!(error(Reason::VersionConflict, "x").code(), Code::Aborted);
        let limited = retry_after(Reason::TooManyAttempts, Duration::from_secs(3), "x");
        assert_eq!(limited.code(), Code::ResourceExhausted);
        let details = limited.get_error_details();
        assert_eq!(
            details.retry_info().unwrap().retry_delay,
            Some(Duration::from_secs(3))
        );
        // RetryInfo comes with every UNAVAILABLE and RESOURCE_EXHAUSTED, never with other codes.
        for (status, wait) in [
            (
                error(Reason::DependencyUnavailable, "x"),
                Some(DEFAULT_RETRY_AFTER),
            ),
            (
                error(Reason::ChatRateLimited, "x"),
                Some(DEFAULT_RETRY_AFTER),
            ),
            (error(Reason::TableNotFound, "x"), None),
        ] {
            let retry = status.get_error_details().retry_info().cloned();
            assert_eq!(retry.and_then(|r| r.retry_delay), wait, "{status:?}");
        }
        let bug = internal();
        assert_eq!(bug.code(), Code::Internal);
        assert_eq!(
            bug.get_error_details().error_info().unwrap().reason,
            "internal"
        );
    }
}
