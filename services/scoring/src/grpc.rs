//! The `okey.v1.ScoringService` API over gRPC: the only module of this service that knows the
//! generated (prost) types; it checks who calls and what they may read, converts rows to the
//! wire and maps errors to `tonic::Status` in one place.

use chrono::{DateTime, Utc};
use okey_platform::auth::{Caller, Role};
use okey_platform::fields;
use okey_platform::occupant::player_summary;
use okey_platform::page_token::PageTokens;
use okey_platform::rule_set::rules_to_proto;
use okey_platform::status::{self, Reason};
use okey_proto::v1 as pb;
use okey_proto::v1::scoring_service_server::ScoringService;
use okey_proto::v1::{
    GetLedgerStatusRequest, GetLedgerStatusResponse, GetMatchResultRequest, GetMatchResultResponse,
    GetRatingRequest, GetRatingResponse, GetStandingRequest, GetStandingResponse,
    ListLeaderboardRequest, ListLeaderboardResponse, ListLedgerEntriesRequest,
    ListLedgerEntriesResponse, ListMatchResultsRequest, ListMatchResultsResponse,
    ListStandingsRequest, ListStandingsResponse,
};
use okey_rules::RuleSet;
use sqlx::PgPool;
use tonic::{Request, Response, Status};
use uuid::Uuid;

use crate::consumer::Watch;
use crate::period::Period;
use crate::reads::{
    self, Board, BoardRow, EntryRow, MatchRow, Position, RatingRow, Side, StandingRow,
};
use crate::settings::RatingSettings;
use crate::skill::{self, Skill};

/// Page size when the request gives none.
const DEFAULT_PAGE: i64 = 50;
/// The largest page; a larger `page_size` is read as this.
const MAX_PAGE: i64 = 500;

/// The ScoringService implementation.
#[derive(Debug, Clone)]
pub struct ScoringApi {
    pool: PgPool,
    watch: Watch,
    rating: RatingSettings,
    tokens: PageTokens,
}

impl ScoringApi {
    /// An API over the scoring database, reporting the consumer's lag from `watch`, showing
    /// ratings as `rating` says and sealing page tokens with `tokens`.
    pub fn new(pool: PgPool, watch: Watch, rating: RatingSettings, tokens: PageTokens) -> Self {
        ScoringApi {
            pool,
            watch,
            rating,
            tokens,
        }
    }

    /// The position a request's `page_token` holds; `None` for the first page.
    fn position(&self, token: &str) -> Result<Option<Position>, Status> {
        if token.is_empty() {
            return Ok(None);
        }
        fields::text("page_token", token)?;
        Position::from_token(token, &self.tokens)
            .map(Some)
            .ok_or_else(bad_token)
    }

    fn provisional(&self, uncertainty: f64) -> bool {
        Skill {
            rating: 0.0,
            uncertainty,
        }
        .provisional(f64::from(self.rating.provisional_uncertainty))
    }

    /// The fewest matches to be listed on `board`: the request's, at least the server's for the
    /// all-time board, at least one for a period's.
    fn min_matches(&self, board: Board, asked: u32) -> i64 {
        let floor = match board {
            Board::AllTime => self.rating.leaderboard_min_matches.max(1),
            Board::Period { .. } => 1,
        };
        i64::from(asked.max(floor))
    }

    fn board_entry(&self, row: BoardRow, rank: i64, board: Board) -> pb::LeaderboardEntry {
        pb::LeaderboardEntry {
            rank: i32::try_from(rank).unwrap_or(i32::MAX),
            player: Some(pb::PlayerSummary {
                player: row.player,
                display_name: row.display_name.unwrap_or_default(),
                avatar_ref: String::new(),
                bot: false,
            }),
            rating: row.points,
            provisional: self.provisional(row.uncertainty),
            matches: row.matches,
            wins: row.wins,
            score: match board {
                Board::AllTime => 0.0,
                Board::Period { .. } => row.score2 as f64 / 2.0,
            },
        }
    }

