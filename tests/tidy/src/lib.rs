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
//!
//! A crate whose modules are layered says so, top layer first:
//!
//! ```toml
//! [package.metadata.okey]
//! layers = [["startup"], ["grpc"], ["live", "service"], ["store"], ["ids"]]
//! ```
//!
//! Read in that order, each module of its `src/` may import (`crate::x`) only modules listed
//! after it, and every module must be listed ([`layer_violations`]).

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

impl Package {
    /// The module layers `[package.metadata.okey] layers` declares, top first (none: not
    /// layered).
    pub fn layers(&self) -> Option<Vec<Vec<String>>> {
        let layers = self.metadata.as_ref()?.get("okey")?.get("layers")?;
        serde_json::from_value(layers.clone()).ok()
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

/// The modules of the same crate a source file imports: every `crate::name` before the file's
/// first `#[cfg(test)]` (a test module may reach anywhere).
pub fn crate_imports(text: &str) -> std::collections::BTreeSet<String> {
    let text = text.find("#[cfg(test)]").map_or(text, |cut| &text[..cut]);
    let mut found = std::collections::BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        if text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue; // `okey_crate::`, not `crate::`
        }
        let name: String = text[i + "crate::".len()..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.insert(name);
        }
    }
    found
}

/// What breaks the declared `layers` (top first): a module that imports one listed before it
/// (above it, or earlier in its own layer), and a module of `imports` (module → the modules it
/// imports; `lib` and `main` are the crate's root and may import anything) that no layer lists.
/// Imports of names that are not modules (re-exports such as `crate::domain`) are not checked.
pub fn layer_violations(
    layers: &[Vec<String>],
    imports: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Vec<String> {
    let order: Vec<&str> = layers.iter().flatten().map(String::as_str).collect();
    let rank = |m: &str| order.iter().position(|o| *o == m);
    let mut out = Vec::new();
    for (module, used) in imports {
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(at) = rank(module) else {
            out.push(format!("module `{module}` is in no layer"));
            continue;
        };
        for target in used {
            if target == module || !imports.contains_key(target) {
                continue;
            }
            match rank(target) {
                Some(to) if to > at => {}
                _ => out.push(format!(
                    "`{module}` imports `{target}`, which is not below it"
                )),
            }
        }
    }
    out
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

    fn imports(
        edges: &[(&str, &[&str])],
    ) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
        edges
            .iter()
            .map(|(m, to)| (m.to_string(), to.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn imports_are_read_outside_tests_only() {
        let text = "//! x\nuse crate::store::Store;\nfn f() { crate::ids::new(); okey_crate::no(); }\n\
                    #[cfg(test)]\nmod tests { use crate::grpc; }";
        let found: Vec<String> = crate_imports(text).into_iter().collect();
        assert_eq!(found, vec!["ids", "store"]);
    }

    #[test]
    fn a_module_may_import_only_what_is_below_it() {
        let layers = vec![
            vec!["grpc".to_string()],
            vec!["service".to_string()],
            vec!["store".to_string(), "ids".to_string()],
        ];
        let fine = imports(&[
            ("lib", &["grpc", "store"]),
            ("grpc", &["service", "ids", "domain"]),
            ("service", &["store"]),
            ("store", &["ids"]),
            ("ids", &[]),
        ]);
        assert!(layer_violations(&layers, &fine).is_empty());
        let upward = imports(&[
            ("grpc", &["service"]),
            ("service", &["grpc"]),
            ("store", &[]),
            ("ids", &["store"]),
            ("extra", &[]),
        ]);
        assert_eq!(
            layer_violations(&layers, &upward),
            vec![
                "module `extra` is in no layer",
                "`ids` imports `store`, which is not below it",
                "`service` imports `grpc`, which is not below it",
            ]
        );
    }
}
