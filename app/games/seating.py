"""A game's seats as people and bots take and leave them: creating a game, claiming an open seat,
leaving one to a bot. Each change is a write of the game (app/games/writer.py)."""

import secrets
from collections.abc import Callable
from typing import Final, NamedTuple, TypeVar

from ..engine import Game, GameOver, game_from_dict, rules_from_request
from ..errors import GameNotFound, InvalidRequest, InvalidToken, NoSeat, SeatTaken, StaleVersion
from ..ops.scope import PUBLIC_APP, in_app
from .document import DocumentExtras, KeptFor, SeatDocument
from .moves import counts, end_game, forfeit_winner
from .records import ABORTED, CANCELLED, FINISHED, OPEN, RESIGNED, view_of
from .seats import Seats, seat_of_player
from .service import GameService
from .store import GameExists, LoadedGame
from .writer import GameWriter

LEAVE_ATTEMPTS = 5  # a leave meets this many moves landing first before it answers 412
CLAIM_ATTEMPTS = 8  # more than the other seats' claims that can land first
# A seat keeps the request that made it what it is (a claim took it, a leave freed it), for its retry.
CHANGED_BY: Final = "changed_by_request"
Changed = TypeVar("Changed")


class Claimed(NamedTuple):
    loaded: LoadedGame
    token: str
    applied_before: bool  # a retry found its claim applied already (the first answer was lost)


class Left(NamedTuple):
    view: dict
    version: int
    applied_before: bool


def _dealing(request: dict) -> str:
    """Who chose the deal: a player who joins is told before claiming a seat."""
    if request.get("deck") is not None:
        return "creator_deck"
    return "creator_seed" if request.get("seed") is not None else "server"


def _check_rated(request: dict, seats: list[dict], owners: dict[int, str]):
    """A rated game is one a fair pool can count: a preset's rules as they are, the server's deal,
    no bot, and every human seat a player's (the creator's, or open for players to claim)."""
    if request.get("deck") is not None or request.get("seed") is not None:
        raise InvalidRequest("rated: a game whose seed or deck the creator chose is never rated", field="rated")
    if set(request.get("rules") or {}) - {"preset"}:
        raise InvalidRequest("rated: a rated game plays a preset's rules unchanged (its pool)", field="rated")
    if any(spec.get("type") == "bot" for spec in seats):
        raise InvalidRequest("rated: a game with a bot seat is never rated (a person's rating moves only "
                             "against people)", field="rated")
    if any(spec.get("type") == "human" and seat not in owners for seat, spec in enumerate(seats)):
        raise InvalidRequest("rated: every human seat of a rated game is a player's: mark yours `mine` and "
                             "leave the others open for players to claim", field="rated")


def _retried_on_new_versions(attempts: int, once: Callable[[], Changed]) -> Changed:
    """`once()`, tried again on the new version when a write lands first, `attempts` times in all
    (the last one's StaleVersion stands)."""
    for _ in range(attempts - 1):
        try:
            return once()
        except StaleVersion:
            continue
    return once()


def _changed_by(seats: list[SeatDocument], seat: int, request_id: str | None) -> bool:
    return request_id is not None and 0 <= seat < len(seats) and seats[seat].get(CHANGED_BY) == request_id