    /// A page's rows with their places: the first's counted, the others' following from it.
    async fn ranked(
        &self,
        board: Board,
        min: i64,
        rows: Vec<BoardRow>,
    ) -> Result<Vec<pb::LeaderboardEntry>, Status> {
        let Some(first) = rows.first() else {
            return Ok(Vec::new());
        };
        let first_rank = reads::board_rank(&self.pool, board, min, first)
            .await
            .map_err(database)?;
        // Where the first row stands in the whole order: a page can start inside a shared place.
        let first_position = first_rank
            + reads::board_ties_before(&self.pool, board, min, first)
                .await
                .map_err(database)?;
        let mut entries = Vec::with_capacity(rows.len());
        let mut rank = first_rank;
        let mut previous: Option<BoardRow> = None;
        for (i, row) in rows.into_iter().enumerate() {
            if let Some(p) = &previous
                && !row.ties(p, board)
            {
                rank = first_position + i as i64;
            }
            previous = Some(row.clone());
            entries.push(self.board_entry(row, rank, board));
        }
        Ok(entries)
    }
}

fn database(e: sqlx::Error) -> Status {
    tracing::warn!(error = %e, "scoring database");
    status::error(
        Reason::DependencyUnavailable,
        "the scoring database is unavailable",
    )
}

fn caller<T>(request: &Request<T>) -> Result<Caller, Status> {
    request
        .extensions()
        .get::<Caller>()
        .cloned()
        .ok_or_else(|| status::error(Reason::TokenInvalid, "no verified caller"))
}

/// Analysts, support staff and admins read everyone's records.
fn reads_everyone(caller: &Caller) -> bool {
    caller
        .roles
        .iter()
        .any(|r| matches!(r, Role::Analyst | Role::Support | Role::Admin))
}

/// The player a `players/…` name names, before any question of who may read what: the caller's
/// own name for `players/me` (`player_not_found` for a token whose subject is no player),
/// `None` for `players/-` (every player, when `everyone` is allowed),
/// `players/{uuid}` in its canonical spelling otherwise. An empty name is `missing_field`; any
/// other that is not one of these `invalid_name`.
fn player_name(
    caller: &Caller,
    field: &str,
    name: &str,
    everyone: bool,
) -> Result<Option<String>, Status> {
    fields::required(field, name)?;
    let forms = if everyone {
        "players/{player}, players/me or players/-"
    } else {
        "players/{player} or players/me"
    };
    let bad = || {
        status::invalid_argument(
            Reason::InvalidName,
            field,
            format!("{field} must be {forms}, {{player}} a UUID"),
        )
    };
    match name.strip_prefix("players/").ok_or_else(bad)? {
        // A token whose subject is no player (a staff or service identity) has no `me`.
        "me" => Ok(Some(format!("players/{}", caller.account()?.hyphenated()))),
        "-" if everyone => Ok(None),
        id => fields::name_id(id)
            .map(|id| Some(format!("players/{}", id.hyphenated())))
            .ok_or_else(bad),
    }
}

/// Whose records a `players/…` name asks for: `Some(player)`, or `None` for everyone's
/// (`players/-`, when `everyone` is allowed). The name is checked first (`missing_field`,
/// `invalid_name`), then whether the caller may read those records (`role_required`).
fn whose(
    caller: &Caller,
    field: &str,
    name: &str,
    everyone: bool,
) -> Result<Option<String>, Status> {
    readable(caller, player_name(caller, field, name, everyone)?)
}

/// `asked` (a checked [`player_name`]) if the caller may read those records: their own, or
/// anyone's with the role analyst or support (`role_required`).
fn readable(caller: &Caller, asked: Option<String>) -> Result<Option<String>, Status> {
    let own = format!("players/{}", caller.player_id);
    if asked.as_deref() != Some(own.as_str()) && !reads_everyone(caller) {
        return Err(status::error(
            Reason::RoleRequired,
            "another player's records need the role analyst or support",
        ));
    }
    Ok(asked)
}

fn page_size(size: i32) -> Result<i64, Status> {
    match i64::from(size) {
        0 => Ok(DEFAULT_PAGE),
        n if n < 0 => Err(status::invalid_argument(
            Reason::InvalidPageSize,
            "page_size",
            "page_size must not be negative",
        )),
        n => Ok(n.min(MAX_PAGE)),
    }
}

fn bad_token() -> Status {
    status::invalid_argument(
        Reason::InvalidPageToken,
        "page_token",
        "page_token was not given by this server for this request",
    )
}

fn match_id(field: &str, name: &str) -> Result<Uuid, Status> {
    fields::required(field, name)?;
    name.strip_prefix("matches/")
        .and_then(fields::name_id)
        .ok_or_else(|| {
            status::invalid_argument(
                Reason::InvalidName,
                field,
                format!("{field} must be matches/{{uuid}}"),
            )
        })
}

