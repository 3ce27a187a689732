//! Who sits in a seat, in its wire form (`okey.v1.PlayerSummary`): one conversion for every
//! service that shows a seat's occupant — the table (its seats), scoring (a match's seats) and
//! matchmaking (a started room's members) — so a bot is shown everywhere by the name the table
//! seats it under (`bots/{level}-{seat}`, `okey_bots::Level::occupant`) and the same display
//! name, and a person by the display name they sat down with.

use okey_bots::Level;
use okey_proto::v1 as pb;
use okey_rules::Seat;

/// The display name of a bot of `level` (`strong bot`).
pub fn bot_display_name(level: Level) -> String {
    format!("{level} bot")
}

/// A seat's occupant as others see it: a bot (`bots/{level}-{seat}`) by its level, a person
/// (`players/{id}`) by the display name they sat down with (empty while it is not known: never
/// the player id).
pub fn player_summary(occupant: &str, name: Option<&str>) -> pb::PlayerSummary {
    let bot = Level::of_occupant(occupant);
    pb::PlayerSummary {
        player: occupant.to_owned(),
        display_name: match bot {
            Some(level) => bot_display_name(level),
            None => name.unwrap_or_default().to_owned(),
        },
        avatar_ref: String::new(),
        bot: bot.is_some(),
    }
}

/// The level of the bot the table seats for a wire `BotLevel`: the easy bot for EASY, the
/// strongest for the default, MEDIUM and HARD (`common.proto`, `BotLevel`).
pub fn bot_level_from_proto(level: pb::BotLevel) -> Level {
    match level {
        pb::BotLevel::Easy => Level::Easy,
        pb::BotLevel::Unspecified | pb::BotLevel::Medium | pb::BotLevel::Hard => Level::Strong,
    }
}

/// The bot a table created with a bot of wire level `level` in `seat` seats there, as others see
/// it (what the table itself shows for that seat).
pub fn bot_summary(level: pb::BotLevel, seat: Seat) -> pb::PlayerSummary {
    player_summary(&bot_level_from_proto(level).occupant(seat), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bot_is_shown_by_its_seat_name_and_level_and_a_person_by_their_name() {
        assert_eq!(
            bot_summary(pb::BotLevel::Easy, 2),
            pb::PlayerSummary {
                player: "bots/easy-2".into(),
                display_name: "easy bot".into(),
                avatar_ref: String::new(),
                bot: true,
            }
        );
        for level in [
            pb::BotLevel::Unspecified,
            pb::BotLevel::Medium,
            pb::BotLevel::Hard,
        ] {
            let bot = bot_summary(level, 1);
            assert_eq!(
                (bot.player.as_str(), bot.display_name.as_str(), bot.bot),
                ("bots/strong-1", "strong bot", true),
                "{level:?}"
            );
        }
        let person = player_summary("players/7", Some("Ayşe"));
        assert_eq!(
            (
                person.player.as_str(),
                person.display_name.as_str(),
                person.bot
            ),
            ("players/7", "Ayşe", false)
        );
        assert_eq!(player_summary("players/7", None).display_name, "");
    }
}
