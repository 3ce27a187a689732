//! Seeds the players help choose (`docs/fairness.md`, derivation version 1): before a hand's
//! client seeds are taken the table has committed to that hand's server seed (its sha256 is in
//! `TableCreated` for the first hand, in the previous hand's `HandDealt` for the others); each
//! seated player may send one client seed for it; the deal seed is HMAC-SHA256 keyed by the
//! server seed over a domain text and each seat's seed slot in seat order. The server cannot
//! choose the deal (its seed was fixed before the client seeds arrived) and no player can (the
//! server seed is secret until the hand ends, when `HandEnded` reveals it).
//!
//! HMAC is written out here (RFC 2104 over the workspace's SHA-256) because the `hmac` release
//! in the lockfile needs another major version of `sha2` than the workspace uses; a unit test
//! holds it to RFC 4231's test vectors.

use sha2::{Digest, Sha256};

use crate::event::{Seed, SeedError, Seeding, seed_of_hex};

/// The derivation this build makes.
pub const DERIVATION: u8 = 1;
/// The text the deal seed's message starts with (ASCII, no terminator).
pub const DOMAIN: &[u8] = b"okey deal seed v1";
/// The text a server seed's derivation starts with.
const SERVER_DOMAIN: &[u8] = b"okey server seed v1";

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    bytes(
        &Sha256::new()
            .chain_update(pad(0x5c))
            .chain_update(inner)
            .finalize(),
    )
}

fn bytes(digest: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(digest);
    out
}

/// The deal seed of derivation 1: HMAC-SHA256 with the server seed as key over [`DOMAIN`]
/// followed by each seat's slot in seat order (0, 1, 2, 3): the byte 0x00 for a seat that sent
/// no seed, or 0x01 and its 32 seed bytes.
pub fn deal_seed_v1(server_seed: &Seed, client_seeds: &[Option<Seed>; 4]) -> Seed {
    let mut message = DOMAIN.to_vec();
    for slot in client_seeds {
        match slot {
            None => message.push(0),
            Some(seed) => {
                message.push(1);
                message.extend_from_slice(seed);
            }
        }
    }
    hmac_sha256(server_seed, &message)
}

/// A hand's server seed from fresh randomness the shell drew (which is never stored or
/// shown): SHA-256 of a domain text, the hand number (4 bytes, big-endian) and the 32 random
/// bytes. Revealing one hand's server seed tells nothing of another's.
pub fn server_seed(fresh: &Seed, hand_number: u32) -> Seed {
    bytes(
        &Sha256::new()
            .chain_update(SERVER_DOMAIN)
            .chain_update(hand_number.to_be_bytes())
            .chain_update(fresh)
            .finalize(),
    )
}

/// The client seeds a `HandDealt` says were used, as bytes.
pub fn client_seeds(seeding: &Seeding) -> Result<[Option<Seed>; 4], SeedError> {
    let mut out = [None; 4];
    for (slot, hex) in out.iter_mut().zip(&seeding.client_seeds) {
        if let Some(hex) = hex {
            *slot = Some(seed_of_hex(hex)?);
        }
    }
    Ok(out)
}

/// The seed a hand is dealt from: the stored seed itself for a hand dealt before client seeds
/// (`seeding` `None`), else derived from the stored server seed and the recorded client seeds.
pub fn deal_seed(stored: &Seed, seeding: Option<&Seeding>) -> Result<Seed, SeedError> {
    match seeding {
        None => Ok(*stored),
        Some(seeding) => Ok(deal_seed_v1(stored, &client_seeds(seeding)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::hex;

    #[test]
    fn hmac_is_rfc_4231() {
        // Test case 1.
        assert_eq!(
            hex(&hmac_sha256(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        // Test case 2.
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn every_seed_and_its_seat_change_the_deal_seed() {
        let server = [7; 32];
        let none = [None; 4];
        let base = deal_seed_v1(&server, &none);
        assert_ne!(base, deal_seed_v1(&[8; 32], &none));
        let mut one = none;
        one[2] = Some([1; 32]);
        let mut moved = none;
        moved[3] = Some([1; 32]);
        assert_ne!(deal_seed_v1(&server, &one), base);
        assert_ne!(deal_seed_v1(&server, &one), deal_seed_v1(&server, &moved));
        assert_ne!(server_seed(&[1; 32], 1), server_seed(&[1; 32], 2));
    }

    /// `docs/fairness.md` gives app teams the derivation with a test vector: four client seeds,
    /// the deal seed, and the deal it gives (every rack and the pile).
    #[test]
    fn the_documented_test_vector() {
        use okey_rules::{Deal, Tile};

        use crate::event::seed_hash;

        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/fairness.md");
        let doc = std::fs::read_to_string(path).expect("docs/fairness.md");
        let block = doc
            .split("<!-- seeding test vector -->")
            .nth(1)
            .and_then(|rest| rest.split("```").nth(1))
            .expect("the seeding test vector block");
        let field = |name: &str| -> String {
            block
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name}:")))
                .unwrap_or_else(|| panic!("no `{name}:` line"))
                .trim()
                .to_owned()
        };
        let seed = |name: &str| seed_of_hex(&field(name)).expect("64 hex digits");
        let server = seed("server seed");
        assert_eq!(seed_hash(&server), field("server sha256"));
        let clients: [Option<Seed>; 4] =
            std::array::from_fn(|s| Some(seed(&format!("client seed {s}"))));
        let dealt = deal_seed_v1(&server, &clients);
        assert_eq!(hex(&dealt), field("deal seed"));
        assert_eq!(seed_hash(&dealt), field("deal sha256"));
        let mut without = clients;
        without[2] = None;
        assert_eq!(
            hex(&deal_seed_v1(&server, &without)),
            field("without seat 2's seed")
        );
        let first = field("first").parse().unwrap();
        let deal = Deal::from_seed(&dealt, first);
        let text = |v: &[Tile]| {
            v.iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(field("indicator"), deal.indicator.to_string());
        for seat in 0..4 {
            assert_eq!(field(&format!("seat {seat}")), text(&deal.racks[seat]));
        }
        assert_eq!(field("pile"), text(&deal.pile));
    }
}
