//! A world the tests play in: one [`Platform`] and the groups of guests playing on it, each
//! group's match a task of its own, with the waits a fault test injects its fault at (so many
//! moves accepted, so many tickets opened: conditions with deadlines, never fixed sleeps) and the
//! end: every match played out, then [`check`]ed, as one [`Row`] of the suite's table.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use tokio::task::JoinSet;

use crate::check::check;
use crate::platform::{Layout, Platform};
use crate::player::{
    Apis, Guest, Progress, SeatRecord, Seating, find_table, play_in_room, play_seat,
};
use crate::report::Row;

/// How long a group has to find its table and play its match out. Every wait inside ends as
/// soon as its condition holds, so this bounds only how late a stuck match is reported: it is
/// far above the ~2 minutes a faulted match takes on a quiet two-core machine, because the six
/// fault scenarios share those cores (at a load average of 26 a match took over 3 minutes).
const PLAY_WITHIN: Duration = Duration::from_secs(480);
/// How long the consumers have, once play is over, to catch up (bounded the same way).
const CHECK_WITHIN: Duration = Duration::from_secs(180);

/// Who sits down together.
#[derive(Clone, Copy, Debug)]
pub enum Group {
    /// One guest, quick play with bots allowed: three bots fill the table after the wait.
    Alone,
    /// Four guests, quick play without bots, partners: they are matched together.
    Four,
    /// A host and a friend in a private room (code and password), two bots filling the rest.
    Room,
}

impl Group {
    fn guests(self) -> usize {
        match self {
            Group::Alone => 1,
            Group::Four => 4,
            Group::Room => 2,
        }
    }

    /// Short matches (a few hands) keep the suite fast; each group its own rules, so quick-play
    /// groups of different kinds are never matched with each other.
    fn rules(self, hands: i32) -> pb::RuleSet {
        pb::RuleSet {
            preset: "classic".into(),
            partners: Some(matches!(self, Group::Four)),
            match_length: Some(pb::MatchLength {
                length: Some(pb::match_length::Length::Hands(hands)),
            }),
            ..Default::default()
        }
    }
}

type Played = Result<(Vec<Seating>, Vec<SeatRecord>), String>;

