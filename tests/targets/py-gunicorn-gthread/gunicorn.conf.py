"""py-gunicorn-gthread: gunicorn's settings for the app of ../py-gunicorn (a blocking urllib GET
to $DOWNSTREAM per request) served by 2 gthread workers of 4 threads: 8 requests at once.

gunicorn picks the gthread worker itself when --threads is above 1 (the sync worker class is the
default). Each worker runs its requests in a ThreadPoolExecutor(max_workers=threads); its main
thread accepts connections, up to worker_connections (1000), whether or not a thread is free.

Run (in this folder, or give the paths):
  DOWNSTREAM=http://127.0.0.1:9090/ gunicorn --config gunicorn.conf.py \
      --chdir ../py-gunicorn --bind 127.0.0.1:PORT app:app

Measured by hand (tests/targets/README.md): with a connection per request, as nginx in front
passes them by default, never more than 8 calls at once; with kept-alive clients each
connection stays with the worker that accepted it, so one worker may hold most of them and the
service serves 4 to 8 at once, a different number each time the clients connect.
"""

workers = 2
threads = 4
