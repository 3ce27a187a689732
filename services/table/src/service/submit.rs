//! Deciding and appending: a new table, and a command on one, each answered once per request id
//! (a retry gets the first answer from the store), with the retries an append may need.

use std::collections::BTreeMap;
use std::sync::Arc;

use okey_platform::telemetry::current_context_as_map;
use okey_rules::{RuleSet, Seat};
use serde::{Deserialize, Serialize};
use sqlx::types::Uuid;
use tracing::Instrument;

use super::cache::Entry;
use super::read::{outcome_of, summary};
use super::watch::Feed;
use super::{MAX_ATTEMPTS, Outcome, ServiceError, Tables};
use crate::deadlines::{Armed, hand_in_play};
use crate::domain::{Admission, Decision, Phase, Seed, Table, TableCommand, TableEvent, show};
use crate::ids::{new_seed, random_uuid};
use crate::store::{Append, AppendError, Metadata, TurnDeadline};

/// Who sits where at a new table, and the display names of the players seated (`None`: not
/// given; the seat is named when its player first acts).
#[derive(Debug, Clone, Default)]
pub struct Seating {
    pub seats: [Option<String>; 4],
    pub names: [Option<String>; 4],
}

/// What `handled_commands.response` holds: enough to give a retry the first answer.
///
/// A command stores only the versions it appended and who saw them: its events are immutable at
/// those versions, so the first answer is rebuilt exactly from the store (the events, and the
/// state folded to `last`). This keeps the row small (no view, no TOAST compression) and spares
/// serializing a view nobody may ask for again. `CreateTable` (and rows written before this
/// form) keep the whole outcome.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Answer {
    Versions {
        first: u64,
        last: u64,
        /// The seat the events were shown to (the caller's, before or after the command).
        viewer: Option<Seat>,
        /// The turn deadline the answer showed (ms since the Unix epoch), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deadline: Option<u64>,
    },
    Outcome(Box<Outcome>),
}

/// A command to play at a table, as one caller sent it.
#[derive(Clone, Debug)]
pub struct Submission<'a> {
    pub table_id: Uuid,
    /// Who plays it (`players/{id}`, or the server).
    pub actor: &'a str,
    /// The caller's id for this request: a retry with it gets the first answer.
    pub request_id: &'a str,
    pub command: TableCommand,
    /// The version the caller decided on (`None`: whatever the table is at). Any other is a
    /// [`ServiceError::VersionConflict`].
    pub expected_version: Option<u64>,
}

impl<'a> Submission<'a> {
    /// `command` from `actor` at `table_id`, at whatever version the table is.
    pub fn new(
        table_id: Uuid,
        actor: &'a str,
        request_id: &'a str,
        command: TableCommand,
    ) -> Submission<'a> {
        Submission {
            table_id,
            actor,
            request_id,
            command,
            expected_version: None,
        }
    }

    /// Only at `version` (none: any).
    pub fn expecting(mut self, version: Option<u64>) -> Submission<'a> {
        self.expected_version = version;
        self
    }
}

/// What a command is, for its span's name.
fn command_kind(command: &TableCommand) -> &'static str {
    match command {
        TableCommand::Join { .. } => "join",
        TableCommand::Leave { .. } => "leave",
        TableCommand::Play { .. } => "play",
        TableCommand::Server { .. } => "server play",
        TableCommand::Reclaim { .. } => "reclaim",
        TableCommand::ClientSeed { .. } => "client seed",
    }
}

/// What one decide-and-append came to.
enum Attempt {
    /// The answer: the first one (a retried request) or the table as it is (nothing changed).
    Answered(Outcome),
    /// Appended here: the answer, and what the table's streams are told once its lock is
    /// released.
    Appended {
        outcome: Outcome,
        feed: Arc<Feed>,
        version: u64,
        finished: bool,
    },
    /// Decide again on the table caught up with the store.
    Again,
}

/// The answer to a command that changed nothing: the table as held, with its turn deadline.
fn unchanged(entry: &Entry, table_id: Uuid, actor: &str) -> Outcome {
    let table = entry.table.as_ref().expect("loaded before the first try");
    let mut outcome = outcome_of(table, table_id, entry.created_at, actor, Vec::new());
    outcome.turn_deadline_ms = entry.turn_deadline_ms();
    outcome
}

