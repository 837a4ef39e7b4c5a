"""py-threadpool: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these).

http.server.ThreadingHTTPServer (a thread per connection, standard library only) hands every
request to a fixed concurrent.futures.ThreadPoolExecutor of 6 workers, and each worker makes a
blocking HTTP GET to a downstream URL with urllib. The connection threads wait for the worker's
result, so the hidden limit is the executor: 6 downstream calls in flight at once (kind
blocking-pool).

Usage: python3 server.py [--host 127.0.0.1] --port 0 --downstream http://127.0.0.1:9999/
       [--tls-cert cert.pem --tls-key key.pem] [--downstream-ca ca.pem] [--default-executor]
With --default-executor the executor takes the standard library's defaults instead:
ThreadPoolExecutor() has min(32, cores + 4) workers named ThreadPoolExecutor-N_M.
With --tls-cert/--tls-key it serves HTTPS (the handshake in the connection's thread); an https://
downstream is checked against --downstream-ca (a new TLS connection per call, as urllib does).
The first stdout line is "listening on HOST:PORT" (HOST as given, 127.0.0.1 by default).
"""

import argparse
import ssl
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORKERS = 6


def make_handler(executor, downstream, downstream_tls):
    def call_downstream():
        with urllib.request.urlopen(downstream, timeout=30, context=downstream_tls) as response:
            response.read()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the clients, not connect(), set the pace
        # Buffer the response so headers and body leave in one write (flushed after each
        # request); two small writes meet the client's delayed ACK and add ~40 ms per request.
        wbufsize = -1

        def do_GET(self):
            length = int(self.headers.get("Content-Length", "0") or "0")
            if length:
                self.rfile.read(length)
            try:
                executor.submit(call_downstream).result()
                status, body = 200, b"ok\n"
            except Exception as error:  # the downstream failed: say so, keep serving
                status, body = 502, f"downstream: {error}\n".encode()
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: any free port)")
    parser.add_argument("--downstream", required=True, help="URL each worker calls")
    parser.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    parser.add_argument("--tls-key", help="the certificate's private key (PEM)")
    parser.add_argument("--downstream-ca", help="CA certificate (PEM) of an https:// downstream")
    parser.add_argument(
        "--workers", type=int, default=WORKERS, help="workers of the pool (default 6)"
    )
    parser.add_argument(
        "--default-executor",
        action="store_true",
        help="ThreadPoolExecutor() with its defaults (min(32, cores + 4) workers)",
    )
    args = parser.parse_args()
    downstream_tls = None
    if args.downstream_ca:
        downstream_tls = ssl.create_default_context(cafile=args.downstream_ca)
    if args.default_executor:
        executor = ThreadPoolExecutor()
    else:
        executor = ThreadPoolExecutor(max_workers=args.workers, thread_name_prefix="worker")
    server = Server(
        (args.host, args.port), make_handler(executor, args.downstream, downstream_tls)
    )
    if args.tls_cert:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = tls.wrap_socket(
            server.socket, server_side=True, do_handshake_on_connect=False
        )
    print(f"listening on {args.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
