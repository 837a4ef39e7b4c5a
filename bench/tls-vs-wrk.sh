#!/usr/bin/env bash
# chokepoint load against wrk over TLS: the same tiny response from nginx over HTTPS on loopback,
# the same connections and duration, two rounds interleaved. Prints requests/s and the generator's
# CPU-microseconds per request for each, and the ratio chokepoint/wrk (goal: CPU per request
# <= 1.2 x wrk's). Keep-alive first (one handshake per connection), then a new connection per
# request (chokepoint --no-keepalive; wrk sends "Connection: close"), where the handshakes are the
# cost.
#
# Usage: bench/tls-vs-wrk.sh [connections=50] [seconds=10]
# Needs Debian (apt-get) for wrk and nginx; installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
CONNS=${1:-50}
SECS=${2:-10}
WORK=$(mktemp -d /tmp/cp-bench-tls.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
export PATH="$PATH:/usr/sbin"
cargo build --release --quiet --bin chokepoint
CP=target/release/chokepoint

# A P-256 certificate for 127.0.0.1 (the handshake both tools pay), made here.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -keyout "$WORK/key.pem" -out "$WORK/cert.pem" -subj "/CN=chokepoint bench" \
  -addext "subjectAltName=IP:127.0.0.1" -addext "basicConstraints=critical,CA:FALSE" 2>/dev/null

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
  server {
    listen 127.0.0.1:$PORT ssl;
    ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
    location / { return 200 "ok\n"; }
  }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK" & PIDS+=($!)
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
URL="https://127.0.0.1:$PORT/"

# Runs a command and prints the user+sys CPU seconds it took.
cpu_of() {
  local out=$1; shift
  ( "$@" > "$out" 2>&1; times ) | tail -1 | awk '{
    split($1,u,"m"); split($2,s,"m"); sub("s","",u[2]); sub("s","",s[2]);
    print u[1]*60+u[2]+s[1]*60+s[2] }'
}

run_tool() { # tool mode -> prints "rps requests cpu_s handshakes"
  local tool=$1 mode=$2 out="$WORK/$1.out" cpu reqs rps hs
  case $tool in
    chokepoint)
      local extra=(); [ "$mode" = close ] && extra=(--no-keepalive)
      cpu=$(cpu_of "$out" $CP load "$URL" -c "$CONNS" -d "${SECS}s" --interval 3600s --no-progress \
        --cacert "$WORK/cert.pem" "${extra[@]}" --json "$WORK/cp.json")
      read -r reqs rps hs < <(python3 -c "import json;d=json.load(open('$WORK/cp.json'));print(d['requests'], d['throughput_rps'], d['tls_handshakes'])") ;;
    wrk)
      local extra=(); [ "$mode" = close ] && extra=(-H "Connection: close")
      cpu=$(cpu_of "$out" wrk -t "$(nproc)" -c "$CONNS" -d "${SECS}s" "${extra[@]}" "$URL")
      reqs=$(awk '/requests in/ {print $1}' "$out")
      rps=$(awk '/Requests\/sec/ {print $2}' "$out")
      hs="-" ;;
  esac
  echo "$rps $reqs $cpu $hs"
}

echo "# HTTPS, $CONNS connections, ${SECS}s each, two rounds interleaved, $(nproc) cores, nginx on 127.0.0.1:$PORT"
for mode in keepalive close; do
  echo
  echo "## $mode"
  printf '%-11s %5s %12s %10s %14s %11s\n' tool round req/s requests cpu-us/req handshakes
  declare -A RPS=() CPU=()
  for round in 1 2; do
    for tool in chokepoint wrk; do
      read -r rps reqs cpu hs < <(run_tool "$tool" "$mode")
      per=$(python3 -c "print(f'{1e6*$cpu/max($reqs,1):.2f}')")
      printf '%-11s %5s %12.0f %10s %14s %11s\n' "$tool" "$round" "$rps" "$reqs" "$per" "$hs"
      RPS[$tool]="${RPS[$tool]:-} $rps"; CPU[$tool]="${CPU[$tool]:-} $per"
    done
  done
  python3 - "${RPS[chokepoint]}" "${CPU[chokepoint]}" "${RPS[wrk]}" "${CPU[wrk]}" <<'PY'
import sys
mean = lambda s: sum(map(float, s.split())) / len(s.split())
cr, cc, wr, wc = (mean(a) for a in sys.argv[1:5])
print(f"mean: chokepoint {cr:.0f} req/s, {cc:.2f} cpu-us/req; wrk {wr:.0f} req/s, {wc:.2f} cpu-us/req")
print(f"chokepoint/wrk: req/s {cr/wr:.2f}, CPU per request {cc/wc:.2f} (goal <= 1.2)")
PY
done
