"""gunicorn settings of the production image (`gunicorn -c python:app.gunicorn_conf`).

gevent workers: an open event stream or long poll costs a greenlet, not a thread. On SIGTERM a
worker ends its streams at once, each with a reconnect hint, instead of waiting for them
through the graceful timeout; whatever else is in flight gets 5 s. Logs are JSON lines, the
access log included, each with the request id. What gunicorn refuses before the app (431, 414,
400) is answered as problem+json, as the app answers.
"""

import logging
import os
import secrets
import shutil
import signal

bind = os.environ.get("RONDA_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("RONDA_WORKERS", 2))
worker_class = "gevent"
worker_connections = int(os.environ.get("RONDA_WORKER_CONNECTIONS", 10000))
# Connections the kernel holds for accept: every client of a deploy reconnects at once, and
# gunicorn's default (2048) drops those past it before they reach the app. Linux caps it at
# net.core.somaxconn (docker-compose.yml raises it for the API).
backlog = int(os.environ.get("RONDA_BACKLOG", 16384))
graceful_timeout = 5
# The arbiter kills a worker whose heartbeat is older than this. A gevent worker beats from a
# greenlet of its one loop: in a storm of 10,000 streams opened at once the loop went 30 s (the
# default) without reaching it, and the worker was SIGKILLed with every stream in it. A request
# never runs this long in this app (long polls end by 30 s), so a wait this long is a loop busy with
# work, not a hung worker.
timeout = int(os.environ.get("RONDA_WORKER_TIMEOUT_SECONDS", 120))
# gevent's worker reads a connection's first request under the keep-alive timeout too: at gunicorn's
# 2 s, a storm of reconnects whose greenlets wait longer than that for the loop (10,000 accepted at
# once) was closed without a byte. 75 s outlasts a load balancer's usual idle timeout (60 s).
keepalive = int(os.environ.get("RONDA_KEEPALIVE_SECONDS", 75))
# gunicorn 25.1+ opens a control socket at ~/.gunicorn/gunicorn.ctl, one path for every gunicorn of
# the account: two servers would take it from each other, and nothing here drives it.
control_socket_disable = True
wsgi_app = "app:create_app()"
accesslog = "-"
access_log_format = ('{"time": "%(t)s", "logger": "access", "remote": "%(h)s", "method": "%(m)s", '
                     '"path": "%(U)s", "status": %(s)s, "bytes": "%(B)s", "ms": %(M)s, '
                     '"request_id": "%({x-request-id}o)s"}')


def on_starting(server):
    """Before any worker forks: one secret for all of them when none is set (each would draw its
    own, and a replayed answer served by another worker would carry tokens that do not work), and
    a fresh metrics directory for this run's processes (files of dead ones would count on)."""
    if not os.environ.get("RONDA_SECRET_KEY"):
        os.environ["RONDA_SECRET_KEY"] = secrets.token_hex(32)
        logging.getLogger("gunicorn.error").warning(
            "RONDA_SECRET_KEY is not set: drew one for this server's workers; seat tokens work only until "
            "it stops, and not on other servers. Set RONDA_SECRET_KEY in production.")
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory, exist_ok=True)


def post_worker_init(worker):
    # Imported in the worker, after gevent has patched the standard library.
    from gunicorn import util
    from gunicorn.http import wsgi

    from app.api.problems import write_gunicorn_problem
    from app.ops.logs import use_json_logs
    from app.ops.runtime import settle_collector
    from app.wiring import close_streams
    use_json_logs()
    settle_collector()  # the app is loaded
    util.write_error = write_gunicorn_problem
    wsgi.Response.default_headers = _without_server_header(wsgi.Response.default_headers)
    stop_worker = signal.getsignal(signal.SIGTERM)

    def stop(signum, frame):
        close_streams()
        if callable(stop_worker):  # gunicorn's own handler (never SIG_DFL or SIG_IGN in a worker)
            stop_worker(signum, frame)

    signal.signal(signal.SIGTERM, stop)


def _without_server_header(default_headers):
    """gunicorn names itself and its release in a Server header on every answer, with no setting
    to turn it off: an attacker's inventory, of no use to a client."""
    def headers(response):
        return [line for line in default_headers(response) if not line.startswith("Server:")]
    return headers


def child_exit(server, worker):
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(worker.pid)
