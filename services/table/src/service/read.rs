//! What a caller may see of a table: its summary, their seat's view (or the public one), and the
//! legal actions of their turn, as fresh as they ask.

use okey_rules::{OpenKind, RuleSet, Seat, SeatView};
use serde::{Deserialize, Serialize};
use sqlx::types::Uuid;
use sqlx::types::chrono::{DateTime, Utc};

use super::{ServiceError, Tables};
use crate::deadlines::{Armed, hand_in_play};
use crate::domain::{Admission, Phase, Shown, Table, TableError};

/// What anyone may know about a table at a version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// The table's UUID, as text.
    pub table_id: String,
    pub rules: RuleSet,
    pub seats: [Option<String>; 4],
    /// Display names of the seated players (see [`Table::names`]).
    #[serde(default)]
    pub names: [Option<String>; 4],
    pub phase: PhaseName,
    pub hand_number: u32,
    pub version: u64,
    pub totals: [i64; 4],
    pub rack_counts: [usize; 4],
    pub opened: [Option<OpenKind>; 4],
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at: Option<i64>,
    /// Seats a bot plays for an absent player.
    #[serde(default)]
    pub substituted: [bool; 4],
    /// The player who left each seat during the match, a bot playing it for them until they
    /// take it back (see `Absence::vacated`); not in `seats`, which holds who may act there.
    #[serde(default)]
    pub vacated: [Option<String>; 4],
    /// Where the table came from and whom it admits.
    #[serde(default)]
    pub admission: Admission,
    /// Hex sha256 of the next hand's server seed (the commitment client seeds go with); `None`
    /// when the table takes no client seeds.
    #[serde(default)]
    pub next_server_seed_sha256: Option<String>,
}

impl Summary {
    /// Whose each seat is, as the table shows it: the player sitting there, or the player who
    /// left it during the match to a bot (theirs to take back); `None` for a free seat.
    pub fn holders(&self) -> [Option<String>; 4] {
        std::array::from_fn(|s| self.seats[s].clone().or_else(|| self.vacated[s].clone()))
    }
}

/// [`Phase`] in serializable form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseName {
    Waiting,
    Playing,
    Finished,
}

/// The answer to a command (stored for a retry) or to a read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub summary: Summary,
    /// The caller's seat, if seated.
    pub seat: Option<Seat>,
    /// `(version, event)` the command appended, as the caller may see them.
    pub events: Vec<(u64, Shown)>,
    /// The caller's view of the current hand.
    pub view: Option<SeatView>,
    /// For a caller who sits nowhere (a spectator) reading a table: the current hand as anyone
    /// at the table sees it, with no rack (see [`Table::public_view`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public: Option<SeatView>,
    /// When the seat on turn runs out of time, ms since the Unix epoch, if this process knows it
    /// (see `Entry::turn_deadline_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_deadline_ms: Option<u64>,
}

/// How fresh a read must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// Every append committed before the read, by any process: the store is checked.
    Latest,
    /// This version or a newer one: memory serves when it holds it and this process has heard
    /// of nothing newer; else the store is checked, and a version the table has not reached is
    /// [`ServiceError::VersionAhead`].
    AtLeast(u64),
}

pub(super) fn summary(table: &Table, table_id: Uuid, created_at: Option<DateTime<Utc>>) -> Summary {
    let hand = table.hand.as_ref();
    Summary {
        table_id: table_id.to_string(),
        rules: table.rules.clone(),
        seats: table.seats.clone(),
        names: table.names.clone(),
        phase: match table.phase {
            Phase::Waiting => PhaseName::Waiting,
            Phase::Playing => PhaseName::Playing,
            Phase::Finished => PhaseName::Finished,
        },
        hand_number: table.hand_number,
        version: table.version,
        totals: running_totals(table),
        rack_counts: std::array::from_fn(|s| hand.map_or(0, |h| h.racks[s].len())),
        opened: std::array::from_fn(|s| hand.and_then(|h| h.opened[s].map(|o| o.kind))),
        created_at: created_at.map(|t| t.timestamp_millis()),
        substituted: table.absence.substituted,
        vacated: table.absence.vacated.clone(),
        admission: table.admission.clone(),
        next_server_seed_sha256: (table.phase != Phase::Finished)
            .then(|| table.commitments.get(&(table.hand_number + 1)))
            .flatten()
            .map(|(sha, _)| sha.clone()),
    }
}

/// Each seat's running total (`SeatSummary.total`): the match's totals after its ended hands,
/// plus the in-play penalties that stand in a hand still being played (its end adds them to the
/// match's record, so an ended hand's are already there).
fn running_totals(table: &Table) -> [i64; 4] {
    let mut totals = table.record.totals;
    if let Some(hand) = table.hand.as_ref().filter(|h| !h.is_over()) {
        for (total, penalties) in totals.iter_mut().zip(hand.penalty_totals()) {
            *total += i64::from(penalties);
        }
    }
    totals
}

