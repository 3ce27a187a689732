//! What each viewer is shown of a table event, and the envelope the table service publishes on
//! NATS. Hidden information is decided by `okey_rules::view` (a seat's own draw) and here (a
//! seat's own dealt rack); everything else is public. Consumers parse [`Published`] and nothing
//! else.

use okey_rules::view::{event_for_others, event_for_seat};
use okey_rules::{Deal, Event, Seat, Tile};
use serde::{Deserialize, Serialize};

use crate::event::{Seed, Seeding, TableEvent};
use crate::seeding::deal_seed;

/// An event as one viewer may see it. `viewer == None` is the public at large (the public NATS
/// subject): it sees what every seat sees about others.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "shown")]
pub enum Shown {
    /// Public as stored.
    Public { event: TableEvent },
    /// A deal: the viewer's own rack, empty for anyone else.
    Dealt {
        hand_number: u32,
        first: Seat,
        indicator: Tile,
        seed_sha256: String,
        rack: Vec<Tile>,
        /// How the deal seed was derived, with every input (public).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seeding: Option<Seeding>,
    },
    /// A seat drew from the centre pile; the tile only for that seat.
    Drawn {
        hand_number: u32,
        seat: Seat,
        tile: Option<Tile>,
    },
}

/// What `event` shows `viewer`. `seed_of` gives a hand's stored seed (needed to show a seat its
/// dealt rack; the deal seed is derived from it as the deal's seeding says); it is never called
/// for the public.
pub fn show(
    event: &TableEvent,
    viewer: Option<Seat>,
    seed_of: impl Fn(u32) -> Option<Seed>,
) -> Shown {
    match event {
        TableEvent::HandDealt {
            hand_number,
            first,
            indicator,
            seed_sha256,
            seeding,
        } => Shown::Dealt {
            hand_number: *hand_number,
            first: *first,
            indicator: *indicator,
            seed_sha256: seed_sha256.clone(),
            rack: viewer
                .and_then(|seat| {
                    let seed = deal_seed(&seed_of(*hand_number)?, seeding.as_ref()).ok()?;
                    Some(Deal::from_seed(&seed, *first).racks[seat as usize].clone())
                })
                .unwrap_or_default(),
            seeding: seeding.clone(),
        },
        TableEvent::Played {
            hand_number,
            event: Event::TileDrawn { seat, tile },
            ..
        } => Shown::Drawn {
            hand_number: *hand_number,
            seat: *seat,
            tile: viewer
                .and_then(|v| {
                    event_for_seat(
                        &Event::TileDrawn {
                            seat: *seat,
                            tile: *tile,
                        },
                        v,
                    )
                })
                .map(|_| *tile),
        },
        // A wrong opening's melds go back to the rack: only its seat sees them again.
        TableEvent::Played {
            event: wrong @ Event::WrongOpening { seat, .. },
            ..
        } if viewer != Some(*seat) => {
            let mut hidden = event.clone();
            if let (TableEvent::Played { event, .. }, Some(others)) =
                (&mut hidden, event_for_others(wrong))
            {
                *event = others;
            }
            Shown::Public { event: hidden }
        }
        other => Shown::Public {
            event: other.clone(),
        },
    }
}

/// What the public at large (the public NATS subject, a spectator) is shown of `event`: a deal
/// without any rack, a draw without its tile, everything else as stored.
pub fn public(event: &TableEvent) -> Shown {
    show(event, None, |_| None)
}

/// One message on a table subject: the public copy of every stored event on
/// `<prefix>.table.<table>.events`, and a seat's own copy of a deal or a draw on its seat subject.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Published {
    /// `tables/{table}`.
    pub table: String,
    pub version: u64,
    /// The event's UUID (also the `Nats-Msg-Id` of the public copy).
    pub event_id: String,
    /// When it was stored, RFC 3339.
    pub time: String,
    pub event: Shown,
}

impl Published {
    /// The message's bytes (JSON), as published.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("strings, numbers and derived enums always serialize")
    }

    /// Reads a published message.
    pub fn decode(payload: &[u8]) -> Result<Published, serde_json::Error> {
        serde_json::from_slice(payload)
    }

    /// The public copy of a stored event ([`public`]), as the outbox publishes it.
    pub fn public(
        table: String,
        version: u64,
        event_id: String,
        time: String,
        event: &TableEvent,
    ) -> Published {
        Published {
            table,
            version,
            event_id,
            time,
            event: public(event),
        }
    }
}

#[cfg(test)]
mod tests {
    use okey_rules::hand::OpenKind;
    use okey_rules::meld::{Form, Placed};
    use okey_rules::{Color, Face, TableMeld, Tile};

    use super::*;

    #[test]
    fn a_wrong_openings_melds_are_shown_to_its_seat_only() {
        let tiles: Vec<Placed> = ["R7", "R8", "R9"]
            .iter()
            .enumerate()
            .map(|(i, t)| Placed {
                tile: t.parse::<Tile>().unwrap(),
                reads: Face::new(Color::Red, 7 + i as u8),
                by: 2,
            })
            .collect();
        let wrong = TableEvent::Played {
            hand_number: 1,
            event: Event::WrongOpening {
                seat: 2,
                kind: OpenKind::Melds,
                amount: 24,
                needed: 101,
                melds: vec![TableMeld {
                    form: Form::Run { color: Color::Red },
                    tiles,
                    owner: 2,
                }],
            },
            first_meld: None,
            noted: Default::default(),
        };
        let melds_of = |shown: Shown| match shown {
            Shown::Public {
                event:
                    TableEvent::Played {
                        event: Event::WrongOpening { melds, .. },
                        ..
                    },
            } => melds.len(),
            other => panic!("{other:?}"),
        };
        assert_eq!(melds_of(show(&wrong, Some(2), |_| None)), 1);
        assert_eq!(melds_of(show(&wrong, Some(0), |_| None)), 0);
        assert_eq!(melds_of(public(&wrong)), 0);
    }
}
