"""gunicorn settings of the production image (`gunicorn -c python:app.gunicorn_conf`).

gevent workers: an open event stream or long poll costs a greenlet, not a thread. On SIGTERM a
worker ends its streams at once, each with a reconnect hint, instead of waiting for them
through the graceful timeout; whatever else is in flight gets 5 s.
"""

import os
import signal

bind = os.environ.get("RONDA_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("RONDA_WORKERS", 2))
worker_class = "gevent"
worker_connections = int(os.environ.get("RONDA_WORKER_CONNECTIONS", 10000))
graceful_timeout = 5
accesslog = "-"
wsgi_app = "app:create_app()"


def post_worker_init(worker):
    from app import live  # in the worker, after gevent has patched the standard library
    stop_worker = signal.getsignal(signal.SIGTERM)

    def stop(signum, frame):
        live.close_all()
        stop_worker(signum, frame)

    signal.signal(signal.SIGTERM, stop)
