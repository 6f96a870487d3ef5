"""Games as resources: create, seat, view, act. The one place where HTTP-free game logic meets the store."""

import logging
import time
from contextlib import contextmanager
import random
import secrets
from datetime import datetime, timezone

from ..engine import (GameOver, IllegalAction, InvalidAction, OVER, Game, action_to_dict, commitment, game_from_dict,
                     game_to_dict, observation, perform, rules_from_request, visible_event)
from ..bots import choose_action
from ..engine.views import seat_knowledge
from .seats import Seats, public_seats, registered_bot_of
from ..errors import (GameNotFound, GameNotStarted, InvalidRequest, InvalidToken, OutcomeUnknown,
                     PreconditionRequired, SeatTaken, StaleVersion)
from ..ops import metrics
from .store import GameExists, GameMissing, VersionConflict, WriteOutcomeUnknown
from ..ops.connection import StoreUnavailable

log = logging.getLogger(__name__)

OPEN, ACTIVE, FINISHED = "open", "active", "finished"
FALLBACK_BOT = "greedy"  # plays for a human whose turn timer ran out


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _dealing(request: dict) -> str:
    """Who chose the deal: a player who joins is told before claiming a seat."""
    if request.get("deck") is not None:
        return "creator_deck"
    return "creator_seed" if request.get("seed") is not None else "server"


@contextmanager
def _found(game_id: str):
    """A game missing from the store is a 404 for the caller."""
    try:
        yield
    except GameMissing:
        raise GameNotFound(f"no game {game_id}") from None


