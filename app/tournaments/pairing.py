"""Who meets whom: pure functions of entrant indexes and results so far.

Round robin by the circle method (every entrant meets every other once a cycle; an odd field adds
a bye). Swiss as FIDE's Dutch system in its plain form: entrants ranked by score, then by the
tie-breaks, then by their place in the entry list; each, from the top, meets the best-ranked
entrant it has not met (backtracking when a later entrant would be left without one); with an
odd field the lowest-ranked entrant without a bye yet has the bye.
"""

from collections.abc import Sequence

Pairing = tuple[int, int | None]  # (entrant, opponent); None: a bye


def round_robin(entrants: int, cycles: int = 1) -> list[list[Pairing]]:
    """Every round of a round robin: `cycles` times every pair once, the entrant listed first
    alternating between cycles (a pairing's games alternate seats anyway)."""
    field: list[int | None] = list(range(entrants)) + ([None] if entrants % 2 else [])
    size, rounds = len(field), []
    for cycle in range(cycles):
        order = list(field)
        for _ in range(size - 1):
            pairs = []
            for i in range(size // 2):
                a, b = order[i], order[size - 1 - i]
                if a is None:
                    a, b = b, None
                elif b is not None and cycle % 2:
                    a, b = b, a
                assert a is not None
                pairs.append((a, b))
            rounds.append(pairs)
            order = [order[0], order[-1], *order[1:-1]]  # the circle turns; the first stays
    return rounds


def max_swiss_rounds(entrants: int) -> int:
    """Rounds a Swiss can pair with no pairing repeated: one fewer than the field (even), or the field (odd)."""
    return entrants - 1 if entrants % 2 == 0 else entrants


def swiss_round(ranking: Sequence[int], met: set[frozenset[int]], had_bye: set[int]) -> list[Pairing] | None:
    """One Swiss round: `ranking` best first; `met` the pairs that played; `had_bye` those who had
    a bye. None when no pairing without a repeat exists."""
    ranking = list(ranking)
    bye = None
    if len(ranking) % 2:
        bye = next((e for e in reversed(ranking) if e not in had_bye), ranking[-1])
        ranking.remove(bye)
    pairs = _pair(ranking, met)
    if pairs is None:
        return None
    return [*pairs, *([(bye, None)] if bye is not None else [])]


def _pair(left: list[int], met: set[frozenset[int]]) -> list[Pairing] | None:
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
