#!/usr/bin/env bash
# The four services, built and started in the background against the local infrastructure
# (deploy/infra.sh up first). Logs and pid files go to .run/services/.
#
#   deploy/services.sh up       build, start what is not running, wait until all are SERVING
#                               (refuses a port another process holds; a service this run
#                               directory started already keeps running with the settings it was
#                               started with: `down` first to apply changed OKEY_… variables)
#   deploy/services.sh down     SIGTERM each, wait for it to exit
#   deploy/services.sh status   health of each
#
# OKEY_SERVICES_BIN=DIR starts the binaries in DIR (e.g. target/release, or a copy of a build)
# instead of building the debug ones.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SVC_DIR="$RUN_DIR/services"
# The local token signing key (see ensure_dev_key).
DEV_KEY="$RUN_DIR/dev-signing-key.pem"
# How long a bot waits before each command at a local run, and how often deadlines are swept (a
# bot's move waits for the next sweep): fast, but a person can follow it. The service's own
# defaults are 1500 ms and 200 ms.
DEV_BOT_PACE_MS="${OKEY_DEV_BOT_PACE_MS:-40}"
DEV_SWEEP_MS=50
# The matchmaking service's local identity at accounts (client credentials): a random secret
# generated once into the run directory; accounts is given only its SHA-256.
DEV_SERVICE_SECRET="$RUN_DIR/dev-service-secret"
DEV_SERVICE_ID=matchmaking
# A quick-play ticket that allows bots gets them after this long at a local run (default 15 s).
DEV_BOT_FILL_SECS="${OKEY_DEV_BOT_FILL_SECS:-3}"

target_dir() {
  cargo metadata --format-version 1 --no-deps --manifest-path "$ROOT/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}

health() {
  grpcurl -plaintext -max-time 2 -d '{"service":""}' "127.0.0.1:${SERVICE_PORT[$1]}" \
    grpc.health.v1.Health/Check 2>/dev/null | grep -o '"[A-Z_]*SERVING"' | tr -d '"' || true
}
serving() { [ "$(health "$1")" = SERVING ]; }

# A development Ed25519 key for the accounts service, generated once into the run directory (never
# committed; .run/ is ignored) so tokens survive restarts and local tools (`okeyctl demo`) can
# mint an operator token accounts' published key verifies. PKCS#8 v1 DER of an Ed25519 key is a
# fixed 16-byte prefix and the 32-byte seed; python3 is here already, openssl need not be.
ensure_dev_key() {
  [ -s "$DEV_KEY" ] && return
  log "generating the local token signing key ${DEV_KEY#"$ROOT"/}"
  mkdir -p "$RUN_DIR"
  (umask 077 && python3 - "$DEV_KEY" <<'PY'
import base64, os, sys
der = bytes.fromhex("302e020100300506032b657004220420") + os.urandom(32)
with open(sys.argv[1], "w") as f:
    f.write("-----BEGIN PRIVATE KEY-----\n" + base64.b64encode(der).decode() + "\n-----END PRIVATE KEY-----\n")
PY
  )
}

ensure_dev_service_secret() {
  [ -s "$DEV_SERVICE_SECRET" ] && return
  log "generating the local service client secret ${DEV_SERVICE_SECRET#"$ROOT"/}"
  mkdir -p "$RUN_DIR"
  (umask 077 && python3 -c 'import secrets; print(secrets.token_hex(32), end="")' >"$DEV_SERVICE_SECRET")
}

# Per-service variables of a local run: accounts signs with the development key (unless keys are
# configured already), issues service tokens to the local matchmaking identity and puts no limit
# on new guests per address (every local client is 127.0.0.1), the other
# services find accounts (and matchmaking the table service) on the local ports, the table's bots
# play at the local pace and quick play fills with bots after a short wait (unless set already).
service_env() {
  local accounts_url="http://127.0.0.1:${SERVICE_PORT[accounts]}"
  [ "$1" = accounts ] || [ -n "${OKEY_TOKENS__KEYS_URL:-}" ] || printf '%s\0' "OKEY_TOKENS__KEYS_URL=$accounts_url"
  case "$1" in
    accounts)
      [ -n "${OKEY_TOKENS__SIGNING_KEYS_PEM:-}" ] || printf '%s\0' "OKEY_TOKENS__SIGNING_KEYS_PEM=$(cat "$DEV_KEY")"
      [ -n "${OKEY_TOKENS__SERVICE_CLIENTS:-}" ] ||
        printf '%s\0' "OKEY_TOKENS__SERVICE_CLIENTS=$DEV_SERVICE_ID:$(sha256sum <"$DEV_SERVICE_SECRET" | cut -d' ' -f1)"
      # Every local client calls from 127.0.0.1: no new-guest limit per address (unless set).
      [ -n "${OKEY_SIGN_IN__GUESTS_PER_ADDRESS:-}" ] || printf '%s\0' "OKEY_SIGN_IN__GUESTS_PER_ADDRESS=0"
      ;;
    matchmaking)
      printf '%s\0' "OKEY_SERVICE_CLIENT__ACCOUNTS_URL=$accounts_url" \
        "OKEY_MATCHMAKING__TABLE_URL=http://127.0.0.1:${SERVICE_PORT[table]}" \
        "OKEY_MATCHMAKING__SCORING_URL=http://127.0.0.1:${SERVICE_PORT[scoring]}"
      [ -n "${OKEY_SERVICE_CLIENT__ID:-}" ] ||
        printf '%s\0' "OKEY_SERVICE_CLIENT__ID=$DEV_SERVICE_ID" "OKEY_SERVICE_CLIENT__SECRET=$(cat "$DEV_SERVICE_SECRET")"
      [ -n "${OKEY_MATCHMAKING__BOT_FILL_AFTER_SECS:-}" ] ||
        printf '%s\0' "OKEY_MATCHMAKING__BOT_FILL_AFTER_SECS=$DEV_BOT_FILL_SECS"
      ;;
    table)
      [ -n "${OKEY_LIVE__BOT_PACE_MS:-}" ] || printf '%s\0' "OKEY_LIVE__BOT_PACE_MS=$DEV_BOT_PACE_MS"
      [ -n "${OKEY_LIVE__SWEEP_INTERVAL_MS:-}" ] || printf '%s\0' "OKEY_LIVE__SWEEP_INTERVAL_MS=$DEV_SWEEP_MS"
      ;;
  esac
}

