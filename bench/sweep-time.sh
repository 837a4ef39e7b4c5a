#!/usr/bin/env bash
# How long a finding takes: every target of tests/targets/ and a pool of 20 at a 100 ms downstream,
# swept as a user sweeps them (the defaults: adaptive search, --step 10s), by two chokepoint
# binaries in one run, one target at a time, BEFORE then AFTER; then `chokepoint demo` by each.
# Prints a markdown table: wall time, load time (ramps + measured windows), steps, and the finding
# of each, so a change in speed is never read without the findings beside it.
#
# Usage: bench/sweep-time.sh [BEFORE_REV=HEAD~1]    (AFTER is the work tree)
#   BEFORE_BIN=/path/to/chokepoint skips building BEFORE_REV.
#   TARGETS="pool20 go-semaphore ..." runs a subset; DEMO=0 skips the demo.
#   ROUNDS=N sweeps each target N times by each binary, the order alternated each round (one
#   row per round); KEEP=DIR keeps each sweep's result.json as DIR/TARGET-before|after-ROUND/,
#   so the steps behind a difference (each one's `chosen_because`, `ended`, CPU) can be read.
# Needs go, python3, java, node and taskset (as the tests do). Loopback only; every sweep is
# bounded by --max-clients and a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BEFORE_REV=${1:-HEAD~1}
WORK=$(mktemp -d /tmp/cp-sweep-time.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  git -C "$ROOT" worktree remove --force "$WORK/before-src" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

cargo build --release --quiet --bin chokepoint
AFTER=$ROOT/target/release/chokepoint
if [ -z "${BEFORE_BIN:-}" ]; then
  git -C "$ROOT" worktree add --quiet --detach "$WORK/before-src" "$BEFORE_REV"
  (cd "$WORK/before-src" && CARGO_TARGET_DIR=$ROOT/target/bench-before cargo build --release --quiet --bin chokepoint)
  BEFORE_BIN=$ROOT/target/bench-before/release/chokepoint
fi
BEFORE=$BEFORE_BIN

# Starts a command whose first stdout line is "... 127.0.0.1:PORT ..."; sets PORT.
launch() {
  local log=$WORK/launch.$RANDOM
  "$@" > "$log" 2>&1 &
  PIDS+=($!)
  LAUNCHED=$!
  for _ in $(seq 1 600); do
    PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$log" 2>/dev/null | head -1 | cut -d: -f2 || true)
    [ -n "$PORT" ] && return 0
    sleep 0.2
  done
  echo "bench: $* did not print its port" >&2
  cat "$log" >&2
  exit 1
}

# One target's setup: sets URL, MOCK (or empty) and PID.
setup() {
  MOCK=""
  case $1 in
    pool20)
      launch "$AFTER" mock --port 0 --delay 100ms; MOCK=http://127.0.0.1:$PORT
      launch "$AFTER" demo-service --port 0 --downstream "$MOCK"; URL=http://127.0.0.1:$PORT/actors ;;
    go-semaphore)
      launch "$AFTER" mock --port 0 --delay 50ms; MOCK=http://127.0.0.1:$PORT
      (cd tests/targets/go-semaphore && GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off go build -o "$WORK/gs" .)
      launch "$WORK/gs" -port 0 -downstream "$MOCK"; URL=http://127.0.0.1:$PORT/ ;;
    py-threadpool)
      launch "$AFTER" mock --port 0 --delay 50ms; MOCK=http://127.0.0.1:$PORT
      launch python3 tests/targets/py-threadpool/server.py --port 0 --downstream "$MOCK"; URL=http://127.0.0.1:$PORT/ ;;
    py-asyncio-blocked)
      launch python3 tests/targets/py-asyncio-blocked/server.py --port 0; URL=http://127.0.0.1:$PORT/ ;;
    java-shed)
      launch java tests/targets/java-shed/ShedServer.java --port 0; URL=http://127.0.0.1:$PORT/ ;;
    py-cpu-gil)
      launch python3 tests/targets/py-cpu-gil/server.py --port 0; URL=http://127.0.0.1:$PORT/ ;;
    go-cpu)
      (cd tests/targets/go-cpu && GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off go build -o "$WORK/gc" .)
      launch "$WORK/gc" -port 0; URL=http://127.0.0.1:$PORT/ ;;
    java-thrash)
      launch taskset -c 0 java tests/targets/java-thrash/ThrashServer.java --port 0; URL=http://127.0.0.1:$PORT/ ;;
    py-pool-timeout)
      launch python3 tests/targets/py-pool-timeout/server.py --port 0; URL=http://127.0.0.1:$PORT/ ;;
    node-cpu-downstream)
      launch "$AFTER" mock --port 0 --delay 50ms; MOCK=http://127.0.0.1:$PORT
      launch node tests/targets/node-cpu-downstream/server.js --port 0 --downstream "$MOCK"; URL=http://127.0.0.1:$PORT/ ;;
    py-prefork-cpu)
      launch python3 tests/targets/py-prefork-cpu/server.py --port 0 --workers 2 --cpu-ms 5; URL=http://127.0.0.1:$PORT/ ;;
    py-warmup)
      launch python3 tests/targets/py-warmup/server.py --port 0; URL=http://127.0.0.1:$PORT/ ;;
    *) echo "bench: unknown target $1" >&2; exit 2 ;;
  esac
  PID=$LAUNCHED
}

