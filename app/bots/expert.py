"""The expert, and the plain Monte Carlo it is measured against: determinized search over the
seat's information set.

Each iteration samples the hidden cards consistently with what the seat knows, weighed by
what the deal's public history makes likely (`Sampler(reads_play=True)`). A card to play is
chosen by minimax over the next round of turns in each sample (one move per player,
everyone's cards known inside the sample), the leaves valued by the camp's chance to win the
game (its points, and the cards taken since the root toward card points). In the round's last
deal (the stock is empty) the minimax runs to the round's end instead: the unseen cards are
then exactly the other hands, and the sweep of the table and the card points decide what a
round of turns cannot see. A declaration is decided by what it is worth in each sample: the
deal's awards with and without it, the others declaring what the sample gives them (and the
undeclared penalty where it applies). The best mean over the samples wins; the same sample
serves every candidate, which sharpens the comparison.

Measured against `greedy` (bench/bots.py, the README has the figures): reading the play
took the expert from 52% to 62% of games; deciding declarations by their worth instead of
by rollouts (a one-point pot drowns in a round's noise) stopped giving away about 2.4
points a game. Deeper minimax and more samples land within a few points of the shallow
minimax, which is the cheapest by far; head to head at the same 40 ms a move it beats plain
determinized Monte Carlo (`montecarlo_bot`) by 0.42 ± 0.17 points a round with two players,
0.76 ± 0.28 in 4-player teams. Searching the last deal to its end took it from 59% to 67%
(fixed 20 samples a move, 400 games), and in 4-player teams, where the last deal is twelve
cards, from 59% to 67.5% (40 ms a move, 200 games) once alpha-beta and a cheaper clone made
that search fit the budget.
"""

import math
import time
from functools import partial

from ..engine import DECLARE, PASS
from ..engine.declarations import Declaration, awards
from ..engine.declarations import value as declaration_value
from .policies import best_immediate_action
from .sampling import Sampler
from .value import shipped_model, win_chance

DECLARATION_SAMPLES = 200  # a declaration's worth needs no search: many samples are cheap
LEAF_CARD_VALUE = 0.3  # lookahead leaves: a card taken counts toward card points
MASTER_BUDGET_MS = 100  # the master's time a move: within the level's 150 ms median


def expert_bot(knowledge, rng, sampler=None, iterations=None, budget_ms=40, evaluate=None):
    """Each card valued by minimax in each sample: over the next round of turns, or to the
    round's end in its last deal; the leaves valued by `evaluate` (the hand-written `_evaluate`
    unless told)."""
    sampler = sampler or Sampler(knowledge, reads_play=True)
    depth = sum(sampler.hand_counts) - 1 if sampler.last_deal else sampler.base.players
    return _determinized_choice(sampler, rng, iterations, budget_ms,
                                partial(_lookahead, depth=depth, evaluate=evaluate or _evaluate))


def master_bot(knowledge, rng, sampler=None, iterations=None, budget_ms=MASTER_BUDGET_MS, model=None):
    """The expert's search with leaves valued by the evaluation learned by self-play (`value.py`)."""
    sampler = sampler or Sampler(knowledge, reads_play=True)
    weights = (model or shipped_model()).weights_for(sampler.base)
    return expert_bot(knowledge, rng, sampler, iterations, budget_ms,
                      evaluate=partial(learned_evaluation, weights=weights))


def montecarlo_bot(knowledge, rng, sampler=None, iterations=None, budget_ms=40):
    """Plain determinized Monte Carlo, the baseline the expert's search has to beat head to head:
    each card is played out to the end of the deal in each sample, every seat taking its best
    immediate gain. Same samples and declarations as the expert."""
    sampler = sampler or Sampler(knowledge, reads_play=True)
    return _determinized_choice(sampler, rng, iterations, budget_ms, _playout)


def _determinized_choice(sampler, rng, iterations, budget_ms, card_value):
    """The action with the best mean over the samples; `card_value(game, camp, root)` values the
    position a card leaves in one sample, where every hand is known."""
    seat = sampler.seat
    legal = sampler.base.legal_actions(seat)
    if len(legal) == 1:
        return legal[0]
    if sampler.last_deal and len(sampler.others) == 1:
        iterations = 1  # the unseen cards are exactly the other hand: one sample is the position itself
    if DECLARE in legal:
        positions = _samples(sampler, rng, iterations, budget_ms, limit=DECLARATION_SAMPLES)
        if sum(_declaration_worth(position, seat) for position in positions) > 0:
            return DECLARE
        if PASS in legal:
            return PASS
    cards = [a for a in legal if a < DECLARE]
    totals = dict.fromkeys(cards, 0.0)
    for position in _samples(sampler, rng, iterations, budget_ms) if len(cards) > 1 else ():
        camp = position.camp_of[seat]
        for card in cards:
            game = position.clone(deal_next_round=False)
            game.apply(seat, card)
            totals[card] += card_value(game, camp, position)
    return max(cards, key=lambda a: (totals[a], -a))


