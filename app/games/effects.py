"""What follows a game's write, each given to the writer by the wiring (app/wiring.py)."""

from .records import ACTIVE, FINISHED, Written
from .seats import registered_bot_of


class QueueOwedMove:
    """Queue the move the game now owes: a bot's at once, a turn timer's at its end. If the queue
    cannot be reached the write still stands, and the sweeper queues it once it is overdue."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher

    def __call__(self, written: Written):
        if written.owed is None:
            return
        kind, delay = written.owed
        if kind == "bot":
            self.dispatcher.bot_turn(written.doc["id"], written.version)
        else:
            self.dispatcher.turn_timeout(written.doc["id"], written.version, delay)


class PostTurns:
    """Tell the registered bots this version awaits (their turn timers are noted already)."""

    def __init__(self, accounts):
        self.accounts = accounts

    def __call__(self, written: Written):
        doc = written.doc
        if doc["status"] != ACTIVE:
            return
        for seat in written.game.awaiting():
            bot_id = registered_bot_of(doc["seats"][seat])
            if bot_id:
                self.accounts.post_turn(bot_id, {
                    "game_id": doc["id"], "seat": seat, "version": written.version,
                    "match_id": (doc.get("match") or {}).get("id"), "move_seconds": doc.get("turn_timeout_seconds"),
                    "deadline": doc.get("move_due_at")})


class HandOffMatch:
    """A live match game just ended: the match counts it and starts the next (a job, so the last
    move's answer does not wait for it; reading the match mends a hand-off that was lost)."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher

    def __call__(self, written: Written):
        doc = written.doc
        if doc.get("match") and doc["status"] == FINISHED and written.previous_status not in (None, FINISHED):
            self.dispatcher.match_game_over(doc["match"]["id"], doc["id"])
