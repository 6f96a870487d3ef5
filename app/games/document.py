"""A game as the store keeps it: one definition of its document's keys and of each seat's.

The engine's own state crosses into the document as `engine` (engine/serialize.py's dict); every
other key is the service's. The store writes the document as JSON, so what is read back is this
shape too (documents of older releases lack only the keys marked NotRequired).
"""

from typing import Any, NotRequired, TypedDict


class KeptFor(TypedDict):
    """A rematch's open seat, kept for whoever held it in the game before."""
    player: str | None
    game: str
    seat: int


class SeatDocument(TypedDict):
    type: str  # "human", "bot" or "open"
    name: NotRequired[str]
    bot: NotRequired[str]  # a built-in bot's kind, or bot:<id> for a registered bot playing a human seat
    player: NotRequired[str | None]  # the player whose seat it is
    token_salt: NotRequired[str]  # a human seat's token is derived again from it (games/seats.py)
    token_hash: NotRequired[str]
    kept_for: NotRequired[KeptFor]
    left_by: NotRequired[str | None]  # the player who left it to a bot (their record still counts the game)
    changed_by_request: NotRequired[str]  # the request that claimed or freed it (its retry answers again)
    moved: NotRequired[bool]  # a human seat made a move of its own (a timeout before that aborts the game)
    moves: NotRequired[int]  # how many (fewer than MOVES_TO_COUNT: its forfeit or resignation aborts the game)
    missed_turns: NotRequired[int]  # its turn timers run out in a row (games/moves.py)


class EndedBy(TypedDict):
    """Why a game ended off the table (games/moves.py): its reason, and whose absence or choice
    (None: called off with its tournament)."""
    reason: str
    seat: int | None


class MatchPlace(TypedDict):
    """A bot match's game: which match, which game of it, and who sits where."""
    id: str
    index: int
    entrants: list[int]
    move_ms: NotRequired[list[list[float]]]  # each seat's move times so far, for the standings


class GameDocument(TypedDict):
    id: str  # `<app id>~<name>` outside the public app (ops/scope.py)
    players: int
    rules: dict[str, Any]  # Rules.to_dict()
    seats: list[SeatDocument]
    seed_salt: str
    seed_commitment: str  # SHA-256 of "<salt>:<seed>", shown from the start
    dealing: str  # who chose the deal: server, creator_seed or creator_deck
    created_at: str
    updated_at: str
    engine: dict[str, Any]  # engine.game_to_dict: the state the next action applies to
    event_count: int
    status: str  # open, active or finished (records.py)
    turn_timeout_seconds: int | None
    move_due_at: float | None  # when the move the game owes is due (a bot's, or a turn timer's end)
    match: MatchPlace | None
    rated: bool
    deal_event_id: NotRequired[int]  # where the current deal's events start
    applied_requests: NotRequired[list[list]]  # [request id, first event id, event count] of the last actions
    deck: NotRequired[list[str] | None]  # the creator's deck, when they chose one
    rematch_of: NotRequired[str]  # the finished game this one follows
    tournament: NotRequired[str]  # the tournament whose pairing this game is
    ended_by: NotRequired[EndedBy]  # a game that did not end at the table


class DocumentExtras(TypedDict, total=False):
    """The keys a creator may add to a new game's document."""
    deck: list[str] | None
    rematch_of: str
    tournament: str
