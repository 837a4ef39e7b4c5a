"""py-sqlalchemy: a target of the tuning set, built AFTER the catalogue's SQLAlchemy and psycopg
pool entries to test them live against a database downstream.

The standard library's ThreadingHTTPServer (a thread per connection, no cap of its own) whose
handler runs one query through a pool at its defaults, on psycopg 3:
- `--pool sqlalchemy` (the default): `create_engine("postgresql+psycopg://...")`, whose pool is a
  QueuePool of `pool_size=5` plus `max_overflow=10`: at most 15 connections;
- `--pool psycopg`: `psycopg_pool.ConnectionPool(conninfo)`, `min_size=4` and `max_size` equal to
  it when not given: 4 connections.
The query is `SELECT pg_sleep(d)`, so each request holds one connection for d seconds, and the
threads past the pool's size wait inside it (SQLAlchemy's `QueuePool._do_get`, psycopg_pool's
`getconn`) on a lock, holding no socket. The hidden limit: 15 (or 4) queries in flight, about
15 / d (4 / d) requests a second.

Usage: python3 server.py --port 0 --dsn postgresql://postgres@127.0.0.1:PORT/postgres
                         [--pool sqlalchemy|psycopg] [--sleep 0.1]
The first stdout line is "listening on 127.0.0.1:PORT".
"""

import argparse
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def sqlalchemy_query(dsn, sleep):
    from sqlalchemy import create_engine, text

    # The defaults: QueuePool(pool_size=5, max_overflow=10, timeout=30).
    engine = create_engine(dsn.replace("postgresql://", "postgresql+psycopg://", 1))
    statement = text("SELECT pg_sleep(:d)")

    def query():
        with engine.connect() as connection:
            connection.execute(statement, {"d": sleep})

    return query


def psycopg_query(dsn, sleep):
    from psycopg_pool import ConnectionPool

    pool = ConnectionPool(dsn, open=True)  # the defaults: min_size=4, max_size=min_size

    def query():
        with pool.connection() as connection:
            connection.execute("SELECT pg_sleep(%s)", (sleep,))

    return query


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--pool", choices=["sqlalchemy", "psycopg"], default="sqlalchemy")
    parser.add_argument("--sleep", type=float, default=0.1)
    args = parser.parse_args()
    try:  # one connection first: a wrong --dsn fails here in one line, not in every request
        import psycopg

        psycopg.connect(args.dsn, connect_timeout=5).close()
    except Exception as e:
        first_line = (str(e).strip().splitlines() or [type(e).__name__])[0]
        print(f"py-sqlalchemy: --dsn {args.dsn}: {first_line}", file=sys.stderr)
        sys.exit(2)
    make = sqlalchemy_query if args.pool == "sqlalchemy" else psycopg_query
    query = make(args.dsn, args.sleep)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            query()
            body = b"slept\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 1024

        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], ConnectionError):
                super().handle_error(request, client_address)  # a client gone is no error

    server = Server(("127.0.0.1", args.port), Handler)
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
