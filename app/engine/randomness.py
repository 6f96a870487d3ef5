"""Every random draw of a game, derived from its seed with SHAKE-256 only.

Anyone holding the revealed seed can redo each draw in any language: stream `label` is
the SHAKE-256 output of "<seed>:<label>", read as consecutive 8-byte big-endian words;
a number below n takes the next word w that is under the largest multiple of n that fits
in 64 bits, and answers w % n (rejection sampling, so no draw is biased).
"""

import hashlib
import secrets
import struct

_WORD = 1 << 64
_CHUNK = 64  # words read from the stream at a time; a shuffle needs 39 (rarely more)


def new_seed() -> str:
    return secrets.token_hex(16)


def commitment(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


class SeedStream:
    def __init__(self, seed: str, label: str):
        self._xof = hashlib.shake_256(f"{seed}:{label}".encode())
        self._words, self._next = [], 0

    def _word(self) -> int:
        if self._next == len(self._words):
            count = len(self._words) + _CHUNK
            self._words = struct.unpack(f">{count}Q", self._xof.digest(8 * count))
        word = self._words[self._next]
        self._next += 1
        return word

    def below(self, n: int) -> int:
        limit = _WORD - _WORD % n
        while True:
            if self._next < len(self._words):  # the common case, without a call
                word = self._words[self._next]
                self._next += 1
            else:
                word = self._word()
            if word < limit:
                return word % n


def first_dealer(seed: str, players: int) -> int:
    return SeedStream(seed, "dealer").below(players)


def shuffled_deck(seed: str, round_index) -> list[int]:
    """Fisher-Yates from the last position down, one draw per position."""
    deck = list(range(40))
    below = SeedStream(seed, f"round:{round_index}").below
    for i in range(39, 0, -1):
        j = below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck
