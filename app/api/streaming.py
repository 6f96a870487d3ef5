"""Server-Sent Events for one viewer: a snapshot first, then every event it may see, with ids.

`Last-Event-ID` resumes after that event without loss or duplicates (the ids are the event
log's own); an idle stream gets keep-alive comments; a finished game's stream ends.
"""

import json

from ..store import changes_channel


def sse(kind: str, data, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


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
            if pubsub.get_message(timeout=keepalive) is None:
                yield ": keep-alive\n\n"
    finally:
        pubsub.close()
