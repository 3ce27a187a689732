//! `okeyctl demo`: a whole match played by the running platform, told as it happens.
//!
//! It goes through the real services the way a client would: it signs a guest in through accounts
//! (an access token the other services verify with the keys they poll from accounts), then, with
//! a matchmaking address (`make run`'s demo), asks matchmaking for a table the way an app does
//! (`FindTable` allowing bots, followed on `WatchTicket`): after the bot wait the guest is seated
//! with three bots and plays its own seat (a strong bot deciding from the guest's seat view,
//! through `SubmitCommand`), no operator token anywhere. Without one, it creates a table of four
//! bots with an operator token (CreateTable needs the `admin` role, which no sign-in grants) and
//! follows it as a spectator. Either way it prints each hand's end, scores and running totals and
//! the winner, writes every hand's events as files `okeyctl replay` reads, fetched through the
//! table service's `GetHandHistory` like any client ([`crate::history`]: the guest's token for the
//! hands it sat in, the operator's for a table of bots), and says how to look further.
//!
//! The operator token is minted here with a private key the accounts service signs with: locally
//! `make run` generates one into `.run/` and starts accounts with it. The token takes its `kid`
//! from the key accounts publishes (`ListPublicKeys`) that verifies a signature of this key, and
//! its issuer and audience from the same answer, so nothing here re-derives what the platform
//! decides; a key accounts does not publish is refused before anything is created.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use okey_platform::command::command_to_proto;
use okey_proto::v1 as pb;
use okey_proto::v1::accounts_service_client::AccountsServiceClient;
use okey_proto::v1::matchmaking_service_client::MatchmakingServiceClient;
use okey_proto::v1::table_service_client::TableServiceClient;
use okey_telemetry::TracedChannel;
use pb::table_event::Event as Ev;
use tonic::Code;

use crate::client::{authorized, connect, connect_lazy, host_port, mint_token, refused};
use crate::retry::{GIVE_UP_AFTER, Outages, retryable};

/// The player id the operator token names; tables it creates are created by `players/okeyctl-demo`.
pub const OPERATOR: &str = "okeyctl-demo";
/// The device id the demo's guest signs in with (the same guest every run).
const GUEST_DEVICE: &str = "okeyctl-demo-guest";
/// How long the operator token lives: it is used once, right away.
const OPERATOR_TOKEN_TTL: Duration = Duration::from_secs(120);

/// What the demo talks to and how it plays.
#[derive(Debug, Clone)]
pub struct Demo {
    /// The accounts service, e.g. `http://127.0.0.1:50051`.
    pub accounts_url: String,
    /// The table service, e.g. `http://127.0.0.1:50053`.
    pub table_url: String,
    /// The matchmaking service, e.g. `http://127.0.0.1:50052`: the guest finds a table there
    /// (quick play with bots) and plays its seat. `None`: a table of four bots made with an
    /// operator token.
    pub matchmaking_url: Option<String>,
    /// A PKCS#8 Ed25519 private key (PEM) the accounts service signs with.
    pub signing_key: PathBuf,
    /// Write each hand for `okeyctl replay`, fetched through the table service's
    /// `GetHandHistory` once it has ended.
    pub export: bool,
    /// Where hand files go: `<hands_dir>/<table id>/hand-<n>.jsonl`.
    pub hands_dir: PathBuf,
    /// The rule preset (`classic`, …).
    pub preset: String,
    /// The bots' level.
    pub bots: pb::BotLevel,
    /// Give up when the match has not ended by then.
    pub timeout: Duration,
    /// Show a spinner on stderr while a hand is being played (only drawn on a terminal).
    pub progress: bool,
    /// How the printed hints call grpcurl.
    pub grpcurl: String,
    /// How the printed hints call okeyctl (`cargo run -q -p okeyctl --`, or a prebuilt binary).
    pub okeyctl: String,
}

/// How one hand ended, as the table service announced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandSummary {
    /// 1-based.
    pub number: i32,
    /// `finished`, `pile_empty` or `cancelled`.
    pub outcome: String,
    /// The seat that went out.
    pub winner: Option<i32>,
    /// End-of-hand scores per seat.
    pub scores: Vec<i32>,
    /// In-play penalties of the hand per seat.
    pub penalties: Vec<i32>,
    /// Running match totals after the hand.
    pub totals: Vec<i32>,
}

/// What the demo saw.
#[derive(Debug, Clone)]
pub struct DemoReport {
    /// `tables/{uuid}`.
    pub table: String,
    /// The guest signed in through accounts, `players/{id}`.
    pub guest: String,
    /// Every hand, in order.
    pub hands: Vec<HandSummary>,
    /// Final totals.
    pub totals: Vec<i32>,
    /// The winning seats.
    pub winners: Vec<i32>,
    /// The hand files written, in hand order.
    pub hand_files: Vec<PathBuf>,
    /// The hands `okeyctl verify`'s check passed on (every hand written).
    pub verified: Vec<i32>,
}

/// Signs an admin token for [`OPERATOR`] valid for `ttl` with the PEM key (see
/// [`mint_token`]).
pub fn mint_operator_token(
    pem: &[u8],
    published: &pb::ListPublicKeysResponse,
    ttl: Duration,
) -> Result<String> {
    mint_token(pem, published, ttl, OPERATOR, &["admin"])
}

