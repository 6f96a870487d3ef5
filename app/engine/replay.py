"""A finished game again, step by step: the engine plays its log over from its seed, and after
each action shows the whole table (every hand is public once a game is over). The log's own
events say which action each step was; events the engine did not make (a seat taken or left, a
timer that ran out) are the service's and are passed over."""

from collections.abc import Iterator, Sequence

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


def played_over(rules: Rules, players: int, seed: str, first_dealer: int, events: list[dict],
                deck: Sequence[str] | None = None) -> Iterator[tuple[Game, int | None, dict | None, int]]:
    """The game played over from its log: after the deal (no seat, no action), then after each
    action, `(game, the seat that acted, its action, the id of the last event it follows)`. The
    game is the one being played over: a caller that keeps a position clones it."""
    logged = [event for event in events if event["type"] not in SERVICE_EVENTS]
    game = Game(rules, players, seed=seed, deck=deck, first_dealer=first_dealer)
    position = _matched(game.events or [], logged, 0)
    yield game, None, None, logged[position - 1]["id"]
    while position < len(logged):
        event = logged[position]
        if event["type"] == "game_over" and event.get("reason"):  # ended off the table: no move of its own
            return
        if event["type"] not in ACTIONS:
            raise ReplayDiverged(f"event {event['id']} ({event['type']}) is not the engine's next")
        action = ACTIONS[event["type"]](event)
        position = _matched(perform(game, event["seat"], action) or [], logged, position)
        yield game, event["seat"], action, logged[position - 1]["id"]


def replay_frames(rules: Rules, players: int, seed: str, first_dealer: int, events: list[dict],
                  deck: Sequence[str] | None = None) -> list[dict]:
    """The table after the deal and after each action: the id of the last event it follows,
    every hand, the table, the pile, the stock's size and the scores."""
    return [_frame(game, event_id) for game, _, _, event_id in
            played_over(rules, players, seed, first_dealer, events, deck)]


def _matched(made: list[dict], logged: list[dict], position: int) -> int:
    """Where the log goes on once the engine's new events are found to be the log's own."""
    following = logged[position:position + len(made)]
    if len(following) < len(made) or any(
            (a["type"], a.get("seat"), a.get("card")) != (b["type"], b.get("seat"), b.get("card"))
            for a, b in zip(made, following, strict=True)):
        raise ReplayDiverged("the engine's events differ from the log")
    return position + len(made)


def _frame(game: Game, event_id: int) -> dict:
    return {"event_id": event_id, "hands": [ids(hand) for hand in game.hands],
            "table": ids(game.table), "pile": ids(game.pile), "stock_count": len(game.stock),
            "scores": list(game.scores)}