# The service settings of this shell (OKEY_<SECTION>__<KEY>), one `NAME sha256-of-value` a line:
# recorded when a service starts, compared when `up` finds it running (values are not kept).
settings_fingerprint() {
  local name
  while IFS= read -r name; do
    printf '%s %s\n' "$name" "$(printf '%s' "${!name}" | sha256sum | cut -d' ' -f1)"
  done < <(compgen -e | grep -E '^OKEY_[A-Z0-9_]+__[A-Z0-9_]+$' | sort || true)
}

# The OKEY_<SECTION>__<KEY> variables set, unset or changed since $1 was started, space-separated.
settings_changed() {
  local recorded="$SVC_DIR/$1.settings"
  [ -f "$recorded" ] || return 0
  diff "$recorded" <(settings_fingerprint) | sed -n 's/^[<>] \([^ ]*\) .*/\1/p' | sort -u | paste -sd' ' || true
}

# Refuses to go on when a service that is not running from this run directory would start on a
# port another process already listens on (its own start would fail with "Address already in
# use" while the health check answered from the other process).
check_ports_free() {
  local svc port problems=()
  for svc in "${SERVICES[@]}"; do
    pid_alive "$SVC_DIR/$svc.pid" && continue
    port="${SERVICE_PORT[$svc]}"
    if port_listening "$port"; then
      problems+=("$svc: 127.0.0.1:$port is already in use by another process$(port_owner "$port"); stop it, or move $svc with OKEY_${svc^^}_PORT=<a free port>")
    fi
  done
  [ "${#problems[@]}" -eq 0 ] && return
  printf 'error: %s\n' "${problems[@]}" >&2
  die "not starting: ${#problems[@]} service port(s) taken (services this run directory started are in ${SVC_DIR#"$ROOT"/}/*.pid)"
}

