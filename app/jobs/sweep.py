"""The sweep loop: a worker's (or the embedded server's) thread that keeps games from stalling."""

import logging
import threading
import time

from ..ops.connection import StoreUnavailable

log = logging.getLogger(__name__)
LISTING_PRUNE_SECONDS = 60


def sweep_forever(sweeper, stall_seconds: float, stop: threading.Event):
    """A game never stalls: a bot move or turn timer overdue by `stall_seconds` gets a new job.
    Once a minute the listings drop the games that expired."""
    next_prune = 0.0
    while not stop.wait(max(0.5, stall_seconds / 3)):
        try:
            count = sweeper.redispatch_stalled(stall_seconds)
            if count:
                log.warning("re-dispatched %d overdue move(s)", count)
            if time.monotonic() >= next_prune:
                next_prune = time.monotonic() + LISTING_PRUNE_SECONDS
                sweeper.prune_listings()
        except StoreUnavailable as error:
            log.warning("sweep skipped, the store does not answer: %s", error)
        except Exception:
            log.exception("sweep failed")
