"""Games as resources: create, seat, read, act. HTTP-free game logic meets the store here; every
write goes through the writer (app/games/writer.py)."""

import time
from typing import NamedTuple

from ..ops.scope import PUBLIC_APP
from ..engine import (IllegalAction, InvalidAction, action_to_dict, game_from_dict, perform,
                      rules_from_dict, visible_event)
from ..engine.replay import ReplayDiverged, replay_frames
from ..errors import (GameNotOver, GameNotStarted, PreconditionRequired,
                      ReplayUnavailable, StaleVersion)
from ..ops import metrics
from .document import GameDocument, MatchPlace
from .records import ACTIVE, FINISHED, OPEN, summary, view_of
from .seats import Seats, seat_kept_for, seat_of_player
from .store import GameMissing, LoadedGame
from .writer import GameWriter, found


# A game remembers its last keyed actions, written with them: a retry whose first answer was lost
# (its process killed between the write and the idempotency record) comes within seconds, a few
# moves later at most.
APPLIED_REQUESTS_KEPT = 16


class Acted(NamedTuple):
    """An action's answer: the seat's view, the events it caused as that seat sees them, the
    version; `applied_before`: the same request had been applied already (this answers its retry)."""
    view: dict
    events: list
    version: int
    applied_before: bool = False


LIVE_TURN_SECONDS = 3600  # a turn timer under an hour makes a live game; longer ones are correspondence


class GameService:
    def __init__(self, store, seats: Seats, writer: GameWriter, players=None):
        self.store, self.seats, self.writer, self.players = store, seats, writer, players

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
        return self.seat_in(self.load(game_id), token)

    def seat_in(self, loaded: LoadedGame, token: str | None) -> int:
        """The seat `token` may act for in this game; 401 for any other token."""
        return self.seats.seat_of(loaded.doc, token)

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
        ids, total = self.store.listings.list_ids(status, offset, limit, app_id)
        summaries, gone = self.summaries(ids)
        self.store.listings.forget_missing(status, gone)
        moved = [game for game in summaries if game["status"] != status]
        for game in moved:  # the index update after its write failed: mend it now
            self.store.listings.list_under(game["id"], game["status"], status)
        return [game for game in summaries if game["status"] == status], total - len(gone) - len(moved)

    def summaries(self, game_ids: list[str]) -> tuple[list[dict], list[str]]:
        """The summaries of the games still stored, and the ids of those that expired."""
        kept, gone = [], []
        for game_id, entry in zip(game_ids, self.store.listed(game_ids), strict=True):
            if entry is None:
                gone.append(game_id)
                continue
            version, listing, doc = entry
            kept.append(listing if doc is None else summary(doc, version))
        return kept, gone

    def games_of_player(self, player_id: str, status: str, offset: int, limit: int) -> tuple[list[dict], int]:
        """A page of the player's games of `status`, newest first, each with the player's seat and
        whether it is their turn. Games that expired, or where the player holds no seat after all
        (a claim that lost its race), leave the player's listing when met."""
        listed: list[tuple[dict, int, GameDocument | None]] = []  # (its line, the player's seat, a live document)
        dropped = []
        game_ids = self.players.store.game_ids(player_id)
        for game_id, entry in zip(game_ids, self.store.listed(game_ids), strict=True):
            if entry is None:
                dropped.append(game_id)
                continue
            version, listing, doc = entry
            line = listing if doc is None else summary(doc, version)
            seat = seat_of_player(line["seats"], player_id)
            if seat is None:
                seat = seat_kept_for(line["seats"], player_id)
            if seat is None:
                dropped.append(game_id)
            elif line["status"] == status:
                listed.append((line, seat, doc))
        self.players.store.forget_games(player_id, dropped)
        page = []
        for line, seat, doc in listed[offset:offset + limit]:
            awaiting = game_from_dict(doc["engine"], record_events=False).awaiting() if doc else []
            due = doc.get("move_due_at") if doc else None
            page.append({**line, "seat": seat, "your_turn": status == ACTIVE and seat in awaiting, "move_due_at": due,
                         "seconds_left": None if due is None else max(0.0, round(due - time.time(), 1))})
        return page, len(listed)

    def live_timed_games(self, player_id: str) -> list[str]:
        """The player's games in play with a live turn timer (under LIVE_TURN_SECONDS), newest first."""
        game_ids = self.players.store.game_ids(player_id)
        return [game_id for game_id, entry in zip(game_ids, self.store.listed(game_ids), strict=True)
                if entry is not None and (doc := entry[2]) is not None and doc["status"] == ACTIVE
                and 0 < (doc.get("turn_timeout_seconds") or 0) < LIVE_TURN_SECONDS
                and seat_of_player(doc["seats"], player_id) is not None]

    def replay(self, game_id: str) -> list[dict]:
        """A finished game's table after the deal and after each action, every hand shown."""
        try:
            return replay_frames(*self.finished_log(game_id))
        except ReplayDiverged as error:
            raise ReplayUnavailable(f"this game cannot be played over: {error}") from None

    def finished_log(self, game_id: str, loaded: LoadedGame | None = None) -> tuple:
        """What a finished game is played over from: its rules, players, seed, first dealer, log and
        first deck; 409 before it is over, or when its first deck was not kept."""
        doc = (loaded or self.load(game_id)).doc
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
        return (rules_from_dict(doc["rules"]), doc["players"], doc["engine"]["seed"], first_dealer, events,
                doc.get("deck"))

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
        if not preamble and doc["seats"][seat]["type"] == "human":  # the seat's own move: it is here
            info = doc["seats"][seat]
            info["moved"], info["missed_turns"], info["moves"] = True, 0, info.get("moves", 0) + 1
        if doc["match"]:
            _clock_move(doc, doc["match"], seat, think_ms)
        if request_id is not None:
            kept = doc.get("applied_requests", [])[-(APPLIED_REQUESTS_KEPT - 1):]
            doc["applied_requests"] = [*kept, [request_id, doc["event_count"] + 1, len(events)]]
        version, numbered = self.writer.write(loaded, game, events)
        metrics.series(metrics.ACTIONS, doc["seats"][seat]["type"] if not preamble else "turn_timeout").inc()
        return Acted(view_of(doc, version, game, seat), [visible_event(e, seat) for e in numbered], version)


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
