#!/usr/bin/env bash
# chokepoint load against wrk, ab -k and hey: the same tiny keep-alive nginx response on loopback,
# the same connections and duration, two rounds interleaved. Prints requests/s and the generator's
# CPU-microseconds per request for each, and the ratios chokepoint/peer. Then holds 10,000
# keep-alive clients against a slow target (chokepoint mock --delay) and reports resident memory.
#
# Usage: bench/load-vs-peers.sh [connections=50] [seconds=10]
# Needs Debian (apt-get) for wrk, apache2-utils and nginx, and Go for hey; installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
CONNS=${1:-50}
SECS=${2:-10}
WORK=$(mktemp -d /tmp/cp-bench.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v ab >/dev/null || need+=(apache2-utils)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
export PATH="$PATH:/usr/sbin:$(go env GOPATH 2>/dev/null)/bin"
command -v hey >/dev/null || go install github.com/rakyll/hey@latest
cargo build --release --quiet --bin chokepoint
CP=target/release/chokepoint

# nginx: one worker (the generator gets the other core), a 3-byte body, keep-alive forever.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 20000; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  client_body_temp_path $WORK; proxy_temp_path $WORK; fastcgi_temp_path $WORK;
  uwsgi_temp_path $WORK; scgi_temp_path $WORK;
  server { listen 127.0.0.1:$PORT; location / { return 200 "ok\n"; } }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK" & PIDS+=($!)
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
URL="http://127.0.0.1:$PORT/"

# Runs a command and prints "<user+sys CPU seconds of the command>" on fd 3's file.
cpu_of() {
  local out=$1; shift
  ( "$@" > "$out" 2>&1; times ) | tail -1 | awk '{
    split($1,u,"m"); split($2,s,"m"); sub("s","",u[2]); sub("s","",s[2]);
    print u[1]*60+u[2]+s[1]*60+s[2] }'
}

run_tool() { # tool -> prints "rps requests cpu_s"
  local tool=$1 out="$WORK/$1.out" cpu reqs rps
  case $tool in
    chokepoint)
      cpu=$(cpu_of "$out" $CP load "$URL" -c "$CONNS" -d "${SECS}s" --interval 3600s --no-progress --json "$WORK/cp.json")
      reqs=$(python3 -c "import json;print(json.load(open('$WORK/cp.json'))['requests'])")
      rps=$(python3 -c "import json;print(json.load(open('$WORK/cp.json'))['throughput_rps'])") ;;
    wrk)
      cpu=$(cpu_of "$out" wrk -t "$(nproc)" -c "$CONNS" -d "${SECS}s" "$URL")
      reqs=$(awk '/requests in/ {print $1}' "$out")
      rps=$(awk '/Requests\/sec/ {print $2}' "$out") ;;
    ab)
      cpu=$(cpu_of "$out" ab -k -q -c "$CONNS" -t "$SECS" -n 100000000 "$URL")
      reqs=$(awk '/Complete requests/ {print $3}' "$out")
      rps=$(awk '/Requests per second/ {print $4}' "$out") ;;
    hey)
      cpu=$(cpu_of "$out" hey -z "${SECS}s" -c "$CONNS" "$URL")
      reqs=$(awk '/\[200\]/ {print $2}' "$out")
      rps=$(awk '/Requests\/sec/ {print $2}' "$out") ;;
  esac
  echo "$rps $reqs $cpu"
}

echo "# $CONNS connections, ${SECS}s each, two rounds interleaved, $(nproc) cores, nginx on 127.0.0.1:$PORT"
printf '%-11s %5s %12s %10s %14s\n' tool round req/s requests cpu-us/req
declare -A RPS CPU
for round in 1 2; do
  for tool in chokepoint wrk ab hey; do
    read -r rps reqs cpu < <(run_tool "$tool")
    per=$(python3 -c "print(f'{1e6*$cpu/max($reqs,1):.2f}')")
    printf '%-11s %5s %12.0f %10s %14s\n' "$tool" "$round" "$rps" "$reqs" "$per"
    RPS[$tool]="${RPS[$tool]:-} $rps"; CPU[$tool]="${CPU[$tool]:-} $per"
  done
done
mean() { python3 -c "import sys; v=[float(x) for x in sys.argv[1:]]; print(sum(v)/len(v))" $1; }
echo
printf '%-11s %12s %14s %16s %16s\n' tool 'mean req/s' 'mean cpu-us/req' 'cp/peer req/s' 'cp/peer cpu/req'
CP_RPS=$(mean "${RPS[chokepoint]}"); CP_CPU=$(mean "${CPU[chokepoint]}")
for tool in chokepoint wrk ab hey; do
  r=$(mean "${RPS[$tool]}"); c=$(mean "${CPU[$tool]}")
  python3 -c "print(f'{\"$tool\":<11} {$r:>12.0f} {$c:>14.2f} {$CP_RPS/$r:>16.2f} {$CP_CPU/$c:>16.2f}')"
done

# 10,000 keep-alive clients against a slow target: resident memory of the generator.
echo
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
MOCK_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
$CP mock --port "$MOCK_PORT" --delay 2s > "$WORK/mock.out" 2>&1 & PIDS+=($!)
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$MOCK_PORT) 2>/dev/null && break; sleep 0.1; done
rss_of() { # clients -> "peak-RSS-kB requests"
  $CP load "http://127.0.0.1:$MOCK_PORT/" -c "$1" -d 12s --timeout 30s --interval 3600s --no-progress \
    --json "$WORK/mem.json" > "$WORK/mem.out" 2>&1 &
  local pid=$! peak=0
  for _ in $(seq 24); do
    sleep 0.5
    local rss; rss=$(awk '/VmHWM/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
    [ "${rss:-0}" -gt "$peak" ] && peak=$rss
  done
  wait $pid || true
  echo "$peak $(python3 -c "import json;d=json.load(open('$WORK/mem.json'));print(d['requests'], d['connections_opened'], sum(d['errors'].values()))")"
}
read -r base_kb _ < <(rss_of 1)
read -r big_kb reqs conns errs < <(rss_of 10000)
python3 -c "
base, big = $base_kb/1024, $big_kb/1024
print(f'10,000 keep-alive clients, 2 s delay, 12 s: peak RSS {big:.1f} MB (1 client: {base:.1f} MB)')
print(f'  per client: {1024*(big-base)/10000:.1f} KB above the 1-client run; {$reqs} requests, {$conns} connections, {$errs} errors')"
