#!/usr/bin/env bash
# The mock's user-space instructions per HTTP/1.1 request at 0 delay, counted by valgrind's
# callgrind (deterministic to ~1%, where CPU time on a shared 2-core VM swings 10-30% and the VM
# has no hardware counters for `perf stat`): the mock's total at N1 and at N2 requests, sent by
# `chokepoint load -n -c 10`; (Ir(N2) - Ir(N1)) / (N2 - N1) leaves start-up and shutdown out.
# The kernel's share (most of the CPU at 0 delay: the loopback path) is not counted.
#
# Usage: flock /tmp/measure.lock bench/mock-instructions.sh BINARY... (each a chokepoint binary;
#   the first one's `load` sends the requests to all)
# Env: N1 (5000), N2 (25000), PORT (28441).
set -euo pipefail
(($# >= 1)) || { echo "usage: bench/mock-instructions.sh BINARY..." >&2; exit 2; }
for tool in valgrind curl; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install $tool)" >&2; exit 2; }
done
n1="${N1:-5000}"; n2="${N2:-25000}"; port="${PORT:-28441}"; loader="$1"
work="$(mktemp -d /tmp/cp-mockir-XXXXXX)"
pid=""
cleanup() {
    if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Total instructions of `bin` serving `n` requests (then stopped with Ctrl-C, as a user would).
total() {
    local bin="$1" n="$2"
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$bin" mock --port "$port" \
        >/dev/null 2>"$work/valgrind.err" &
    pid=$!
    for _ in $(seq 300); do
        curl -sf "http://127.0.0.1:$port/__admin/health" >/dev/null && break
        sleep 0.1
    done
    "$loader" load "http://127.0.0.1:$port/" -n "$n" -c 10 >/dev/null
    kill -INT "$pid"; wait "$pid" 2>/dev/null || true; pid=""
    awk '/^summary:|^totals:/ {print $2; exit}' "$work/cg.out"
}

echo "# mock instructions per request (callgrind, user space), $n1 and $n2 requests, $(date -u +%FT%TZ)"
for bin in "$@"; do
    a=$(total "$bin" "$n1"); b=$(total "$bin" "$n2")
    echo "$bin  $(( (b - a) / (n2 - n1) )) instructions/request"
done
