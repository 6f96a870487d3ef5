"""Play a whole game against the house's greedy bot with a client generated from the spec.

    openapi-python-client generate --path openapi/openapi.json --meta none --output-path ronda_client
    python examples/play_against_a_bot.py http://127.0.0.1:8000 [preset]

The generated package is used as it comes. This is the loop every client needs:
read your view; act on its version with If-Match; on 412 the game moved first (a bot
answered a declaration at the same time as you, say), so read the view again and decide
again; on 429 wait as long as Retry-After says. Its player takes the first capture it is
offered, else the first legal action. A newer server may send event types this package does
not know: they are skipped, as the API's versioning policy asks.
"""

import json
import sys
import time
from enum import Enum
from http import HTTPStatus

from ronda_client import AuthenticatedClient, Client, models
from ronda_client.api.games import create_game, get_seat_view, play_action
from ronda_client.models import (ActionRequest, ActionRequestType, ActionResult, CaptureEvent, CreateGameRequest,
                                 GameView, GameViewStatus, RuleOptions, SeatRequest, SeatRequestType)

# Every event type the generated package knows: each event's `type` is an enum of one value.
KNOWN_EVENT_TYPES = {member.value for name, kind in vars(models).items()
                     if name.endswith("EventType") and isinstance(kind, type) and issubclass(kind, Enum)
                     for member in kind}


def action_result(response) -> ActionResult:
    """An action's answer, its events of unknown types left out (the generated union refuses them)."""
    body = json.loads(response.content)
    body["events"] = [event for event in body["events"] if event.get("type") in KNOWN_EVENT_TYPES]
    return ActionResult.from_dict(body)


def call(endpoint, *args, **kwargs):
    """The endpoint's response, once it is not a 429 (waits as long as Retry-After says)."""
    while True:
        response = endpoint.sync_detailed(*args, **kwargs)
        if response.status_code != HTTPStatus.TOO_MANY_REQUESTS:
            return response
        time.sleep(float(response.headers.get("Retry-After", "1")))


def act(game_id: str, me: AuthenticatedClient, view: GameView, choice) -> tuple[GameView | None, int]:
    """Acts on `view`: the new view and how many cards it captured, or None when the game moved first."""
    response = call(play_action, game_id, client=me, if_match=f'"{view.version}"',
                    body=ActionRequest(type_=ActionRequestType(choice.type_.value), card=choice.card))
    if response.status_code == HTTPStatus.PRECONDITION_FAILED:
        return None, 0
    if response.status_code != HTTPStatus.OK:
        raise RuntimeError(f"{response.status_code}: {response.parsed.detail}")
    result = action_result(response)
    captured = sum(len(event.taken) for event in result.events
                   if isinstance(event, CaptureEvent) and event.seat == view.seat)  # the union, narrowed
    return result.game, captured


def decide(view: GameView):
    """A capture when there is one (a played card whose rank is on the table), else the first legal action."""
    on_table = {card[:-1] for card in view.table}
    captures = [a for a in view.legal_actions if a.type_.value == "play" and a.card[:-1] in on_table]
    return (captures or view.legal_actions)[0]


def play(base_url: str, preset: str = "classic") -> dict:
    created = call(create_game, client=Client(base_url=base_url), body=CreateGameRequest(
        players=2, rules=RuleOptions(preset=preset),
        seats=[SeatRequest(type_=SeatRequestType.HUMAN, name="Example"),
               SeatRequest(type_=SeatRequestType.BOT, bot="greedy")])).parsed
    game_id, me = created.game.id, AuthenticatedClient(base_url=base_url, token=created.tokens[0].token)
    view, captured, moved_first = call(get_seat_view, game_id, client=me).parsed, 0, 0
    while view.status != GameViewStatus.FINISHED:
        if view.seat in view.awaiting:
            new_view, taken = act(game_id, me, view, decide(view))
            if new_view is None:  # 412: read again, then decide again on what is there now
                moved_first += 1
                new_view = call(get_seat_view, game_id, client=me).parsed
            view, captured = new_view, captured + taken
        else:  # the bot is thinking on a worker: wait for the next version (long polling)
            view = call(get_seat_view, game_id, client=me, after_version=view.version, wait_seconds=10).parsed
    return {"scores": view.scores, "cards_captured": captured, "times_the_game_moved_first": moved_first}


if __name__ == "__main__":
    print(play(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000", *sys.argv[2:3]))
