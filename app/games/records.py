"""A game as the store keeps it, and what follows from its document alone."""

from datetime import UTC, datetime
from typing import NamedTuple, Protocol

from ..engine import OVER, Game, observation
from .document import GameDocument, SeatDocument
from .seats import public_seats

OPEN, ACTIVE, FINISHED = "open", "active", "finished"
ABORTED, FORFEIT = "aborted", "forfeit"  # how a game ends off the table (games/moves.py)
RESIGNED = "resigned"  # a seat gave the game up (games/seating.py)
ABANDONED = "abandoned"  # every person left it: nobody wins, nothing is rated (games/moves.py)
DECLINED = "declined"  # a rematch a seat said no to, before it began (games/rematch.py)
CANCELLED = "cancelled"  # its tournament was called off while it was played: nobody wins, nothing is rated


class Written(NamedTuple):
    """A write that stood: what the after-write effects act on."""
    doc: GameDocument
    version: int
    game: Game  # the engine's at that version
    previous_status: str | None  # None for a game just created
    owed: tuple[str, float] | None  # the move the game now owes (see owed_move)
    events: tuple[dict, ...]  # the events this write added, numbered

    @property
    def just_finished(self) -> bool:
        return self.doc["status"] == FINISHED and self.previous_status not in (None, FINISHED)


class AfterWrite(Protocol):
    """What a write sets off: the wiring hands the writer its effects in order (app/wiring.py), and
    each runs after every write that stood. One that finds the store unavailable leaves the write
    answered: the sweeper, or the next read, mends what it did not do."""

    def __call__(self, written: Written) -> None: ...


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_at(seconds: float) -> str:
    """A moment (seconds since the epoch) in ISO 8601, UTC, to the second."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def status_of(seats: list[SeatDocument], game: Game) -> str:
    if game.phase == OVER:
        return FINISHED
    return OPEN if any(s["type"] == "open" for s in seats) else ACTIVE


def owed_move(doc: GameDocument, game: Game) -> tuple[str, float] | None:
    """("bot", 0) when a bot must move now, ("timer", seconds) when a timed human's turn starts, else None."""
    if doc["status"] != ACTIVE:
        return None
    waiting_on = {doc["seats"][seat]["type"] for seat in game.awaiting()}
    if "bot" in waiting_on:
        return "bot", 0
    timeout = doc["turn_timeout_seconds"]
    if "human" in waiting_on and timeout:
        return "timer", timeout
    return None


def sweep_at(doc: GameDocument, owed_kind: str, bot_stall_seconds: float) -> float:
    """When the sweeper looks at a game owing a move (due at its `move_due_at`): a turn timer when
    it runs out (the note is the timer: nothing is queued for it before), a bot's move once it is
    overdue by `bot_stall_seconds` (its job was queued with the write, and may have been lost)."""
    return (doc.get("move_due_at") or 0.0) + (bot_stall_seconds if owed_kind == "bot" else 0.0)


def settles(doc: GameDocument) -> bool:
    """A finished game owes a settlement: its players' records, and its rating when rated."""
    return bool(doc.get("rated")) or any(seat.get("player") or seat.get("left_by") for seat in doc["seats"])


def number_events(doc: GameDocument, events: list[dict]) -> list[dict]:
    """Ids for new events; the document remembers where the current deal's events start."""
    first = doc["event_count"] + 1
    doc["event_count"] += len(events)
    numbered = [{"id": first + i, **event} for i, event in enumerate(events)]
    for event in numbered:
        if event["type"] == "deal":
            doc["deal_event_id"] = event["id"]
    return numbered


def summary(doc: GameDocument, version: int) -> dict:
    engine = doc["engine"]
    return {"id": doc["id"], "status": doc["status"], "version": version, "players": doc["players"],
            "preset": doc["rules"]["preset"], "rated": bool(doc.get("rated")), "seats": public_seats(doc),
            "scores": engine["scores"], "winner": engine["winner"], "dealing": doc.get("dealing", "server"),
            "created_at": doc["created_at"], "updated_at": doc["updated_at"], "outcome": outcome_of(doc),
            "rematch_of": doc.get("rematch_of")}


def outcome_of(doc: GameDocument) -> dict | None:
    """How a finished game ended: won at the table (`target`), or `forfeit` / `aborted` by `seat`'s absence."""
    if doc["status"] != FINISHED:
        return None
    ended = doc.get("ended_by")
    return {"reason": ended["reason"], "seat": ended["seat"]} if ended else {"reason": "target", "seat": None}


def view_of(doc: GameDocument, version: int, game: Game, seat: int | None) -> dict:
    """What `seat` (None: a spectator) sees of the game: the engine's observation and the resource's own fields."""
    view = observation(game, seat)
    view.update(summary(doc, version))
    seed = view.get("seed")
    view.update(rules=doc["rules"], seed_commitment=doc["seed_commitment"], seed=seed,
                seed_salt=doc.get("seed_salt") if seed is not None else None,
                event_count=doc["event_count"], deal_event_id=doc.get("deal_event_id") or 1,
                turn_timeout_seconds=doc.get("turn_timeout_seconds"), move_due_at=turn_clock(doc, game))
    return view


def turn_clock(doc: GameDocument, game: Game) -> float | None:
    """When the timer of the person awaited runs out; None when nobody's timer runs (a bot's turn, no timer)."""
    owed = owed_move(doc, game)
    return doc.get("move_due_at") if owed and owed[0] == "timer" else None
