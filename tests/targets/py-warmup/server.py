"""A service still warming up: every request waits, and the wait shrinks as the service runs.

Stands for a JIT, a cache or a lazily grown pool that makes the first seconds slower than the
rest. The wait is 20 ms + 80 ms * exp(-t / 3 s), t counted from the first request, so a step that
starts on a cold service sees its latency fall from ~100 ms to ~25 ms over its first ten seconds.
ThreadingHTTPServer (a thread per connection, keep-alive), responses in one write.

With --pool N --downstream URL (built after the sweep's warm-up, to test it: the shape of issue
22's JVM in front of a pool of 12 that came out `connection-limit, stalls` while warming up),
each request then calls URL holding one of N slots (a semaphore), so past the warm-up the
hidden limit is a pool of N in front of the downstream: N / (delay + 20 ms) requests a second.

    python3 server.py --port 0 [--pool 12 --downstream URL]   # prints "listening on 127.0.0.1:PORT" first
"""
import argparse
import math
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STARTED = None
LOCK = threading.Lock()
POOL = None
DOWNSTREAM = None


def wait_s():
    global STARTED
    with LOCK:
        if STARTED is None:
            STARTED = time.monotonic()
        t = time.monotonic() - STARTED
    return 0.020 + 0.080 * math.exp(-t / 3.0)


def call_downstream():
    with POOL:
        with urllib.request.urlopen(DOWNSTREAM, timeout=30) as response:
            response.read()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        time.sleep(wait_s())
        if POOL is not None:
            call_downstream()
        body = b"ok\n"
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        self.wfile.write(head + body)

    def log_message(self, *args):
        pass


def main():
    global POOL, DOWNSTREAM
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--pool", type=int, default=0)
    parser.add_argument("--downstream")
    args = parser.parse_args()
    if args.pool:
        if not args.downstream:
            parser.error("--pool needs --downstream URL")
        POOL = threading.BoundedSemaphore(args.pool)
        DOWNSTREAM = args.downstream
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
