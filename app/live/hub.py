"""Live fan-out: one Redis subscription per process serves every event stream and long poll in it,
games' and registered bots' turns alike.

A watcher (an SSE stream or a long poll) registers for a game; the process subscribes to that
game's change channel once, however many watch it, on its one pub/sub connection. On a change
the new events are read once, and each distinct viewer's events (each seat, the spectator) are
made visible and rendered once, then handed to the watchers, which hold no Redis connection.
A game's notices travel on its own channel (`{game:<id>}:changes`, in the game's hash slot;
sharded pub/sub on a Redis Cluster, so they stay on the game's shard: app/live/feed.py).
A bot's new turns are announced on its inbox's channel (`{bot:<id>}:turns`), a player's notices
on theirs (`{player:<id>}:notices`): the watchers are woken and read the inbox themselves, so an
inbox's stream or long poll holds no connection either.
"""

import logging
import queue
import threading
import time
from collections import defaultdict
from typing import Protocol

import redis

from ..engine import visible_event
from ..games.store import GameMissing
from ..ops.connection import StoreUnavailable
from .feed import RETRY_SECONDS, ChangeFeed, is_inbox

log = logging.getLogger(__name__)
POLL_SECONDS = 0.05  # how soon a new subscription is made, while waiting for notices
EVENTS_PER_READ = 500
SUBSCRIBE_SECONDS = 1.5  # a feed that does not confirm a subscription by then is down: 503 within about 2 s
# A watcher gives up on its topic's subscription only once the listener, past the patience counted
# from its asking the feed for the topic, found nothing more pending from the feed: the feed did not
# answer. In a storm (thousands of streams opened at once) the listener is reached late, and a
# stream that counted from its own start gave up on a subscription confirmed but not yet read. Past
# this, a watcher gives up whatever the listener did (a listener that stopped).
QUEUED_SECONDS = 60.0
CLOSED = ("closed", None)
# A stream's outlet left bytes for the stream itself to write (Watcher.outlet): it is woken for them.
FLUSH = ("flush", None)
# Changes a watcher may hold unread: a stream whose client reads slower than its game changes is
# ended past this (with a reconnect hint: it resumes from its Last-Event-ID), so its backlog never
# grows without bound; the others are never held up by it either way (a change is handed over, not written).
BACKLOG = 256


class Outlet(Protocol):
    """A stream's connection, written by the hub's listener while the stream waits for its next
    change (the stream gateway's: app/gateway/server.py). It never waits: what the socket does not
    take at once is `kept` for the stream to write when it wakes, and until then the stream's
    changes are handed over as any watcher's are (so they follow what was kept)."""

    kept: bytes

    def write(self, text: str) -> bool:
        """Write `text`, keeping what the socket does not take (False: the connection failed)."""


class Watcher:
    """One stream or long poll: what it receives, in order, through its own inbox; or, for a stream
    with an outlet that waits for the very next event, written straight to its connection: the
    listener then writes each audience's one text to many sockets without waking a stream."""

    def __init__(self, game_id: str, seat: int | None, wants_events: bool):
        self.game_id, self.seat, self.wants_events = game_id, seat, wants_events
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.subscribed = threading.Event()
        self.dropped = False  # it fell BACKLOG changes behind: it is told CLOSED next
        # Set by the stream only while it waits in next() for the event with id `expecting`; the
        # outlet's writes move `expecting` on (one thread: the gateway's gevent loop).
        self.outlet: Outlet | None = None
        self.expecting = 0

    def hand(self, item):
        if self.dropped:
            return
        if self.outlet is not None and self._written(self.outlet, item):
            return
        if self.inbox.qsize() >= BACKLOG:
            self.dropped = True
            return
        self.inbox.put(item)

    def _written(self, outlet: Outlet, item) -> bool:
        """`item`, when it is the change the waiting stream would send next as it comes (no gap, not
        the game's end), written through the outlet."""
        kind, payload = item
        if kind != "change" or not self.inbox.empty() or outlet.kept:
            return False
        _, events, joined = payload
        if not events or events[0][0] != self.expecting or events[-1][1] == "game_over":
            return False
        if not outlet.write(joined):
            return False
        self.expecting = events[-1][0] + 1
        if outlet.kept:
            self.inbox.put(FLUSH)
        return True

    def next(self, timeout: float):
        """("change", (version, [(event id, type, rendered), ...] or None, those rendered joined in one
        text)), CLOSED, or None on timeout."""
        if self.dropped:
            return CLOSED
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None


