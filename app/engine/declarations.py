"""Ronda and tringa (docs/rules.md §5, §10): what a dealt hand declares, and who wins a deal's pot."""

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple

from .rules import Announce

RONDA, DOUBLE_RONDA, TRINGA = "ronda", "double_ronda", "tringa"


# A named tuple: made at every deal, where a frozen dataclass cost three times as much to build.
class Declaration(NamedTuple):
    seat: int
    kind: str
    rank: int  # rank index of the top pair, or of the three/four of a kind

    @property
    def strength(self) -> tuple[bool, int]:
        """A tringa beats any ronda; otherwise the higher rank. A double ronda's second pair never counts."""
        return (self.kind == TRINGA, self.rank)


_RANK_BIT = tuple(1 << (card >> 2) for card in range(40))
_RANK_COUNT_UNIT = tuple(1 << 3 * (card >> 2) for card in range(40))  # rank counts packed, three bits a rank


def combination(hand: list[int], announce: Announce, first_deal: bool) -> tuple[str, int] | None:
    """The one combination a dealt hand declares: nobody can declare less than they hold."""
    seen = 0
    for card in hand:  # most hands hold no two cards of a rank: find that out cheaply first
        bit = _RANK_BIT[card]
        if seen & bit:
            break
        seen |= bit
    else:
        return None
    rank_counts = sum(map(_RANK_COUNT_UNIT.__getitem__, hand))
    return _combination_of(rank_counts, announce.double_ronda, first_deal)


@cache
def _combination_of(rank_counts: int, double_ronda: bool, first_deal: bool) -> tuple[str, int]:
    """Worked out once per packed hand: about 600 hands of three or four cards hold a pair, and
    a fifth to two fifths of dealt hands are one of them."""
    counts = {rank: rank_counts >> 3 * rank & 7 for rank in range(10) if rank_counts >> 3 * rank & 7}
    most = max(counts.values())
    if most >= 3:
        rank = max(r for r, n in counts.items() if n == most)
        return (DOUBLE_RONDA if most == 4 and double_ronda else TRINGA, rank)
    pairs = [r for r, n in counts.items() if n == 2]
    if len(pairs) == 2:
        return (DOUBLE_RONDA if double_ronda and first_deal else RONDA, max(pairs))
    return (RONDA, pairs[0])


def value(kind: str, announce: Announce) -> int:
    if kind == TRINGA:
        return announce.tringa_points
    return announce.ronda_points * (2 if kind == DOUBLE_RONDA else 1)


def awards(declarations: Sequence[Declaration], announce: Announce, camp_of: Sequence[int],
           position: Callable[[int], int], players: int) -> dict[int, int]:
    """Points per winning camp for one deal's declarations.

    `position(seat)` is the seat's place in this deal's playing order; it breaks ties
    ("the earlier declarer"). Partners never compete: the winning declaration is chosen
    among all of them, and its camp scores.
    """
    if len(declarations) < 2:  # nothing to compare: a lone declaration wins its own value
        return {camp_of[d.seat]: value(d.kind, announce) for d in declarations}
    winning = best(declarations, announce, players)(d.strength for d in declarations)
    tied = sorted((d for d in declarations if d.strength == winning), key=lambda d: position(d.seat))
    if announce.scoring == "pot":
        amount = sum(value(d.kind, announce) for d in declarations)
    else:
        amount = value(tied[0].kind, announce)
    winning_camps = sorted({camp_of[d.seat] for d in tied})
    if len(winning_camps) > 1 and announce.scoring == "pot" and announce.tie == "split":
        return {camp: amount // len(winning_camps) for camp in winning_camps}
    return {camp_of[tied[0].seat]: amount}


def best(declarations: Sequence[Declaration], announce: Announce, players: int) -> Callable[..., Any]:
    """`max` in the normal order; `min` under S1's exception, four players who all declared."""
    return min if announce.all_four_lowest and players == 4 and len(declarations) == 4 else max


def certain_from_kinds(declarations: Sequence[Declaration], announce: Announce, camp_of: Sequence[int],
                       players: int) -> bool:
    """`together` scoring: is the winner known without showing any rank? (S0)

    It is when one camp alone holds the winning type: the tringa under the normal order, the
    ronda (single or double) when the lowest wins. Holding only the type that loses, or no
    declaration at all, the other camps cannot matter."""
    winning_type = best(declarations, announce, players)(d.kind == TRINGA for d in declarations)
    return len({camp_of[d.seat] for d in declarations if (d.kind == TRINGA) == winning_type}) == 1