fn period(value: i32) -> Result<Period, Status> {
    match pb::StandingsPeriod::try_from(value) {
        Ok(pb::StandingsPeriod::Unspecified) => Ok(Period::AllTime),
        Ok(pb::StandingsPeriod::Day) => Ok(Period::Day),
        Ok(pb::StandingsPeriod::Week) => Ok(Period::Week),
        Ok(pb::StandingsPeriod::Month) => Ok(Period::Month),
        Err(_) => Err(status::invalid_argument(
            Reason::InvalidPeriod,
            "period",
            format!("{value} is not a StandingsPeriod this server knows"),
        )),
    }
}

fn timestamp(t: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: t.timestamp(),
        nanos: t.timestamp_subsec_nanos() as i32,
    }
}

fn entry_to_proto(e: EntryRow) -> pb::LedgerEntry {
    let owner = e.player_id.clone().unwrap_or_else(|| "players/-".into());
    pb::LedgerEntry {
        name: format!("{owner}/ledgerEntries/{}", e.entry_id),
        r#match: format!("matches/{}", e.match_id),
        table: format!("tables/{}", e.match_id),
        hand_number: e.hand_number,
        seat: e.seat,
        kind: match e.kind.as_str() {
            "penalty" => pb::LedgerEntryKind::Penalty,
            "void" => pb::LedgerEntryKind::Voided,
            "hand_score" => pb::LedgerEntryKind::HandScore,
            "floor" => pb::LedgerEntryKind::Floor,
            _ => pb::LedgerEntryKind::Unspecified,
        } as i32,
        points: e.points,
        reason: e.reason,
        table_version: e.table_version,
        create_time: Some(timestamp(e.event_time)),
        event_id: e.event_id.to_string(),
        player: e.player_id.unwrap_or_default(),
        team: e.team,
        penalty_id: e.penalty_id,
        voided_by: e.voided_by.unwrap_or_default(),
        multiplier: e.multiplier.unwrap_or_default(),
        basis: e.basis.unwrap_or_default(),
    }
}

fn match_to_proto(m: MatchRow) -> pb::MatchResult {
    let rules = serde_json::from_value::<RuleSet>(m.rules)
        .ok()
        .map(|r| rules_to_proto(&r));
    let at = |column: &[Option<String>], s: usize| column.get(s).cloned().flatten();
    let seats = (0..4)
        .map(|s| match (at(&m.seat_players, s), at(&m.bot_names, s)) {
            (Some(player), _) => player_summary(&player, at(&m.names, s).as_deref()),
            (None, Some(bot)) => player_summary(&bot, None),
            // A free seat; or a bot whose name the match's tally did not keep (written before
            // bot names were kept, see `migrations/scoring/0007_bot_names.sql`).
            (None, None) => pb::PlayerSummary {
                bot: m.bots.get(s).copied().unwrap_or(false),
                ..Default::default()
            },
        })
        .collect();
    let verified = m.ended_at.is_some() && m.hands.iter().all(|h| h.verified);
    let hands = m
        .hands
        .into_iter()
        .map(|h| pb::HandResult {
            hand_number: h.hand_number,
            outcome: match h.outcome.as_str() {
                "finished" => pb::HandOutcome::Finished,
                "pile_empty" => pb::HandOutcome::PileEmpty,
                "cancelled" => pb::HandOutcome::Cancelled,
                _ => pb::HandOutcome::Unspecified,
            } as i32,
            winner: h.winner_seat,
            scores: h.scores,
            penalties: h.penalties,
            seed_sha256: h.seed_sha256,
            seed: h.seed,
            verified: h.verified,
            multiplier: h.multiplier,
            totals: h.totals_after,
        })
        .collect();
    pb::MatchResult {
        name: format!("matches/{}", m.match_id),
        table: format!("tables/{}", m.match_id),
        rules,
        seats,
        hands,
        totals: m
            .totals
            .unwrap_or_default()
            .into_iter()
            .map(|t| i32::try_from(t).unwrap_or(i32::MAX))
            .collect(),
        winners: m.winners.unwrap_or_default(),
        start_time: m.started_at.map(timestamp),
        end_time: m.ended_at.map(timestamp),
        ranked: m.ranked,
        draw: m.draw.unwrap_or(false),
        verified,
    }
}

