"""py-asyncio-blocked: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these).

An asyncio HTTP/1.1 server (standard library only) whose handler makes ONE synchronous call,
time.sleep(0.05), standing for a synchronous database or HTTP client used from async code. The
call blocks the event loop, so the whole server handles one request at a time: the hidden limit
is 1 (kind blocking-pool), about 20 requests/s whatever the number of clients.

Usage: python3 server.py --port 0
The first stdout line is "listening on 127.0.0.1:PORT".
"""

import argparse
import asyncio
import sys
import time

BLOCKING_CALL_S = 0.05
MAX_HEADER_BYTES = 64 * 1024


def blocking_downstream_call():
    # A synchronous client called from a coroutine: nothing else on the loop runs meanwhile.
    time.sleep(BLOCKING_CALL_S)


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
            keep_alive = (connection != "close") if version == "HTTP/1.1" else (connection == "keep-alive")

            blocking_downstream_call()

            body = b"ok\n"
            response = [
                b"HTTP/1.1 200 OK",
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


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: any free port)")
    args = parser.parse_args()
    server = await asyncio.start_server(handle_connection, "127.0.0.1", args.port,
                                        limit=MAX_HEADER_BYTES, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(f"listening on 127.0.0.1:{port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