start() {
  local svc="$1" bin="$2"
  local pidfile="$SVC_DIR/$svc.pid"
  if pid_alive "$pidfile"; then
    log "$svc already running (pid $(cat "$pidfile"))"
    local changed
    changed="$(settings_changed "$svc")"
    [ -z "$changed" ] || log "warning: $svc keeps the settings it was started with; changed since: $changed (apply them with \`deploy/services.sh down\` and up again)"
    return
  fi
  log "starting $svc on 127.0.0.1:${SERVICE_PORT[$svc]}"
  (umask 077 && settings_fingerprint >"$SVC_DIR/$svc.settings")
  local extra=() line
  while IFS= read -r -d '' line; do extra+=("$line"); done < <(service_env "$svc")
  env "${extra[@]}" \
  OKEY_SERVER__PORT="${SERVICE_PORT[$svc]}" \
  OKEY_DATABASE__URL="postgres://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/okey_$svc" \
  OKEY_NATS__URL="nats://127.0.0.1:$NATS_PORT" \
  OKEY_REDIS__URL="redis://127.0.0.1:$REDIS_PORT/0" \
    setsid "$bin/$svc" </dev/null >>"$SVC_DIR/$svc.log" 2>&1 &
  echo $! >"$pidfile"
}

stop() {
  local svc="$1" pidfile="$SVC_DIR/$1.pid"
  if pid_alive "$pidfile"; then
    local pid
    pid="$(cat "$pidfile")"
    log "stopping $svc (pid $pid)"
    kill -TERM "$pid"
    wait_for 20 proc_gone "$pid" || { log "$svc did not stop; killing"; kill -9 "$pid" || true; }
  fi
  rm -f "$pidfile" "$SVC_DIR/$svc.settings"
}

# Waits until $1 is SERVING while its own process (the pid file's) is alive: a health answer from
# another process on the port does not count.
wait_serving() {
  local svc="$1" pidfile="$SVC_DIR/$1.pid" deadline=$((SECONDS + 90))
  local log_file="${SVC_DIR#"$ROOT"/}/$svc.log"
  while :; do
    if ! pid_alive "$pidfile"; then
      tail -n 20 "$SVC_DIR/$svc.log" >&2 || true
      die "$svc exited (pid $(cat "$pidfile" 2>/dev/null || echo none)); log: $log_file"
    fi
    if serving "$svc"; then
      pid_alive "$pidfile" && return 0
      continue
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 20 "$SVC_DIR/$svc.log" >&2 || true
      die "$svc is not SERVING (health: $(health "$svc")); log: $log_file"
    fi
    sleep 0.2
  done
}

case "${1:-}" in
  up)
    ensure_venv
    mkdir -p "$SVC_DIR"
    ensure_dev_key
    ensure_dev_service_secret
    check_ports_free
    if [ -n "${OKEY_SERVICES_BIN:-}" ]; then
      bin="$(cd "$OKEY_SERVICES_BIN" && pwd)" || die "OKEY_SERVICES_BIN=$OKEY_SERVICES_BIN is not a directory"
      for svc in "${SERVICES[@]}"; do
        [ -x "$bin/$svc" ] || die "OKEY_SERVICES_BIN: no $svc binary in $bin (cargo build --bins first)"
      done
      log "starting the binaries in $bin (OKEY_SERVICES_BIN)"
    else
      log "cargo build (services)"
      (cd "$ROOT" && cargo build --quiet --bins -p accounts -p matchmaking -p table -p scoring)
      bin="$(target_dir)/debug"
    fi
    # Again: the build takes a while, and something may have taken a port meanwhile.
    check_ports_free
    for svc in "${SERVICES[@]}"; do start "$svc" "$bin"; done
    for svc in "${SERVICES[@]}"; do wait_serving "$svc"; done
    echo "All services SERVING (logs in ${SVC_DIR#"$ROOT"/}/):"
    for svc in "${SERVICES[@]}"; do
      printf '  %-12s 127.0.0.1:%s\n' "$svc" "${SERVICE_PORT[$svc]}"
    done
    echo "Try: ${VENV#"$ROOT"/}/bin/grpcurl -plaintext 127.0.0.1:${SERVICE_PORT[table]} list"
    ;;
  down)
    for svc in "${SERVICES[@]}"; do stop "$svc"; done
    ;;
  status)
    for svc in "${SERVICES[@]}"; do
      printf '%-12s %s\n' "$svc" "$( [ -x "$VENV/bin/grpcurl" ] && health "$svc" || echo unknown)"
    done
    ;;
  *)
    echo "usage: $0 up|down|status" >&2
    exit 2
    ;;
esac
