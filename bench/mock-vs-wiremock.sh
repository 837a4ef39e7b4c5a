#!/usr/bin/env bash
# chokepoint mock vs WireMock (and vs nginx at zero delay), driven by wrk.
#
# For each server, the same stub (any request -> 200 "OK" after 100 ms) and the same load
# (wrk, closed loop, keep-alive) at 100, 1,000 and 5,000 connections. Printed per run:
# throughput as a share of the ideal (connections / delay), p50 and p99 latency minus the delay,
# the server's peak resident memory during the run, and socket errors/timeouts.
# Then: chokepoint with 10,000 connections and a 1 s delay; and chokepoint vs nginx at 0 delay.
#
# Needs: wrk, java, mvn (to fetch WireMock's standalone jar from Maven Central), nginx, cargo.
#   apt-get install wrk nginx-light maven default-jre-headless
# Environment: DURATION (seconds per run, default 10), WIREMOCK_VERSION (3.9.1),
#   CHOKEPOINT (a built binary; default: cargo build --release), LEVELS ("100 1000 5000").
# One run on a shared machine is noisy: read the figures as indications, not as a verdict.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
duration="${DURATION:-10}"
levels="${LEVELS:-100 1000 5000}"
wiremock_version="${WIREMOCK_VERSION:-3.9.1}"
work="$(mktemp -d /tmp/cp-bench-XXXXXX)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/chokepoint-bench"
pids=()

cleanup() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

for tool in wrk java mvn nginx; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing (see the header of $0)" >&2; exit 2; }
done
# 10,000 connections need more than 10,000 descriptors in wrk and in the mock: ask for 65536,
# settle for the hard limit when it is enough (containers often cap it).
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if (( $(ulimit -n) < 10100 )); then
    echo "bench: the open-file limit is $(ulimit -n); 10,000 connections need ulimit -n 65536 (as root)" >&2
    exit 2
fi

# WireMock's standalone jar, from Maven Central.
jar="$cache/wiremock-standalone-$wiremock_version.jar"
if [[ ! -f "$jar" ]]; then
    mkdir -p "$cache"
    mvn -q dependency:copy -Dartifact="org.wiremock:wiremock-standalone:$wiremock_version" \
        -DoutputDirectory="$cache" >&2
fi

# chokepoint, built once.
bin="${CHOKEPOINT:-}"
if [[ -z "$bin" ]]; then
    (cd "$repo" && cargo build --release --quiet)
    bin="$repo/target/release/chokepoint"
fi

# The same stub for both mocks: any request, 200 "OK", 100 ms.
mkdir -p "$work/root/mappings" "$work/root/__files"
cat >"$work/root/mappings/delay.json" <<'EOF'
{"request": {"method": "ANY", "urlPattern": "/.*"},
 "response": {"status": 200, "body": "OK", "fixedDelayMilliseconds": 100}}
EOF

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_for() { # url: wait up to 60 s until it answers
    for _ in $(seq 600); do
        curl -s -o /dev/null "$1" && return 0
        sleep 0.1
    done
    echo "bench: $1 did not come up" >&2
    exit 1
}

to_ms() { # wrk's "12.34ms" / "1.20s" / "950.00us" -> milliseconds
    awk -v v="$1" 'BEGIN {
        if (v ~ /us$/) { sub(/us$/, "", v); printf "%.2f", v / 1000 }
        else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.2f", v }
        else if (v ~ /m$/) { sub(/m$/, "", v); printf "%.2f", v * 60000 }
        else { sub(/s$/, "", v); printf "%.2f", v * 1000 } }'
}

peak_rss_mb() { # pid seconds: the largest VmRSS seen while sampling
    local pid=$1 seconds=$2 peak=0 rss
    for _ in $(seq $((seconds * 4))); do
        rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        ((rss > peak)) && peak=$rss
        sleep 0.25
    done
    echo $((peak / 1024))
}

