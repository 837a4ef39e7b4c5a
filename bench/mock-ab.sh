#!/usr/bin/env bash
# Two builds of the mock side by side on HTTP/1.1 at 0 delay (wrk, 100 connections), in turns
# (A B A B ...), so that whatever else the machine does falls on both alike: a change to the
# mock (HTTP/2 beside HTTP/1.1, say) must not make HTTP/1.1 slower. Per run: wrk's req/s and the
# mock's CPU per request (utime + stime from /proc over the run, microseconds); then the medians
# and B / A for each (CPU per request swings less than req/s on a shared machine).
#
# Usage: flock /tmp/measure.lock bench/mock-ab.sh BINARY_A BINARY_B
# Env: ROUNDS (5), DURATION (s per run, 8), CONNECTIONS (100).
set -euo pipefail

a="${1:?usage: bench/mock-ab.sh BINARY_A BINARY_B}"
b="${2:?usage: bench/mock-ab.sh BINARY_A BINARY_B}"
rounds="${ROUNDS:-5}"
duration="${DURATION:-8}"
connections="${CONNECTIONS:-100}"
for tool in wrk curl; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install $tool)" >&2; exit 2; }
done
for bin in "$a" "$b"; do
    [[ -x "$bin" ]] || { echo "bench: $bin is not an executable: build it first" >&2; exit 2; }
done
work="$(mktemp -d /tmp/cp-mockab-XXXXXX)"
pid=""
cleanup() {
    if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
ticks=$(getconf CLK_TCK)

# One run of `bin`: prints "req/s cpu_us_per_request".
run() {
    local bin="$1" port
    "$bin" mock --port 0 >"$work/out" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        port=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out" 2>/dev/null | head -1 | cut -d: -f3 || true)
        [[ -n "$port" ]] && curl -sf "http://127.0.0.1:$port/__admin/health" >/dev/null && break
        sleep 0.05
    done
    [[ -n "$port" ]] || { echo "bench: $bin mock did not come up" >&2; exit 2; }
    wrk -t2 -c"$connections" -d1s "http://127.0.0.1:$port/" >/dev/null # warm-up
    local before after
    before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    local out
    out=$(wrk -t2 -c"$connections" -d"${duration}s" "http://127.0.0.1:$port/")
    after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
    local requests
    requests=$(awk '/requests in/ {print $1}' <<<"$out")
    awk -v r="$requests" -v d="$duration" -v t="$((after - before))" -v hz="$ticks" \
        'BEGIN { printf "%.0f %.3f\n", r / d, (r > 0 ? t / hz * 1e6 / r : 0) }'
}

echo "# mock A/B: A=$a B=$b; wrk -c$connections, ${duration}s a run, $rounds rounds, $(nproc) cores, $(date -u +%FT%TZ)"
: >"$work/a"; : >"$work/b"
for round in $(seq "$rounds"); do
    ra=$(run "$a"); rb=$(run "$b")
    echo "$ra" >>"$work/a"; echo "$rb" >>"$work/b"
    printf 'round %d  A %8.0f req/s %6.3f us cpu/req   B %8.0f req/s %6.3f us cpu/req\n' \
        "$round" $ra $rb
done
median() { sort -n | awk '{v[NR] = $1} END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
a_rps=$(cut -d' ' -f1 "$work/a" | median); b_rps=$(cut -d' ' -f1 "$work/b" | median)
a_cpu=$(cut -d' ' -f2 "$work/a" | median); b_cpu=$(cut -d' ' -f2 "$work/b" | median)
awk -v ar="$a_rps" -v br="$b_rps" -v ac="$a_cpu" -v bc="$b_cpu" 'BEGIN {
    printf "median  A %8.0f req/s %6.3f us cpu/req   B %8.0f req/s %6.3f us cpu/req\n", ar, ac, br, bc
    printf "B / A: req/s %.3f, CPU per request %.3f (below 1: B spends less)\n", br / ar, bc / ac }'
