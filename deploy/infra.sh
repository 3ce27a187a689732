#!/usr/bin/env bash
# Local infrastructure without Docker: PostgreSQL, Redis and NATS (JetStream) on loopback ports,
# with data and logs in .run/. Installs what is missing. Safe to run `up` twice.
#
#   deploy/infra.sh up       install if needed, start, wait until each answers, print URLs
#   deploy/infra.sh down     stop all three (data stays in .run/ until `clean`)
#   deploy/infra.sh status   say what runs
#   deploy/infra.sh clean    stop and delete .run/ data
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_DIR="$RUN_DIR/postgres"
REDIS_DIR="$RUN_DIR/redis"
NATS_DIR="$RUN_DIR/nats"
ENV_FILE="$RUN_DIR/infra.env"

pg() { runuser -u postgres -- "$(pg_bindir)/$1" "${@:2}"; }
pg_ready() { "$(pg_bindir)/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; }
redis_ready() { [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; }
nats_ready() {
  "$VENV/bin/python" - "$NATS_MONITOR_PORT" <<'PY'
import json, sys, urllib.request
port = sys.argv[1]
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/jsz", timeout=1) as r:
        sys.exit(0 if json.load(r).get("config") else 1)
except OSError:
    sys.exit(1)
PY
}

start_postgres() {
  ensure_postgres
  if pg_ready; then log "PostgreSQL already answers on $PG_PORT"; return; fi
  mkdir -p "$PG_DIR/socket"
  chown -R postgres:postgres "$PG_DIR"
  runuser -u postgres -- test -w "$PG_DIR" ||
    die "the postgres user cannot write $PG_DIR (a parent directory is not searchable by others)"
  if [ ! -f "$PG_DIR/data/PG_VERSION" ]; then
    log "initdb $PG_DIR/data"
    local pwfile="$PG_DIR/pwfile"
    printf '%s\n' "$PG_PASSWORD" >"$pwfile"
    chown postgres:postgres "$pwfile"
    pg initdb -D "$PG_DIR/data" -U "$PG_USER" --pwfile="$pwfile" \
      --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >"$PG_DIR/initdb.log"
    rm -f "$pwfile"
  fi
  log "starting PostgreSQL on 127.0.0.1:$PG_PORT"
  pg pg_ctl -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR/socket -c max_connections=200" start >/dev/null
  wait_for 30 pg_ready || die "PostgreSQL did not answer; see $PG_DIR/postgres.log"
}

stop_postgres() {
  if [ -f "$PG_DIR/data/postmaster.pid" ] && pg_bindir >/dev/null; then
    log "stopping PostgreSQL"
    pg pg_ctl -D "$PG_DIR/data" -m fast -w stop >/dev/null || true
  fi
}

start_redis() {
  ensure_redis
  ensure_openssl
  if redis_ready; then log "Redis already answers on $REDIS_PORT"; return; fi
  mkdir -p "$REDIS_DIR"
  log "starting Redis on 127.0.0.1:$REDIS_PORT"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --dir "$REDIS_DIR" \
    --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log" --save '' --appendonly no
  wait_for 30 redis_ready || die "Redis did not answer; see $REDIS_DIR/redis.log"
}

stop_redis() {
  # By the pid this checkout started (not by port: another checkout's Redis may answer there).
  if pid_alive "$REDIS_DIR/redis.pid"; then
    log "stopping Redis"
    local pid
    pid="$(cat "$REDIS_DIR/redis.pid")"
    kill "$pid" 2>/dev/null || true
    wait_for 10 proc_gone "$pid" || kill -9 "$pid" 2>/dev/null || true
  fi
}

start_nats() {
  ensure_venv
  if nats_ready; then log "NATS already answers on $NATS_PORT"; return; fi
  mkdir -p "$NATS_DIR/store"
  log "starting NATS (JetStream) on 127.0.0.1:$NATS_PORT"
  setsid "$VENV/bin/nats-server" -js -sd "$NATS_DIR/store" -a 127.0.0.1 -p "$NATS_PORT" \
    -m "$NATS_MONITOR_PORT" -P "$NATS_DIR/nats.pid" -l "$NATS_DIR/nats.log" </dev/null >/dev/null 2>&1 &
  wait_for 30 nats_ready || die "NATS did not answer; see $NATS_DIR/nats.log"
}

stop_nats() {
  if pid_alive "$NATS_DIR/nats.pid"; then
    log "stopping NATS"
    local pid
    pid="$(cat "$NATS_DIR/nats.pid")"
    kill "$pid" 2>/dev/null || true
    wait_for 10 proc_gone "$pid" || kill -9 "$pid" 2>/dev/null || true
  fi
}

write_env() {
  mkdir -p "$RUN_DIR"
  cat >"$ENV_FILE" <<ENV
# Written by deploy/infra.sh up: where the local infrastructure answers.
OKEY_TEST_DATABASE_URL=postgres://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/postgres
OKEY_TEST_NATS_URL=nats://127.0.0.1:$NATS_PORT
OKEY_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT
# Server programs, for the fault tests that start (and stop) servers of their own.
OKEY_TEST_NATS_SERVER=$VENV/bin/nats-server
OKEY_TEST_PG_BINDIR=$(pg_bindir)
ENV
}

case "${1:-}" in
  up)
    mkdir -p "$RUN_DIR"
    start_postgres
    start_redis
    start_nats
    write_env
    cat <<MSG
Infrastructure is up:
  PostgreSQL  postgres://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/postgres
  Redis       redis://127.0.0.1:$REDIS_PORT
  NATS        nats://127.0.0.1:$NATS_PORT   (JetStream; monitor http://127.0.0.1:$NATS_MONITOR_PORT)
  (also in ${ENV_FILE#"$ROOT"/})
MSG
    ;;
  down)
    stop_nats
    stop_redis
    stop_postgres
    ;;
  status)
    pg_bindir >/dev/null && pg_ready && echo "PostgreSQL: up ($PG_PORT)" || echo "PostgreSQL: down"
    command -v redis-cli >/dev/null && redis_ready && echo "Redis: up ($REDIS_PORT)" || echo "Redis: down"
    [ -x "$VENV/bin/python" ] && nats_ready 2>/dev/null && echo "NATS: up ($NATS_PORT)" || echo "NATS: down"
    ;;
  clean)
    "$0" down
    rm -rf "$PG_DIR" "$REDIS_DIR" "$NATS_DIR" "$ENV_FILE"
    ;;
  *)
    echo "usage: $0 up|down|status|clean" >&2
    exit 2
    ;;
esac
