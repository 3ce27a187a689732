//! The table as a pure aggregate: seats, the match and its current hand, rebuilt by folding the
//! table's events. [`Table::decide`] checks a command and returns the events it causes;
//! [`Table::apply`] folds a decision (its events and the seed of a hand it dealt) in one call;
//! [`Table::evolve`] folds one stored event. No I/O: the shell (the table service) loads, stores
//! and publishes, and hands in the next deal seed (drawn from the OS) so that chance stays data.
//!
//! A table's stream holds table events ([`crate::event`]); each hand's engine events
//! (`okey_rules::Event`) are wrapped in [`TableEvent::Played`]. The engine's `HandStarted` (which
//! carries the whole deal) is never stored: [`TableEvent::HandDealt`] records the seed's sha256
//! and the first seat, the seed itself is kept apart and revealed in [`TableEvent::HandEnded`].
//! The deal seed is derived from a server seed committed before the hand's client seeds are
//! taken and the client seeds the seated players sent ([`crate::seeding`]); the private seed
//! stored for a hand is its server seed (for hands dealt before client seeds, the deal seed).

use std::collections::BTreeMap;

use okey_bots::Level;
use okey_rules::matches::{HandResult, Match, MatchWinner};
use okey_rules::{Command, Deal, Event, Hand, RuleError, RuleSet, Seat, SeatView};

use crate::absence::Absence;
use crate::event::{Admission, Noted, Seed, Seeding, TableEvent, hex, seed_hash, seed_of_hex};
use crate::seeding;

/// Where a table is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Waiting,
    Playing,
    Finished,
}

/// What a caller asks a table to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableCommand {
    Join {
        player: String,
        seat: Option<Seat>,
        /// The display name the caller's token carries.
        name: Option<String>,
    },
    Leave {
        player: String,
    },
    Play {
        player: String,
        command: Command,
        /// The display name the caller's token carries: a seated player the table knows by no
        /// name yet (seated by CreateTable: quick play, a room) is known by it from this
        /// command on, as after a JoinSeat.
        name: Option<String>,
    },
    /// The server plays for a seat: the timeout on expiry (`turn` = the `(hand, turn)` whose
    /// deadline passed) or a bot's command for a seat a bot holds (see `absence`).
    Server {
        seat: Seat,
        command: Command,
        turn: Option<(u32, u32)>,
    },
    /// An absent player takes their seat back from the bot.
    Reclaim {
        player: String,
    },
    /// A seated player's client seed for the next hand (`hand_number`), before it is dealt.
    ClientSeed {
        player: String,
        hand_number: u32,
        seed: Seed,
    },
}

/// Why a table refused a command. Nothing changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error(transparent)]
    Rule(#[from] RuleError),
    #[error("you do not sit at this table")]
    NotSeated,
    #[error("only the members of the private room may sit or watch at this table")]
    NotMember,
    #[error("seat {0} is taken")]
    SeatTaken(Seat),
    #[error("the table is full")]
    TableFull,
    #[error("the match has not started: seats are still free")]
    NotStarted,
    #[error("the match is over")]
    MatchOver,
    #[error("only the server plays a timeout")]
    ServerOnly,
    #[error("no bot plays seat {0}")]
    NotBotSeat(Seat),
    #[error("that deadline belongs to a turn that is over")]
    StaleTimeout,
    #[error(
        "hand {0} is still being played: its full history is served once it has ended (support \
         staff who do not sit in it may read it live)"
    )]
    HandInProgress(u32),
    #[error(
        "you did not sit in hand {0} of this table (or it has not been dealt yet): its full \
         history is not yours to read"
    )]
    NotInHand(u32),
    #[error("hand {0} has not been dealt at this table")]
    NoSuchHand(u32),
    #[error(
        "hand {0} has been dealt already: a client seed counts only if it arrives before its hand \
         is dealt"
    )]
    ClientSeedTooLate(u32),
    #[error(
        "client seeds are taken for the next hand only (the current hand + 1, once its server \
         seed is committed), not for hand {0}"
    )]
    ClientSeedNotOpen(u32),
    #[error("your seat already sent its client seed for hand {0}")]
    ClientSeedAlreadySent(u32),
}

impl TableError {
    /// Stable reason code (google.rpc ErrorInfo.reason).
    pub fn code(&self) -> &'static str {
        match self {
            TableError::Rule(e) => e.code(),
            TableError::NotSeated => "not_seated",
            TableError::NotMember => "not_table_member",
            TableError::SeatTaken(_) => "seat_taken",
            TableError::TableFull => "table_full",
            TableError::NotStarted => "match_not_started",
            TableError::MatchOver => "match_over",
            TableError::ServerOnly => "server_only",
            TableError::NotBotSeat(_) => "not_bot_seat",
            TableError::StaleTimeout => "stale_timeout",
            TableError::HandInProgress(_) => "hand_in_progress",
            TableError::NotInHand(_) => "not_in_hand",
            TableError::NoSuchHand(_) => "hand_not_found",
            TableError::ClientSeedTooLate(_) => "client_seed_too_late",
            TableError::ClientSeedNotOpen(_) => "client_seed_not_open",
            TableError::ClientSeedAlreadySent(_) => "client_seed_already_sent",
        }
    }
}

/// What `decide` produced: the events, and the private seeds to store with them (by hand
/// number: a server seed it committed to, or the deal seed of a hand dealt without one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub events: Vec<TableEvent>,
    pub seeds: Vec<(u32, Seed)>,
}

