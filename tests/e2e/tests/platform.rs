//! The whole platform with nothing going wrong: every service its own process from the built
//! binaries, guests signing in at accounts and finding tables through matchmaking (alone with
//! bots after the wait, four together as partners, two friends in a private room with bots),
//! playing whole matches from `ListLegalActions` while the table's bots play theirs, and then
//! accounts' statistics, scoring's ledger, match results and standings equal to what the table's
//! own events say, per seat, per hand and per match.

use e2e::platform::Layout;
use e2e::report::{render, show};
use e2e::scenario::{Group, World};
use okey_platform::testing::TestInfra;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn guests_play_whole_matches_through_every_service_and_every_record_agrees() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let mut world = World::start("suite", &infra, Layout::default()).await;
    world.play(Group::Alone, 2);
    world.play(Group::Four, 2);
    world.play(Group::Room, 2);
    world.play(Group::Alone, 2);
    let row = world.finish("no fault", 0, Vec::new()).await;
    show(&render(std::slice::from_ref(&row)));
    assert!(
        row.discrepancies.is_empty(),
        "{}",
        render(std::slice::from_ref(&row))
    );
    // Two lone guests may share a table (both allow bots, same rules): three tables or four.
    assert!(row.matches >= 3, "{}", render(std::slice::from_ref(&row)));
    assert!(row.accepted > 0 && row.moves > row.accepted);
}
