"""py-grpc-channel: a target built after the stream-cap rule (crates/diagnose/src/stream_cap.rs).

An HTTP/1.1 front with a thread per connection (http.server.ThreadingHTTPServer, standard
library) whose every request makes one unary gRPC call through ONE module-level
grpc.insecure_channel (grpcio, PyPI) to --downstream, with no generated code (the request and
the reply are raw protobuf bytes). The channel keeps one HTTP/2 connection to the downstream;
when the downstream advertises SETTINGS_MAX_CONCURRENT_STREAMS N, at most N calls are in flight
and the rest queue inside grpcio's C core, where every front thread waits alike (parked on the
call's condition). Against `chokepoint mock --max-concurrent-streams 8` with a delay d, the
truth by hand is 8 calls in flight, 8 / d req/s. With --pool N, a semaphore of N slots
(threading.BoundedSemaphore) is taken around each call: a pool in front of the channel, so that
at most N calls are in flight whatever the cap (below it: the pool's limit, not the cap's).

Usage: python3 server.py --port 0 --downstream 127.0.0.1:9999 [--method /demo.Greeter/SayHello]
       [--pool N]
The first stdout line is "listening on 127.0.0.1:PORT", printed after one warm-up call has
opened the channel's connection.
"""

import argparse
import contextlib
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc


def make_handler(call, slots):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the clients, not connect(), set the pace
        wbufsize = -1  # headers and body in one write (no delayed-ACK stall)

        def do_GET(self):
            try:
                with slots:
                    reply = call(b"\x0a\x03bob", timeout=60)
                status, body = 200, reply
            except grpc.RpcError as error:  # the downstream failed: say so, keep serving
                status, body = 502, f"downstream: {error.code().name}\n".encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

        def log_message(self, *args):
            pass

    return Handler


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the clients of a sweep connect at once


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--downstream", required=True, help="HOST:PORT of the gRPC server")
    parser.add_argument("--method", default="/demo.Greeter/SayHello")
    parser.add_argument("--pool", type=int, default=0, help="slots around each call (0: none)")
    args = parser.parse_args()
    slots = threading.BoundedSemaphore(args.pool) if args.pool > 0 else contextlib.nullcontext()
    channel = grpc.insecure_channel(args.downstream)
    call = channel.unary_unary(args.method)
    call(b"\x0a\x03bob", timeout=60)  # opens the channel's one connection
    server = Server(("127.0.0.1", args.port), make_handler(call, slots))
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
