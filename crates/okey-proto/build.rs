//! Generates the okey.v1 gRPC code and a file descriptor set (for reflection) from `proto/`, with
//! the vendored protoc so no system compiler is needed.

use std::path::PathBuf;

const PROTOS: &[&str] = &[
    "okey/v1/common.proto",
    "okey/v1/accounts.proto",
    "okey/v1/matchmaking.proto",
    "okey/v1/table.proto",
    "okey/v1/scoring.proto",
];

/// googleapis' `google.rpc` error model, kept beside this crate (`proto/google/rpc`, unchanged
/// copies): only described to reflection, so clients that read the descriptor set (grpcurl) can
/// show the ErrorInfo, BadRequest, … every error carries. Their Rust types come from
/// `tonic-types`.
const ERROR_MODEL: &[&str] = &["google/rpc/status.proto", "google/rpc/error_details.proto"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read when the script runs, not baked in when it compiles: a compiled script reused from a
    // checkout elsewhere (same sources, shared target directory) must still read this one.
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let proto_root = manifest_dir.join("../../proto");
    let error_model_root = manifest_dir.join("proto");
    // The contracts live outside this package: without this, editing them rebuilds nothing.
    println!("cargo:rerun-if-changed=../../proto");
    println!("cargo:rerun-if-changed=proto");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let well_known = protoc_bin_vendored::include_path()?;

    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);

    let protos: Vec<PathBuf> = PROTOS
        .iter()
        .map(|p| proto_root.join(p))
        .chain(ERROR_MODEL.iter().map(|p| error_model_root.join(p)))
        .collect();
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .file_descriptor_set_path(out_dir.join("okey_v1_descriptor.bin"))
        .compile_with_config(config, &protos, &[proto_root, error_model_root, well_known])?;
    Ok(())
}