/// One group: its guests sign in, find their table, and play every seat out.
async fn play_group(
    apis: Apis,
    group: Group,
    hands: i32,
    seed: u64,
    progress: Arc<Progress>,
) -> Played {
    let deadline = Instant::now() + PLAY_WITHIN;
    let mut guests: Vec<Guest> = Vec::new();
    for _ in 0..group.guests() {
        guests.push(Guest::sign_in(&apis, deadline).await?);
    }
    let rules = group.rules(hands);
    let seatings = match group {
        Group::Alone => {
            vec![find_table(&apis, &guests[0], rules, true, deadline, &progress.tickets).await?]
        }
        Group::Four => {
            let mut finding = JoinSet::new();
            for g in guests {
                let (apis, rules, progress) = (apis.clone(), rules.clone(), progress.clone());
                finding.spawn(async move {
                    find_table(&apis, &g, rules, false, deadline, &progress.tickets).await
                });
            }
            let mut seatings = Vec::new();
            while let Some(found) = finding.join_next().await {
                seatings.push(found.map_err(|e| format!("a FindTable task: {e}"))??);
            }
            seatings
        }
        Group::Room => play_in_room(&apis, &guests[0], &guests[1..], rules, deadline).await?,
    };
    let mut playing = JoinSet::new();
    for (i, s) in seatings.iter().enumerate() {
        let (apis, s, progress) = (apis.clone(), s.clone(), progress.clone());
        let seed = seed.wrapping_mul(31).wrapping_add(i as u64);
        playing.spawn(async move { play_seat(&apis, &s, seed, &progress, deadline).await });
    }
    let mut records = Vec::new();
    let mut problems = Vec::new();
    while let Some(done) = playing.join_next().await {
        match done {
            Ok(Ok(r)) => records.push(r),
            Ok(Err(e)) => problems.push(e),
            Err(e) => problems.push(format!("a seat's task: {e}")),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    progress.finished.fetch_add(1, Ordering::Relaxed);
    Ok((seatings, records))
}

/// A platform and the matches played on it.
pub struct World {
    pub platform: Platform,
    pub apis: Apis,
    pub progress: Arc<Progress>,
    groups: JoinSet<Played>,
    next_seed: u64,
    started: Instant,
}

impl World {
    /// Starts a platform named `name` (its log files say so) on `infra`.
    pub async fn start(name: &str, infra: &TestInfra, layout: Layout) -> World {
        let started = Instant::now();
        let platform = Platform::start(name, infra, layout).await;
        let tables: Vec<u16> = platform.tables.iter().map(|t| t.port).collect();
        let apis = Apis::new(
            platform.accounts.port,
            platform.matchmaking.port,
            &tables,
            platform.scoring.port,
        );
        World {
            platform,
            apis,
            progress: Arc::default(),
            groups: JoinSet::new(),
            next_seed: 1,
            started,
        }
    }

    /// A group starts finding its table and playing a match of `hands` hands.
    pub fn play(&mut self, group: Group, hands: i32) {
        self.next_seed += 1;
        self.groups.spawn(play_group(
            self.apis.clone(),
            group,
            hands,
            self.next_seed,
            self.progress.clone(),
        ));
    }

    /// Commands accepted so far.
    pub fn moves(&self) -> u64 {
        self.progress.moves.load(Ordering::Relaxed)
    }

    /// Waits until the players have had `n` commands accepted in all (a fault goes in the middle
    /// of matches), within a minute.
    pub async fn until_moves(&self, n: u64) -> Result<(), String> {
        self.until(
            |p| p.moves.load(Ordering::Relaxed) >= n,
            &format!("{n} moves"),
        )
        .await
    }

    /// Waits until `n` tickets were opened in all, within a minute.
    pub async fn until_tickets(&self, n: u64) -> Result<(), String> {
        self.until(
            |p| p.tickets.load(Ordering::Relaxed) >= n,
            &format!("{n} tickets"),
        )
        .await
    }

    async fn until(&self, done: impl Fn(&Progress) -> bool, what: &str) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done(self.progress.as_ref()) {
            if Instant::now() > deadline {
                return Err(format!(
                    "{}: never reached {what} (moves {}, tickets {})",
                    self.platform.name,
                    self.moves(),
                    self.progress.tickets.load(Ordering::Relaxed)
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }

    /// Waits for every group's match to be played out, then checks every record: the row of
    /// `scenario` with `faults` injected (and `earlier` problems the scenario met on its way).
    pub async fn finish(mut self, scenario: &str, faults: u64, earlier: Vec<String>) -> Row {
        let mut seatings = Vec::new();
        let mut records = Vec::new();
        let mut discrepancies = earlier;
        while let Some(done) = self.groups.join_next().await {
            match done {
                Ok(Ok((s, r))) => {
                    seatings.extend(s);
                    records.extend(r);
                }
                Ok(Err(e)) => discrepancies.push(e),
                Err(e) => discrepancies.push(format!("a group's task: {e}")),
            }
        }
        let checked = check(
            &self.apis,
            &self.platform.table_database_url,
            &seatings,
            &records,
            CHECK_WITHIN,
        )
        .await;
        discrepancies.extend(checked.discrepancies);
        let logs = if discrepancies.is_empty() {
            String::new()
        } else {
            self.platform.log_tails(15)
        };
        Row {
            scenario: scenario.to_owned(),
            faults,
            matches: checked.matches,
            moves: checked.moves,
            accepted: checked.accepted,
            discrepancies,
            took: self.started.elapsed(),
            logs,
        }
    }
}
