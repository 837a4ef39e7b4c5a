"""py-pool-timeout: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these).

http.server.ThreadingHTTPServer (a thread per connection, standard library only) guards its work
with a bulkhead: a threading.BoundedSemaphore of 8 whose acquire waits at most 0.25 s. With a
slot, a request holds it for 100 ms (a sleep standing for a call elsewhere) and answers 200;
a request that waited 0.25 s without getting one answers 503. The hidden limit is 8 in service
(about 80 req/s); past it callers queue, and once the queue is longer than the wait allows
(about 8 × (1 + 0.25 / 0.1) = 28 clients) requests fail after the fixed 0.25 s wait.

Usage: python3 server.py --port 0 [--slots 8] [--hold-ms 100] [--wait-ms 250]
The first stdout line is "listening on 127.0.0.1:PORT".
"""

import argparse
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def make_handler(slots, hold_s, wait_s):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the clients, not connect(), set the pace
        # Buffer the response so headers and body leave in one write (flushed after each
        # request); two small writes meet the client's delayed ACK and add ~40 ms per request.
        wbufsize = -1

        def do_GET(self):
            length = int(self.headers.get("Content-Length", "0") or "0")
            if length:
                self.rfile.read(length)
            if slots.acquire(timeout=wait_s):
                try:
                    time.sleep(hold_s)
                finally:
                    slots.release()
                status, body = 200, b"ok\n"
            else:
                status, body = 503, b"no slot within the wait\n"
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            if self.headers.get("Connection", "").lower() == "keep-alive":
                self.send_header("Connection", "keep-alive")  # HTTP/1.0 clients (ab -k) wait for it
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

        def log_message(self, format, *args):
            pass  # one line per request would cost more than the request

    return Handler


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def handle_error(self, request, client_address):
        # A load generator closes its kept-alive connections when a run ends: not worth a
        # traceback. Anything else is still printed.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def positive(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: any free port)")
    parser.add_argument("--slots", type=positive, default=8, help="requests in service at once")
    parser.add_argument("--hold-ms", type=positive, default=100, help="how long a slot is held")
    parser.add_argument("--wait-ms", type=positive, default=250, help="longest wait for a slot")
    args = parser.parse_args()
    slots = threading.BoundedSemaphore(args.slots)
    handler = make_handler(slots, args.hold_ms / 1000.0, args.wait_ms / 1000.0)
    server = Server(("127.0.0.1", args.port), handler)
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
