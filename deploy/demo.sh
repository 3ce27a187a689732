#!/usr/bin/env bash
# The demo match of `make run`: four bots play a match on the running services (deploy/services.sh
# up first) and `okeyctl demo` tells it hand by hand, writing each hand for `okeyctl replay` into
# .run/demo/. Extra arguments go to `okeyctl demo` (see `okeyctl demo --help`).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$ROOT"
log "cargo build (okeyctl)"
cargo build --quiet -p okeyctl
bin="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug/okeyctl"
# Paths relative to the repository when the run directory is the default, so the printed
# commands can be pasted as they are.
run_dir="${RUN_DIR#"$ROOT"/}"
echo
echo "Demo match: four bots on the local platform"
exec "$bin" demo \
  --accounts "http://127.0.0.1:${SERVICE_PORT[accounts]}" \
  --table "http://127.0.0.1:${SERVICE_PORT[table]}" \
  --signing-key "$run_dir/dev-signing-key.pem" \
  --table-database-url "postgres://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/okey_table" \
  --hands-dir "$run_dir/demo" \
  --grpcurl "${VENV#"$ROOT"/}/bin/grpcurl" \
  "$@"
