//! `okeyctl verify`: a player checks a hand alone. It fetches the hand's history through the
//! table service's API (their own token: a hand they sat in, once it has ended), then, for each
//! deal of the hand: the revealed seed must hash to the commitment announced at the deal; the
//! deal is dealt again from the seed (`okey_rules::Deal::from_seed`, `docs/fairness.md`) and
//! must be the one the service shows, rack by rack and the pile; when the players helped choose
//! the seed, the whole chain (the server seed committed before their client seeds, the seeds
//! used as sent, the derivation, the server seed revealed); every event is re-folded
//! through the rules engine, every move re-decided and every draw checked against the pile;
//! every penalty and end-of-hand score, the standing penalties and the match totals are
//! re-derived. The check itself is `okey_table::verify`, the one scoring makes too; this module
//! only gathers its inputs and says what was checked.

use anyhow::{Result, bail};
use okey_rules::matches::HandResult;
use okey_rules::{Deal, Event, HandEnd, Seat, Tile};
use okey_table::verify::{Dealt, Ended, PublicPlay, revealed_seed, verify_hand, verify_seeding};
use okey_table::{Seeding, TableEvent};

use crate::history::{Fetched, ShownDeal};

/// The first difference found, at one event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The table version of the event.
    pub version: u64,
    /// The event's stable name (`TileDrawn`, `PenaltyCharged`, `HandEnded`, …).
    pub event: String,
    /// What differs.
    pub problem: String,
}

/// What was checked, line by line, and the first difference if any.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// One line per check passed, as printed.
    pub checked: Vec<String>,
    pub difference: Option<Difference>,
}

impl Report {
    pub fn verified(&self) -> bool {
        self.difference.is_none()
    }
}

/// One deal of the hand, as its events published it.
struct DealEvents<'a> {
    dealt_version: u64,
    first: Seat,
    indicator: Tile,
    seed_sha256: &'a str,
    seeding: Option<&'a Seeding>,
    plays: Vec<(u64, PublicPlay)>,
    ended: Option<(u64, &'a HandEnd, &'a HandResult, &'a [i64; 4], &'a str)>,
    /// The server seed the end revealed.
    server_seed: Option<&'a str>,
}

fn deals_of(fetched: &Fetched) -> Vec<DealEvents<'_>> {
    let hand = fetched.hand_number;
    let mut deals: Vec<DealEvents<'_>> = Vec::new();
    for (version, event) in &fetched.events {
        match event {
            TableEvent::HandDealt {
                hand_number,
                first,
                indicator,
                seed_sha256,
                seeding,
            } if *hand_number == hand => deals.push(DealEvents {
                dealt_version: *version,
                first: *first,
                indicator: *indicator,
                seed_sha256,
                seeding: seeding.as_ref(),
                plays: Vec::new(),
                ended: None,
                server_seed: None,
            }),
            TableEvent::Played {
                hand_number, event, ..
            } if *hand_number == hand => {
                if let Some(deal) = deals.last_mut() {
                    deal.plays
                        .push((*version, PublicPlay::Event(event.clone())));
                }
            }
            TableEvent::HandEnded {
                hand_number,
                end,
                result,
                totals,
                seed,
                server_seed,
                ..
            } if *hand_number == hand => {
                if let Some(deal) = deals.last_mut() {
                    deal.ended = Some((*version, end, result, totals, seed.as_str()));
                    deal.server_seed = server_seed.as_deref();
                }
            }
            _ => {}
        }
    }
    deals
}

