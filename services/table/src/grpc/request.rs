//! Reading requests: the verified caller, each field checked and converted to the domain's types
//! (INVALID_ARGUMENT naming the field for anything malformed, before any store is asked).

use okey_platform::auth::{Caller, Role};
use okey_platform::fields;
use okey_platform::status::{self, Reason};
use okey_proto::v1 as pb;
use okey_rules::{Command, MeldTile, Seat, Tile};
use prost::Message;
use sqlx::types::Uuid;
use tonic::{Request, Status};

use super::MAX_COMMAND_BYTES;
use crate::domain::{Admission, Origin};

/// The player calling, as the platform's authentication layer verified it (`players/{id}`).
pub(super) fn caller<T>(request: &Request<T>) -> Result<String, Status> {
    request
        .extensions()
        .get::<Caller>()
        .map(|c| format!("players/{}", c.player_id))
        .ok_or_else(|| status::error(Reason::TokenInvalid, "no verified caller"))
}

/// Whether the caller is support staff or an admin: they may read any table (a private one
/// without spectators included), as a spectator.
pub(super) fn caller_is_staff<T>(request: &Request<T>) -> bool {
    request
        .extensions()
        .get::<Caller>()
        .is_some_and(|c| c.has_role(Role::Support))
}

/// The display name the caller's token carries, as the authentication layer kept it
/// (`Caller::name`: trimmed, and left out when it is no display name by today's check).
pub(super) fn caller_name<T>(request: &Request<T>) -> Option<String> {
    request
        .extensions()
        .get::<Caller>()
        .and_then(|c| c.name.clone())
}

/// A table version sent in `field`: not negative (`invalid_version`).
pub(super) fn version_arg(value: i64, field: &str) -> Result<u64, Status> {
    u64::try_from(value).map_err(|_| {
        status::invalid_argument(Reason::InvalidVersion, field, "versions are not negative")
    })
}

/// A `hand_number` field: 1 or more.
pub(super) fn hand_number_arg(hand: i32) -> Result<u32, Status> {
    u32::try_from(hand).ok().filter(|h| *h > 0).ok_or_else(|| {
        status::invalid_argument(
            Reason::InvalidHandNumber,
            "hand_number",
            format!("hands are numbered from 1, not {hand}"),
        )
    })
}

/// A client seed: 32 bytes as 64 hex digits (`invalid_client_seed`).
pub(super) fn client_seed_arg(text: &str) -> Result<crate::domain::Seed, Status> {
    crate::domain::seed_of_hex(text).map_err(|_| {
        status::invalid_argument(
            Reason::InvalidClientSeed,
            "seed",
            "a client seed is 32 random bytes written as 64 hex digits",
        )
    })
}

pub(super) fn table_id(name: &str, field: &str) -> Result<Uuid, Status> {
    fields::required(field, name)?;
    name.strip_prefix("tables/")
        .and_then(fields::name_id)
        .ok_or_else(|| {
            status::invalid_argument(
                Reason::InvalidTable,
                field,
                format!(
                    "`{}` is not a table name (tables/{{uuid}})",
                    fields::quoted(name)
                ),
            )
        })
}

pub(super) fn request_id(id: &str) -> Result<&str, Status> {
    fields::request_id(id)
}

pub(super) fn not_too_large(request: &impl Message) -> Result<(), Status> {
    if request.encoded_len() > MAX_COMMAND_BYTES {
        return Err(status::invalid_argument(
            Reason::RequestTooLarge,
            "command",
            format!("requests are limited to {MAX_COMMAND_BYTES} bytes"),
        ));
    }
    Ok(())
}

