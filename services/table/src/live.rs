//! The live side of the tables in this process: after every append it arms what is due next in
//! Redis (`deadlines`), a sweeper claims what is due and plays it through the command path like a
//! person ([`TableCommand::Server`] via [`Tables::submit`], with a request id derived from the
//! table and the turn or version, so a repeat is answered from the store and changes nothing),
//! and a reconciler arms again whatever Redis lost.

use std::sync::Arc;
use std::time::Duration;

use okey_rules::Command;
use sqlx::types::Uuid;
use tokio::sync::{Notify, mpsc};
use tracing::Instrument;

use crate::deadlines::{Appended, Armed, Arming, Deadlines, Due, DueKind, next_due};
use crate::domain::{Table, TableError, TableEvent, server_command};
use crate::service::{AppendObserver, BoxFuture, ServiceError, Submission, Tables};
use crate::settings::LiveSettings;

/// The actor recorded on everything the server plays for a seat.
pub const SERVER_ACTOR: &str = "server";

/// Appends armed in one Redis round trip, at most.
const ARM_BATCH: usize = 256;

/// The live side of the tables in this process: arms after appends, sweeps, reconciles.
#[derive(Clone)]
pub struct Live {
    deadlines: Deadlines,
    settings: LiveSettings,
    tx: mpsc::UnboundedSender<Appended>,
    nudge: Arc<Notify>,
}

impl AppendObserver for Live {
    fn next_due(&self, table_id: Uuid, after: &Table, events: &[TableEvent]) -> Option<Arming> {
        let now = self.deadlines.now_ms();
        next_due(table_id, after, events, now, self.settings.bot_pace_ms)
    }

    fn appended(&self, table_id: Uuid, version: u64, arming: Option<Arming>) {
        let _ = self.tx.send(Appended {
            table_id,
            version,
            arming,
        });
    }

    fn armed(&self, table_id: Uuid) -> BoxFuture<'_, Option<Armed>> {
        Box::pin(async move {
            match self.deadlines.armed(table_id).await {
                Ok(armed) => armed,
                Err(e) => {
                    tracing::warn!(%table_id, error = %e, "cannot read the turn deadline");
                    None
                }
            }
        })
    }
}

impl Live {
    /// The live side, and the receiver its arming task reads (start it with [`Live::run`]).
    pub fn new(deadlines: Deadlines, settings: LiveSettings) -> (Live, LiveTasks) {
        let (tx, rx) = mpsc::unbounded_channel();
        let live = Live {
            deadlines,
            settings,
            tx,
            nudge: Arc::new(Notify::new()),
        };
        (live, LiveTasks { rx })
    }

    pub fn deadlines(&self) -> &Deadlines {
        &self.deadlines
    }

    /// Arms or clears after a batch of appends (in append order).
    async fn write(&self, appended: &[Appended]) {
        match self.deadlines.apply_all(appended).await {
            Ok(()) => {
                let now = self.deadlines.now_ms();
                if appended
                    .iter()
                    .any(|a| a.arming.is_some_and(|a| a.at_ms <= now))
                {
                    self.nudge.notify_one();
                }
            }
            // The reconciler arms them later.
            Err(e) => {
                tracing::warn!(error = %e, appends = appended.len(), "cannot arm deadlines")
            }
        }
    }

    /// Arms or clears what is due at `table_id` from its current state (the reconciler).
    pub async fn rebuild(&self, tables: &Tables, table_id: Uuid) -> Result<(), ServiceError> {
        let (table, shown) = tables.state_and_deadline(table_id).await?;
        let now = self.deadlines.now_ms();
        let Some(mut arming) = next_due(table_id, &table, &[], now, self.settings.bot_pace_ms)
        else {
            return Ok(());
        };
        // A lost deadline never cuts a turn short: one this process still shows for this very
        // turn (Redis lost it, the process did not), opening bonus included, is armed again as
        // it was; one it does not know, or one already past, gives the seat a full turn from now.
        if let Some(shown) = shown
            && shown.due == arming.due
            && matches!(arming.due.kind, DueKind::Turn { .. })
            && shown.at_ms > now
        {
            arming.at_ms = shown.at_ms;
        }
        match self.deadlines.arm(&arming, true).await {
            Ok(true) => {
                tracing::debug!(%table_id, version = table.version, "deadline rebuilt");
                // The views show what is armed now.
                tables.rearmed(table_id, arming.deadline_after(None)).await;
                self.nudge.notify_one();
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, %table_id, "cannot rebuild a deadline"),
        }
        Ok(())
    }