pub(super) fn outcome_of(
    table: &Table,
    table_id: Uuid,
    created_at: Option<DateTime<Utc>>,
    actor: &str,
    events: Vec<(u64, Shown)>,
) -> Outcome {
    let seat = table.seat_of(actor);
    Outcome {
        summary: summary(table, table_id, created_at),
        seat,
        events,
        view: seat.and_then(|s| table.seat_view(s)),
        public: None,
        turn_deadline_ms: None,
    }
}

impl Tables {
    /// The table's state now (caught up with the store), for the server's own plays.
    pub async fn state(&self, table_id: Uuid) -> Result<Table, ServiceError> {
        let mut entry = self.lock_entry(table_id).await;
        self.catch_up(table_id, &mut entry).await?;
        Ok(entry.table.clone().expect("caught up"))
    }

    /// The table now (caught up with the store), with the deadline this process knows for its
    /// version (its own arming, or what it read from Redis): what its views show.
    pub async fn state_and_deadline(
        &self,
        table_id: Uuid,
    ) -> Result<(Table, Option<Armed>), ServiceError> {
        let mut entry = self.lock_entry(table_id).await;
        self.catch_up(table_id, &mut entry).await?;
        let table = entry.table.clone().expect("caught up");
        let known = entry.deadline.filter(|d| d.version == table.version);
        Ok((table, known))
    }

    /// What the reconciler armed again at `table_id` after Redis lost it: the views show it
    /// from now on, while the table stays at that version.
    pub async fn rearmed(&self, table_id: Uuid, armed: Armed) {
        let mut entry = self.lock_entry(table_id).await;
        if entry
            .table
            .as_ref()
            .is_some_and(|t| t.version == armed.version)
        {
            entry.deadline = Some(armed);
        }
    }

    /// Where `actor` sits at the table now (caught up with the store).
    pub async fn seat_of(&self, table_id: Uuid, actor: &str) -> Result<Option<Seat>, ServiceError> {
        let mut entry = self.lock_entry(table_id).await;
        self.catch_up(table_id, &mut entry).await?;
        Ok(entry.table.as_ref().and_then(|t| t.seat_of(actor)))
    }

    /// The table as `actor` may see it now.
    pub async fn read(&self, table_id: Uuid, actor: &str) -> Result<Outcome, ServiceError> {
        self.read_fresh(table_id, actor, Freshness::Latest).await
    }

    /// What [`Tables::read`] answers, as fresh as `freshness` asks. With
    /// [`Freshness::AtLeast`], a table held in memory at that version or a newer one, and not
    /// behind any version this process has heard of (its own appends, and other replicas'
    /// events its publisher's connection follows), is answered without reading the store.
    pub async fn read_fresh(
        &self,
        table_id: Uuid,
        actor: &str,
        freshness: Freshness,
    ) -> Result<Outcome, ServiceError> {
        let mut entry = self.lock_entry(table_id).await;
        let held = match freshness {
            Freshness::Latest => false,
            Freshness::AtLeast(version) => entry
                .table
                .as_ref()
                .is_some_and(|t| t.version >= version && t.version >= self.heard_of(table_id)),
        };
        if !held {
            self.catch_up(table_id, &mut entry).await?;
        }
        let table = entry.table.as_ref().expect("caught up");
        if let Freshness::AtLeast(asked) = freshness
            && table.version < asked
        {
            return Err(ServiceError::VersionAhead {
                asked,
                actual: table.version,
            });
        }
        // A turn this process did not see start (another replica's move, or one before this
        // process started): its deadline is read from Redis once, then held with the table.
        if entry.turn_deadline_ms().is_none()
            && hand_in_play(table).is_some()
            && let Some(observer) = &self.observer
        {
            entry.deadline = observer.armed(table_id).await;
        }
        let table = entry.table.as_ref().expect("caught up");
        let mut outcome = outcome_of(table, table_id, entry.created_at, actor, Vec::new());
        outcome.turn_deadline_ms = entry.turn_deadline_ms();
        if outcome.seat.is_none() {
            outcome.public = table.public_view();
        }
        Ok(outcome)
    }

    /// Legal commands and hints for `actor`'s seat in the current hand.
    pub async fn hints(
        &self,
        table_id: Uuid,
        actor: &str,
    ) -> Result<(u64, Option<okey_rules::hints::Hints>), ServiceError> {
        let mut entry = self.lock_entry(table_id).await;
        self.catch_up(table_id, &mut entry).await?;
        let table = entry.table.as_ref().expect("caught up");
        let seat = table.seat_of(actor).ok_or(TableError::NotSeated)?;
        let hints = table
            .hand
            .as_ref()
            .filter(|h| !h.is_over() && h.turn.seat == seat && table.phase == Phase::Playing)
            .map(|h| h.hints(seat));
        Ok((table.version, hints))
    }
}