def _samples(sampler, rng, iterations, budget_ms, limit=math.inf):
    """Exactly `iterations` samples when given; else as many as the budget allows, at least 8."""
    deadline, count = time.perf_counter() + budget_ms / 1000, 0
    while count < iterations if iterations else (count < 8 or (count < limit and time.perf_counter() < deadline)):
        yield sampler.sample(rng)
        count += 1


def _declaration_worth(position, seat) -> float:
    """Declaring minus passing in this sample: the deal's awards, the others declaring what they hold."""
    g, announce = position, position.rules.announce
    others = [d for d in g.declarations if d.seat != seat]
    others += [Declaration(s, *g.holdings[s]) for s in range(g.players)
                if s != seat and not g.answered[s] and g.holdings[s]]
    camp = g.camp_of[seat]
    kind, rank = g.holdings[seat]

    def margin(declarations, penalty=0):
        won = awards(declarations, announce, g.camp_of, g.position, g.players)
        others_best = max([won.get(c, 0) + penalty for c in range(g.camps) if c != camp])
        return won.get(camp, 0) - others_best

    undeclared = declaration_value(kind, announce) if announce.undeclared_penalty and g.deal_index == 0 else 0
    return margin([*others, Declaration(seat, kind, rank)]) - margin(others, undeclared)


def _lookahead(game, camp, root, depth, evaluate, alpha=-math.inf, beta=math.inf):
    """Minimax over the next `depth` moves of this sample (everyone's cards known in it).

    Alpha-beta: a line that cannot change the value is cut, so the value is the plain
    minimax's and every sample costs fewer positions (more samples in the time budget).
    `evaluate(leaf, camp, root)` values the leaves.
    """
    if depth == 0 or game.winner is not None or game.round_index != root.round_index:
        return evaluate(game, camp, root)
    mover = game.awaiting()[0]
    mine = game.camp_of[mover] == camp
    best = -math.inf if mine else math.inf
    legal = game.legal_actions(mover)
    moves = [a for a in legal if a < DECLARE] or legal  # declarations score beyond this horizon
    # Plays that take something first: usually the mover's best, so the cuts come sooner.
    moves.sort(key=lambda a: a < DECLARE and not (game.table_count[a >> 2] or a >> 2 == game.prev_rank))
    for action in moves:
        child = game.clone(deal_next_round=False)
        child.apply(mover, action)
        value = _lookahead(child, camp, root, depth - 1, evaluate, alpha, beta)
        if mine:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if alpha >= beta:
            break
    return best


def _playout(game, camp, root):
    """To the end of the deal (or of the game), every seat taking its best immediate gain."""
    deal = game.deal_index
    while game.winner is None and game.round_index == root.round_index and game.deal_index == deal:
        seat = game.awaiting()[0]
        game.apply(seat, best_immediate_action(game, seat))
    return _evaluate(game, camp, root)


def _evaluate(game, camp, root):
    """The camp's chance to win from the leaf; inside the round a card taken since the root counts
    toward card points."""
    if game.winner is not None:
        return 1.0 if game.winner == camp else 0.0
    scores = game.scores
    if game.round_index == root.round_index:
        scores = [points + LEAF_CARD_VALUE * (len(now) - len(before))
                  for points, now, before in zip(game.scores, game.captured, root.captured, strict=True)]
    return win_probability(scores, camp, game.rules.target)


def learned_evaluation(game, camp, root, weights):
    """The camp's chance to win from the leaf, as the learned model sees its public facts."""
    if game.winner is not None:
        return 1.0 if game.winner == camp else 0.0
    return win_chance(weights, game, camp, root.round_index)


def win_probability(scores, camp, target) -> float:
    """The camp's chance to win a game to `target` from these scores, against the best other camp.

    A logistic in the difference of the two distances to the target over the square root of
    their sum, fitted on 1,500 games of the expert against itself (classic, 2 players, the
    scores at the start of every deal): the same point weighs more as the target nears, and
    less for a camp far ahead. Valuing leaves by it rather than by the point margin won about
    one game in a hundred more against greedy (6,000 games on three banks of decks, and in
    teams), at the same cost.
    """
    mine = max(target - scores[camp], 0.5)
    theirs = min(max(target - points, 0.5) for other, points in enumerate(scores) if other != camp)
    return 1 / (1 + math.exp((mine - theirs) / math.sqrt(mine + theirs)))
