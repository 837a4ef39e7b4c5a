#!/usr/bin/env bash
# The mock's three performance goals (issue 4), without WireMock, with references that show what
# the machine and the load tool allow:
#   1. 1,000 connections x 100 ms delay     (goal: >= 97% of the ideal 10,000 req/s)
#   2. 10,000 connections x 1 s delay       (goal: >= 97% of ideal, p99 <= delay + 20 ms, RSS <= 200 MB)
#   3. 0 delay, 100 connections vs nginx    (goal: >= 1.0 x nginx's req/s)
# For 1 and 2 the same load also runs against a tiny Go net/http server that sleeps as long
# (goroutines on timers: a fair "nothing in the way" reference). For 3, nginx (one worker per core)
# and the mock run alternately, ROUNDS times each.
#
# Per run: wrk's req/s and its share of the ideal (connections / delay); the steady-state share by
# Little's law (delay / wrk's mean latency: excludes the connect ramp and the requests wrk cuts off
# at the end); p50 and p99 minus the delay; the CPU the server and wrk used (% of one core); the
# server's peak RSS (VmHWM); at 0 delay also the server's CPU per request (microseconds), which
# swings less than req/s when other work shares the cores. wrk counts only completed requests, so with every connection in step
# a run of D seconds at delay d completes at most floor(D/d) - 1 rounds when anything at all adds
# latency: at 1 s and D = 15 that caps the counted share at 93%, whatever the server.
#
# Usage: bench/mock-perf.sh            (wrap it in `flock /tmp/chokepoint-bench.lock` on a shared box)
# Env: DURATION (s per run, default 10; the 1 s level runs at least 20 s), ROUNDS (3),
#   CHOKEPOINT (a built binary; default: cargo build --release), SKIP ("1 2 3": goals to skip).
# Needs: wrk, nginx, go (optional: the reference is skipped without it), python3, curl.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
duration="${DURATION:-10}"
rounds="${ROUNDS:-3}"
skip=" ${SKIP:-} "
work="$(mktemp -d /tmp/cp-mockperf-XXXXXX)"
pids=()

cleanup() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

export PATH="$PATH:/usr/sbin:/usr/local/go/bin"
for tool in wrk nginx python3 curl; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing" >&2; exit 2; }
done
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if (($(ulimit -n) < 10100)); then
    echo "bench: the open-file limit is $(ulimit -n); 10,000 connections need 65536 (as root)" >&2
    exit 2
fi

bin="${CHOKEPOINT:-}"
if [[ -z "$bin" ]]; then
    (cd "$repo" && cargo build --release --quiet --bin chokepoint)
    bin="$repo/target/release/chokepoint"
fi

# The reference: Go's net/http, one goroutine per connection, time.Sleep on the runtime's timers.
reference=""
if command -v go >/dev/null; then
    mkdir -p "$work/ref"
    cat >"$work/ref/main.go" <<'EOF'
package main

import (
	"flag"
	"fmt"
	"net/http"
	"time"
)

func main() {
	port := flag.Int("port", 0, "port")
	delay := flag.Duration("delay", 0, "delay before each response")
	flag.Parse()
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(*delay)
		w.Write([]byte("OK"))
	})
	fmt.Println(http.ListenAndServe(fmt.Sprintf("127.0.0.1:%d", *port), nil))
}
EOF
    (cd "$work/ref" && go build -o ref main.go) &&
        reference="$work/ref/ref"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_for() { # url
    for _ in $(seq 600); do
        curl -s -o /dev/null --max-time 2 "$1" && return 0
        sleep 0.1
    done
    echo "bench: $1 did not come up" >&2
    exit 1
}

cpu_ticks() { # pids...: user+system clock ticks, summed
    local total=0 pid
    for pid in "$@"; do
        total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$total"
}

# run NAME URL CONNECTIONS DELAY_MS SECONDS PIDS...: one wrk run, one line.
run() {
    local name=$1 url=$2 conns=$3 delay_ms=$4 seconds=$5
    shift 5
    local threads=2 before after out rps avg p50 p99 wrk_cpu rss errors
    ((conns < threads)) && threads=$conns
    before=$(cpu_ticks "$@")
    out=$( { /usr/bin/time -f 'wrk-cpu %U %S' \
        wrk -t"$threads" -c"$conns" -d"${seconds}s" --timeout 10s --latency "$url"; } 2>&1 || true)
    after=$(cpu_ticks "$@")
    rss=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null || echo 0)
    rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
    avg=$(awk '$1 == "Latency" {print $2; exit}' <<<"$out")
    p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
    p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
    wrk_cpu=$(awk '$1 == "wrk-cpu" {print $2 + $3}' <<<"$out")
    errors=$(grep -o 'Socket errors:.*' <<<"$out" || echo "no socket errors")
    awk -v n="$name" -v c="$conns" -v r="${rps:-0}" -v avg="$avg" -v p50="$p50" -v p99="$p99" \
        -v d="$delay_ms" -v s="$seconds" -v cpu=$((after - before)) -v wc="${wrk_cpu:-0}" \
        -v m="$rss" -v e="$errors" '
        function ms(v) {
            if (v ~ /us$/) { sub(/us$/, "", v); return v / 1000 }
            if (v ~ /ms$/) { sub(/ms$/, "", v); return v + 0 }
            sub(/s$/, "", v); return v * 1000 }
        BEGIN {
            line = sprintf("%-26s %6d conns %9.0f req/s", n, c, r)
            if (d > 0)
                line = line sprintf("  %5.1f%% of ideal (steady %5.1f%%)  p50-d %6.1f ms  p99-d %6.1f ms",
                    100 * r * d / (1000 * c), 100 * d / ms(avg), ms(p50) - d, ms(p99) - d)
            else
                line = line sprintf("  p50 %5.2f ms  p99 %6.2f ms  server %5.2f us cpu/req", ms(p50), ms(p99),
                    r > 0 ? cpu * 10000 / (r * s) : 0)
            printf "%s  server %3.0f%% cpu  wrk %3.0f%% cpu  RSS %4d MB  %s\n",
                line, cpu / s, 100 * wc / s, m, e }'
    echo "${rps:-0}" >"$work/last_rps"
    awk -v t=$((after - before)) -v r="${rps:-0}" -v s="$seconds" \
        'BEGIN { printf "%.2f\n", (r > 0 ? t * 10000 / (r * s) : 0) }' >"$work/last_cpu_per_req"
}

