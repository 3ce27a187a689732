//! What the matchmaking service does, in domain types: tickets (open, read, cancel, follow) and
//! private rooms (create, join, seats, members, start, follow, the lobby). `grpc` converts to and
//! from the wire; `store` keeps the truth; `matcher` turns claims into tables.

use std::sync::Arc;
use std::time::Duration;

use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use chrono::{DateTime, Utc};
use okey_platform::Secret;
use okey_rules::RuleSet;
use sha2::{Digest, Sha256};
use tokio::sync::{broadcast, mpsc};
use uuid::Uuid;

use crate::clock::Clock;
use crate::domain::{BotLevel, MatchmakingError, Occupant, Room, RoomState, Ticket, room_code};
use crate::limiter::JoinLimiter;
use crate::matcher::{Wake, finish};
use crate::notices::{Notice, Notices};
use crate::ratings::Ratings;
use crate::store::{Command, NewTicket, RoomChange, Store};
use crate::tables::Tables;

/// A stream reads its row again at least this often, even without a notice (a safety net: the
/// notices carry every change).
const RECHECK: Duration = Duration::from_secs(10);

/// The matchmaking service's state; cheap to clone.
#[derive(Clone)]
pub struct Matchmaking {
    store: Store,
    tables: Tables,
    ratings: Ratings,
    clock: Arc<dyn Clock>,
    notices: Notices,
    limiter: JoinLimiter,
    wake: Wake,
    bot_fill_after: Duration,
    ticket_ttl: Duration,
    room_ttl: Duration,
    claim_lease: Duration,
}

/// What [`Matchmaking::new`] needs besides its connections.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    pub bot_fill_after: Duration,
    pub ticket_ttl: Duration,
    pub room_ttl: Duration,
    pub claim_lease: Duration,
}

/// A new room as the host asks for it.
#[derive(Clone, Debug)]
pub struct RoomRequest {
    pub rules: RuleSet,
    pub fill_with_bots: bool,
    pub bot_level: BotLevel,
    pub password: Secret<String>,
    pub public: bool,
    pub spectators_allowed: bool,
}

