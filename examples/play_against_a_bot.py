"""Play a whole game against the house's greedy bot with a client generated from the spec.

    openapi-python-client generate --path openapi/openapi.json --meta none --output-path ronda_client
    python examples/play_against_a_bot.py http://127.0.0.1:8000

The generated package is used as it comes; this script always plays its first legal action.
"""

import sys

from ronda_client import AuthenticatedClient, Client
from ronda_client.api.games import create_game, get_seat_view, play_action
from ronda_client.models import (ActionRequest, ActionRequestType, CreateGameRequest, GameViewStatus,
                                 RuleOptions, SeatRequest, SeatRequestType)


def play(base_url: str, preset: str = "classic") -> list[int]:
    created = create_game.sync(client=Client(base_url=base_url), body=CreateGameRequest(
        players=2, rules=RuleOptions(preset=preset),
        seats=[SeatRequest(type_=SeatRequestType.HUMAN, name="Example"),
               SeatRequest(type_=SeatRequestType.BOT, bot="greedy")]))
    game_id, me = created.game.id, AuthenticatedClient(base_url=base_url, token=created.tokens[0].token)
    view = get_seat_view.sync(game_id, client=me)
    while view.status != GameViewStatus.FINISHED:
        if view.seat in view.awaiting:
            choice = view.legal_actions[0]
            result = play_action.sync(game_id, client=me, if_match=f'"{view.version}"',
                                      body=ActionRequest(type_=ActionRequestType(choice.type_.value), card=choice.card))
            view = result.game
        else:  # the bot is thinking on a worker: wait for the next version (long polling)
            view = get_seat_view.sync(game_id, client=me, after_version=view.version, wait_seconds=10)
    return view.scores


if __name__ == "__main__":
    print("final scores:", play(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"))
