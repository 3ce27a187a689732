#!/usr/bin/env bash
# The demo match of `make run`: a guest finds a table through matchmaking (quick play, bots
# allowed), is seated with three bots and plays its seat, on the running services
# (deploy/services.sh up first); `okeyctl demo` tells it hand by hand, writing each hand for
# `okeyctl replay` into .run/demo/. No operator token on that path. Extra arguments go to
# `okeyctl demo` (see `okeyctl demo --help`). OKEY_SERVICES_BIN=DIR runs DIR/okeyctl instead of
# building it, as deploy/services.sh starts DIR's services.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$ROOT"
# How the commands the demo prints at the end call okeyctl.
hint=(--okeyctl "cargo run -q -p okeyctl --")
if [ -n "${OKEY_SERVICES_BIN:-}" ]; then
  bin="$OKEY_SERVICES_BIN/okeyctl"
  [ -x "$bin" ] || die "OKEY_SERVICES_BIN: no okeyctl binary in $OKEY_SERVICES_BIN (cargo build --bins first)"
  hint=(--okeyctl "$bin")
else
  log "cargo build (okeyctl)"
  cargo build --quiet -p okeyctl
  bin="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug/okeyctl"
fi
# An --okeyctl of the caller's own wins (clap takes each option once).
for arg in "$@"; do
  case "$arg" in --okeyctl | --okeyctl=*) hint=() ;; esac
done
# Paths relative to the repository when the run directory is the default, so the printed
# commands can be pasted as they are. The commands the demo prints at the end (the support token's
# among them) name this run's ports and run directory where they are not the defaults.
run_dir="${RUN_DIR#"$ROOT"/}"
echo
echo "Demo match: a guest finds a table with bots on the local platform"
exec "$bin" demo \
  --accounts "http://127.0.0.1:${SERVICE_PORT[accounts]}" \
  --matchmaking "http://127.0.0.1:${SERVICE_PORT[matchmaking]}" \
  --table "http://127.0.0.1:${SERVICE_PORT[table]}" \
  --signing-key "$run_dir/dev-signing-key.pem" \
  --hands-dir "$run_dir/demo" \
  --grpcurl "${VENV#"$ROOT"/}/bin/grpcurl" \
  "${hint[@]}" \
  "$@"
