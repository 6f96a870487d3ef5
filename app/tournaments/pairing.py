"""Who meets whom: pure functions of entrant indexes and results so far. A table is a tuple of
entrants, in seat order; a table of one is a bye.

Round robin by the circle method (every entrant meets every other once a cycle; an odd field adds
a bye), tables of two. Swiss as FIDE's Dutch system in its plain form: entrants ranked by score,
then by the tie-breaks, then by their place in the entry list; at tables of two, each, from the
top, meets the best-ranked entrant it has not met (backtracking when a later entrant would be left
without one, and in a small field when a round still to play could not be paired); an odd field
meets a phantom ranked last, so the bye goes to the lowest-ranked who has not had one.
At tables of 3 or 4, each table from the top takes the best-ranked entrant left, then the
best-ranked who has sat with none of them yet (anyone, when nobody is left who has not).
"""

from collections.abc import Sequence

Table = tuple[int, ...]


def round_robin(entrants: int, cycles: int = 1) -> list[list[Table]]:
    """Every round of a round robin: `cycles` times every pair once, the entrant listed first
    alternating between cycles (a pairing's games alternate seats anyway)."""
    field: list[int | None] = list(range(entrants)) + ([None] if entrants % 2 else [])
    size, rounds = len(field), []
    for cycle in range(cycles):
        order = list(field)
        for _ in range(size - 1):
            tables: list[Table] = []
            for i in range(size // 2):
                a, b = order[i], order[size - 1 - i]
                if a is None:
                    a, b = b, None
                elif b is not None and cycle % 2:
                    a, b = b, a
                assert a is not None
                tables.append((a,) if b is None else (a, b))
            rounds.append(tables)
            order = [order[0], order[-1], *order[1:-1]]  # the circle turns; the first stays
    return rounds


BYE = -1  # the phantom entrant a field of odd size meets: meeting it is a bye
LOOKAHEAD_FIELD = 10  # the largest field (a bye counted as one) whose Swiss looks ahead to its last round


def max_swiss_rounds(entrants: int) -> int:
    """Rounds a Swiss can pair with no pairing repeated: one fewer than the field (even), or the field (odd)."""
    return entrants - 1 if entrants % 2 == 0 else entrants


def always_pairable_rounds(entrants: int) -> int:
    """Rounds a Swiss of this field pairs without a repeat whatever the results: every round up to
    half the field (with a bye counted as an entrant: each has met fewer than half, so what is left
    to meet holds a perfect pairing, by Dirac's theorem); small fields look ahead to any round."""
    field = entrants + entrants % 2
    return max_swiss_rounds(entrants) if field <= LOOKAHEAD_FIELD else field // 2


def swiss_round(ranking: Sequence[int], met: set[frozenset[int]], had_bye: set[int], size: int = 2,
                rounds_after: int = 0) -> list[Table] | None:
    """One Swiss round: `ranking` best first; `met` the pairs that sat at a table together;
    `had_bye` those who had a bye; `size` the players a table. At tables of two, None when no
    pairing without a repeat exists; in a small field, also one that would leave the
    `rounds_after` rounds still to play without a pairing (they are always played in full)."""
    ranking = list(ranking)
    if size == 2:
        field = ranking + ([BYE] if len(ranking) % 2 else [])
        known = met | {frozenset((entrant, BYE)) for entrant in had_bye}
        ahead = rounds_after if len(field) <= LOOKAHEAD_FIELD else 0
        pairs = _pair(field, known, ahead, field)
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


def _pair(left: list[int], met: set[frozenset[int]], rounds_after: int, field: list[int],
          chosen: tuple[tuple[int, int], ...] = ()) -> list[tuple[int, int]] | None:
    """From the top of `left`, each meets the best-ranked it has not met, backtracking when the rest
    would not pair, or (`rounds_after`) when the field could not then pair that many rounds more."""
    if not left:
        if rounds_after and _pair(field, met | {frozenset(pair) for pair in chosen}, rounds_after - 1, field) is None:
            return None
        return list(chosen)
    first, rest = left[0], left[1:]
    for index, other in enumerate(rest):
        if frozenset((first, other)) in met:
            continue
        found = _pair(rest[:index] + rest[index + 1:], met, rounds_after, field, (*chosen, (first, other)))
        if found is not None:
            return found
    return None
