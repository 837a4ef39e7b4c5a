#!/usr/bin/env bash
# Does reading a Python target's stacks move what is measured? tests/targets/py-threadpool behind
# a 50 ms chokepoint mock, swept at 24 clients (past its pool of 6) with fixed steps, alternately
# with `--stacks auto` (py-spy dump, 3 times per step) and `--stacks off`, ROUNDS
# times each, interleaved. Prints each step's throughput and the ratio of the means.
#
# Usage: bench/pyspy-overhead.sh [ROUNDS=4] [STEP=4s]
# Needs python3 and py-spy. Loopback only; each sweep is two bounded steps.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-4}
STEP=${2:-4s}
command -v py-spy >/dev/null || { echo "py-spy is not on the PATH: pip install py-spy" >&2; exit 2; }
WORK=$(mktemp -d /tmp/cp-pyspy-overhead.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

cargo build --release --quiet --bin chokepoint
CP=$PWD/target/release/chokepoint

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

"$CP" mock --port 0 --delay 50ms > "$WORK/mock.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  MOCK_PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$WORK/mock.log" | head -1 | cut -d: -f2 || true)
  [ -n "$MOCK_PORT" ] && break
  sleep 0.1
done
MOCK=http://127.0.0.1:$MOCK_PORT/
launch python3 tests/targets/py-threadpool/server.py --port 0 --downstream "$MOCK"

echo "| round | stacks | step throughputs (req/s) | dumps per step |"
echo "| --- | --- | --- | --- |"
for round in $(seq "$ROUNDS"); do
  for stacks in auto off; do
    json=$WORK/$stacks-$round.json
    timeout 120 "$CP" sweep "http://127.0.0.1:$PORT/" --pid "$PID" --mock "$MOCK" \
      --clients 24,24 --step "$STEP" --step-fixed --stacks "$stacks" --json "$json" > /dev/null
    python3 - "$json" "$round" "$stacks" <<'EOF'
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
rates = ", ".join(f"{s['throughput_rps']:.1f}" for s in steps)
dumps = ", ".join(str((s.get("stacks") or {}).get("snapshots", "-")) for s in steps)
print(f"| {sys.argv[2]} | {sys.argv[3]} | {rates} | {dumps} |")
EOF
  done
done | tee "$WORK/table.md"
python3 - "$WORK/table.md" <<'EOF'
import sys
rates = {"auto": [], "off": []}
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) == 4 and cells[1] in rates:
        rates[cells[1]] += [float(x) for x in cells[2].split(",")]
on, off = (sum(r) / len(r) for r in (rates["auto"], rates["off"]))
print(f"\nmean with py-spy {on:.1f} req/s, without {off:.1f} req/s: ratio {on / off:.3f}")
EOF
