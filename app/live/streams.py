"""Server-Sent Events for one viewer: a snapshot first, then every event it may see, with ids.

`Last-Event-ID` resumes after that event without loss or duplicates (the ids are the event
log's own). New events come from the process's live hub (app/live/hub.py), rendered once per
viewer for every stream; a stream holds no Redis connection. An idle stream gets keep-alive
comments; a finished game's stream ends; a stopping server ends its streams with a
reconnect hint.
"""

import itertools
import json

from ..ops import metrics

RECONNECT_HINT = "retry: 1000\n\n"  # ms: reconnect to another server at once when this one stops


def sse(kind: str, data, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def render_event(event) -> str:
    return sse("event", event, event["id"])


def event_stream(service, hub, game_id: str, seat: int | None, last_event_id: int | None, keepalive: float):
    """The stream's chunks. The game is watched and the first chunk made before this returns: a
    store or change feed that fails then is a 503 problem, not a server's bare 500 at the stream's
    start (once it has started, a failure ends it and the client resumes with Last-Event-ID)."""
    watcher = hub.watch(game_id, seat)  # before reading, so no change slips between
    chunks = _events(service, hub, watcher, game_id, seat, last_event_id, keepalive)
    return itertools.chain([next(chunks)], chunks)


def _events(service, hub, watcher, game_id, seat, last_event_id, keepalive):
    metrics.OPEN_STREAMS.inc()
    try:
        if last_event_id is None:
            view, _ = service.view_as(game_id, seat)
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
            _, events = payload
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
