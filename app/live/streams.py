"""Server-Sent Events for one viewer: a snapshot first, then every event it may see, with ids.

`Last-Event-ID` resumes after that event without loss or duplicates (the ids are the event
log's own). New events come from the process's live hub (app/live/hub.py), rendered once per
viewer for every stream; a stream holds no Redis connection. Its first byte goes before any
wait; what the store refuses ends it with a `problem` event, what does not answer in time with a
reconnect hint. An idle stream gets keep-alive comments; a finished game's stream ends; a
stopping server ends its streams with a reconnect hint.
"""

import json
import random
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import ServiceError
from ..ops import metrics
from ..ops.connection import StoreUnavailable

if TYPE_CHECKING:
    from .hub import LiveHub

SSE_MEDIA_TYPE = "text/event-stream"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}  # no cache or proxy holds the events back


class Live(NamedTuple):
    """What every stream of a process waits on: its services, its hub, its keep-alive period."""

    services: Any  # app/wiring.py's Services, a layer above
    hub: "LiveHub"
    keepalive: float

# ms: how long a client waits before it reconnects (EventSource's `retry:`), drawn anew for each
# stream: the streams a stopping or busy server ends all at once then come back spread over four
# seconds, not together (a storm of reconnects that one hint for all would make again).
RECONNECT_MS = (1000, 5000)
READ_PATIENCE = 30.0  # seconds a started stream keeps trying a read the store is too busy for (a storm)
READ_RETRY = (0.1, 1.0)  # the first and the longest pause between those tries


class SingleFlight:
    """One read serves every stream of one game and viewer that opens at once (all clients
    reconnecting after a deploy or a failover): the others wait for its answer instead of each
    taking a pooled connection. With `since`, a read serves only the streams that were there when
    it began (a later one waits for the next); without, any read in flight does. A caller that
    vouches for the last answer (`still_current`) is given it for RECENT_SECONDS at most."""

    def __init__(self):
        self._lock = threading.Lock()
        self._flights: dict = {}
        self._recent: dict = {}  # key -> (when its read began, its answer)

    def run(self, key, read, since: float | None = None, still_current: Callable[[Any], bool] | None = None):
        while True:
            with self._lock:
                recent = self._recent.get(key)
                if still_current is not None and recent is not None and \
                        recent[0] >= time.monotonic() - RECENT_SECONDS and still_current(recent[1]):
                    return recent[1]
                flight = self._flights.get(key)
                if flight is None:
                    flight = self._flights[key] = _Flight()
                    break
            flight.done.wait()
            if flight.finished and (since is None or flight.started >= since):
                if flight.error is not None:
                    raise flight.error
                return flight.answer
        try:
            flight.answer = read()
            flight.finished = True
            if still_current is not None:
                with self._lock:
                    if len(self._recent) >= RECENT_KEPT:
                        self._recent.clear()
                    self._recent[key] = (flight.started, flight.answer)
            return flight.answer
        except Exception as error:
            flight.error, flight.finished = error, True
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
        # False once done: its reader was ended (a stream whose client went) before it had an
        # answer, and those waiting read anew
        self.finished = False


# A snapshot serves the streams that open after it for this long, unless the hub has counted an
# event since it was read: a storm over one game reads it about once. What changes a game without
# an event (an erased player's name) reaches a new stream this much later.
RECENT_SECONDS = 1.0
RECENT_KEPT = 10_000
_SHARED = SingleFlight()  # this process's reads for streams: a game's document, a viewer's snapshot or events
WATCH_PATIENCE = 10.0  # seconds a started stream waits for its game's subscription before it says reconnect


def reconnect_hint() -> str:
    return f"retry: {random.randint(*RECONNECT_MS)}\n\n"


def sse(kind: str, data, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def render_event(event) -> str:
    return sse("event", event, event["id"])


def event_stream(service, hub, game_id: str, token: str | None, last_event_id: int | None, keepalive: float,
                 problem_of: Callable[[Exception], dict], outlet=None):
    """The stream's chunks. The first byte goes before anything waits on Redis or the change feed:
    in a reconnect storm (every client after a deploy) each stream is answered at once and then
    waits, bounded, for reads it shares with the streams of the same game and viewer. A game or
    token the store refuses ends the stream with a `problem` event (`problem_of(error)`, the
    problem+json body: the client stops there); a store or feed that does not answer in time ends
    it with a reconnect hint, and the client resumes with Last-Event-ID. With an `outlet` (its
    connection, app/live/hub.py's Outlet), the hub writes the changes it waits for straight to it."""
    metrics.OPEN_STREAMS.inc()
    watcher = None
    try:
        yield ": connected\n\n" if last_event_id is None else ": resumed\n\n"
        started = time.monotonic()
        try:
            seat = None if token is None else _patiently(
                lambda: service.seat_in(_SHARED.run(("game", game_id), lambda: service.load(game_id), started), token))
            watcher = hub.register(game_id, seat)  # first: its subscription is made while it reads
            yield from _events(service, hub, watcher, game_id, seat, last_event_id, keepalive, outlet)
        except ServiceError as refused:
            yield sse("problem", problem_of(refused))
        except StoreUnavailable:  # the store, or the change feed, did not answer in time
            yield reconnect_hint()
    finally:
        metrics.OPEN_STREAMS.dec()
        if watcher is not None:
            hub.unwatch(watcher)


def _patiently(read):
    """`read()`, tried again while the store is too busy to answer, for READ_PATIENCE at most
    (then its StoreUnavailable)."""
    deadline, pause = time.monotonic() + READ_PATIENCE, READ_RETRY[0]
    while True:
        try:
            return read()
        except StoreUnavailable:
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, READ_RETRY[1])