/// What an append records of the deadline it armed (see [`Metadata::deadline`]): the views'
/// `turn_deadline` at `table`'s version, if a turn runs at it.
fn turn_deadline(armed: Option<Armed>, table: &Table) -> Option<TurnDeadline> {
    armed
        .and_then(|d| d.at_for(table))
        .map(|at_ms| TurnDeadline {
            version: table.version,
            at_ms,
        })
}

/// The key a request id is de-duplicated under: the caller plus the id, so two players' ids never
/// collide.
fn request_key(actor: &str, request_id: &str) -> String {
    format!("{actor} {request_id}")
}

/// A new table's id, derived from the creator and its request id (sha256), so a retried
/// CreateTable lands on the same stream on any replica and is answered from `handled_commands`.
fn derived_table_id(actor: &str, request_id: &str) -> Uuid {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("okey table v1\n{actor}\n{request_id}"));
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    sqlx::types::uuid::Builder::from_random_bytes(bytes).into_uuid()
}

impl Tables {
    /// Creates a table. A retry (same caller and request id) returns the first answer. Traced
    /// as `table create`; its events are stored with that span's context, so their
    /// publication continues the trace.
    pub async fn create(
        &self,
        actor: &str,
        request_id: &str,
        rules: RuleSet,
        seating: Seating,
        admission: Admission,
    ) -> Result<Outcome, ServiceError> {
        // The table id is derived from the creator's request id so a retry lands on the same
        // stream and is answered from `handled_commands`.
        let table_id = derived_table_id(actor, request_id);
        let span = tracing::info_span!(
            "table create",
            otel.name = "table create",
            okey.table.id = %table_id,
        );
        self.create_traced(actor, request_id, table_id, rules, seating, admission)
            .instrument(span)
            .await
    }

    async fn create_traced(
        &self,
        actor: &str,
        request_id: &str,
        table_id: Uuid,
        rules: RuleSet,
        Seating { seats, names }: Seating,
        admission: Admission,
    ) -> Result<Outcome, ServiceError> {
        let key = request_key(actor, request_id);
        if let Some(first) = self.answered_unlocked(table_id, &key, actor).await? {
            return Ok(first);
        }
        let seed = new_seed();
        let decision = Table::create_with(rules.clone(), seats, names, admission, &seed)
            .map_err(ServiceError::InvalidRules)?;
        let seeds: BTreeMap<u32, Seed> = decision.seeds.iter().copied().collect();
        let table = Table::replay(&decision.events, seeds);
        // Like any command's, the answer is rebuilt from the store on a retry: the creation time
        // is the stored one, which this process learns only from the append.
        let arming = self
            .observer
            .as_ref()
            .and_then(|o| o.next_due(table_id, &table, &decision.events));
        let answer = Answer::Versions {
            first: 1,
            last: table.version,
            viewer: table.seat_of(actor),
            deadline: None,
        };
        let response = serde_json::to_vec(&answer).expect("answers serialize");
        let deadline = arming.map(|a| a.deadline_after(None));
        let metadata = Metadata {
            actor: actor.to_owned(),
            trace: current_context_as_map(),
            schema: 1,
            deadline: turn_deadline(deadline, &table),
        };
        let appended = self
            .store
            .append(Append {
                table_id,
                expected: 0,
                events: &decision.events,
                metadata: &metadata,
                request: Some((&key, &response)),
                seeds: &decision.seeds,
                revealed: None,
                create: Some(serde_json::to_value(&rules).expect("rules serialize")),
            })
            .await;
        match appended {
            Ok(stored) => {
                if let Some(observer) = &self.observer {
                    observer.appended(table_id, table.version, arming);
                    // Held for the views once the table is loaded (a table of four bots plays
                    // at once).
                    if deadline.is_some() {
                        self.lock_entry(table_id).await.deadline = deadline;
                    }
                }
                let created_at = stored.first().map(|e| e.recorded_at);
                let outcome = Outcome {
                    summary: summary(&table, table_id, created_at),
                    seat: table.seat_of(actor),
                    events: Vec::new(),
                    view: None,
                    public: None,
                    turn_deadline_ms: None,
                };
                self.outbox.queue(stored);
                Ok(outcome)
            }
            Err(AppendError::Duplicate | AppendError::Conflict) => {
                match self.answered_unlocked(table_id, &key, actor).await? {
                    Some(first) => Ok(first),
                    None => Err(ServiceError::Busy),
                }
            }
            Err(AppendError::Database(e)) => Err(e.into()),
        }
    }

