"""The sweeper's bookkeeping: no game stalls on a lost job, and listings forget expired games."""

import logging
import time

from ..ops.keys import INDEX_BUCKETS
from ..ops.scope import PUBLIC_APP
from ..engine import game_from_dict
from ..ops.connection import StoreUnavailable
from .records import owed_move, sweep_at
from .store import GameMissing

log = logging.getLogger(__name__)


ACTIVE_GAMES_A_PASS = 200  # active games read a pass by `renote_from_listings`


class Sweeper:
    def __init__(self, store, dispatcher, app_ids=list):
        """`app_ids()`: every app's id, whose listings are pruned too."""
        self.store, self.dispatcher, self.app_ids = store, dispatcher, app_ids
        self._listing_place = (0, 0, 0)  # (app's place, bucket, offset) where the next pass reads

    def due_moves(self, bot_stall_seconds: float, limit: int = 1000) -> list[tuple[str, int, str]]:
        """(game id, version, "bot" or "timer") of the moves to queue now: a turn timer that has
        run out (the note is the timer: a move's write queues nothing for it), and a bot's move
        overdue by `bot_stall_seconds` (its job, queued with the write, may have been lost, or never
        queued: the store failed after the write).

        Only games noted as owing a move are read, oldest first. The note is a hint written
        before each write; the game's own document says what is owed and when: a game that owes
        nothing now is dropped from the notes, one not due yet is noted again for when it is.
        """
        due = []
        now = time.time()
        for game_id, noted_at in self.store.schedule.moves_due_before(now, limit):
            try:
                version, doc = self.store.load(game_id)
            except GameMissing:
                self.store.schedule.forget_due_move(game_id, noted_at)
                continue
            owed = owed_move(doc, game_from_dict(doc["engine"], record_events=False))
            if owed is None:
                self.store.schedule.forget_due_move(game_id, noted_at)
                continue
            look_at = sweep_at(doc, owed[0], bot_stall_seconds)
            if look_at > now:
                self.store.schedule.note_due_move(game_id, look_at, later=True)
            else:
                due.append((game_id, version, owed[0]))
                # looked at again after a stall: the job queued now may be lost too
                self.store.schedule.note_due_move(game_id, now + bot_stall_seconds, later=True)
        return due

    def renote_from_listings(self, older_than_seconds: float, limit: int = ACTIVE_GAMES_A_PASS) -> int:
        """Note again the move an active game owes, read from the game itself, when it is overdue by
        the cut-off: on a Redis Cluster the note lives in another slot than the game, and a master
        lost before it replicated loses the note with it, leaving the game owing a move nobody
        looks for. Each pass reads the next `limit` games of the active listings (every app's, bucket
        by bucket, round and round), so every active game is looked at within a bounded number of
        passes; the notes made are then dispatched as any overdue move. Answers the notes made."""
        apps = [PUBLIC_APP, *self.app_ids()]
        place, bucket, offset = self._listing_place
        app_id = apps[place % len(apps)]
        game_ids = self.store.listings.bucket_ids("active", bucket, offset, limit, app_id)
        if len(game_ids) < limit:  # this bucket is read through: the next one, or the next app's first
            place, bucket = (place, bucket + 1) if bucket + 1 < INDEX_BUCKETS else (place + 1, 0)
            offset = 0
        else:
            offset += limit
        self._listing_place = (place % len(apps), bucket, offset)
        noted, cut_off = 0, time.time() - older_than_seconds
        for game_id, entry in zip(game_ids, self.store.listed(game_ids), strict=True):
            doc = entry[2] if entry is not None else None
            if doc is None or (due := doc.get("move_due_at")) is None or due >= cut_off:
                continue
            if owed_move(doc, game_from_dict(doc["engine"], record_events=False)):
                self.store.schedule.note_due_move(game_id, due)
                noted += 1
        return noted

    def dispatch_due(self, bot_stall_seconds: float) -> int:
        """Queue each move due (the dispatcher adds no job while one waits or runs); one game's
        error is logged and the pass goes on (its note brings it back next pass)."""
        due = self.due_moves(bot_stall_seconds)
        for game_id, version, kind in due:
            try:
                if kind == "bot":
                    self.dispatcher.bot_turn(game_id, version)
                else:
                    self.dispatcher.turn_timeout(game_id, version)
            except StoreUnavailable:
                raise
            except Exception:
                log.exception("queueing the move of game %s failed", game_id)
        return len(due)

    def prune_listings(self, limit: int = 1000) -> int:
        """Drop expired games from every app's listings, also those nobody lists (they would grow forever)."""
        now = time.time()
        statuses = [(status, ttl) for status, ttl in self.store.ttl_by_status.items() if ttl]
        return sum(self.store.listings.prune_index(status, now - ttl, limit, app_id)
                   for app_id in (PUBLIC_APP, *self.app_ids()) for status, ttl in statuses)
