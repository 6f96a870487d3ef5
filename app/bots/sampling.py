"""Determinization: full games that agree with everything a seat knows, hidden cards sampled.

With `reads_play`, the sampler also reads the deal's public history the way a player at the
table does: a sensible player declares what it holds, follows the previous card's rank when
it can, and takes from the table rather than drop a card. A dealt hand that would have
broken one of these habits is kept only with the probability in `UNLIKELY`, so a hand that
matches what the others did is sampled far more often (rejection sampling). Nothing here
reads more than the seat may know: the history is the seat's view of the deal's events.
"""

from dataclasses import dataclass, replace

from ..engine import CARD_IDS, game_from_dict, parse_card
from ..engine.declarations import combination

UNLIKELY = {"declaration": 0.05, "streak": 0.05, "capture": 0.2}
MAX_DRAWS = 300  # per sample; the likeliest draw seen is kept if none is accepted


@dataclass(frozen=True)
class SeenPlay:
    """A card another seat played this deal, with what was public just before it."""
    card: int
    table_ranks: frozenset
    previous_rank: int  # of the play just before, by another camp; -1 if none or unknown
    dropped: bool


class Sampler:
    """Built once per decision from `seat_knowledge`; `sample` then costs one clone and a shuffle."""

    def __init__(self, knowledge: dict, reads_play: bool = False):
        self.seat = knowledge["seat"]
        data = dict(knowledge, seed="determinized")
        data["declarations"] = [[s, kind, 0 if rank is None else rank] for s, kind, rank in knowledge["declarations"]]
        self.base = game_from_dict(data, record_events=False)
        self.hand_counts = knowledge["hand_counts"]
        self.stock_count = knowledge["stock_count"]
        self.hidden_ranks = [i for i, d in enumerate(knowledge["declarations"]) if d[2] is None]
        g = self.base
        seen = set(g.hands[self.seat]) | set(g.table) | set(g.pile) | {c for pile in g.captured for c in pile}
        self.unseen = [c for c in range(len(CARD_IDS)) if c not in seen]
        self.others = [s for s in range(g.players) if s != self.seat]
        self.held_by_others = sum(self.hand_counts[s] for s in self.others)  # the stock follows them
        self.plays = _plays_seen(knowledge.get("history", []), g.camp_of)
        self.played = {s: [play.card for play in plays] for s, plays in self.plays.items()}
        self.reads_play = reads_play
        self.declared = {d.seat: d.kind for d in g.declarations}
        announce = g.rules.announce
        could_declare = announce.when != "in_turn_first_deal" or g.deal_index == 0
        self.passed_up_declaring = {  # seats whose moment to declare has gone by, declared or not
            s for s in self.others
            if could_declare and (g.answered[s] or s in self.plays or announce.when == "automatic")}

    @property
    def last_deal(self) -> bool:
        """The stock is empty: the unseen cards are exactly the others' hands."""
        return self.stock_count == 0

    def sample(self, rng):
        """The others' hands are drawn first and, with `reads_play`, weighed; only a draw that is
        kept gets the stock, the rest of the unseen cards in random order. Drawn so, the cards
        are a uniform shuffle of the unseen ones, and a rejected draw costs a few cards, not
        a whole shuffle (which was most of the expert's time)."""
        if not self.reads_play:
            return self._position(self._with_stock(rng.sample(self.unseen, self.held_by_others), rng), rng)
        best, best_weight = None, -1.0
        for _ in range(MAX_DRAWS):
            held = rng.sample(self.unseen, self.held_by_others)
            weight = self._likelihood(held)
            if rng.random() < weight:
                return self._position(self._with_stock(held, rng), rng)
            if weight > best_weight:
                best, best_weight = held, weight
        return self._position(self._with_stock(best, rng), rng)

    def _with_stock(self, held, rng):
        drawn = set(held)
        stock = [c for c in self.unseen if c not in drawn]
        rng.shuffle(stock)
        return held + stock

    def _hands(self, cards):
        start = 0
        for seat in self.others:
            count = self.hand_counts[seat]
            yield seat, cards[start:start + count]
            start += count

    def _likelihood(self, cards) -> float:
        """How likely the others were to play this deal as they did, holding these cards."""
        announce, first_deal = self.base.rules.announce, self.base.deal_index == 0
        weight = 1.0
        for seat, hand in self._hands(cards):
            plays, played = self.plays.get(seat, []), self.played.get(seat, [])
            declared = self.declared.get(seat)
            if declared or seat in self.passed_up_declaring:
                held = combination(hand + played, announce, first_deal)
                if declared and (held is None or held[0] != declared):
                    return 0.0  # a declaration's kind is public and never false
                if not declared and held is not None:
                    weight *= UNLIKELY["declaration"]
            for i, play in enumerate(plays):
                ranks = {c >> 2 for c in hand} | {c >> 2 for c in played[i:]}
                if play.previous_rank >= 0 and play.card >> 2 != play.previous_rank and play.previous_rank in ranks:
                    weight *= UNLIKELY["streak"]
                if play.dropped and not ranks.isdisjoint(play.table_ranks):
                    weight *= UNLIKELY["capture"]
        return weight

    def _position(self, cards, rng):
        game = self.base.clone()
        first_deal = game.deal_index == 0
        for seat, hand in self._hands(cards):
            game.hands[seat] = sorted(hand)
            dealt = hand + self.played.get(seat, [])  # what a declaration is made on
            game.holdings[seat] = combination(dealt, game.rules.announce, first_deal)
        game.stock = cards[self.held_by_others:self.held_by_others + self.stock_count]
        game.cards_in_hands = sum(self.hand_counts)
        for index in self.hidden_ranks:
            declared = game.declarations[index]
            held = game.holdings[declared.seat]
            rank = held[1] if held and held[0] == declared.kind else rng.randrange(10)
            game.declarations[index] = type(declared)(declared.seat, declared.kind, rank)
        game.seed = f"determinized:{rng.random()}"
        return game


def _plays_seen(history, camp_of) -> dict[int, list[SeenPlay]]:
    """The deal's plays by seat, from its events: the table and the previous rank before each."""
    plays: dict[int, list[SeenPlay]] = {}
    table, previous = set(), None  # previous: (seat, card) of the last play
    for event in history:
        kind = event["type"]
        if kind == "deal":
            table, plays, previous = {parse_card(c) for c in event["table"]}, {}, None
        elif kind == "play":
            seat, card = event["seat"], parse_card(event["card"])
            previous_rank = previous[1] >> 2 if previous and camp_of[previous[0]] != camp_of[seat] else -1
            plays.setdefault(seat, []).append(SeenPlay(card, frozenset(c >> 2 for c in table), previous_rank, False))
            previous = (seat, card)
        elif kind == "drop":
            card = parse_card(event["card"])
            table.add(card)
            if previous and previous[1] == card:
                plays[previous[0]][-1] = replace(plays[previous[0]][-1], dropped=True)
        elif kind in ("capture", "pile_formed"):
            table -= {parse_card(c) for c in event.get("taken", event.get("cards", []))}
        elif kind == "table_swept":
            table = set()
    return plays
