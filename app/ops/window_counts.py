"""Counts per one-minute window, kept by each process and shared through Redis in the background.

A request is counted and checked here, in memory, against this process's estimate of the
window's total: what Redis held at the last sync plus what this process counted since. Every
`SYNC_SECONDS` a thread adds this process's new counts to Redis (INCRBY and EXPIRE, one
pipeline for every key) and reads back the totals. So counting costs a request no Redis round
trip, and a key gets one write per process per sync however busy it is (no hot key on a
cluster). The price of not asking Redis first: processes together may let through up to
processes × rate × SYNC_SECONDS beyond a budget before each sees the others' counts.
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


class WindowCounts:
    def __init__(self, redis):
        self.redis = redis
        self._lock = threading.Lock()
        self._shared = {}  # key -> the window's total in Redis at the last sync
        self._unsent = defaultdict(int)  # key -> counted here since
        self._thread = None
        self._failing = False

    @staticmethod
    def window(now: float) -> int:
        return int(now // WINDOW_SECONDS)

    def estimate(self, name: str, window: int) -> int:
        key = window_count_key(name, window)
        with self._lock:
            return self._shared.get(key, 0) + self._unsent.get(key, 0)

    def add(self, name: str, window: int, count: int = 1) -> int:
        """Count `count` more in `name`'s window; the estimated total after it."""
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
        with self._lock:
            self._shared = totals


def _window_of(key: str) -> int:
    return int(key.rsplit(":", 1)[1])
