"""py-fastapi-sync: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these).

A FastAPI app under uvicorn, both at their defaults (one process, the asyncio loop, h11), whose
one endpoint is a plain `def` (sync): FastAPI runs it in AnyIO's worker threads
(`starlette.concurrency.run_in_threadpool` → `anyio.to_thread.run_sync`), which the default
thread limiter caps at 40 at once (`anyio.to_thread.current_default_thread_limiter()`,
40 tokens; threads named `AnyIO worker thread`, started on demand). The endpoint makes a
blocking urllib GET to the downstream, so the hidden limit is that limiter: 40 downstream
calls in flight (kind blocking-pool); further requests wait on the event loop for a token.

Usage: python3 server.py --port 0 --downstream http://127.0.0.1:9999/
The first stdout line is "listening on 127.0.0.1:PORT" (the socket is bound here and handed
to uvicorn, so the port is known before uvicorn starts). uvicorn's access log is off (a line
per request on stdout); nothing else of uvicorn, FastAPI or AnyIO is set.
"""

import argparse
import socket
import sys
import urllib.request

import uvicorn
from fastapi import FastAPI, Response


def make_app(downstream):
    app = FastAPI()

    # A plain def: FastAPI runs it in a worker thread, holding one of the limiter's tokens
    # for the whole call.
    @app.get("/")
    def call_downstream():
        with urllib.request.urlopen(downstream, timeout=30) as response:
            body = response.read()
        return Response(content=body or b"ok\n", media_type="text/plain")

    return app


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: any free port)")
    parser.add_argument("--downstream", required=True, help="URL each request calls")
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(2048)  # uvicorn's default backlog
    print(f"listening on 127.0.0.1:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(make_app(args.downstream), access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
