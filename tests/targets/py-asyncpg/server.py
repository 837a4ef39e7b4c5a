"""py-asyncpg: a target of the tuning set, built AFTER the connection-pool place rule to test it
against a database downstream.

An aiohttp web service whose handler runs one query through an asyncpg pool at its defaults:
`asyncpg.create_pool(dsn)` is `min_size=10, max_size=10`. The query is `SELECT pg_sleep(d)`, so
each request holds one of the pool's connections for d seconds. One thread, one event loop; the
coroutines past the 10th wait inside the pool (`Pool.acquire`), holding no thread and no socket.
The hidden limit is 10 queries in flight: about 10 / d requests a second (100 at d = 0.1 s).

Usage: python3 server.py --port 0 --dsn postgresql://postgres@127.0.0.1:PORT/postgres [--sleep 0.1]
The first stdout line is "listening on 127.0.0.1:PORT".
"""

import argparse
import asyncio
import socket
import sys

import asyncpg
from aiohttp import web


async def main(port, dsn, sleep):
    pool = await asyncpg.create_pool(dsn)  # the defaults: min_size=10, max_size=10

    async def handle(request):
        async with pool.acquire() as connection:
            await connection.execute("SELECT pg_sleep($1)", sleep)
        return web.Response(text="slept\n")

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
        await pool.close()
        await runner.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--sleep", type=float, default=0.1)
    args = parser.parse_args()
    try:
        asyncio.run(main(args.port, args.dsn, args.sleep))
    except KeyboardInterrupt:
        sys.exit(0)
