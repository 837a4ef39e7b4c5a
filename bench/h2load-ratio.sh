#!/usr/bin/env bash
# chokepoint load --http2 against h2load (nghttp2) over HTTP/2: the same tiny response from
# nginx on loopback, over h2 (TLS, ALPN) and h2c (prior knowledge), the same connections, the
# same streams per connection and the same duration, two rounds interleaved. Prints requests/s
# and the generator's CPU-microseconds per request (user+sys of the process, from the shell's
# `times`) for each, and the ratios chokepoint/h2load (goal: CPU per request <= 1.2 x h2load's).
# h2load's -c CONNS -m STREAMS is chokepoint's --connections CONNS -c CONNS*STREAMS.
#
# Usage: flock /tmp/measure.lock bench/h2load-ratio.sh [connections=1] [streams=32] [seconds=10]
# Needs Debian (apt-get) for h2load (nghttp2-client) and nginx; installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
CONNS=${1:-1}
STREAMS=${2:-32}
SECS=${3:-10}
WORK=$(mktemp -d /tmp/cp-bench-h2.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

need=()
command -v h2load >/dev/null || need+=(nghttp2-client)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
export PATH="$PATH:/usr/sbin"
cargo build --release --quiet --bin chokepoint
CP=${CARGO_TARGET_DIR:-target}/release/chokepoint

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -keyout "$WORK/key.pem" -out "$WORK/cert.pem" -subj "/CN=chokepoint bench" \
  -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null

# nginx: one worker (the generator gets the other core), a 3-byte body, connections kept (no
# GOAWAY after keepalive_requests), streams up to the most either tool opens.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
TLS_PORT=$(free_port)
H2C_PORT=$(free_port)
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
  http2_max_concurrent_streams 1024;
  client_body_temp_path $WORK; proxy_temp_path $WORK; fastcgi_temp_path $WORK;
  uwsgi_temp_path $WORK; scgi_temp_path $WORK;
  server {
    listen 127.0.0.1:$TLS_PORT ssl http2;
    ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
    location / { return 200 "ok\n"; }
  }
  server {
    listen 127.0.0.1:$H2C_PORT http2;
    location / { return 200 "ok\n"; }
  }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK" & PIDS+=($!)
for port in $TLS_PORT $H2C_PORT; do
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
done

# Runs a command and prints the user+sys CPU seconds it took.
cpu_of() {
  local out=$1; shift
  ( "$@" > "$out" 2>&1; times ) | tail -1 | awk '{
    split($1,u,"m"); split($2,s,"m"); sub("s","",u[2]); sub("s","",s[2]);
    print u[1]*60+u[2]+s[1]*60+s[2] }'
}

CORES=$(nproc)
THREADS=$(( CONNS < CORES ? CONNS : CORES ))
run_tool() { # tool url -> prints "rps requests cpu_s failed"
  local tool=$1 url=$2 out="$WORK/$1.out" cpu reqs rps failed
  case $tool in
    chokepoint)
      cpu=$(cpu_of "$out" "$CP" load "$url" --http2 --connections "$CONNS" -c $(( CONNS * STREAMS )) \
        -d "${SECS}s" --interval 3600s --no-progress --cacert "$WORK/cert.pem" --json "$WORK/cp.json")
      read -r reqs rps failed < <(python3 -c "import json;d=json.load(open('$WORK/cp.json'));print(d['requests'], d['throughput_rps'], d['requests']-d['ok'])") ;;
    h2load)
      cpu=$(cpu_of "$out" h2load -c "$CONNS" -m "$STREAMS" -t "$THREADS" -D "$SECS" "$url")
      reqs=$(awk '/^requests:/ {print $8}' "$out")    # succeeded
      failed=$(awk '/^requests:/ {print $10}' "$out")
      rps=$(awk '/^finished in/ {print $4}' "$out") ;;
  esac
  echo "$rps $reqs $cpu $failed"
}

echo "# HTTP/2, $CONNS connection(s) x $STREAMS streams, ${SECS}s each, two rounds interleaved, $CORES cores, nginx (1 worker)"
for proto in h2 h2c; do
  if [ "$proto" = h2 ]; then url="https://127.0.0.1:$TLS_PORT/"; else url="http://127.0.0.1:$H2C_PORT/"; fi
  echo
  echo "## $proto ($url)"
  printf '%-11s %5s %12s %10s %14s %7s\n' tool round req/s requests cpu-us/req failed
  declare -A RPS=() CPU=()
  for round in 1 2; do
    for tool in chokepoint h2load; do
      read -r rps reqs cpu failed < <(run_tool "$tool" "$url")
      per=$(python3 -c "print(f'{1e6*$cpu/max($reqs,1):.2f}')")
      printf '%-11s %5s %12.0f %10s %14s %7s\n' "$tool" "$round" "${rps//,/}" "$reqs" "$per" "$failed"
      RPS[$tool]="${RPS[$tool]:-} ${rps//,/}"; CPU[$tool]="${CPU[$tool]:-} $per"
    done
  done
  python3 - "${RPS[chokepoint]}" "${CPU[chokepoint]}" "${RPS[h2load]}" "${CPU[h2load]}" <<'PY'
import sys
mean = lambda s: sum(map(float, s.split())) / len(s.split())
cr, cc, hr, hc = (mean(a) for a in sys.argv[1:5])
print(f"mean: chokepoint {cr:.0f} req/s, {cc:.2f} cpu-us/req; h2load {hr:.0f} req/s, {hc:.2f} cpu-us/req")
print(f"chokepoint/h2load: req/s {cr/hr:.2f}, CPU per request {cc/hc:.2f} (goal <= 1.2)")
PY
  unset RPS CPU
done