/// The state of a table, folded from its events.
#[derive(Clone, Debug)]
pub struct Table {
    pub rules: RuleSet,
    pub seats: [Option<String>; 4],
    /// Each seated player's display name, from the access token they sat down (or joined
    /// again) with: the table shows a player by it without asking the accounts service. `None`
    /// for a player seated by CreateTable until they call JoinSeat, and for bots. A player who
    /// left during the match (a bot plays for them) keeps theirs until they take the seat back.
    pub names: [Option<String>; 4],
    /// Events folded so far (= the stream's version).
    pub version: u64,
    pub phase: Phase,
    pub record: Match,
    /// 1-based number of the current (or last) hand; 0 before the first deal.
    pub hand_number: u32,
    pub hand: Option<Hand>,
    pub seed_sha256: Option<String>,
    /// The stored private seeds by hand number: server seeds (and the deal seeds of hands dealt
    /// before client seeds). Never shown before the hand ends.
    seeds: BTreeMap<u32, Seed>,
    /// Each server seed commitment by the hand it is for: its hex sha256 and the version of the
    /// event that published it.
    pub commitments: BTreeMap<u32, (String, u64)>,
    /// The client seeds sent, by hand, in seat order.
    pub client_seeds: BTreeMap<u32, [Option<Seed>; 4]>,
    /// How each dealt hand's deal seed was derived.
    seedings: BTreeMap<u32, Seeding>,
    /// Expiries in a row and seats a bot plays for an absent player.
    pub absence: Absence,
    /// Where the table came from and whom it admits.
    pub admission: Admission,
}

impl Table {
    /// The first events of a new table, checked: `TableCreated`, and the first deal when the
    /// creator filled every seat.
    pub fn create(
        rules: RuleSet,
        seats: [Option<String>; 4],
        seed: &Seed,
    ) -> Result<Decision, String> {
        Table::create_with(rules, seats, Default::default(), Admission::default(), seed)
    }

    /// [`Table::create`] with the display names of the players seated (each named by a
    /// `SeatTaken` right after `TableCreated`, as their first JoinSeat would; a seat without a
    /// name waits for it), and where the table came from and whom it admits; every seated player
    /// must be one of `admission.members` when they are listed.
    pub fn create_with(
        rules: RuleSet,
        seats: [Option<String>; 4],
        names: [Option<String>; 4],
        admission: Admission,
        seed: &Seed,
    ) -> Result<Decision, String> {
        if let Some(p) = seats
            .iter()
            .flatten()
            .find(|p| Level::of_occupant(p).is_none() && !admission.may_sit(p))
        {
            return Err(format!("seats: {p} is not one of the members"));
        }
        rules.validate()?;
        let mut seen: Vec<&String> = seats.iter().flatten().collect();
        seen.sort();
        seen.dedup();
        if seen.len() != seats.iter().flatten().count() {
            return Err("seats: a player sits at most once".into());
        }
        let named: Vec<TableEvent> = (0..4u8)
            .filter_map(|seat| {
                let player = seats[seat as usize].clone()?;
                let name = names[seat as usize].clone()?;
                (Level::of_occupant(&player).is_none()).then_some(TableEvent::SeatTaken {
                    seat,
                    player,
                    name: Some(name),
                })
            })
            .collect();
        // The first hand's server seed, committed before any client seed for it can be sent.
        let first = seeding::server_seed(seed, 1);
        let created = TableEvent::TableCreated {
            rules,
            seats,
            admission,
            server_seed_sha256: Some(seed_hash(&first)),
        };
        let table = Table::replay([&created], BTreeMap::from([(1, first)]));
        let mut decision = Decision {
            events: std::iter::once(created).chain(named).collect(),
            seeds: vec![(1, first)],
        };
        if table.seats.iter().all(Option::is_some) {
            let (event, seeds) = table.deal(seed);
            decision.events.push(event);
            decision.seeds.extend(seeds);
        }
        Ok(decision)
    }