start_mock() { # DELAY_MS -> sets port, pid
    port=$(free_port)
    local delay=()
    (($1 > 0)) && delay=(--delay "${1}ms")
    "$bin" mock --port "$port" "${delay[@]}" >/dev/null &
    pid=$!
    pids+=("$pid")
    wait_for "http://127.0.0.1:$port/__admin/health"
}

start_reference() { # DELAY_MS -> sets port, pid
    port=$(free_port)
    "$reference" -port "$port" -delay "${1}ms" >/dev/null &
    pid=$!
    pids+=("$pid")
    wait_for "http://127.0.0.1:$port/"
}

stop() {
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

echo "# chokepoint mock performance goals: wrk, ${duration}s per run, $(nproc) cores, $(date -u +%FT%TZ)"

delayed_level() { # CONNS DELAY_MS SECONDS
    local conns=$1 delay_ms=$2 seconds=$3 steady
    start_mock "$delay_ms"
    run "chokepoint mock" "http://127.0.0.1:$port/" "$conns" "$delay_ms" "$seconds" "$pid"
    steady=$(curl -s "http://127.0.0.1:$port/__chokepoint/stats" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print("max in flight %d, mean %.0f, connections accepted %d" % (s["max_in_flight"], s["mean_in_flight"], s["connections_accepted"]))')
    echo "    (the mock saw: $steady)"
    stop "$pid"
    if [[ -n "$reference" ]]; then
        start_reference "$delay_ms"
        run "Go net/http reference" "http://127.0.0.1:$port/" "$conns" "$delay_ms" "$seconds" "$pid"
        stop "$pid"
    fi
}

[[ $skip == *" 1 "* ]] || delayed_level 1000 100 "$duration"
[[ $skip == *" 2 "* ]] || delayed_level 10000 1000 $((duration < 20 ? 20 : duration))

if [[ $skip != *" 3 "* ]]; then
    nginx_port=$(free_port)
    mkdir -p "$work/nginx/logs"
    cat >"$work/nginx/nginx.conf" <<EOF
worker_processes auto;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log;
events { worker_connections 20000; }
http {
    access_log off;
    server {
        listen 127.0.0.1:$nginx_port;
        location / { default_type text/plain; return 200 "OK"; }
    }
}
EOF
    nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -g 'daemon off;' &
    nginx_pid=$!
    pids+=("$nginx_pid")
    wait_for "http://127.0.0.1:$nginx_port/"
    nginx_workers=$(pgrep -P "$nginx_pid" | tr '\n' ' ')
    start_mock 0
    wrk -t2 -c100 -d2s "http://127.0.0.1:$nginx_port/" >/dev/null 2>&1 || true
    wrk -t2 -c100 -d2s "http://127.0.0.1:$port/" >/dev/null 2>&1 || true
    ratios=()
    cpu_ratios=()
    for round in $(seq "$rounds"); do
        # shellcheck disable=SC2086 # the worker pids are words
        run "nginx ($(wc -w <<<"$nginx_workers") workers)" "http://127.0.0.1:$nginx_port/" 100 0 "$duration" $nginx_workers
        nginx_rps=$(cat "$work/last_rps")
        nginx_cpu=$(cat "$work/last_cpu_per_req")
        run "chokepoint mock" "http://127.0.0.1:$port/" 100 0 "$duration" "$pid"
        ratios+=("$(awk -v a="$(cat "$work/last_rps")" -v b="$nginx_rps" 'BEGIN { printf "%.2f", a / b }')")
        cpu_ratios+=("$(awk -v a="$(cat "$work/last_cpu_per_req")" -v b="$nginx_cpu" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')")
    done
    echo "chokepoint / nginx at 0 delay, round by round: ${ratios[*]}"
    # Server and wrk share the cores, so req/s swings with whatever else the machine runs; the
    # server's CPU per request is the steadier comparison.
    echo "chokepoint / nginx CPU per request, round by round: ${cpu_ratios[*]} (below 1: the mock spends less)"
fi