impl Matchmaking {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Store,
        tables: Tables,
        ratings: Ratings,
        clock: Arc<dyn Clock>,
        notices: Notices,
        limiter: JoinLimiter,
        wake: Wake,
        timeouts: Timeouts,
    ) -> Matchmaking {
        Matchmaking {
            store,
            tables,
            ratings,
            clock,
            notices,
            limiter,
            wake,
            bot_fill_after: timeouts.bot_fill_after,
            ticket_ttl: timeouts.ticket_ttl,
            room_ttl: timeouts.room_ttl,
            claim_lease: timeouts.claim_lease,
        }
    }

    // ----- Tickets ---------------------------------------------------------------------------

    /// Opens a ticket (or returns the caller's open one with the same rules) at the player's
    /// rating (asked of scoring) and wakes the matcher; `display_name` (their token's) names
    /// their seat at the table.
    pub async fn find_table(
        &self,
        player: Uuid,
        display_name: &str,
        request_id: &str,
        rules: RuleSet,
        allow_bots: bool,
        bot_level: BotLevel,
    ) -> Result<Ticket, MatchmakingError> {
        let rating = self.ratings.of(player).await;
        let now = self.clock.now();
        let wait = if allow_bots {
            self.bot_fill_after
        } else {
            self.ticket_ttl
        };
        let ticket = self
            .store
            .open_ticket(&NewTicket {
                player_id: player,
                request_id: request_id.to_owned(),
                rules,
                allow_bots,
                bot_level,
                rating,
                now,
                expires_at: now + wait,
                trace: okey_platform::telemetry::current_context_as_map(),
                display_name: display_name.to_owned(),
            })
            .await?;
        self.wake.ticket_opened(&ticket.rules_key);
        Ok(ticket)
    }

    pub async fn ticket(&self, player: Uuid, ticket: Uuid) -> Result<Ticket, MatchmakingError> {
        self.store.ticket(ticket, player).await
    }

    pub async fn cancel_ticket(
        &self,
        player: Uuid,
        ticket: Uuid,
    ) -> Result<Ticket, MatchmakingError> {
        self.store
            .cancel_ticket(ticket, player, self.clock.now())
            .await
    }

    /// The ticket now, then after every change, until it is final.
    pub async fn watch_ticket(
        &self,
        player: Uuid,
        ticket: Uuid,
    ) -> Result<mpsc::Receiver<Result<Ticket, MatchmakingError>>, MatchmakingError> {
        let notices = self.notices.subscribe();
        let first = self.store.ticket(ticket, player).await?;
        let key = first.rules_key.clone();
        let store = self.store.clone();
        Ok(watch_until_final(
            notices,
            first,
            move |notice| matches!(notice, Notice::Tickets(keys) if keys.contains(&key)),
            |t: &Ticket| t.state.is_final(),
            move || {
                let store = store.clone();
                async move { store.ticket(ticket, player).await }
            },
        ))
    }

    // ----- Rooms -----------------------------------------------------------------------------

    /// Creates a room with the host in seat 0. A retry (same host and request id) returns it.
    pub async fn create_room(
        &self,
        host: Uuid,
        host_name: &str,
        request_id: &str,
        ask: RoomRequest,
    ) -> Result<Room, MatchmakingError> {
        let room_id = derived_id(host, request_id);
        if let Some(room) = self.store.room(room_id).await? {
            return Ok(room);
        }
        let password_hash = if ask.password.expose().is_empty() {
            None
        } else {
            Some(hash_password(ask.password.clone()).await?)
        };
        let now = self.clock.now();
        for _ in 0..8 {
            let mut random = [0u8; crate::domain::CODE_LEN];
            getrandom::fill(&mut random).map_err(|e| MatchmakingError::Internal(e.to_string()))?;
            let room = Room {
                room_id,
                code: room_code(random),
                rules: ask.rules.clone(),
                host,
                members: [Some(host), None, None, None],
                names: [(host, host_name.to_owned())].into(),
                state: RoomState::Open,
                fill_with_bots: ask.fill_with_bots,
                bot_level: ask.bot_level,
                table: None,
                expires_at: now + self.room_ttl,
                has_password: password_hash.is_some(),
                public: ask.public,
                spectators_allowed: ask.spectators_allowed,
            };
            if let Some(created) = self
                .store
                .create_room(&room, password_hash.as_deref(), now)
                .await?
            {
                return Ok(created);
            }
            // The id (a retry racing) or the code was taken.
            if let Some(room) = self.store.room(room_id).await? {
                return Ok(room);
            }
        }
        Err(MatchmakingError::Internal("no free room code found".into()))
    }

    /// Joins a room by code and password into the lowest free seat, shown by `name`; returns it
    /// and the seat. A retry (same player and request id) of a join that succeeded returns its
    /// first answer and changes nothing.
    pub async fn join_room(
        &self,
        player: Uuid,
        name: &str,
        request_id: &str,
        code: Option<String>,
        password: Secret<String>,
    ) -> Result<(Room, usize), MatchmakingError> {
        let command = Command {
            caller: player,
            request_id,
            rpc: "JoinRoom",
        };
        if let Some(room) = self.store.handled_room(&command).await? {
            let seat = room.seat_of(player).ok_or(MatchmakingError::RoomFull)?;
            return Ok((room, seat));
        }
        // The attempt is counted before anything is looked up (limiter: reserve, then settle),
        // so parallel guesses cannot all pass the limit; it is given back unless it failed.
        let mut attempt = match self.limiter.reserve(player).await? {
            Ok(attempt) => attempt,
            Err(retry_after) => return Err(MatchmakingError::TooManyAttempts { retry_after }),
        };
        let found = match &code {
            Some(code) => self.store.room_by_code(code).await?,
            None => None,
        };
        let Some((room_id, hash)) = found else {
            attempt.keep();
            return Err(MatchmakingError::RoomNotFound);
        };
        if let Some(hash) = hash {
            let already = self
                .store
                .room(room_id)
                .await?
                .is_some_and(|r| r.seat_of(player).is_some());
            if !already {
                // Refused before the password is checked, so a right guess after the limit
                // learns nothing either.
                if let Some(retry_after) = self.limiter.reserve_room(&mut attempt, room_id).await? {
                    attempt.give_back().await;
                    return Err(MatchmakingError::TooManyAttempts { retry_after });
                }
                if !verify_password(password, hash).await? {
                    attempt.keep();
                    return Err(MatchmakingError::WrongPassword);
                }
            }
        }
        // The right password, or none needed: no failure.
        attempt.give_back().await;
        let room = self
            .store
            .change_room(room_id, Some(&command), |room, starting| {
                if room.seat_of(player).is_some() {
                    return Ok(RoomChange::Nothing);
                }
                open_for_changes(room, starting)?;
                let Some(seat) = room.members.iter().position(Option::is_none) else {
                    return Err(MatchmakingError::RoomFull);
                };
                Ok(RoomChange::Join {
                    seat,
                    player,
                    name: name.to_owned(),
                })
            })
            .await?;
        let seat = room.seat_of(player).ok_or(MatchmakingError::RoomFull)?;
        Ok((room, seat))
    }

    /// A room the caller may read: they are (or were, when it started or closed) a member.
    pub async fn room(&self, player: Uuid, room_id: Uuid) -> Result<Room, MatchmakingError> {
        let room = self
            .store
            .room(room_id)
            .await?
            .ok_or(MatchmakingError::RoomNotFound)?;
        if room.seat_of(player).is_none() {
            return Err(MatchmakingError::RoomNotFound);
        }
        Ok(room)
    }

    /// Leaves an open room; the host leaving closes it. Leaving a closed room, or one the caller
    /// is not in (any more), changes nothing and succeeds; a room that does not exist is
    /// `room_not_found`. A retry (same player and request id) changes nothing.
    pub async fn leave_room(
        &self,
        player: Uuid,
        request_id: &str,
        room_id: Uuid,
    ) -> Result<(), MatchmakingError> {
        let command = Command {
            caller: player,
            request_id,
            rpc: "LeaveRoom",
        };
        self.store
            .change_room(room_id, Some(&command), |room, starting| {
                let Some(seat) = room.seat_of(player) else {
                    return Ok(RoomChange::Nothing);
                };
                match room.state {
                    RoomState::Closed => return Ok(RoomChange::Nothing),
                    RoomState::Started => return Err(MatchmakingError::RoomStarted),
                    RoomState::Open if starting => return Err(MatchmakingError::RoomStarted),
                    RoomState::Open => {}
                }
                if room.host == player {
                    return Ok(RoomChange::Close);
                }
                let mut members = room.members;
                members[seat] = None;
                Ok(RoomChange::Members(members))
            })
            .await?;
        Ok(())
    }

    /// Moves a member to a seat (host only); whoever sat there takes the old seat. A retry (same
    /// host and request id) returns the first answer and changes nothing.
    pub async fn set_room_seat(
        &self,
        host: Uuid,
        request_id: &str,
        room_id: Uuid,
        member: Uuid,
        seat: usize,
    ) -> Result<Room, MatchmakingError> {
        let command = Command {
            caller: host,
            request_id,
            rpc: "SetRoomSeat",
        };
        self.store
            .change_room(room_id, Some(&command), |room, starting| {
                host_may_change(room, host, starting)?;
                let Some(from) = room.seat_of(member) else {
                    return Err(MatchmakingError::NotRoomMember);
                };
                let mut members = room.members;
                members.swap(from, seat);
                Ok(if members == room.members {
                    RoomChange::Nothing
                } else {
                    RoomChange::Members(members)
                })
            })
            .await
    }

    /// Removes a member (host only; not the host: `not_room_member`, the host leaves with
    /// LeaveRoom). A retry (same host and request id) of a removal that succeeded returns its first
    /// answer and changes nothing.
    pub async fn remove_member(
        &self,
        host: Uuid,
        request_id: &str,
        room_id: Uuid,
        member: Uuid,
    ) -> Result<Room, MatchmakingError> {
        let command = Command {
            caller: host,
            request_id,
            rpc: "RemoveRoomMember",
        };
        self.store
            .change_room(room_id, Some(&command), |room, starting| {
                host_may_change(room, host, starting)?;
                if member == host {
                    return Err(MatchmakingError::HostNotRemovable);
                }
                let Some(seat) = room.seat_of(member) else {
                    return Err(MatchmakingError::NotRoomMember);
                };
                let mut members = room.members;
                members[seat] = None;
                Ok(RoomChange::Members(members))
            })
            .await
    }

    /// Starts the room's match (host only): a claim with the members in their seats (and bots in
    /// the free ones, if chosen), made a table now. A room already started is returned.
    pub async fn start_room(&self, host: Uuid, room_id: Uuid) -> Result<Room, MatchmakingError> {
        let now = self.clock.now();
        let claim_id = derived_id(room_id, "start");
        let room = self
            .store
            .change_room(room_id, None, |room, starting| {
                if room.seat_of(host).is_none() {
                    return Err(MatchmakingError::RoomNotFound);
                }
                if room.host != host {
                    return Err(MatchmakingError::NotRoomHost);
                }
                match room.state {
                    RoomState::Started => return Ok(RoomChange::Nothing),
                    RoomState::Closed => return Err(MatchmakingError::RoomClosed),
                    RoomState::Open if starting => return Ok(RoomChange::Nothing),
                    RoomState::Open => {}
                }
                if room.free_seats() > 0 && !room.fill_with_bots {
                    return Err(MatchmakingError::RoomNotFull);
                }
                let seats: [Occupant; 4] = std::array::from_fn(|i| match room.members[i] {
                    Some(p) => Occupant::Player {
                        name: format!("players/{p}"),
                        display_name: room.names.get(&p).cloned().unwrap_or_default(),
                    },
                    None => Occupant::Bot(room.bot_level),
                });
                Ok(RoomChange::Start {
                    claim_id,
                    seats,
                    lease_until: now + self.claim_lease,
                })
            })
            .await?;
        if room.state == RoomState::Started {
            return Ok(room);
        }
        // Make the table now (a retry, or the matcher after the lease, finishes a claim left).
        let Some(claim_id) = self.store.room_claim(room_id).await? else {
            return self.room(host, room_id).await;
        };
        if let Some(claim) = self.store.claim(claim_id).await? {
            finish(&self.store, &self.tables, self.clock.as_ref(), &claim).await;
        }
        let room = self.room(host, room_id).await?;
        if room.state != RoomState::Started {
            return Err(MatchmakingError::Tables(
                "the table is not made yet; retry StartRoom".into(),
            ));
        }
        Ok(room)
    }

    /// The room now, then after every change, until it is started or closed.
    pub async fn watch_room(
        &self,
        player: Uuid,
        room_id: Uuid,
    ) -> Result<mpsc::Receiver<Result<Room, MatchmakingError>>, MatchmakingError> {
        let notices = self.notices.subscribe();
        let first = self.room(player, room_id).await?;
        let service = self.clone();
        Ok(watch_until_final(
            notices,
            first,
            move |notice| *notice == Notice::Room(room_id),
            |r: &Room| r.state != RoomState::Open,
            move || {
                let service = service.clone();
                async move { service.room(player, room_id).await }
            },
        ))
    }

    /// Open public rooms, oldest first.
    pub async fn lobby(
        &self,
        preset: Option<&str>,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Vec<(Room, DateTime<Utc>)>, MatchmakingError> {
        self.store.lobby(preset, after, limit).await
    }
}

