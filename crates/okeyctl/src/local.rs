//! Where `make run` put the local platform: the ports the scripts move with `OKEY_*_PORT` and the
//! run directory `OKEY_RUN_DIR` (as deploy/lib.sh reads them). The tool's defaults; a flag wins.

use std::path::PathBuf;

/// The variable `make run` (deploy/lib.sh) moves a local service's port with, and its default
/// port; `None` for a service it does not start.
pub fn local_port_var(service: &str) -> Option<(&'static str, u16)> {
    match service {
        "accounts" => Some(("OKEY_ACCOUNTS_PORT", 50051)),
        "matchmaking" => Some(("OKEY_MATCHMAKING_PORT", 50052)),
        "table" => Some(("OKEY_TABLE_PORT", 50053)),
        "scoring" => Some(("OKEY_SCORING_PORT", 50054)),
        _ => None,
    }
}

/// A local service where `make run` starts it: `http://127.0.0.1:<port>`, the port from the
/// same variable as the scripts (`OKEY_ACCOUNTS_PORT`, `OKEY_MATCHMAKING_PORT`, `OKEY_TABLE_PORT`,
/// `OKEY_SCORING_PORT`), else the default port. The tool's URL defaults; a flag wins.
pub fn local_url(service: &str) -> String {
    let (var, default) = local_port_var(service).unwrap_or(("", 0));
    let port = std::env::var(var)
        .ok()
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| default.to_string());
    format!("http://127.0.0.1:{port}")
}

/// The run directory of `make run`: `OKEY_RUN_DIR` when set (as deploy/lib.sh reads it), else
/// `.run` (relative to the repository, where the tool is run from).
pub fn local_run_dir() -> PathBuf {
    std::env::var_os("OKEY_RUN_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from(".run"), PathBuf::from)
}

/// The local signing key `make run` generates, in its run directory ([`local_run_dir`]): the
/// default of `--signing-key`.
pub fn local_signing_key() -> PathBuf {
    local_run_dir().join("dev-signing-key.pem")
}
