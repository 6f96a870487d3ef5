"""The tournament document as stored (app/tournaments/store.py), typed as GameDocument is."""

from typing import NotRequired, TypedDict


class TableResult(TypedDict):
    wins: list[int]  # games each entrant of the table's `seats` won
    games: int


class TableDocument(TypedDict):
    """A table of a round: its entrants in seat order (one alone: a bye); bots play a match
    (`match_id`), a table with a person plays its games one after another (`games`)."""
    seats: list[int]
    match_id: str | None
    games: list[str] | None
    result: TableResult | None
    wins: NotRequired[list[int]]  # a person's table: games each entrant won so far


class RoundDocument(TypedDict):
    round: int
    pairings: list[TableDocument]


class TournamentDocument(TypedDict):
    id: str
    format: str  # round_robin, swiss, arena
    status: str  # open, running, finished, cancelled
    entrants: list[str]  # bot kinds, bot:<id>, player:<id>
    names: list[str]
    rules: dict
    games_per_pairing: int
    players_per_table: int
    teams: bool
    rounds_requested: int | None
    rounds_total: int | None
    cycles: int | None
    duration_seconds: int | None
    turn_seconds: int
    seed: str | None
    dealing: str  # server, creator_seed
    created_at: str
    starts_at: float
    ends_at: float | None
    rounds: list[RoundDocument]
    revision: int
    started_at: NotRequired[str]
    finished_at: NotRequired[str]
    owner: NotRequired[str | None]  # player:<id>, or app:<id> for the app's server: who may cancel it
    away: NotRequired[list[int]]  # entrants paired no more: withdrawn, or paused after a missed arena game
    max_entrants: NotRequired[int]
    scoring: NotRequired[str]  # games (a point a game won), or streaks (Lichess's arena scoring)


class OwedNotice(TypedDict):
    """A notice a tournament's change owes one of its people (app/tournaments/telling.py)."""
    player_id: str
    once: str  # its key: however often it is told, the player is told once
    notice: dict
