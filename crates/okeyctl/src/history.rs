//! A hand's history read from the table service's API (`GetHandHistory`, every page) with an
//! access token: a player's for a hand they sat in once it has ended, or a support token for any
//! hand, also one still being played, up to its latest event (each such read is in the
//! service's audit log). `okeyctl replay`, `export-hand` and `verify` read hands only this way;
//! the tool never opens the table service's database.
//!
//! What a page carries: the match's rules (the engine's form), the totals before the hand, each
//! event as the table stored it (`okey_table::TableEvent` JSON: the seed commitment at the deal,
//! the revealed seed at the end) and each deal whole as the service shows it.

use anyhow::{Context, Result, bail};
use okey_platform::status::Reason;
use okey_proto::v1 as pb;
use okey_proto::v1::table_service_client::TableServiceClient;
use okey_rules::{Deal, Event, Hand, RuleSet, Tile};
use okey_table::TableEvent;
use okey_table::history::{HandEvents, HistoryError};

use crate::client::{authorized, connect, refused};

/// Events asked for per page.
const PAGE: i32 = 500;

/// A deal as the table service showed it (`HandDeal`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShownDeal {
    pub first: u8,
    pub indicator: Tile,
    pub seed_sha256: String,
    pub racks: [Vec<Tile>; 4],
    pub pile: Vec<Tile>,
}

/// A hand's whole history, every page put together.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// `tables/{id}`.
    pub table: String,
    pub hand_number: u32,
    pub rules: RuleSet,
    pub totals_before: [i64; 4],
    pub ended: bool,
    /// `(version, event as stored)`, in version order, from the hand's first deal.
    pub events: Vec<(u64, TableEvent)>,
    /// `(version, deal)` of each deal of the hand.
    pub deals: Vec<(u64, ShownDeal)>,
    /// `(version, event as stored)` of the earlier events its deals depend on: the server seed
    /// commitments and the client seeds sent.
    pub inputs: Vec<(u64, TableEvent)>,
}

/// A hand's deals in the form `okeyctl replay` reads, as far as they have been played.
#[derive(Clone, Debug)]
pub struct HandDeals {
    /// Every finished deal of the number, oldest first (one: a void hand is dealt again as the
    /// next number).
    pub finished: Vec<HandEvents>,
    /// The deal still being played when the hand was read (support reads a hand in play):
    /// `hand_started` with the deal the service shows (its seed is revealed only at its end),
    /// then every event played so far, and no `hand_ended`.
    pub in_play: Option<HandEvents>,
}

impl HandDeals {
    /// Every deal, oldest first: the finished ones, then the one in play.
    pub fn all(&self) -> impl Iterator<Item = &HandEvents> {
        self.finished.iter().chain(&self.in_play)
    }

    /// The latest deal: the one in play, else the last finished one.
    pub fn last(&self) -> Option<&HandEvents> {
        self.in_play.as_ref().or(self.finished.last())
    }
}

/// One line of a fetched hand told: the table version of its event, the event's name and what
/// it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToldLine {
    pub version: u64,
    pub event: String,
    pub text: String,
}

/// The hand `events` (a deal as `okeyctl replay` reads it) fold to.
fn folded(events: &[Event]) -> Hand {
    let mut hand = Hand::from_start(&events[0]);
    for e in &events[1..] {
        hand.evolve(e);
    }
    hand
}

/// Whether `events` (a deal as `okeyctl replay` reads it) reach the deal's end: a deal exported
/// while in play stops before its `hand_ended`, and tells no end-of-hand score.
pub fn has_end(events: &[Event]) -> bool {
    matches!(events.last(), Some(Event::HandEnded { .. }))
}

impl Fetched {
    /// The version of the latest event read: the hand's `HandEnded` once it has ended, else the
    /// table's latest event at the read.
    pub fn last_version(&self) -> u64 {
        self.events.last().map_or(0, |(v, _)| *v)
    }

