//! Where the service's random ids and seeds come from: the operating system's generator (the pure
//! `okey-table` never draws one; it is handed the seed).

use sqlx::types::Uuid;

use crate::domain::Seed;

/// A random (version 4) UUID from the OS generator.
pub fn random_uuid() -> Uuid {
    let mut bytes = [0u8; 16];
    fill_random(&mut bytes);
    sqlx::types::uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// An event id: a version 7 UUID (the Unix time in milliseconds, then random bits). Events are
/// only ever appended, so time-ordered ids reach the unique index on `event_id` at its right
/// edge, where random ones would each land on a random page of an index that never stops
/// growing.
pub fn event_uuid() -> Uuid {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut bytes = [0u8; 10];
    fill_random(&mut bytes);
    sqlx::types::uuid::Builder::from_unix_timestamp_millis(millis, &bytes).into_uuid()
}

/// Fills `buf` from the operating system's CSPRNG.
///
/// # Panics
/// If the OS has no randomness to give: nothing may be dealt then.
pub fn fill_random(buf: &mut [u8]) {
    use rand_core::TryRngCore;
    rand_core::OsRng
        .try_fill_bytes(buf)
        .expect("the OS random number generator works");
}

/// A fresh deal seed from the OS CSPRNG.
pub fn new_seed() -> Seed {
    let mut seed = [0u8; 32];
    fill_random(&mut seed);
    seed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_are_version_7_and_ordered_by_time() {
        let first = event_uuid();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let later = event_uuid();
        assert_eq!(first.get_version_num(), 7);
        assert!(first < later, "{first} then {later}");
        assert_ne!(event_uuid(), event_uuid());
    }
}