    /// Folds a whole stream. `seeds` are the table's stored deal seeds.
    ///
    /// # Panics
    /// If the first event is not `TableCreated` or a dealt hand has no seed: the store guarantees
    /// both (they are written in the same transaction).
    pub fn replay<'a>(
        events: impl IntoIterator<Item = &'a TableEvent>,
        seeds: BTreeMap<u32, Seed>,
    ) -> Table {
        let mut it = events.into_iter();
        let created = it.next().cloned();
        let Some(TableEvent::TableCreated {
            rules, admission, ..
        }) = created.clone()
        else {
            panic!("a table's stream starts with TableCreated");
        };
        let mut table = Table {
            record: Match::new(rules.clone(), 0),
            rules,
            seats: Default::default(),
            names: Default::default(),
            version: 0,
            phase: Phase::Waiting,
            hand_number: 0,
            hand: None,
            seed_sha256: None,
            seeds,
            commitments: BTreeMap::new(),
            client_seeds: BTreeMap::new(),
            seedings: BTreeMap::new(),
            absence: Absence::default(),
            admission,
        };
        if let Some(created) = &created {
            table.evolve(created);
        }
        for e in it {
            table.evolve(e);
        }
        table
    }

    /// Folds stored events that follow the ones already folded, with the stored seeds of the
    /// hands they deal (a superset is fine).
    pub fn catch_up<'a>(
        &mut self,
        events: impl IntoIterator<Item = &'a TableEvent>,
        seeds: BTreeMap<u32, Seed>,
    ) {
        self.seeds.extend(seeds);
        for event in events {
            self.evolve(event);
        }
    }

    /// Folds a decision of this table: remembers the seeds it stores, then folds its events, so
    /// a `HandDealt` always finds its seed.
    pub fn apply(&mut self, decision: &Decision) {
        for (hand_number, seed) in &decision.seeds {
            self.seeds.insert(*hand_number, *seed);
        }
        for event in &decision.events {
            self.evolve(event);
        }
    }

    /// The private seed stored for a hand (its server seed, or the deal seed of a hand dealt
    /// before client seeds), if this table knows it.
    pub fn seed(&self, hand_number: u32) -> Option<Seed> {
        self.seeds.get(&hand_number).copied()
    }

    /// The seed a dealt hand was dealt from, if this table knows it.
    pub fn deal_seed(&self, hand_number: u32) -> Option<Seed> {
        let stored = self.seed(hand_number)?;
        seeding::deal_seed(&stored, self.seedings.get(&hand_number)).ok()
    }

    /// The seat `player` sits in.
    pub fn seat_of(&self, player: &str) -> Option<Seat> {
        self.seats
            .iter()
            .position(|p| p.as_deref() == Some(player))
            .map(|s| s as Seat)
    }

    /// The view of the current hand from `seat`, if a hand was dealt.
    pub fn seat_view(&self, seat: Seat) -> Option<SeatView> {
        self.hand.as_ref().map(|h| SeatView::of(h, seat))
    }

    /// The current hand as a spectator sees it: what every seat sees of the table (discards,
    /// melds, counts, the indicator, whose turn), with no rack. Its `seat` is the seat on turn
    /// and means nothing; only its rack differs from that seat's view, and it is empty.
    pub fn public_view(&self) -> Option<SeatView> {
        let hand = self.hand.as_ref()?;
        let mut view = SeatView::of(hand, hand.turn.seat);
        view.rack.clear();
        Some(view)
    }

    /// Checks `command` and returns the events it causes. Changes nothing. `next_seed` deals the
    /// next hand if the command starts one.
    pub fn decide(&self, command: &TableCommand, next_seed: &Seed) -> Result<Decision, TableError> {
        match command {
            TableCommand::Join { player, seat, name } => {
                self.decide_join(player, *seat, name.as_deref(), next_seed)
            }
            TableCommand::Leave { player } => {
                let seat = self.seat_of(player).ok_or(TableError::NotSeated)?;
                // During the match a bot plays the seat until the same player joins again.
                let bot_substitute = match self.phase {
                    Phase::Waiting => false,
                    Phase::Playing => true,
                    Phase::Finished => return Err(TableError::MatchOver),
                };
                Ok(Decision {
                    events: vec![TableEvent::SeatLeft {
                        seat,
                        player: player.clone(),
                        bot_substitute,
                    }],
                    seeds: Vec::new(),
                })
            }
            TableCommand::Play {
                player,
                command,
                name,
            } => self.decide_play(player, command, name.as_deref(), next_seed),
            TableCommand::Server {
                seat,
                command,
                turn,
            } => self.decide_server(*seat, command, *turn, next_seed),
            TableCommand::Reclaim { player } => self.decide_reclaim(player),
            TableCommand::ClientSeed {
                player,
                hand_number,
                seed,
            } => self.decide_client_seed(player, *hand_number, seed),
        }
    }

    /// A seated player's client seed for the next hand: taken once per seat, only while that
    /// hand is not dealt and once its server seed is committed.
    fn decide_client_seed(
        &self,
        player: &str,
        hand_number: u32,
        seed: &Seed,
    ) -> Result<Decision, TableError> {
        let seat = self.seat_of(player).ok_or(TableError::NotSeated)?;
        if self.phase == Phase::Finished {
            return Err(TableError::MatchOver);
        }
        let next = self.hand_number + 1;
        if hand_number < next {
            return Err(TableError::ClientSeedTooLate(hand_number));
        }
        if hand_number > next || !self.commitments.contains_key(&next) {
            return Err(TableError::ClientSeedNotOpen(hand_number));
        }
        if self
            .client_seeds
            .get(&next)
            .is_some_and(|seeds| seeds[seat as usize].is_some())
        {
            return Err(TableError::ClientSeedAlreadySent(hand_number));
        }
        Ok(Decision {
            events: vec![TableEvent::ClientSeedSent {
                hand_number,
                seat,
                player: player.to_owned(),
                seed: hex(seed),
            }],
            seeds: Vec::new(),
        })
    }

    fn decide_join(
        &self,
        player: &str,
        wanted: Option<Seat>,
        name: Option<&str>,
        next_seed: &Seed,
    ) -> Result<Decision, TableError> {
        let name = name.map(str::to_owned);
        if let Some(seat) = self.seat_of(player) {
            // Already seated (a second join is harmless): a player seated by CreateTable, or one
            // whose name changed, tells the table the name to show.
            if name.is_none() || self.names[seat as usize] == name {
                return Ok(Decision::default());
            }
            return Ok(Decision {
                events: vec![TableEvent::SeatTaken {
                    seat,
                    player: player.to_owned(),
                    name,
                }],
                seeds: Vec::new(),
            });
        }
        if !self.admission.may_sit(player) {
            return Err(TableError::NotMember);
        }
        if self.phase == Phase::Finished {
            return Err(TableError::MatchOver);
        }
        if self.phase == Phase::Playing {
            // Only a player who left during the match comes back, to the seat they left. Every
            // seat is held while the match runs (a bot plays a seat its player left): anyone
            // else, or a seat other than the one left, is `table_full`, the seat named or not.
            let back = self
                .absence
                .vacated
                .iter()
                .position(|p| p.as_deref() == Some(player));
            return match (back, wanted) {
                (Some(s), None) => Ok(self.taken_back(s as Seat, player, name)),
                (Some(s), Some(w)) if s == w as usize => Ok(self.taken_back(w, player, name)),
                _ => Err(TableError::TableFull),
            };
        }
        let seat = match wanted {
            Some(s) if self.seats[s as usize].is_some() => return Err(TableError::SeatTaken(s)),
            Some(s) => s,
            None => self
                .seats
                .iter()
                .position(Option::is_none)
                .ok_or(TableError::TableFull)? as Seat,
        };
        let mut events = vec![TableEvent::SeatTaken {
            seat,
            player: player.to_owned(),
            name,
        }];
        let mut seeds = Vec::new();
        let free = self.seats.iter().filter(|p| p.is_none()).count();
        if free == 1 {
            let (event, stored) = self.deal(next_seed);
            events.push(event);
            seeds = stored;
        }
        Ok(Decision { events, seeds })
    }

    /// A player who left during the match sits in their seat again (see [`Absence::vacated`]).
    fn taken_back(&self, seat: Seat, player: &str, name: Option<String>) -> Decision {
        Decision {
            events: vec![TableEvent::SeatTaken {
                seat,
                player: player.to_owned(),
                name,
            }],
            seeds: Vec::new(),
        }
    }

    /// The next hand's `HandDealt`, with the private seeds to store. A hand whose server seed
    /// was committed is dealt from the seed derived from it and the client seeds sent for it,
    /// and the next hand's server seed (made from `fresh`) is committed; a hand of a table from
    /// before client seeds is dealt from `fresh` itself.
    fn deal(&self, fresh: &Seed) -> (TableEvent, Vec<(u32, Seed)>) {
        let hand_number = self.hand_number + 1;
        let first = self.record.next_first();
        let Some((committed, committed_at)) = self.commitments.get(&hand_number) else {
            let deal = Deal::from_seed(fresh, first);
            return (
                TableEvent::HandDealt {
                    hand_number,
                    first,
                    indicator: deal.indicator,
                    seed_sha256: seed_hash(fresh),
                    seeding: None,
                },
                vec![(hand_number, *fresh)],
            );
        };
        let server = self
            .seed(hand_number)
            .expect("a committed server seed is stored with its commitment");
        let clients = self
            .client_seeds
            .get(&hand_number)
            .copied()
            .unwrap_or_default();
        let deal_seed = seeding::deal_seed_v1(&server, &clients);
        let next = seeding::server_seed(fresh, hand_number + 1);
        let deal = Deal::from_seed(&deal_seed, first);
        (
            TableEvent::HandDealt {
                hand_number,
                first,
                indicator: deal.indicator,
                seed_sha256: seed_hash(&deal_seed),
                seeding: Some(Seeding {
                    derivation: seeding::DERIVATION,
                    server_seed_sha256: committed.clone(),
                    committed_at: *committed_at,
                    client_seeds: clients.map(|c| c.map(|seed| hex(&seed))),
                    next_server_seed_sha256: seed_hash(&next),
                }),
            },
            vec![(hand_number + 1, next)],
        )
    }

    fn decide_play(
        &self,
        player: &str,
        command: &Command,
        name: Option<&str>,
        next_seed: &Seed,
    ) -> Result<Decision, TableError> {
        let seat = self.seat_of(player).ok_or(TableError::NotSeated)?;
        match self.phase {
            Phase::Waiting => return Err(TableError::NotStarted),
            Phase::Finished => return Err(TableError::MatchOver),
            Phase::Playing => {}
        }
        if matches!(command, Command::Timeout) {
            return Err(TableError::ServerOnly);
        }
        let mut decision = self.play_seat(seat, command, next_seed)?;
        if self.absence.substituted[seat as usize] {
            // The absent player is back: the seat is theirs again from this command on.
            decision.events.insert(
                0,
                TableEvent::SeatReclaimed {
                    seat,
                    player: player.to_owned(),
                },
            );
        }
        if name.is_some() && self.names[seat as usize].is_none() {
            // Seated by CreateTable and never joined: the table learns the name to show, as a
            // JoinSeat would tell it.
            decision.events.insert(
                0,
                TableEvent::SeatTaken {
                    seat,
                    player: player.to_owned(),
                    name: name.map(str::to_owned),
                },
            );
        }
        Ok(decision)
    }

    /// The events of `command` played for `seat` in the current hand (with the hand's end, the
    /// match's end or the next deal it causes).
    pub(crate) fn play_seat(
        &self,
        seat: Seat,
        command: &Command,
        next_seed: &Seed,
    ) -> Result<Decision, TableError> {
        let hand = self.hand.as_ref().ok_or(TableError::NotStarted)?;
        let engine_events = hand.decide(seat, command)?;
        let mut after = hand.clone();
        let mut events = Vec::with_capacity(engine_events.len() + 2);
        let mut seeds = Vec::new();
        let rolled_back = engine_events
            .iter()
            .any(|e| matches!(e, Event::TableRolledBack { .. }));
        for e in engine_events {
            let melds_before = after.table.len();
            let noted = match &e {
                Event::TurnTimedOut { seat } => Noted {
                    in_a_row: Some(self.absence.expiries[*seat as usize].saturating_add(1)),
                    ..Noted::default()
                },
                Event::PlayableCalled { .. } => Noted {
                    called: after.pending_call.map(|c| c.tile),
                    ..Noted::default()
                },
                Event::SideDiscardReturned { .. } => Noted {
                    rolled_back,
                    ..Noted::default()
                },
                _ => Noted::default(),
            };
            after.evolve(&e);
            match e {
                Event::HandEnded { end } => {
                    let result = HandResult::of(&after).expect("the hand has ended");
                    // The match record is copied only for the one event that adds to it: it holds
                    // every hand of the match, and most commands end no hand.
                    let mut record = self.record.clone();
                    record.record(result);
                    let stored = self
                        .seed(self.hand_number)
                        .expect("the current hand has a seed");
                    let dealt_from = self
                        .deal_seed(self.hand_number)
                        .expect("the current hand's seed derives");
                    events.push(TableEvent::HandEnded {
                        hand_number: self.hand_number,
                        end,
                        result,
                        totals: record.totals,
                        seed: hex(&dealt_from),
                        racks: std::array::from_fn(|s| after.racks[s].to_vec()),
                        server_seed: self
                            .seedings
                            .contains_key(&self.hand_number)
                            .then(|| hex(&stored)),
                    });
                    if record.is_over() {
                        let winners = match record.winner() {
                            Some(MatchWinner::Seats(s)) => s,
                            _ => Vec::new(),
                        };
                        events.push(TableEvent::MatchEnded {
                            totals: record.totals,
                            winners,
                        });
                    } else {
                        let next = Table {
                            record,
                            ..self.clone()
                        };
                        let (event, stored) = next.deal(next_seed);
                        events.push(event);
                        seeds = stored;
                    }
                }
                e => events.push(TableEvent::Played {
                    hand_number: self.hand_number,
                    first_meld: matches!(e, Event::HandOpened { .. } | Event::MeldsLaid { .. })
                        .then_some(melds_before),
                    noted,
                    event: e,
                }),
            }
        }
        Ok(Decision { events, seeds })
    }

    /// Folds one stored event. Events are facts: this never fails. A `HandDealt` needs its seed,
    /// which [`Table::replay`] is given and [`Table::apply`] takes from the decision.
    pub fn evolve(&mut self, event: &TableEvent) {
        self.version += 1;
        self.absence.evolve(event);
        event.reseat(&mut self.seats);
        match event {
            TableEvent::TableCreated {
                server_seed_sha256, ..
            } => {
                if let Some(sha) = server_seed_sha256 {
                    self.commitments.insert(1, (sha.clone(), self.version));
                }
            }
            TableEvent::ClientSeedSent {
                hand_number,
                seat,
                seed,
                ..
            } => {
                if let Ok(seed) = seed_of_hex(seed) {
                    self.client_seeds.entry(*hand_number).or_default()[*seat as usize % 4] =
                        Some(seed);
                }
            }
            TableEvent::SeatTaken { seat, name, .. } => self.names[*seat as usize] = name.clone(),
            // A player who leaves to a bot keeps their name on the seat they may take back.
            TableEvent::SeatLeft {
                seat,
                bot_substitute: false,
                ..
            } => self.names[*seat as usize] = None,
            TableEvent::HandDealt {
                hand_number,
                first,
                seed_sha256,
                seeding: how,
                ..
            } => {
                let stored = self
                    .seed(*hand_number)
                    .expect("a dealt hand's seed is stored with it");
                let seed = seeding::deal_seed(&stored, how.as_ref())
                    .expect("the recorded client seeds are hex");
                if let Some(how) = how {
                    self.commitments.insert(
                        hand_number + 1,
                        (how.next_server_seed_sha256.clone(), self.version),
                    );
                    self.seedings.insert(*hand_number, how.clone());
                }
                let start = Hand::start(self.rules.clone(), Deal::from_seed(&seed, *first))
                    .expect("a seeded deal is valid");
                self.hand = Some(Hand::from_start(&start));
                self.hand_number = *hand_number;
                self.seed_sha256 = Some(seed_sha256.clone());
                self.phase = Phase::Playing;
            }
            TableEvent::Played { event, .. } => {
                if let Some(hand) = &mut self.hand {
                    hand.evolve(event);
                }
            }
            TableEvent::HandEnded { end, result, .. } => {
                if let Some(hand) = &mut self.hand {
                    hand.evolve(&Event::HandEnded { end: *end });
                }
                self.record.record(*result);
            }
            TableEvent::MatchEnded { .. } => self.phase = Phase::Finished,
            TableEvent::SeatLeft {
                bot_substitute: true,
                ..
            }
            | TableEvent::SeatHandedToBot { .. }
            | TableEvent::SeatReclaimed { .. } => {}
        }
    }
}

