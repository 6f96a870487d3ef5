"""Game review: each decision of a finished game weighed as the master weighs a position, from what
the deciding seat knew then, and again with every card seen.

An option's `value` is the points it is worth to the seat's camp from the decision to the end of
the round: the camp's points gained there less the best other camp's, as a mean over worlds that
agree with the seat's own knowledge (drawn as the master draws them, reading the deal's play:
sampling.py), each world played out to the round's end by every seat taking its best immediate
gain. Its `win_chance` is the camp's chance to win the game from where that round ends (the fitted
logistic of expert.py; a game the round ends is won or lost). Every option of a decision is played
out in the same worlds, so their differences are sharper than each value.

Where the rest of the round is a small game of perfect information (no stock, at most
`EXACT_CARDS` cards in the hands: a 2-player round's last deal), a world is searched to the end
instead (alpha-beta on the points margin, every seat playing its best): in a 2-player last deal
the seat knows the other hand, so there is one world and the value is exact.

`all_cards_value` is the same for the one true world (the hands and the stock as they were), shown
apart: what was knowable is `value`, the rest was luck.
"""

import math
import random
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field

from ..engine import Game, action_to_dict, engine_steps
from ..engine.views import deal_events, seat_knowledge
from .expert import win_probability
from .policies import best_immediate_action
from .sampling import Sampler

EXACT_CARDS = 8  # the most cards left in the hands (the stock empty) that a world is searched to the end with
MIN_WORLDS, MAX_WORLDS = 8, 200
DEFAULT_BUDGET_MS = 150  # a decision's time: worlds are drawn and played out until it is spent (at least MIN_WORLDS)
# Marks by points given up (`loss`); a loss within BEST_WITHIN is noise of the estimate.
MARKS = (("best", 0.25), ("good", 0.75), ("inaccuracy", 1.5), ("mistake", 3.0), ("blunder", math.inf))
Z95 = 1.96


@dataclass
class Option:
    action: dict
    value: float
    value_low: float
    value_high: float
    win_chance: float
    win_chance_low: float
    win_chance_high: float
    all_cards_value: float
    all_cards_win_chance: float


@dataclass
class Decision:
    index: int
    event_id: int  # the log's last event before it
    seat: int
    camp: int
    round: int
    deal: int
    options: list[Option]
    chosen: dict
    best: dict
    loss: float  # points given up against `best` (the first value's unit)
    win_chance_loss: float  # the same in the chance to win (0 to 1)
    mark: str
    forced: bool
    exact: bool
    worlds: int

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class SeatReview:
    seat: int
    decisions: int
    choices: int  # decisions with more than one option: what the figures below are over
    mean_loss: float
    accuracy: float
    marks: dict[str, int] = field(default_factory=dict)


def mark_of(loss: float) -> str:
    return next(mark for mark, below in MARKS if loss < below)


def decision_accuracy(win_chance_loss: float) -> float:
    """Lichess's accuracy of a move, from the winning chances it gave up (in percent)."""
    lost = min(max(win_chance_loss * 100, 0.0), 100.0)
    return min(max(103.1668 * math.exp(-0.04354 * lost) - 3.1669, 0.0), 100.0)


def review_decision(before: Game, history: list[dict], seat: int, chosen: int, rng: random.Random,
                    budget_ms: float = DEFAULT_BUDGET_MS, index: int = 0, event_id: int = 0) -> Decision:
    """`seat`'s decision in `before` (the game as it stood, `history` the deal's events so far)."""
    legal = before.legal_actions(seat)
    camp = before.camp_of[seat]
    sampler = Sampler(seat_knowledge(before, seat, history), reads_play=True)
    knows_all = sampler.last_deal and len(sampler.others) == 1
    outcomes: dict[int, list[tuple[float, float]]] = {action: [] for action in legal}
    deadline, worlds = time.perf_counter() + budget_ms / 1000, 0
    # One world when the seat knows every hand; a forced decision's value is shown, not weighed.
    least = 1 if knows_all else MIN_WORLDS
    while worlds < least or (least > 1 and len(legal) > 1 and worlds < MAX_WORLDS
                             and time.perf_counter() < deadline):
        world = sampler.sample(rng)
        for action in legal:
            outcomes[action].append(_outcome(world, seat, action, camp))
        worlds += 1
    true_world = before.clone(deal_next_round=False)
    options = [_option(action, outcomes[action], _outcome(true_world, seat, action, camp)) for action in legal]
    best = max(options, key=lambda option: (option.value, option.win_chance))
    mine = options[legal.index(chosen)]
    loss = max(0.0, best.value - mine.value)
    return Decision(index=index, event_id=event_id, seat=seat, camp=camp, round=before.round_index,
                    deal=before.deal_index, options=options, chosen=mine.action, best=best.action,
                    loss=round(loss, 3), win_chance_loss=round(max(0.0, best.win_chance - mine.win_chance), 4),
                    mark="best" if mine is best or len(legal) == 1 else mark_of(loss), forced=len(legal) == 1,
                    exact=knows_all and _searchable(before), worlds=worlds)


