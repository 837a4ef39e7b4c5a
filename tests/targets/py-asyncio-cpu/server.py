"""py-asyncio-cpu: built after the busy-machine rule (crates/diagnose/src/busy.rs), to test it.

An asyncio HTTP/1.1 server (standard library only): every request burns about --work-ms of
pure-Python CPU on the event loop, then makes one GET to --downstream over a kept-alive
connection of its own (asyncio streams; a connection per call in flight, reused, no cap), and
answers 200 when the downstream has answered. The downstream calls overlap freely, so the only
limit is the one core the loop runs on: about 1000 / work_ms requests/s when it gets that core
whole, less when other processes take it. Kind cpu-bound, one core; on a machine other
processes keep busy, machine-saturated is the honest reading, and a pool of any size is wrong.

Usage: python3 server.py --port 0 --downstream URL [--work-ms 4]
The first stdout line is "listening on 127.0.0.1:PORT".
"""

import argparse
import asyncio
import sys
import time
import urllib.parse


def calibrate():
    """Rounds of `spin` per ms of CPU, the fastest of several trials (a busy machine only slows one)."""
    rounds, best = 20000, float("inf")
    for _ in range(7):
        start = time.process_time()
        spin(rounds)
        best = min(best, time.process_time() - start)
    return rounds / max(best * 1000.0, 0.01)


def spin(rounds):
    x = 1
    for _ in range(rounds):
        x = (x * 1103515245 + 12345) % 2147483648
    return x


class Downstream:
    """Idle kept-alive connections to the downstream, one more opened whenever none is idle."""

    def __init__(self, url):
        self.host = url.hostname
        self.port = url.port or 80
        self.path = url.path or "/"
        self.idle = []

    async def get(self):
        if self.idle:
            reader, writer = self.idle.pop()
        else:
            reader, writer = await asyncio.open_connection(self.host, self.port)
        writer.write(f"GET {self.path} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.decode("latin-1").split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length:
            await reader.readexactly(length)
        self.idle.append((reader, writer))
        return int(head.split(b" ", 2)[1])


async def handle(reader, writer, downstream, rounds):
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
                return
            for line in head.decode("latin-1").split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length" and int(value.strip()) > 0:
                    await reader.readexactly(int(value.strip()))
            spin(rounds)
            try:
                status = await downstream.get()
                body = b"ok\n" if status == 200 else b"downstream error\n"
                code = b"200 OK" if status == 200 else b"502 Bad Gateway"
            except (OSError, asyncio.IncompleteReadError, ValueError):
                body, code = b"downstream unreachable\n", b"502 Bad Gateway"
            writer.write(b"HTTP/1.1 " + code + b"\r\nContent-Length: " + str(len(body)).encode()
                         + b"\r\nContent-Type: text/plain\r\n\r\n" + body)
            await writer.drain()
    finally:
        writer.close()


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--downstream", required=True)
    parser.add_argument("--work-ms", type=float, default=4.0)
    args = parser.parse_args()
    url = urllib.parse.urlsplit(args.downstream)
    if url.scheme != "http" or not url.hostname:
        parser.error(f"--downstream must be an http:// URL, got {args.downstream}")
    rounds = int(calibrate() * args.work_ms)
    downstream = Downstream(url)
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, downstream, rounds), "127.0.0.1", args.port, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(f"listening on 127.0.0.1:{port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
