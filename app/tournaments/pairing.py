"""Who meets whom: pure functions of entrant indexes and results so far. A table is a tuple of
entrants, in seat order; a table of one is a bye.

Round robin by the circle method (every entrant meets every other once a cycle; an odd field adds
a bye), tables of two. Swiss as FIDE's Dutch system in its plain form: entrants ranked by score,
then by the tie-breaks, then by their place in the entry list; at tables of two, each, from the
top, meets the best-ranked entrant it has not met (backtracking when a later entrant would be left
without one); the lowest-ranked entrants without a bye yet have the byes a field's size leaves.
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


def max_swiss_rounds(entrants: int) -> int:
    """Rounds a Swiss can pair with no pairing repeated: one fewer than the field (even), or the field (odd)."""
    return entrants - 1 if entrants % 2 == 0 else entrants


def swiss_round(ranking: Sequence[int], met: set[frozenset[int]], had_bye: set[int], size: int = 2
                ) -> list[Table] | None:
    """One Swiss round: `ranking` best first; `met` the pairs that sat at a table together;
    `had_bye` those who had a bye; `size` the players a table. At tables of two, None when no
    pairing without a repeat exists."""
    ranking = list(ranking)
    byes = []
    for _ in range(len(ranking) % size):
        bye = next((e for e in reversed(ranking) if e not in had_bye), ranking[-1])
        ranking.remove(bye)
        byes.append((bye,))
    if size == 2:
        pairs = _pair(ranking, met)
        return None if pairs is None else [*pairs, *byes]
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


def _pair(left: list[int], met: set[frozenset[int]]) -> list[tuple[int, int]] | None:
    if not left:
        return []
    first, rest = left[0], left[1:]
    for index, other in enumerate(rest):
        if frozenset((first, other)) in met:
            continue
        after = _pair(rest[:index] + rest[index + 1:], met)
        if after is not None:
            return [(first, other), *after]
    return None