/// Plays the demo, writing what happens to `out`.
///
/// Like an app, it rides out a restart of any service: a call that fails with UNAVAILABLE is made
/// again with backoff and the same `request_id`, an update stream that ends is opened again from
/// the last version received, and it gives up only after a service has been failing for
/// [`crate::retry::GIVE_UP_AFTER`] (saying on stderr what it waits for meanwhile).
pub async fn run(demo: &Demo, out: &mut dyn Write) -> Result<DemoReport> {
    let outages = Outages::default();
    // Connected at the first call: a service that is not up yet is waited for like one that
    // restarts.
    let accounts = AccountsServiceClient::new(connect_lazy(&demo.accounts_url)?);
    let tables = TableServiceClient::new(connect_lazy(&demo.table_url)?);

    // 1. A player's way in: a guest session from accounts.
    let (guest, guest_token, guest_name) =
        sign_in_guest(&accounts, &demo.accounts_url, &outages).await?;
    writeln!(
        out,
        "Signed in through accounts as the guest \"{guest_name}\" ({guest})"
    )?;

    let (created, player) = match &demo.matchmaking_url {
        // 2. Quick play: the guest finds a table through matchmaking, bots fill the other seats.
        Some(url) => {
            let (table, seat) = quick_play(url, &guest_token, demo, &tables, &outages, out).await?;
            (table, Some(seat))
        }
        None => (
            operator_table(&accounts, &tables, demo, &outages, out).await?,
            None,
        ),
    };
    let table = created.name.clone();
    let seats: Vec<Sitter> = (0..4)
        .map(|i| {
            let occupant = created.seats.get(i).and_then(|s| s.player.as_ref());
            match occupant {
                Some(p) if p.player == guest => Sitter {
                    short: "you".to_owned(),
                    long: format!("you, \"{guest_name}\" (a strong bot picks your moves)"),
                },
                Some(p) if p.bot => Sitter {
                    short: p.display_name.clone(),
                    long: p.display_name.clone(),
                },
                Some(p) if !p.display_name.is_empty() => Sitter {
                    short: p.display_name.clone(),
                    long: format!("{} ({})", p.display_name, p.player),
                },
                Some(p) => Sitter {
                    short: p.player.clone(),
                    long: p.player.clone(),
                },
                None => Sitter {
                    short: "free".to_owned(),
                    long: "free".to_owned(),
                },
            }
        })
        .collect();
    let follow = follow_table(
        demo,
        &accounts,
        &tables,
        &outages,
        &guest,
        guest_token.clone(),
        created,
        seats,
        out,
    );
    let Some(seat) = player else {
        return follow.await;
    };
    // The guest plays its seat while the match is followed (one task: bots are not Send).
    let play = play_seat(
        &tables,
        &outages,
        &demo.table_url,
        &guest_token,
        &table,
        seat,
    );
    tokio::pin!(follow, play);
    let mut playing = true;
    loop {
        tokio::select! {
            report = &mut follow => return report,
            played = &mut play, if playing => {
                playing = false;
                if let Err(e) = played {
                    bail!("the guest could not play its seat: {e:#}");
                }
            }
        }
    }
}

/// A table of four bots, created with an operator token minted from the local signing key.
async fn operator_table(
    accounts: &AccountsServiceClient<TracedChannel>,
    tables: &TableServiceClient<TracedChannel>,
    demo: &Demo,
    outages: &Outages,
    out: &mut dyn Write,
) -> Result<pb::Table> {
    // An operator's way in: a short-lived admin token from the key accounts signs with.
    let admin_token = operator_token(accounts, demo, outages).await?;
    writeln!(
        out,
        "Minted an operator token (role admin, {} s) with {}",
        OPERATOR_TOKEN_TTL.as_secs(),
        demo.signing_key.display()
    )?;
    let request_id = uuid::Uuid::new_v4().to_string();
    outages
        .call("table", "CreateTable", || {
            let mut api = tables.clone();
            let request = authorized(
                pb::CreateTableRequest {
                    request_id: request_id.clone(),
                    rules: Some(pb::RuleSet {
                        preset: demo.preset.clone(),
                        ..Default::default()
                    }),
                    seats: Vec::new(),
                    empty_seat_bots: Some(demo.bots as i32),
                    ..Default::default()
                },
                &admin_token,
            );
            async move { api.create_table(request).await }
        })
        .await
        .map_err(|s| refused("CreateTable", &demo.table_url, &s))?
        .into_inner()
        .table
        .ok_or_else(|| anyhow!("CreateTable answered without a table"))
}