// ---- The server's plays for a seat: bots and timeouts (see `crate::absence`) -----------------

impl Table {
    /// True when the server plays `seat` with a bot: a bot sits there, or its player is absent.
    pub fn bot_holds(&self, seat: Seat) -> bool {
        self.absence.substituted[seat as usize]
            || self.seats[seat as usize]
                .as_deref()
                .is_some_and(|p| Level::of_occupant(p).is_some())
    }

    /// The bot level that plays `seat` (a substitute plays strong).
    pub fn bot_level_of(&self, seat: Seat) -> Option<Level> {
        if !self.bot_holds(seat) {
            return None;
        }
        Some(
            self.seats[seat as usize]
                .as_deref()
                .and_then(Level::of_occupant)
                .unwrap_or(Level::Strong),
        )
    }

    /// A command the server sends for `seat`: the timeout play on expiry (`turn` names the
    /// `(hand, turn)` whose deadline passed, so a late one is refused), or a bot's command for a
    /// seat a bot holds. A timeout that makes `expiries_before_bot` in a row hands the seat to a
    /// bot in the same decision.
    pub fn decide_server(
        &self,
        seat: Seat,
        command: &Command,
        turn: Option<(u32, u32)>,
        next_seed: &Seed,
    ) -> Result<Decision, TableError> {
        match self.phase {
            Phase::Waiting => return Err(TableError::NotStarted),
            Phase::Finished => return Err(TableError::MatchOver),
            Phase::Playing => {}
        }
        let hand = self.hand.as_ref().ok_or(TableError::NotStarted)?;
        if let Some((hand_number, number)) = turn
            && (self.hand_number != hand_number
                || hand.turn.number != number
                || hand.turn.seat != seat
                || hand.is_over())
        {
            return Err(TableError::StaleTimeout);
        }
        let timeout = matches!(command, Command::Timeout);
        if !timeout && !self.bot_holds(seat) {
            return Err(TableError::NotBotSeat(seat));
        }
        let mut decision = self.play_seat(seat, command, next_seed)?;
        let limit = self.rules.expiries_before_bot;
        let match_over = decision
            .events
            .iter()
            .any(|e| matches!(e, TableEvent::MatchEnded { .. }));
        if timeout
            && !self.bot_holds(seat)
            && limit > 0
            && self.absence.expiries[seat as usize].saturating_add(1) >= limit
            && !match_over
            && let Some(player) = self.seats[seat as usize].clone()
        {
            // In the hand of the timeout: before its end when that discard ended the hand.
            let at = decision
                .events
                .iter()
                .position(|e| matches!(e, TableEvent::HandEnded { .. }))
                .unwrap_or(decision.events.len());
            decision
                .events
                .insert(at, TableEvent::SeatHandedToBot { seat, player });
        }
        Ok(decision)
    }

