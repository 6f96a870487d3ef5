"""The master's learned evaluation: a camp's chance to win the game from a position's public facts.

A logistic model over `features`, one weight vector per table (player count and camps: four
players in teams are not four playing alone), trained by self-play
(`bench/train.py`). Every feature is public: scores, cards captured this round, the table,
the dealer, whose turn it is, streaks and piles in play, the kinds of the declarations made.
No hand and no stock card is read, so a value never depends on what the seat cannot see,
in a sample of the search or anywhere else. Inference is a dot product in plain Python.
"""

import json
import math
from functools import cache
from pathlib import Path

from ..engine.declarations import value as declaration_value
from ..engine.rounds import NEUTRAL_SHARE
from ..engine.streaks import PILE_STEPS

SHIPPED_WEIGHTS = Path(__file__).with_name("master_weights.json")
FEATURES = (
    "bias",
    "distance_lead",        # the other camp's distance to the target minus ours, over the spread
    "cards_lead",           # cards captured this round, ours minus the best other camp's
    "card_points_lead",     # cards already past the neutral share: points the round's end will bring
    "cards_lead_to_come",   # the cards lead, weighted by the share of the round still to play
    "sweep",                # the table the last capturer's camp will sweep at the round's end
    "dealer",               # our camp deals: the last card, and the last play of the round
    "to_move",              # our camp moves next
    "streak",               # a darba step or a pile in play, ours or theirs
    "declared",             # declarations made this deal and not yet resolved, by kind
    "closeness",            # how near the target the game is
    "round_left",           # the share of the round's cards still to take
)


def features(game, camp: int, root_round: int) -> list[float]:
    """The position as `camp` may know it. A position past the root's round (a search that ran
    to the round's end) is the next round's start: nothing captured, every card to come."""
    scores, captured, camp_of = game.scores, game.captured, game.camp_of
    if game.camps == 2:  # most tables: the one other camp, without a search for the best
        rival_score, rival_cards = scores[1 - camp], len(captured[1 - camp])
    else:
        rival_score = max(score for other, score in enumerate(scores) if other != camp)
        rival_cards = max(len(pile) for other, pile in enumerate(captured) if other != camp)
    target = game.rules.target
    mine, theirs = max(target - scores[camp], 0.5), max(target - rival_score, 0.5)
    spread = math.sqrt(mine + theirs)
    if game.round_index != root_round:
        return [1.0, (theirs - mine) / spread, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1 / spread, 1.0]
    ours = len(captured[camp])
    neutral = NEUTRAL_SHARE[game.camps]
    left = (40 - sum(map(len, captured))) / 40
    sweep = 0
    if game.last_capturer >= 0:
        sweep = len(game.table) if camp_of[game.last_capturer] == camp else -len(game.table)
    streak = 0
    if game.streak_step:
        streak += game.streak_step[1] if game.streak_step[0] == camp else -game.streak_step[1]
    if game.chain_len:
        points = PILE_STEPS[game.chain_len][0]
        streak += points if camp_of[game.chain_seat] == camp else -points
    declared = 0
    if game.declarations_open:
        announce = game.rules.announce
        for d in game.declarations:
            declared += declaration_value(d.kind, announce) * (1 if camp_of[d.seat] == camp else -1)
    to_move = 0.0 if game.turn is None else (1.0 if camp_of[game.turn] == camp else -1.0)
    return [
        1.0,
        (theirs - mine) / spread,
        (ours - rival_cards) / spread,
        (max(ours - neutral, 0) - max(rival_cards - neutral, 0)) / spread,
        (ours - rival_cards) * left / spread,
        sweep / spread,
        (1 if camp_of[game.dealer] == camp else -1) / spread,
        to_move,
        streak / spread,
        declared / spread,
        1 / spread,
        left,
    ]


def table_of(game) -> str:
    """The key of a game's weights: "4x2" is four players in two teams."""
    return f"{game.players}x{game.camps}"


def probability(weights, row) -> float:
    """The logistic model's probability for a row of features; the score is kept within ±30
    (a chance within 1e-13 of certain) so that neither exp nor a log of the result can fail."""
    z = max(min(sum(map(float.__mul__, weights, row)), 30.0), -30.0)
    return 1 / (1 + math.exp(-z))


def win_chance(weights, game, camp: int, root_round: int) -> float:
    """The probability the logistic model with `weights` gives the camp."""
    return probability(weights, features(game, camp, root_round))


class ValueModel:
    """Weights per table (`table_of`)."""

    def __init__(self, weights: dict[str, list[float]], provenance: dict | None = None):
        for table, vector in weights.items():
            if len(vector) != len(FEATURES):
                raise ValueError(f"table {table}: {len(vector)} weights for {len(FEATURES)} features")
        self.weights, self.provenance = weights, provenance or {}

    def weights_for(self, game) -> list[float]:
        return self.weights[table_of(game)]

    def win_chance(self, game, camp: int, root_round: int) -> float:
        return win_chance(self.weights_for(game), game, camp, root_round)

    def to_dict(self) -> dict:
        return {"features": list(FEATURES), "weights": dict(sorted(self.weights.items())),
                "provenance": self.provenance}

    @classmethod
    def from_dict(cls, data: dict) -> "ValueModel":
        if data["features"] != list(FEATURES):
            raise ValueError("the weights were trained on other features; train again (bench/train.py)")
        return cls({table: [float(x) for x in w] for table, w in data["weights"].items()}, data.get("provenance"))

    @classmethod
    def load(cls, path) -> "ValueModel":
        return cls.from_dict(json.loads(Path(path).read_text()))


@cache
def shipped_model() -> ValueModel:
    return ValueModel.load(SHIPPED_WEIGHTS)
