"""The game after a finished one: offered to its seats, claimed by each who asks, declined by any."""

import secrets

from ..errors import GameNotFound, GameNotOver, InvalidRequest, RematchStarted
from ..ops.scope import app_of, in_app
from .document import GameDocument, KeptFor
from .records import FINISHED, OPEN, summary
from .seating import Seating
from .seats import Seats
from .service import GameService
from .store import GameStore, LoadedGame


class Rematches:
    def __init__(self, games: GameService, seating: Seating, store: GameStore, seats: Seats, players=None):
        self.games, self.seating, self.store, self.seats, self.players = games, seating, store, seats, players

    def rematch(self, game_id: str, token: str | None) -> tuple[LoadedGame, int, str, bool]:
        """The game after a finished one, and the asker's seat in it: (game, seat, seat token,
        whether this call created it). The same seats and rules, the next dealer; bots sit at once,
        every human seat is kept for its last holder. Asking again, by anyone, answers the same game
        (its id is set once on the finished game), and claims the asker's seat."""
        finished = self.games.load(game_id).doc
        seat = self.seats.seat_of(finished, token)
        if finished["status"] != FINISHED:
            raise GameNotOver("a rematch follows a finished game")
        if finished.get("match"):
            raise InvalidRequest("a match's games are not rematched: the match plays its own", field="game_id")
        next_id = self.store.next_game_id(game_id, in_app(app_of(game_id), secrets.token_urlsafe(16))) or ""
        created = self.games.find(next_id) is None
        if created:
            self._create_rematch(finished, next_id)
            for other, info in enumerate(finished["seats"]):
                if other != seat and info["type"] != "bot" and info.get("player"):
                    self.players.notify(info["player"], {"type": "rematch_offered", "game_id": next_id, "seat": other,
                                                         "previous_game_id": game_id})
        loaded = self.games.load(next_id)
        if loaded.doc["seats"][seat]["type"] == "open":
            player_id = finished["seats"][seat].get("player")
            name = None if player_id else finished["seats"][seat]["name"]
            loaded, _ = self.seating.claim_seat(next_id, seat, name, token)
        return loaded, seat, self.seats.tokens(loaded.doc, [seat])[seat], created

    def _create_rematch(self, finished: GameDocument, next_id: str) -> None:
        first_dealer = self.store.events(finished["id"], 0, 1)[0]["dealer"]
        seats: list[dict] = []
        kept_for: dict[int, KeptFor] = {}
        for seat, info in enumerate(finished["seats"]):
            if info["type"] == "bot":
                seats.append({"type": "bot", "bot": info["bot"], "name": info["name"]})
            else:
                seats.append({"type": "open"})
                kept_for[seat] = {"player": info.get("player"), "game": finished["id"], "seat": seat}
        rated = bool(finished.get("rated"))
        request = {"players": finished["players"], "rated": rated, "seats": seats,
                   "rules": {"preset": finished["rules"]["preset"]} if rated else finished["rules"],
                   "first_dealer": (first_dealer + 1) % finished["players"],
                   "turn_timeout_seconds": finished.get("turn_timeout_seconds")}
        self.seating.create_owned(request, {}, next_id, kept_for=kept_for, extra={"rematch_of": finished["id"]})

    def rematch_offered(self, game_id: str) -> dict:
        """The summary of the rematch offered after a finished game (404 when none is)."""
        following = self._next_game(game_id)
        return summary(following.doc, following.version)

    def _next_game(self, game_id: str) -> LoadedGame:
        self.games.version(game_id)
        next_id = self.store.next_game_id(game_id)
        following = self.games.find(next_id) if next_id else None
        if following is None:
            raise GameNotFound(f"no rematch of game {game_id} is offered")
        return following

    def decline_rematch(self, game_id: str, token: str | None) -> str:
        """A seat of the finished game says no: the next game, while still open, is gone (every
        player seated in it is told). Answers its id."""
        self.seats.seat_of(self.games.load(game_id).doc, token)
        following = self._next_game(game_id)
        if following.doc["status"] != OPEN:
            raise RematchStarted(f"the rematch {following.doc['id']} has started: leave its seat instead")
        self.store.delete_open(following.doc["id"])
        for seat, info in enumerate(following.doc["seats"]):
            if info.get("player"):
                self.players.notify(info["player"], {"type": "rematch_declined", "game_id": following.doc["id"],
                                                     "seat": seat, "previous_game_id": game_id})
        return following.doc["id"]