/// Quick play as an app does it: FindTable allowing bots, WatchTicket until MATCHED. Returns the
/// table and the guest's seat.
async fn quick_play(
    url: &str,
    guest_token: &str,
    demo: &Demo,
    tables: &TableServiceClient<TracedChannel>,
    outages: &Outages,
    out: &mut dyn Write,
) -> Result<(pb::Table, i32)> {
    let mm = MatchmakingServiceClient::new(connect_lazy(url)?);
    // One request id for every attempt: a retried FindTable returns the ticket it opened.
    let request_id = uuid::Uuid::new_v4().to_string();
    let ticket = outages
        .call("matchmaking", "FindTable", || {
            let mut api = mm.clone();
            let request = authorized(
                pb::FindTableRequest {
                    request_id: request_id.clone(),
                    rules: Some(pb::RuleSet {
                        preset: demo.preset.clone(),
                        ..Default::default()
                    }),
                    allow_bots: true,
                    bot_level: demo.bots as i32,
                },
                guest_token,
            );
            async move { api.find_table(request).await }
        })
        .await
        .map_err(|s| refused("FindTable", url, &s))?
        .into_inner()
        .ticket
        .ok_or_else(|| anyhow!("FindTable answered without a ticket"))?;
    let wait = match (&ticket.create_time, &ticket.expire_time) {
        (Some(c), Some(e)) => e.seconds - c.seconds,
        _ => 0,
    };
    writeln!(
        out,
        "Looking for a {} table (FindTable, bots allowed): other players are welcome, bots take \
         the seats still free after {wait} s...",
        preset_name(demo)
    )?;
    out.flush()?;
    let asked = Instant::now();
    let deadline = tokio::time::Instant::now() + demo.timeout;
    let matched = 'watch: loop {
        // The stream's first message is the ticket as it is now: after a reconnect nothing is
        // missed.
        let mut stream = outages
            .call("matchmaking", "WatchTicket", || {
                let mut api = mm.clone();
                let request = authorized(
                    pb::WatchTicketRequest {
                        name: ticket.name.clone(),
                    },
                    guest_token,
                );
                async move { api.watch_ticket(request).await }
            })
            .await
            .map_err(|s| refused("WatchTicket", url, &s))?
            .into_inner();
        loop {
            let next = tokio::time::timeout_at(deadline, stream.message())
                .await
                .map_err(|_| anyhow!("{} was not matched in time", ticket.name))?;
            let next = match next {
                Ok(Some(next)) => next,
                // Ended before a match (a server stopping, a broken connection): call again.
                Ok(None) => {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue 'watch;
                }
                Err(s) if retryable(&s) => {
                    outages.failed("matchmaking", "WatchTicket", s.message());
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue 'watch;
                }
                Err(s) => return Err(refused("WatchTicket", url, &s)),
            };
            let Some(t) = next.ticket else { continue };
            match pb::TicketState::try_from(t.state) {
                Ok(pb::TicketState::Matched) => break 'watch t,
                Ok(pb::TicketState::Searching) => {}
                _ => bail!("{} ended without a table (state {})", t.name, t.state),
            }
        }
    };
    let others = match matched.players_found {
        0 | 1 => "three bots".to_owned(),
        4 => "three other players".to_owned(),
        n => format!("{} other player(s) and {} bot(s)", n - 1, 4 - n),
    };
    writeln!(
        out,
        "Found a table after {:.1} s (WatchTicket said MATCHED): you sit in seat {} with {others}.",
        asked.elapsed().as_secs_f64(),
        matched.seat
    )?;
    let table = outages
        .call("table", "GetTable", || {
            let mut api = tables.clone();
            let request = authorized(
                pb::GetTableRequest {
                    name: matched.table.clone(),
                },
                guest_token,
            );
            async move { api.get_table(request).await }
        })
        .await
        .map_err(|s| refused("GetTable", &demo.table_url, &s))?
        .into_inner()
        .table
        .ok_or_else(|| anyhow!("GetTable answered without a table"))?;
    Ok((table, matched.seat))
}

/// `table`'s update stream from after version `after`, opened as any call is (waiting out a
/// service that restarts).
async fn watch_table(
    tables: &TableServiceClient<TracedChannel>,
    outages: &Outages,
    table: &str,
    after: i64,
    token: &str,
) -> Result<tonic::Streaming<pb::WatchTableResponse>, tonic::Status> {
    outages
        .call("table", "WatchTable", || {
            let mut api = tables.clone();
            let request = authorized(
                pb::WatchTableRequest {
                    table: table.to_owned(),
                    after_version: after,
                },
                token,
            );
            async move { api.watch_table(request).await }
        })
        .await
        .map(tonic::Response::into_inner)
}