    /// The root span of the server's play of one due thing (a trace of its own, like a
    /// person's call): `table bot move` or `table timeout`, with the table and the seat.
    fn due_span(due: &Due) -> tracing::Span {
        match due.kind {
            DueKind::Turn { hand, turn } => tracing::info_span!(
                parent: None,
                "table timeout",
                otel.name = "table timeout",
                okey.table.id = %due.table,
                okey.seat = due.seat,
                okey.hand = hand,
                okey.turn = turn,
            ),
            DueKind::Bot { version } => tracing::info_span!(
                parent: None,
                "table bot move",
                otel.name = "table bot move",
                okey.table.id = %due.table,
                okey.seat = due.seat,
                okey.table.version = version,
            ),
        }
    }

    /// Acts on one claimed due thing through the command path.
    pub async fn act(&self, tables: &Tables, due: Due) {
        let result = match due.kind {
            DueKind::Turn { hand, turn } => {
                let command = server_command(due.seat, Command::Timeout, Some((hand, turn)));
                let request_id = due.request_id();
                tables
                    .submit(Submission::new(
                        due.table,
                        SERVER_ACTOR,
                        &request_id,
                        command,
                    ))
                    .await
                    .map(|_| ())
            }
            DueKind::Bot { version } => self.bot_move(tables, due, version).await,
        };
        match result {
            Ok(()) => {}
            Err(ServiceError::Table(TableError::StaleTimeout | TableError::NotBotSeat(_)))
            | Err(ServiceError::VersionConflict { .. }) => {
                tracing::debug!(table = %due.table, "due thing overtaken by the table");
            }
            Err(e) => {
                // The play's own trace says it failed (`act` runs in its span).
                okey_platform::telemetry::record_error(
                    &tracing::Span::current(),
                    "server_play",
                    &e,
                );
                tracing::warn!(error = %e, table = %due.table, "server play failed");
            }
        }
    }

    /// A bot's command for its seat, decided on that seat's view alone. A command the rules
    /// refuse (which a bot should never send) falls back to the timeout play, so a table never
    /// stalls.
    async fn bot_move(&self, tables: &Tables, due: Due, version: u64) -> Result<(), ServiceError> {
        let table = tables.state(due.table).await?;
        if table.version != version {
            return Ok(());
        }
        let (Some(level), Some(view), Some(hand)) = (
            table.bot_level_of(due.seat),
            table.seat_view(due.seat),
            table.hand.as_ref(),
        ) else {
            return Ok(());
        };
        let turn = Some((table.hand_number, hand.turn.number));
        let command = level.bot().act(&view);
        let request_id = due.request_id();
        let command = server_command(due.seat, command, None);
        let played = tables
            .submit(
                Submission::new(due.table, SERVER_ACTOR, &request_id, command)
                    .expecting(Some(version)),
            )
            .await;
        match played {
            Err(ServiceError::Table(TableError::Rule(rule))) => {
                tracing::warn!(%rule, table = %due.table, seat = due.seat, "bot command refused; playing the timeout");
                let request_id = format!("{request_id}/timeout");
                let command = server_command(due.seat, Command::Timeout, turn);
                tables
                    .submit(
                        Submission::new(due.table, SERVER_ACTOR, &request_id, command)
                            .expecting(Some(version)),
                    )
                    .await
                    .map(|_| ())
            }
            other => other.map(|_| ()),
        }
    }

