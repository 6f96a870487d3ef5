"""Webhook attempts of one process, each endpoint's and each app's apart: an endpoint that is slow
to answer holds up only its own deliveries, and an app whose endpoints are all slow holds up only
its own, never another app's (issue 62: two apps of ten trickling endpoints each kept a quiet
app's deliveries waiting 6 to 15 s).

Attempts run on a pool of threads, at most `per_endpoint` at once to one endpoint and `per_app` to
one app (a share of the pool), and the last quarter of the threads is kept for apps with no attempt
under way: however many tenants' receivers hang, a quiet app's delivery finds a thread. A delivery
that finds no room waits in its endpoint's own line, in order, and is attempted as soon as an
attempt of its app ends. A line lives in this process only: every delivery is leased
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
                 threads: int, per_endpoint: int, per_app: int):
        """`attempt(app id, delivery id)` makes one attempt; `endpoint_of(app id, delivery id)`
        names the delivery's endpoint (None for a delivery gone); at most `per_endpoint` attempts
        at once to one endpoint and `per_app` to one app's endpoints together."""
        self.attempt, self.endpoint_of = attempt, endpoint_of
        self.per_endpoint, self.per_app, self.threads = per_endpoint, per_app, threads
        self.reserve = max(1, threads // 4)  # threads only an app with no attempt under way may take
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="ronda-webhook")
        self._running: Counter[tuple[str, str | None]] = Counter()
        self._running_apps: Counter[str] = Counter()
        self._lines: dict[tuple[str, str | None], deque[str]] = {}
        self._lock = threading.Lock()

    def submit(self, app_id: str, delivery_id: str):
        """Attempt the delivery on a thread of the pool, or after the attempts under way of its
        endpoint (or of its app, when the app has its share under way)."""
        endpoint = (app_id, self.endpoint_of(app_id, delivery_id))
        with self._lock:
            if not self._has_room(endpoint):
                self._lines.setdefault(endpoint, deque()).append(delivery_id)
                return
            self._start(endpoint)
        self.pool.submit(self._run, endpoint, delivery_id)

    def _has_room(self, endpoint: tuple[str, str | None]) -> bool:
        """Room for one more attempt: its endpoint and its app under their shares, and a thread free;
        the last `reserve` threads go only to an app with none under way, so however many apps'
        receivers hang, an app whose deliveries come now is attempted at once."""
        running_here = self._running_apps[endpoint[0]]
        if self._running[endpoint] >= self.per_endpoint or running_here >= self.per_app:
            return False
        busy = sum(self._running_apps.values())
        return busy < self.threads if not running_here else busy < self.threads - self.reserve

    def _start(self, endpoint: tuple[str, str | None]):
        self._running[endpoint] += 1
        self._running_apps[endpoint[0]] += 1

    def _run(self, endpoint: tuple[str, str | None], delivery_id: str | None):
        while delivery_id is not None:
            try:
                with JOB_SECONDS.labels("webhook").time():
                    self.attempt(endpoint[0], delivery_id)
            except Exception:  # the store dropped, say: the delivery's lease brings it back
                log.exception("webhook attempt of %s failed", delivery_id)
            with self._lock:
                self._end(endpoint)
                endpoint, delivery_id = self._next_of(endpoint)

    def _end(self, endpoint: tuple[str, str | None]):
        self._running[endpoint] -= 1
        self._running_apps[endpoint[0]] -= 1
        self._running += Counter()  # counts at nought dropped (a Counter's + keeps the positive ones)
        self._running_apps += Counter()

    def _next_of(self, done: tuple[str, str | None]) -> tuple[tuple[str, str | None], str | None]:
        """The delivery this thread attempts next: its endpoint's next, else the next of another
        endpoint of the same app that waited for the app's share (each line in order)."""
        lines = [done, *(endpoint for endpoint in self._lines if endpoint[0] == done[0] and endpoint != done)]
        for endpoint in lines:
            line = self._lines.get(endpoint)
            if line and self._has_room(endpoint):
                delivery_id = line.popleft()
                if not line:
                    del self._lines[endpoint]
                self._start(endpoint)
                return endpoint, delivery_id
        return done, None