class Seating:
    def __init__(self, games: GameService, seats: Seats, writer: GameWriter, players=None,
                 rated_turn_seconds: int = 0, people_turn_seconds: int = 0):
        """`rated_turn_seconds`, `people_turn_seconds`: the turn timers of games that send none
        (`_turn_timer`)."""
        self.games, self.seats, self.writer, self.players = games, seats, writer, players
        self.rated_turn_seconds, self.people_turn_seconds = rated_turn_seconds, people_turn_seconds
        self.bot_kinds = seats.bot_kinds

    # ----- creating and claiming -------------------------------------------------------------
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
                     kept_for: dict[int, KeptFor] | None = None, extra: DocumentExtras | None = None,
                     on_created: Callable[[LoadedGame], None] | None = None) -> tuple[LoadedGame, dict[int, str]]:
        """A game whose human seats in `owners` belong to those players (listed among their games
        before the game is written); quick play and rematches create theirs here too. `kept_for`:
        open seats only their former holders may claim (a rematch's); `extra`: fields of the
        game's document (where a rematch came from); `on_created(game)`: called by the one call
        that wrote the game, of all that create it at once (its players told once)."""
        players = request["players"]
        rules = rules_from_request(request.get("rules"))
        game_id = game_id or secrets.token_urlsafe(16)
        # The server's seed derives from the game's id (itself from the request's Idempotency-Key
        # when it has one): a retry after Redis lost the creation deals the same cards again.
        seed = request.get("seed") if request.get("seed") is not None else self.seats.derived(f"seed:{game_id}")
        game = Game(rules, players, seed=seed, deck=request.get("deck"), first_dealer=request.get("first_dealer"))
        seats = request.get("seats") or [{"type": "open"}] * players
        if len(seats) != players:
            raise InvalidRequest(f"seats: give one seat per player ({players})", field="seats")
        if request.get("rated"):
            _check_rated(request, seats, owners)
        timeout = self._turn_timer(request, seats)
        seat_docs = [self.seats.from_request(game_id, seat, spec) for seat, spec in enumerate(seats)]
        for seat, player_id in owners.items():
            if request.get("rated"):
                self.players.admit_rated(player_id)
            name = seats[seat].get("name") or self.players.name_of(player_id)
            seat_docs[seat] = self.seats.human(game_id, seat, name, player_id, made_by="creation")
            self.players.took_seat(player_id, game_id)
        for seat, holder in (kept_for or {}).items():
            seat_docs[seat]["kept_for"] = holder
        try:
            loaded = self.writer.create(game_id, game, seat_docs, game.events or [], timeout, _dealing(request),
                                        rated=bool(request.get("rated")),
                                        extra={**(extra or {}), "deck": request.get("deck")},
                                        seed_salt=self.seats.derived(f"seed-salt:{game_id}"))
        except GameExists:  # only a given id can exist already
            return (found := self.games.load(game_id)), self.seats.tokens(found.doc)
        if on_created is not None:
            on_created(loaded)
        return loaded, self.seats.tokens(loaded.doc)

    def _turn_timer(self, request: dict, seats: list[dict]) -> int | None:
        """Every game between people ends: a rated game always has a turn timer (the deployment's
        rated one when it sends none; `null`: 422), and one with two people or more (human and open
        seats) gets the people's default unless its creator sent `turn_timeout_seconds: null`."""
        asked = request.get("turn_timeout_seconds")
        if request.get("rated"):
            if asked is None and ("turn_timeout_seconds" in request or not self.rated_turn_seconds):
                raise InvalidRequest("turn_timeout_seconds: a rated game has a turn timer (every game between "
                                     "people ends)", field="turn_timeout_seconds")
            return asked or self.rated_turn_seconds
        if "turn_timeout_seconds" in request:
            return asked
        people = sum(1 for spec in seats if spec.get("type") in ("human", "open"))
        return self.people_turn_seconds if people >= 2 and self.people_turn_seconds else None

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
        return self.seats.tokens(self.games.load(game_id).doc, seats)

    def claim_seat(self, game_id: str, seat: int, name: str | None, token: str | None = None,
                   request_id: str | None = None, owner: str | None = None) -> Claimed:
        """Take an open seat; with a player token it is the player's. A seat kept for someone (a
        rematch's) is theirs to claim: with their player token, or their seat token of the last game.
        `request_id` (see `act`) is kept on the seat: a retry of the claim that took it answers it again.
        A claim is based on no view: one that loses its race to another seat's claim is tried again
        on the new version (an open game changes only by claims, so it never answers 412)."""
        return _retried_on_new_versions(CLAIM_ATTEMPTS, lambda: self._claim_once(game_id, seat, name, token,
                                                                                 request_id, owner))

    def _claim_once(self, game_id: str, seat: int, name: str | None, token: str | None,
                    request_id: str | None, owner: str | None) -> Claimed:
        """`owner`: the player the seat is claimed for, known already (a rematch asked for with the
        player's seat token of the game before); else the player of `token`, if it is one's."""
        player_id = owner or (self.players.player_of_token(token) if self.players else None)
        loaded = self.games.load(game_id)
        doc = loaded.doc
        if not 0 <= seat < doc["players"]:
            raise GameNotFound(f"game {game_id} has no seat {seat}")
        if _changed_by(doc["seats"], seat, request_id):
            return Claimed(loaded, self.seats.tokens(doc, [seat])[seat], applied_before=True)
        if doc["status"] == FINISHED:
            raise GameOver("the game is over: its seats stay as they were")
        if doc["seats"][seat]["type"] != "open":
            raise SeatTaken(f"seat {seat} is already taken")
        if doc.get("rated") and player_id is None:
            raise InvalidToken("a rated game's seats are claimed with 'Authorization: Bearer <player token>'")
        if doc.get("rated") and player_id is not None:
            self.players.admit_rated(player_id)
        if player_id is not None and (held := seat_of_player(doc["seats"], player_id)) is not None:
            raise SeatTaken(f"your player holds seat {held} of this game already: one seat a player")
        self._check_kept_for(doc["seats"][seat].get("kept_for"), seat, player_id, token)
        if player_id is not None:
            name = name or self.players.name_of(player_id)
            self.players.took_seat(player_id, game_id)
        doc["seats"][seat] = self.seats.human(game_id, seat, name or f"Player {seat + 1}", player_id,
                                              made_by=request_id and f"claim:{request_id}")
        if request_id is not None:
            doc["seats"][seat][CHANGED_BY] = request_id
        # An event, so every open page (the creator's first) hears of it on its stream.
        taken = {"type": "seat_taken", "seat": seat, "name": doc["seats"][seat]["name"]}
        version, _ = self.writer.write(loaded, game_from_dict(doc["engine"]), [taken])
        return Claimed(LoadedGame(version, doc), self.seats.tokens(doc, [seat])[seat], applied_before=False)

    def _check_kept_for(self, kept_for: KeptFor | None, seat: int, player_id: str | None, token: str | None):
        if kept_for is None or (player_id is not None and player_id == kept_for.get("player")):
            return
        previous = self.games.find(kept_for["game"])
        try:
            if previous is not None and self.seats.seat_of(previous.doc, token) == kept_for["seat"]:
                return
        except (InvalidToken, NoSeat):
            pass
        raise SeatTaken(f"seat {seat} is kept for its player in game {kept_for['game']}: they claim it with "
                        "their player token or their seat token of that game")

    # ----- leaving ---------------------------------------------------------------------------------
    def leave_seat(self, game_id: str, seat: int, token: str | None, bot: str,
                   request_id: str | None = None) -> Left:
        """A human leaves; a bot takes the seat over from the next move on. A person leaving a rated
        game resigns it instead (give_up): their result is theirs, never a bot's. Leaving is not based on
        a view, so a move that lands first is no reason to refuse it: it is tried on the new version.
        `request_id` (see `act`) is kept on the seat: a retry of the leave that freed it (its token
        no longer holds the seat) answers the game as it is."""
        return _retried_on_new_versions(LEAVE_ATTEMPTS, lambda: self._leave_once(game_id, seat, token, bot,
                                                                                 request_id))

    def _leave_once(self, game_id: str, seat: int, token: str | None, bot: str,
                    request_id: str | None) -> Left:
        loaded = self.games.load(game_id)
        if _changed_by(loaded.doc["seats"], seat, request_id):
            return Left(self.games.view_of(loaded, None), loaded.version, applied_before=True)
        leavable = self._leavable(loaded, seat, token, bot)
        if leavable.doc.get("rated") and leavable.doc["seats"][seat].get("player"):
            # A person is never rated on a bot's play: leaving a rated game resigns it.
            self.give_up(leavable, seat)
            return Left(self.games.view_of(leavable, None), self.games.version(game_id), applied_before=False)
        return Left(*self.hand_to_bot(leavable, seat, bot, request_id), applied_before=False)

    def _leavable(self, loaded: LoadedGame, seat: int, token: str | None, bot: str) -> LoadedGame:
        """The game, if `token` may leave `seat` of it to `bot`."""
        if self.seats.seat_of(loaded.doc, token) != seat:
            raise NoSeat(f"only seat {seat}'s own token can leave it")
        if loaded.doc["status"] == FINISHED:
            raise GameOver("the game is over: its seats stay as they were")
        if bot not in self.bot_kinds:
            raise InvalidRequest(f"bot: unknown bot kind {bot!r}; kinds: {', '.join(self.bot_kinds)}", field="bot")
        return loaded

    # ----- resigning ------------------------------------------------------------------------------
    def resign(self, game_id: str, token: str | None) -> tuple[dict, int]:
        """The token's seat gives the game up (docs/players.md, "Resigning"). Not based on a view:
        a move that lands first is no reason to refuse it."""
        return _retried_on_new_versions(LEAVE_ATTEMPTS, lambda: self._resign_once(game_id, token))

    def _resign_once(self, game_id: str, token: str | None) -> tuple[dict, int]:
        loaded = self.games.load(game_id)
        return self.give_up(loaded, self.seats.seat_of(loaded.doc, token))

    def resign_player(self, game_id: str, player_id: str) -> bool:
        """The player gives up the game if they hold a seat in it still in play (False if not)."""
        def once() -> bool:
            loaded = self.games.load(game_id)
            seat = seat_of_player(loaded.doc["seats"], player_id)
            if seat is None or loaded.doc["status"] == FINISHED:
                return False
            self.give_up(loaded, seat)
            return True
        return _retried_on_new_versions(LEAVE_ATTEMPTS, once)

    def call_off(self, game_id: str) -> bool:
        """The game ends with nobody winning and nothing rated (`cancelled`: its tournament was
        called off); False if it was over already."""
        def once() -> bool:
            loaded = self.games.load(game_id)
            if loaded.doc["status"] == FINISHED:
                return False
            end_game(self.writer, loaded, game_from_dict(loaded.doc["engine"]), None, CANCELLED, None)
            return True
        return _retried_on_new_versions(LEAVE_ATTEMPTS, once)

    def give_up(self, loaded: LoadedGame, seat: int) -> tuple[dict, int]:
        """`seat` gives up its game: an open game, or one the seat made fewer than MOVES_TO_COUNT
        moves in (outside a tournament), is aborted (nobody wins, nothing is rated, as Lichess
        aborts); else the seat's camp loses it, to the best-placed other camp, as a forfeit awards it."""
        doc = loaded.doc
        if doc["status"] == FINISHED:
            raise GameOver("the game is over already")
        game = game_from_dict(doc["engine"])
        played = doc["status"] != OPEN and (counts(doc["seats"][seat]) or doc.get("tournament"))
        winner, reason = (forfeit_winner(game, seat), RESIGNED) if played else (None, ABORTED)
        version = end_game(self.writer, loaded, game, winner, reason, seat)
        return view_of(doc, version, game, seat), version

    def hand_to_bot(self, loaded: LoadedGame, seat: int, bot: str, request_id: str | None = None) -> tuple[dict, int]:
        """A built-in bot plays `seat` from the next move on (a player left, or a registered bot forfeited)."""
        doc = loaded.doc
        left = doc["seats"][seat]
        doc["seats"][seat] = {"type": "bot", "bot": bot, "name": f"{bot} bot (for {left['name']})",
                              "left_by": left.get("player")}  # their record still counts the game
        if request_id is not None:
            doc["seats"][seat][CHANGED_BY] = request_id
        game = game_from_dict(doc["engine"], record_events=False)
        version, _ = self.writer.write(loaded, game, [{"type": "seat_left", "seat": seat, "bot": bot}])
        return view_of(doc, version, game, None), version