class LiveHub:
    def __init__(self, store, feed: ChangeFeed, render):
        """`feed` tells of changes (app/live/feed.py); `render(event)` turns one visible event into
        what a stream sends (done once per viewer)."""
        self.store, self.render = store, render
        self._feed = feed
        self._watchers: defaultdict[str, set[Watcher]] = defaultdict(set)
        self._cursor: dict[str, int] = {}  # game id -> events read so far
        self._asked_at: dict[str, float] = {}  # topic -> when the listener asked the feed for it (monotonic)
        self._drained_at = 0.0  # when the listener last began a poll that found nothing pending
        self._behind: set[str] = set()  # topics to read again: their node was lost and they are subscribed anew
        self._uncounted: set[str] = set()  # topics subscribed whose events are not counted yet (the store failed)
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        self._thread: threading.Thread | None = None  # started by the first watcher: most processes never stream

    # ----- watchers ------------------------------------------------------------------------
    def watch(self, game_id: str, seat: int | None = None, wants_events: bool = True,
              timeout: float = SUBSCRIBE_SECONDS) -> Watcher:
        """Register a watcher; it returns once the game's channel is subscribed, so a reader that
        reads the game after this misses no change."""
        watcher = self.register(game_id, seat, wants_events)
        self.until_subscribed(watcher, timeout)
        return watcher

    def register(self, game_id: str, seat: int | None = None, wants_events: bool = True) -> Watcher:
        """A watcher of the game, at once: its channel's subscription is asked for (the first
        watcher's) and confirmed later (`until_subscribed`). Every change the hub reads after it
        counted the game's events (`counted`) is handed to the watcher."""
        watcher = Watcher(game_id, seat, wants_events)
        with self._lock:
            if self._closed:
                raise redis.ConnectionError("the process is stopping")
            if self._thread is None:
                self._thread = threading.Thread(target=self._listen, name="ronda-live", daemon=True)
                self._thread.start()
            first = not self._watchers[game_id]
            self._watchers[game_id].add(watcher)
            if not first and game_id in self._cursor:
                watcher.subscribed.set()
        if first:
            self._requests.put(("subscribe", game_id))
        return watcher

    def until_subscribed(self, watcher: Watcher, timeout: float = SUBSCRIBE_SECONDS):
        """Return once the watcher's channel is subscribed; else unregister it and raise
        redis.ConnectionError. `timeout` counts from when the listener asks the feed for the
        channel (shared by every watcher of the game)."""
        if not self._subscribed_in_time(watcher, timeout) or self._closed:
            self.unwatch(watcher)
            raise redis.ConnectionError("the change feed did not answer, or the process is stopping")

    def _subscribed_in_time(self, watcher: Watcher, patience: float) -> bool:
        """Whether the watcher's topic got subscribed before the feed was found silent on it (see
        QUEUED_SECONDS)."""
        if watcher.subscribed.is_set():  # a game already watched: most streams of a storm
            return True
        given_up_at = time.monotonic() + QUEUED_SECONDS
        while not watcher.subscribed.wait(min(patience, max(0.0, given_up_at - time.monotonic()))):
            asked = self._asked_at.get(watcher.game_id)
            if time.monotonic() >= given_up_at or (asked is not None and self._drained_at >= asked + patience):
                return False
        return True

    def counted(self, game_id: str) -> int | None:
        """The game's events the listener has seen (None: it is not subscribed, or may have missed
        some): a watcher of the game is handed every change after these."""
        return None if game_id in self._behind or game_id in self._uncounted else self._cursor.get(game_id)

    def unwatch(self, watcher: Watcher):
        with self._lock:
            watchers = self._watchers.get(watcher.game_id)
            if watchers is None:
                return
            watchers.discard(watcher)
            if watchers:
                return
            del self._watchers[watcher.game_id]
        self._requests.put(("unsubscribe", watcher.game_id))

    def wait_for_change(self, game_id: str, after_version: int, timeout: float, read_version):
        """Return once the game is past `after_version` (`read_version()` reads it), or after `timeout`."""
        watcher = self.watch(game_id, wants_events=False)
        try:
            if read_version() > after_version:  # read after watching, so no change slips between
                return
            deadline = time.monotonic() + timeout
            while (left := deadline - time.monotonic()) > 0:
                item = watcher.next(left)
                if item is None or item == CLOSED or item[1][0] > after_version:
                    return
        finally:
            self.unwatch(watcher)

    def wait_for_notices(self, inbox: str, timeout: float, read):
        """`read()` once it finds something (new notices in the inbox topic `inbox`: a bot's turns,
        a player's notices, a ticket's outcome), or after `timeout` (then its empty answer)."""
        watcher = self.watch(inbox, wants_events=False)
        try:
            deadline = time.monotonic() + timeout
            while not (found := read()) and (left := deadline - time.monotonic()) > 0:
                if watcher.next(left) == CLOSED:
                    break
            return found
        finally:
            self.unwatch(watcher)

    def close(self):
        """End every watcher (streams send their clients a reconnect hint) and stop listening."""
        with self._lock:
            self._closed = True
            watchers = [w for ws in self._watchers.values() for w in ws]
        for watcher in watchers:
            watcher.inbox.put(CLOSED)
            watcher.subscribed.set()  # one still waiting for its subscription stops waiting

    # ----- the one listener ----------------------------------------------------------------
    def _listen(self):
        while not self._closed and not self._idle():
            try:
                self._apply_requests()
                self._count_subscribed()
                self._catch_up_behind()
                polled_at = time.monotonic()
                notice = self._feed.next_notice(POLL_SECONDS)
                if not notice:
                    self._drained_at = polled_at
                while notice:  # every notice that is in, then the new subscriptions' counts at once
                    self._on_notice(*notice)
                    notice = self._feed.next_notice(0)
            except StoreUnavailable as error:
                log.warning("change feed could not read the store: %s", error)
                time.sleep(RETRY_SECONDS)
            except Exception:
                log.exception("change feed failed")
                time.sleep(RETRY_SECONDS)

    def _idle(self) -> bool:
        """Nothing watched and nothing subscribed: the listener ends (the next watcher starts one)."""
        with self._lock:
            if self._watchers or self._cursor or not self._requests.empty():
                return False
            self._feed.close()
            self._thread = None
            return True

    def _apply_requests(self):
        while True:
            try:
                action, game_id = self._requests.get_nowait()
            except queue.Empty:
                return
            with self._lock:
                watched = bool(self._watchers.get(game_id))
            if action == "subscribe" and watched:
                if game_id in self._cursor:  # still subscribed: its last watcher left and a new one came
                    self._mark_subscribed(game_id)
                else:
                    self._asked_at[game_id] = time.monotonic()
                    self._feed.subscribe(game_id)
            elif action == "unsubscribe" and not watched and (game_id in self._cursor or game_id in self._uncounted):
                self._feed.unsubscribe(game_id)
                self._cursor.pop(game_id, None)
                self._uncounted.discard(game_id)
            if not watched:
                self._asked_at.pop(game_id, None)

    def _on_notice(self, kind, topic, version):
        if kind == "subscribed" and topic in self._cursor:
            # Subscribed again after its node was lost: what changed meanwhile is read now.
            self._behind.add(topic)
        elif kind == "subscribed":  # counted with the others that came in the same pass
            self._uncounted.add(topic)
        elif topic in self._cursor:
            self._changed(topic, version)

    def _count_subscribed(self):
        """Each newly subscribed game's events counted, after subscribing so that none slips (a
        bot's or player's watchers read their inbox), and its watchers let go. A count the store
        failed is tried again each pass: until then the topic's watchers wait (their patience
        runs), and a later watcher of it is not left waiting on a subscription nobody finishes."""
        if not self._uncounted:
            return
        topics = list(self._uncounted)
        counted = self.store.event_counts([topic for topic in topics if not is_inbox(topic)])
        for topic in topics:
            self._cursor[topic] = counted.get(topic, 0)
            self._uncounted.discard(topic)
            self._asked_at.pop(topic, None)
            if not self._mark_subscribed(topic):
                # Its watchers left while it was being subscribed (a stream that got its snapshot
                # and was closed): their unsubscription came before it was counted, and was let be.
                self._requests.put(("unsubscribe", topic))

    def _catch_up_behind(self):
        """Topics whose notices may have been missed: treat each as changed (until its store answers)."""
        for topic in list(self._behind):
            if topic not in self._cursor:
                self._behind.discard(topic)
                continue
            try:
                self._changed(topic, None if is_inbox(topic) else self.store.version(topic))
            except GameMissing:
                pass  # expired: its watchers end on their own timeouts
            self._behind.discard(topic)

    def _mark_subscribed(self, game_id: str) -> bool:
        """Let the game's watchers go on; False if it has none."""
        with self._lock:
            watchers = list(self._watchers.get(game_id, ()))
        for watcher in watchers:
            watcher.subscribed.set()
        return bool(watchers)

    def _changed(self, game_id: str, version: int | None):
        if is_inbox(game_id):
            with self._lock:
                watchers = list(self._watchers.get(game_id, ()))
            for watcher in watchers:
                watcher.hand(("change", (None, None, None)))
            return
        events: list[dict] = []
        while True:
            batch = self.store.events(game_id, self._cursor[game_id] + len(events), EVENTS_PER_READ)
            events += batch
            if len(batch) < EVENTS_PER_READ:
                break
        self._cursor[game_id] += len(events)
        with self._lock:  # also those that came while the events were read: a stream skips what it has
            watchers = list(self._watchers.get(game_id, ()))
        rendered = {}  # each distinct viewer's events, made visible and rendered once, and joined once
        for watcher in watchers:
            if watcher.wants_events and watcher.seat not in rendered:
                events_seen = [(event["id"], event["type"], self.render(visible))
                               for event in events for visible in (visible_event(event, watcher.seat),)]
                rendered[watcher.seat] = (events_seen, "".join(text for _, _, text in events_seen))
            seen, joined = rendered.get(watcher.seat, (None, None)) if watcher.wants_events else (None, None)
            watcher.hand(("change", (version, seen, joined)))
