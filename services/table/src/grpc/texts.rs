//! Every string field of every TableService request, in one place: common.proto's "no string field
//! may hold a NUL character" is checked by the service's dispatch (`impl TableService for
//! TableApi`) before a handler reads any field, so a NUL is INVALID_ARGUMENT `invalid_text`
//! ([`fields::text`]) naming the field by its path in the request (`command.open.melds[1]
//! .tiles[0]`), whatever else the field would be refused for (`invalid_tile`, `invalid_table`,
//! `invalid_page_token`, `invalid_request_id`…).
//!
//! Each message is taken apart field by field, never with `..`: a field added to a request (or to
//! a message one carries) does not compile until it is listed here, walked if it holds text.

use okey_platform::fields;
use okey_proto::v1 as pb;
use tonic::Status;

/// A request whose string fields are all checked ([`fields::text`]).
pub(super) trait Texts {
    /// Nothing, or INVALID_ARGUMENT `invalid_text` naming the first string field (in field order)
    /// that holds a NUL.
    fn texts(&self) -> Result<(), Status>;
}

fn text(field: &str, value: &str) -> Result<(), Status> {
    fields::text(field, value).map(drop)
}

/// A repeated string field: `field[i]`. The field's path is spelled out only for a refusal: this
/// runs on every command, and most hold no NUL.
fn each(field: &str, values: &[String]) -> Result<(), Status> {
    match values.iter().position(|value| value.contains('\0')) {
        None => Ok(()),
        Some(i) => text(&format!("{field}[{i}]"), &values[i]),
    }
}

/// `rules`, a `RuleSet`: its one string field is `preset`.
fn rules(rules: Option<&pb::RuleSet>) -> Result<(), Status> {
    let Some(pb::RuleSet {
        preset,
        threshold: _,
        partners: _,
        run_wraps_after_thirteen: _,
        in_play_penalties: _,
        playable_discard: _,
        act_after_opening_same_turn: _,
        pairs_take_discard: _,
        // A number of hands or a penalty limit: no text.
        match_length: _,
        turn_seconds: _,
    }) = rules
    else {
        return Ok(());
    };
    text("rules.preset", preset)
}

/// `{field}.melds[i].tiles[j]`.
fn melds(field: &str, melds: &[pb::MeldTiles]) -> Result<(), Status> {
    melds
        .iter()
        .enumerate()
        .filter(|(_, pb::MeldTiles { tiles })| tiles.iter().any(|t| t.contains('\0')))
        .try_for_each(|(i, pb::MeldTiles { tiles })| {
            each(&format!("{field}.melds[{i}].tiles"), tiles)
        })
}

/// `command`, a `Command`: the tiles of the one command it holds.
fn command(command: Option<&pb::Command>) -> Result<(), Status> {
    use pb::command::Command as C;
    match command.and_then(|pb::Command { command }| command.as_ref()) {
        None
        | Some(
            C::Draw(pb::DrawCommand {})
            | C::TakeSideDiscard(pb::TakeSideDiscardCommand {})
            | C::ReturnSideDiscard(pb::ReturnSideDiscardCommand {})
            | C::CallPlayable(pb::CallPlayableCommand {}),
        ) => Ok(()),
        Some(C::Open(pb::OpenCommand { melds: m })) => melds("command.open", m),
        Some(C::Lay(pb::LayCommand { melds: m })) => melds("command.lay", m),
        Some(C::Add(pb::AddCommand { meld: _, tiles })) => each("command.add.tiles", tiles),
        Some(C::RetrieveOkey(pb::RetrieveOkeyCommand { meld: _, tiles })) => {
            each("command.retrieve_okey.tiles", tiles)
        }
        Some(C::Discard(pb::DiscardCommand { tile })) => text("command.discard.tile", tile),
    }
}

impl Texts for pb::CreateTableRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::CreateTableRequest {
            request_id,
            rules: rule_set,
            seats,
            empty_seat_bots: _,
            origin: _,
            members,
            spectators_allowed: _,
        } = self;
        text("request_id", request_id)?;
        rules(rule_set.as_ref())?;
        for (
            i,
            pb::SeatAssignment {
                seat: _,
                occupant,
                display_name,
            },
        ) in seats.iter().enumerate()
        {
            text(&format!("seats[{i}].display_name"), display_name)?;
            match occupant {
                Some(pb::seat_assignment::Occupant::Player(player)) => {
                    text(&format!("seats[{i}].player"), player)?
                }
                Some(pb::seat_assignment::Occupant::Bot(_)) | None => {}
            }
        }
        each("members", members)
    }
}

impl Texts for pb::GetTableRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::GetTableRequest { name } = self;
        text("name", name)
    }
}

impl Texts for pb::JoinSeatRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::JoinSeatRequest {
            request_id,
            table,
            seat: _,
        } = self;
        text("request_id", request_id)?;
        text("table", table)
    }
}

impl Texts for pb::LeaveSeatRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::LeaveSeatRequest { request_id, table } = self;
        text("request_id", request_id)?;
        text("table", table)
    }
}

impl Texts for pb::GetSeatViewRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::GetSeatViewRequest {
            table,
            view_form: _,
            min_version: _,
        } = self;
        text("table", table)
    }
}

impl Texts for pb::SubmitCommandRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::SubmitCommandRequest {
            request_id,
            table,
            command: c,
            expected_version: _,
            view_form: _,
        } = self;
        text("request_id", request_id)?;
        text("table", table)?;
        command(c.as_ref())
    }
}

impl Texts for pb::ListLegalActionsRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::ListLegalActionsRequest { table } = self;
        text("table", table)
    }
}

impl Texts for pb::WatchTableRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::WatchTableRequest {
            table,
            after_version: _,
        } = self;
        text("table", table)
    }
}

