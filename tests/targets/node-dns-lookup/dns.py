"""A slow DNS server for tests/targets/node-dns-lookup: answers every A query with 127.0.0.1 and
every other query with no answer (NOERROR), each after --delay ms, each in its own thread so the
server is never the limit. UDP only, one address (a loopback one: 127.0.53.N).

Usage: python3 dns.py --address 127.0.53.1 [--port 53] [--delay 100]
The first stdout line is "dns on ADDRESS:PORT".
"""
import argparse
import socket
import struct
import sys
import threading
import time


def answer(query: bytes) -> bytes:
    """The response to `query`: its header with QR, RD and RA set, its question, and for a
    question of type A one record 127.0.0.1 (TTL 0: a resolver caches nothing)."""
    ident, _flags, qdcount = struct.unpack("!HHH", query[:6])
    end = 12
    while query[end] != 0:  # the question's name, label by label
        end += query[end] + 1
    qtype, _qclass = struct.unpack("!HH", query[end + 1 : end + 5])
    question = query[12 : end + 5]
    is_a = qdcount == 1 and qtype == 1
    header = struct.pack("!HHHHHH", ident, 0x8180, 1, 1 if is_a else 0, 0, 0)
    record = b""
    if is_a:
        record = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 0, 4) + socket.inet_aton("127.0.0.1")
    return header + question + record


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--port", type=int, default=53)
    parser.add_argument("--delay", type=float, default=100.0, help="ms before each answer")
    args = parser.parse_args()
    if not args.address.startswith("127."):
        sys.exit("dns.py: --address must be a loopback address (127.x.y.z)")
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind((args.address, args.port))
    print(f"dns on {args.address}:{args.port}", flush=True)

    def reply(query: bytes, client) -> None:
        time.sleep(args.delay / 1000)
        try:
            server.sendto(answer(query), client)
        except (OSError, IndexError, struct.error):
            pass

    while True:
        query, client = server.recvfrom(512)
        threading.Thread(target=reply, args=(query, client), daemon=True).start()


if __name__ == "__main__":
    main()
