"""py-flask-dev: a target of the tuning set, built after the interpreter-lock reading (session
27) to hold that reading out on a server it was not written on.

A Flask application served by Flask's own server (`app.run`, Werkzeug's development server), as
many small services are run. Since Flask 1.0 that server is threaded by default: a new thread
per connection, with no cap (Werkzeug's `ThreadedWSGIServer`, `socketserver.ThreadingMixIn`).
Each request calls `$DOWNSTREAM` with `requests.get`, a new session and connection per call, as
a handler written without a client pool does. Nothing bounds the threads, so the limit is the
CPU one process of CPython can use: every thread runs Python (Werkzeug parsing the request,
requests building and parsing the call) under the one interpreter lock, about one core.

Usage (from this folder): python3 app.py --port P --downstream URL
"""

import argparse
import sys

import requests
from flask import Flask

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--port", type=int, required=True, help="the port to serve on 127.0.0.1")
parser.add_argument("--downstream", required=True, help="the http:// URL each request calls")
args = parser.parse_args()
if not args.downstream.startswith(("http://", "https://")):
    parser.error(f"--downstream must be an http:// or https:// URL, got {args.downstream!r}")

app = Flask(__name__)


@app.route("/")
def index():
    try:
        answer = requests.get(args.downstream, timeout=30)
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