    /// The hand as `okeyctl replay tables/… --hand N` tells it, the same story as the replay
    /// page: every event at its **table** version (the version the ledger, the page and
    /// `ListLedgerEntries` name), the engine's events told by `okey_rules::replay` from `deals`
    /// (this hand's, [`Fetched::deals`]), the seat changes in between in the page's words, and
    /// after each deal's end every seat's match total: before, the hand's score, the in-play
    /// penalties that stand, after (and why, when the table's rules floored it at zero).
    pub fn told(&self, deals: &HandDeals) -> Vec<ToldLine> {
        let narrated: Vec<Vec<okey_rules::replay::ReplayLine>> = deals
            .all()
            .map(|d| okey_rules::replay::narrate(d))
            .collect();
        let hand = self.hand_number;
        let mut out = Vec::new();
        // The deal being told (index into `narrated`) and its next line.
        let mut deal: Option<usize> = None;
        let mut next = 0;
        let mut dealt = 0;
        // Between a deal and its end: the seat changes then are part of the story.
        let mut open = false;
        let mut totals_before = self.totals_before;
        for (version, event) in &self.events {
            let engine_line = match event {
                TableEvent::HandDealt { hand_number, .. } if *hand_number == hand => {
                    deal = Some(dealt);
                    dealt += 1;
                    next = 0;
                    open = true;
                    if narrated.len() > 1 {
                        out.push(ToldLine {
                            version: *version,
                            event: String::new(),
                            text: format!("deal {dealt} of {}:", narrated.len()),
                        });
                    }
                    true
                }
                TableEvent::Played { hand_number, .. }
                | TableEvent::HandEnded { hand_number, .. }
                    if *hand_number == hand =>
                {
                    true
                }
                _ => false,
            };
            if engine_line {
                let Some(line) = deal.and_then(|d| narrated.get(d)).and_then(|l| l.get(next))
                else {
                    continue;
                };
                next += 1;
                let mut text = line.text.clone();
                // How close the seat is to a bot taking it over (what the table noted).
                if let TableEvent::Played { noted, .. } = event
                    && let Some(n) = noted.in_a_row
                {
                    text.push_str(&format!(
                        "; {n} in a row (a bot takes the seat at {})",
                        self.rules.expiries_before_bot
                    ));
                }
                out.push(ToldLine {
                    version: *version,
                    event: line.event.to_owned(),
                    text,
                });
                if let (TableEvent::HandEnded { end, totals, .. }, Some(d)) = (event, deal) {
                    let hand = deals.all().nth(d).map(|events| folded(events));
                    let penalties = hand
                        .as_ref()
                        .map(|h| h.penalty_totals())
                        .unwrap_or_default();
                    for seat in 0..4 {
                        let summed = totals_before[seat]
                            + i64::from(end.scores[seat])
                            + i64::from(penalties[seat]);
                        let floored = if summed == totals[seat] {
                            String::new()
                        } else {
                            format!(
                                " (the sum is {summed}, written as {}: this table's rules floor \
                                 totals at zero)",
                                totals[seat]
                            )
                        };
                        out.push(ToldLine {
                            version: *version,
                            event: String::new(),
                            text: format!(
                                "    seat {seat}'s match total: {} + hand score {} + in-play \
                                 penalties {} = {}{floored}",
                                totals_before[seat],
                                end.scores[seat],
                                penalties[seat],
                                totals[seat]
                            ),
                        });
                    }
                    // With partners a team's total decides the match (the page's `teams`).
                    if hand.as_ref().is_some_and(|h| h.rules.partners) {
                        for team in 0..2 {
                            out.push(ToldLine {
                                version: *version,
                                event: String::new(),
                                text: format!(
                                    "    team {team} (seats {team} and {}): match total {}",
                                    team + 2,
                                    totals[team] + totals[team + 2]
                                ),
                            });
                        }
                    }
                    totals_before = *totals;
                    open = false;
                }
            } else if open {
                let (_, text) = okey_table::steps::table_told(event);
                out.push(ToldLine {
                    version: *version,
                    event: event.name().to_owned(),
                    text,
                });
            }
        }
        out
    }

    /// `hand N is in play: told up to version V …`, for a hand read while it is played; `None`
    /// once it has ended.
    pub fn in_play_note(&self) -> Option<String> {
        (!self.ended).then(|| {
            format!(
                "hand {} is in play: told up to version {} of {} (the table's latest event at \
                 this read); no end yet, so no end-of-hand scores",
                self.hand_number,
                self.last_version(),
                self.table
            )
        })
    }

