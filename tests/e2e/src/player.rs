//! Players as the mobile app is one, through the public gRPC APIs only: a guest signs in at
//! accounts, finds a table through matchmaking (quick play, with or without bots, or a private
//! room joined with its code), follows its seat on `WatchTable` (reconnecting from the last
//! version received) and, on its turn, plays one of the commands `ListLegalActions` offers. Every
//! call has a deadline and is retried with the same client request id while the platform is
//! unavailable (a service restarting, a link reset), as an app retries; what the player was
//! answered is recorded for the checks: each accepted command's version and events, and every
//! event its stream delivered.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use okey_platform::auth::Role;
use okey_platform::testing::test_token;
use okey_proto::v1 as pb;
use okey_proto::v1::accounts_service_client::AccountsServiceClient;
use okey_proto::v1::matchmaking_service_client::MatchmakingServiceClient;
use okey_proto::v1::scoring_service_client::ScoringServiceClient;
use okey_proto::v1::table_service_client::TableServiceClient;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

/// How long one unary call may take before the player gives up on that attempt.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Channels to a platform's public endpoints (several for a replicated table service; a player
/// moves to the next one when its own does not answer).
#[derive(Clone)]
pub struct Apis {
    pub accounts: Channel,
    pub matchmaking: Channel,
    pub tables: Vec<Channel>,
    pub scoring: Channel,
}

fn lazy(port: u16) -> Channel {
    Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .expect("a valid uri")
        .connect_timeout(Duration::from_secs(1))
        .connect_lazy()
}

impl Apis {
    pub fn new(accounts: u16, matchmaking: u16, tables: &[u16], scoring: u16) -> Apis {
        Apis {
            accounts: lazy(accounts),
            matchmaking: lazy(matchmaking),
            tables: tables.iter().map(|p| lazy(*p)).collect(),
            scoring: lazy(scoring),
        }
    }

    pub fn accounts(&self) -> AccountsServiceClient<Channel> {
        AccountsServiceClient::new(self.accounts.clone())
    }

    pub fn matchmaking(&self) -> MatchmakingServiceClient<Channel> {
        MatchmakingServiceClient::new(self.matchmaking.clone())
    }

    pub fn scoring(&self) -> ScoringServiceClient<Channel> {
        ScoringServiceClient::new(self.scoring.clone())
    }

    /// The table service as seen by a client that prefers replica `preferred` (modulo).
    pub fn table(&self, preferred: usize) -> TableServiceClient<Channel> {
        TableServiceClient::new(self.tables[preferred % self.tables.len()].clone())
    }
}

/// Whether an error is the platform being unavailable for a moment (retry the same request),
/// not an answer. UNAUTHENTICATED is one too: a service that has just restarted accepts the
/// tokens accounts signs once it has fetched accounts' keys.
pub fn transient(status: &Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable
            | Code::Unknown
            | Code::Cancelled
            | Code::DeadlineExceeded
            | Code::Unauthenticated
            | Code::Internal
    )
}

/// Calls `call` until it answers something other than a [`transient`] error, or `deadline`
/// passes (then the last error).
pub async fn retry<T, F, Fut>(deadline: Instant, mut call: F) -> Result<T, Status>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, Status>>,
{
    let mut backoff = Duration::from_millis(50);
    let mut attempt = 0;
    loop {
        match call(attempt).await {
            Ok(v) => return Ok(v),
            Err(s) if transient(&s) && Instant::now() + backoff < deadline => {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_millis(500));
                attempt += 1;
            }
            Err(s) => return Err(s),
        }
    }
}

/// A request with `token` and the call deadline.
pub fn with_token<T>(token: &str, message: T) -> Request<T> {
    let mut r = Request::new(message);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("an ASCII token"),
    );
    r.set_timeout(CALL_TIMEOUT);
    r
}

/// An operator's token (role `analyst`) signed by the platform's test key, for the checks that
/// read every seat's records.
pub fn analyst_token() -> String {
    test_token("e2e-analyst", &[Role::Analyst])
}

pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A signed-in guest.
#[derive(Clone, Debug)]
pub struct Guest {
    /// `players/{id}`.
    pub player: String,
    pub token: String,
}

impl Guest {
    pub fn req<T>(&self, message: T) -> Request<T> {
        with_token(&self.token, message)
    }