    /// The player takes back a seat a bot held for them (nothing to do otherwise).
    pub fn decide_reclaim(&self, player: &str) -> Result<Decision, TableError> {
        let seat = self.seat_of(player).ok_or(TableError::NotSeated)?;
        if self.absence.substituted[seat as usize] && self.phase == Phase::Playing {
            return Ok(Decision {
                events: vec![TableEvent::SeatReclaimed {
                    seat,
                    player: player.to_owned(),
                }],
                seeds: Vec::new(),
            });
        }
        Ok(Decision::default())
    }
}

/// The server's command for a seat, as a [`TableCommand`].
pub fn server_command(seat: Seat, command: Command, turn: Option<(u32, u32)>) -> TableCommand {
    TableCommand::Server {
        seat,
        command,
        turn,
    }
}

#[cfg(test)]
mod tests {
    use okey_rules::{MatchLength, Preset, Tile};

    use super::*;
    use crate::shown::{Shown, show};

    fn seated() -> Table {
        let rules = RuleSet {
            match_length: MatchLength::Hands(1),
            ..Preset::Classic.rules()
        };
        let created = Table::create(rules, Default::default(), &[9; 32]).unwrap();
        let mut table = Table::replay(&created.events, created.seeds.iter().copied().collect());
        for (i, p) in ["a", "b", "c", "d"].iter().enumerate() {
            let d = table
                .decide(
                    &TableCommand::Join {
                        player: (*p).into(),
                        seat: None,
                        name: None,
                    },
                    &[i as u8; 32],
                )
                .unwrap();
            table.apply(&d);
        }
        table
    }

