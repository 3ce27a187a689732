//! The workspace's shape, checked by `cargo test`: pure crates depend on no I/O crate, layered
//! crates import downwards only, and every non-test source file opens with its `//!` line.

use std::path::{Path, PathBuf};
use std::process::Command;

use tidy::{
    Metadata, crate_imports, io_crates_in_tree, layer_violations, opens_with_module_doc,
    pure_crates,
};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("tests/tidy sits two levels below the workspace root")
        .to_path_buf()
}

fn cargo(args: &[&str]) -> Vec<u8> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(args)
        .current_dir(workspace_root())
        .output()
        .expect("run cargo");
    assert!(
        output.status.success(),
        "cargo {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

#[test]
fn pure_crates_depend_on_no_io_crate() {
    let metadata: Metadata = serde_json::from_slice(&cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--locked",
    ]))
    .expect("cargo metadata prints its documented JSON");
    let pure = pure_crates(&metadata);
    // The rules engine, the bots and the table are the pure core; losing the mark would silently skip them.
    for name in ["okey-rules", "okey-bots", "okey-table"] {
        assert!(
            pure.contains(&name),
            "{name} must carry `[package.metadata.okey] pure = true`"
        );
    }
    let mut violations = Vec::new();
    for name in pure {
        let tree = cargo(&[
            "tree", "-p", name, "-e", "normal", "--prefix", "none", "--format", "{p}", "--locked",
        ]);
        for io in io_crates_in_tree(&String::from_utf8_lossy(&tree)) {
            let why = cargo(&["tree", "-p", name, "-e", "normal", "-i", &io, "--locked"]);
            violations.push(format!(
                "pure crate `{name}` depends on `{io}`:\n{}",
                String::from_utf8_lossy(&why)
            ));
        }
    }
    assert!(
        violations.is_empty(),
        "pure crates must not do I/O (see tests/tidy/src/lib.rs):\n{}",
        violations.join("\n")
    );
}

#[derive(serde::Deserialize)]
struct Manifests {
    packages: Vec<Manifest>,
}

#[derive(serde::Deserialize)]
struct Manifest {
    name: String,
    manifest_path: PathBuf,
    #[serde(default)]
    metadata: Option<serde_json::Value>,
}

#[test]
fn layered_crates_import_downwards_only() {
    let manifests: Manifests = serde_json::from_slice(&cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--locked",
    ]))
    .expect("cargo metadata prints its documented JSON");
    let mut layered = Vec::new();
    let mut violations = Vec::new();
    for m in manifests.packages {
        let package = tidy::Package {
            name: m.name.clone(),
            metadata: m.metadata,
        };
        let Some(layers) = package.layers() else {
            continue;
        };
        layered.push(m.name.clone());
        let src = m
            .manifest_path
            .parent()
            .expect("a manifest has a folder")
            .join("src");
        let mut imports = std::collections::BTreeMap::new();
        let mut files = Vec::new();
        source_files(&src, &mut files);
        for file in files {
            // A module is the first path component under src/ (`grpc/mod.rs`, `grpc/chat.rs`: grpc).
            let rel = file.strip_prefix(&src).expect("under src");
            let first = rel.components().next().expect("a file").as_os_str();
            let module = Path::new(first)
                .file_stem()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&file).expect("a source file reads");
            imports
                .entry(module)
                .or_insert_with(std::collections::BTreeSet::new)
                .extend(crate_imports(&text));
        }
        for v in layer_violations(&layers, &imports) {
            violations.push(format!("{}: {v}", m.name));
        }
    }
    // The table service is layered; losing the declaration would silently skip it.
    assert!(
        layered.iter().any(|n| n == "table"),
        "services/table must declare `[package.metadata.okey] layers`"
    );
    assert!(
        violations.is_empty(),
        "modules must import only the layers below them (see tests/tidy/src/lib.rs):\n  {}",
        violations.join("\n  ")
    );
}

/// Source files of the workspace's packages: everything under a package's `src/` and its
/// `build.rs`. Tests, benches and examples are free-form.
fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_source_module_opens_with_its_doc_line() {
    let root = workspace_root();
    let mut files = Vec::new();
    for group in ["crates", "services", "tests"] {
        let Ok(packages) = std::fs::read_dir(root.join(group)) else {
            continue;
        };
        for package in packages.flatten() {
            let dir = package.path();
            if !dir.join("Cargo.toml").is_file() {
                continue;
            }
            source_files(&dir.join("src"), &mut files);
            if dir.join("build.rs").is_file() {
                files.push(dir.join("build.rs"));
            }
        }
    }
    assert!(
        files.len() > 20,
        "found only {} source files under {}",
        files.len(),
        root.display()
    );
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !opens_with_module_doc(&std::fs::read_to_string(f).unwrap_or_default()))
        .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "these files must open with a `//!` line saying what the module is for:\n  {}",
        missing.join("\n  ")
    );
}
