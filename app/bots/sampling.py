"""Determinization: full games that agree with everything a seat knows, hidden cards sampled."""

from ..engine import CARD_IDS, game_from_dict
from ..engine.declarations import combination


class Sampler:
    """Built once per decision from `seat_knowledge`; `sample` then costs one clone and a shuffle."""

    def __init__(self, knowledge: dict):
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

    def sample(self, rng):
        game = self.base.clone()
        cards = self.unseen[:]
        rng.shuffle(cards)
        start = 0
        first_deal = game.deal_index == 0
        for seat, count in enumerate(self.hand_counts):
            if seat != self.seat:
                game.hands[seat] = sorted(cards[start:start + count])
                start += count
                game.holdings[seat] = combination(game.hands[seat], game.rules.announce, first_deal)
        game.stock = cards[start:start + self.stock_count]
        game.cards_in_hands = sum(self.hand_counts)
        for index in self.hidden_ranks:
            declared = game.declarations[index]
            held = game.holdings[declared.seat]
            rank = held[1] if held and held[0] == declared.kind else rng.randrange(10)
            game.declarations[index] = type(declared)(declared.seat, declared.kind, rank)
        game.seed = f"determinized:{rng.random()}"
        return game
