"""`ronda worker`: an RQ worker for bot moves, with a sweeper that re-dispatches overdue moves.

It outlives Redis restarts and network blips: RQ's loop quits on a Redis error met outside
its wait for a job, so the worker is started again, with backoff, until it is asked to stop.
A job cut off by the outage is not lost for good: the sweeper queues the move again.
"""

import logging
import multiprocessing
import os
import socket
import threading
import time
from datetime import datetime, timezone

from prometheus_client import start_http_server
from rq import SimpleWorker, Worker

from app import metrics

from app.config import settings
from app.dispatch import build_services, match_queue_name, store_client, sweep_forever
from app.embedded import die_with_parent
from app.store import StoreUnavailable, connect

log = logging.getLogger(__name__)
MAX_BACKOFF_SECONDS = 5.0


class BotWorker(SimpleWorker):
    """SimpleWorker: no fork per job (about 2 ms instead of 11 per bot move); timeouts still apply.
    It remembers whether a signal asked it to stop, which RQ's return value does not tell."""

    stop_requested = False

    def request_stop(self, signum, frame):
        self.stop_requested = True
        super().request_stop(signum, frame)


def run_worker(redis_url: str, queue_name: str, stall_seconds: float, burst: bool = False, metrics_port: int = 0):
    """Two processes: this one takes live games' bot moves alone, so they never wait behind a
    match game, and sweeps; a child takes live moves first and match games when there are none.
    With `metrics_port`, both processes' metrics are served there."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)
    if metrics_port:
        start_http_server(metrics_port, registry=metrics.registry())
    queues = [queue_name, match_queue_name(queue_name)]
    matches = multiprocessing.get_context("fork").Process(target=_work, args=(redis_url, queues, burst),
                                                          name="ronda-match-worker")
    matches.start()
    connection = connect(redis_url, socket_timeout=None)
    service, _, _ = build_services(store_client(settings(), connection), settings(), in_process=False,
                                queue_client=connection)
    stop = threading.Event()
    threading.Thread(target=sweep_forever, args=(service, stall_seconds, stop), daemon=True).start()
    try:
        _work(redis_url, [queue_name], burst, connection)
    finally:
        stop.set()
        matches.terminate()
        matches.join(10)
        if matches.is_alive():
            matches.kill()


def consuming(redis_url: str, within_seconds: float = 60) -> bool:
    """Whether an RQ worker of this host has shown a heartbeat lately (the worker's health check)."""
    connection = connect(redis_url)
    host = socket.gethostname()
    now = datetime.now(timezone.utc)
    return any(w.hostname == host and w.last_heartbeat and (now - w.last_heartbeat).total_seconds() < within_seconds
               for w in Worker.all(connection=connection))


def _work(redis_url, queues, burst, connection=None):
    """Run RQ on `queues` (in priority order) until asked to stop, starting again after a store error."""
    if connection is None:  # the match worker's own process
        die_with_parent()
        connection = connect(redis_url, socket_timeout=None)
    backoff = 0.5
    while True:
        worker = BotWorker(queues, connection=connection)
        started = time.monotonic()
        try:
            worker.work(burst=burst, with_scheduler=True)
        except StoreUnavailable as error:  # met while registering or tearing down
            log.warning("worker lost the store: %s", error)
        if burst or worker.stop_requested:
            return
        if time.monotonic() - started > 60:
            backoff = 0.5
        log.warning("worker stopped on a store error; starting again in %.1f s", backoff)
        time.sleep(backoff)
        backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