    #[test]
    fn the_fourth_seat_deals_the_first_hand_from_the_given_seed() {
        let table = seated();
        assert_eq!(table.phase, Phase::Playing);
        assert_eq!(table.version, 6);
        // Committed at creation, dealt with no client seed: derivation 1 over empty slots.
        let server = seeding::server_seed(&[9; 32], 1);
        assert_eq!(table.seed(1), Some(server));
        let dealt = seeding::deal_seed_v1(&server, &[None; 4]);
        assert_eq!(table.seed_sha256, Some(seed_hash(&dealt)));
        assert_eq!(table.deal_seed(1), Some(dealt));
        assert_eq!(table.seat_view(0).unwrap().rack.len(), 22);
    }

    /// A player the table knows by no name (seated without JoinSeat's name) is known by their
    /// token's from their first command on; a known name is not written again.
    #[test]
    fn a_seated_players_first_command_tells_the_table_their_name() {
        let mut table = seated();
        let seat = table.hand.as_ref().unwrap().turn.seat;
        let player = table.seats[seat as usize].clone().unwrap();
        let draw_or_discard = |t: &Table| {
            let hand = t.hand.as_ref().unwrap();
            match hand.turn.taken {
                okey_rules::hand::Taken::Nothing => Command::Draw,
                _ => Command::Discard {
                    tile: hand.racks[hand.turn.seat as usize].kinds().next().unwrap(),
                },
            }
        };
        let play = |t: &Table| TableCommand::Play {
            player: player.clone(),
            command: draw_or_discard(t),
            name: Some("Ayşe".into()),
        };
        let first = table.decide(&play(&table), &[1; 32]).unwrap();
        assert_eq!(
            first.events[0],
            TableEvent::SeatTaken {
                seat,
                player: player.clone(),
                name: Some("Ayşe".into())
            }
        );
        // Known by that name already: nothing is written but the move.
        let mut known = table.clone();
        known.names[seat as usize] = Some("Ayşe".into());
        let again = known.decide(&play(&known), &[1; 32]).unwrap();
        assert_eq!(again.events[..], first.events[1..]);
        table.apply(&first);
        assert_eq!(table.names[seat as usize].as_deref(), Some("Ayşe"));
    }