def review_game(played: Iterable[tuple[Game, int | None, dict | None, int]], events: list[dict],
                rng_for: Callable[[int], random.Random], budget_ms: float = DEFAULT_BUDGET_MS,
                start: int = 0) -> Iterator[Decision]:
    """Each decision of a game played over (engine/replay.py's `played_over` of its log, `events`),
    from the `start`-th (a review cut short goes on where it stopped); `rng_for(index)` draws that
    decision's worlds, so a decision weighed again is weighed alike."""
    index, before, event_id, seen = 0, None, 0, 0
    for game, seat, action, last_event in played:
        if seat is not None and action is not None and before is not None:
            if index >= start:
                while seen < len(events) and events[seen]["id"] <= event_id:
                    seen += 1
                history = deal_events(events[:seen])  # the deal's log as the seat's bot read it then
                chosen = engine_steps(before, seat, action)[0]
                yield review_decision(before, history, seat, chosen, rng_for(index), budget_ms, index, event_id)
            index += 1
        before, event_id = game.clone(deal_next_round=False), last_event


def seat_reviews(decisions: list[dict], players: int) -> list[SeatReview]:
    """Each seat's figures over its decisions (as `Decision.as_dict` keeps them): mean loss, marks
    and accuracy over its choices (forced decisions cannot be wrong, so they count in `decisions` only)."""
    reviews = []
    for seat in range(players):
        own = [d for d in decisions if d["seat"] == seat]
        choices = [d for d in own if not d["forced"]]
        marks = {mark: sum(d["mark"] == mark for d in choices) for mark, _ in MARKS}
        reviews.append(SeatReview(
            seat=seat, decisions=len(own), choices=len(choices),
            mean_loss=round(sum(d["loss"] for d in choices) / len(choices), 3) if choices else 0.0,
            accuracy=round(sum(decision_accuracy(d["win_chance_loss"]) for d in choices) / len(choices), 1)
            if choices else 100.0, marks=marks))
    return reviews


def _outcome(world: Game, seat: int, action: int, camp: int) -> tuple[float, float]:
    """(the points margin to the round's end, the chance to win from there) after `action`."""
    game = world.clone(deal_next_round=False)
    game.apply(seat, action)
    end = exact_end(game, camp, world) if _searchable(game) else _played_out(game, world)
    return margin(end, world, camp), _win_chance(end, camp)


def margin(end: Game, root: Game, camp: int) -> float:
    """The camp's points gained from `root` to `end` less the best other camp's."""
    gained = [now - then for now, then in zip(end.scores, root.scores, strict=True)]
    return gained[camp] - max(points for other, points in enumerate(gained) if other != camp)


def exact_end(game: Game, camp: int, root: Game, alpha: float = -math.inf, beta: float = math.inf) -> Game:
    """The round's end when every seat plays its best from here (its camp's margin; alpha-beta)."""
    if game.winner is not None or game.round_index != root.round_index:
        return game
    mover = game.awaiting()[0]
    mine = game.camp_of[mover] == camp
    best_end, best = None, -math.inf if mine else math.inf
    for action in game.legal_actions(mover):
        child = game.clone(deal_next_round=False)
        child.apply(mover, action)
        end = exact_end(child, camp, root, alpha, beta)
        value = margin(end, root, camp)
        if (value > best) if mine else (value < best):
            best_end, best = end, value
        if mine:
            alpha = max(alpha, best)
        else:
            beta = min(beta, best)
        if alpha >= beta:
            break
    assert best_end is not None  # a seat that awaits has a legal action
    return best_end


def _searchable(game: Game) -> bool:
    return game.winner is None and not game.stock and sum(map(len, game.hands)) <= EXACT_CARDS


def _played_out(game: Game, root: Game) -> Game:
    while game.winner is None and game.round_index == root.round_index:
        seat = game.awaiting()[0]
        game.apply(seat, best_immediate_action(game, seat))
    return game


def _win_chance(end: Game, camp: int) -> float:
    if end.winner is not None:
        return 1.0 if end.winner == camp else 0.0
    return win_probability(end.scores, camp, end.rules.target)


def _option(action: int, outcomes: list[tuple[float, float]], true_outcome: tuple[float, float]) -> Option:
    values, chances = [o[0] for o in outcomes], [o[1] for o in outcomes]
    value, (value_low, value_high) = _mean_and_interval(values)
    chance, (chance_low, chance_high) = _mean_and_interval(chances)
    return Option(action=action_to_dict(action), value=value, value_low=value_low, value_high=value_high,
                  win_chance=chance, win_chance_low=max(0.0, chance_low), win_chance_high=min(1.0, chance_high),
                  all_cards_value=round(true_outcome[0], 3), all_cards_win_chance=round(true_outcome[1], 4))


def _mean_and_interval(values: list[float]) -> tuple[float, tuple[float, float]]:
    """The mean and its 95% interval (one value, or all alike: the interval is the value)."""
    mean = sum(values) / len(values)
    spread = 0.0
    if len(values) > 1:
        spread = Z95 * math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values))
    return round(mean, 4), (round(mean - spread, 4), round(mean + spread, 4))
