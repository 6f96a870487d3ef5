"""Follow a game live over Server-Sent Events with a client generated from the spec.

    openapi-python-client generate --path openapi/openapi.json --meta none --output-path ronda_client
    python examples/follow_a_game.py http://127.0.0.1:8000 GAME_ID [SEAT_TOKEN]

A generated Python client calls `streamGame` but cannot read a stream: it waits for a whole
body. Read the stream with the httpx client the package already holds, and parse each message
into the generated model its `event` names (`SnapshotMessage`, `EventMessage`; `TurnMessage`,
`GameOverMessage` and `MatchOverMessage` on a bot's stream). Send the last id you saw as
`Last-Event-ID` when you reconnect: the stream resumes after it, nothing lost or repeated.
"""

import json
import sys
from collections.abc import Iterator

from ronda_client import AuthenticatedClient, Client
from ronda_client.models import EventMessage, SnapshotMessage

MESSAGES = {"snapshot": SnapshotMessage, "event": EventMessage}  # a name you do not know is skipped


def messages(lines: Iterator[str]) -> Iterator[dict]:
    """SSE text lines → {"event", "id", "data"} per message (comments such as keep-alives skipped)."""
    message: dict = {}
    for line in lines:
        if not line:
            if "data" in message:
                yield {**message, "data": json.loads(message["data"])}
            message = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            message[name] = value.removeprefix(" ")


def follow(client: Client | AuthenticatedClient, game_id: str,
           last_event_id: int | None = None) -> Iterator[SnapshotMessage | EventMessage]:
    """The game's stream as generated models, until the game is over (the server ends it then)."""
    headers = {"Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    with client.get_httpx_client().stream("GET", f"/games/{game_id}/stream", headers=headers, timeout=None) as answer:
        answer.raise_for_status()
        for message in messages(answer.iter_lines()):
            model = MESSAGES.get(message["event"])
            if model is not None:
                yield model.from_dict(message)


if __name__ == "__main__":
    base_url, game_id, *token = sys.argv[1:]
    client = AuthenticatedClient(base_url=base_url, token=token[0]) if token else Client(base_url=base_url)
    for received in follow(client, game_id):
        if isinstance(received, SnapshotMessage):
            print(f"snapshot at version {received.data.version}: table {received.data.table}")
        else:
            print(f"event {received.id}: {received.data.type_}")
