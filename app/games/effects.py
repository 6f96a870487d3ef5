"""What follows a game's write, each given to the writer by the wiring (app/wiring.py)."""

from .records import ACTIVE, FINISHED, AfterWrite, Written, summary, view_of
from .seats import registered_bot_of


class QueueOwedMove(AfterWrite):
    """Queue the move the game now owes: a bot's at once; a turn timer is started (on RQ, the
    write's note is the timer, and the sweep queues it at its end). If the queue cannot be
    reached the write still stands, and the sweeper queues it once it is overdue."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher

    def __call__(self, written: Written) -> None:
        if written.owed is None:
            return
        kind, delay = written.owed
        if kind == "bot":
            self.dispatcher.bot_turn(written.doc["id"], written.version)
        else:
            self.dispatcher.start_turn_timer(written.doc["id"], written.version, delay)


class PostTurns(AfterWrite):
    """Tell the registered bots seated in a game what this version asks of them: a turn (with the
    seat's view, legal actions and version: all a bot needs to act), or that the game is over.
    Their turn timers are noted already."""

    def __init__(self, accounts):
        self.accounts = accounts

    def __call__(self, written: Written) -> None:
        doc = written.doc
        over = doc["status"] == FINISHED and written.previous_status not in (None, FINISHED)
        if doc["status"] != ACTIVE and not over:
            return
        awaiting = set(written.game.awaiting())
        for seat, info in enumerate(doc["seats"]):
            bot_id = registered_bot_of(info)
            if bot_id and (over or seat in awaiting):
                self.accounts.notify(bot_id, {
                    "type": "game_over" if over else "turn", "game_id": doc["id"], "seat": seat,
                    "version": written.version, "match_id": doc["match"]["id"] if doc["match"] else None,
                    "move_seconds": doc.get("turn_timeout_seconds"),
                    "deadline": None if over else doc.get("move_due_at"),
                    "view": view_of(doc, written.version, written.game, seat)})


class HandOffMatch(AfterWrite):
    """A live match game just ended: the match counts it and starts the next (a job, so the last
    move's answer does not wait for it; reading the match mends a hand-off that was lost)."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher

    def __call__(self, written: Written) -> None:
        match = written.doc["match"]
        if match and written.just_finished:
            self.dispatcher.match_game_over(match["id"], written.doc["id"])


class PackFinished(AfterWrite):
    """A game that just ended becomes one compressed value (its document and events): nothing grows
    with a finished game. One that stays unpacked (the store failed here) is only bigger."""

    def __init__(self, store):
        self.store = store

    def __call__(self, written: Written) -> None:
        if written.doc["status"] == FINISHED and written.previous_status != FINISHED:
            self.store.pack(written.doc["id"], written.version, summary(written.doc, written.version))
