#!/usr/bin/env bash
# The four services, built and started in the background against the local infrastructure
# (deploy/infra.sh up first). Logs and pid files go to .run/services/.
#
#   deploy/services.sh up       build, start what is not running, wait until all are SERVING
#   deploy/services.sh down     SIGTERM each, wait for it to exit
#   deploy/services.sh status   health of each
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SVC_DIR="$RUN_DIR/services"

target_dir() {
  cargo metadata --format-version 1 --no-deps --manifest-path "$ROOT/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}

health() {
  grpcurl -plaintext -max-time 2 -d '{"service":""}' "127.0.0.1:${SERVICE_PORT[$1]}" \
    grpc.health.v1.Health/Check 2>/dev/null | grep -o '"[A-Z_]*SERVING"' | tr -d '"' || true
}
serving() { [ "$(health "$1")" = SERVING ]; }

start() {
  local svc="$1" bin="$2"
  local pidfile="$SVC_DIR/$svc.pid"
  if pid_alive "$pidfile"; then log "$svc already running (pid $(cat "$pidfile"))"; return; fi
  log "starting $svc on 127.0.0.1:${SERVICE_PORT[$svc]}"
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
  rm -f "$pidfile"
}

case "${1:-}" in
  up)
    ensure_venv
    mkdir -p "$SVC_DIR"
    log "cargo build (services)"
    (cd "$ROOT" && cargo build --quiet --bins -p accounts -p matchmaking -p table -p scoring)
    bin="$(target_dir)/debug"
    for svc in "${SERVICES[@]}"; do start "$svc" "$bin"; done
    for svc in "${SERVICES[@]}"; do
      if ! wait_for 90 serving "$svc"; then
        tail -n 20 "$SVC_DIR/$svc.log" >&2 || true
        die "$svc is not SERVING (health: $(health "$svc")); log: ${SVC_DIR#"$ROOT"/}/$svc.log"
      fi
    done
    echo "All services SERVING (logs in ${SVC_DIR#"$ROOT"/}/):"
    for svc in "${SERVICES[@]}"; do
      printf '  %-12s 127.0.0.1:%s\n' "$svc" "${SERVICE_PORT[$svc]}"
    done
    echo "Try: .tools/venv/bin/grpcurl -plaintext 127.0.0.1:${SERVICE_PORT[table]} list"
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