fn standing_to_proto(s: StandingRow) -> pb::Standing {
    pb::Standing {
        rank: i32::try_from(s.rank).unwrap_or(i32::MAX),
        player: Some(pb::PlayerSummary {
            player: s.player,
            display_name: s.display_name.unwrap_or_default(),
            avatar_ref: String::new(),
            bot: false,
        }),
        matches_played: s.played,
        matches_won: s.won,
        mean_match_total: s.mean,
    }
}

/// A `players/{player}` or `players/me` name of anyone (ratings and standings are public).
fn anyone(caller: &Caller, field: &str, name: &str) -> Result<String, Status> {
    Ok(player_name(caller, field, name, false)?.expect("one player unless everyone is allowed"))
}

/// The board of a period now (or at a token's start).
fn board_at(period: Period, at: DateTime<Utc>) -> Board {
    match period {
        Period::AllTime => Board::AllTime,
        period => Board::Period {
            period,
            starts: period.bounds(at).0,
        },
    }
}

fn rating_to_proto(
    player: String,
    row: Option<RatingRow>,
    rank: Option<i64>,
    provisional: bool,
) -> pb::Rating {
    let (skill, matches, wins, name, last) = match row {
        Some(r) => (
            Skill {
                rating: r.rating,
                uncertainty: r.uncertainty,
            },
            r.matches,
            r.wins,
            r.display_name,
            Some(r.last_ended_at),
        ),
        None => (Skill::NEW, 0, 0, None, None),
    };
    pb::Rating {
        player: Some(pb::PlayerSummary {
            player,
            display_name: name.unwrap_or_default(),
            avatar_ref: String::new(),
            bot: false,
        }),
        rating: skill.points(),
        uncertainty: skill.uncertainty,
        provisional,
        rank: rank.map(|r| i32::try_from(r).unwrap_or(i32::MAX)),
        matches,
        wins,
        win_rate: if matches > 0 {
            wins as f64 / matches as f64
        } else {
            0.0
        },
        last_match_time: last.map(timestamp),
    }
}

#[tonic::async_trait]
impl ScoringService for ScoringApi {
    async fn list_standings(
        &self,
        request: Request<ListStandingsRequest>,
    ) -> Result<Response<ListStandingsResponse>, Status> {
        caller(&request)?;
        let r = request.into_inner();
        let limit = page_size(r.page_size)?;
        let asked = period(r.period)?;
        let (from, to, after) = match self.position(&r.page_token)? {
            None => {
                let (from, to) = asked.bounds(Utc::now());
                (from, to, None)
            }
            Some(Position::Standings {
                from,
                to,
                won,
                mean,
                played,
                player,
            }) => {
                // The token's window must be the asked period's: each period has a length of
                // its own, so a day's token names no week and a month's token no day.
                if asked.bounds(from) != (from, to) {
                    return Err(bad_token());
                }
                (from, to, Some((won, mean, played, player)))
            }
            Some(_) => return Err(bad_token()),
        };
        let rows = reads::standings(&self.pool, asked, from, after, limit + 1)
            .await
            .map_err(database)?;
        let (rows, more) = split(rows, limit);
        let next_page_token = match (more, rows.last()) {
            (true, Some(last)) => Position::Standings {
                from,
                to,
                won: last.won,
                mean: last.mean,
                played: last.played,
                player: last.player.clone(),
            }
            .token(&self.tokens),
            _ => String::new(),
        };
        Ok(Response::new(ListStandingsResponse {
            standings: rows.into_iter().map(standing_to_proto).collect(),
            next_page_token,
        }))
    }