fn text(tiles: &[Tile]) -> String {
    tiles
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// How the deal the service showed differs from the seed's, if it does.
fn deal_differs(seeded: &Deal, shown: &ShownDeal) -> Option<String> {
    if seeded.indicator != shown.indicator {
        return Some(format!(
            "the service shows indicator {}, the seed deals {}",
            shown.indicator, seeded.indicator
        ));
    }
    for seat in 0..4 {
        if seeded.racks[seat] != shown.racks[seat] {
            return Some(format!(
                "the service shows seat {seat} dealt [{}], the seed deals [{}]",
                text(&shown.racks[seat]),
                text(&seeded.racks[seat])
            ));
        }
    }
    if seeded.pile != shown.pile {
        return Some(format!(
            "the service shows the pile [{}], the seed deals [{}]",
            text(&shown.pile),
            text(&seeded.pile)
        ));
    }
    None
}

/// Re-derives every deal of a fetched hand and says what was checked.
pub fn verify(fetched: &Fetched) -> Report {
    let mut report = Report::default();
    let name_at = |version: u64| {
        fetched
            .events
            .iter()
            .find(|(v, _)| *v == version)
            .map_or("?", |(_, e)| e.name())
            .to_owned()
    };
    let fail = |report: &mut Report, version: u64, problem: String| {
        report.difference = Some(Difference {
            version,
            event: name_at(version),
            problem,
        });
    };
    if !fetched.ended {
        // [`run`] refuses a hand in play before this; a caller with one gets no "verified".
        fail(
            &mut report,
            fetched.last_version(),
            "the hand is in play: it can be verified once it has ended, when its seed is revealed"
                .to_owned(),
        );
        return report;
    }
    let deals = deals_of(fetched);
    if deals.is_empty() {
        let first = fetched.events.first().map_or(0, |(v, _)| *v);
        fail(&mut report, first, "the history holds no deal".to_owned());
        return report;
    }
    let mut totals_before = fetched.totals_before;
    for deal in &deals {
        let Some((ended_version, end, result, totals, seed)) = deal.ended else {
            fail(
                &mut report,
                deal.dealt_version,
                "this deal has no end in the history".to_owned(),
            );
            return report;
        };
        let dealt = Dealt {
            version: deal.dealt_version,
            rules: &fetched.rules,
            first: deal.first,
            indicator: deal.indicator,
            seed_sha256: deal.seed_sha256,
        };
        let ended = Ended {
            version: ended_version,
            end,
            result,
            totals,
            seed,
        };
        let at = format!("v{}", deal.dealt_version);
        // 1. The commitment.
        let seed_bytes = match revealed_seed(&dealt, &ended) {
            Ok(seed) => seed,
            Err(failed) => {
                let problem = failed.problem.unwrap_or_default();
                fail(&mut report, ended_version, problem);
                return report;
            }
        };
        report.checked.push(format!(
            "ok  commitment  {at}: sha256 of the seed revealed at v{ended_version} ({}…) is the \
             {}… announced at the deal",
            &seed[..16.min(seed.len())],
            &deal.seed_sha256[..16.min(deal.seed_sha256.len())]
        ));
        // The chain the deal seed comes from, when the players helped choose it.
        match deal.seeding {
            Some(seeding) => match verify_seeding(
                &dealt,
                fetched.hand_number,
                seeding,
                &fetched.inputs,
                &ended,
                deal.server_seed,
            ) {
                Ok(lines) => report
                    .checked
                    .extend(lines.into_iter().map(|l| format!("ok  seeds       {l}"))),
                Err(failed) => {
                    let version = failed.at.unwrap_or(deal.dealt_version);
                    fail(&mut report, version, failed.problem.unwrap_or_default());
                    return report;
                }
            },
            None => report.checked.push(
                "ok  seeds       dealt before client seeds: the deal seed itself was committed"
                    .to_owned(),
            ),
        }
        // 2. The deal.
        let seeded = Deal::from_seed(&seed_bytes, deal.first);
        let shown = fetched
            .deals
            .iter()
            .find(|(v, _)| *v == deal.dealt_version)
            .map(|(_, d)| d);
        match shown {
            None => {
                fail(
                    &mut report,
                    deal.dealt_version,
                    "the service did not show this deal".to_owned(),
                );
                return report;
            }
            Some(shown) => {
                if let Some(problem) = deal_differs(&seeded, shown) {
                    fail(&mut report, deal.dealt_version, problem);
                    return report;
                }
            }
        }
        report.checked.push(format!(
            "ok  deal        {at}: dealt again from the seed (seat {} first, indicator {}): every \
             rack and the {}-tile pile are the ones the service shows",
            deal.first,
            seeded.indicator,
            seeded.pile.len()
        ));
        // 3. Every event, every penalty and score: the shared check.
        let verification = verify_hand(&dealt, &deal.plays, &ended, totals_before);
        if let Some(problem) = verification.problem {
            let version = verification.at.unwrap_or(ended_version);
            fail(&mut report, version, problem);
            return report;
        }
        let draws = deal
            .plays
            .iter()
            .filter(|(_, p)| matches!(p, PublicPlay::Event(Event::TileDrawn { .. })))
            .count();
        let (from, to) = (
            deal.plays.first().map_or(ended_version, |(v, _)| *v),
            ended_version,
        );
        report.checked.push(format!(
            "ok  events      v{from}-v{to}: {} events re-folded through the rules engine, every \
             move re-decided, {draws} draws each the pile's next tile",
            deal.plays.len() + 1
        ));
        let penalties: Vec<String> = deal
            .plays
            .iter()
            .filter_map(|(v, p)| match p {
                PublicPlay::Event(Event::PenaltyCharged {
                    seat,
                    points,
                    reason,
                    ..
                }) => Some(format!("v{v} seat {seat} +{points} {}", reason.code())),
                _ => None,
            })
            .collect();
        report.checked.push(if penalties.is_empty() {
            "ok  penalties   none charged, and the engine charges none".to_owned()
        } else {
            format!(
                "ok  penalties   each the one the engine charges: {}",
                penalties.join("; ")
            )
        });
        if let Some(bases) = verification.bases {
            for (seat, basis) in bases.iter().enumerate() {
                report.checked.push(format!(
                    "ok  score       seat {seat}: {} ({basis})",
                    end.scores[seat]
                ));
            }
        }
        // A total the rules floor at zero (`floor_totals_at_zero`, yudum) is not the plain sum:
        // say so, with the sum, rather than print an equation that does not add up.
        let summed: Vec<i64> = (0..4)
            .map(|s| totals_before[s] + i64::from(end.scores[s]) + i64::from(result.penalties[s]))
            .collect();
        let floored = if summed.as_slice() == totals.as_slice() {
            String::new()
        } else {
            format!(", floored at zero by this table's rules (the plain sum is {summed:?})")
        };
        report.checked.push(format!(
            "ok  totals      v{ended_version}: standing penalties {:?}, totals {:?} = {:?} before \
             this deal + its scores and penalties{floored}",
            result.penalties, totals, totals_before
        ));
        totals_before = *totals;
    }
    report
}

/// Fetches hand `hand_number` of `table` with `token` and verifies it. A hand still in play (a
/// support token reads one) cannot be verified: its seed is revealed at its end, so it is an
/// error, not a difference.
pub async fn run(table_url: &str, token: &str, table: &str, hand_number: u32) -> Result<Report> {
    let fetched = crate::history::fetch(table_url, token, table, hand_number).await?;
    if fetched.events.is_empty() {
        bail!("the history of hand {hand_number} is empty");
    }
    if !fetched.ended {
        bail!(
            "cannot verify {} hand {hand_number}: it is in play (read up to version {}), and a \
             hand is verified once it has ended, when its seed is revealed; `okeyctl replay` \
             tells it as far as it has been played",
            fetched.table,
            fetched.last_version()
        );
    }
    Ok(verify(&fetched))
}