/// A stream of a row: `first`, then the row read again (`read`) whenever a notice `concerns` it,
/// after a resync or a lagging receiver (notices may have been missed), and every [`RECHECK`]
/// regardless; each value that differs from the last one sent is sent, until `done` says no change
/// can follow, a read fails (sent, then the end), or the client goes away.
fn watch_until_final<T, Read, Reading>(
    mut notices: broadcast::Receiver<Notice>,
    first: T,
    concerns: impl Fn(&Notice) -> bool + Send + 'static,
    done: impl Fn(&T) -> bool + Send + 'static,
    read: Read,
) -> mpsc::Receiver<Result<T, MatchmakingError>>
where
    T: Clone + PartialEq + Send + 'static,
    Read: Fn() -> Reading + Send + 'static,
    Reading: Future<Output = Result<T, MatchmakingError>> + Send,
{
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        let mut last = first;
        if tx.send(Ok(last.clone())).await.is_err() {
            return;
        }
        while !done(&last) {
            let read_again = tokio::select! {
                _ = tx.closed() => return,
                n = tokio::time::timeout(RECHECK, notices.recv()) => match n {
                    Ok(Ok(Notice::Resync)) => true,
                    Ok(Ok(notice)) => concerns(&notice),
                    Ok(Err(broadcast::error::RecvError::Lagged(_))) | Err(_) => true,
                    Ok(Err(broadcast::error::RecvError::Closed)) => return,
                },
            };
            if !read_again {
                continue;
            }
            match read().await {
                Ok(now) if now != last => {
                    last = now;
                    if tx.send(Ok(last.clone())).await.is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            }
        }
    });
    rx
}

