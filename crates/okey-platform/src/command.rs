//! The engine's commands in their wire form (`okey.v1.Command`): one conversion for everything
//! that sends or shows one — the table service (the commands a seat may send, the seat views),
//! `okeyctl demo` (a bot plays the guest's seat through the public API) and the tests and benches
//! that play — so a command is written the same way everywhere.

use okey_proto::v1 as pb;
use okey_rules::{Command, MeldTile};

/// Melds as the wire lists them: each meld's tiles by their text (`R7`, `J` for a false joker).
pub fn meld_tiles(melds: &[Vec<MeldTile>]) -> Vec<pb::MeldTiles> {
    melds
        .iter()
        .map(|m| pb::MeldTiles {
            tiles: m.iter().map(ToString::to_string).collect(),
        })
        .collect()
}

/// An engine command as a wire command; `None` for the timeout, which only the server plays.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_written_with_their_tiles_as_text_and_the_timeout_is_not() {
        let tile: okey_rules::Tile = "R7".parse().unwrap();
        let melds: Vec<Vec<MeldTile>> = vec![
            ["R5", "R6", "R7"]
                .iter()
                .map(|t| t.parse().unwrap())
                .collect(),
        ];
        let wire = |c: Command| command_to_proto(&c).and_then(|c| c.command);
        use pb::command::Command as C;
        assert_eq!(
            wire(Command::Discard { tile }),
            Some(C::Discard(pb::DiscardCommand { tile: "R7".into() }))
        );
        assert_eq!(
            wire(Command::Open {
                melds: melds.clone()
            }),
            Some(C::Open(pb::OpenCommand {
                melds: vec![pb::MeldTiles {
                    tiles: vec!["R5".into(), "R6".into(), "R7".into()]
                }]
            }))
        );
        assert_eq!(
            wire(Command::Add {
                meld: 2,
                tiles: melds[0][..1].to_vec()
            }),
            Some(C::Add(pb::AddCommand {
                meld: 2,
                tiles: vec!["R5".into()]
            }))
        );
        assert_eq!(wire(Command::Draw), Some(C::Draw(pb::DrawCommand {})));
        assert_eq!(command_to_proto(&Command::Timeout), None);
    }
}