    /// Every finished deal of the hand rebuilt for the engine (`hand_started` re-dealt from the
    /// revealed seed, checked against the commitment, the played events, `hand_ended`), in the
    /// form `okeyctl replay` reads.
    pub fn finished_deals(&self) -> Result<Vec<HandEvents>> {
        okey_table::history::hand_deals(
            &self.rules,
            self.events.iter().map(|(v, e)| (*v, e)),
            self.hand_number,
        )
        .with_context(|| format!("{}, hand {}", self.table, self.hand_number))
    }

    /// Every deal of the hand as far as it was read: the finished ones as
    /// [`finished_deals`](Self::finished_deals) gives them and, for a hand read while it is
    /// played, the deal in play up to the latest event.
    pub fn deals(&self) -> Result<HandDeals> {
        if self.ended {
            return Ok(HandDeals {
                finished: self.finished_deals()?,
                in_play: None,
            });
        }
        // The deals before the one in play, if the hand was void and dealt again.
        let finished = match okey_table::history::hand_deals(
            &self.rules,
            self.events.iter().map(|(v, e)| (*v, e)),
            self.hand_number,
        ) {
            Ok(deals) => deals,
            Err(HistoryError::NotFinished(_)) => Vec::new(),
            Err(e) => {
                return Err(anyhow::Error::new(e))
                    .with_context(|| format!("{}, hand {}", self.table, self.hand_number));
            }
        };
        let in_play = self
            .deal_in_play()
            .with_context(|| format!("{}, hand {} (in play)", self.table, self.hand_number))?;
        Ok(HandDeals {
            finished,
            in_play: Some(in_play),
        })
    }

    /// The deal being played: `hand_started` from the deal the service shows (the seed that
    /// re-deals it is revealed at its end), then each event played since.
    fn deal_in_play(&self) -> Result<HandEvents> {
        let hand = self.hand_number;
        let Some(at) = self.events.iter().rposition(
            |(_, e)| matches!(e, TableEvent::HandDealt { hand_number, .. } if *hand_number == hand),
        ) else {
            bail!("the history holds no deal");
        };
        let (dealt_version, dealt) = &self.events[at];
        let TableEvent::HandDealt {
            first, indicator, ..
        } = dealt
        else {
            unreachable!("found as a deal");
        };
        let Some((_, shown)) = self.deals.iter().find(|(v, _)| v == dealt_version) else {
            bail!("the service did not show the deal at v{dealt_version}");
        };
        if shown.first != *first || shown.indicator != *indicator {
            bail!(
                "the deal shown at v{dealt_version} (seat {} first, indicator {}) is not the one \
                 stored (seat {first} first, indicator {indicator})",
                shown.first,
                shown.indicator
            );
        }
        let deal = Deal {
            indicator: shown.indicator,
            first: shown.first,
            racks: shown.racks.clone(),
            pile: shown.pile.clone(),
        };
        let start = Hand::start(self.rules.clone(), deal)
            .map_err(|e| anyhow::anyhow!("the deal shown at v{dealt_version}: {e}"))?;
        let mut events = vec![start];
        for (version, event) in &self.events[at + 1..] {
            match event {
                TableEvent::Played {
                    hand_number, event, ..
                } if *hand_number == hand => events.push(event.clone()),
                TableEvent::HandEnded { hand_number, .. } if *hand_number == hand => {
                    bail!("the hand is said to be in play, but its deal ended at v{version}")
                }
                _ => {}
            }
        }
        Ok(events)
    }
}

/// The table a command-line argument names, if it names one: `tables/{id}`, or a bare table id
/// that is no file here (as the replay page takes it); anything else is a file.
pub fn named_table(argument: &str) -> Option<String> {
    if argument.starts_with("tables/") {
        return Some(argument.to_owned());
    }
    (!std::path::Path::new(argument).exists() && okey_platform::fields::name_id(argument).is_some())
        .then(|| format!("tables/{argument}"))
}

/// `tables/{id}` from `tables/{id}` or a bare id.
pub fn table_name(table: &str) -> String {
    match table.strip_prefix("tables/") {
        Some(_) => table.to_owned(),
        None => format!("tables/{table}"),
    }
}

fn tiles(texts: &[String], what: &str) -> Result<Vec<Tile>> {
    texts
        .iter()
        .map(|t| {
            t.parse()
                .map_err(|_| anyhow::anyhow!("{what}: `{t}` is not a tile"))
        })
        .collect()
}