    /// Plays a command. A retry (same caller and request id) returns the first answer and
    /// changes nothing; a rejected command stores nothing. Traced as `table {kind}` (decide and
    /// append, with the retries); its events are stored with that span's context, so their
    /// publication and every consumer's processing join the trace of whoever sent it.
    pub async fn submit(&self, submission: Submission<'_>) -> Result<Outcome, ServiceError> {
        let span = tracing::info_span!(
            "table submit",
            otel.name = %format!("table {}", command_kind(&submission.command)),
            okey.table.id = %submission.table_id,
            okey.table.version = tracing::field::Empty,
            okey.seat = tracing::field::Empty,
        );
        if let TableCommand::Server { seat, .. } = &submission.command {
            span.record("okey.seat", u64::from(*seat));
        }
        self.submit_traced(submission).instrument(span).await
    }

    async fn submit_traced(&self, submission: Submission<'_>) -> Result<Outcome, ServiceError> {
        let table_id = submission.table_id;
        let key = request_key(submission.actor, submission.request_id);
        let mut entry = self.lock_entry(table_id).await;
        if entry.table.is_none() {
            self.catch_up(table_id, &mut entry).await?;
        }
        for attempt in 0..MAX_ATTEMPTS {
            if attempt > 0 {
                self.catch_up(table_id, &mut entry).await?;
            }
            let tried = self
                .attempt(&submission, &key, &mut entry, attempt == 0)
                .await?;
            match tried {
                Attempt::Answered(outcome) => return Ok(outcome),
                Attempt::Appended {
                    outcome,
                    feed,
                    version,
                    finished,
                } => {
                    // The lock is released first: a stream woken here reads the table at once.
                    drop(entry);
                    feed.version.send_replace(version);
                    if finished {
                        self.forget(table_id);
                    }
                    return Ok(outcome);
                }
                Attempt::Again => {}
            }
        }
        Err(ServiceError::Busy)
    }

    /// Decides `submission` once on the table as held, and appends what it decided. On the
    /// first try the table in memory may be behind another replica's appends: a version or a
    /// refusal that may come from that is checked against the store before it is answered.
    async fn attempt(
        &self,
        submission: &Submission<'_>,
        key: &str,
        entry: &mut Entry,
        first_try: bool,
    ) -> Result<Attempt, ServiceError> {
        let table_id = submission.table_id;
        let table = entry.table.as_ref().expect("loaded before the first try");
        let before = table.version;
        if let Some(expected) = submission.expected_version
            && expected != before
        {
            if first_try {
                return Ok(Attempt::Again);
            }
            return match self
                .answered(table_id, key, submission.actor, entry)
                .await?
            {
                Some(first) => Ok(Attempt::Answered(first)),
                None => Err(ServiceError::VersionConflict {
                    expected,
                    actual: before,
                }),
            };
        }
        let decision = match table.decide(&submission.command, &new_seed()) {
            Ok(decision) => decision,
            Err(refused) => {
                if let Some(first) = self
                    .answered(table_id, key, submission.actor, entry)
                    .await?
                {
                    return Ok(Attempt::Answered(first));
                }
                if first_try {
                    self.catch_up(table_id, entry).await?;
                    if entry.table.as_ref().is_some_and(|t| t.version != before) {
                        return Ok(Attempt::Again);
                    }
                }
                return Err(refused.into());
            }
        };
        if decision.events.is_empty() {
            if let Some(first) = self
                .answered(table_id, key, submission.actor, entry)
                .await?
            {
                return Ok(Attempt::Answered(first));
            }
            // A JoinSeat of a player already seated changes nothing, but a retry must still get
            // this answer even if they left meanwhile: its request id is stored with no events.
            // (The server's own no-op commands, such as a reclaim on every stream, store nothing.)
            if matches!(submission.command, TableCommand::Join { .. }) {
                return self.remember_no_op(submission, key, entry).await;
            }
            return Ok(Attempt::Answered(unchanged(
                entry,
                table_id,
                submission.actor,
            )));
        }
        self.append(submission, key, entry, decision).await
    }

