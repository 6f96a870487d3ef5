"""Every random draw of a game, derived from its seed with SHA-256 only.

Anyone holding the revealed seed can redo each draw in any language:
word i of stream `label` is the first 8 bytes (big-endian) of
SHA-256("<seed>:<label>:<i>"); a number below n takes the next word w that is
under the largest multiple of n that fits in 64 bits, and answers w % n
(rejection sampling, so no draw is biased).
"""

import hashlib
import secrets

_WORD = 1 << 64


def new_seed() -> str:
    return secrets.token_hex(16)


def commitment(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


class SeedStream:
    def __init__(self, seed: str, label: str):
        self._prefix = f"{seed}:{label}:".encode()
        self._counter = 0

    def _word(self) -> int:
        digest = hashlib.sha256(self._prefix + str(self._counter).encode()).digest()
        self._counter += 1
        return int.from_bytes(digest[:8], "big")

    def below(self, n: int) -> int:
        limit = _WORD - _WORD % n
        while True:
            word = self._word()
            if word < limit:
                return word % n


def first_dealer(seed: str, players: int) -> int:
    return SeedStream(seed, "dealer").below(players)


def shuffled_deck(seed: str, round_index: int) -> list[int]:
    """Fisher-Yates from the last position down, one draw per position."""
    deck = list(range(40))
    stream = SeedStream(seed, f"round:{round_index}")
    for i in range(39, 0, -1):
        j = stream.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck
