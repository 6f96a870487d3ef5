"""A finished game again, step by step: the engine plays its log over from its seed, and after
each action shows the whole table (every hand is public once a game is over). The log's own
events say which action each step was; events the engine did not make (a seat taken or left, a
timer that ran out) are the service's and are passed over."""

from collections.abc import Sequence

from .actions import perform
from .cards import ids
from .game import Game
from .rules import Rules

SERVICE_EVENTS = {"seat_taken", "seat_left", "turn_timeout"}
ACTIONS = {"play": lambda event: {"type": "play", "card": event["card"]},
           "pass": lambda event: {"type": "pass"},
           "declaration": lambda event: {"type": "declare"}}


class ReplayDiverged(Exception):
    """The log is not what the engine makes of its own actions (a game played under older rules)."""


def replay_frames(rules: Rules, players: int, seed: str, first_dealer: int, events: list[dict],
                  deck: Sequence[str] | None = None) -> list[dict]:
    """The table after the deal and after each action: the id of the last event it follows,
    every hand, the table, the pile, the stock's size and the scores."""
    logged = [event for event in events if event["type"] not in SERVICE_EVENTS]
    game = Game(rules, players, seed=seed, deck=deck, first_dealer=first_dealer)
    position = _matched(game.events or [], logged, 0)
    frames = [_frame(game, logged, position)]
    while position < len(logged):
        event = logged[position]
        if event["type"] == "game_over" and event.get("reason"):  # ended off the table: no move of its own
            break
        if event["type"] not in ACTIONS:
            raise ReplayDiverged(f"event {event['id']} ({event['type']}) is not the engine's next")
        position = _matched(perform(game, event["seat"], ACTIONS[event["type"]](event)) or [], logged, position)
        frames.append(_frame(game, logged, position))
    return frames


def _matched(made: list[dict], logged: list[dict], position: int) -> int:
    """Where the log goes on once the engine's new events are found to be the log's own."""
    following = logged[position:position + len(made)]
    if len(following) < len(made) or any(
            (a["type"], a.get("seat"), a.get("card")) != (b["type"], b.get("seat"), b.get("card"))
            for a, b in zip(made, following, strict=True)):
        raise ReplayDiverged("the engine's events differ from the log")
    return position + len(made)


def _frame(game: Game, logged: list[dict], position: int) -> dict:
    return {"event_id": logged[position - 1]["id"], "hands": [ids(hand) for hand in game.hands],
            "table": ids(game.table), "pile": ids(game.pile), "stock_count": len(game.stock),
            "scores": list(game.scores)}