    /// Signs a new guest in (a new device), retrying while accounts does not answer.
    pub async fn sign_in(apis: &Apis, deadline: Instant) -> Result<Guest, String> {
        let request = pb::SignInAsGuestRequest {
            request_id: uuid(),
            device_id: format!("e2e-device-{}", uuid()),
            display_name: String::new(),
        };
        let r = retry(deadline, |_| {
            let mut r = Request::new(request.clone());
            r.set_timeout(CALL_TIMEOUT);
            let mut api = apis.accounts();
            async move { api.sign_in_as_guest(r).await }
        })
        .await
        .map_err(|e| format!("guest sign-in: {e:?}"))?
        .into_inner();
        Ok(Guest {
            player: r.account.ok_or("no account")?.name,
            token: r.session.ok_or("no session")?.access_token,
        })
    }
}

/// Where a guest was seated.
#[derive(Clone, Debug)]
pub struct Seating {
    pub guest: Guest,
    pub table: String,
    pub seat: i32,
    /// The ticket that seated it (quick play), or the room.
    pub via: String,
}

/// FindTable, then the ticket followed until it is MATCHED (on WatchTicket, reopened when the
/// stream breaks). A ticket that is still SEARCHING at `deadline`, or ends any other way, is an
/// error naming it: a stuck ticket.
pub async fn find_table(
    apis: &Apis,
    guest: &Guest,
    rules: pb::RuleSet,
    allow_bots: bool,
    deadline: Instant,
    opened: &AtomicU64,
) -> Result<Seating, String> {
    let request = pb::FindTableRequest {
        request_id: uuid(),
        rules: Some(rules),
        allow_bots,
        bot_level: pb::BotLevel::Easy as i32,
    };
    let ticket = retry(deadline, |_| {
        let mut api = apis.matchmaking();
        let r = guest.req(request.clone());
        async move { api.find_table(r).await }
    })
    .await
    .map_err(|e| format!("{}: FindTable: {e:?}", guest.player))?
    .into_inner()
    .ticket
    .ok_or("FindTable without a ticket")?;
    opened.fetch_add(1, Ordering::Relaxed);
    let name = ticket.name.clone();
    let mut last = ticket;
    loop {
        if last.state == pb::TicketState::Matched as i32 {
            return Ok(Seating {
                guest: guest.clone(),
                table: last.table.clone(),
                seat: last.seat,
                via: name,
            });
        }
        if last.state != pb::TicketState::Searching as i32 {
            return Err(format!("ticket {name} ended {:?}", last.state()));
        }
        if Instant::now() > deadline {
            return Err(format!("ticket {name} stuck: {last:?}"));
        }
        // Follow the ticket's stream; when it breaks, read the ticket and open it again.
        let mut api = apis.matchmaking();
        let mut r = guest.req(pb::WatchTicketRequest { name: name.clone() });
        r.set_timeout(Duration::from_secs(3600));
        match api.watch_ticket(r).await {
            Ok(stream) => {
                let mut stream = stream.into_inner();
                loop {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match tokio::time::timeout(left.min(Duration::from_secs(5)), stream.message())
                        .await
                    {
                        Ok(Ok(Some(m))) => {
                            if let Some(t) = m.ticket {
                                let done = t.state != pb::TicketState::Searching as i32;
                                last = t;
                                if done {
                                    break;
                                }
                            }
                        }
                        _ => break,
                    }
                }
            }
            Err(s) if transient(&s) => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(s) => return Err(format!("WatchTicket {name}: {s:?}")),
        }
        if last.state == pb::TicketState::Searching as i32 {
            let got = retry(deadline, |_| {
                let mut api = apis.matchmaking();
                let r = guest.req(pb::GetTicketRequest { name: name.clone() });
                async move { api.get_ticket(r).await }
            })
            .await
            .map_err(|e| format!("GetTicket {name}: {e:?}"))?;
            if let Some(t) = got.into_inner().ticket {
                last = t;
            }
        }
    }
}

