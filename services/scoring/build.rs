//! Rebuilds when a migration changes: `sqlx::migrate!` embeds `migrations/scoring` at compile time.

fn main() {
    println!("cargo:rerun-if-changed=../../migrations/scoring");
}
