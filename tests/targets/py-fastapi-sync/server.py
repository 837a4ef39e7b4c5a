"""py-fastapi-sync: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these).

A FastAPI app under uvicorn, both at their defaults (one process, the asyncio loop, h11), whose
one endpoint is a plain `def` (sync): FastAPI runs it in AnyIO's worker threads
(`starlette.concurrency.run_in_threadpool` → `anyio.to_thread.run_sync`), which the default
thread limiter caps at 40 at once (`anyio.to_thread.current_default_thread_limiter()`,
40 tokens; threads named `AnyIO worker thread`, started on demand). The endpoint makes a
blocking urllib GET to the downstream, so the hidden limit is that limiter: 40 downstream
calls in flight (kind blocking-pool); further requests wait on the event loop for a token.

With `--thread-limit N` the app raises the limiter to N tokens when it starts (in its
lifespan, the way AnyIO's docs say), as users do once they find the 40: the worker threads
then grow on demand, a thread per request in the call, up to N (kind growing-pool while N is
more than the clients; the CPU, under the GIL, stops them).

Usage: python3 server.py --port 0 --downstream http://127.0.0.1:9999/ [--thread-limit N]
The first stdout line is "listening on 127.0.0.1:PORT" (the socket is bound here and handed
to uvicorn, so the port is known before uvicorn starts). uvicorn's access log is off (a line
per request on stdout); nothing else of uvicorn, FastAPI or AnyIO is set.
"""

import argparse
import contextlib
import socket
import sys
import urllib.request

import anyio.to_thread
import uvicorn
from fastapi import FastAPI, Response


def make_app(downstream, thread_limit):
    @contextlib.asynccontextmanager
    async def lifespan(_app):
        if thread_limit is not None:
            anyio.to_thread.current_default_thread_limiter().total_tokens = thread_limit
        yield

    app = FastAPI(lifespan=lifespan)

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
    parser.add_argument(
        "--thread-limit",
        type=int,
        default=None,
        help="raise AnyIO's default thread limiter to N tokens (default: AnyIO's 40)",
    )
    args = parser.parse_args()
    if args.thread_limit is not None and args.thread_limit < 1:
        parser.error(f"--thread-limit must be at least 1, not {args.thread_limit}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(2048)  # uvicorn's default backlog
    print(f"listening on 127.0.0.1:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(make_app(args.downstream, args.thread_limit), access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