/// The guest plays its seat: whenever it is the seat's turn, a strong bot decides from the guest's
/// own seat view and the guest submits the command. Ends with the match.
async fn play_seat(
    tables: &TableServiceClient<TracedChannel>,
    outages: &Outages,
    url: &str,
    token: &str,
    table: &str,
    seat: i32,
) -> Result<()> {
    let table = table.to_owned();
    let mut bot = okey_bots::Level::Strong.bot();
    let mut hand = 0;
    // The update stream only wakes the seat up when the table moves; opened again (from the
    // last version seen) when it ends.
    let mut stream: Option<tonic::Streaming<pb::WatchTableResponse>> = None;
    let mut seen = 0i64;
    loop {
        if stream.is_none() {
            let opened = watch_table(tables, outages, &table, seen, token)
                .await
                .map_err(|s| refused("WatchTable", url, &s))?;
            stream = Some(opened);
        }
        let view = outages
            .call("table", "GetSeatView", || {
                let mut api = tables.clone();
                let request = authorized(
                    pb::GetSeatViewRequest {
                        table: table.clone(),
                        view_form: pb::SeatViewForm::Unspecified as i32,
                        min_version: None,
                    },
                    token,
                );
                async move { api.get_seat_view(request).await }
            })
            .await
            .map_err(|s| refused("GetSeatView", url, &s))?
            .into_inner()
            .view
            .ok_or_else(|| anyhow!("no view"))?;
        seen = seen.max(view.version);
        let state = view.summary.as_ref().map(|s| s.state).unwrap_or_default();
        if state == pb::TableState::Finished as i32 {
            return Ok(());
        }
        if view.hand_number != hand {
            hand = view.hand_number;
            bot = okey_bots::Level::Strong.bot();
        }
        let live = matches!(
            pb::HandPhase::try_from(view.phase),
            Ok(pb::HandPhase::Take | pb::HandPhase::Act | pb::HandPhase::DiscardOnly)
        );
        if live && view.turn_seat == seat && state == pb::TableState::Playing as i32 {
            let engine: okey_rules::SeatView = serde_json::from_str(&view.engine_view)?;
            let Some(command) = command_to_proto(&bot.act(&engine)) else {
                continue;
            };
            // Every attempt of this command carries the same request id: one the service
            // applied before it stopped is answered again, not played twice.
            let request_id = uuid::Uuid::new_v4().to_string();
            let submitted = outages
                .call("table", "SubmitCommand", || {
                    let mut api = tables.clone();
                    let request = authorized(
                        pb::SubmitCommandRequest {
                            request_id: request_id.clone(),
                            table: table.clone(),
                            command: Some(command.clone()),
                            expected_version: Some(view.version),
                            view_form: pb::SeatViewForm::Typed as i32,
                        },
                        token,
                    );
                    async move { api.submit_command(request).await }
                })
                .await;
            match submitted {
                Err(s) if retryable(&s) => return Err(refused("SubmitCommand", url, &s)),
                // A refusal (the server moved first, a timeout) is decided again on a fresh view.
                Ok(_) | Err(_) => {}
            }
            continue;
        }
        // Not our turn: wait for the table to move (or re-check after a while).
        let waited = match stream.as_mut() {
            Some(s) => tokio::time::timeout(Duration::from_secs(2), s.message()).await,
            None => continue,
        };
        match waited {
            Err(_) => {}
            Ok(Ok(Some(message))) => {
                if let Some(update) = message.update {
                    seen = seen.max(update.version);
                }
            }
            // The stream ended (a server stopping, a broken connection): open it again.
            Ok(Ok(None) | Err(_)) => {
                stream = None;
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }
    }
}

/// Follows the match on the guest's update stream and tells it.
#[allow(clippy::too_many_arguments)]
async fn follow_table(
    demo: &Demo,
    accounts: &AccountsServiceClient<TracedChannel>,
    tables: &TableServiceClient<TracedChannel>,
    outages: &Outages,
    guest: &str,
    mut guest_token: String,
    created: pb::Table,
    seats: Vec<Sitter>,
    out: &mut dyn Write,
) -> Result<DemoReport> {
    let table = created.name.clone();
    let guest = guest.to_owned();
    writeln!(out)?;
    writeln!(
        out,
        "Table {} ({table}): {} rules, {}{}",
        short_id(&table),
        preset_name(demo),
        match created
            .rules
            .as_ref()
            .and_then(|r| r.match_length.as_ref())
            .and_then(|m| m.length)
        {
            Some(pb::match_length::Length::Hands(n)) => format!("{n} hands"),
            Some(pb::match_length::Length::PenaltyLimit(l)) => {
                format!("hands until a total reaches {l}")
            }
            None => "hands".to_owned(),
        },
        if created.rules.as_ref().and_then(|r| r.partners) == Some(true) {
            ", partners: seats 0 and 2 against 1 and 3"
        } else {
            ""
        }
    )?;
    for (i, sitter) in seats.iter().enumerate() {
        writeln!(out, "  seat {i}  {}", sitter.long)?;
    }
    writeln!(
        out,
        "Each hand: its indicator and okey, every opening and penalty, who went out, then the \
         scores (lower is better)."
    )?;
    writeln!(out)?;
    out.flush()?;

    // Follow the match: as a spectator (an operator's table) or from the guest's seat.
    let bar = spinner(demo.progress);
    outages.set_bar(&bar);
    let deadline = tokio::time::Instant::now() + demo.timeout;
    let started = Instant::now();
    let names: Vec<String> = seats.iter().map(|s| s.short.clone()).collect();
    let mut follow = Follow {
        header: score_header_named(&names),
        seats,
        hands: Vec::new(),
        hand_files: Vec::new(),
        verified: Vec::new(),
        moves: 0,
        last_move: (0, String::new()),
        hand: 0,
        finished: None,
    };
    // Version 1 is TableCreated: from there every event comes, nothing is summarised in a
    // snapshot (with fast bots the match may be over before the stream opens).
    let mut after = 1i64;
    let mut reconnects = 0;
    // Since when the stream has been opened again without anything coming on it.
    let mut reopened: Option<Instant> = None;
    'watch: loop {
        // Opened again after a break from the last version received: nothing is missed, and
        // nothing comes twice.
        let opened = watch_table(tables, outages, &table, after, &guest_token).await;
        let mut stream = match opened {
            Ok(s) => s,
            Err(s) if s.code() == Code::Unauthenticated && reconnects < 5 => {
                // The guest's access token expired during a long match: sign in again.
                reconnects += 1;
                guest_token = sign_in_guest(accounts, &demo.accounts_url, outages)
                    .await?
                    .1;
                continue;
            }
            Err(s) => return Err(refused("WatchTable", &demo.table_url, &s)),
        };
        loop {
            let next = tokio::time::timeout_at(deadline, stream.message()).await;
            let update = match next {
                Err(_) => bail!(
                    "the match at {table} has not ended after {} s (hand {}, {} moves in it); \
                     the table service's log says why (services/table.log in the run directory, \
                     OKEY_RUN_DIR or .run), or raise --timeout-secs",
                    demo.timeout.as_secs(),
                    follow.hand,
                    follow.moves
                ),
                Ok(Ok(Some(message))) => {
                    reopened = None;
                    message.update
                }
                // The stream ended or broke (a server stopping ends it with UNAVAILABLE
                // `server_stopping` after what it had): open it again from `after`.
                Ok(Ok(None)) | Ok(Err(_))
                    if reopened.is_some_and(|t| t.elapsed() >= GIVE_UP_AFTER) =>
                {
                    bail!(
                        "the table service keeps ending the update stream of {table} (for {} s)",
                        GIVE_UP_AFTER.as_secs()
                    )
                }
                Ok(Ok(None)) => {
                    reopened.get_or_insert_with(Instant::now);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue 'watch;
                }
                Ok(Err(s)) if retryable(&s) => {
                    reopened.get_or_insert_with(Instant::now);
                    outages.failed("table", "WatchTable", s.message());
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue 'watch;
                }
                Ok(Err(_)) if reconnects < 5 => {
                    reconnects += 1;
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue 'watch;
                }
                Ok(Err(s)) => return Err(refused("WatchTable", &demo.table_url, &s)),
            };
            let Some(update) = update else { continue };
            if let Some(pb::table_update::Kind::Event(pb::TableEvent { event: Some(event) })) =
                update.kind
            {
                if update.version <= after {
                    // Already told (a server replaying more than asked for).
                    continue;
                }
                if update.version > after + 1 {
                    bar.suspend(|| {
                        writeln!(
                            out,
                            "  (events v{} to v{} did not come on the stream)",
                            after + 1,
                            update.version - 1
                        )
                    })?;
                }
                after = update.version;
                let ended = follow.event(event, &bar, out)?;
                if let (Some((number, void)), true) = (ended, demo.export) {
                    // The guest reads the hands it sat in; a spectator needs the operator's
                    // token (role admin, so support: the read is in the audit log).
                    let token = if demo.matchmaking_url.is_some() {
                        guest_token.clone()
                    } else {
                        operator_token(accounts, demo, outages).await?
                    };
                    let hand = u32::try_from(number).context("a hand number is positive")?;
                    let fetched = outages
                        .call("table", "GetHandHistory", || {
                            crate::history::fetch(&demo.table_url, &token, &table, hand)
                        })
                        .await
                        .with_context(|| format!("cannot fetch hand {number} of {table}"))?;
                    let file = export(demo, &fetched, &table, number, void)?;
                    follow.hand_files.push(file);
                    // What `okeyctl verify` checks, on every hand.
                    let report = crate::verify::verify(&fetched);
                    if let Some(d) = &report.difference {
                        bail!(
                            "hand {number} of {table} does not verify: v{} {}: {}",
                            d.version,
                            d.event,
                            d.problem
                        );
                    }
                    bar.suspend(|| {
                        writeln!(
                            out,
                            "  verified (okeyctl verify): the seed's commitment, the deal, every \
                             event, penalty and score ({} checks)",
                            report.checked.len()
                        )
                    })?;
                    follow.verified.push(number);
                }
                if ended.is_some() {
                    bar.suspend(|| writeln!(out))?;
                }
                if follow.finished.is_some() {
                    break 'watch;
                }
            }
        }
    }
    bar.finish_and_clear();
    let (totals, winners) = follow.finished.take().expect("the loop ends on MatchEnded");
    writeln!(
        out,
        "The match took {:.1} s ({} events).",
        started.elapsed().as_secs_f64(),
        after
    )?;
    writeln!(out)?;
    look_further(demo, &table, &follow.hand_files, out)?;
    Ok(DemoReport {
        table,
        guest,
        hands: follow.hands,
        totals,
        winners,
        hand_files: follow.hand_files,
        verified: follow.verified,
    })
}