    #[test]
    fn a_stranger_cannot_play_and_a_rule_error_passes_through() {
        let table = seated();
        let play = |player: &str, command| TableCommand::Play {
            player: player.into(),
            command,
            name: None,
        };
        assert_eq!(
            table.decide(&play("z", Command::Draw), &[0; 32]),
            Err(TableError::NotSeated)
        );
        let err = table
            .decide(&play("b", Command::Draw), &[0; 32])
            .unwrap_err();
        assert_eq!(err.code(), "not_your_turn");
    }

    #[test]
    fn others_never_see_a_deal_or_a_draw() {
        let table = seated();
        let dealt = TableEvent::HandDealt {
            hand_number: 1,
            first: 0,
            indicator: "R1".parse().unwrap(),
            seed_sha256: seed_hash(&[3; 32]),
            seeding: None,
        };
        let seed_of = |n| table.seed(n);
        let Shown::Dealt { rack, .. } = show(&dealt, None, seed_of) else {
            panic!()
        };
        assert!(rack.is_empty());
        let Shown::Dealt { rack, .. } = show(&dealt, Some(1), seed_of) else {
            panic!()
        };
        // A deal recorded without seeding is dealt from the stored seed itself.
        assert_eq!(rack, Deal::from_seed(&table.seed(1).unwrap(), 0).racks[1]);
        let drawn = TableEvent::Played {
            hand_number: 1,
            first_meld: None,
            noted: Default::default(),
            event: Event::TileDrawn {
                seat: 2,
                tile: "K5".parse().unwrap(),
            },
        };
        assert!(matches!(
            show(&drawn, Some(1), seed_of),
            Shown::Drawn { tile: None, .. }
        ));
        assert!(matches!(
            show(&drawn, Some(2), seed_of),
            Shown::Drawn { tile: Some(_), .. }
        ));
    }

    /// [`seated`] with `rules` and a written deal (first seat 0, indicator K1, so the okey is
    /// K2): seat 0 holds Y13, seat 1 holds Y10 Y11 Y12, R13 B13 K13 and R9 R10 R11, so taking
    /// Y13 it opens with 115 points.
    fn written(rules: RuleSet) -> Table {
        written_with_pile(rules, usize::MAX)
    }

    /// [`written`] with a centre pile of at most `pile` tiles.
    fn written_with_pile(rules: RuleSet, pile: usize) -> Table {
        let mut table = seated();
        let t = |s: &str| -> Tile { s.parse().unwrap() };
        let mut pool: Vec<Tile> = ["R", "Y", "B", "K"]
            .iter()
            .flat_map(|c| (1..=13).flat_map(move |n| [format!("{c}{n}"), format!("{c}{n}")]))
            .map(|name| t(&name))
            .chain([t("F"), t("F")])
            .collect();
        let mut take = |name: &str| {
            let i = pool.iter().position(|x| *x == t(name)).expect("in the set");
            pool.remove(i)
        };
        let indicator = take("K1");
        let mut racks: [Vec<Tile>; 4] = Default::default();
        racks[0].push(take("Y13"));
        for name in ["Y10", "Y11", "Y12", "R13", "B13", "K13", "R9", "R10", "R11"] {
            racks[1].push(take(name));
        }
        let mut rest = pool.into_iter();
        for (seat, rack) in racks.iter_mut().enumerate() {
            let size = if seat == 0 { 22 } else { 21 };
            while rack.len() < size {
                rack.push(rest.next().unwrap());
            }
        }
        let deal = Deal {
            indicator,
            first: 0,
            racks,
            pile: rest.take(pile).collect(),
        };
        let start = Hand::start(rules.clone(), deal).expect("a valid deal");
        table.rules = rules;
        table.hand = Some(Hand::from_start(&start));
        table
    }

    fn play(table: &mut Table, player: &str, command: Command) -> Vec<TableEvent> {
        let command = TableCommand::Play {
            player: player.into(),
            command,
            name: None,
        };
        let d = table.decide(&command, &[7; 32]).expect("accepted");
        for e in &d.events {
            table.evolve(e);
        }
        d.events
    }

