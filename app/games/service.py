"""Games as resources: create, seat, read, act. HTTP-free game logic meets the store here; every
write goes through the writer (app/games/writer.py)."""

import secrets
import time
from typing import Final, NamedTuple

from ..ops.scope import PUBLIC_APP, app_of, in_app
from ..engine import (GameOver, IllegalAction, InvalidAction, Game, action_to_dict, game_from_dict, perform,
                      rules_from_dict, rules_from_request, visible_event)
from ..engine.replay import ReplayDiverged, replay_frames
from ..errors import (GameNotFound, GameNotOver, GameNotStarted, InvalidRequest, InvalidToken, PreconditionRequired,
                      RematchStarted, ReplayUnavailable, SeatTaken, StaleVersion)
from ..ops import metrics
from .document import DocumentExtras, GameDocument, KeptFor, MatchPlace, SeatDocument
from .records import ACTIVE, FINISHED, OPEN, summary, view_of
from .seats import Seats, seat_of_player
from .store import GameExists, GameMissing, LoadedGame
from .writer import GameWriter, found


LEAVE_ATTEMPTS = 5  # a leave meets this many moves landing first before it answers 412
# A game remembers its last keyed actions, written with them: a retry whose first answer was lost
# (its process killed between the write and the idempotency record) comes within seconds, a few
# moves later at most.
APPLIED_REQUESTS_KEPT = 16
# A seat keeps the request that made it what it is (a claim took it, a leave freed it), for its retry.
CHANGED_BY: Final = "changed_by_request"


class Acted(NamedTuple):
    """An action's answer: the seat's view, the events it caused as that seat sees them, the
    version; `applied_before`: the same request had been applied already (this answers its retry)."""
    view: dict
    events: list
    version: int
    applied_before: bool = False


def _dealing(request: dict) -> str:
    """Who chose the deal: a player who joins is told before claiming a seat."""
    if request.get("deck") is not None:
        return "creator_deck"
    return "creator_seed" if request.get("seed") is not None else "server"


def _check_rated(request: dict, seats: list[dict], owners: dict[int, str]):
    """A rated game is one a fair pool can count: a preset's rules as they are, the server's deal,
    and every human seat a player's (the creator's, or open for players to claim)."""
    if request.get("deck") is not None or request.get("seed") is not None:
        raise InvalidRequest("rated: a game whose seed or deck the creator chose is never rated", field="rated")
    if set(request.get("rules") or {}) - {"preset"}:
        raise InvalidRequest("rated: a rated game plays a preset's rules unchanged (its pool)", field="rated")
    if any(spec.get("type") == "human" and seat not in owners for seat, spec in enumerate(seats)):
        raise InvalidRequest("rated: every human seat of a rated game is a player's: mark yours `mine` and "
                             "leave the others open for players to claim", field="rated")


