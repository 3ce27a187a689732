//! A hand's history read from the table service's API (`GetHandHistory`, every page) with an
//! access token: a player's for a hand they sat in once it has ended, or a support token for any
//! hand (each such read is in the service's audit log). `okeyctl replay`, `export-hand` and
//! `verify` read hands only this way; the tool never opens the table service's database.
//!
//! What a page carries: the match's rules (the engine's form), the totals before the hand, each
//! event as the table stored it (`okey_table::TableEvent` JSON: the seed commitment at the deal,
//! the revealed seed at the end) and each deal whole as the service shows it.

use anyhow::{Context, Result, bail};
use okey_proto::v1 as pb;
use okey_proto::v1::table_service_client::TableServiceClient;
use okey_rules::{RuleSet, Tile};
use okey_table::TableEvent;
use okey_table::history::HandEvents;

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

impl Fetched {
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
            .map_err(|s| refused("GetHandHistory", table_url, &s))?
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
