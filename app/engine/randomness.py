"""Every random draw of a game, derived from its seed with SHAKE-256 only.

Anyone holding the revealed seed can redo each draw in any language: stream `label` is
the SHAKE-256 output of "<seed>:<label>", read as consecutive 8-byte big-endian words;
a number below n takes the next word w that is under the largest multiple of n that fits
in 64 bits, and answers w % n (rejection sampling, so no draw is biased).
"""

import hashlib
import secrets
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import mod
from typing import TYPE_CHECKING

from .written_out import defined

if TYPE_CHECKING:
    from _hashlib import HASHXOF

_WORD = 1 << 64
_CHUNK = 8  # words read at a time when drawing one by one


def new_seed() -> str:
    return secrets.token_hex(16)


def commitment(seed: str, salt: str) -> str:
    """SHA-256 of "<salt>:<seed>": the salt (drawn by the server, revealed with the seed) keeps a
    short or guessable seed from being searched out of the commitment before the game ends."""
    return hashlib.sha256(f"{salt}:{seed}".encode()).hexdigest()


def _xof(seed: str, label: str) -> "HASHXOF":
    """Stream `label` of the seed: SHAKE-256 of "<seed>:<label>"."""
    return hashlib.shake_256(f"{seed}:{label}".encode())


def _unrejected(words: Sequence[int], bounds: Sequence[int], largest_bound: int) -> Iterator[int] | None:
    """Each word modulo its bound, when no word is rejected; None when one might be.

    A word below 2**64 - n is below the largest multiple of n in 64 bits, so none of these
    words is rejected: by far the usual case, checked with one pass instead of one test per draw."""
    return map(mod, words, bounds) if max(words) < _WORD - largest_bound else None


class SeedStream:
    def __init__(self, seed: str, label: str):
        self._xof = _xof(seed, label)
        self._words, self._next = (), 0

    def below_each(self, bounds: tuple[int, ...]) -> list[int]:
        """One draw below each n of `bounds`, in order (a whole shuffle in one call)."""
        start, end = self._next, self._next + len(bounds)
        if end > len(self._words):
            self._read(end)
        draws = _unrejected(self._words[start:end], bounds, max(bounds))
        if draws is None:
            return [self.below(n) for n in bounds]
        self._next = end
        return list(draws)

    def below(self, n: int) -> int:
        limit = _WORD - _WORD % n
        while True:
            if self._next == len(self._words):
                self._read(self._next + _CHUNK)
            word: int = self._words[self._next]
            self._next += 1
            if word < limit:
                return word % n

    def _read(self, count: int) -> None:
        self._words = struct.unpack(f">{count}Q", self._xof.digest(8 * count))


def first_dealer(seed: str, players: int) -> int:
    return SeedStream(seed, "dealer").below(players)


_SHUFFLED_POSITIONS = tuple(range(39, 0, -1))  # Fisher-Yates from the last position down
_SHUFFLE_BOUNDS = tuple(i + 1 for i in _SHUFFLED_POSITIONS)  # position i swaps with one drawn below i + 1
_SHUFFLE_WORDS = struct.Struct(f">{len(_SHUFFLE_BOUNDS)}Q")
_ORDERED_DECK = list(range(40))


def _swapper(positions: Sequence[int]) -> Callable[[list[int], Iterable[int]], None]:
    """Fisher-Yates' swaps written out once, a statement per position: a loop over the 39
    positions took 60% more instructions than the statements."""
    draws = "".join(f"j{i}, " for i in positions)
    swaps = "".join(f"\n    deck[{i}], deck[j{i}] = deck[j{i}], deck[{i}]" for i in positions)
    return defined(f"def swap(deck, draws):\n    {draws}= draws{swaps}", "swap")


_swap = _swapper(_SHUFFLED_POSITIONS)


def shuffled_deck(seed: str, round_index: int | str) -> list[int]:
    """Fisher-Yates from the last position down, one draw per position.

    The draws are SeedStream's (`below_each(_SHUFFLE_BOUNDS)` of stream "round:<index>"),
    read here in one piece: a round's shuffle was a tenth of the engine's time."""
    label = f"round:{round_index}"
    digest = _xof(seed, label).digest(_SHUFFLE_WORDS.size)
    words = _SHUFFLE_WORDS.unpack(digest)
    # A word rejected for a bound of 40 or less is at least 2**64 - 40: it starts with a 0xFF
    # byte. Six shuffles in seven have no word that does, which one byte search tells.
    if 255 in digest[::8]:
        draws = (_unrejected(words, _SHUFFLE_BOUNDS, _SHUFFLE_BOUNDS[0])  # the first bound is the largest
                 or SeedStream(seed, label).below_each(_SHUFFLE_BOUNDS))
    else:
        draws = map(mod, words, _SHUFFLE_BOUNDS)
    deck = _ORDERED_DECK.copy()
    _swap(deck, draws)
    return deck
