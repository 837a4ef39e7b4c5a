"""A pre-fork HTTP server: the parent binds, forks --workers children that accept on the shared
socket, and only waits for them (as nginx's master, Apache's prefork, gunicorn do). Each request
costs --cpu-ms of CPU in the worker (sha256 rounds), no downstream call, so the limit is CPU:
at most --workers requests in service at once, each burning a core.

    python3 server.py --port 0 --workers 2 --cpu-ms 5

The first line on stdout is "listening on 127.0.0.1:PORT" (printed by the parent, before the
fork). Python 3 standard library only.
"""
import argparse
import ctypes
import hashlib
import os
import signal
import socket
import sys
import time


def burn(cpu_ms):
    """CPU work for cpu_ms of this process's CPU time."""
    end = time.process_time() + cpu_ms / 1000.0
    digest = b"chokepoint"
    while time.process_time() < end:
        for _ in range(200):
            digest = hashlib.sha256(digest).digest()
    return digest


def serve(listener, cpu_ms):
    """One worker: accept, answer one request, close (so that every client gets its turn at a
    worker, as with keep-alive off), until killed. A client that resets is skipped."""
    while True:
        conn, _ = listener.accept()
        with conn:
            try:
                buffer = b""
                while b"\r\n\r\n" not in buffer:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    buffer += chunk
                if b"\r\n\r\n" not in buffer:
                    continue
                body = burn(cpu_ms).hex()[:16].encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s"
                    % (len(body), body)
                )
            except OSError:
                continue


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cpu-ms", type=float, default=5.0)
    args = parser.parse_args()
    if args.workers < 1 or args.cpu_ms <= 0:
        print("--workers must be at least 1 and --cpu-ms above 0", file=sys.stderr)
        sys.exit(2)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(1024)
    print(f"listening on 127.0.0.1:{listener.getsockname()[1]}", flush=True)
    children = []
    for _ in range(args.workers):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            # Die with the parent, however it ends (a test kills it with SIGKILL).
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
            serve(listener, args.cpu_ms)
            os._exit(0)
        children.append(pid)

    def stop(*_):
        for child in children:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # The parent only waits: its own CPU is nil, its workers' is the target's.
    while children:
        try:
            pid, _ = os.wait()
        except ChildProcessError:
            break
        children = [c for c in children if c != pid]


if __name__ == "__main__":
    main()