/// Who sits in a seat, as the story names them: `short` in every line about a move, `long` once
/// when the table is introduced.
pub struct Sitter {
    short: String,
    long: String,
}

/// The state of the story told so far.
struct Follow {
    seats: Vec<Sitter>,
    /// The score rows' header, with who sits where.
    header: String,
    hands: Vec<HandSummary>,
    hand_files: Vec<PathBuf>,
    verified: Vec<i32>,
    moves: u32,
    /// The latest move, told for a penalty it causes: its number and what it was.
    last_move: (u32, String),
    hand: i32,
    finished: Option<(Vec<i32>, Vec<i32>)>,
}

impl Follow {
    /// A move that may cause a penalty: counted, and kept to tell that penalty.
    fn moved(&mut self, what: String) {
        self.moves += 1;
        self.last_move = (self.moves, what);
    }

    fn seat(&self, seat: i32) -> String {
        match self.seats.get(seat as usize) {
            Some(sitter) => format!("seat {seat} ({})", sitter.short),
            None => format!("seat {seat}"),
        }
    }

    /// Tells `event`; returns the number of a hand it ended (and whether it was void).
    fn event(
        &mut self,
        event: Ev,
        bar: &indicatif::ProgressBar,
        out: &mut dyn Write,
    ) -> Result<Option<(i32, bool)>> {
        let mut lines = Vec::new();
        let mut ended = None;
        match event {
            Ev::HandStarted(h) => {
                self.hand = h.hand_number;
                self.moves = 0;
                lines.push(format!(
                    "Hand {}: indicator {}, okey {}; {} starts with 22 tiles",
                    h.hand_number,
                    h.indicator,
                    h.okey,
                    self.seat(h.first_seat)
                ));
            }
            Ev::HandOpened(o) => {
                self.moves += 1;
                self.last_move = (self.moves, format!("{}'s opening", self.seat(o.seat)));
                let kind = if o.kind == pb::OpeningKind::Pairs as i32 {
                    "pairs"
                } else {
                    "melds"
                };
                lines.push(format!(
                    "  move {:>3}: {} opened with {kind}: {}",
                    self.moves,
                    self.seat(o.seat),
                    melds(&o.melds)
                ));
            }
            Ev::WrongOpening(w) => {
                self.moves += 1;
                self.last_move = (
                    self.moves,
                    format!("{}'s opening below the threshold", self.seat(w.seat)),
                );
                lines.push(format!(
                    "  move {:>3}: {} tried to open with {} (needs {})",
                    self.moves,
                    self.seat(w.seat),
                    w.amount,
                    w.needed
                ));
            }
            Ev::PenaltyCharged(p) => {
                if let Some(p) = p.penalty {
                    let (at, cause) = &self.last_move;
                    lines.push(format!(
                        "            {} is charged {:+} ({}) at move {at}: {cause}",
                        self.seat(p.seat),
                        p.points,
                        p.reason
                    ));
                }
            }
            Ev::TurnTimedOut(t) => {
                lines.push(format!("            {} ran out of time", self.seat(t.seat)));
            }
            Ev::HandCancelled(_) => {
                lines.push("  all four seats opened with pairs: the hand is void".to_owned());
            }
            Ev::HandEnded(h) => {
                let outcome =
                    pb::HandOutcome::try_from(h.outcome).unwrap_or(pb::HandOutcome::Unspecified);
                let (outcome_name, story) = match (outcome, h.winner) {
                    (pb::HandOutcome::Finished, Some(w)) => {
                        ("finished", format!("{} went out", self.seat(w)))
                    }
                    (pb::HandOutcome::PileEmpty, _) => {
                        ("pile_empty", "the pile ran out; nobody went out".to_owned())
                    }
                    (pb::HandOutcome::Cancelled, _) => {
                        ("cancelled", "void, dealt again".to_owned())
                    }
                    _ => ("unknown", "ended".to_owned()),
                };
                lines.push(format!(
                    "  Hand {} over after {} moves: {story}",
                    h.hand_number, self.moves
                ));
                lines.push(self.header.clone());
                lines.push(score_row("hand score", &h.scores));
                lines.push(score_row("penalties", &h.penalties));
                lines.push(score_row("total", &h.totals));
                ended = Some((h.hand_number, outcome_name == "cancelled"));
                self.hands.push(HandSummary {
                    number: h.hand_number,
                    outcome: outcome_name.to_owned(),
                    winner: h.winner,
                    scores: h.scores,
                    penalties: h.penalties,
                    totals: h.totals,
                });
            }
            Ev::MatchEnded(m) => {
                let best = m
                    .winners
                    .iter()
                    .map(|w| self.seat(*w))
                    .collect::<Vec<_>>()
                    .join(" and ");
                lines.push(format!(
                    "Match over after {} hands. Final totals (lower is better):",
                    self.hands.len()
                ));
                lines.push(self.header.clone());
                lines.push(score_row("total", &m.totals));
                lines.push(match m.winners.len() {
                    0 => "Nobody wins: a draw.".to_owned(),
                    _ => format!("Winner: {best}."),
                });
                self.finished = Some((m.totals, m.winners));
            }
            Ev::TileDrawn(_) | Ev::MeldsLaid(_) | Ev::TilesAdded(_) => self.moves += 1,
            Ev::SideDiscardTaken(t) => self.moved(format!(
                "{} took the side discard {}",
                self.seat(t.seat),
                t.tile
            )),
            Ev::SideDiscardReturned(r) => self.moved(format!(
                "{} gave the side discard {} back",
                self.seat(r.seat),
                r.tile
            )),
            Ev::OkeyRetrieved(r) => self.moved(format!(
                "{} took the okey {} back from the table",
                self.seat(r.seat),
                r.okey
            )),
            Ev::TileDiscarded(d) => {
                self.moved(format!("{} discarded {}", self.seat(d.seat), d.tile));
            }
            Ev::PlayableCalled(c) => self.moved(format!(
                "{} called the discard {}",
                self.seat(c.seat),
                c.tile
            )),
            Ev::TableRolledBack(r) => self.moved(format!(
                "{} undid this turn's table actions",
                self.seat(r.seat)
            )),
            Ev::SeatTaken(_)
            | Ev::SeatLeft(_)
            | Ev::TableCreated(_)
            | Ev::SeatHandedToBot(_)
            | Ev::SeatReclaimed(_)
            | Ev::ClientSeedSent(_) => {}
        }
        bar.set_message(format!("hand {}: {} moves", self.hand, self.moves));
        if !lines.is_empty() {
            bar.suspend(|| -> std::io::Result<()> {
                for line in &lines {
                    writeln!(out, "{line}")?;
                }
                out.flush()
            })?;
        }
        Ok(ended)
    }
}

