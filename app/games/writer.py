"""Every write of a game goes through here: the owed move noted first, then the compare-and-set,
then the after-write effects the wiring gave (queue the owed move, tell outside bots their turn,
metrics, a match's hand-off), in that order."""

import logging
import secrets
import time
from collections.abc import Sequence
from contextlib import contextmanager

from ..engine import Game, commitment, game_to_dict
from ..errors import GameNotFound, OutcomeUnknown, StaleVersion
from ..ops import metrics
from ..ops.connection import StoreUnavailable
from .document import DocumentExtras, GameDocument, MatchPlace, SeatDocument
from .records import (FINISHED, AfterWrite, Written, number_events, owed_move, settles, status_of, sweep_at,
                      utc_now)
from .store import GameMissing, GameStore, LoadedGame, VersionConflict, WriteOutcomeUnknown

log = logging.getLogger(__name__)


@contextmanager
def found(game_id: str):
    """A game missing from the store is a 404 for the caller."""
    try:
        yield
    except GameMissing:
        raise GameNotFound(f"no game {game_id}") from None


class GameWriter:
    def __init__(self, store: GameStore, effects: Sequence[AfterWrite], bot_stall_seconds: float):
        """`bot_stall_seconds`: how long a bot's queued move may take before the sweeper queues it again."""
        self.store = store
        self.effects = tuple(effects)
        self.bot_stall_seconds = bot_stall_seconds

    def create(self, game_id: str, game: Game, seat_docs: list[SeatDocument], events: list[dict],
               turn_timeout_seconds: int | None = None, dealing: str = "server",
               match: MatchPlace | None = None, rated: bool = False,
               extra: DocumentExtras | None = None, seed_salt: str | None = None) -> LoadedGame:
        """Keep a new game (or a finished match game with its whole log) as a resource. `seed_salt`:
        its seed commitment's salt, when a retry must make it again (else a fresh one)."""
        salt = seed_salt or secrets.token_hex(16)
        doc: GameDocument = {
            "id": game_id, "players": game.players, "rules": game.rules.to_dict(), "seats": seat_docs,
            "seed_salt": salt, "seed_commitment": commitment(game.seed, salt), "dealing": dealing,
            "created_at": utc_now(), "updated_at": utc_now(),
            "engine": game_to_dict(game), "event_count": 0, "turn_timeout_seconds": turn_timeout_seconds,
            "match": match, "rated": rated, "status": status_of(seat_docs, game), "move_due_at": None,
            **(extra or {}),
        }
        owed = self._owed_move(doc, game)
        look_at = self._sweep_at(doc, owed)
        if look_at is not None:
            self.store.schedule.note_due_move(doc["id"], look_at)  # before the write (see _owed_move)
        try:
            version = self.store.create(game_id, doc, number_events(doc, events))
        except WriteOutcomeUnknown:
            raise OutcomeUnknown("the store stopped answering while the game was created: it may exist; "
                                 "retry with the same Idempotency-Key") from None
        metrics.GAMES_CREATED.inc()
        self._after(Written(doc, version, game, None, owed, ()))
        return LoadedGame(version, doc)

    def write(self, loaded: LoadedGame, game: Game, events: list[dict]) -> tuple[int, list[dict]]:
        """Write `game` as the version after `loaded`, with its new `events`: that version, and the
        events as numbered in the game's log."""
        doc = loaded.doc
        previous = doc["status"]
        doc["engine"] = game_to_dict(game)
        doc["status"] = status_of(doc["seats"], game)
        doc["updated_at"] = utc_now()
        owed = self._owed_move(doc, game)
        if doc["status"] == FINISHED and previous != FINISHED and settles(doc):
            # Before the write: the sweeper settles it if all after fails.
            self.store.schedule.note_settlement(doc["id"])
        numbered = number_events(doc, events)
        try:
            with found(doc["id"]):
                version = self.store.compare_and_set(doc["id"], loaded.version, doc, numbered, previous,
                                                     look_at=self._sweep_at(doc, owed))
        except VersionConflict as conflict:
            metrics.STALE_WRITES.inc()
            raise StaleVersion(conflict.current_version) from None
        except WriteOutcomeUnknown:
            raise OutcomeUnknown("the store stopped answering during the write: the action may or may not "
                                 "have been applied; read the view and compare its version with your If-Match "
                                 "before acting again") from None
        self._after(Written(doc, version, game, previous, owed, tuple(numbered)))
        return version, numbered

    @staticmethod
    def _owed_move(doc: GameDocument, game: Game) -> tuple[str, float] | None:
        """The move the new state will owe (a bot's, or a turn timer's), and when (`move_due_at`).
        It is noted for the sweeper before the state is written (with it, on one Redis), so no
        failure after the write can leave it unnoted. A note for a write that loses its race is
        harmless: the sweeper reads what the game really owes."""
        owed = owed_move(doc, game)
        doc["move_due_at"] = None if owed is None else time.time() + owed[1]
        return owed

    def _sweep_at(self, doc: GameDocument, owed: tuple[str, float] | None) -> float | None:
        """When the sweeper looks at the game (records.sweep_at): its note's time."""
        return None if owed is None else sweep_at(doc, owed[0], self.bot_stall_seconds)

    def _after(self, written: Written):
        if written.doc["status"] == FINISHED and written.previous_status != FINISHED:
            metrics.GAMES_FINISHED.inc()
        for effect in self.effects:
            try:
                effect(written)
            except StoreUnavailable as error:
                log.warning("after writing game %s at version %d, %s did not reach the store: %s",
                            written.doc["id"], written.version, getattr(effect, "__name__", effect), error)
