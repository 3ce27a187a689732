//! Absence and the server's plays for a seat: expiries in a row hand a seat to a bot, a reclaim
//! takes it back, bots sitting in seats play through the server command.

use okey_rules::{MatchLength, Preset, RuleSet};

use std::collections::BTreeMap;

use okey_bots::Level;
use okey_rules::{Command, Seat};
use okey_table::{Decision, Table, TableCommand, TableError, TableEvent};

fn table(seats: [Option<String>; 4]) -> Table {
    let rules = RuleSet {
        match_length: MatchLength::Hands(2),
        ..Preset::Classic.rules()
    };
    let d = Table::create(rules, seats, &[7; 32]).unwrap();
    let seeds: BTreeMap<u32, [u8; 32]> = d.seeds.iter().copied().collect();
    Table::replay(&d.events, seeds)
}

fn apply(table: &mut Table, d: Decision) {
    table.apply(&d);
}

fn expire(table: &Table) -> Decision {
    let hand = table.hand.as_ref().unwrap();
    let turn = Some((table.hand_number, hand.turn.number));
    table
        .decide_server(hand.turn.seat, &Command::Timeout, turn, &[1; 32])
        .unwrap()
}

#[test]
fn bot_names_carry_their_level() {
    assert_eq!(Level::Easy.occupant(2), "bots/easy-2");
    assert_eq!(Level::of_occupant("bots/strong-1"), Some(Level::Strong));
    assert_eq!(Level::of_occupant("players/bots"), None);
}

#[test]
fn three_expiries_in_a_row_hand_the_seat_to_a_bot_and_a_reclaim_takes_it_back() {
    let people = ["a", "b", "c", "d"].map(|p| Some(format!("players/{p}")));
    let mut t = table(people);
    let first = t.hand.as_ref().unwrap().turn.seat;
    let mut handed = None;
    // Every seat times out each turn: the first seat's third expiry hands it over.
    for _ in 0..12 {
        let d = expire(&t);
        if let Some(e @ TableEvent::SeatHandedToBot { .. }) = d.events.last() {
            handed.get_or_insert(e.clone());
        }
        apply(&mut t, d);
        if handed.is_some() {
            break;
        }
    }
    let Some(TableEvent::SeatHandedToBot { seat, player }) = handed else {
        panic!("no hand-over")
    };
    assert_eq!(seat, first);
    assert!(t.bot_holds(seat));
    assert_eq!(t.bot_level_of(seat), Some(Level::Strong));
    // A stale timeout (an older turn) is refused.
    let hand = t.hand.as_ref().unwrap();
    assert_eq!(
        t.decide_server(hand.turn.seat, &Command::Timeout, Some((1, 0)), &[1; 32]),
        Err(TableError::StaleTimeout)
    );
    let back = t.decide_reclaim(&player).unwrap();
    assert_eq!(
        back.events,
        vec![TableEvent::SeatReclaimed { seat, player }]
    );
    apply(&mut t, back);
    assert!(!t.bot_holds(seat));
    assert_eq!(t.absence.expiries[seat as usize], 0);
}

#[test]
fn a_turn_played_in_between_resets_the_count_and_people_are_not_bots() {
    let people = ["a", "b", "c", "d"].map(|p| Some(format!("players/{p}")));
    let mut t = table(people);
    let first = t.hand.as_ref().unwrap().turn.seat;
    let d = expire(&t);
    apply(&mut t, d);
    assert_eq!(t.absence.expiries[first as usize], 1);
    // The next seats time out; then the first seat plays its own turn (draw, discard).
    for _ in 0..3 {
        let d = expire(&t);
        apply(&mut t, d);
    }
    assert_eq!(t.hand.as_ref().unwrap().turn.seat, first);
    let player = t.seats[first as usize].clone().unwrap();
    let draw = TableCommand::Play {
        player: player.clone(),
        command: Command::Draw,
        name: None,
    };
    let d = t.decide(&draw, &[2; 32]).unwrap();
    apply(&mut t, d);
    let tile = t.seat_view(first).unwrap().rack[0];
    let discard = TableCommand::Play {
        player,
        command: Command::Discard { tile },
        name: None,
    };
    let d = t.decide(&discard, &[2; 32]).unwrap();
    apply(&mut t, d);
    assert_eq!(t.absence.expiries[first as usize], 0);
    let next = t.hand.as_ref().unwrap().turn.seat;
    assert_eq!(
        t.decide_server(next, &Command::Draw, None, &[2; 32]),
        Err(TableError::NotBotSeat(next))
    );
}

#[test]
fn a_bot_seat_plays_through_the_server_command() {
    let mut seats: [Option<String>; 4] =
        std::array::from_fn(|s| Some(Level::Easy.occupant(s as Seat)));
    seats[0] = Some("players/a".into());
    let t = table(seats);
    assert!(!t.bot_holds(0));
    assert!(t.bot_holds(1));
    assert_eq!(t.bot_level_of(1), Some(Level::Easy));
}

mod given_when_then {
    use okey_rules::{Command, Preset};
    use okey_table::TableCommand;
    use okey_table::testing::given_table;

    fn join(player: &str) -> TableCommand {
        TableCommand::Join {
            player: player.into(),
            seat: None,
            name: None,
        }
    }

    #[test]
    fn the_fourth_player_to_sit_deals_the_first_hand() {
        let given = given_table(
            Preset::Classic.rules(),
            [Some("players/a"), None, None, None],
        )
        .and(join("players/b"))
        .and(join("players/c"));
        let table = given
            .when(join("players/d"))
            .then_events(&["SeatTaken", "HandDealt"]);
        assert_eq!(table.seat_view(3).map(|v| v.rack.len() >= 21), Some(true));
        let full = given.and(join("players/d"));
        full.when(join("players/e")).then_refused("table_full");
        assert!(
            full.when(join("players/a"))
                .then_events(&[])
                .seat_of("players/a")
                .is_some(),
            "sitting down again where one sits changes nothing"
        );
    }

    #[test]
    fn only_a_seated_player_plays_and_a_bot_seat_is_the_servers() {
        let given = given_table(
            Preset::Classic.rules(),
            [
                Some("players/a"),
                Some("players/b"),
                Some("players/c"),
                Some("players/d"),
            ],
        );
        given
            .when(TableCommand::Play {
                player: "players/z".into(),
                command: Command::Draw,
                name: None,
            })
            .then_refused("not_seated");
        given
            .when(TableCommand::Server {
                seat: 1,
                command: Command::Draw,
                turn: None,
            })
            .then_refused("not_bot_seat");
    }
}
