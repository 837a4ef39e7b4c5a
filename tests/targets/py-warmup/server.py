"""A service still warming up: every request waits, and the wait shrinks as the service runs.

Stands for a JIT, a cache or a lazily grown pool that makes the first seconds slower than the
rest. The wait is 20 ms + 80 ms * exp(-t / 3 s), t counted from the first request, so a step that
starts on a cold service sees its latency fall from ~100 ms to ~25 ms over its first ten seconds.
ThreadingHTTPServer (a thread per connection, keep-alive), responses in one write.

    python3 server.py --port 0     # prints "listening on 127.0.0.1:PORT" first
"""
import argparse
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STARTED = None
LOCK = threading.Lock()


def wait_s():
    global STARTED
    with LOCK:
        if STARTED is None:
            STARTED = time.monotonic()
        t = time.monotonic() - STARTED
    return 0.020 + 0.080 * math.exp(-t / 3.0)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        time.sleep(wait_s())
        body = b"ok\n"
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        self.wfile.write(head + body)

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