fn shown_deal(deal: &pb::HandDeal, version: u64) -> Result<ShownDeal> {
    let what = format!("the deal at v{version}");
    let racks: Vec<Vec<Tile>> = deal
        .racks
        .iter()
        .map(|r| tiles(&r.tiles, &what))
        .collect::<Result<_>>()?;
    let racks: [Vec<Tile>; 4] = racks
        .try_into()
        .map_err(|_| anyhow::anyhow!("{what} does not show four racks"))?;
    Ok(ShownDeal {
        first: u8::try_from(deal.first_seat).context("a seat is 0-3")?,
        indicator: deal
            .indicator
            .parse()
            .map_err(|_| anyhow::anyhow!("{what}: the indicator is not a tile"))?,
        seed_sha256: deal.seed_sha256.clone(),
        racks,
        pile: tiles(&deal.pile, &what)?,
    })
}

/// A refused `GetHandHistory`, said so a person knows what to do; a hand never dealt (NOT_FOUND
/// `hand_not_found`) is named as such.
fn history_refused(
    table_url: &str,
    table: &str,
    hand_number: u32,
    status: &tonic::Status,
) -> anyhow::Error {
    if okey_platform::status::is(status, Reason::HandNotFound) {
        return anyhow::anyhow!(
            "{table} hand {hand_number} was never dealt: the table has not reached it"
        );
    }
    refused("GetHandHistory", table_url, status)
}

/// Fetches hand `hand_number` of `table` from the table service at `table_url` with `token`.
pub async fn fetch(table_url: &str, token: &str, table: &str, hand_number: u32) -> Result<Fetched> {
    let table = table_name(table);
    let mut api = TableServiceClient::new(connect("table", table_url).await?);
    let mut fetched: Option<Fetched> = None;
    let mut page_token = String::new();
    loop {
        let page = api
            .get_hand_history(authorized(
                pb::GetHandHistoryRequest {
                    table: table.clone(),
                    hand_number: i32::try_from(hand_number).context("hand number too large")?,
                    page_size: PAGE,
                    page_token: page_token.clone(),
                },
                token,
            ))
            .await
            .map_err(|s| history_refused(table_url, &table, hand_number, &s))?
            .into_inner();
        if fetched.is_none() {
            let rules: RuleSet = serde_json::from_str(&page.engine_rules)
                .context("the history's engine_rules are not a rule set this tool knows")?;
            let totals: Vec<i64> = page.totals_before.iter().map(|t| i64::from(*t)).collect();
            fetched = Some(Fetched {
                table: table.clone(),
                hand_number,
                rules,
                totals_before: totals
                    .try_into()
                    .map_err(|_| anyhow::anyhow!("totals_before is not four totals"))?,
                ended: page.ended,
                events: Vec::new(),
                deals: Vec::new(),
                inputs: Vec::new(),
            });
        }
        let into = fetched.as_mut().expect("set from the first page");
        if into.inputs.is_empty() {
            for entry in &page.inputs {
                let version = u64::try_from(entry.version).context("versions are positive")?;
                let event: TableEvent =
                    serde_json::from_str(&entry.stored_event).with_context(|| {
                        format!("input v{version} is not a table event this tool knows")
                    })?;
                into.inputs.push((version, event));
            }
        }
        into.ended = page.ended;
        for entry in &page.entries {
            let version = u64::try_from(entry.version).context("versions are positive")?;
            if let Some((last, _)) = into.events.last()
                && *last + 1 != version
            {
                bail!("the history skips from v{last} to v{version}");
            }
            let event: TableEvent =
                serde_json::from_str(&entry.stored_event).with_context(|| {
                    format!("event v{version} is not a table event this tool knows")
                })?;
            if let Some(pb::hand_history_entry::Entry::Deal(deal)) = &entry.entry {
                into.deals.push((version, shown_deal(deal, version)?));
            }
            into.events.push((version, event));
        }
        if page.next_page_token.is_empty() {
            break;
        }
        page_token = page.next_page_token;
    }
    let fetched = fetched.expect("at least one page was read");
    if fetched.events.is_empty() {
        bail!("{table} hand {hand_number}: the history holds no event");
    }
    Ok(fetched)
}

/// The events as `okeyctl replay` reads them: one JSON event per line.
pub use okey_table::history::to_jsonl;
