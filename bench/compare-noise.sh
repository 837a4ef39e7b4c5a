#!/usr/bin/env bash
# How often `chokepoint compare` wrongly calls a difference (issue 24): the demo service at one
# configuration (a pool of 20 behind a 100 ms mock) swept PAIRS × 2 times, each pair compared.
# Nothing changed between the two sweeps of a pair, so every figure called better or worse is a
# false call. Prints each pair's verdict counts and the total share of figures wrongly called.
#
# Usage: bench/compare-noise.sh [PAIRS=5]    (run it under flock /tmp/measure.lock)
# Loopback only; each sweep is a fixed list of clients with 2 s steps.
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-5}
WORK=$(mktemp -d /tmp/cp-compare-noise.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
cargo build --release --quiet --bin chokepoint
BIN=$PWD/target/release/chokepoint

port_of() { # the first 127.0.0.1:PORT in a log, waiting for it
  for _ in $(seq 1 100); do
    if grep -o '127.0.0.1:[0-9]*' "$1" >/dev/null 2>&1; then
      grep -o '127.0.0.1:[0-9]*' "$1" | head -1 | cut -d: -f2
      return
    fi
    sleep 0.1
  done
  echo "no port in $1" >&2
  exit 1
}
"$BIN" mock --port 0 --delay 100ms > "$WORK/mock.log" 2>&1 &
PIDS+=($!)
MOCK=$(port_of "$WORK/mock.log")
"$BIN" demo-service --port 0 --downstream "http://127.0.0.1:$MOCK" --actors 20 > "$WORK/svc.log" 2>&1 &
PIDS+=($!)
SVC=$(port_of "$WORK/svc.log")

sweep() {
  "$BIN" sweep "http://127.0.0.1:$SVC/actors" --mock "http://127.0.0.1:$MOCK" \
    -c 10,20,40,80 --step 2s --out "$1" > "$1.log" 2>&1
}
total=0
wrong=0
echo "| pair | better | worse | no difference |"
echo "| --- | --- | --- | --- |"
for pair in $(seq 1 "$PAIRS"); do
  sweep "$WORK/a$pair"
  sweep "$WORK/b$pair"
  "$BIN" compare "$WORK/a$pair" "$WORK/b$pair" --json "$WORK/c$pair.json" > /dev/null
  read -r better worse same < <(python3 - "$WORK/c$pair.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
figures = list(c.get("plateau") and [c["plateau"]] or [])
for s in c["steps"]:
    figures += [s["throughput"], s["p50"], s["p99"]]
v = [f["verdict"] for f in figures]
print(v.count("better"), v.count("worse"), len(v) - v.count("better") - v.count("worse"))
PY
)
  echo "| $pair | $better | $worse | $same |"
  total=$((total + better + worse + same))
  wrong=$((wrong + better + worse))
done
echo
echo "figures wrongly called: $wrong of $total"