/// A private room: `host` creates it (free seats filled with bots when it starts, a password),
/// each friend joins with its code and the password, the host starts it. Every member's seat.
pub async fn play_in_room(
    apis: &Apis,
    host: &Guest,
    friends: &[Guest],
    rules: pb::RuleSet,
    deadline: Instant,
) -> Result<Vec<Seating>, String> {
    let password = "e2e-room-password".to_owned();
    let create = pb::CreateRoomRequest {
        request_id: uuid(),
        rules: Some(rules),
        fill_with_bots: true,
        bot_level: pb::BotLevel::Easy as i32,
        password: password.clone(),
        public: false,
        spectators_allowed: false,
    };
    let room = retry(deadline, |_| {
        let mut api = apis.matchmaking();
        let r = host.req(create.clone());
        async move { api.create_room(r).await }
    })
    .await
    .map_err(|e| format!("CreateRoom: {e:?}"))?
    .into_inner()
    .room
    .ok_or("CreateRoom without a room")?;
    for friend in friends {
        let join = pb::JoinRoomRequest {
            request_id: uuid(),
            code: room.code.to_lowercase(),
            password: password.clone(),
        };
        retry(deadline, |_| {
            let mut api = apis.matchmaking();
            let r = friend.req(join.clone());
            async move { api.join_room(r).await }
        })
        .await
        .map_err(|e| format!("JoinRoom {}: {e:?}", room.code))?;
    }
    let start = pb::StartRoomRequest {
        request_id: uuid(),
        name: room.name.clone(),
    };
    let started = retry(deadline, |_| {
        let mut api = apis.matchmaking();
        let r = host.req(start.clone());
        async move { api.start_room(r).await }
    })
    .await
    .map_err(|e| format!("StartRoom {}: {e:?}", room.name))?
    .into_inner()
    .room
    .ok_or("StartRoom without a room")?;
    if started.table.is_empty() {
        return Err(format!("room {} started without a table", room.name));
    }
    let mut seats = Vec::new();
    for g in std::iter::once(host).chain(friends) {
        let seat = started
            .members
            .iter()
            .position(|m| m.player == g.player)
            .ok_or_else(|| format!("{} has no seat in {started:?}", g.player))?;
        seats.push(Seating {
            guest: g.clone(),
            table: started.table.clone(),
            seat: seat as i32,
            via: room.name.clone(),
        });
    }
    Ok(seats)
}

/// A command the table accepted, as its answer said.
#[derive(Clone, Debug)]
pub struct Accepted {
    pub request_id: String,
    /// The table's version after it.
    pub version: i64,
    /// What it made visible to the player, in order, ending at `version`.
    pub events: Vec<pb::TableEvent>,
}

/// What one player saw of its match.
#[derive(Clone, Debug, Default)]
pub struct SeatRecord {
    pub player: String,
    pub table: String,
    pub seat: i32,
    pub accepted: Vec<Accepted>,
    /// Every event the update stream delivered, with its version, in the order received.
    pub streamed: Vec<(i64, pb::TableEvent)>,
    /// Versions of the snapshots it delivered (the first, and any after a reconnect the server
    /// could not replay).
    pub snapshots: Vec<i64>,
    /// Times the stream was opened again after it broke.
    pub reconnects: u32,
    /// Commands refused as stale (another move or a timeout came first) and decided again.
    pub stale: u32,
}

/// Shared counters of a scenario.
#[derive(Debug, Default)]
pub struct Progress {
    /// Commands the players' SubmitCommand calls had accepted.
    pub moves: AtomicU64,
    /// Tickets opened.
    pub tickets: AtomicU64,
    /// Matches whose every seat saw the end.
    pub finished: AtomicU64,
}

