//! Rebuilds when a migration changes: `sqlx::migrate!` embeds `migrations/table` at compile time.

fn main() {
    println!("cargo:rerun-if-changed=../../migrations/table");
}
