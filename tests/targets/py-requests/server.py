"""py-requests: a target of the tuning set, built AFTER the catalogue's urllib3 entry to test it
live.

The standard library's ThreadingHTTPServer (a thread per connection, no cap of its own) whose
handler calls `--downstream` through one shared `requests.Session`:
- by default the Session's own adapters, requests' defaults: `pool_maxsize=10, pool_block=False`.
  A call that finds the pool's 10 connections busy opens one more and closes it after use, so
  the pool caps nothing: the downstream sees every call the clients make;
- with `--pool-block`, `HTTPAdapter(pool_maxsize=10, pool_block=True)` mounted for http://, the
  way requests' documentation caps a Session: the threads past the 10th wait in urllib3's
  `HTTPConnectionPool._get_conn` (a `queue.LifoQueue.get`, a lock) for a connection to come
  back. The hidden limit: 10 calls in flight, 10 / d requests a second at a downstream delay d.

Usage: python3 server.py --port 0 --downstream URL [--pool-block] [--pool-size 10]
The first stdout line is "listening on 127.0.0.1:PORT".
"""

import argparse
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests
from requests.adapters import HTTPAdapter


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--downstream", required=True)
    parser.add_argument("--pool-block", action="store_true")
    parser.add_argument("--pool-size", type=int, default=10)
    args = parser.parse_args()
    if not args.downstream.startswith(("http://", "https://")):
        parser.error(f"--downstream must be an http:// or https:// URL, got {args.downstream}")
    session = requests.Session()
    if args.pool_block:
        adapter = HTTPAdapter(pool_maxsize=args.pool_size, pool_block=True)
        session.mount("http://", adapter)
    downstream = args.downstream

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            try:
                answer = session.get(downstream, timeout=30)
                status, body = 200, f"downstream said {answer.status_code}\n".encode()
            except requests.RequestException as e:
                status, body = 502, f"downstream failed: {e}\n".encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 1024

        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], ConnectionError):
                super().handle_error(request, client_address)  # a client gone is no error

    server = Server(("127.0.0.1", args.port), Handler)
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