# run NAME PID URL CONNECTIONS DELAY_MS: one wrk run, one result line.
run() {
    local name=$1 pid=$2 url=$3 conns=$4 delay_ms=$5 threads=2 out rps p50 p99 errors rss
    ((conns < threads)) && threads=$conns
    peak_rss_mb "$pid" "$duration" >"$work/rss" &
    local sampler=$!
    out=$(wrk -t"$threads" -c"$conns" -d"${duration}s" --timeout 10s --latency "$url" 2>&1 || true)
    wait "$sampler"
    rss=$(cat "$work/rss")
    rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
    p50=$(to_ms "$(awk '$1 == "50%" {print $2}' <<<"$out")")
    p99=$(to_ms "$(awk '$1 == "99%" {print $2}' <<<"$out")")
    errors=$(grep -o 'Socket errors:.*' <<<"$out" || echo "Socket errors: none")
    if ((delay_ms > 0)); then
        awk -v n="$name" -v c="$conns" -v r="$rps" -v p50="$p50" -v p99="$p99" -v d="$delay_ms" \
            -v m="$rss" -v e="$errors" 'BEGIN {
            ideal = c * 1000 / d
            printf "%-34s %6d conns  %9.1f req/s  %5.1f%% of ideal  p50-delay %8.2f ms  p99-delay %8.2f ms  RSS %5d MB  %s\n",
                n, c, r, 100 * r / ideal, p50 - d, p99 - d, m, e }'
    else
        printf "%-34s %6d conns  %9.1f req/s  p50 %6.2f ms  p99 %6.2f ms  RSS %5d MB  %s\n" \
            "$name" "$conns" "$rps" "$p50" "$p99" "$rss" "$errors"
    fi
    echo "$rps" >"$work/last_rps"
}

threads_named() { # pid prefix: how many of the process's threads have a name starting so
    cat /proc/"$1"/task/*/comm 2>/dev/null | grep -c "^$2" || true
}

echo "# chokepoint mock vs WireMock $wiremock_version, wrk keep-alive, ${duration}s per run, $(nproc) cores, $(date -u +%FT%TZ)"

# --- chokepoint mock, 100 ms ---
port=$(free_port)
"$bin" mock --port "$port" --mappings "$work/root" >/dev/null &
pid=$!; pids+=("$pid")
wait_for "http://127.0.0.1:$port/__admin/health"
wrk -t2 -c100 -d3s "http://127.0.0.1:$port/" >/dev/null 2>&1 || true
for c in $levels; do run "chokepoint mock" "$pid" "http://127.0.0.1:$port/" "$c" 100; done
kill "$pid"; wait "$pid" 2>/dev/null || true

# --- WireMock, default and async without journal ---
for variant in default async; do
    port=$(free_port)
    extra=()
    [[ $variant == async ]] && extra=(--async-response-enabled true --no-request-journal)
    java -jar "$jar" --port "$port" --root-dir "$work/root" --disable-banner "${extra[@]}" \
        >"$work/wiremock-$variant.log" 2>&1 &
    pid=$!; pids+=("$pid")
    wait_for "http://127.0.0.1:$port/__admin/health"
    wrk -t2 -c100 -d5s "http://127.0.0.1:$port/" >/dev/null 2>&1 || true # JIT warm-up
    name="WireMock $variant"
    [[ $variant == async ]] && name="WireMock async, no journal"
    for c in $levels; do run "$name" "$pid" "http://127.0.0.1:$port/" "$c" 100; done
    echo "  ($name: $(threads_named "$pid" qtp) Jetty 'qtp' threads after the load)"
    kill "$pid"; wait "$pid" 2>/dev/null || true
done

# --- 10,000 concurrent 1 s-delayed requests against chokepoint ---
port=$(free_port)
"$bin" mock --port "$port" --delay 1s >/dev/null &
pid=$!; pids+=("$pid")
wait_for "http://127.0.0.1:$port/__admin/health"
saved_duration=$duration
duration=$((duration < 15 ? 15 : duration))
run "chokepoint mock, 1 s delay" "$pid" "http://127.0.0.1:$port/" 10000 1000
duration=$saved_duration
echo "  (chokepoint's own count: $(curl -s "http://127.0.0.1:$port/__chokepoint/stats" |
    python3 -c 'import json,sys; s=json.load(sys.stdin); print("max in flight", s["max_in_flight"], "of", s["requests"], "requests")'))"
kill "$pid"; wait "$pid" 2>/dev/null || true

# --- 0 delay: chokepoint vs nginx, same tiny response, same load ---
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
pid=$!; pids+=("$pid")
wait_for "http://127.0.0.1:$nginx_port/"
port=$(free_port)
"$bin" mock --port "$port" >/dev/null &
cpid=$!; pids+=("$cpid")
wait_for "http://127.0.0.1:$port/__admin/health"
wrk -t2 -c100 -d3s "http://127.0.0.1:$nginx_port/" >/dev/null 2>&1 || true
wrk -t2 -c100 -d3s "http://127.0.0.1:$port/" >/dev/null 2>&1 || true
run "nginx, 0 delay" "$pid" "http://127.0.0.1:$nginx_port/" 100 0
nginx_rps=$(cat "$work/last_rps")
run "chokepoint mock, 0 delay" "$cpid" "http://127.0.0.1:$port/" 100 0
chokepoint_rps=$(cat "$work/last_rps")
awk -v a="$chokepoint_rps" -v b="$nginx_rps" 'BEGIN { printf "chokepoint / nginx at 0 delay: %.2f x (RSS of nginx is its master process only)\n", a / b }'