impl Texts for pb::SendHeartbeatRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::SendHeartbeatRequest { table } = self;
        text("table", table)
    }
}

impl Texts for pb::SendChatMessageRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::SendChatMessageRequest {
            request_id,
            table,
            channel: _,
            text: message,
        } = self;
        text("request_id", request_id)?;
        text("table", table)?;
        text("text", message)
    }
}

impl Texts for pb::WatchChatRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::WatchChatRequest { table } = self;
        text("table", table)
    }
}

impl Texts for pb::GetHandHistoryRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::GetHandHistoryRequest {
            table,
            hand_number: _,
            page_size: _,
            page_token,
        } = self;
        text("table", table)?;
        text("page_token", page_token)
    }
}

impl Texts for pb::ListHandReadsRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::ListHandReadsRequest {
            table,
            page_size: _,
            page_token,
        } = self;
        text("table", table)?;
        text("page_token", page_token)
    }
}

impl Texts for pb::SubmitClientSeedRequest {
    fn texts(&self) -> Result<(), Status> {
        let pb::SubmitClientSeedRequest {
            request_id,
            table,
            hand_number: _,
            seed,
        } = self;
        text("request_id", request_id)?;
        text("table", table)?;
        text("seed", seed)
    }
}

#[cfg(test)]
mod tests {
    use tonic::Code;
    use tonic_types::StatusExt;

    use super::*;

    /// The field a refusal names, after checking it is `invalid_text`.
    fn refused_field(request: &impl Texts) -> String {
        let status = request.texts().unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        let details = status.get_error_details();
        assert_eq!(details.error_info().unwrap().reason, "invalid_text");
        details.bad_request().unwrap().field_violations[0]
            .field
            .clone()
    }

    fn command(command: pb::command::Command) -> pb::SubmitCommandRequest {
        pb::SubmitCommandRequest {
            request_id: "r".into(),
            table: "tables/x".into(),
            command: Some(pb::Command {
                command: Some(command),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_nul_in_any_string_field_is_invalid_text_naming_its_path() {
        use pb::command::Command as C;
        let meld = |tiles: &[&str]| pb::MeldTiles {
            tiles: tiles.iter().map(|t| (*t).to_owned()).collect(),
        };
        for (request, field) in [
            (
                command(C::Discard(pb::DiscardCommand {
                    tile: "R7\0".into(),
                })),
                "command.discard.tile",
            ),
            (
                command(C::Open(pb::OpenCommand {
                    melds: vec![meld(&["R1", "R2", "R3"]), meld(&["K7", "\0"])],
                })),
                "command.open.melds[1].tiles[1]",
            ),
            (
                command(C::Lay(pb::LayCommand {
                    melds: vec![meld(&["\0"])],
                })),
                "command.lay.melds[0].tiles[0]",
            ),
            (
                command(C::Add(pb::AddCommand {
                    meld: 0,
                    tiles: vec!["R1".into(), "R2\0".into()],
                })),
                "command.add.tiles[1]",
            ),
            (
                command(C::RetrieveOkey(pb::RetrieveOkeyCommand {
                    meld: 0,
                    tiles: vec!["\0".into()],
                })),
                "command.retrieve_okey.tiles[0]",
            ),
            (
                pb::SubmitCommandRequest {
                    request_id: "id\0".into(),
                    ..command(C::Draw(pb::DrawCommand {}))
                },
                "request_id",
            ),
            (
                pb::SubmitCommandRequest {
                    table: "tables/\0".into(),
                    ..command(C::Draw(pb::DrawCommand {}))
                },
                "table",
            ),
        ] {
            assert_eq!(refused_field(&request), field);
        }
        assert!(
            command(C::Discard(pb::DiscardCommand { tile: "R7".into() }))
                .texts()
                .is_ok()
        );

        let create = pb::CreateTableRequest {
            request_id: "r".into(),
            rules: Some(pb::RuleSet {
                preset: "cla\0ssic".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(refused_field(&create), "rules.preset");
        let create = pb::CreateTableRequest {
            rules: None,
            seats: vec![
                pb::SeatAssignment {
                    seat: 0,
                    occupant: Some(pb::seat_assignment::Occupant::Bot(1)),
                    ..Default::default()
                },
                pb::SeatAssignment {
                    seat: 1,
                    occupant: Some(pb::seat_assignment::Occupant::Player("players/\0".into())),
                    ..Default::default()
                },
            ],
            ..create
        };
        assert_eq!(refused_field(&create), "seats[1].player");
        let create = pb::CreateTableRequest {
            seats: vec![],
            members: vec!["players/a".into(), "\0".into()],
            ..create
        };
        assert_eq!(refused_field(&create), "members[1]");

        let nul = || "a\0".to_owned();
        assert_eq!(refused_field(&pb::GetTableRequest { name: nul() }), "name");
        assert_eq!(
            refused_field(&pb::GetHandHistoryRequest {
                table: "tables/x".into(),
                page_token: nul(),
                ..Default::default()
            }),
            "page_token"
        );
        assert_eq!(
            refused_field(&pb::ListHandReadsRequest {
                page_token: nul(),
                ..Default::default()
            }),
            "page_token"
        );
        assert_eq!(
            refused_field(&pb::SubmitClientSeedRequest {
                seed: nul(),
                ..Default::default()
            }),
            "seed"
        );
        assert_eq!(
            refused_field(&pb::SendChatMessageRequest {
                text: nul(),
                ..Default::default()
            }),
            "text"
        );
        assert!(
            pb::WatchChatRequest {
                table: "Ayşe 🀄".into()
            }
            .texts()
            .is_ok()
        );
    }
}