/// The header of the score rows.
pub fn score_header() -> String {
    format!(
        "    {:<11}{:>9}{:>9}{:>9}{:>9}",
        "", "seat 0", "seat 1", "seat 2", "seat 3"
    )
}

/// [`score_header`] with a second line naming who sits in each seat (cut to the column).
pub fn score_header_named(names: &[String]) -> String {
    let mut row = format!("    {:<11}", "");
    for name in names {
        // "strong bot" does not fit a column: a bot is a bot here (its level is named above).
        let name = if name.ends_with(" bot") { "bot" } else { name };
        let cut: String = name.chars().take(8).collect();
        row.push_str(&format!("{cut:>9}"));
    }
    format!("{}\n{row}", score_header())
}

/// The preset the demo plays, as a person reads it.
fn preset_name(demo: &Demo) -> &str {
    if demo.preset.is_empty() {
        "classic"
    } else {
        &demo.preset
    }
}

/// The first part of a resource's id (`tables/1b2c3d4e-…` → `1b2c3d4e`), to name it in the
/// story; the full name is printed once.
fn short_id(name: &str) -> &str {
    let id = name.rsplit('/').next().unwrap_or(name);
    id.split('-').next().unwrap_or(id)
}

/// One row of per-seat numbers, as printed after each hand and at the end of the match.
pub fn score_row(label: &str, values: &[i32]) -> String {
    let mut row = format!("    {label:<11}");
    for v in values {
        row.push_str(&format!("{v:>9}"));
    }
    row
}