    /// Walks every table being played and rebuilds what is missing. A table whose Redis entry
    /// is already armed for its stored version ([`Deadlines::settled`]) is skipped without
    /// being loaded: with thousands of tables at play, a pass costs one query and a few Redis
    /// round trips, not a fold and a script per table.
    pub async fn reconcile(&self, tables: &Tables) -> Reconciled {
        let active = match tables.store().active_tables().await {
            Ok(active) => active,
            Err(e) => {
                tracing::warn!(error = %e, "cannot list the tables being played");
                return Reconciled::default();
            }
        };
        let settled = match self.deadlines.settled(&active).await {
            Ok(settled) => settled,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the deadlines; nothing rebuilt");
                return Reconciled {
                    active: active.len(),
                    checked: 0,
                };
            }
        };
        let mut checked = 0;
        for ((table_id, _), settled) in active.iter().zip(settled) {
            if settled {
                continue;
            }
            checked += 1;
            if let Err(e) = self.rebuild(tables, *table_id).await {
                tracing::warn!(error = %e, %table_id, "cannot rebuild a deadline");
            }
        }
        // One line a pass, not one a table (after a restart or a Redis flush every table's
        // deadline is rebuilt: thousands of lines at scale); each table's at DEBUG.
        if checked > 0 {
            tracing::info!(
                active = active.len(),
                checked,
                "deadlines rebuilt where Redis did not hold them armed"
            );
        } else {
            tracing::debug!(active = active.len(), checked, "reconciled");
        }
        Reconciled {
            active: active.len(),
            checked,
        }
    }
}

/// What one reconciler pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reconciled {
    /// Tables being played, as the store lists them.
    pub active: usize,
    /// Of those, the ones loaded and rebuilt (the others were armed for their stored version).
    pub checked: usize,
}

/// The receiving end of the arming channel, consumed by [`Live::run`].
pub struct LiveTasks {
    rx: mpsc::UnboundedReceiver<Appended>,
}

impl Live {
    /// Runs the arming task, the sweeper and the reconciler until the process stops.
    pub async fn run(self, tables: Tables, tasks: LiveTasks) {
        let mut rx = tasks.rx;
        let armer = {
            let live = self.clone();
            async move {
                // Whatever queued up while the last batch was written goes in the next one.
                let mut batch = Vec::new();
                while rx.recv_many(&mut batch, ARM_BATCH).await > 0 {
                    live.write(&batch).await;
                    batch.clear();
                }
            }
        };
        let sweeper = {
            let live = self.clone();
            let tables = tables.clone();
            async move {
                let every = Duration::from_millis(live.settings.sweep_interval_ms);
                loop {
                    let _ = tokio::time::timeout(every, live.nudge.notified()).await;
                    loop {
                        let claimed = match live.deadlines.claim().await {
                            Ok(claimed) => claimed,
                            Err(e) => {
                                tracing::warn!(error = %e, "cannot sweep deadlines");
                                break;
                            }
                        };
                        if claimed.is_empty() {
                            break;
                        }
                        for due in claimed {
                            let live = live.clone();
                            let tables = tables.clone();
                            let span = Live::due_span(&due);
                            tokio::spawn(
                                async move { live.act(&tables, due).await }.instrument(span),
                            );
                        }
                    }
                }
            }
        };
        let reconciler = {
            let live = self.clone();
            async move {
                let every = Duration::from_millis(live.settings.reconcile_interval_ms);
                loop {
                    // Each pass is a trace of its own; the tables it rebuilt are its events.
                    let span = tracing::info_span!(
                        parent: None,
                        "table reconcile",
                        otel.name = "table reconcile",
                    );
                    live.reconcile(&tables).instrument(span).await;
                    tokio::time::sleep(every).await;
                }
            }
        };
        tokio::join!(armer, sweeper, reconciler);
    }
}
