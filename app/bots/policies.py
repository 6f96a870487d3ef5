"""`random`, `casual` and `greedy`, and the immediate gain that greedy and the play-outs of `montecarlo` read.

Each bot is a function of (seat knowledge, rng) → engine action; none sees more.
"""

import math

from ..engine import DECLARE, PASS
from .sampling import Sampler

CARD_WEIGHT = 0.2  # a captured card is worth about a fifth of a point (card points, last capture)
CASUAL_RANDOM_SHARE = 0.5  # the casual bot's share of random moves
STREAK_NEXT_STEP = {0: 1, 1: 1, 2: 5, 3: 10}  # points the next player makes by following a streak


def random_bot(knowledge, rng, sampler=None):
    sampler = sampler or Sampler(knowledge)
    return rng.choice(sampler.base.legal_actions(sampler.seat))


def casual_bot(knowledge, rng, sampler=None):
    """Greedy most of the time, a random legal move otherwise: a beginner's level for humans."""
    sampler = sampler or Sampler(knowledge)
    if rng.random() < CASUAL_RANDOM_SHARE:
        return random_bot(knowledge, rng, sampler)
    return greedy_bot(knowledge, rng, sampler)


def greedy_bot(knowledge, rng, sampler=None):
    """One ply: best immediate gain, minus what the next player can likely take back."""
    sampler = sampler or Sampler(knowledge)
    game, seat = sampler.base, sampler.seat
    legal = game.legal_actions(seat)
    if DECLARE in legal:
        return DECLARE
    if legal == [PASS]:
        return PASS
    position = sampler.sample(rng)
    best, best_value = legal[0], -math.inf
    for action in legal:
        after = position.clone()
        after.apply(seat, action)
        value = immediate_gain(position, after, seat) - exposure(sampler, position, after, seat, action)
        if value > best_value:
            best, best_value = action, value
    return best


def best_immediate_action(game, seat):
    """The card with the best immediate gain, where every hand is known (quick play-outs)."""
    legal = game.legal_actions(seat)
    best, best_value = None, -math.inf
    for action in [a for a in legal if a < DECLARE] or legal:  # declarations score beyond a play-out
        after = game.clone(deal_next_round=False)
        after.apply(seat, action)
        value = immediate_gain(game, after, seat)
        if value > best_value:
            best, best_value = action, value
    return best


def immediate_gain(position, after, seat):
    """What `seat`'s play took `position` to `after`: points over the others, a win, cards taken."""
    camp = after.camp_of[seat]
    scores, taken = position.scores, len(position.captured[camp])
    gain = sum((new - old) * (1 if c == camp else -1)
               for c, (new, old) in enumerate(zip(after.scores, scores, strict=True)))
    if after.winner is not None:
        gain += 100 if after.winner == camp else -100
    return gain + CARD_WEIGHT * (len(after.captured[camp]) - taken)


def exposure(sampler, position, after, seat, action):
    """Expected best take of the next player from the table this card leaves (runs, streaks, missa)."""
    if after.winner is not None or after.round_index != position.round_index:
        return 0.0
    nxt = (seat + 1) % after.players
    if after.camp_of[nxt] == after.camp_of[seat] or not after.hands[nxt]:
        return 0.0
    unseen = sampler.unseen
    hand = len(after.hands[nxt])
    worst = 0.0
    for rank in range(10):
        left = sum(1 for c in unseen if c >> 2 == rank)
        if left <= 0:
            continue
        value = 0.0
        if after.table_count[rank]:
            top = rank
            while top < 10 and after.table_count[top]:
                top += 1
            taken = sum(after.table_count[r] for r in range(rank, top))
            value += CARD_WEIGHT * (taken + 1) + (1 if taken == len(after.table) else 0)
        if rank == action >> 2:
            value += STREAK_NEXT_STEP.get(after.streak if after.rules.streak == "darba" else 1, 1)
        worst = max(worst, _probability_holds(len(unseen), left, hand) * value)
    return worst


def _probability_holds(unseen, of_rank, hand):
    if hand >= unseen:
        return 1.0
    return 1.0 - math.comb(unseen - of_rank, hand) / math.comb(unseen, hand)