/// The player's choice among the offered commands: one without a penalty, a table action (open,
/// lay, add, retrieve) when there is one nine times in ten; one time in ten any offered command,
/// penalties included (wrong openings, okey discards: so the ledger has penalties to agree on).
pub fn choose(actions: &[pb::LegalAction], rng: &mut ChaCha8Rng) -> Option<pb::Command> {
    use pb::command::Command as C;
    if actions.is_empty() {
        return None;
    }
    let pick = |list: &[&pb::LegalAction], rng: &mut ChaCha8Rng| {
        list[(rng.next_u64() % list.len() as u64) as usize]
            .command
            .clone()
    };
    let all: Vec<&pb::LegalAction> = actions.iter().collect();
    if rng.next_u64().is_multiple_of(10) {
        return pick(&all, &mut *rng);
    }
    let free: Vec<&pb::LegalAction> = actions.iter().filter(|a| a.penalty_points == 0).collect();
    if free.is_empty() {
        let least = actions.iter().map(|a| a.penalty_points).min().unwrap_or(0);
        let cheapest: Vec<&pb::LegalAction> = actions
            .iter()
            .filter(|a| a.penalty_points == least)
            .collect();
        return pick(&cheapest, &mut *rng);
    }
    let table_actions: Vec<&pb::LegalAction> = free
        .iter()
        .copied()
        .filter(|a| {
            matches!(
                a.command.as_ref().and_then(|c| c.command.as_ref()),
                Some(C::Open(_) | C::Lay(_) | C::Add(_) | C::RetrieveOkey(_))
            )
        })
        .collect();
    if !table_actions.is_empty() && !rng.next_u64().is_multiple_of(10) {
        return pick(&table_actions, &mut *rng);
    }
    // Taking a tile: mostly from the pile.
    let draw: Vec<&pb::LegalAction> = free
        .iter()
        .copied()
        .filter(|a| {
            matches!(
                a.command.as_ref().and_then(|c| c.command.as_ref()),
                Some(C::Draw(_))
            )
        })
        .collect();
    if !draw.is_empty() && !rng.next_u64().is_multiple_of(4) {
        return pick(&draw, &mut *rng);
    }
    pick(&free, &mut *rng)
}

/// What a seat's update stream delivered.
#[derive(Default)]
struct Followed {
    events: Vec<(i64, pb::TableEvent)>,
    snapshots: Vec<i64>,
    reconnects: u32,
    /// Why it stopped before the match's end.
    problem: Option<String>,
}

