//! Rebuilds when a migration changes: `sqlx::migrate!` embeds `migrations/accounts` at compile time.

fn main() {
    println!("cargo:rerun-if-changed=../../migrations/accounts");
}
