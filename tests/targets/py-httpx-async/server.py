"""py-httpx-async: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these).

An asyncio HTTP/1.1 server (asyncio.start_server with hand-written keep-alive parsing, as
py-asyncio-blocked does) whose handler awaits a GET to the downstream through ONE shared
httpx.AsyncClient() at its defaults: Limits(max_connections=100,
max_keepalive_connections=20), Timeout(5.0). When its 100 connections are all in use, a call
waits in the client's pool for one (it does not open more; after the 5 s pool timeout it would
fail), so the hidden limit is 100 downstream calls in flight (kind blocking-pool). It is held
by no thread: one event loop thread runs everything, and httpx is pure Python (no library of
its own in /proc/PID/maps), so from /proc only the 100 connections to the downstream show it.

Usage: python3 server.py --port 0 --downstream http://127.0.0.1:9999/
The first stdout line is "listening on 127.0.0.1:PORT".
"""

import argparse
import asyncio
import sys

import httpx

MAX_HEADER_BYTES = 64 * 1024


def make_handler(client, downstream):
    async def call_downstream():
        response = await client.get(downstream)
        return response.status_code, response.content

    async def handle_connection(reader, writer):
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                except asyncio.LimitOverrunError:
                    writer.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                                 b"Content-Length: 0\r\nConnection: close\r\n\r\n")
                    await writer.drain()
                    return
                lines = head.decode("latin-1").split("\r\n")
                request_line = lines[0].split(" ")
                if len(request_line) != 3:
                    writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                                 b"Connection: close\r\n\r\n")
                    await writer.drain()
                    return
                version = request_line[2]
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0") or "0")
                if length > 0:
                    await reader.readexactly(length)
                connection = headers.get("connection", "").lower()
                keep_alive = ((connection != "close") if version == "HTTP/1.1"
                              else (connection == "keep-alive"))

                try:
                    status, body = await call_downstream()
                    status_line = b"HTTP/1.1 200 OK" if status == 200 else b"HTTP/1.1 502 Bad Gateway"
                    body = body or b"ok\n"
                except httpx.HTTPError as error:  # a pool timeout among them: say so, keep serving
                    status_line = b"HTTP/1.1 502 Bad Gateway"
                    body = f"downstream: {type(error).__name__}: {error}\n".encode()

                response = [
                    status_line,
                    b"Content-Type: text/plain",
                    b"Content-Length: " + str(len(body)).encode(),
                    b"Connection: " + (b"keep-alive" if keep_alive else b"close"),
                    b"",
                    body,
                ]
                writer.write(b"\r\n".join(response))
                await writer.drain()
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    return handle_connection


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: any free port)")
    parser.add_argument("--downstream", required=True, help="URL each request calls")
    args = parser.parse_args()
    # One client for the whole service, at its defaults, as httpx's documentation advises.
    async with httpx.AsyncClient() as client:
        server = await asyncio.start_server(make_handler(client, args.downstream), "127.0.0.1",
                                            args.port, limit=MAX_HEADER_BYTES, backlog=1024)
        port = server.sockets[0].getsockname()[1]
        print(f"listening on 127.0.0.1:{port}", flush=True)
        async with server:
            await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
