"""An outside bot: registers, enters a match against the house's greedy bot, plays it over HTTP.

    openapi-python-client generate --path openapi/openapi.json --meta none --output-path ronda_client
    python examples/outside_bot.py http://127.0.0.1:8000 [games]

It uses the generated package as it comes. Its turns arrive by long poll (`waitForTurns`; a
bot that keeps a connection open can use the SSE stream `streamTurns` instead); for each it
reads its seat's view with its bot token and acts on that version with If-Match. A 412 means
the turn has passed (its time ran out and the fallback moved), so it waits for the next one.
Its play: the capture that takes the most cards, else its lowest card.
"""

import sys
from http import HTTPStatus

from play_against_a_bot import call  # waits out 429s as Retry-After says
from ronda_client import AuthenticatedClient, Client
from ronda_client.api.bots import create_bot, wait_for_turns
from ronda_client.api.games import get_seat_view, play_action
from ronda_client.api.matches import create_match, get_match
from ronda_client.models import (ActionRequest, ActionRequestType, CreateBotRequest, CreateMatchRequest, GameView,
                                 MatchStatus, RuleOptions)

RANK_ORDER = [1, 2, 3, 4, 5, 6, 7, 10, 11, 12]


def choose(view: GameView):
    """The play whose rank takes the most table cards, else the lowest card; declare when offered."""
    legal = view.legal_actions
    for action in legal:
        if action.type_.value == "declare":
            return action
    plays = [a for a in legal if a.type_.value == "play"]
    if not plays:
        return legal[0]
    ranks = [int(card[:-1]) for card in view.table]
    return max(plays, key=lambda a: (ranks.count(int(a.card[:-1])), -RANK_ORDER.index(int(a.card[:-1]))))


def play_turns(me: AuthenticatedClient, until) -> int:
    """Play every turn that comes to the bot of `me` until `until()`; the moves made."""
    cursor, moves = None, 0
    while not until():
        answer = call(wait_for_turns, client=me, wait_seconds=5, **({"after": cursor} if cursor else {})).parsed
        cursor = answer.cursor
        for turn in answer.turns:
            view = call(get_seat_view, turn.game_id, client=me).parsed
            while view.seat in view.awaiting:  # several actions in a row (a declaration, then a card)
                action = choose(view)
                acted = call(play_action, turn.game_id, client=me, if_match=f'"{view.version}"',
                             body=ActionRequest(type_=ActionRequestType(action.type_.value), card=action.card))
                if acted.status_code != HTTPStatus.OK:  # 412: the turn has passed; 409: so has the game
                    break
                view, moves = acted.parsed.game, moves + 1
    return moves


def play_match(base_url: str, games: int = 2, preset: str = "simple") -> dict:
    anonymous = Client(base_url=base_url)
    registered = call(create_bot, client=anonymous, body=CreateBotRequest(name="Example bot")).parsed
    me = AuthenticatedClient(base_url=base_url, token=registered.token)
    match = call(create_match, client=anonymous, body=CreateMatchRequest(
        bots=[registered.bot.entrant, "greedy"], games=games, rules=RuleOptions(preset=preset), move_seconds=10)).parsed
    moves = play_turns(me, until=lambda: call(get_match, match.id, client=anonymous).parsed.status ==
                       MatchStatus.FINISHED)
    final = call(get_match, match.id, client=anonymous).parsed
    return {"match_id": final.id, "bot": registered.bot.entrant, "moves": moves,
            "standings": {entrant.bot: entrant.wins for entrant in final.entrants},
            "games_done": final.games_done}


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    print(play_match(url, int(sys.argv[2]) if len(sys.argv) > 2 else 2))
