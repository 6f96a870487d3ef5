"""A person's account across every room: what their app's server may do to it (suspend, restore),
the copy of everything held about them (export), and their erasure.

Erasure (docs/players.md, "Your users") keeps the games: their moves, scores and replays are the
other players' too, so each seat the person held is anonymous from then on (games/erasure.py),
and so is every standing of a tournament under way or over. Everything that was the person's
alone goes: their document, external id, tokens, games listing, record, inbox, ratings and the
notices and webhook payloads that named them. Each step can run again: an erasure cut short is
finished by the next request for it.
"""

import logging

from ..accounts.ladders import Ladders, pools
from ..apps.webhooks import WebhookService
from ..errors import GameNotFound, PlayerNotFound
from ..games.erasure import ERASED_NAME, GameErasure
from ..games.seating import Seating
from ..games.seats import seat_of_player
from ..games.service import GameService
from ..matchmaking.service import Matchmaker
from ..ops.connection import dump
from ..ops.scope import app_of, in_app, unscoped
from ..players.document import PlayerDocument
from ..players.service import PlayerService, entrant_of
from ..tournaments.service import TournamentService

log = logging.getLogger(__name__)


class People:
    def __init__(self, players: PlayerService, games: GameService, seating: Seating, erasure: GameErasure,
                 matchmaker: Matchmaker, tournaments: TournamentService, ladders: Ladders, webhooks: WebhookService):
        self.players, self.games, self.seating, self.erasure = players, games, seating, erasure
        self.matchmaker, self.tournaments, self.ladders, self.webhooks = matchmaker, tournaments, ladders, webhooks

    # ----- the app's server's ----------------------------------------------------------------------
    def suspend(self, app_id: str, player_id: str) -> dict:
        """Every token of the player answers 403 (within seconds on every process); their waiting
        ticket is cancelled and their live games resigned."""
        self._of_app(app_id, player_id)
        shown = self.players.set_suspended(player_id, True)
        self.matchmaker.cancel_live(player_id)
        self._resign_live_games(player_id)
        return shown

    def restore(self, app_id: str, player_id: str) -> dict:
        self._of_app(app_id, player_id)
        return self.players.set_suspended(player_id, False)

    def _of_app(self, app_id: str, player_id: str) -> PlayerDocument:
        if app_of(player_id) != app_id:
            raise PlayerNotFound(f"no player {player_id} in this app")
        return self.players.document(player_id)

    def _resign_live_games(self, player_id: str):
        for game_id in self.players.store.game_ids(player_id):
            try:
                self.seating.resign_player(game_id, player_id)
            except GameNotFound:
                continue

    # ----- export ----------------------------------------------------------------------------------
    def export(self, player_id: str, token: str | None) -> dict:
        """Everything held about the player, as one document (its schema: PlayerExport)."""
        doc = self.players.document(player_id)
        games = []
        game_ids = self.players.store.game_ids(player_id)
        for line in self.games.summaries(game_ids)[0]:
            seat = seat_of_player(line["seats"], player_id)
            if seat is not None:
                games.append({"id": line["id"], "seat": seat, "status": line["status"], "preset": line["preset"],
                              "players": line["players"], "rated": line["rated"], "scores": line["scores"],
                              "winner": line["winner"], "outcome": line["outcome"], "created_at": line["created_at"]})
        tournaments = []
        for tournament_id in self.players.store.tournament_ids(player_id):
            found = self.tournaments.store.load(tournament_id)
            if found is not None:
                tournaments.append({"id": tournament_id, "format": found["format"], "status": found["status"],
                                    "created_at": found["created_at"]})
        ticket = self.matchmaker.live_ticket(player_id)
        return {"profile": {**self.players.public(player_id), "external_id": doc.get("external_id"),
                            "suspended_at": doc.get("suspended_at")},
                "tokens": self.players.token_list(player_id, token), "games": games,
                "tickets": [ticket] if ticket else [], "tournaments": tournaments,
                "notices": [{"id": entry_id, **notice} for entry_id, notice in self.players.store.notices(player_id)]}

    # ----- erasure ---------------------------------------------------------------------------------
    def erase(self, player_id: str):
        """Erase the player (see the module). Their tokens stop first: every process refuses them
        within seconds (players/tokens.py)."""
        doc = self.players.store.load(player_id)
        if doc is None:
            return
        if not doc.get("deleting_at"):
            doc = {**doc, "deleting_at": self.players.utc_now()}
            self.players.store.save(doc)
        self.players.tokens.forget(player_id)
        self.matchmaker.cancel_live(player_id)
        self._resign_live_games(player_id)
        names = {doc["name"]}
        co_players: set[str] = set()
        for game_id in self.players.store.game_ids(player_id):
            names |= self._seat_names(game_id, player_id, co_players)
            self.erasure.erase(game_id, player_id)
        for tournament_id in self.players.store.tournament_ids(player_id):
            self.tournaments.erase_person(tournament_id, player_id, ERASED_NAME)
        for pool in pools():
            self.ladders.store.remove(in_app(app_of(player_id), pool), entrant_of(player_id))
        needles = [player_id.encode(), *(n.encode() for n in names), *(dump(n)[1:-1].encode() for n in names)]
        for other in co_players - {player_id}:
            self.players.store.drop_notices_naming(other, needles)
        self.webhooks.redact(app_of(player_id), needles, ERASED_NAME)
        if doc.get("external_id"):
            self.players.store.release_external_id(app_of(player_id), doc["external_id"], player_id)
        self.players.store.erase(player_id)
        self.players.tokens.forget(player_id)
        log.info("player %s erased", unscoped(player_id))

    def _seat_names(self, game_id: str, player_id: str, co_players: set[str]) -> set[str]:
        """The names the player sat under in the game (renames leave the old ones on seats), and
        the other people at it (whose inboxes may name them)."""
        found = self.games.find(game_id)
        if found is None:
            return set()
        names = set()
        for info in found.doc["seats"]:
            if info.get("player") == player_id:
                names.add(info.get("name", ""))
            elif info.get("left_by") == player_id:  # "<bot> bot (for <name>)"
                names.add(info.get("name", "").partition(" (for ")[2].removesuffix(")"))
            elif (other := info.get("player")) is not None:
                co_players.add(other)
        names.discard("")
        return names