fn melds(melds: &[pb::Meld]) -> String {
    melds
        .iter()
        .map(|m| format!("[{}]", m.tiles.join(" ")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes hand `number`'s events for `okeyctl replay`; a void hand gets its own file.
fn export(
    demo: &Demo,
    fetched: &crate::history::Fetched,
    table: &str,
    number: i32,
    void: bool,
) -> Result<PathBuf> {
    let deals = fetched
        .finished_deals()
        .with_context(|| format!("cannot export hand {number} of {table}"))?;
    let id = table.strip_prefix("tables/").unwrap_or(table);
    let dir = demo.hands_dir.join(id);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let file = if void {
        dir.join(format!("hand-{number}-void-{}.jsonl", deals.len()))
    } else {
        dir.join(format!("hand-{number}.jsonl"))
    };
    let events = deals
        .last()
        .expect("finished_hand returns at least one deal");
    std::fs::write(&file, crate::history::to_jsonl(events))
        .with_context(|| format!("cannot write {}", file.display()))?;
    Ok(file)
}

/// The commands to look at the table and its hands.
fn look_further(demo: &Demo, table: &str, files: &[PathBuf], out: &mut dyn Write) -> Result<()> {
    let accounts = host_port(&demo.accounts_url);
    let tables = host_port(&demo.table_url);
    let g = &demo.grpcurl;
    writeln!(out, "Look at it yourself ({table}):")?;
    writeln!(
        out,
        "  # a player's access token (any device id of 8+ characters)"
    )?;
    writeln!(
        out,
        "  ACCESS=$({g} -plaintext -d '{{\"request_id\":\"look-1\",\"device_id\":\"my-laptop-0001\"}}' {accounts} okey.v1.AccountsService/SignInAsGuest | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"session\"][\"accessToken\"])')"
    )?;
    writeln!(out, "  # the table: rules, seats, totals")?;
    writeln!(
        out,
        "  {g} -plaintext -H \"authorization: Bearer $ACCESS\" -d '{{\"name\":\"{table}\"}}' {tables} okey.v1.TableService/GetTable"
    )?;
    writeln!(
        out,
        "  # every event after the table's creation (version 1), as a spectator sees it; from 0 the stream would start with a snapshot instead (it stays open: Ctrl-C)"
    )?;
    writeln!(
        out,
        "  {g} -plaintext -H \"authorization: Bearer $ACCESS\" -d '{{\"table\":\"{table}\",\"after_version\":1}}' {tables} okey.v1.TableService/WatchTable"
    )?;
    if let Some(first) = files.first() {
        writeln!(
            out,
            "  # replay a hand: every event, the reason for every penalty and every score"
        )?;
        writeln!(out, "  {} replay {}", demo.okeyctl, first.display())?;
        if let Some(dir) = first.parent() {
            writeln!(
                out,
                "  # ({} hand files in {}; `okeyctl export-hand` fetches any hand your token may read)",
                files.len(),
                dir.display()
            )?;
        }
    }
    let page = demo.table_url.trim_end_matches('/');
    let id = table.strip_prefix("tables/").unwrap_or(table);
    writeln!(
        out,
        "  # support's replay page: every rack step by step; paste the token this prints (15 minutes)"
    )?;
    writeln!(out, "  {}", support_token_command(demo))?;
    writeln!(out, "  {page}/replay/#table={id}&hand=1&step=0")?;
    Ok(())
}

/// Signs the demo's guest in; returns its name and access token.
async fn sign_in_guest(
    accounts: &AccountsServiceClient<TracedChannel>,
    url: &str,
    outages: &Outages,
) -> Result<(String, String, String)> {
    // A retry (same request id) signs the same guest in again.
    let request_id = uuid::Uuid::new_v4().to_string();
    let answer = outages
        .call("accounts", "SignInAsGuest", || {
            let mut api = accounts.clone();
            let request = pb::SignInAsGuestRequest {
                request_id: request_id.clone(),
                device_id: GUEST_DEVICE.to_owned(),
                display_name: "Demo guest".to_owned(),
            };
            async move { api.sign_in_as_guest(request).await }
        })
        .await
        .map_err(|s| refused("SignInAsGuest", url, &s))?
        .into_inner();
    let name = answer.account.map(|a| a.name).unwrap_or_default();
    let token = answer
        .session
        .map(|s| s.access_token)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| anyhow!("SignInAsGuest answered without an access token"))?;
    // The name the tables show for this guest (the one its token carries).
    let display_name = outages
        .call("accounts", "GetProfile", || {
            let mut api = accounts.clone();
            let request = authorized(
                pb::GetProfileRequest {
                    name: "players/me".to_owned(),
                },
                &token,
            );
            async move { api.get_profile(request).await }
        })
        .await
        .map_err(|s| refused("GetProfile", url, &s))?
        .into_inner()
        .profile
        .map(|p| p.display_name)
        .unwrap_or_default();
    Ok((name, token, display_name))
}

/// An admin token signed with the key in `demo.signing_key`, under the `kid` accounts publishes
/// for it, with accounts' issuer and audience.
async fn operator_token(
    accounts: &AccountsServiceClient<TracedChannel>,
    demo: &Demo,
    outages: &Outages,
) -> Result<String> {
    minted(
        accounts,
        outages,
        &demo.accounts_url,
        &demo.signing_key,
        OPERATOR,
        &["admin"],
        OPERATOR_TOKEN_TTL,
    )
    .await
}

/// A token for `subject` with `roles`, minted with the local signing key accounts signs with
/// (`okeyctl token`): a local-run convenience, like the demo's operator token.
pub async fn local_token(
    accounts_url: &str,
    signing_key: &Path,
    subject: &str,
    roles: &[&str],
    ttl: Duration,
) -> Result<String> {
    let accounts = AccountsServiceClient::new(connect("accounts", accounts_url).await?);
    minted(
        &accounts,
        &Outages::default(),
        accounts_url,
        signing_key,
        subject,
        roles,
        ttl,
    )
    .await
}

async fn minted(
    accounts: &AccountsServiceClient<TracedChannel>,
    outages: &Outages,
    accounts_url: &str,
    signing_key: &Path,
    subject: &str,
    roles: &[&str],
    ttl: Duration,
) -> Result<String> {
    let published = outages
        .call("accounts", "ListPublicKeys", || {
            let mut api = accounts.clone();
            async move { api.list_public_keys(pb::ListPublicKeysRequest {}).await }
        })
        .await
        .map_err(|s| refused("ListPublicKeys", accounts_url, &s))?
        .into_inner();
    let pem = std::fs::read(signing_key).map_err(|e| {
        anyhow!(
            "cannot read the signing key {} ({e}): `make run` writes it into its run directory \
             (OKEY_RUN_DIR, default .run) when it starts the services; for a run in another \
             directory export the same OKEY_RUN_DIR, elsewhere pass --signing-key with a key the \
             accounts service signs with",
            signing_key.display()
        )
    })?;
    mint_token(&pem, &published, ttl, subject, roles).map_err(|e| {
        anyhow!(
            "{e} ({}, accounts at {accounts_url}). If accounts was started before `make run` \
             generated the key, restart it: `make down && make run`",
            signing_key.display(),
        )
    })
}

fn spinner(show: bool) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr())
            .with_style(
                indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                    .expect("the template is valid"),
            );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// The default place of the local signing key `make run` generates (in the default run
/// directory; [`crate::local::local_signing_key`] follows `OKEY_RUN_DIR`).
pub fn default_signing_key() -> &'static Path {
    Path::new(".run/dev-signing-key.pem")
}

