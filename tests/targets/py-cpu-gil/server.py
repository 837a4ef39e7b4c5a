"""py-cpu-gil: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these).

http.server.ThreadingHTTPServer (a thread per connection, standard library only) whose handler
does about 20 ms of pure-Python CPU work per request (a loop, calibrated at start). The threads
share one interpreter lock, so only one of them computes at a time however many there are: the
hidden limit is 1 request in service (about 50 req/s), and the limit is the CPU (kind cpu-bound),
one core's worth of it.

Usage: python3 server.py --port 0 [--work-ms 20]
The first stdout line is "listening on 127.0.0.1:PORT".
"""

import argparse
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def spin(iterations):
    """Pure-Python CPU work that holds the GIL; returns a value so it is not optimised away."""
    total = 0
    for i in range(iterations):
        total = (total + i * i) % 1000003
    return total


def calibrate(work_ms):
    """Iterations of `spin` that cost `work_ms` of this thread's CPU time.

    The fastest of several trials is kept: on a busy machine a trial can only be slowed down
    (by being preempted), and the thread CPU clock already leaves out time spent off the CPU.
    """
    trial = 20_000
    best = float("inf")
    for _ in range(7):
        started = time.thread_time()
        spin(trial)
        best = min(best, time.thread_time() - started)
    per_iteration = max(best, 1e-9) / trial
    return max(1, int(work_ms / 1000.0 / per_iteration))


def make_handler(iterations):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the clients, not connect(), set the pace
        # Buffer the response so headers and body leave in one write (flushed after each
        # request); two small writes meet the client's delayed ACK and add ~40 ms per request.
        wbufsize = -1

        def do_GET(self):
            length = int(self.headers.get("Content-Length", "0") or "0")
            if length:
                self.rfile.read(length)
            body = f"ok {spin(iterations)}\n".encode()
            self.send_response(200)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: any free port)")
    parser.add_argument(
        "--work-ms", type=float, default=20.0, help="CPU time each request burns (ms, > 0)"
    )
    args = parser.parse_args()
    if not args.work_ms > 0:
        parser.error(f"--work-ms must be a positive number of milliseconds, not {args.work_ms}")
    iterations = calibrate(args.work_ms)
    server = Server(("127.0.0.1", args.port), make_handler(iterations))
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    print(f"{iterations} iterations per request (~{args.work_ms:g} ms of CPU)", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