# Sweeps $URL with binary $1 into $2; prints "wall load steps kind limit".
sweep() {
  local bin=$1 out=$2 start end
  local args=("$URL" --max-clients 256 --out "$out" --pid "$PID")
  [ -n "$MOCK" ] && args+=(--mock "$MOCK")
  start=$(date +%s.%N)
  timeout 600 "$bin" sweep "${args[@]}" > "$out.log" 2>&1 || true
  end=$(date +%s.%N)
  python3 - "$out/result.json" "$start" "$end" <<'PY'
import json, sys
path, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
try:
    r = json.load(open(path))
except Exception:
    print(f"{end-start:.1f} - - failed -"); sys.exit()
steps = r["steps"]
load = sum(s["duration_s"] + s.get("ramp_s", 0) for s in steps)
d = r.get("diagnosis") or {}
limit = d.get("limit")
print(f"{end-start:.1f} {load:.1f} {len(steps)} {d.get('kind','-')} {'-' if limit is None else round(limit,1)}")
PY
}

TARGETS=${TARGETS:-"pool20 go-semaphore py-threadpool py-asyncio-blocked java-shed py-cpu-gil go-cpu java-thrash py-pool-timeout node-cpu-downstream py-prefork-cpu py-warmup"}
echo "| target | before: wall s | load s | steps | finding | after: wall s | load s | steps | finding |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
ROUNDS=${ROUNDS:-1}
for t in $TARGETS; do
  for round in $(seq 1 "$ROUNDS"); do
    declare -A cells=()
    order="before after"
    [ $((round % 2)) = 0 ] && order="after before"
    for which in $order; do
      bin=$BEFORE; [ $which = after ] && bin=$AFTER
      setup "$t"
      read -r wall load steps kind limit < <(sweep "$bin" "$WORK/$t-$which-$round")
      cells[$which]="$wall|$load|$steps|$kind $limit"
      if [ -n "${KEEP:-}" ]; then
        mkdir -p "$KEEP" && cp -r "$WORK/$t-$which-$round" "$KEEP/"
      fi
      for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
      wait 2>/dev/null || true
      PIDS=()
    done
    label=$t
    [ "$ROUNDS" -gt 1 ] && label="$t ($round)"
    IFS='|' read -r -a before_cells <<< "${cells[before]}"
    IFS='|' read -r -a after_cells <<< "${cells[after]}"
    row=("$label" "${before_cells[@]}" "${after_cells[@]}")
    printf '| %s ' "${row[@]}"; echo '|'
    unset cells
  done
done

# The demo: one row, its wall time, the load of all its scenarios' steps, and how many it found.
demo() {
  local bin=$1 out=$2 start end
  start=$(date +%s.%N)
  timeout 600 "$bin" demo --out "$out" > "$out.log" 2>&1 || true
  end=$(date +%s.%N)
  python3 - "$out" "$start" "$end" "$out.log" <<'PY'
import glob, json, re, sys
out, start, end, log = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
load = steps = 0
for path in glob.glob(f"{out}/*/result.json"):
    r = json.load(open(path))
    load += sum(s["duration_s"] + s.get("ramp_s", 0) for s in r["steps"])
    steps += len(r["steps"])
found = re.search(r"(\d+/\d+) scenarios found as expected", open(log).read())
print(f"{end-start:.1f} {load:.1f} {steps} {found.group(1) if found else 'failed'}")
PY
}

if [ "${DEMO:-1}" = 1 ]; then
  row=("demo")
  for which in before after; do
    bin=$BEFORE; [ $which = after ] && bin=$AFTER
    read -r wall load steps found < <(demo "$bin" "$WORK/demo-$which")
    row+=("$wall" "$load" "$steps" "$found as expected")
  done
  printf '| %s ' "${row[@]}"; echo '|'
fi
