#!/usr/bin/env bash
# chokepoint load --grpc against ghz (github.com/bojand/ghz, the gRPC load tool): the same unary
# call (tests/targets/py-grpc-pool's chokepoint.pool.v1.Pool/Work, its descriptor set made by
# grpcio-tools' protoc) to the same server over h2c, the same connection, the same calls in flight
# and the same duration, two rounds interleaved. The server is `chokepoint mock` answering the
# method with a gRPC stub (a 4-byte WorkReply, grpc-status 0 in the trailers): the fastest gRPC
# server at hand, so the generators, not the server, are what differ. Prints calls/s and the
# generator's CPU-microseconds per call (user+sys of the process, from the shell's `times`) for
# each, and the ratios chokepoint/ghz.
# ghz's -c N --connections C is chokepoint's -c N --connections C.
#
# SERVER=go puts a real gRPC server in the mock's place: bench/go-grpc-server (grpc-go, the same
# method answered at once, built offline from the module cache that scripts/install-test-deps.sh
# fills); it needs a core of its own, so the calls/s are the server's as much as the tools'.
#
# Usage: flock /tmp/measure.lock [SERVER=mock|go] bench/grpc-ratio.sh [connections=1] [in-flight=32] [seconds=10]
# Needs ghz on PATH or in ~/go/bin: go install github.com/bojand/ghz/cmd/ghz@v0.93.0 (it builds
# with Go 1.26 here), and python3 -m grpc_tools (pip grpcio-tools, scripts/install-test-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
CONNS=${1:-1}
INFLIGHT=${2:-32}
SECS=${3:-10}
WORK=$(mktemp -d /tmp/cp-bench-grpc.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

GHZ=$(command -v ghz || echo "$HOME/go/bin/ghz")
if [ ! -x "$GHZ" ]; then
  echo "ghz is missing: go install github.com/bojand/ghz/cmd/ghz@v0.93.0" >&2
  exit 2
fi
cargo build --release --quiet --bin chokepoint
CP=${CARGO_TARGET_DIR:-target}/release/chokepoint
python3 -m grpc_tools.protoc -I tests/targets/py-grpc-pool --include_imports \
  --descriptor_set_out="$WORK/pool.pb" pool.proto

mkdir -p "$WORK/mappings"
cat > "$WORK/mappings/work.json" <<'JSON'
{"request": {"method": "POST", "url": "/chokepoint.pool.v1.Pool/Work"},
 "response": {"status": 200, "headers": {"Content-Type": "application/grpc"},
              "base64Body": "CgJoaQ=="}}
JSON
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
SERVER=${SERVER:-mock}
case $SERVER in
  mock)
    PORT=$(free_port)
    "$CP" mock --port "$PORT" --mappings "$WORK/mappings/work.json" > "$WORK/server.out" 2>&1 & PIDS+=($!)
    SERVER_NAME="chokepoint mock's gRPC stub" ;;
  go)
    (cd bench/go-grpc-server && GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off \
      go build -o "$WORK/go-grpc-server" .)
    "$WORK/go-grpc-server" -port 0 > "$WORK/server.out" 2>&1 & PIDS+=($!)
    for _ in $(seq 50); do grep -q 'listening on' "$WORK/server.out" && break; sleep 0.1; done
    PORT=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$WORK/server.out")
    SERVER_NAME="bench/go-grpc-server (grpc-go $(awk '/google.golang.org\/grpc /{print $NF; exit}' bench/go-grpc-server/go.mod))" ;;
  *) echo "SERVER=$SERVER: expected mock or go" >&2; exit 2 ;;
esac
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done

# Runs a command and prints the user+sys CPU seconds it took.
cpu_of() {
  local out=$1; shift
  ( "$@" > "$out" 2>&1; times ) | tail -1 | awk '{
    split($1,u,"m"); split($2,s,"m"); sub("s","",u[2]); sub("s","",s[2]);
    print u[1]*60+u[2]+s[1]*60+s[2] }'
}

METHOD=chokepoint.pool.v1.Pool/Work
DATA='{"name": "bench"}'
run_tool() { # tool -> prints "rps calls cpu_s failed"
  local tool=$1 out="$WORK/$1.out" cpu calls rps failed
  case $tool in
    chokepoint)
      cpu=$(cpu_of "$out" "$CP" load "http://127.0.0.1:$PORT" --grpc "$METHOD" \
        --descriptor-set "$WORK/pool.pb" --data "$DATA" --connections "$CONNS" -c "$INFLIGHT" \
        -d "${SECS}s" --interval 3600s --no-progress --json "$WORK/cp.json")
      read -r calls rps failed < <(python3 -c "import json;d=json.load(open('$WORK/cp.json'));print(d['requests'], d['throughput_rps'], d['requests']-d['ok'])") ;;
    ghz)
      cpu=$(cpu_of "$out" "$GHZ" --insecure --protoset "$WORK/pool.pb" --call "$METHOD" -d "$DATA" \
        --connections "$CONNS" -c "$INFLIGHT" -z "${SECS}s" -O json "127.0.0.1:$PORT")
      read -r calls rps failed < <(python3 -c "import json;d=json.load(open('$out'));s=d.get('statusCodeDistribution',{});print(d['count'], d['rps'], d['count']-s.get('OK',0))") ;;
  esac
  echo "$rps $calls $cpu $failed"
}

echo "# gRPC unary over h2c, $CONNS connection(s), $INFLIGHT calls in flight, ${SECS}s each, two rounds interleaved, $(nproc) cores, $SERVER_NAME"
printf '%-11s %5s %12s %10s %14s %7s\n' tool round calls/s calls cpu-us/call failed
declare -A RPS=() CPU=()
for round in 1 2; do
  for tool in chokepoint ghz; do
    read -r rps calls cpu failed < <(run_tool "$tool")
    per=$(python3 -c "print(f'{1e6*$cpu/max($calls,1):.2f}')")
    printf '%-11s %5s %12.0f %10s %14s %7s\n' "$tool" "$round" "$rps" "$calls" "$per" "$failed"
    RPS[$tool]="${RPS[$tool]:-} $rps"; CPU[$tool]="${CPU[$tool]:-} $per"
  done
done
python3 - "${RPS[chokepoint]}" "${CPU[chokepoint]}" "${RPS[ghz]}" "${CPU[ghz]}" <<'PY'
import sys
mean = lambda s: sum(map(float, s.split())) / len(s.split())
cr, cc, gr, gc = (mean(a) for a in sys.argv[1:5])
print(f"mean: chokepoint {cr:.0f} calls/s, {cc:.2f} cpu-us/call; ghz {gr:.0f} calls/s, {gc:.2f} cpu-us/call")
print(f"chokepoint/ghz: calls/s {cr/gr:.2f}, CPU per call {cc/gc:.2f}")
PY
