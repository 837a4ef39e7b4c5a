"""py-gunicorn: a WSGI app run by gunicorn with its defaults (one sync worker: one request at a
time). Every request makes a blocking urllib GET to $DOWNSTREAM and answers with its body.

Run: DOWNSTREAM=http://127.0.0.1:9090/ gunicorn --bind 127.0.0.1:PORT app:app
"""
import os
import urllib.request

DOWNSTREAM = os.environ.get("DOWNSTREAM", "")


def app(environ, start_response):
    if not DOWNSTREAM:
        start_response("500 Internal Server Error", [("Content-Type", "text/plain")])
        return [b"DOWNSTREAM is not set\n"]
    with urllib.request.urlopen(DOWNSTREAM, timeout=30) as response:
        body = response.read()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
