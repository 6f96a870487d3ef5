"""Server-Sent Events for one viewer: a snapshot first, then every event it may see, with ids.

`Last-Event-ID` resumes after that event without loss or duplicates (the ids are the event
log's own); an idle stream gets keep-alive comments; a finished game's stream ends.
"""

import json
import time

from ..store import changes_channel


def sse(kind: str, data, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _changed_within(pubsub, seconds: float) -> bool:
    """Wait for a change notice; get_message also answers None early for subscribe confirmations."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if pubsub.get_message(timeout=left):
            return True
    return False


def event_stream(service, game_id: str, seat: int | None, last_event_id: int | None, keepalive: float):
    pubsub = service.store.redis.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(changes_channel(game_id))  # before reading, so no change slips between
    try:
        if last_event_id is None:
            view, _ = service.view_as(game_id, seat)
            last_event_id = view["event_count"]
            yield sse("snapshot", view, last_event_id)
        while True:
            events = service.events_as(game_id, seat, last_event_id, 500)
            for event in events:
                yield sse("event", event, event["id"])
                last_event_id = event["id"]
            if events:
                continue
            view, _ = service.view_as(game_id, seat)
            if view["status"] == "finished":
                return
            if not _changed_within(pubsub, keepalive):
                yield ": keep-alive\n\n"
    finally:
        pubsub.close()