/// The room accepts joins and moves: open and not being started.
fn open_for_changes(room: &Room, starting: bool) -> Result<(), MatchmakingError> {
    match room.state {
        RoomState::Started => Err(MatchmakingError::RoomStarted),
        RoomState::Closed => Err(MatchmakingError::RoomClosed),
        RoomState::Open if starting => Err(MatchmakingError::RoomStarted),
        RoomState::Open => Ok(()),
    }
}

/// `host` is a member, the host, and the room accepts changes.
fn host_may_change(room: &Room, host: Uuid, starting: bool) -> Result<(), MatchmakingError> {
    if room.seat_of(host).is_none() {
        return Err(MatchmakingError::RoomNotFound);
    }
    if room.host != host {
        return Err(MatchmakingError::NotRoomHost);
    }
    open_for_changes(room, starting)
}

/// An id that is a function of its parts, so a retried request lands on the same row.
fn derived_id(owner: Uuid, request_id: &str) -> Uuid {
    let digest = Sha256::digest([owner.as_bytes().as_slice(), request_id.as_bytes()].concat());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

async fn hash_password(password: Secret<String>) -> Result<String, MatchmakingError> {
    tokio::task::spawn_blocking(move || {
        Argon2::default()
            .hash_password(password.expose().as_bytes())
            .map(|h| h.to_string())
            .map_err(|e| MatchmakingError::Internal(format!("password hashing failed: {e}")))
    })
    .await
    .map_err(|e| MatchmakingError::Internal(e.to_string()))?
}

async fn verify_password(password: Secret<String>, hash: String) -> Result<bool, MatchmakingError> {
    tokio::task::spawn_blocking(move || {
        Argon2::default()
            .verify_password(password.expose().as_bytes(), hash.as_str())
            .is_ok()
    })
    .await
    .map_err(|e| MatchmakingError::Internal(e.to_string()))
}