/// Follows `table` on WatchTable as `guest` until the match ends, reopening the stream from the
/// last version received whenever it breaks; publishes the latest version on `seen`.
async fn follow(
    apis: Apis,
    guest: Guest,
    table: String,
    preferred: Arc<AtomicUsize>,
    seen: tokio::sync::watch::Sender<i64>,
    deadline: Instant,
) -> Followed {
    let mut got = Followed::default();
    let mut after = 0i64;
    let mut opened_once = false;
    loop {
        if Instant::now() > deadline {
            got.problem = Some(format!("{table}: the stream never delivered MatchEnded"));
            return got;
        }
        let mut api = apis.table(preferred.load(Ordering::Relaxed));
        let mut r = guest.req(pb::WatchTableRequest {
            table: table.clone(),
            after_version: after,
        });
        r.set_timeout(Duration::from_secs(3600));
        let mut stream = match api.watch_table(r).await {
            Ok(s) => s.into_inner(),
            Err(s) if transient(&s) => {
                preferred.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            Err(s) => {
                got.problem = Some(format!("{table}: WatchTable refused: {s:?}"));
                return got;
            }
        };
        if opened_once {
            got.reconnects += 1;
        }
        opened_once = true;
        loop {
            // The server sends a heartbeat every 15 s on a quiet stream: 40 s of silence is a
            // stream that broke without saying so.
            let next = tokio::time::timeout(Duration::from_secs(40), stream.message()).await;
            let update = match next {
                Ok(Ok(Some(m))) => m.update,
                _ => break,
            };
            let Some(update) = update else { continue };
            match update.kind {
                Some(pb::table_update::Kind::Snapshot(_)) => {
                    got.snapshots.push(update.version);
                    after = update.version;
                }
                Some(pb::table_update::Kind::Event(e)) => {
                    let ended = matches!(e.event, Some(pb::table_event::Event::MatchEnded(_)));
                    got.events.push((update.version, e));
                    after = after.max(update.version);
                    let _ = seen.send(after);
                    if ended {
                        return got;
                    }
                }
                Some(pb::table_update::Kind::Heartbeat(_)) | None => {}
            }
            let _ = seen.send(after);
        }
        preferred.fetch_add(1, Ordering::Relaxed);
    }
}

fn is_my_turn(view: &pb::SeatView, seat: i32) -> bool {
    view.turn_seat == seat
        && matches!(
            pb::HandPhase::try_from(view.phase),
            Ok(pb::HandPhase::Take | pb::HandPhase::Act | pb::HandPhase::DiscardOnly)
        )
}

fn finished(view: &pb::SeatView) -> bool {
    view.summary
        .as_ref()
        .is_some_and(|s| s.state == pb::TableState::Finished as i32)
}

/// Plays `seating`'s seat to the end of the match: on its turn it asks `ListLegalActions` and
/// submits one of them ([`choose`]) with the version it decided on, retrying the same request
/// id while the table service is unavailable; a stale command (ABORTED, FAILED_PRECONDITION:
/// another move or a timeout came first) is decided again. Its own stream ([`follow`]) tells it
/// when the table moved.
pub async fn play_seat(
    apis: &Apis,
    seating: &Seating,
    seed: u64,
    progress: &Progress,
    deadline: Instant,
) -> Result<SeatRecord, String> {
    let Seating {
        guest, table, seat, ..
    } = seating;
    let seat = *seat;
    let preferred = Arc::new(AtomicUsize::new(seat as usize));
    let (seen_tx, mut seen) = tokio::sync::watch::channel(0i64);
    let follower = tokio::spawn(follow(
        apis.clone(),
        guest.clone(),
        table.clone(),
        preferred.clone(),
        seen_tx,
        deadline,
    ));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut record = SeatRecord {
        player: guest.player.clone(),
        table: table.clone(),
        seat,
        ..SeatRecord::default()
    };
    let view_of = |preferred: &AtomicUsize| {
        let mut api = apis.table(preferred.load(Ordering::Relaxed));
        let r = guest.req(pb::GetSeatViewRequest {
            table: table.clone(),
            view_form: pb::SeatViewForm::Typed as i32,
            min_version: None,
        });
        async move { api.get_seat_view(r).await }
    };
    loop {
        if Instant::now() > deadline {
            follower.abort();
            return Err(format!(
                "{table} seat {seat}: the match did not end in time"
            ));
        }
        let view = retry(deadline, |attempt| {
            if attempt > 0 {
                preferred.fetch_add(1, Ordering::Relaxed);
            }
            view_of(preferred.as_ref())
        })
        .await
        .map_err(|e| format!("{table} seat {seat}: GetSeatView: {e:?}"))?
        .into_inner()
        .view
        .ok_or("GetSeatView without a view")?;
        if finished(&view) {
            break;
        }
        if !is_my_turn(&view, seat) {
            // Wait for the table to move (the stream says so), or re-read after a while.
            let version = view.version;
            let _ =
                tokio::time::timeout(Duration::from_millis(500), seen.wait_for(|v| *v > version))
                    .await;
            continue;
        }
        let actions = retry(deadline, |attempt| {
            if attempt > 0 {
                preferred.fetch_add(1, Ordering::Relaxed);
            }
            let mut api = apis.table(preferred.load(Ordering::Relaxed));
            let r = guest.req(pb::ListLegalActionsRequest {
                table: table.clone(),
            });
            async move { api.list_legal_actions(r).await }
        })
        .await
        .map_err(|e| format!("{table} seat {seat}: ListLegalActions: {e:?}"))?
        .into_inner();
        let choice = (actions.version == view.version)
            .then(|| choose(&actions.actions, &mut rng))
            .flatten();
        let Some(command) = choice else {
            // The table moved meanwhile (or offers nothing yet): look again in a moment.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let request_id = uuid();
        let submitted = retry(deadline, |attempt| {
            if attempt > 0 {
                preferred.fetch_add(1, Ordering::Relaxed);
            }
            let mut api = apis.table(preferred.load(Ordering::Relaxed));
            let r = guest.req(pb::SubmitCommandRequest {
                request_id: request_id.clone(),
                table: table.clone(),
                command: Some(command.clone()),
                expected_version: Some(view.version),
                view_form: pb::SeatViewForm::Typed as i32,
            });
            async move { api.submit_command(r).await }
        })
        .await;
        match submitted {
            Ok(r) => {
                let r = r.into_inner();
                record.accepted.push(Accepted {
                    request_id,
                    version: r.version,
                    events: r.events,
                });
                progress.moves.fetch_add(1, Ordering::Relaxed);
            }
            Err(s) if matches!(s.code(), Code::Aborted | Code::FailedPrecondition) => {
                record.stale += 1;
            }
            Err(s) => {
                follower.abort();
                return Err(format!(
                    "{table} seat {seat}: {command:?} refused: {s:?} ({})",
                    s.message()
                ));
            }
        }
    }
    let followed = follower
        .await
        .map_err(|e| format!("{table} seat {seat}: the stream's task: {e}"))?;
    if let Some(problem) = followed.problem {
        return Err(problem);
    }
    record.streamed = followed.events;
    record.snapshots = followed.snapshots;
    record.reconnects = followed.reconnects;
    Ok(record)
}
