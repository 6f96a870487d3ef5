"""Who meets whom: pure functions of entrant indexes and results so far. A table is a tuple of
entrants, in seat order (at a table of two the first seat is white's: it plays first); a table of
one is a bye.

Round robin by FIDE's Berger tables (Handbook C.05): entrants take pairing numbers in entry order,
an odd field adds a phantom whose opponent has the bye, and a second cycle swaps every table's seats.
Swiss at tables of two by FIDE's Dutch system (C.04.3), as the caissify-pairings library computes it:
score groups, top half against bottom half, floats, and seat (colour) alternation. Where the Dutch
rules pair nobody (their absolute colour criteria can leave no pairing near a small field's last
rounds), the round is paired as an arbiter would: each, from the top of the standings, meets the
best-ranked entrant it has not met (within half the field in rounds, one always exists).
At tables of 3 or 4, each table from the top takes the best-ranked entrant left, then the
best-ranked who has sat with none of them yet (anyone, when nobody is left who has not).
"""

from collections.abc import Sequence

from caissify_pairings import generate_pairings
from caissify_pairings.engines.round_robin import berger_round

from .standings import Played

Table = tuple[int, ...]
# The largest Swiss field at tables of two: the Dutch engine, pure Python, costs about the cube of
# the field (a round of 64 in about 1 s, of 256 in two minutes: docs/benchmarks.md).
DUTCH_FIELD = 64


def round_robin(entrants: int, cycles: int = 1) -> list[list[Table]]:
    """Every round of a round robin by the Berger tables: `cycles` times every pair once, the seats
    of each table swapped in every second cycle."""
    size = entrants + entrants % 2  # position `size` of an odd field is the phantom
    rounds = []
    for cycle in range(cycles):
        for number in range(1, size):
            tables: list[Table] = []
            for white, black in berger_round(size, number):
                first, second = (black, white) if cycle % 2 else (white, black)
                seated = tuple(position - 1 for position in (first, second) if position <= entrants)
                tables.append(seated)
            rounds.append(sorted(tables, key=len, reverse=True))  # the bye last
    return rounds


def dutch_round(field: Sequence[int], history: Sequence[Sequence[Played]], rounds_total: int,
                first_white: bool = True) -> list[Table] | None:
    """The next Swiss round at tables of two by the Dutch system: `field` the entrants to pair (their
    indexes are their pairing numbers), `history` the tables of each round so far, in seat order;
    `first_white`: the initial colour (C.04.3 E), the first pairing number's in round one.
    A table scores each entrant its share of the table's games (a game neither won: half each), a
    bye 1. None when the rules pair nobody, or leave more than an odd field's one bye."""
    score: dict[int, float] = {}
    colours: dict[int, list[str]] = {}
    floats: dict[int, list[str]] = {}
    byes: dict[int, int] = {}
    met: set[tuple[int, int]] = set()
    for played in history:
        before = dict(score)
        seen: set[int] = set()
        for table in played:
            seen.update(table.seats)
            if len(table.seats) == 1:
                entrant = table.seats[0]
                score[entrant] = score.get(entrant, 0.0) + 1
                byes[entrant] = byes.get(entrant, 0) + 1
                floats.setdefault(entrant, []).append("down")  # A.4: a pairing-allocated bye is a downfloat
                continue
            white, black = table.seats
            drawn = table.games - table.wins[0] - table.wins[1]
            share = (table.wins[0] + drawn / 2) / table.games if table.games else 0.5
            score[white] = score.get(white, 0.0) + share
            score[black] = score.get(black, 0.0) + 1 - share
            colours.setdefault(white, []).append("white")
            colours.setdefault(black, []).append("black")
            gap = before.get(white, 0.0) - before.get(black, 0.0)
            floats.setdefault(white, []).append("down" if gap > 0 else "up" if gap < 0 else "none")
            floats.setdefault(black, []).append("up" if gap > 0 else "down" if gap < 0 else "none")
            met.add((white + 1, black + 1))
        for absent in set(field) - seen:  # entered late, or sat out a round
            floats.setdefault(absent, []).append("none")
    players = [{"id": entrant + 1, "name": str(entrant), "score": score.get(entrant, 0.0), "rating": 0,
                "starting_number": entrant + 1, "color_hist": colours.get(entrant, []),
                "float_history": floats.get(entrant, []), "bye_count": byes.get(entrant, 0)} for entrant in field]
    try:
        paired = generate_pairings("dutch", players, met, len(history) + 1, max(rounds_total, len(history) + 1),
                                   initial_color="white" if first_white else "black")
    except (ValueError, RuntimeError):  # the library's word for "no pairing": the arbiter's case
        return None
    rank = {entrant: (-score.get(entrant, 0.0), entrant) for entrant in field}  # higher ranked: lower
    tables: list[Table] = [_with_colours(tuple(entrant - 1 for entrant in (row["white_id"], row.get("black_id"))
                                               if entrant), colours, rank, first_white) for row in paired]
    met_before = {frozenset(pair) for pair in met}
    seated = [entrant for table in tables for entrant in table]
    single = [table for table in tables if len(table) == 1]
    if (sorted(seated) != sorted(field) or len(single) != len(field) % 2
            or any(frozenset(entrant + 1 for entrant in table) in met_before for table in tables)):
        return None
    return sorted(tables, key=len, reverse=True)


ABSOLUTE, STRONG, MILD = 3, 2, 1  # a colour preference's strength (C.04.3 A.6)


