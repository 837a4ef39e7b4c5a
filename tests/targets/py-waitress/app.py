"""py-waitress: a target of the tuning set, built after the catalogue's waitress entry (session
24) to test that entry live, and to hold out the thread-pool rules on a server they were not
written on.

A WSGI application served by waitress as deployed (`waitress-serve`), whose every request calls
`$DOWNSTREAM` with the standard library (`urllib.request`, a connection per call: no client
pool in the way). waitress accepts up to `connection_limit` (100) connections on one event-loop
thread and hands each request to its task threads, `threads` of them (4 by default); the
requests past them wait in the dispatcher's queue, holding no thread. The hidden limit: 4 calls
in flight, 4 / d requests a second at a downstream delay d.

Usage (from this folder): DOWNSTREAM=URL waitress-serve --host 127.0.0.1 --port P [--threads N] app:application
"""

import os
import sys
import urllib.request

DOWNSTREAM = os.environ.get("DOWNSTREAM", "")
if not DOWNSTREAM.startswith(("http://", "https://")):
    print(
        f"py-waitress: DOWNSTREAM must be the http:// URL each request calls, got {DOWNSTREAM!r}",
        file=sys.stderr,
    )
    sys.exit(2)


def call_downstream():
    with urllib.request.urlopen(DOWNSTREAM, timeout=30) as answer:
        answer.read()
        return answer.status


def application(environ, start_response):
    try:
        status, body = "200 OK", f"downstream said {call_downstream()}\n".encode()
    except OSError as e:
        status, body = "502 Bad Gateway", f"downstream failed: {e}\n".encode()
    start_response(
        status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))]
    )
    return [body]