/// The accounts service on `make run`'s default port (the support-token hint names
/// `--accounts` unless the demo's is this one).
pub const DEFAULT_ACCOUNTS_URL: &str = "http://127.0.0.1:50051";

/// The command the demo prints for a support token of the run it played on: `okeyctl token
/// --role support` with the demo's accounts service and signing key, each named only when it is
/// not `okeyctl token`'s default (so a run on moved ports or in another run directory gets a
/// token from its own key, not from another run's).
pub fn support_token_command(demo: &Demo) -> String {
    let mut command = format!("{} token --role support", demo.okeyctl);
    let accounts = demo.accounts_url.trim_end_matches('/');
    if accounts != DEFAULT_ACCOUNTS_URL {
        command.push_str(" --accounts ");
        command.push_str(&shell_word(accounts));
    }
    if demo.signing_key != default_signing_key() {
        command.push_str(" --signing-key ");
        command.push_str(&shell_word(&demo.signing_key.to_string_lossy()));
    }
    command
}

/// `word` as one shell word: as it is when it has no character the shell treats specially,
/// else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_penalty_is_told_at_the_move_that_caused_it() {
        let mut follow = Follow {
            seats: Vec::new(),
            header: String::new(),
            hands: Vec::new(),
            hand_files: Vec::new(),
            verified: Vec::new(),
            moves: 10,
            last_move: (0, String::new()),
            hand: 1,
            finished: None,
        };
        let bar = indicatif::ProgressBar::hidden();
        let mut out = Vec::new();
        let events = [
            Ev::TileDiscarded(pb::TileDiscarded {
                seat: 2,
                tile: "K7".into(),
            }),
            Ev::TileDrawn(pb::TileDrawn {
                seat: 3,
                ..Default::default()
            }),
            Ev::PenaltyCharged(pb::PenaltyCharged {
                penalty: Some(pb::Penalty {
                    seat: 2,
                    points: 101,
                    reason: "discard_playable".into(),
                }),
            }),
        ];
        for event in events {
            follow.event(event, &bar, &mut out).unwrap();
        }
        let told = String::from_utf8(out).unwrap();
        assert!(
            told.contains(
                "seat 2 is charged +101 (discard_playable) at move 11: seat 2 discarded K7"
            ),
            "{told}"
        );
    }
}