def _with_colours(pair: Table, colours: dict[int, list[str]], rank: dict[int, tuple[float, int]],
                  first_white: bool) -> Table:
    """White first, by C.04.3's colour allocation (E.1-E.5): both preferences granted; else the
    stronger one (of two absolute ones, the wider colour difference's); else the colours of the
    last round the two had different ones, swapped; else the higher-ranked's preference; else the
    initial colour to the higher-ranked if its pairing number is odd, the other colour if even."""
    if len(pair) == 1:
        return pair
    a, b = sorted(pair, key=rank.__getitem__)  # a is ranked higher
    (want_a, strength_a, gap_a), (want_b, strength_b, gap_b) = (_preference(colours.get(e, [])) for e in (a, b))
    if want_a != want_b and (want_a or want_b):
        white = a if "white" in (want_a, _other(want_b)) else b
    elif want_a and (strength_a != strength_b or (strength_a == ABSOLUTE and gap_a != gap_b)):
        stronger = a if (strength_a, gap_a) > (strength_b, gap_b) else b
        white = stronger if want_a == "white" else (b if stronger == a else a)
    elif (last := _last_different(colours.get(a, []), colours.get(b, []))) is not None:
        white = a if last == "black" else b
    elif want_a:
        white = a if want_a == "white" else b
    else:
        white = a if (a % 2 == 0) == first_white else b  # pairing number a + 1: odd when a is even
    return (white, b if white == a else a)


def _preference(played: list[str]) -> tuple[str | None, int, int]:
    """(colour preferred or None, its strength, the colour difference's size), C.04.3 A.6, from the
    colours of the games played."""
    if not played:
        return None, 0, 0
    difference = played.count("white") - played.count("black")
    twice = len(played) >= 2 and played[-1] == played[-2]
    if difference > 1 or difference < -1 or twice:
        return _other(played[-1]) if twice else ("black" if difference > 0 else "white"), ABSOLUTE, abs(difference)
    if difference:
        return ("black" if difference > 0 else "white"), STRONG, 1
    return _other(played[-1]), MILD, 0


def _last_different(first: list[str], second: list[str]) -> str | None:
    """The first's colour the latest time the two had different colours, or None. Each history is
    of games played, the latest last, and the two are read back from their last games (as
    bbpPairings reads E.3): a bye between them does not shift one history against the other."""
    for mine, theirs in zip(reversed(first), reversed(second), strict=False):
        if mine != theirs:
            return mine
    return None


def _other(colour: str | None) -> str | None:
    return {"white": "black", "black": "white"}.get(colour or "")


BYE = -1  # the phantom entrant a field of odd size meets: meeting it is a bye


def always_pairable_rounds(entrants: int) -> int:
    """Rounds a Swiss at tables of two pairs without a repeat whatever the results and whoever met
    before: half the field, a bye counted as an entrant (each has met fewer than half, so what is
    left to meet holds a perfect pairing, by Dirac's theorem). More could leave a round with none:
    the Dutch system looks no further than the round it pairs."""
    return (entrants + entrants % 2) // 2


def swiss_pairing(ranking: Sequence[int], history: Sequence[Sequence[Played]],
                  rounds_total: int) -> tuple[list[Table] | None, bool]:
    """The next Swiss round at tables of two, `ranking` the entrants to pair by their standings:
    the Dutch system's, else the arbiter's (see the module); and whether it is the Dutch system's.
    None only past `always_pairable_rounds`."""
    dutch = dutch_round(sorted(ranking), history, rounds_total)
    if dutch is not None:
        return dutch, True
    tables = [table.seats for tables in history for table in tables]
    met = {frozenset(seats) for seats in tables if len(seats) == 2}
    return swiss_round(ranking, met, {seats[0] for seats in tables if len(seats) == 1}), False


def swiss_round(ranking: Sequence[int], met: set[frozenset[int]], had_bye: set[int],
                size: int = 2) -> list[Table] | None:
    """One Swiss round as an arbiter pairs it: `ranking` best first; `met` the pairs that sat at a
    table together; `had_bye` those who had a bye; `size` the players a table. At tables of two,
    None when no pairing without a repeat exists."""
    ranking = list(ranking)
    if size == 2:
        field = ranking + ([BYE] if len(ranking) % 2 else [])
        pairs = _pair(field, met | {frozenset((entrant, BYE)) for entrant in had_bye})
        return None if pairs is None else [(a,) if b == BYE else (a, b) for a, b in pairs]
    byes = []
    for _ in range(len(ranking) % size):
        bye = next((e for e in reversed(ranking) if e not in had_bye), ranking[-1])
        ranking.remove(bye)
        byes.append((bye,))
    return [*group(ranking, met, size), *byes]


def group(ranking: list[int], met: set[frozenset[int]], size: int) -> list[Table]:
    """Tables of `size` from `ranking` (best first, its length a multiple of `size`), each from the
    top: the best-ranked left, then the best-ranked who sat with none of them yet (or anyone)."""
    left, tables = list(ranking), []
    while left:
        table = [left.pop(0)]
        while len(table) < size:
            fresh = next((e for e in left if all(frozenset((e, o)) not in met for o in table)), left[0])
            left.remove(fresh)
            table.append(fresh)
        tables.append(tuple(table))
    return tables


def _pair(left: list[int], met: set[frozenset[int]],
          chosen: tuple[tuple[int, int], ...] = ()) -> list[tuple[int, int]] | None:
    """From the top of `left`, each meets the best-ranked it has not met, backtracking when the rest would not pair."""
    if not left:
        return list(chosen)
    first, rest = left[0], left[1:]
    for index, other in enumerate(rest):
        if frozenset((first, other)) in met:
            continue
        found = _pair(rest[:index] + rest[index + 1:], met, (*chosen, (first, other)))
        if found is not None:
            return found
    return None
