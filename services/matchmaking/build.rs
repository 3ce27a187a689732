//! Rebuilds when a migration changes: `sqlx::migrate!` embeds `migrations/matchmaking` at compile time.

fn main() {
    println!("cargo:rerun-if-changed=../../migrations/matchmaking");
}
