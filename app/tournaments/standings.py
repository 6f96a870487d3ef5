"""Standings of a tournament from its played pairings: pure arithmetic.

A pairing is a few games of two entrants (seats alternating, decks dealt twice); an entrant scores
a point a game won. A bye scores as a pairing won whole (FIDE's pairing-allocated bye: a win), and
counts in no tie-break. Entrants level on points are told apart by, in order:
- Buchholz: the sum of their opponents' points (a harder draw ranks higher);
- Sonneborn-Berger: the sum, over opponents, of the share of the pairing's games won against
  each times that opponent's points (wins against the strong count more);
- then their place in the entry list.
A performance rating is the opponents' mean rating plus the Elo gap the score's share means, with
the interval that the Wilson 95% interval of that share gives.
"""

import math
from collections.abc import Sequence
from typing import NamedTuple

from ..matches.play import wilson_interval

ELO_SCALE = 400.0


class Played(NamedTuple):
    """A pairing's result: entrant `a`'s and `b`'s games won, of `games` (b None: a bye of a)."""
    a: int
    b: int | None
    wins_a: int
    wins_b: int
    games: int


def standings(names: Sequence[str], played: Sequence[Played], ratings: dict[str, float]) -> list[dict]:
    """One row per entrant, best first."""
    count = len(names)
    points, games = [0.0] * count, [0] * count
    meetings: list[list[tuple[int, float]]] = [[] for _ in range(count)]  # (opponent, share of games won)
    for result in played:
        points[result.a] += result.wins_a
        games[result.a] += result.games
        if result.b is None:
            continue
        points[result.b] += result.wins_b
        games[result.b] += result.games
        if result.games:
            meetings[result.a].append((result.b, result.wins_a / result.games))
            meetings[result.b].append((result.a, result.wins_b / result.games))
    rows = []
    for entrant, name in enumerate(names):
        buchholz = sum(points[opponent] for opponent, _ in meetings[entrant])
        sonneborn = sum(share * points[opponent] for opponent, share in meetings[entrant])
        rows.append({"entrant": entrant, "name": name, "points": points[entrant], "games": games[entrant],
                     "buchholz": buchholz, "sonneborn_berger": round(sonneborn, 3),
                     **performance(entrant, played, meetings[entrant], names, ratings)})
    rows.sort(key=lambda row: (-row["points"], -row["buchholz"], -row["sonneborn_berger"], row["entrant"]))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows


def performance(entrant: int, played: Sequence[Played], meetings: list[tuple[int, float]], names: Sequence[str],
                ratings: dict[str, float]) -> dict:
    """The performance rating and its 95% interval, over the games against opponents (byes apart)."""
    won = games = 0
    for result in played:
        if result.b is not None and entrant in (result.a, result.b):
            won += result.wins_a if result.a == entrant else result.wins_b
            games += result.games
    if not games:
        return {"performance": None, "performance_low": None, "performance_high": None}
    opponents = sum(ratings[names[opponent]] for opponent, _ in meetings) / len(meetings)
    low, high = wilson_interval(won, games)
    return {"performance": round(opponents + elo_gap(won / games, games), 1),
            "performance_low": round(opponents + elo_gap(low, games), 1),
            "performance_high": round(opponents + elo_gap(high, games), 1)}


def elo_gap(share: float, games: int) -> float:
    """The rating gap a share of games won means (a share of 0 or 1 taken as half a game off it)."""
    share = min(max(share, 0.5 / games), 1 - 0.5 / games)
    return ELO_SCALE * math.log10(share / (1 - share))


def crosstable(names: Sequence[str], played: Sequence[Played]) -> list[dict]:
    """Per entrant, its results against each opponent met, by opponent: games won, of how many."""
    cells: list[dict[int, dict]] = [{} for _ in names]
    for result in played:
        if result.b is None:
            continue
        for me, other, won in ((result.a, result.b, result.wins_a), (result.b, result.a, result.wins_b)):
            cell = cells[me].setdefault(other, {"opponent": other, "wins": 0, "games": 0})
            cell["wins"] += won
            cell["games"] += result.games
    return [{"entrant": entrant, "name": name, "against": [cells[entrant][o] for o in sorted(cells[entrant])]}
            for entrant, name in enumerate(names)]