class GameService:
    def __init__(self, store, seats: Seats, writer: GameWriter, players=None):
        self.store, self.seats, self.writer, self.players = store, seats, writer, players
        self.bot_kinds = seats.bot_kinds

    # ----- creating and joining -------------------------------------------------------------
    def create_game(self, request: dict, game_id: str | None = None, token: str | None = None,
                    app_id: str = PUBLIC_APP) -> tuple[LoadedGame, dict[int, str]]:
        """A game of app `app_id`. `game_id`, when given, is the same for every retry of one
        request: a retry whose first run was cut off between the write and its idempotency record
        answers that game. A player `token` makes the seat marked `mine` theirs."""
        seats = request.get("seats") or []
        if any(spec.get("mine") and spec["type"] != "human" for spec in seats):
            raise InvalidRequest("seats: only a human seat can be `mine`", field="seats")
        marked = [seat for seat, spec in enumerate(seats) if spec.get("mine")]
        player_id = self._seat_owner(token, len(marked))
        return self.create_owned(request, {marked[0]: player_id} if player_id else {},
                                 in_app(app_id, game_id or secrets.token_urlsafe(16)))

    def create_owned(self, request: dict, owners: dict[int, str], game_id: str | None = None,
                     kept_for: dict[int, KeptFor] | None = None, extra: DocumentExtras | None = None
                     ) -> tuple[LoadedGame, dict[int, str]]:
        """A game whose human seats in `owners` belong to those players (listed among their games
        before the game is written); quick play and rematches create theirs here too. `kept_for`:
        open seats only their former holders may claim (a rematch's); `extra`: fields of the
        game's document (where a rematch came from)."""
        players = request["players"]
        rules = rules_from_request(request.get("rules"))
        game = Game(rules, players, seed=request.get("seed"), deck=request.get("deck"),
                    first_dealer=request.get("first_dealer"))
        seats = request.get("seats") or [{"type": "open"}] * players
        if len(seats) != players:
            raise InvalidRequest(f"seats: give one seat per player ({players})", field="seats")
        if request.get("rated"):
            _check_rated(request, seats, owners)
        game_id, timeout = game_id or secrets.token_urlsafe(16), request.get("turn_timeout_seconds")
        seat_docs = [self.seats.from_request(game_id, seat, spec) for seat, spec in enumerate(seats)]
        for seat, player_id in owners.items():
            name = seats[seat].get("name") or self.players.name_of(player_id)
            seat_docs[seat] = self.seats.human(game_id, seat, name, player_id)
            self.players.took_seat(player_id, game_id)
        for seat, holder in (kept_for or {}).items():
            seat_docs[seat]["kept_for"] = holder
        try:
            loaded = self.writer.create(game_id, game, seat_docs, game.events or [], timeout, _dealing(request),
                                        rated=bool(request.get("rated")),
                                        extra={**(extra or {}), "deck": request.get("deck")})
        except GameExists:  # only a given id can exist already
            loaded = self.load(game_id)
        return loaded, self.seats.tokens(loaded.doc)

    def _seat_owner(self, token: str | None, marked_mine: int) -> str | None:
        """The player who takes the seat marked `mine` (None when no seat is)."""
        if marked_mine > 1:
            raise InvalidRequest("seats: mark one seat `mine`, the seat your player token takes", field="seats")
        if not marked_mine:
            return None
        player_id = self.players.player_of_token(token) if self.players else None
        if player_id is None:
            raise InvalidToken("a seat marked `mine` is taken with 'Authorization: Bearer <player token>'")
        return player_id

    def tokens_of(self, game_id: str, seats) -> dict[int, str]:
        return self.seats.tokens(self.load(game_id).doc, seats)

    def claim_seat(self, game_id: str, seat: int, name: str | None,
                   token: str | None = None, request_id: str | None = None) -> tuple[LoadedGame, str]:
        """Take an open seat; with a player token it is the player's. A seat kept for someone (a
        rematch's) is theirs to claim: with their player token, or their seat token of the last game.
        `request_id` (see `act`) is kept on the seat: a retry of the claim that took it answers it again."""
        player_id = self.players.player_of_token(token) if self.players else None
        loaded = self.load(game_id)
        doc = loaded.doc
        if not 0 <= seat < doc["players"]:
            raise GameNotFound(f"game {game_id} has no seat {seat}")
        if _changed_by(doc["seats"], seat, request_id):
            return loaded, self.seats.tokens(doc, [seat])[seat]
        if doc["seats"][seat]["type"] != "open":
            raise SeatTaken(f"seat {seat} is already taken")
        if doc.get("rated") and player_id is None:
            raise InvalidToken("a rated game's seats are claimed with 'Authorization: Bearer <player token>'")
        if player_id is not None and (held := seat_of_player(doc, player_id)) is not None:
            raise SeatTaken(f"your player holds seat {held} of this game already: one seat a player")
        self._check_kept_for(doc["seats"][seat].get("kept_for"), seat, player_id, token)
        if player_id is not None:
            name = name or self.players.name_of(player_id)
            self.players.took_seat(player_id, game_id)
        doc["seats"][seat] = self.seats.human(game_id, seat, name or f"Player {seat + 1}", player_id)
        if request_id is not None:
            doc["seats"][seat][CHANGED_BY] = request_id
        # An event, so every open page (the creator's first) hears of it on its stream.
        taken = {"type": "seat_taken", "seat": seat, "name": doc["seats"][seat]["name"]}
        version, _ = self.writer.write(loaded, game_from_dict(doc["engine"]), [taken])
        return LoadedGame(version, doc), self.seats.tokens(doc, [seat])[seat]

    # ----- rematch -----------------------------------------------------------------------------
    def rematch(self, game_id: str, token: str | None) -> tuple[LoadedGame, int, str, bool]:
        """The game after a finished one, and the asker's seat in it: (game, seat, seat token,
        whether this call created it). The same seats and rules, the next dealer; bots sit at once,
        every human seat is kept for its last holder. Asking again, by anyone, answers the same game
        (its id is set once on the finished game), and claims the asker's seat."""
        finished = self.load(game_id).doc
        seat = self.seats.seat_of(finished, token)
        if finished["status"] != FINISHED:
            raise GameNotOver("a rematch follows a finished game")
        if finished.get("match"):
            raise InvalidRequest("a match's games are not rematched: the match plays its own", field="game_id")
        next_id = self.store.next_game_id(game_id, in_app(app_of(game_id), secrets.token_urlsafe(16))) or ""
        created = self.find(next_id) is None
        if created:
            self._create_rematch(finished, next_id)
            for other, info in enumerate(finished["seats"]):
                if other != seat and info["type"] != "bot" and info.get("player"):
                    self.players.notify(info["player"], {"type": "rematch_offered", "game_id": next_id, "seat": other,
                                                         "previous_game_id": game_id})
        loaded = self.load(next_id)
        if loaded.doc["seats"][seat]["type"] == "open":
            player_id = finished["seats"][seat].get("player")
            loaded, _ = self.claim_seat(next_id, seat, None if player_id else finished["seats"][seat]["name"], token)
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
        self.create_owned(request, {}, next_id, kept_for=kept_for, extra={"rematch_of": finished["id"]})

    def rematch_offered(self, game_id: str) -> dict:
        """The summary of the rematch offered after a finished game (404 when none is)."""
        following = self._next_game(game_id)
        return summary(following.doc, following.version)

    def _next_game(self, game_id: str) -> LoadedGame:
        self.version(game_id)
        next_id = self.store.next_game_id(game_id)
        following = self.find(next_id) if next_id else None
        if following is None:
            raise GameNotFound(f"no rematch of game {game_id} is offered")
        return following

    def decline_rematch(self, game_id: str, token: str | None) -> str:
        """A seat of the finished game says no: the next game, while still open, is gone (every
        player seated in it is told). Answers its id."""
        self.seats.seat_of(self.load(game_id).doc, token)
        following = self._next_game(game_id)
        if following.doc["status"] != OPEN:
            raise RematchStarted(f"the rematch {following.doc['id']} has started: leave its seat instead")
        self.store.delete_open(following.doc["id"])
        for seat, info in enumerate(following.doc["seats"]):
            if info.get("player"):
                self.players.notify(info["player"], {"type": "rematch_declined", "game_id": following.doc["id"],
                                                     "seat": seat, "previous_game_id": game_id})
        return following.doc["id"]

    def _check_kept_for(self, kept_for: KeptFor | None, seat: int, player_id: str | None, token: str | None):
        if kept_for is None or (player_id is not None and player_id == kept_for.get("player")):
            return
        previous = self.find(kept_for["game"])
        try:
            if previous is not None and self.seats.seat_of(previous.doc, token) == kept_for["seat"]:
                return
        except InvalidToken:
            pass
        raise SeatTaken(f"seat {seat} is kept for its player in game {kept_for['game']}: they claim it with "
                        "their player token or their seat token of that game")

    def leave_seat(self, game_id: str, seat: int, token: str | None, bot: str,
                   request_id: str | None = None) -> tuple[dict, int]:
        """A human leaves; a bot takes the seat over from the next move on. Leaving is not based on
        a view, so a move that lands first is no reason to refuse it: it is tried on the new version.
        `request_id` (see `act`) is kept on the seat: a retry of the leave that freed it (its token
        no longer holds the seat) answers the game as it is."""
        for _ in range(LEAVE_ATTEMPTS - 1):
            try:
                return self._leave_once(game_id, seat, token, bot, request_id)
            except StaleVersion:
                continue
        return self._leave_once(game_id, seat, token, bot, request_id)

    def _leave_once(self, game_id: str, seat: int, token: str | None, bot: str,
                    request_id: str | None) -> tuple[dict, int]:
        loaded = self.load(game_id)
        if _changed_by(loaded.doc["seats"], seat, request_id):
            return self.view_of(loaded, None), loaded.version
        return self.hand_to_bot(self._leavable(loaded, seat, token, bot), seat, bot, request_id)

    def _leavable(self, loaded: LoadedGame, seat: int, token: str | None, bot: str) -> LoadedGame:
        """The game, if `token` may leave `seat` of it to `bot`."""
        if self.seats.seat_of(loaded.doc, token) != seat:
            raise InvalidToken(f"only seat {seat}'s own token can leave it")
        if loaded.doc["status"] == FINISHED:
            raise GameOver("the game is over: its seats stay as they were")
        if bot not in self.bot_kinds:
            raise InvalidRequest(f"bot: unknown bot kind {bot!r}; kinds: {', '.join(self.bot_kinds)}", field="bot")
        return loaded

    def hand_to_bot(self, loaded: LoadedGame, seat: int, bot: str, request_id: str | None = None) -> tuple[dict, int]:
        """A built-in bot plays `seat` from the next move on (a player left, or a registered bot forfeited)."""
        doc = loaded.doc
        left = doc["seats"][seat]
        doc["seats"][seat] = {"type": "bot", "bot": bot, "name": f"{bot} bot (for {left['name']})",
                              "left_by": left.get("player")}  # a rated game still rates the player who left
        if request_id is not None:
            doc["seats"][seat][CHANGED_BY] = request_id
        game = game_from_dict(doc["engine"], record_events=False)
        version, _ = self.writer.write(loaded, game, [{"type": "seat_left", "seat": seat, "bot": bot}])
        return view_of(doc, version, game, None), version

    # ----- reading ---------------------------------------------------------------------------
    def load(self, game_id: str) -> LoadedGame:
        with found(game_id):
            return self.store.load(game_id)

    def find(self, game_id: str) -> LoadedGame | None:
        """The game, or None when there is none (never stored, or expired)."""
        try:
            return self.store.load(game_id)
        except GameMissing:
            return None

    def seat_for(self, game_id: str, token: str | None) -> int | None:
        """The seat a token holds in this game (None for no token: a spectator); 401 otherwise; 404
        when there is no such game, for spectators too."""
        if token is None:
            self.version(game_id)  # the cheapest read that says whether it exists
            return None
        return self.seats.seat_of(self.load(game_id).doc, token)

    def view(self, game_id: str, token: str | None = None) -> tuple[dict, int]:
        """The spectator view, or with a seat token that seat's own view."""
        loaded = self.load(game_id)
        seat = self.seats.seat_of(loaded.doc, token) if token is not None else None
        return self.view_of(loaded, seat), loaded.version

    def view_as(self, game_id: str, seat: int | None) -> tuple[dict, int]:
        loaded = self.load(game_id)
        return self.view_of(loaded, seat), loaded.version

    @staticmethod
    def view_of(loaded: LoadedGame, seat: int | None) -> dict:
        return view_of(loaded.doc, loaded.version, game_from_dict(loaded.doc["engine"], record_events=False), seat)

    def version(self, game_id: str) -> int:
        with found(game_id):
            return self.store.version(game_id)

    def status(self, game_id: str) -> str:
        return self.load(game_id).doc["status"]

    def events(self, game_id: str, token: str | None, after: int, limit: int) -> list[dict]:
        return self.events_as(game_id, self.seat_for(game_id, token), after, limit)

    def events_as(self, game_id: str, seat: int | None, after: int, limit: int) -> list[dict]:
        return [visible_event(e, seat) for e in self.store.events(game_id, after, limit)]

    def list_games(self, status: str, offset: int, limit: int, app_id: str = PUBLIC_APP) -> tuple[list[dict], int]:
        ids, total = self.store.list_ids(status, offset, limit, app_id)
        summaries, gone = self.summaries(ids)
        self.store.forget_missing(status, gone)
        moved = [game for game in summaries if game["status"] != status]
        for game in moved:  # the index update after its write failed: mend it now
            self.store.list_under(game["id"], game["status"], status)
        return [game for game in summaries if game["status"] == status], total - len(gone) - len(moved)

    def summaries(self, game_ids: list[str]) -> tuple[list[dict], list[str]]:
        """The summaries of the games still stored, and the ids of those that expired."""
        kept, gone = [], []
        for game_id in game_ids:
            try:
                version, doc = self.store.load(game_id)
            except GameMissing:
                gone.append(game_id)
                continue
            kept.append(summary(doc, version))
        return kept, gone

    def games_of_player(self, player_id: str, status: str, offset: int, limit: int) -> tuple[list[dict], int]:
        """A page of the player's games of `status`, newest first, each with the player's seat and
        whether it is their turn. Games that expired, or where the player holds no seat after all
        (a claim that lost its race), leave the player's listing when met."""
        listed: list[tuple[LoadedGame, int]] = []
        dropped = []
        for game_id in self.players.store.game_ids(player_id):
            loaded = self.find(game_id)
            seat = seat_of_player(loaded.doc, player_id) if loaded else None
            if loaded is None or seat is None:
                dropped.append(game_id)
            elif loaded.doc["status"] == status:
                listed.append((loaded, seat))
        self.players.store.forget_games(player_id, dropped)
        page = []
        for loaded, seat in listed[offset:offset + limit]:
            awaiting = game_from_dict(loaded.doc["engine"], record_events=False).awaiting()
            due = loaded.doc.get("move_due_at")
            page.append({**summary(loaded.doc, loaded.version), "seat": seat,
                         "your_turn": status == ACTIVE and seat in awaiting, "move_due_at": due,
                         "seconds_left": None if due is None else max(0.0, round(due - time.time(), 1))})
        return page, len(listed)

    def replay(self, game_id: str) -> list[dict]:
        """A finished game's table after the deal and after each action, every hand shown."""
        loaded = self.load(game_id)
        doc = loaded.doc
        if doc["status"] != FINISHED:
            raise GameNotOver("a game is replayed once it is over (its hands are public then)")
        events, after = [], 0
        while batch := self.store.events(game_id, after, 2000):
            events += batch
            after = batch[-1]["id"]
        if doc.get("dealing") == "creator_deck" and doc.get("deck") is None:
            raise ReplayUnavailable("this game's first deck was not kept (it was dealt from the creator's deck "
                                    "before decks were kept): its log is all there is")
        first_dealer = next(event["dealer"] for event in events if event["type"] == "round_start")
        try:
            return replay_frames(rules_from_dict(doc["rules"]), doc["players"], doc["engine"]["seed"], first_dealer,
                                 events, deck=doc.get("deck"))
        except ReplayDiverged as error:
            raise ReplayUnavailable(f"this game cannot be played over: {error}") from None

    # ----- acting ----------------------------------------------------------------------------
    def act(self, game_id: str, token: str | None, if_match: int | None, action: dict,
            request_id: str | None = None) -> Acted:
        """`request_id`: the same for every retry of one request (its Idempotency-Key, caller and
        body). It is written with the action, so a retry finds it applied whatever was lost after."""
        loaded = self.load(game_id)
        seat = self.seats.seat_of(loaded.doc, token)
        applied = _applied_request(loaded.doc, request_id)
        if applied is not None:
            first_event, count = applied
            events = self.events_as(game_id, seat, first_event - 1, count)
            return Acted(self.view_of(loaded, seat), events, loaded.version, applied_before=True)
        return self.act_as(loaded, seat, if_match, action, request_id=request_id)

    def act_as(self, loaded: LoadedGame, seat: int, if_match: int | None, action: dict, preamble=(),
               game=None, think_ms: float | None = None, request_id: str | None = None) -> Acted:
        """Apply `action` for `seat` on version `if_match`; bots and timeouts come through here too.

        `game`, when given, is `loaded`'s document already decoded (recording events); `preamble`:
        events that come before the action's own (a turn timer that ran out); `think_ms`: how long
        a built-in bot computed the move (others are timed from their turn's issue)."""
        doc = loaded.doc
        if if_match is None:
            raise PreconditionRequired("send If-Match with the version of the view you acted on")
        if if_match != loaded.version:
            raise StaleVersion(loaded.version)
        if doc["status"] == OPEN:
            raise GameNotStarted("the game starts when every seat is taken")
        game = game if game is not None else game_from_dict(doc["engine"])
        try:
            events = [*preamble, *(perform(game, seat, action) or ())]  # a stored game records its events
        except (IllegalAction, InvalidAction) as error:
            error.details["legal_actions"] = [action_to_dict(a) for a in game.legal_actions(seat)]
            raise
        if doc["match"]:
            _clock_move(doc, doc["match"], seat, think_ms)
        if request_id is not None:
            kept = doc.get("applied_requests", [])[-(APPLIED_REQUESTS_KEPT - 1):]
            doc["applied_requests"] = [*kept, [request_id, doc["event_count"] + 1, len(events)]]
        version, numbered = self.writer.write(loaded, game, events)
        metrics.ACTIONS.labels(doc["seats"][seat]["type"] if not preamble else "turn_timeout").inc()
        return Acted(view_of(doc, version, game, seat), [visible_event(e, seat) for e in numbered], version)


def _changed_by(seats: list[SeatDocument], seat: int, request_id: str | None) -> bool:
    return request_id is not None and 0 <= seat < len(seats) and seats[seat].get(CHANGED_BY) == request_id


def _applied_request(doc: GameDocument, request_id: str | None) -> tuple[int, int] | None:
    """(first event id, event count) of the action `request_id` made, if this game has it."""
    if request_id is None:
        return None
    return next(((first_event, count) for applied, first_event, count in doc.get("applied_requests", ())
                 if applied == request_id), None)


def _clock_move(doc: GameDocument, match: MatchPlace, seat: int, think_ms: float | None) -> None:
    """A live match game keeps each seat's move times for the match's standings: a built-in bot's
    compute time, anyone else's time from the turn's issue (its due time less the turn's limit)."""
    if think_ms is None:
        issued = (doc.get("move_due_at") or time.time()) - (doc.get("turn_timeout_seconds") or 0)
        think_ms = max(0.0, time.time() - issued) * 1000
    match.setdefault("move_ms", [[] for _ in doc["seats"]])[seat].append(round(think_ms, 1))