    async fn list_ledger_entries(
        &self,
        request: Request<ListLedgerEntriesRequest>,
    ) -> Result<Response<ListLedgerEntriesResponse>, Status> {
        let caller = caller(&request)?;
        let r = request.into_inner();
        // Both names are checked before who may read them (scoring.proto).
        let asked = player_name(&caller, "parent", &r.parent, true)?;
        let filter = if r.r#match.is_empty() {
            None
        } else {
            Some(match_id("match", &r.r#match)?)
        };
        let player = readable(&caller, asked)?;
        let limit = page_size(r.page_size)?;
        let parent = player.clone().unwrap_or_else(|| "players/-".into());
        let below = match self.position(&r.page_token)? {
            None => None,
            Some(Position::Ledger {
                parent: p,
                match_id: m,
                below,
            }) if p == parent && m == filter => Some(below),
            Some(_) => return Err(bad_token()),
        };
        let rows = reads::ledger_entries(&self.pool, player.as_deref(), filter, below, limit + 1)
            .await
            .map_err(database)?;
        let (rows, more) = split(rows, limit);
        let next_page_token = match (more, rows.last()) {
            (true, Some(last)) => Position::Ledger {
                parent,
                match_id: filter,
                below: last.entry_id,
            }
            .token(&self.tokens),
            _ => String::new(),
        };
        Ok(Response::new(ListLedgerEntriesResponse {
            entries: rows.into_iter().map(entry_to_proto).collect(),
            next_page_token,
        }))
    }

    async fn get_match_result(
        &self,
        request: Request<GetMatchResultRequest>,
    ) -> Result<Response<GetMatchResultResponse>, Status> {
        let caller = caller(&request)?;
        let id = match_id("name", &request.get_ref().name)?;
        let row = reads::match_result(&self.pool, id)
            .await
            .map_err(database)?;
        let own = format!("players/{}", caller.player_id);
        let Some(row) = row.filter(|m| {
            reads_everyone(&caller) || m.seat_players.iter().any(|p| p.as_deref() == Some(&own))
        }) else {
            return Err(status::error(
                Reason::MatchNotFound,
                "no such match among those the caller may read",
            ));
        };
        Ok(Response::new(GetMatchResultResponse {
            result: Some(match_to_proto(row)),
        }))
    }

    async fn list_match_results(
        &self,
        request: Request<ListMatchResultsRequest>,
    ) -> Result<Response<ListMatchResultsResponse>, Status> {
        let caller = caller(&request)?;
        let r = request.into_inner();
        let player = whose(&caller, "parent", &r.parent, false)?
            .expect("one player unless everyone is allowed");
        let limit = page_size(r.page_size)?;
        let after = match self.position(&r.page_token)? {
            None => None,
            Some(Position::Results {
                player: p,
                ended_at,
                match_id,
            }) if p == player => Some((ended_at, match_id)),
            Some(_) => return Err(bad_token()),
        };
        let keys = reads::matches_of(&self.pool, &player, after, limit + 1)
            .await
            .map_err(database)?;
        let (keys, more) = split(keys, limit);
        let mut results = Vec::with_capacity(keys.len());
        for (_, id) in &keys {
            if let Some(row) = reads::match_result(&self.pool, *id)
                .await
                .map_err(database)?
            {
                results.push(match_to_proto(row));
            }
        }
        let next_page_token = match (more, keys.last()) {
            (true, Some((ended_at, match_id))) => Position::Results {
                player,
                ended_at: *ended_at,
                match_id: *match_id,
            }
            .token(&self.tokens),
            _ => String::new(),
        };
        Ok(Response::new(ListMatchResultsResponse {
            results,
            next_page_token,
        }))
    }

    async fn get_standing(
        &self,
        request: Request<GetStandingRequest>,
    ) -> Result<Response<GetStandingResponse>, Status> {
        let caller = caller(&request)?;
        let r = request.into_inner();
        // Standings are public: anyone's place may be read.
        let player = anyone(&caller, "player", &r.player)?;
        let asked = period(r.period)?;
        let (from, _) = asked.bounds(Utc::now());
        let standing = reads::standing_of(&self.pool, asked, from, &player)
            .await
            .map_err(database)?;
        Ok(Response::new(GetStandingResponse {
            standing: standing.map(standing_to_proto),
        }))
    }

    async fn get_rating(
        &self,
        request: Request<GetRatingRequest>,
    ) -> Result<Response<GetRatingResponse>, Status> {
        let caller = caller(&request)?;
        let player = anyone(&caller, "player", &request.get_ref().player)?;
        let row = reads::rating_of(&self.pool, &player)
            .await
            .map_err(database)?;
        let min = self.min_matches(Board::AllTime, 0);
        let rank = match &row {
            Some(r) if r.matches >= min => {
                let listed = BoardRow {
                    player: r.player.clone(),
                    display_name: None,
                    points: r.points,
                    uncertainty: r.uncertainty,
                    matches: r.matches,
                    wins: r.wins,
                    score2: 0,
                };
                Some(
                    reads::board_rank(&self.pool, Board::AllTime, min, &listed)
                        .await
                        .map_err(database)?,
                )
            }
            _ => None,
        };
        let uncertainty = row
            .as_ref()
            .map_or(skill::INITIAL_UNCERTAINTY, |r| r.uncertainty);
        Ok(Response::new(GetRatingResponse {
            rating: Some(rating_to_proto(
                player,
                row,
                rank,
                self.provisional(uncertainty),
            )),
        }))
    }

    async fn list_leaderboard(
        &self,
        request: Request<ListLeaderboardRequest>,
    ) -> Result<Response<ListLeaderboardResponse>, Status> {
        let caller = caller(&request)?;
        let r = request.into_inner();
        let limit = page_size(r.page_size)?;
        let asked = period(r.period)?;
        let (board, min, start, around) = match self.position(&r.page_token)? {
            None => {
                let board = board_at(asked, Utc::now());
                (
                    board,
                    self.min_matches(board, r.min_matches),
                    None,
                    r.around_me,
                )
            }
            Some(Position::Board {
                period: p,
                starts,
                min,
                around,
                key,
            }) => {
                let board = board_at(asked, starts);
                let same_board = match board {
                    Board::AllTime => p == Period::AllTime.as_str(),
                    Board::Period { period, starts: s } => p == period.as_str() && s == starts,
                };
                if !same_board
                    || around != r.around_me
                    || i64::from(min) != self.min_matches(board, r.min_matches)
                {
                    return Err(bad_token());
                }
                (board, i64::from(min), Some(key), around)
            }
            Some(_) => return Err(bad_token()),
        };
        // Around the caller: the page starts half a page above their row.
        let mut me_row = None;
        let rows = match (&start, around) {
            (None, true) => {
                let own = format!("players/{}", caller.player_id);
                me_row = reads::board_row_of(&self.pool, board, min, &own)
                    .await
                    .map_err(database)?;
                match &me_row {
                    Some(me) => {
                        let key = me.key(board);
                        let above = reads::board_rows(
                            &self.pool,
                            board,
                            min,
                            Some(&key),
                            Side::Before,
                            limit / 2,
                        )
                        .await
                        .map_err(database)?;
                        let top = above.last().map(|r| r.key(board)).unwrap_or(key);
                        reads::board_rows(&self.pool, board, min, Some(&top), Side::From, limit + 1)
                            .await
                            .map_err(database)?
                    }
                    None => reads::board_rows(&self.pool, board, min, None, Side::After, limit + 1)
                        .await
                        .map_err(database)?,
                }
            }
            (key, _) => {
                reads::board_rows(&self.pool, board, min, key.as_ref(), Side::After, limit + 1)
                    .await
                    .map_err(database)?
            }
        };
        let (rows, more) = split(rows, limit);
        let next_page_token = match (more, rows.last()) {
            (true, Some(last)) => Position::Board {
                period: match board {
                    Board::AllTime => Period::AllTime.as_str().to_owned(),
                    Board::Period { period, .. } => period.as_str().to_owned(),
                },
                starts: match board {
                    Board::AllTime => DateTime::<Utc>::UNIX_EPOCH,
                    Board::Period { starts, .. } => starts,
                },
                min: u32::try_from(min).unwrap_or(u32::MAX),
                around,
                key: last.key(board),
            }
            .token(&self.tokens),
            _ => String::new(),
        };
        let entries = self.ranked(board, min, rows).await?;
        let me = me_row.and_then(|me| {
            entries
                .iter()
                .find(|e| e.player.as_ref().is_some_and(|p| p.player == me.player))
                .cloned()
        });
        Ok(Response::new(ListLeaderboardResponse {
            entries,
            next_page_token,
            me,
        }))
    }

    async fn get_ledger_status(
        &self,
        request: Request<GetLedgerStatusRequest>,
    ) -> Result<Response<GetLedgerStatusResponse>, Status> {
        // Who may ask (support, analyst, admin) is the access table's check.
        caller(&request)?;
        let (set_aside, unverified) = reads::ledger_counts(&self.pool).await.map_err(database)?;
        let lag = self.watch.lag();
        let lag_events = match self.watch.pending().await {
            Some(pending) => pending,
            None => lag.events(),
        };
        Ok(Response::new(GetLedgerStatusResponse {
            lag_events: lag_events as i64,
            lag_ms: lag.millis() as i64,
            last_applied_time: lag.last_applied().map(timestamp),
            events_applied: lag.applied() as i64,
            events_set_aside: set_aside,
            hands_unverified: unverified,
        }))
    }
}

/// The first `limit` rows, and whether there were more.
fn split<T>(mut rows: Vec<T>, limit: i64) -> (Vec<T>, bool) {
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    (rows, more)
}
