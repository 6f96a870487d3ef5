"""Server-Sent Events for one viewer: a snapshot first, then every event it may see, with ids.

`Last-Event-ID` resumes after that event without loss or duplicates (the ids are the event
log's own). New events come from the process's live hub (app/live/hub.py), rendered once per
viewer for every stream; a stream holds no Redis connection. An idle stream gets keep-alive
comments; a finished game's stream ends; a stopping server ends its streams with a
reconnect hint.
"""

import itertools
import json
import threading
import time

from ..ops import metrics
from ..ops.connection import StoreUnavailable

RECONNECT_HINT = "retry: 1000\n\n"  # ms: reconnect to another server at once when this one stops
SNAPSHOT_PATIENCE = 30.0  # seconds a stream that has started waits for its snapshot (a reconnect storm)
SNAPSHOT_RETRY = (0.1, 1.0)  # the first and the longest pause between tries of a snapshot's read


class SingleFlight:
    """One read serves every stream of one game and viewer that opens at once (all clients
    reconnecting after a deploy or a failover): the others wait for its answer instead of each
    taking a pooled connection. A read serves only the streams that were watching when it began,
    so none misses a change between its snapshot and its events; a later one waits for the next."""

    def __init__(self):
        self._lock = threading.Lock()
        self._flights: dict = {}

    def run(self, key, since: float, read):
        while True:
            with self._lock:
                flight = self._flights.get(key)
                if flight is None:
                    flight = self._flights[key] = _Flight()
                    break
            flight.done.wait()
            if flight.started >= since:
                if flight.error is not None:
                    raise flight.error
                return flight.answer
        try:
            flight.answer = read()
            return flight.answer
        except Exception as error:
            flight.error = error
            raise
        finally:
            with self._lock:
                del self._flights[key]
            flight.done.set()


class _Flight:
    def __init__(self):
        self.started = time.monotonic()
        self.done = threading.Event()
        self.answer, self.error = None, None


_SNAPSHOTS = SingleFlight()  # this process's snapshot reads, shared by its streams


def sse(kind: str, data, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def render_event(event) -> str:
    return sse("event", event, event["id"])


def event_stream(service, hub, game_id: str, seat: int | None, last_event_id: int | None, keepalive: float):
    """The stream's chunks. The game is watched and the first chunk made before this returns: a
    change feed that fails then is a 503 problem, not a server's bare 500 at the stream's start.
    The first byte goes at once; the snapshot follows when its read comes (in a reconnect storm,
    one read for all the streams of a game and viewer, retried while the store is too busy, for
    SNAPSHOT_PATIENCE at most). Once started, a failure ends the stream with a reconnect hint, and
    the client resumes with Last-Event-ID."""
    watcher = hub.watch(game_id, seat)  # before reading, so no change slips between
    chunks = _events(service, hub, watcher, time.monotonic(), game_id, seat, last_event_id, keepalive)
    return itertools.chain([next(chunks)], chunks)


def _snapshot(service, game_id, seat, since):
    """The viewer's view, read once for the streams watching since before the read; None when the
    store has not answered within SNAPSHOT_PATIENCE."""
    deadline, pause = time.monotonic() + SNAPSHOT_PATIENCE, SNAPSHOT_RETRY[0]
    while True:
        try:
            return _SNAPSHOTS.run((game_id, seat), since, lambda: service.view_as(game_id, seat)[0])
        except StoreUnavailable:
            if time.monotonic() + pause > deadline:
                return None
            time.sleep(pause)
            pause = min(pause * 2, SNAPSHOT_RETRY[1])


def _events(service, hub, watcher, watched_at, game_id, seat, last_event_id, keepalive):
    metrics.OPEN_STREAMS.inc()
    try:
        if last_event_id is None:
            yield ": connected\n\n"  # at once: the client knows the stream is open while its snapshot comes
            view = _snapshot(service, game_id, seat, watched_at)
            if view is None:
                yield RECONNECT_HINT
                return
            last_event_id = view["event_count"]
            yield sse("snapshot", view, last_event_id)
            if view["status"] == "finished":
                return
        else:
            yield ": resumed\n\n"  # the answer starts now, so the client knows the stream is open
            for event_id, kind, text in _read_after(service, game_id, seat, last_event_id):
                yield text
                last_event_id = event_id
                if kind == "game_over":
                    return
            if service.status(game_id) == "finished":
                return
        while True:
            item = watcher.next(keepalive)
            if item is None:
                yield ": keep-alive\n\n"
                continue
            kind, payload = item
            if kind == "closed":
                yield RECONNECT_HINT
                return
            _, events, joined = payload
            if events and events[0][0] == last_event_id + 1:  # the usual case: the audience's one text, one write
                yield joined
                last_event_id = events[-1][0]
                if events[-1][1] == "game_over":
                    return
                continue
            if events and events[0][0] > last_event_id + 1:  # a gap: read it from the log
                events = _read_after(service, game_id, seat, last_event_id)
            for event_id, kind, text in events:
                if event_id <= last_event_id:
                    continue  # already sent: it came while this stream read the log itself
                yield text
                last_event_id = event_id
                if kind == "game_over":
                    return
    finally:
        metrics.OPEN_STREAMS.dec()
        hub.unwatch(watcher)


def _read_after(service, game_id, seat, last_event_id):
    """The events after `last_event_id`, read from the log, as the hub hands them: (id, type, rendered)."""
    while True:
        events = service.events_as(game_id, seat, last_event_id, 500)
        for event in events:
            last_event_id = event["id"]
            yield event["id"], event["type"], render_event(event)
        if len(events) < 500:
            return


def inbox_stream(hub, topic: str, read_after, after: str, keepalive: float):
    """Every notice of an inbox (a bot's turns, a player's notices) after `after`, as it comes: the
    stream waits on the process's one subscription and reads the inbox (`read_after(after)`) only
    when told of a new notice, so it holds no Redis connection."""
    watcher = hub.watch(topic, wants_events=False)  # before reading, so no notice slips between

    def notices(after):
        try:
            yield ": connected\n\n"
            while True:
                found = read_after(after)
                for notice in found:
                    after = notice["id"]
                    yield sse(notice["type"], notice, notice["id"])
                if found:
                    continue  # there may be more than one read's worth
                item = watcher.next(keepalive)
                if item is None:
                    yield ": keep-alive\n\n"
                elif item[0] == "closed":
                    yield RECONNECT_HINT
                    return
        finally:
            hub.unwatch(watcher)
    return notices(after)
