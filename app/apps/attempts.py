"""Webhook attempts of one process, each endpoint's apart: an endpoint that is slow to answer holds
up only its own deliveries, never another endpoint's (any app's).

Attempts run on a pool of threads, at most `per_endpoint` at once to one endpoint; a delivery
whose endpoint has its share under way waits in that endpoint's own line, in order, and is
attempted as soon as one of them ends. A line lives in this process only: every delivery is leased
in the store before it is attempted (WebhookService.attempt), so one lost with the process is
queued again by the sweep when its lease runs out.
"""

import logging
import threading
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ..ops.metrics import JOB_SECONDS

log = logging.getLogger(__name__)


class ConcurrentAttempts:
    def __init__(self, attempt: Callable[[str, str], bool], endpoint_of: Callable[[str, str], str | None],
                 threads: int, per_endpoint: int):
        """`attempt(app id, delivery id)` makes one attempt; `endpoint_of(app id, delivery id)`
        names the delivery's endpoint (None for a delivery gone)."""
        self.attempt, self.endpoint_of, self.per_endpoint = attempt, endpoint_of, per_endpoint
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="ronda-webhook")
        self._running: Counter[tuple[str, str | None]] = Counter()
        self._lines: dict[tuple[str, str | None], deque[str]] = {}
        self._lock = threading.Lock()

    def submit(self, app_id: str, delivery_id: str):
        """Attempt the delivery on a thread of the pool, or after its endpoint's attempts under way."""
        endpoint = (app_id, self.endpoint_of(app_id, delivery_id))
        with self._lock:
            if self._running[endpoint] >= self.per_endpoint:
                self._lines.setdefault(endpoint, deque()).append(delivery_id)
                return
            self._running[endpoint] += 1
        self.pool.submit(self._run, endpoint, delivery_id)

    def _run(self, endpoint: tuple[str, str | None], delivery_id: str | None):
        while delivery_id is not None:
            try:
                with JOB_SECONDS.labels("webhook").time():
                    self.attempt(endpoint[0], delivery_id)
            except Exception:  # the store dropped, say: the delivery's lease brings it back
                log.exception("webhook attempt of %s failed", delivery_id)
            with self._lock:
                line = self._lines.get(endpoint)
                delivery_id = line.popleft() if line else None
                if line is not None and not line:
                    del self._lines[endpoint]
                if delivery_id is None:
                    self._running[endpoint] -= 1
                    if not self._running[endpoint]:
                        del self._running[endpoint]