pub(super) fn seat_arg(seat: i32, field: &str) -> Result<Seat, Status> {
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

/// INVALID_ARGUMENT `invalid_tile`: `text` in `field` is not tile text.
fn not_a_tile(text: &str, field: &str) -> Status {
    status::invalid_argument(
        Reason::InvalidTile,
        field,
        format!("`{}` is not a tile", fields::quoted(text)),
    )
}

/// A tile named by `field`: INVALID_ARGUMENT `missing_field` when empty, `invalid_tile` when not
/// tile text.
pub(super) fn tile_arg(text: &str, field: &str) -> Result<Tile, Status> {
    if text.is_empty() {
        return Err(status::invalid_argument(
            Reason::MissingField,
            field,
            format!("{field} names no tile"),
        ));
    }
    text.parse().map_err(|_| not_a_tile(text, field))
}

/// A command's list of tiles, `field`: at least one (an empty list is malformed whatever the
/// game state: INVALID_ARGUMENT `missing_field` naming it), each tile text (a `Tile`, or a
/// `MeldTile` with an okey's reading). A tile's path (`field[j]`) is spelled out only for a
/// refusal: this runs on every command.
fn tiles_arg<T: std::str::FromStr>(tiles: &[String], field: &str) -> Result<Vec<T>, Status> {
    if tiles.is_empty() {
        return Err(status::invalid_argument(
            Reason::MissingField,
            field,
            format!("{field} names no tile"),
        ));
    }
    tiles
        .iter()
        .enumerate()
        .map(|(j, t)| {
            t.parse()
                .map_err(|_| not_a_tile(t, &format!("{field}[{j}]")))
        })
        .collect()
}

pub(super) fn melds_arg(
    melds: &[pb::MeldTiles],
    field: &str,
) -> Result<Vec<Vec<MeldTile>>, Status> {
    // Malformed whatever the game state: refused before the table is looked at.
    if melds.is_empty() {
        return Err(status::invalid_argument(
            Reason::NoMelds,
            &format!("{field}.melds"),
            "name at least one meld",
        ));
    }
    melds
        .iter()
        .enumerate()
        .map(|(i, m)| tiles_arg::<MeldTile>(&m.tiles, &format!("{field}.melds[{i}].tiles")))
        .collect()
}

pub(super) fn meld_number(n: i32, field: &str) -> Result<usize, Status> {
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
                tiles: tiles_arg::<MeldTile>(&a.tiles, "command.add.tiles")?,
            },
            C::RetrieveOkey(r) => Command::Retrieve {
                meld: meld_number(r.meld, "command.retrieve_okey.meld")?,
                tiles: tiles_arg::<Tile>(&r.tiles, "command.retrieve_okey.tiles")?,
            },
            C::Discard(d) => Command::Discard {
                tile: tile_arg(&d.tile, "command.discard.tile")?,
            },
            C::CallPlayable(_) => Command::CallPlayable,
        },
    )
}

/// Where a new table comes from and whom it admits, as the creator asked; the role `matchmaker`
/// may make only quick-play and private-room tables.
pub(super) fn admission_from_proto(
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
        Err(_) => {
            return Err(status::invalid_argument(
                Reason::InvalidOrigin,
                "origin",
                "unknown origin",
            ));
        }
        Ok(pb::TableOrigin::Unspecified) if matchmaker => {
            return Err(status::invalid_argument(
                Reason::MissingField,
                "origin",
                "say where the table comes from: quick play or a private room",
            ));
        }
        Ok(pb::TableOrigin::Unspecified) => Origin::Operator,
    };
    let members = r
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| fields::player(&format!("members[{i}]"), m))
        .collect::<Result<_, _>>()?;
    Ok(Admission {
        origin,
        members,
        spectators: r.spectators_allowed.unwrap_or(true),
    })
}

/// A wire bot level as the server's: easy, or the strong bot for medium, hard and unspecified
/// (the server's default); a number `BotLevel` does not name is INVALID_ARGUMENT
/// `invalid_bot_level`.
pub(super) fn bot_level_from_proto(level: i32, field: &str) -> Result<okey_bots::Level, Status> {
    match pb::BotLevel::try_from(level) {
        // The platform's one mapping, which matchmaking names a room's bots by.
        Ok(level) => Ok(okey_platform::occupant::bot_level_from_proto(level)),
        Err(_) => Err(status::invalid_argument(
            Reason::InvalidBotLevel,
            field,
            format!("{level} is not a BotLevel: send 0 (the default), 1, 2 or 3"),
        )),
    }
}

/// A request's `view_form`, or INVALID_ARGUMENT for a value this server does not know.
pub(super) fn view_form(value: i32) -> Result<pb::SeatViewForm, Status> {
    pb::SeatViewForm::try_from(value).map_err(|_| {
        status::invalid_argument(
            Reason::InvalidViewForm,
            "view_form",
            format!(
                "{value} is not a SeatViewForm: send 0 (both), 1 (typed), 2 (engine) or 3 (none)"
            ),
        )
    })
}
