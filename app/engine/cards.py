"""Cards as small integers inside the engine, short ids ("7o", "12b") at its edges.

A card is `rank_index * 4 + suit_index`, so `card >> 2` is its place in the run order.
"""

from collections.abc import Iterable

from .errors import InvalidAction

RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)  # run order: 7 is followed directly by 10
SUITS = "oceb"  # oros, copas, espadas, bastos
DECK_SIZE = 40
ACE, KING = 0, 9  # rank indices of the As (1) and the Rey (12)

RANK_OF = tuple(card >> 2 for card in range(DECK_SIZE))  # a lookup: cheaper than 3.11's shift in the hot paths
CARD_IDS = tuple(f"{rank}{suit}" for rank in RANKS for suit in SUITS)
_CARD_BY_ID = {card_id: card for card, card_id in enumerate(CARD_IDS)}


def card_id(card: int) -> str:
    return CARD_IDS[card]


def parse_card(text: object) -> int:
    card = _CARD_BY_ID.get(text) if isinstance(text, str) else None
    if card is None:
        raise InvalidAction(f"unknown card id {text!r}; ids are rank then suit initial, e.g. '7o', '12b'")
    return card


def parse_cards(texts: Iterable[str]) -> list[int]:
    """Many ids at once (a stored state, a deck): one lookup each, and parse_card's refusal."""
    try:
        return [_CARD_BY_ID[text] for text in texts]
    except (KeyError, TypeError):
        for text in texts:
            parse_card(text)  # raises, naming the id at fault
        raise


def ids(cards: Iterable[int]) -> list[str]:
    # A loop rather than a comprehension: in Python 3.11 a comprehension is a function call of
    # its own, and the lists here are of one to four cards (a third fewer instructions).
    names = []
    for card in cards:
        names.append(CARD_IDS[card])
    return names
