"""Game review's cost and precision (app/bots/review.py).

Plays `--games` classic 2-player games (greedy against random, seeded), reviews each at every
budget of `--budgets` (ms a decision), and prints per budget: the seconds a game's review takes,
the worlds a decision gets, and, against a review at `--reference` ms (many more worlds), the mean
error of an option's `value` and how often the best option and the mark agree. Decisions the seat
could search exactly (the 2-player last deal) are counted apart: their error must be 0 at any budget.

Run: .venv/bin/python bench/analysis.py [--games 3] [--budgets 10,40,150] [--reference 1000]
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots import choose_action
from app.bots.review import review_game
from app.engine import Game, perform, rules_from_request
from app.engine.replay import played_over
from app.engine.views import deal_events, seat_knowledge


def played(seed: str) -> list[dict]:
    game = Game(rules_from_request({"preset": "classic"}), 2, seed=seed, first_dealer=0)
    log, rng = list(game.events), random.Random(seed)
    bots = ("greedy", "random")
    while game.winner is None:
        seat = game.awaiting()[0]
        log += perform(game, seat, choose_action(bots[seat], seat_knowledge(game, seat, deal_events(log)), rng))
    return [dict(event, id=number) for number, event in enumerate(log, 1)]


def review(seed: str, events: list[dict], budget_ms: float) -> tuple[list[dict], float]:
    rules = rules_from_request({"preset": "classic"})
    started = time.perf_counter()
    decisions = [d.as_dict() for d in review_game(played_over(rules, 2, seed, 0, events), events,
                                                  lambda index: random.Random(f"{seed}:{budget_ms}:{index}"),
                                                  budget_ms)]
    return decisions, time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--budgets", default="10,40,150")
    parser.add_argument("--reference", type=float, default=1000)
    args = parser.parse_args()
    budgets = [float(b) for b in args.budgets.split(",")]
    games = {f"bench-analysis-{n}": None for n in range(args.games)}
    references = {}
    for seed in games:
        games[seed] = played(seed)
        references[seed], seconds = review(seed, games[seed], args.reference)
        print(f"game {seed}: {len(references[seed])} decisions; the reference review took {seconds:.0f} s",
              flush=True)
    print("\n| budget (ms) | s a game | worlds a choice (median) | value error (mean, points) | best agrees "
          "| mark agrees | exact decisions' error |")
    print("|---|---|---|---|---|---|---|")
    for budget in budgets:
        seconds, worlds, errors, best, marks, exact_errors = [], [], [], [], [], []
        for seed, events in games.items():
            decisions, took = review(seed, events, budget)
            seconds.append(took)
            for mine, reference in zip(decisions, references[seed], strict=True):
                if mine["forced"]:
                    continue
                worlds.append(mine["worlds"])
                gaps = [abs(a["value"] - b["value"])
                        for a, b in zip(mine["options"], reference["options"], strict=True)]
                (exact_errors if mine["exact"] else errors).extend(gaps)
                best.append(mine["best"] == reference["best"])
                marks.append(mine["mark"] == reference["mark"])
        print(f"| {budget:.0f} | {statistics.mean(seconds):.1f} | {statistics.median(worlds):.0f} "
              f"| {statistics.mean(errors):.3f} | {100 * sum(best) / len(best):.0f}% "
              f"| {100 * sum(marks) / len(marks):.0f}% "
              f"| {max(exact_errors, default=0):.3f} (max of {len(exact_errors)}) |", flush=True)


if __name__ == "__main__":
    main()
