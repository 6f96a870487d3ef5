"""What a tournament's people are told (each game it seats them at, its start, its end), each
notice once. The save that makes a notice due writes it as owed, in the tournament's slot, in the
same step as the change (store.py); then the process that saved, or else the next look, tells it
and marks it paid. A notice is keyed, so two tellers at once, or one telling again what a crash
left unpaid, add nothing (the player's inbox keeps one per key, a webhook endpoint one delivery
per key). A process killed between the save and the telling, or a Redis that lost its last second,
leaves the notice owed: said by the next look, never lost, never twice."""

import logging
from collections.abc import Callable

from ..ops.connection import StoreUnavailable
from ..players.service import PlayerService
from .document import OwedNotice, TournamentDocument
from .rounds import CANCELLED, FINISHED, RUNNING, newest_game, person_of
from .store import TournamentStore

log = logging.getLogger(__name__)


class Telling:
    def __init__(self, store: TournamentStore, players: PlayerService,
                 standings: Callable[[TournamentDocument], list[dict]]):
        self.store, self.players, self.standings = store, players, standings

    def owed_by(self, doc: TournamentDocument, was: str, at: list[tuple[int, int]]) -> list[OwedNotice]:
        """The notices a change owes: its new status's (from `was`), and each new game's at `at`."""
        return self._status_notices(doc, was) + [notice for number, k in at
                                                 for notice in self._game_notices(doc, number, k)]

    def tell_owed(self, tournament_id: str):
        """Tell what the tournament owes its people (once each, whoever else tells it too), then
        mark what was told paid. Its games are created first: a notice never names a game not yet
        there. A notice the store could not take stays owed, for the next look."""
        told = []
        for notice in self.store.owed(tournament_id):
            try:
                self.players.notify(notice["player_id"], notice["notice"], notice["once"])
            except StoreUnavailable:
                log.warning("tournament %s: %s to %s stays owed (the store failed)", tournament_id,
                            notice["notice"]["type"], notice["player_id"])
                continue
            told.append(notice)
        self.store.paid(tournament_id, told)

    def _game_notices(self, doc: TournamentDocument, number: int, k: int) -> list[OwedNotice]:
        """`tournament_round` to each person at the table's newest game."""
        table = doc["rounds"][number]["pairings"][k]
        if table["match_id"]:
            return []
        game_id, index, order = newest_game(table)
        return [{"player_id": player_id, "once": f"tournament_round:{game_id}",
                 "notice": {"type": "tournament_round", "tournament_id": doc["id"], "round": number,
                            "game": index, "game_id": game_id, "seat": seat,
                            "opponent": ", ".join(doc["names"][e] for e in order if e != entrant)}}
                for seat, entrant in enumerate(order) if (player_id := person_of(doc["entrants"][entrant]))]

    def _status_notices(self, doc: TournamentDocument, was: str) -> list[OwedNotice]:
        """`tournament_started` when it began, `tournament_over` (place and points) when it ended."""
        if doc["status"] == was:
            return []
        people = [(index, player_id) for index, entrant in enumerate(doc["entrants"])
                  if (player_id := person_of(entrant)) is not None]
        if doc["status"] == RUNNING:
            return [{"player_id": player_id, "once": f"tournament_started:{doc['id']}",
                     "notice": {"type": "tournament_started", "tournament_id": doc["id"],
                                "entrants": len(doc["entrants"])}} for _, player_id in people]
        if doc["status"] not in (FINISHED, CANCELLED):
            return []
        rows = {row["entrant"]: row for row in self.standings(doc)}
        return [{"player_id": player_id, "once": f"tournament_over:{doc['id']}",
                 "notice": {"type": "tournament_over", "tournament_id": doc["id"], "status": doc["status"],
                            "rank": rows[index]["rank"] if doc["status"] == FINISHED else None,
                            "points": rows[index]["points"]}} for index, player_id in people]
