"""Quick play with a client generated from the spec: two players queue, meet in one game, play it
to the end with their player tokens alone, and agree to a rematch.

    openapi-python-client generate --path openapi/openapi.json --meta none --output-path ronda_client
    python examples/quick_play.py http://127.0.0.1:8000

A player token acts for every seat of its player: no seat token is kept. The moves come from
play_against_a_bot.py's loop (read the view, act with If-Match, read again on 412).
"""

import sys

from play_against_a_bot import act, call, decide
from ronda_client import AuthenticatedClient, Client
from ronda_client.api.games import get_seat_view, rematch
from ronda_client.api.matchmaking import create_ticket, get_ticket
from ronda_client.api.players import create_player
from ronda_client.models import (CreatePlayerRequest, GameViewStatus, TicketRequest, TicketRequestPlayers,
                                 TicketRules, TicketRulesPreset, TicketStatus)


def become_player(base_url: str, name: str) -> AuthenticatedClient:
    created = call(create_player, client=Client(base_url=base_url), body=CreatePlayerRequest(name=name)).parsed
    return AuthenticatedClient(base_url=base_url, token=created.token)


def quick_play(players: list[AuthenticatedClient], rules: str = "simple") -> str:
    """Each player queues; each waits for its ticket to be matched: the game they meet in."""
    tickets = [call(create_ticket, client=me, body=TicketRequest(
        rules=TicketRules(preset=TicketRulesPreset(rules)), players=TicketRequestPlayers.VALUE_2,
        max_wait_seconds=30)).parsed
        for me in players]
    games = set()
    for me, ticket in zip(players, tickets, strict=True):
        while ticket.status == TicketStatus.WAITING:
            ticket = call(get_ticket, ticket.id, client=me, wait_seconds=25).parsed
        if ticket.status != TicketStatus.MATCHED:
            raise RuntimeError(f"ticket {ticket.id} is {ticket.status}")
        games.add(ticket.game_id)
    if len(games) != 1:
        raise RuntimeError(f"the tickets met in {games}")
    return games.pop()


def play_out(game_id: str, players: list[AuthenticatedClient]):
    """Both seats played in turn, each from its own view, until the game is over: its final view."""
    while True:
        for me in players:
            view = call(get_seat_view, game_id, client=me).parsed
            if view.status == GameViewStatus.FINISHED:
                return view
            if view.seat in view.awaiting:
                act(game_id, me, view, decide(view))  # on 412 (None) the next pass reads again


def play(base_url: str) -> dict:
    players = [become_player(base_url, "Amina"), become_player(base_url, "Omar")]
    game_id = quick_play(players)
    final = play_out(game_id, players)
    offered = call(rematch, game_id, client=players[0]).parsed
    accepted = call(rematch, game_id, client=players[1]).parsed
    return {"game_id": game_id, "scores": final.scores, "winner": final.winner,
            "rematch": offered.game.id, "rematch_status": accepted.game.status.value,
            "seats": sorted([offered.seat, accepted.seat])}


if __name__ == "__main__":
    print(play(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"))