    fn noted(events: &[TableEvent], name: &str) -> Noted {
        events
            .iter()
            .find_map(|e| match e {
                TableEvent::Played { event, noted, .. } if event.name() == name => {
                    Some(noted.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no {name} in {events:?}"))
    }

    fn classic() -> RuleSet {
        RuleSet {
            match_length: MatchLength::Hands(1),
            ..Preset::Classic.rules()
        }
    }

    #[test]
    fn a_side_discard_returned_after_an_opening_is_noted_as_rolled_back() {
        let mut table = written(classic());
        let y13: Tile = "Y13".parse().unwrap();
        play(&mut table, "a", Command::Discard { tile: y13 });
        play(&mut table, "b", Command::TakeDiscard);
        let melds = [
            ["Y10", "Y11", "Y12", "Y13"].as_slice(),
            &["R13", "B13", "K13"],
            &["R9", "R10", "R11"],
        ]
        .iter()
        .map(|m| m.iter().map(|t| t.parse().unwrap()).collect())
        .collect();
        let opened = play(&mut table, "b", Command::Open { melds });
        assert!(
            opened.iter().any(|e| e.name() == "HandOpened"),
            "{opened:?}"
        );
        let returned = play(&mut table, "b", Command::ReturnDiscard);
        assert!(noted(&returned, "SideDiscardReturned").rolled_back);

        // Returned before any table change: not rolled back.
        let mut table = written(classic());
        play(&mut table, "a", Command::Discard { tile: y13 });
        play(&mut table, "b", Command::TakeDiscard);
        let returned = play(&mut table, "b", Command::ReturnDiscard);
        assert!(!noted(&returned, "SideDiscardReturned").rolled_back);
    }

    #[test]
    fn a_call_is_noted_with_the_tile_called() {
        let mut rules = classic();
        rules.playable_discard = okey_rules::PlayableDiscard::Called;
        let mut table = written(rules);
        let y13: Tile = "Y13".parse().unwrap();
        play(&mut table, "a", Command::Discard { tile: y13 });
        let called = play(&mut table, "b", Command::CallPlayable);
        assert_eq!(noted(&called, "PlayableCalled").called, Some(y13));
    }

    #[test]
    fn a_timeout_is_noted_with_the_expiries_in_a_row() {
        let mut table = written(classic());
        // Every seat times out in turn: the fifth is seat 0's second in a row.
        for k in 0..5u8 {
            let expected = k / 4 + 1;
            let hand = table.hand.as_ref().unwrap();
            let (seat, turn) = (hand.turn.seat, hand.turn.number);
            let command = TableCommand::Server {
                seat,
                command: Command::Timeout,
                turn: Some((table.hand_number, turn)),
            };
            let d = table.decide(&command, &[7; 32]).unwrap();
            assert_eq!(
                noted(&d.events, "TurnTimedOut").in_a_row,
                Some(expected),
                "seat {seat}"
            );
            for e in &d.events {
                table.evolve(e);
            }
        }
    }

    #[test]
    fn a_third_expiry_whose_discard_ends_the_hand_hands_the_seat_over_in_that_hand() {
        // Eight tiles in the pile: seat 0's third timeout (the ninth) draws the last and its
        // discard ends the hand; the match goes on to a second hand.
        let rules = RuleSet {
            match_length: MatchLength::Hands(2),
            ..Preset::Classic.rules()
        };
        let mut table = written_with_pile(rules.clone(), 8);
        table.record = Match::new(rules, 0);
        let mut last = Vec::new();
        for _ in 0..9 {
            let hand = table.hand.as_ref().unwrap();
            let command = TableCommand::Server {
                seat: hand.turn.seat,
                command: Command::Timeout,
                turn: Some((table.hand_number, hand.turn.number)),
            };
            let d = table.decide(&command, &[7; 32]).unwrap();
            for e in &d.events {
                table.evolve(e);
            }
            last = d.events;
        }
        let names: Vec<&str> = last.iter().map(TableEvent::name).collect();
        let handed = names.iter().position(|n| *n == "SeatHandedToBot");
        let ended = names.iter().position(|n| *n == "HandEnded");
        assert!(
            handed.is_some() && ended.is_some() && handed < ended,
            "handed over before the hand's end: {names:?}"
        );
        assert!(table.bot_holds(0));
        assert_eq!(table.hand_number, 2, "the next hand was dealt: {names:?}");
    }

    #[test]
    fn a_seat_left_during_the_match_goes_to_a_bot_and_only_its_player_takes_it_back() {
        let mut table = seated();
        let leave = |p: &str| TableCommand::Leave { player: p.into() };
        let d = table.decide(&leave("b"), &[0; 32]).unwrap();
        assert_eq!(
            d.events,
            vec![TableEvent::SeatLeft {
                seat: 1,
                player: "b".into(),
                bot_substitute: true
            }]
        );
        table.evolve(&d.events[0]);
        assert_eq!(table.seat_of("b"), None);
        assert!(table.bot_holds(1));
        let join = |p: &str, seat| TableCommand::Join {
            player: p.into(),
            seat,
            name: None,
        };
        assert_eq!(
            table.decide(&join("z", Some(1)), &[0; 32]),
            Err(TableError::TableFull)
        );
        assert_eq!(
            table.decide(&join("b", Some(2)), &[0; 32]),
            Err(TableError::TableFull),
            "every seat is held while the match runs"
        );
        assert_eq!(
            table.decide(&join("z", Some(2)), &[0; 32]),
            Err(TableError::TableFull),
            "a person's seat named at a running match"
        );
        let d = table.decide(&join("b", None), &[0; 32]).unwrap();
        assert_eq!(
            d.events,
            vec![TableEvent::SeatTaken {
                seat: 1,
                player: "b".into(),
                name: None,
            }]
        );
        table.evolve(&d.events[0]);
        assert_eq!(table.seat_of("b"), Some(1));
        assert!(!table.bot_holds(1));
    }
}
