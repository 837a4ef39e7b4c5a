"""py-lock-order: a target built after the stopped-answering rule (crates/diagnose/src/hang.rs).

http.server.ThreadingHTTPServer (a thread per connection, standard library only) whose requests
update two shared records, each guarded by its own threading.Lock, and take the two locks in an
order that depends on the request: `/` and other paths take `accounts` then `ledger`, every
second request (by a count kept under its own lock) takes `ledger` then `accounts`, each holding
its first lock while it calls the downstream (a blocking urllib GET) before taking the second.
That is the textbook lock-order deadlock: one request alone never meets another, so a single
client is answered forever; two requests at once, one of each order, each hold the lock the other
waits for, and every later request queues behind them on a lock no one releases. No lock has a
timeout (`threading.Lock.acquire()` blocks forever by default).

Truth by hand: answered at 1 client (one downstream call per request), nothing at 2 or more.

Usage: python3 server.py --port 0 --downstream http://127.0.0.1:9999/
The first stdout line is "listening on 127.0.0.1:PORT".
"""

import argparse
import itertools
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def make_handler(downstream):
    accounts = threading.Lock()
    ledger = threading.Lock()
    counter = itertools.count()
    counter_lock = threading.Lock()

    def call_downstream():
        with urllib.request.urlopen(downstream, timeout=30) as response:
            response.read()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        wbufsize = -1

        def do_GET(self):
            with counter_lock:
                n = next(counter)
            first, second = (accounts, ledger) if n % 2 == 0 else (ledger, accounts)
            with first:
                call_downstream()
                with second:
                    body = b"ok\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--downstream", required=True, help="URL each request calls")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(args.downstream))
    server.daemon_threads = True
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