def _snapshot(service, game_id: str, seat: int | None) -> tuple[int, str, str]:
    """The viewer's view as a snapshot event, rendered once for all the streams that share it:
    (its last event id, the game's status, the text)."""
    view = service.view_as(game_id, seat)[0]
    return view["event_count"], view["status"], sse("snapshot", view, view["event_count"])


def _events(service, hub, watcher, game_id, seat, last_event_id, keepalive, outlet):
    # What the viewer has not seen is read while the game's subscription is made, not after it: a
    # storm's first stream of a game does not wait for both in turn. Once subscribed, the watcher
    # is handed every change after the hub's count of the game's events; those between what was
    # read and that count are read from the log. So any read serves: one in flight, or a snapshot
    # as new as the hub's count (or read before the game was counted at all).
    if last_event_id is None:
        last_event_id, status, text = _patiently(lambda: _SHARED.run(
            ("view", game_id, seat), lambda: _snapshot(service, game_id, seat),
            still_current=lambda snapshot: hub.counted(game_id) in (None, snapshot[0])))
        yield text
    else:
        after = last_event_id
        missed = _patiently(lambda: _SHARED.run(("events", game_id, seat, after),
                                                lambda: list(_read_after(service, game_id, seat, after))))
        if (last_event_id := (yield from _sent(missed, last_event_id))) is None:
            return
        game = _patiently(lambda: _SHARED.run(("game", game_id), lambda: service.load(game_id)))
        status = game.doc["status"]
    if status == "finished":
        return
    hub.until_subscribed(watcher, WATCH_PATIENCE)
    if hub.counted(game_id) != last_event_id:
        after = last_event_id
        caught_up = _patiently(lambda: list(_read_after(service, game_id, seat, after)))
        if (last_event_id := (yield from _sent(caught_up, last_event_id))) is None:
            return
    while True:
        if outlet is not None:  # while it waits, the hub writes the change it would send next
            watcher.expecting, watcher.outlet = last_event_id + 1, outlet
        item = watcher.next(keepalive)
        if outlet is not None:
            watcher.outlet, last_event_id = None, watcher.expecting - 1
        if item is None:
            yield ": keep-alive\n\n"
            continue
        kind, payload = item
        if kind == "flush":
            yield ""  # the outlet kept bytes: its connection writes them first
            continue
        if kind == "closed":
            yield reconnect_hint()
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
        if (last_event_id := (yield from _sent(events, last_event_id))) is None:
            return


def _sent(events, last_event_id: int):
    """Each event's text after `last_event_id` (one may have come twice: from the hub and from the
    log); the id of the last one sent, or None once the game is over."""
    for event_id, kind, text in events:
        if event_id <= last_event_id:
            continue
        yield text
        last_event_id = event_id
        if kind == "game_over":
            return None
    return last_event_id


def _read_after(service, game_id, seat, last_event_id):
    """The events after `last_event_id`, read from the log, as the hub hands them: (id, type, rendered)."""
    while True:
        events = service.events_as(game_id, seat, last_event_id, 500)
        for event in events:
            last_event_id = event["id"]
            yield event["id"], event["type"], render_event(event)
        if len(events) < 500:
            return


def inbox_stream(hub, topic: str, read_after, after: str, keepalive: float, on_keepalive=None):
    """Every notice of an inbox (a bot's turns, a player's notices) after `after`, as it comes: the
    stream waits on the process's one subscription and reads the inbox (`read_after(after)`) only
    when told of a new notice, so it holds no Redis connection. Its first byte goes before the
    subscription is waited for; a feed or store that does not answer in time ends it with a
    reconnect hint. `on_keepalive()`, at each keep-alive: the reader is still there."""
    watcher = None
    try:
        yield ": connected\n\n"
        watcher = hub.watch(topic, wants_events=False, timeout=WATCH_PATIENCE)  # before reading: none slips
        while True:
            found = _patiently(partial(read_after, after))
            for notice in found:
                after = notice["id"]
                yield sse(notice["type"], notice, notice["id"])
            if found:
                continue  # there may be more than one read's worth
            item = watcher.next(keepalive)
            if item is None:
                yield ": keep-alive\n\n"
                if on_keepalive is not None:
                    on_keepalive()
            elif item[0] == "closed":
                yield reconnect_hint()
                return
    except StoreUnavailable:
        yield reconnect_hint()
    finally:
        if watcher is not None:
            hub.unwatch(watcher)
