"""The game after a finished one: offered to its seats, claimed by each who asks, declined by any."""

import secrets

from ..engine import GameOver, game_from_dict
from ..errors import GameNotFound, GameNotOver, InvalidRequest, RematchDeclined, RematchStarted, SeatTaken, StaleVersion
from ..ops.scope import app_of, in_app
from .document import GameDocument, KeptFor
from .moves import end_game
from .records import DECLINED, FINISHED, summary
from .seating import Seating
from .seats import Seats, token_digest
from .service import GameService
from .store import GameStore, LoadedGame


MAKE_ATTEMPTS = 3  # a decided next game may be missing while made, or deleted by a decline


class Rematches:
    """The game after a finished one. What it is, who asked for it and who was offered it are
    decided in one script on the finished game's slot (GameStore.decide_rematch), so any number of
    asks from any seats answer one next game, each player is offered it once, and a decline racing
    an accept has one outcome. The next game itself is made from the finished one by whoever finds
    it missing (its id is decided, its making idempotent), and each asker claims their own seat."""

    def __init__(self, games: GameService, seating: Seating, store: GameStore, seats: Seats, players=None):
        self.games, self.seating, self.store, self.seats, self.players = games, seating, store, seats, players

    def rematch(self, game_id: str, token: str | None) -> tuple[LoadedGame, int, str, bool]:
        """The game after a finished one, and the asker's seat in it: (game, seat, seat token,
        whether this call decided it). The same seats and rules, the next dealer; bots sit at once,
        every human seat is kept for its last holder. Asking again, by anyone, answers the same game
        and claims the asker's seat (a seat already theirs answers as it is); after a decline, 409."""
        finished = self.games.load(game_id).doc
        seat = self.seats.seat_of(finished, token)
        if finished["status"] != FINISHED:
            raise GameNotOver("a rematch follows a finished game")
        if finished.get("match"):
            raise InvalidRequest("a match's games are not rematched: the match plays its own", field="game_id")
        offer_to = [other for other, info in enumerate(finished["seats"])
                    if other != seat and info["type"] != "bot" and info.get("player")]
        decision = self.store.decide_rematch(game_id, "ask", seat, in_app(app_of(game_id), secrets.token_urlsafe(16)),
                                             offer_to)
        if decision.state == "declined":
            raise RematchDeclined(f"the rematch of game {game_id} was declined")
        assert decision.next_id is not None  # an ask sets it
        loaded = self._claim(finished, decision.next_id, seat, token)
        for other in decision.offer_to:
            self.players.notify(finished["seats"][other]["player"], {
                "type": "rematch_offered", "game_id": decision.next_id, "seat": other, "previous_game_id": game_id,
                "asked_by": {"seat": seat, "name": loaded.doc["seats"][seat].get("name")}})
        return loaded, seat, self.seats.tokens(loaded.doc, [seat])[seat], decision.created

    def _claim(self, finished: GameDocument, next_id: str, seat: int, token: str | None) -> LoadedGame:
        """The asker's seat in the next game, made first if nobody has yet. A claim is keyed by the
        asker's token, so asking again answers the seat it took."""
        player_id = finished["seats"][seat].get("player")
        name = None if player_id else finished["seats"][seat]["name"]
        request_id = f"rematch:{token_digest(token or '')}"
        for attempt in range(MAKE_ATTEMPTS):
            self._made(finished, next_id)
            try:  # the seat is the player's whichever token asks: theirs, or their seat's of the game before
                return self.seating.claim_seat(next_id, seat, name, token, request_id, owner=player_id).loaded
            except GameOver:  # called off by a decline since
                raise RematchDeclined(f"the rematch of game {finished['id']} was declined") from None
            except SeatTaken:
                loaded = self.games.load(next_id)
                if player_id and loaded.doc["seats"][seat].get("player") == player_id:
                    return loaded  # theirs already (claimed with another request)
                raise
            except GameNotFound:
                if attempt == MAKE_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def _made(self, finished: GameDocument, next_id: str) -> None:
        """The next game exists, unless its rematch was declined: a decline deletes it, and one made
        again after the decline (by an ask decided before it) is deleted here, the ask refused."""
        if self.games.find(next_id) is not None:
            return
        self._create_rematch(finished, next_id)
        if self.store.decide_rematch(finished["id"], "read").state == "declined":
            self._call_off(next_id, -1)
            raise RematchDeclined(f"the rematch of game {finished['id']} was declined")

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
        for holder in kept_for.values():  # in each player's games at once, on every device, until they answer
            if holder["player"]:
                self.players.took_seat(holder["player"], next_id)

    def _call_off(self, next_id: str, seat: int) -> None:
        """The declined rematch ends before it began, nobody winning (`seat`: who declined; -1 when
        an ask made it again after the decline): every table of it, and every list, says so."""
        for _ in range(MAKE_ATTEMPTS):
            following = self.games.find(next_id)
            if following is None or following.doc["status"] == FINISHED:
                return
            try:
                end_game(self.seating.writer, following, game_from_dict(following.doc["engine"]), None, DECLINED,
                         seat)
                return
            except StaleVersion:  # a seat was claimed meanwhile: call it off as it is now
                continue

    def rematch_offered(self, game_id: str) -> dict:
        """The summary of the rematch offered after a finished game (404 when none is)."""
        self.games.version(game_id)
        decision = self.store.decide_rematch(game_id, "read")
        following = self.games.find(decision.next_id) if decision.state == "open" and decision.next_id else None
        if following is None:
            raise GameNotFound(f"no rematch of game {game_id} is offered")
        return summary(following.doc, following.version)

    def decline_rematch(self, game_id: str, token: str | None) -> str:
        """A seat of the finished game says no (or its asker takes the ask back), for good: the next
        game is called off (`declined`, nobody wins: every table of it says so), every other person
        of the game before is told, and every later ask is refused. Answers its id; 409 once another seat has
        accepted (the game is on), 404 when no rematch is offered."""
        finished = self.games.load(game_id).doc
        seat = self.seats.seat_of(finished, token)
        people = sum(1 for info in finished["seats"] if info["type"] != "bot")
        decision = self.store.decide_rematch(game_id, "decline", seat, offer_to=[min(2, people)])
        if decision.state == "none" or decision.next_id is None:
            raise GameNotFound(f"no rematch of game {game_id} is offered")
        if decision.state == "accepted":
            raise RematchStarted(f"the rematch {decision.next_id} was accepted: leave its seat instead")
        self._call_off(decision.next_id, seat)
        if decision.state == "declined_now":  # every person of the game before, asker or offered, is told
            for other, info in enumerate(finished["seats"]):
                if info.get("player") and other != seat:
                    self.players.notify(info["player"], {
                        "type": "rematch_declined", "game_id": decision.next_id, "seat": other,
                        "previous_game_id": game_id,
                        "declined_by": {"seat": seat, "name": finished["seats"][seat].get("name")}})
        return decision.next_id
