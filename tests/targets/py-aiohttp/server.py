"""py-aiohttp: a target of the tuning set, built AFTER the connection-pool place rule to test it.

An aiohttp web service whose handler calls a downstream through one shared
`aiohttp.ClientSession()` at its defaults: `TCPConnector(limit=100, limit_per_host=0)`. One
thread, one event loop; no thread waits for anything, the coroutines past the 100th connection
queue inside the connector. The hidden limit is 100 calls in flight (100 connections to the
downstream, kept alive), about 100 / delay requests a second.

Usage: python3 server.py --port 0 --downstream URL
The first stdout line is "listening on 127.0.0.1:PORT".
"""

import argparse
import asyncio
import socket
import sys

import aiohttp
from aiohttp import web


async def main(port, downstream):
    session = aiohttp.ClientSession()  # the defaults: TCPConnector(limit=100)

    async def handle(request):
        async with session.get(downstream) as response:
            await response.read()
            status = response.status
        return web.Response(text=f"downstream said {status}\n")

    app = web.Application()
    app.router.add_get("/", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1024)
    site = web.SockSite(runner, listener)
    await site.start()
    print(f"listening on 127.0.0.1:{listener.getsockname()[1]}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await session.close()
        await runner.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--downstream", required=True)
    args = parser.parse_args()
    try:
        asyncio.run(main(args.port, args.downstream))
    except KeyboardInterrupt:
        sys.exit(0)
