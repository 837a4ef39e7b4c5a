"""py-flask-dev: a target of the tuning set, built after the interpreter-lock reading (session
27) to hold that reading out on a server it was not written on.

A Flask application served by Flask's own server (`app.run`, Werkzeug's development server), as
many small services are run. Since Flask 1.0 that server is threaded by default: a new thread
per connection, with no cap (Werkzeug's `ThreadedWSGIServer`, `socketserver.ThreadingMixIn`).
Each request calls `$DOWNSTREAM` with `requests.get`, a new session and connection per call, as
a handler written without a client pool does. Nothing bounds the threads, so the limit is the
CPU one process of CPython can use: every thread runs Python (Werkzeug parsing the request,
requests building and parsing the call) under the one interpreter lock, about one core.

With `--pool N` (session 28, built after the rule that tells a pool grown in front of a limit)
every request calls through one shared `requests.Session` whose adapter keeps N connections and
blocks for one when all are out (`HTTPAdapter(pool_maxsize=N, pool_block=True)`, urllib3's
`HTTPConnectionPool._get_conn`), as a service that reuses its connections does. The limit is
then N calls at once; Werkzeug still starts a thread per connection, and the requests past N
wait in those threads for a connection.

Usage (from this folder): python3 app.py --port P --downstream URL [--pool N]
"""

import argparse
import sys

import requests
from flask import Flask

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--port", type=int, required=True, help="the port to serve on 127.0.0.1")
parser.add_argument("--downstream", required=True, help="the http:// URL each request calls")
parser.add_argument(
    "--pool", type=int, help="call through one session of N connections, blocking for one"
)
args = parser.parse_args()
if not args.downstream.startswith(("http://", "https://")):
    parser.error(f"--downstream must be an http:// or https:// URL, got {args.downstream!r}")
if args.pool is not None and args.pool < 1:
    parser.error(f"--pool must be 1 or more connections, got {args.pool}")

if args.pool is None:
    get = requests.get
else:
    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_maxsize=args.pool, pool_block=True)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    get = session.get

app = Flask(__name__)


@app.route("/")
def index():
    try:
        answer = get(args.downstream, timeout=30)
    except requests.RequestException as e:
        return f"downstream failed: {e}\n", 502
    return f"downstream said {answer.status_code}\n"


if __name__ == "__main__":
    try:
        # threaded=True is app.run's default; said here so the reader need not look it up.
        app.run(host="127.0.0.1", port=args.port, threaded=True)
    except OSError as e:
        print(f"py-flask-dev: cannot serve on port {args.port}: {e}", file=sys.stderr)
        sys.exit(2)
