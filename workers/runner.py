"""`ronda worker`: an RQ worker for bot moves, with a sweeper that re-dispatches stalled bot turns."""

import logging
import threading

from rq import SimpleWorker

from app.config import settings
from app.dispatch import build_services
from app.store import connect

log = logging.getLogger(__name__)


def sweep_forever(service, stall_seconds: float, stop: threading.Event):
    """A game never stalls: a bot turn with no move for `stall_seconds` gets a new job."""
    while not stop.wait(max(1.0, stall_seconds / 3)):
        try:
            count = service.redispatch_stalled(stall_seconds)
            if count:
                log.warning("re-dispatched %d stalled bot turn(s)", count)
        except Exception:
            log.exception("sweep failed")


def run_worker(redis_url: str, queue_name: str, stall_seconds: float, burst: bool = False):
    connection = connect(redis_url)
    service, _ = build_services(connection, settings(), in_process=False)
    stop = threading.Event()
    sweeper = threading.Thread(target=sweep_forever, args=(service, stall_seconds, stop), daemon=True)
    sweeper.start()
    try:
        # SimpleWorker: no fork per job (about 2 ms instead of 11 per bot move); timeouts still apply.
        SimpleWorker([queue_name], connection=connection).work(burst=burst, with_scheduler=True)
    finally:
        stop.set()
