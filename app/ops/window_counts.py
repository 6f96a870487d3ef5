"""Counts per one-minute window, kept by each process and shared through Redis in the background.

A request is counted and checked here, in memory, against this process's estimate of the
window's total: what Redis held at the last sync plus what this process counted since. Every
`SYNC_SECONDS` a thread adds this process's new counts to Redis (INCRBY and EXPIRE, one
pipeline for every key) and reads back the totals; when that thread falls behind (a busy gevent
worker schedules it late), the next request syncs first. So counting costs a request no Redis
round trip, and a key gets one write per process per sync however busy it is (no hot key on a
cluster).

Near its budget (`EXACT_FROM` of it, by the estimate), and whenever this process has counted a
share of the budget (`SHARE_BETWEEN_SYNCS`) since it last sent the key, a key is counted in
Redis at once instead, with what this process counted meanwhile, and the request is judged by
the total Redis answers. So every process's requests meet one count there near a budget, and a
process never holds more than that share unsent: a budget is passed by at most that share per
process. Redis down or slow holds up only those requests, and then they are judged by the estimate.
"""

import logging
import threading
import time
from collections import defaultdict

from .connection import StoreUnavailable
from .keys import window_count_key

log = logging.getLogger(__name__)
WINDOW_SECONDS = 60
SYNC_SECONDS = 0.25
EXACT_FROM = 0.8  # of a budget: from there, a key is counted in Redis by each request
SHARE_BETWEEN_SYNCS = 0.02  # of a budget: what one process counts of a key alone before sending it


class WindowCounts:
    def __init__(self, redis):
        self.redis = redis
        self._lock = threading.Lock()
        self._shared = {}  # key -> the window's total in Redis at the last sync
        self._unsent = defaultdict(int)  # key -> counted here since
        self._thread = None
        self._failing = False
        self._synced_at = time.monotonic()
        self._syncing = threading.Lock()
        self._sending: defaultdict[str, int] = defaultdict(int)  # key -> its counts in Redis on their way now

    @staticmethod
    def window(now: float) -> int:
        return int(now // WINDOW_SECONDS)

    def estimate(self, name: str, window: int) -> int:
        key = window_count_key(name, window)
        with self._lock:
            return self._shared.get(key, 0) + self._unsent.get(key, 0)

    def spend(self, name: str, window: int, budget: int) -> int | None:
        """Count one more in `name`'s window unless that passes `budget`: the total after it, or
        None when the budget is spent (then nothing was counted here)."""
        key = window_count_key(name, window)
        with self._lock:
            unsent = self._unsent.get(key, 0)
            # While a count of this key is on its way, the estimate may be behind: count in Redis too.
            near = (self._shared.get(key, 0) + unsent + 1 >= budget * EXACT_FROM
                    or unsent + 1 >= budget * SHARE_BETWEEN_SYNCS or self._sending.get(key))
            pending = self._unsent.pop(key, 0) if near else 0
            if near:
                self._sending[key] += 1
        if near:
            try:
                pipe = self.redis.pipeline(transaction=False)
                pipe.incrby(key, pending + 1)
                pipe.expire(key, 2 * WINDOW_SECONDS)
                total, _ = pipe.execute()
            except StoreUnavailable:
                with self._lock:
                    self._unsent[key] += pending
                    self._release(key)
                return self._spend_here(name, window, budget)
            with self._lock:
                self._shared[key] = max(self._shared.get(key, 0), total)
                self._release(key)
            if total > budget:
                self._take_back(key)
                return None
            return total
        return self._spend_here(name, window, budget)

    def _release(self, key: str):
        self._sending[key] -= 1
        if not self._sending[key]:
            del self._sending[key]

    def _spend_here(self, name: str, window: int, budget: int) -> int | None:
        if self.estimate(name, window) >= budget:
            return None
        return self.add(name, window)

    def _take_back(self, key: str):
        """A request counted in Redis that its budget then refused: not counted after all."""
        try:
            self.redis.decrby(key, 1)
        except StoreUnavailable:
            pass  # one count too many in a window already spent: it only ends sooner

    def add(self, name: str, window: int, count: int = 1) -> int:
        """Count `count` more in `name`'s window; the estimated total after it."""
        if time.monotonic() - self._synced_at > 2 * SYNC_SECONDS and self._syncing.acquire(blocking=False):
            try:  # the background sync is late: this request syncs instead
                self.sync()
            except StoreUnavailable:
                pass  # counted on locally; the background sync sends it
            finally:
                self._syncing.release()
        key = window_count_key(name, window)
        with self._lock:
            self._unsent[key] += count
            total = self._shared.get(key, 0) + self._unsent[key]
            if self._thread is None:
                self._thread = threading.Thread(target=self._sync_forever, name="ronda-window-counts", daemon=True)
                self._thread.start()
        return total

    def _sync_forever(self):
        """Until no window is live (the next count starts the thread again)."""
        while True:
            time.sleep(SYNC_SECONDS)
            try:
                with self._syncing:
                    self.sync()
                self._failing = False
            except StoreUnavailable as error:  # counted on locally meanwhile; sent at the next sync
                if not self._failing:  # once an outage, not four times a second
                    log.warning("rate-limit counts not shared until the store answers: %s", error)
                self._failing = True
            except Exception:
                log.exception("rate-limit counts not shared")
            with self._lock:
                if not self._shared and not self._unsent:
                    self._thread = None
                    return

    def sync(self):
        """Send what was counted here since the last sync; learn every live key's total."""
        current = self.window(time.time())
        with self._lock:
            unsent, self._unsent = dict(self._unsent), defaultdict(int)
            for key, count in unsent.items():  # still in this process's estimate while on their way
                self._shared[key] = self._shared.get(key, 0) + count
            keys = [key for key in self._shared if _window_of(key) >= current - 1]
        if not keys:
            with self._lock:
                self._shared = {}
            self._synced_at = time.monotonic()
            return
        pipe = self.redis.pipeline(transaction=False)
        for key in keys:
            if unsent.get(key):
                pipe.incrby(key, unsent[key])
                pipe.expire(key, 2 * WINDOW_SECONDS)
            else:
                pipe.get(key)
        try:
            replies = iter(pipe.execute())
        except Exception:
            with self._lock:  # not sent: sent again at the next sync
                for key, count in unsent.items():
                    self._unsent[key] += count
                    self._shared[key] -= count
            raise
        totals = {}
        for key in keys:
            totals[key] = int(next(replies) or 0)
            if unsent.get(key):
                next(replies)  # EXPIRE's answer
        with self._lock:  # a request may have learnt a newer total meanwhile (spend): a window only grows
            self._shared = {key: max(total, self._shared.get(key, 0)) for key, total in totals.items()}
        self._synced_at = time.monotonic()


def _window_of(key: str) -> int:
    return int(key.rsplit(":", 1)[1])
