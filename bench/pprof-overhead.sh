#!/usr/bin/env bash
# Does reading a Go target's goroutine dumps move what is measured? Two targets, each swept at
# fixed clients with fixed steps, alternately with `--stacks auto` (a `goroutine?debug=2` dump
# every 250 ms of a step) and `--stacks off`, ROUNDS times each, interleaved:
#   - tests/targets/go-cpu -pprof at 8 clients: CPU-bound, where a dump's cost would show;
#   - tests/targets/go-semaphore -pprof at 48 clients behind a 50 ms mock: 110 goroutines.
# Prints each step's throughput and dumps, then each target's ratio of the means (on / off).
#
# Usage: bench/pprof-overhead.sh [ROUNDS=4] [STEP=4s]
# Needs go. Loopback only; each sweep is two bounded steps.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-4}
STEP=${2:-4s}
command -v go >/dev/null || { echo "go is not on the PATH: install Go 1.22 or later" >&2; exit 2; }
WORK=$(mktemp -d /tmp/cp-pprof-overhead.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

cargo build --release --quiet --bin chokepoint
CP=${CARGO_TARGET_DIR:-$PWD/target}/release/chokepoint
for target in go-cpu go-semaphore; do
  (cd "tests/targets/$target" && GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off \
    go build -o "$WORK/$target" .)
done

# Starts a command whose first stdout line ends in 127.0.0.1:PORT; sets PORT and PID.
launch() {
  local log=$WORK/launch.$RANDOM
  "$@" > "$log" 2>&1 &
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 100); do
    PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$log" | head -1 | cut -d: -f2 || true)
    [ -n "$PORT" ] && return 0
    sleep 0.1
  done
  echo "no port from: $*" >&2
  exit 1
}

launch "$CP" mock --port 0 --delay 50ms
MOCK=http://127.0.0.1:$PORT/
launch "$WORK/go-cpu" -port 0 -pprof
CPU_PORT=$PORT CPU_PID=$PID
launch "$WORK/go-semaphore" -port 0 -downstream "$MOCK" -pprof
SEM_PORT=$PORT SEM_PID=$PID

# sweep TARGET PORT PID CLIENTS STACKS ROUND [--mock URL]
sweep() {
  local json=$WORK/$1-$5-$6.json
  timeout 120 "$CP" sweep "http://127.0.0.1:$2/" --pid "$3" --clients "$4,$4" --step "$STEP" \
    --step-fixed --stacks "$5" --json "$json" "${@:7}" > /dev/null
  python3 - "$json" "$1" "$6" "$5" <<'EOF'
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
rates = ", ".join(f"{s['throughput_rps']:.1f}" for s in steps)
dumps = ", ".join(str((s.get("stacks") or {}).get("snapshots", "-")) for s in steps)
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {rates} | {dumps} |")
EOF
}

echo "| target | round | stacks | step throughputs (req/s) | dumps per step |"
echo "| --- | --- | --- | --- | --- |"
for round in $(seq "$ROUNDS"); do
  order="auto off"
  [ $((round % 2)) -eq 0 ] && order="off auto"
  for stacks in $order; do
    sweep go-cpu "$CPU_PORT" "$CPU_PID" 8 "$stacks" "$round"
    sweep go-semaphore "$SEM_PORT" "$SEM_PID" 48 "$stacks" "$round" --mock "$MOCK"
  done
done | tee "$WORK/table.md"
python3 - "$WORK/table.md" <<'EOF'
import sys
from collections import defaultdict
rates = defaultdict(list)
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) == 5 and cells[2] in ("auto", "off"):
        rates[(cells[0], cells[2])] += [float(x) for x in cells[3].split(",")]
print()
for target in ("go-cpu", "go-semaphore"):
    on, off = (sum(r) / len(r) for r in (rates[(target, "auto")], rates[(target, "off")]))
    print(f"{target}: mean with dumps {on:.1f} req/s, without {off:.1f} req/s: ratio {on / off:.3f}")
EOF
