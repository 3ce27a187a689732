//! The checks behind `tests/tidy.rs`, as pure functions over `cargo metadata` and file text, so
//! each can be shown to fail on a made-up workspace.
//!
//! A crate is *pure* when its `Cargo.toml` says so:
//!
//! ```toml
//! [package.metadata.okey]
//! pure = true
//! ```
//!
//! A pure crate (the rules engine, the bots) does no I/O, so its normal dependencies, direct or
//! not, include none of [`IO_CRATES`], as `cargo tree -p CRATE -e normal` lists them.
//! Development and build dependencies (test tools, code generators) do not count.

use serde::Deserialize;

/// Crates that do I/O or reach the operating system (network, storage, async runtimes, generated
/// gRPC code, OS randomness, the wall clock). A pure crate may depend on none of them.
pub const IO_CRATES: &[&str] = &[
    "tokio",
    "mio",
    "sqlx",
    "sqlx-core",
    "tonic",
    "prost",
    "hyper",
    "redis",
    "async-nats",
    "getrandom",
    "chrono",
    "uuid",
];

/// The part of `cargo metadata --format-version 1 --no-deps` the checks read.
#[derive(Debug, Deserialize)]
pub struct Metadata {
    pub packages: Vec<Package>,
}

#[derive(Debug, Deserialize)]
pub struct Package {
    pub name: String,
    #[serde(default)]
    pub metadata: Option<serde_json::Value>,
}

impl Package {
    /// Whether `[package.metadata.okey] pure = true`.
    pub fn is_pure(&self) -> bool {
        self.metadata
            .as_ref()
            .and_then(|m| m.get("okey"))
            .and_then(|o| o.get("pure"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false)
    }
}

/// The workspace members marked pure.
pub fn pure_crates(metadata: &Metadata) -> Vec<&str> {
    metadata
        .packages
        .iter()
        .filter(|p| p.is_pure())
        .map(|p| p.name.as_str())
        .collect()
}

/// The I/O crates in the output of `cargo tree -p CRATE -e normal --prefix none --format {p}`
/// (one `name vVERSION [(source)]` per line). `cargo tree` resolves features for that crate
/// alone, as a build of it would, unlike `cargo metadata`'s workspace-wide resolution.
pub fn io_crates_in_tree(tree: &str) -> Vec<String> {
    let mut found: Vec<String> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| IO_CRATES.contains(name))
        .map(str::to_string)
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Whether a source file opens with a `//!` line saying what the module is for (blank lines
/// before it are not allowed either: the line is the file's first).
pub fn opens_with_module_doc(text: &str) -> bool {
    text.lines().next().is_some_and(|l| l.starts_with("//!"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crates_are_pure_only_when_marked() {
        let metadata: Metadata = serde_json::from_value(serde_json::json!({"packages": [
            {"name": "rules", "metadata": {"okey": {"pure": true}}},
            {"name": "table", "metadata": null},
            {"name": "bots", "metadata": {"okey": {"pure": false}}},
            {"name": "other", "metadata": {"docs": {}}}
        ]}))
        .unwrap();
        assert_eq!(pure_crates(&metadata), vec!["rules"]);
    }

    #[test]
    fn io_crates_are_found_in_a_dependency_tree() {
        let tree = "okey-rules v0.1.0 (/src/okey-rules)\nserde v1.0.229\ntokio v1.54.0\n\
                    tokio v1.54.0 (*)\nsqlx-core v0.9.0\nprost-derive v0.14.6\n";
        assert_eq!(io_crates_in_tree(tree), vec!["sqlx-core", "tokio"]);
        assert!(io_crates_in_tree("okey-rules v0.1.0\nserde v1.0.229\n").is_empty());
    }

    #[test]
    fn a_module_must_open_with_its_doc_line() {
        assert!(opens_with_module_doc("//! Tiles.\nuse x;\n"));
        assert!(!opens_with_module_doc("use x;\n//! Tiles.\n"));
        assert!(!opens_with_module_doc("\n//! Tiles.\n"));
        assert!(!opens_with_module_doc("// Tiles.\n"));
        assert!(!opens_with_module_doc(""));
    }
}