    /// Appends a decision at the version it was made on. A duplicate request id is answered
    /// with the first answer; a version another replica took first is decided again.
    async fn append(
        &self,
        submission: &Submission<'_>,
        key: &str,
        entry: &mut Entry,
        decision: Decision,
    ) -> Result<Attempt, ServiceError> {
        let table_id = submission.table_id;
        let actor = submission.actor;
        // What is armed now, for the arming's rule (a turn keeps its deadline): this process's
        // own last arming, or, when the table moved on through another process while a turn
        // ran, what Redis holds.
        let table = entry.table.as_ref().expect("loaded before the first try");
        let mut previous = entry.deadline.filter(|d| d.version == table.version);
        if previous.is_none()
            && hand_in_play(table).is_some()
            && let Some(observer) = &self.observer
        {
            previous = observer
                .armed(table_id)
                .await
                .filter(|d| d.version == table.version);
        }
        // The decision is applied to the table in memory itself, not to a copy (a copy per
        // command grew with every hand of a long match). Until the append is stored the entry
        // holds no table: if the append fails, the next use folds it from the store again, which
        // also settles an append whose outcome the database error left unknown.
        let mut after = entry.table.take().expect("loaded before the first try");
        let before = after.version;
        let seated_before = after.seat_of(actor);
        let first = before + 1;
        after.apply(&decision);
        let viewer = after.seat_of(actor).or(seated_before);
        // What falls due next, decided now so the stored answer carries the deadline it shows.
        let arming = self
            .observer
            .as_ref()
            .and_then(|o| o.next_due(table_id, &after, &decision.events));
        let deadline = arming.map(|a| a.deadline_after(previous));
        let shown_deadline = deadline.and_then(|d| d.at_for(&after));
        let answer = Answer::Versions {
            first,
            last: after.version,
            viewer,
            deadline: shown_deadline,
        };
        let response = serde_json::to_vec(&answer).expect("answers serialize");
        let revealed = decision.events.iter().find_map(|e| match e {
            TableEvent::HandEnded { hand_number, .. } => Some(*hand_number),
            _ => None,
        });
        let metadata = Metadata {
            actor: actor.to_owned(),
            trace: current_context_as_map(),
            schema: 1,
            deadline: turn_deadline(deadline, &after),
        };
        let appended = self
            .store
            .append(Append {
                table_id,
                expected: before,
                events: &decision.events,
                metadata: &metadata,
                request: Some((key, &response)),
                seeds: &decision.seeds,
                revealed,
                create: None,
            })
            .await;
        match appended {
            Ok(stored) => {
                self.metrics.appended.add(stored.len() as u64, &[]);
                let version = after.version;
                tracing::Span::current().record("okey.table.version", version);
                if let Some(observer) = &self.observer {
                    observer.appended(table_id, version, arming);
                }
                entry.deadline = deadline;
                let shown = decision
                    .events
                    .iter()
                    .enumerate()
                    .map(|(i, e)| (first + i as u64, show(e, viewer, |n| after.seed(n))))
                    .collect();
                let mut outcome = outcome_of(&after, table_id, entry.created_at, actor, shown);
                let finished = after.phase == Phase::Finished;
                entry.table = Some(after);
                outcome.turn_deadline_ms = shown_deadline;
                // Still under the table's lock: the publisher and the update streams get a
                // table's events in version order.
                let feed = self.feed(table_id);
                feed.remember(&stored);
                self.outbox.queue(stored);
                Ok(Attempt::Appended {
                    outcome,
                    feed,
                    version,
                    finished,
                })
            }
            Err(AppendError::Duplicate) => {
                match self.answered(table_id, key, actor, entry).await? {
                    Some(first) => Ok(Attempt::Answered(first)),
                    None => Ok(Attempt::Again),
                }
            }
            Err(AppendError::Conflict) => {
                self.metrics.conflicts.add(1, &[]);
                tracing::debug!(%table_id, "version conflict; reloading");
                Ok(Attempt::Again)
            }
            Err(AppendError::Database(e)) => Err(e.into()),
        }
    }

