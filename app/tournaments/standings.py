"""Standings of a tournament from its played tables: pure arithmetic.

A table is a few games of its entrants (seats rotating, decks dealt once per rotation); an entrant
scores a point a game its side won (at a table of four with team rules, partners win together).
A bye scores as a table won whole (FIDE's pairing-allocated bye: a win), and counts in no
tie-break. Each entrant's opponents are the others at its tables, partners apart. Entrants level
on points are told apart by, in order:
- Buchholz: the sum of their opponents' points (a harder draw ranks higher);
- Sonneborn-Berger: the sum, over opponents met, of the share of that table's games won times
  that opponent's points (wins against the strong count more);
- then their place in the entry list.
A performance rating is the opponents' mean rating (a mean over games) plus the Elo gap that the
score's share means, with the interval that the Wilson 95% interval of that share gives. Against
each opponent a game counts 1 when the entrant's side won it, 0 when the opponent's did, and a
half when a third player's did (at a table of two: the games won).
"""

import math
from collections.abc import Sequence
from typing import NamedTuple

from ..matches.play import wilson_interval

ELO_SCALE = 400.0


class Played(NamedTuple):
    """A table's result: its entrants in seat order, each one's games won, of `games` (a table of
    one: a bye). `teams`: a table of four whose seats of one parity are partners."""
    seats: tuple[int, ...]
    wins: tuple[int, ...]
    games: int
    teams: bool = False

    def opponents(self, position: int) -> list[int]:
        """The positions at this table that `position` plays against."""
        return [other for other in range(len(self.seats))
                if other != position and not (self.teams and other % 2 == position % 2)]


def standings(names: Sequence[str], played: Sequence[Played], ratings: Sequence[float],
              streaks: bool = False) -> list[dict]:
    """One row per entrant, best first; `ratings` by entrant, as `names`. `streaks`: Lichess's
    arena scoring (`streak_points`) instead of a point a game won."""
    count = len(names)
    points, games = [0.0] * count, [0] * count
    meetings: list[list[tuple[int, float]]] = [[] for _ in range(count)]  # (opponent, share of games won)
    for table in played:
        for position, entrant in enumerate(table.seats):
            points[entrant] += table.wins[position]
            games[entrant] += table.games
            if table.games:
                meetings[entrant] += [(table.seats[other], table.wins[position] / table.games)
                                      for other in table.opponents(position)]
    if streaks:
        points = streak_points(count, played)
    rows = []
    for entrant, name in enumerate(names):
        buchholz = sum(points[opponent] for opponent, _ in meetings[entrant])
        sonneborn = sum(share * points[opponent] for opponent, share in meetings[entrant])
        rows.append({"entrant": entrant, "name": name, "points": points[entrant], "games": games[entrant],
                     "buchholz": buchholz, "sonneborn_berger": round(sonneborn, 3),
                     **performance(entrant, played, ratings)})
    rows.sort(key=lambda row: (-row["points"], -row["buchholz"], -row["sonneborn_berger"], row["entrant"]))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows


def streak_points(count: int, played: Sequence[Played]) -> list[float]:
    """Lichess's arena scoring, a game a table (`played` in the order the tables were paired, so each
    entrant's in the order it played them): 2 for a win, 4 for a win after two wins in a row, 0 for
    a loss, which ends the streak."""
    points, streak = [0.0] * count, [0] * count
    for table in played:
        for position, entrant in enumerate(table.seats):
            if table.wins[position]:
                points[entrant] += 4 if streak[entrant] >= 2 else 2
                streak[entrant] += 1
            else:
                streak[entrant] = 0
    return points


def performance(entrant: int, played: Sequence[Played], ratings: Sequence[float]) -> dict:
    """The performance rating and its 95% interval, over the games against opponents (byes apart)."""
    score = games = rated = 0.0
    for table in played:
        if entrant not in table.seats:
            continue
        me = table.seats.index(entrant)
        for other in table.opponents(me):
            neither = table.games - table.wins[me] - table.wins[other]
            score += table.wins[me] + neither / 2
            games += table.games
            rated += ratings[table.seats[other]] * table.games
    if not games:
        return {"performance": None, "performance_low": None, "performance_high": None}
    opponents = rated / games
    low, high = wilson_interval(score, int(games))
    return {"performance": round(opponents + elo_gap(score / games, games), 1),
            "performance_low": round(opponents + elo_gap(low, games), 1),
            "performance_high": round(opponents + elo_gap(high, games), 1)}


def elo_gap(share: float, games: float) -> float:
    """The rating gap a share of games won means (a share of 0 or 1 taken as half a game off it)."""
    share = min(max(share, 0.5 / games), 1 - 0.5 / games)
    return ELO_SCALE * math.log10(share / (1 - share))


def crosstable(names: Sequence[str], played: Sequence[Played]) -> list[dict]:
    """Per entrant, its results against each opponent met, by opponent: games won, of how many."""
    cells: list[dict[int, dict]] = [{} for _ in names]
    for table in played:
        for position, entrant in enumerate(table.seats):
            for other in table.opponents(position):
                cell = cells[entrant].setdefault(table.seats[other], {"opponent": table.seats[other], "wins": 0,
                                                                       "games": 0})
                cell["wins"] += table.wins[position]
                cell["games"] += table.games
    return [{"entrant": entrant, "name": name, "against": [cells[entrant][o] for o in sorted(cells[entrant])]}
            for entrant, name in enumerate(names)]