class GameService:
    def __init__(self, store, seats: Seats, dispatcher=None, outside_bots=None):
        self.store = store
        self.seats = seats
        self.bot_kinds = seats.bot_kinds
        self.dispatcher = dispatcher
        self.outside_bots = outside_bots  # registered bots: told their turns
        # Set by the match service: a match game that ended, a registered bot's turn that timed out.
        self.on_game_over = self.on_turn_timeout = None

    # ----- creating and joining -------------------------------------------------------------
    def create_game(self, request: dict, game_id: str | None = None) -> tuple[dict, int, dict[int, str]]:
        """`game_id`, when given, is the same for every retry of one request: a retry whose first
        run was cut off between the write and its idempotency record answers that game."""
        players = request["players"]
        rules = rules_from_request(request.get("rules"))
        game = Game(rules, players, seed=request.get("seed"), deck=request.get("deck"),
                    first_dealer=request.get("first_dealer"))
        seats = request.get("seats") or [{"type": "open"}] * players
        if len(seats) != players:
            raise InvalidRequest(f"seats: give one seat per player ({players})", field="seats")
        game_id, timeout = game_id or secrets.token_urlsafe(16), request.get("turn_timeout_seconds")
        seat_docs = [self.seats.from_request(game_id, seat, spec) for seat, spec in enumerate(seats)]
        try:
            doc, version = self.store_new_game(game_id, game, seat_docs, game.events, timeout, _dealing(request))
        except GameExists:  # only a given id can exist already
            version, doc = self._load(game_id)
        return doc, version, self.seats.tokens(doc)

    def store_new_game(self, game_id: str, game, seat_docs: list[dict], events: list[dict],
                       turn_timeout_seconds: int | None = None, dealing: str = "server",
                       match: dict | None = None) -> tuple[dict, int]:
        """Keep a new game (or a finished match game with its whole log) as a resource."""
        salt = secrets.token_hex(16)
        doc = {
            "id": game_id, "players": game.players, "rules": game.rules.to_dict(), "seats": seat_docs,
            "seed_salt": salt, "seed_commitment": commitment(game.seed, salt), "dealing": dealing,
            "created_at": utc_now(), "updated_at": utc_now(),
            "engine": game_to_dict(game), "event_count": 0, "turn_timeout_seconds": turn_timeout_seconds,
            "match": match,
        }
        doc["status"] = self._status(doc, game)
        owed = self._note_owed_move(doc, game)
        try:
            version = self.store.create(game_id, doc, self._number(doc, events))
        except WriteOutcomeUnknown:
            raise OutcomeUnknown("the store stopped answering while the game was created: it may exist; "
                                 "retry with the same Idempotency-Key") from None
        metrics.GAMES_CREATED.inc()
        if doc["status"] == FINISHED:
            metrics.GAMES_FINISHED.inc()
        if owed:
            self._dispatch(game_id, version, owed)
        self._post_turns(doc, version, game)
        return doc, version

    def tokens_of(self, game_id: str, seats) -> dict[int, str]:
        return self.seats.tokens(self._load(game_id)[1], seats)

    def claim_seat(self, game_id: str, seat: int, name: str | None) -> tuple[dict, int, str]:
        version, doc = self._load(game_id)
        if not 0 <= seat < doc["players"]:
            raise GameNotFound(f"game {game_id} has no seat {seat}")
        if doc["seats"][seat]["type"] != "open":
            raise SeatTaken(f"seat {seat} is already taken")
        doc["seats"][seat] = self.seats.human(game_id, seat, name or f"Player {seat + 1}")
        game = game_from_dict(doc["engine"])
        version = self._write(doc, version, game, [])
        return doc, version, self.seats.tokens(doc, [seat])[seat]

    # ----- reading ---------------------------------------------------------------------------
    def seat_for(self, game_id: str, token: str | None) -> int | None:
        """The seat a token holds in this game (None for no token: a spectator); 401 otherwise."""
        _, doc = self._load(game_id)
        return None if token is None else self.seats.seat_of(doc, token)

    def view(self, game_id: str, token: str | None = None) -> tuple[dict, int]:
        """The spectator view, or with a seat token that seat's own view."""
        version, doc = self._load(game_id)
        seat = self.seats.seat_of(doc, token) if token is not None else None
        return self.view_as(game_id, seat, loaded=(version, doc))

    def view_as(self, game_id: str, seat: int | None, loaded=None) -> tuple[dict, int]:
        version, doc = loaded or self._load(game_id)
        return self._view(doc, version, game_from_dict(doc["engine"], record_events=False), seat), version

    def version(self, game_id: str) -> int:
        with _found(game_id):
            return self.store.version(game_id)

    def status(self, game_id: str) -> str:
        return self._load(game_id)[1]["status"]

    def events(self, game_id: str, token: str | None, after: int, limit: int) -> list[dict]:
        return self.events_as(game_id, self.seat_for(game_id, token), after, limit)

    def events_as(self, game_id: str, seat: int | None, after: int, limit: int) -> list[dict]:
        return [visible_event(e, seat) for e in self.store.events(game_id, after, limit)]

    def list_games(self, status: str, offset: int, limit: int) -> tuple[list[dict], int]:
        ids, total = self.store.list_ids(status, offset, limit)
        summaries, gone = self.summaries(ids)
        self.store.forget_missing(status, gone)
        moved = [summary for summary in summaries if summary["status"] != status]
        for summary in moved:  # the index update after its write failed: mend it now
            self.store.list_under(summary["id"], summary["status"], status)
        return [summary for summary in summaries if summary["status"] == status], total - len(gone) - len(moved)

    def summaries(self, game_ids: list[str]) -> tuple[list[dict], list[str]]:
        """The summaries of the games still stored, and the ids of those that expired."""
        found, gone = [], []
        for game_id in game_ids:
            try:
                version, doc = self.store.load(game_id)
            except GameMissing:
                gone.append(game_id)
                continue
            found.append(self.summary(doc, version))
        return found, gone

    # ----- acting ----------------------------------------------------------------------------
    def act(self, game_id: str, token: str | None, if_match: int | None, action: dict) -> tuple[dict, list, int]:
        version, doc = self._load(game_id)
        seat = self.seats.seat_of(doc, token)
        return self.act_as(game_id, seat, if_match, action, loaded=(version, doc))

    def act_as(self, game_id, seat, if_match, action, loaded=None, preamble=(), game=None):
        """Apply `action` for `seat` on version `if_match`; bots and timeouts come through here too.

        `game`, when given, is `loaded`'s document already decoded (recording events).
        """
        version, doc = loaded or self._load(game_id)
        if if_match is None:
            raise PreconditionRequired("send If-Match with the version of the view you acted on")
        if if_match != version:
            raise StaleVersion(version)
        if doc["status"] == OPEN:
            raise GameNotStarted("the game starts when every seat is taken")
        game = game if game is not None else game_from_dict(doc["engine"])
        try:
            events = [*preamble, *perform(game, seat, action)]
        except (IllegalAction, InvalidAction) as error:
            error.details["legal_actions"] = [action_to_dict(a) for a in game.legal_actions(seat)]
            raise
        numbered = self._number(doc, events)
        version = self._write(doc, version, game, numbered)
        metrics.ACTIONS.labels(doc["seats"][seat]["type"] if not preamble else "turn_timeout").inc()
        return self._view(doc, version, game, seat), [visible_event(e, seat) for e in numbered], version

    # ----- bots ------------------------------------------------------------------------------
    def play_bot_turn(self, game_id: str, version: int) -> bool:
        """Make the bot move due at `version`; a job for a version that is gone ends quietly."""
        return self._move_for(game_id, version, "bot", lambda seat, info: (info["bot"], [])) is not None

    def expire_turn(self, game_id: str, version: int) -> bool:
        """The turn timer ran out at `version`: a fallback bot plays for the absent human (or
        registered bot), and says so."""
        seat = self._move_for(game_id, version, "human", lambda seat, info: (
            FALLBACK_BOT, [{"type": "turn_timeout", "seat": seat, "bot": FALLBACK_BOT}]))
        if seat is not None and self.on_turn_timeout:
            self.on_turn_timeout(game_id, seat)
        return seat is not None

    def _move_for(self, game_id, version, seat_type, plan):
        try:
            current, doc = self.store.load(game_id)
        except GameMissing:
            return None
        if current != version or doc["status"] != ACTIVE:
            return None
        game = game_from_dict(doc["engine"])  # decoded once: to choose, then to apply
        seats = [s for s in game.awaiting() if doc["seats"][s]["type"] == seat_type]
        if not seats:
            return None
        kind, preamble = plan(seats[0], doc["seats"][seats[0]])
        rng = random.Random(f"{game_id}:{version}:{seats[0]}")  # a move is reproducible from the log
        action = choose_action(kind, seat_knowledge(game, seats[0], self._deal_history(game_id, doc)), rng)
        due_at = doc.get("move_due_at")
        try:
            self.act_as(game_id, seats[0], version, action, loaded=(current, doc), preamble=preamble, game=game)
        except StaleVersion:
            return None
        if seat_type == "bot" and due_at:
            metrics.BOT_MOVE_SECONDS.observe(max(0.0, time.time() - due_at))
        return seats[0]

    def leave_seat(self, game_id: str, seat: int, token: str | None, bot: str) -> tuple[dict, int]:
        """A human leaves; a bot takes the seat over from the next move on."""
        version, doc = self._load(game_id)
        if self.seats.seat_of(doc, token) != seat:
            raise InvalidToken(f"only seat {seat}'s own token can leave it")
        if doc["status"] == FINISHED:
            raise GameOver("the game is over: its seats stay as they were")
        if bot not in self.bot_kinds:
            raise InvalidRequest(f"bot: unknown bot kind {bot!r}; kinds: {', '.join(self.bot_kinds)}", field="bot")
        return self.hand_to_bot(game_id, seat, bot, loaded=(version, doc))

    def hand_to_bot(self, game_id: str, seat: int, bot: str, loaded=None) -> tuple[dict, int]:
        """A built-in bot plays `seat` from the next move on (a player left, or a registered bot forfeited)."""
        version, doc = loaded or self._load(game_id)
        doc["seats"][seat] = {"type": "bot", "bot": bot, "name": f"{bot} bot (for {doc['seats'][seat]['name']})"}
        game = game_from_dict(doc["engine"], record_events=False)
        version = self._write(doc, version, game, self._number(doc, [{"type": "seat_left", "seat": seat, "bot": bot}]))
        return self._view(doc, version, game, None), version

    def stalled_games(self, older_than_seconds: float, limit: int = 1000) -> list[tuple[str, int, str]]:
        """(game id, version, "bot" or "timer") of the games whose owed move is overdue by the
        cut-off: its job may have been lost (or never queued: the store failed after the write).

        Only games noted as owing a move are read, oldest first. The note is a hint written
        before each write; the game's own document says what is owed and when: a game that owes
        nothing now is dropped from the notes, one not due yet is noted again for its due time.
        """
        stalled = []
        now = time.time()
        for game_id, noted_at in self.store.moves_due_before(now - older_than_seconds, limit):
            try:
                version, doc = self.store.load(game_id)
            except GameMissing:
                self.store.forget_due_move(game_id, noted_at)
                continue
            owed = self._owed_move(doc, game_from_dict(doc["engine"], record_events=False))
            if owed is None:
                self.store.forget_due_move(game_id, noted_at)
            elif (doc.get("move_due_at") or 0) > now - older_than_seconds:
                self.store.note_due_move(game_id, doc["move_due_at"], later=True)
            else:
                stalled.append((game_id, version, owed[0]))
                self.store.note_due_move(game_id, now, later=True)  # looked at again after another stall
        return stalled

    def prune_listings(self, limit: int = 1000) -> int:
        """Drop expired games from the listings, also those nobody lists (they would grow forever)."""
        now = time.time()
        return sum(self.store.prune_index(status, now - ttl, limit)
                   for status, ttl in self.store.ttl_by_status.items() if ttl)

    def redispatch_stalled(self, older_than_seconds: float) -> int:
        stalled = self.stalled_games(older_than_seconds)
        for game_id, version, kind in stalled:
            self._dispatch(game_id, version, (kind, 0))
        return len(stalled)

    # ----- internals -------------------------------------------------------------------------
    def _load(self, game_id):
        with _found(game_id):
            return self.store.load(game_id)

    def _write(self, doc, version, game, events):
        previous = doc["status"]
        doc["engine"] = game_to_dict(game)
        doc["status"] = self._status(doc, game)
        doc["updated_at"] = utc_now()
        owed = self._note_owed_move(doc, game)
        try:
            with _found(doc["id"]):
                version = self.store.compare_and_set(doc["id"], version, doc, events, previous)
        except VersionConflict as conflict:
            metrics.STALE_WRITES.inc()
            raise StaleVersion(conflict.current_version) from None
        except WriteOutcomeUnknown:
            raise OutcomeUnknown("the store stopped answering during the write: the action may or may not "
                                 "have been applied; read the view and compare its version with your If-Match "
                                 "before acting again") from None
        if owed:
            self._dispatch(doc["id"], version, owed)
        self._post_turns(doc, version, game)
        if doc["status"] == FINISHED and previous != FINISHED:
            metrics.GAMES_FINISHED.inc()
            if doc.get("match") and self.on_game_over:
                try:
                    self.on_game_over(doc["match"])
                except StoreUnavailable:  # the write stands; reading the match does the hand-off
                    log.warning("match %s: game %s is over, its next game starts on the next read",
                                doc["match"]["id"], doc["id"])
        return version

    def _post_turns(self, doc, version, game):
        """Tell the registered bots this version awaits (their turn timers are noted already)."""
        if doc["status"] != ACTIVE or not self.outside_bots:
            return
        for seat in game.awaiting():
            bot_id = registered_bot_of(doc["seats"][seat])
            if bot_id:
                self.outside_bots.post_turn(bot_id, {
                    "game_id": doc["id"], "seat": seat, "version": version,
                    "match_id": (doc.get("match") or {}).get("id"), "move_seconds": doc.get("turn_timeout_seconds"),
                    "deadline": doc.get("move_due_at")})

    def _note_owed_move(self, doc, game):
        """Note the move the new state will owe (a bot's, or a turn timer's) before writing it, so no
        failure after the write can leave it unnoted: the sweeper finds it. A note for a write that
        loses its race is harmless: the sweeper reads what the game really owes."""
        owed = self._owed_move(doc, game)
        doc["move_due_at"] = None if owed is None else time.time() + owed[1]
        if owed is not None:
            self.store.note_due_move(doc["id"], doc["move_due_at"])
        return owed

    @staticmethod
    def _owed_move(doc, game):
        """("bot", 0) when a bot must move now, ("timer", seconds) when a timed human's turn starts, else None."""
        if doc["status"] != ACTIVE:
            return None
        waiting_on = {doc["seats"][seat]["type"] for seat in game.awaiting()}
        if "bot" in waiting_on:
            return "bot", 0
        if "human" in waiting_on and doc.get("turn_timeout_seconds"):
            return "timer", doc["turn_timeout_seconds"]
        return None

    def _dispatch(self, game_id, version, owed):
        """Queue the owed move; if the queue cannot be reached, the write still stands and the
        sweeper queues it once it is overdue."""
        kind, delay = owed
        try:
            if kind == "bot":
                self.dispatcher.bot_turn(game_id, version)
            else:
                self.dispatcher.turn_timeout(game_id, version, delay)
        except StoreUnavailable:
            log.warning("could not queue the %s move of game %s at version %d; the sweeper will",
                        kind, game_id, version)

    @staticmethod
    def _number(doc, events):
        """Ids for new events; the document remembers where the current deal's events start."""
        first = doc["event_count"] + 1
        doc["event_count"] += len(events)
        numbered = [{"id": first + i, **event} for i, event in enumerate(events)]
        for event in numbered:
            if event["type"] == "deal":
                doc["deal_event_id"] = event["id"]
        return numbered

    def _deal_history(self, game_id, doc) -> list[dict]:
        """The current deal's events from the log (its public history, for bots)."""
        first = doc.get("deal_event_id")
        if first is None:
            return []
        return self.store.events(game_id, first - 1, doc["event_count"] - first + 1)

    @staticmethod
    def _status(doc, game):
        if game.phase == OVER:
            return FINISHED
        return OPEN if any(s["type"] == "open" for s in doc["seats"]) else ACTIVE

    def summary(self, doc, version):
        engine = doc["engine"]
        return {"id": doc["id"], "status": doc["status"], "version": version, "players": doc["players"],
                "preset": doc["rules"]["preset"], "seats": public_seats(doc),
                "scores": engine["scores"], "winner": engine["winner"], "dealing": doc.get("dealing", "server"),
                "created_at": doc["created_at"], "updated_at": doc["updated_at"]}

    def _view(self, doc, version, game, seat):
        view = observation(game, seat)
        view.update(self.summary(doc, version))
        seed = view.get("seed")
        view.update(rules=doc["rules"], seed_commitment=doc["seed_commitment"], seed=seed,
                    seed_salt=doc.get("seed_salt") if seed is not None else None,
                    event_count=doc["event_count"], turn_timeout_seconds=doc.get("turn_timeout_seconds"))
        return view
