#!/usr/bin/env bash
# node-dns-lookup with a resolver of its own: dns.py on a loopback address of 127.0.53.0/24
# (DNS_ADDRESS, default 127.0.53.1), answering after DNS_DELAY ms (default 100), and server.js
# in a private mount namespace whose /etc/resolv.conf names only it (root: unshare and mount).
# The service's name for the downstream, downstream.chokepoint.test, resolves to 127.0.0.1.
#
# Usage: tests/targets/node-dns-lookup/run.sh --port 0 --downstream-port PORT
# The first stdout line is node's "listening on 127.0.0.1:PORT". Ends both on SIGTERM.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
port=0 downstream_port=
while [ $# -gt 0 ]; do
  case $1 in
    --port) port=$2; shift 2 ;;
    --downstream-port) downstream_port=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1 (usage: --port N --downstream-port N)" >&2; exit 2 ;;
  esac
done
[ -n "$downstream_port" ] || { echo "run.sh: --downstream-port is required" >&2; exit 2; }
address=${DNS_ADDRESS:-127.0.53.1}
work=$(mktemp -d /tmp/node-dns-lookup.XXXXXX)
printf 'nameserver %s\noptions timeout:5 attempts:1\n' "$address" > "$work/resolv.conf"
python3 "$here/dns.py" --address "$address" --delay "${DNS_DELAY:-100}" > "$work/dns.log" 2>&1 &
dns=$!
trap 'kill "$dns" "${node:-}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 0' TERM INT
for _ in $(seq 50); do grep -q "^dns on" "$work/dns.log" && break; sleep 0.1; done
grep -q "^dns on" "$work/dns.log" || { cat "$work/dns.log" >&2; exit 1; }
unshare --mount --propagation private sh -c \
  'mount --bind "$0" /etc/resolv.conf && exec node "$1" --port "$2" --downstream "$3"' \
  "$work/resolv.conf" "$here/server.js" "$port" "http://downstream.chokepoint.test:$downstream_port/" &
node=$!
wait "$node"