    /// Stores `submission`'s request id for a command that changed nothing (no events, the
    /// versions it names an empty range at the table's version), and answers it as a retry will
    /// be answered.
    async fn remember_no_op(
        &self,
        submission: &Submission<'_>,
        key: &str,
        entry: &mut Entry,
    ) -> Result<Attempt, ServiceError> {
        let table_id = submission.table_id;
        let table = entry.table.as_ref().expect("loaded before the first try");
        let version = table.version;
        let deadline = entry.turn_deadline_ms();
        let answer = Answer::Versions {
            first: version + 1,
            last: version,
            viewer: table.seat_of(submission.actor),
            deadline,
        };
        let response = serde_json::to_vec(&answer).expect("answers serialize");
        let metadata = Metadata {
            actor: submission.actor.to_owned(),
            ..Metadata::default()
        };
        let stored = self
            .store
            .append(Append {
                table_id,
                expected: version,
                events: &[],
                metadata: &metadata,
                request: Some((key, &response)),
                seeds: &[],
                revealed: None,
                create: None,
            })
            .await;
        match stored {
            Ok(_) => Ok(Attempt::Answered(unchanged(
                entry,
                table_id,
                submission.actor,
            ))),
            Err(AppendError::Duplicate) => {
                match self
                    .answered(table_id, key, submission.actor, entry)
                    .await?
                {
                    Some(first) => Ok(Attempt::Answered(first)),
                    None => Ok(Attempt::Again),
                }
            }
            Err(AppendError::Conflict) => Ok(Attempt::Again),
            Err(AppendError::Database(e)) => Err(e.into()),
        }
    }

    /// The first answer to a request this table already handled (see [`Answer`]), if any.
    async fn answered(
        &self,
        table_id: Uuid,
        key: &str,
        actor: &str,
        entry: &mut Entry,
    ) -> Result<Option<Outcome>, ServiceError> {
        let Some(stored) = self.store.handled(table_id, key).await? else {
            return Ok(None);
        };
        let answer: Answer = serde_json::from_slice(&stored).map_err(|e| {
            tracing::error!(%table_id, error = %e, "a stored answer does not decode");
            ServiceError::StoredAnswer
        })?;
        let (first, last, viewer, deadline) = match answer {
            Answer::Outcome(outcome) => return Ok(Some(*outcome)),
            Answer::Versions {
                first,
                last,
                viewer,
                deadline,
            } => (first, last, viewer, deadline),
        };
        if entry.table.as_ref().is_none_or(|t| t.version < last) {
            self.catch_up(table_id, entry).await?;
        }
        let replayed;
        let (state, created_at) = match &entry.table {
            Some(t) if t.version == last => (t, entry.created_at),
            _ => {
                replayed = self.replay_to(table_id, last).await?;
                (&replayed.0, replayed.1)
            }
        };
        let events = self
            .store
            .load_after(table_id, first - 1, (last + 1 - first) as i64)
            .await?;
        let shown = events
            .iter()
            .map(|e| (e.version, show(&e.event, viewer, |n| state.seed(n))))
            .collect();
        let mut outcome = outcome_of(state, table_id, created_at, actor, shown);
        outcome.turn_deadline_ms = deadline;
        Ok(Some(outcome))
    }

    /// [`Self::answered`] for a caller that does not hold the table's lock.
    async fn answered_unlocked(
        &self,
        table_id: Uuid,
        key: &str,
        actor: &str,
    ) -> Result<Option<Outcome>, ServiceError> {
        let mut entry = self.lock_entry(table_id).await;
        self.answered(table_id, key, actor, &mut entry).await
    }

    /// `player` is back (see `okey_table::absence`): takes their seat from the bot if one holds it (a command the rules
    /// refused, or an update stream opening, still brings the player back). Stores nothing
    /// otherwise.
    pub async fn reclaim(&self, table_id: Uuid, player: &str) -> Result<(), ServiceError> {
        let request_id = format!("reclaim/{}", random_uuid());
        let command = TableCommand::Reclaim {
            player: player.to_owned(),
        };
        self.submit(Submission::new(table_id, player, &request_id, command))
            .await
            .map(|_| ())
    }
}
