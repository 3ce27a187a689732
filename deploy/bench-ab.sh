#!/usr/bin/env bash
# A/B of the table service under the load bench: the service built at BASE (any commit, branch or
# tag) against the service in the working tree, both driven by the working tree's bench, in runs
# that alternate (base, new, base, new, ...) in one window on the same infrastructure, so the
# machine's drift shows as spread instead of favouring one side. Prints each run's figures and
# the medians side by side.
#
#   deploy/infra.sh up
#   deploy/bench-ab.sh BASE [RUNS] [-- LOAD BENCH ARGUMENTS]
#   deploy/bench-ab.sh HEAD~1 3 -- --tables 100 --seconds 15 --rounds 1
#   deploy/bench-ab.sh HEAD~1 3 -- --tables 1000 --seconds 20 --think-ms 3000 --watch
#
# RUNS is the number of runs of each side (3 by default). The bench's arguments default to
# `--tables 100 --seconds 15 --rounds 1`. Builds go to CARGO_TARGET_DIR (or target/), the base's
# sources to a temporary git worktree; each run's output is kept in .run/bench-ab/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: deploy/bench-ab.sh BASE [RUNS] [-- LOAD BENCH ARGUMENTS]"
BASE="$1"
shift
RUNS=3
if [ $# -ge 1 ] && [ "$1" != "--" ]; then
  RUNS="$1"
  shift
fi
[ $# -ge 1 ] && [ "$1" = "--" ] && shift
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(--tables 100 --seconds 15 --rounds 1)
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number, not '$RUNS'"
git -C "$ROOT" rev-parse --verify --quiet "$BASE^{commit}" >/dev/null \
  || die "'$BASE' is not a commit of this repository"
[ -f "$RUN_DIR/infra.env" ] || die "start the infrastructure first: deploy/infra.sh up"

TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
OUT="$RUN_DIR/bench-ab"
mkdir -p "$OUT/new" "$OUT/base"

# The working tree's bench and service. The bench's executable is the one cargo reports.
log "building the working tree's load bench and table service"
# Cargo names a workspace crate's artifacts by its path relative to the workspace, so a base built
# from a worktree (an earlier run of this script) leaves artifacts under the same names, newer
# than the working tree's sources, which cargo then takes as fresh. Touching the sources makes
# it build them again.
find "$ROOT/crates" "$ROOT/services" -name '*.rs' -path '*/src/*' -exec touch {} +
bench=$(cd "$ROOT" && CARGO_TARGET_DIR="$TARGET" cargo bench -p table --bench load --no-run \
  --message-format=json-render-diagnostics \
  | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "load" and m.get("executable"):
        print(m["executable"])')
[ -n "$bench" ] || die "cargo built no load bench"
cp "$bench" "$OUT/new/load"
cp "$TARGET/release/table" "$OUT/new/table"

# The base's service, from a worktree of its own (deleted afterwards); the dependencies are
# shared with the build above through the target directory.
log "building the table service at $BASE ($(git -C "$ROOT" rev-parse --short "$BASE"))"
tree=$(mktemp -d)
trap 'git -C "$ROOT" worktree remove --force "$tree" >/dev/null 2>&1 || true; rm -rf "$tree"' EXIT
git -C "$ROOT" worktree add --detach --force "$tree" "$BASE" >/dev/null
(cd "$tree" && CARGO_TARGET_DIR="$TARGET" cargo build --profile bench -p table --bin table)
cp "$TARGET/release/table" "$OUT/base/table"

set -a
source "$RUN_DIR/infra.env"
set +a
for run in $(seq 1 "$RUNS"); do
  for side in base new; do
    log "run $run/$RUNS: $side"
    OKEY_TABLE_BINARY="$OUT/$side/table" "$OUT/new/load" --bench "${ARGS[@]}" \
      > "$OUT/$side/run-$run.txt" 2> "$OUT/$side/run-$run.err" \
      || die "the bench failed; see $OUT/$side/run-$run.err"
  done
done

# Each run's headline figures, then the medians of each side.
python3 - "$OUT" "$RUNS" <<'EOF'
import re, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
figures = [
    ("commands/s", r"^commands: \d+, (\d+) commands/s"),
    ("ratio", r"^ratio commands/s : inserts/s = ([\d.]+)"),
    ("submit p99 ms", r"^SubmitCommand latency: .*p99 ([\d.]+) ms"),
    ("streams p99 ms", r"^move -> other players' streams: .*p99 ([\d.]+) ms"),
    ("busy cores", r"^machine while playing: ([\d.]+) of"),
    ("service % core", r"^CPU while playing: service [\d.]+ s \((\d+)% of a core\)"),
    ("service us/cmd", r"^CPU a command: service (\d+) µs"),
    ("machine us/cmd", r"^CPU a command: .*whole machine (\d+) µs"),
]
seen = {}
for side in ("base", "new"):
    for run in range(1, runs + 1):
        text = open(f"{out}/{side}/run-{run}.txt", encoding="utf-8").read()
        for name, pattern in figures:
            m = re.search(pattern, text, re.M)
            if m:
                seen.setdefault((side, name), []).append(float(m.group(1)))
names = [n for n, _ in figures if ("base", n) in seen]
print("%-16s %s" % ("", "  ".join("%14s" % n for n in names)))
for side in ("base", "new"):
    for run in range(runs):
        row = [seen[(side, n)][run] if run < len(seen[(side, n)]) else float("nan") for n in names]
        print("%-16s %s" % (f"{side} run {run + 1}", "  ".join("%14.2f" % v for v in row)))
for side in ("base", "new"):
    print("%-16s %s" % (f"{side} median", "  ".join("%14.2f" % statistics.median(seen[(side, n)]) for n in names)))
print("%-16s %s" % ("new / base", "  ".join("%14.2f" % (statistics.median(seen[("new", n)]) / statistics.median(seen[("base", n)])) for n in names)))
EOF
