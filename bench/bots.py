"""Bot strength and speed: duplicate matches from a fixed bank of decks.

Every deck is played in every seat rotation, each bot with its own seeded randomness, so
luck cancels out. Per pairing it prints A's game win rate with a Wilson 95% interval, the
paired point margin per round (A minus B, averaged over a deck's rotations) with its 95%
interval, the Elo gap, and each bot's ms per move (median, p95). A bot against itself is
the control and must come out even.

Run: .venv/bin/python bench/bots.py [--games 400] [--jobs 2] [--pairings expert-greedy,...] [--samples N]
`--search-speed` prints instead what one sample of the expert's search costs.
"""

import argparse
import math
import random
from functools import partial
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots import BOTS
from app.bots.sampling import Sampler
from app.engine import PLAYING, PRESETS, Game
from app.engine.views import deal_events, seat_knowledge
from app.matches.play import entrant_results, play_game, wilson_interval

PAIRINGS = {
    "greedy-random": ("classic", ["greedy", "random"]),
    "casual-greedy": ("classic", ["casual", "greedy"]),
    "expert-greedy": ("classic", ["expert", "greedy"]),
    "greedy-greedy": ("classic", ["greedy", "greedy"]),
    "expert-greedy-teams": ("classic", ["expert", "greedy", "expert", "greedy"]),
    "montecarlo-greedy": ("classic", ["montecarlo", "greedy"]),
    "expert-montecarlo": ("classic", ["expert", "montecarlo"]),
    "expert-montecarlo-teams": ("classic", ["expert", "montecarlo", "expert", "montecarlo"]),
    "master-greedy": ("classic", ["master", "greedy"]),
    "master-expert": ("classic", ["master", "expert"]),
    "master-greedy-teams": ("classic", ["master", "greedy", "master", "greedy"]),
    # Level 6 on the other rule sources: at least as strong as the expert on each.
    **{
        f"master-expert-{preset}": (preset, ["master", "expert"])
        for preset in ("traditional", "runda", "simple", "elaborate")
    },
}
BANK_SEED = "bench-bank"


SEARCHERS = ("montecarlo", "expert", "master")  # the bots a time budget or a sample count bounds


def one_game(task):
    name, index, samples = task
    preset, bots = PAIRINGS[name]
    # Fixed samples a move make a result that does not depend on the machine's speed or load.
    policies = {bot: partial(BOTS[bot], iterations=samples) for bot in SEARCHERS} if samples else None
    played = play_game(PRESETS[preset], bots, f"{BANK_SEED}:{name}", index, keep_events=False, policies=policies)
    results = entrant_results(played)
    moves = {}
    for seat, entrant in enumerate(played.entrants):
        moves.setdefault(f"{'AB'[entrant % 2]}:{bots[entrant]}", []).extend(played.move_ms[seat])
    a_won = results[0]["wins"]
    margin = (results[0]["points"] - results[1]["points"]) / (played.game.round_index + 1)
    return name, index, a_won, margin, moves


def summarise(name, rows, players):
    preset, bots = PAIRINGS[name]
    n = len(rows)
    wins = sum(r[2] for r in rows)
    low, high = wilson_interval(wins, n)
    by_deck = {}
    for _, index, _, margin, _ in rows:
        by_deck.setdefault(index // players, []).append(margin)
    paired = [statistics.mean(v) for v in by_deck.values()]
    mean = statistics.mean(paired)
    half = 1.96 * statistics.stdev(paired) / math.sqrt(len(paired)) if len(paired) > 1 else float("nan")
    p = min(max(wins / n, 0.5 / n), 1 - 0.5 / n)
    elo = 400 * math.log10(p / (1 - p))
    moves = {}
    for row in rows:
        for bot, ms in row[4].items():
            moves.setdefault(bot, []).extend(ms)
    speed = "  ".join(f"{bot} {statistics.median(ms):.2f}/{_p95(ms):.2f} ms" for bot, ms in sorted(moves.items()))
    label = (
        f"{bots[0]} vs {bots[1]}"
        + (" (teams)" if players == 4 else "")
        + (f", {preset}" if preset != "classic" else "")
    )
    print(
        f"{label:<26}{n:>6}{wins / n:>8.1%}  [{low:.1%}, {high:.1%}]  {mean:+6.2f} ±{half:4.2f}  {elo:+7.0f}  {speed}"
    )


def _p95(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def search_speed(samples: int = 30) -> str:
    """What a search bot's sample costs, on a fixed set of positions (random play into games of
    four rule sets, the seat's view with the deal's history): the expert's whole sample (draw,
    weigh, search) and the draw alone. More samples in the same budget is what speed buys it."""
    rng = random.Random(7)
    positions = []
    for preset, players in (("classic", 2), ("classic", 4), ("traditional", 2), ("runda", 3)):
        for seed in range(12):
            game = Game(PRESETS[preset], players, seed=f"speed-{seed}")
            for _ in range(14):
                seat = game.awaiting()[0]
                if game.phase == PLAYING:
                    positions.append(seat_knowledge(game, seat, deal_events(game.events)))
                game.apply(seat, rng.choice(game.legal_actions(seat)))
    samplers = [Sampler(knowledge, reads_play=True) for knowledge in positions]
    expert_ms = draw_us = math.inf
    for _ in range(3):  # best of three: the machine's quietest moment
        drawn, seconds = 0, 0.0
        for knowledge, sampler in zip(positions, samplers, strict=False):
            counted = Counted(sampler)
            started = time.perf_counter()
            BOTS["expert"](knowledge, random.Random(1), sampler=counted, iterations=samples)
            seconds += time.perf_counter() - started
            drawn += counted.drawn  # a move with one sensible card draws none
        expert_ms = min(expert_ms, seconds * 1000 / drawn)
        started = time.perf_counter()
        for sampler in samplers:
            for _ in range(samples):
                sampler.sample(rng)
        draw_us = min(draw_us, (time.perf_counter() - started) * 1e6 / len(samplers) / samples)
    return (f"{len(positions)} positions: the expert {expert_ms:.3f} ms a sample "
            f"({40 / expert_ms:.0f} samples in its 40 ms), of which drawing the hidden cards {draw_us:.0f} us")


class Counted:
    """A sampler that counts its draws."""

    def __init__(self, sampler):
        self.sampler, self.drawn = sampler, 0

    def __getattr__(self, name):
        return getattr(self.sampler, name)

    def sample(self, rng):
        self.drawn += 1
        return self.sampler.sample(rng)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=400, help="games per pairing (a multiple of the players)")
    parser.add_argument("--jobs", type=int, default=2, help="processes (each bot move still runs on one core)")
    parser.add_argument("--pairings", default=",".join(PAIRINGS), help=f"from: {', '.join(PAIRINGS)}")
    parser.add_argument("--samples", type=int, help=f"samples a move for {', '.join(SEARCHERS)} instead of "
                                                     "their time budgets")
    parser.add_argument("--search-speed", action="store_true",
                        help="instead, what one sample of the expert's search costs")
    args = parser.parse_args()
    if args.search_speed:
        print(search_speed())
        return
    names = args.pairings.split(",")
    tasks = [(name, i, args.samples) for name in names for i in range(args.games)]
    started = time.time()
    print(f"{'pairing (A vs B)':<26}{'games':>6}{'A wins':>8}  {'Wilson 95%':<16}{'margin/round':<14}{'Elo':>7}  "
          f"ms per move (median/p95)")
    rows = {name: [] for name in names}
    with Pool(args.jobs) as pool:
        for row in pool.imap_unordered(one_game, tasks, chunksize=1):
            rows[row[0]].append(row)
            if len(rows[row[0]]) == args.games:
                summarise(row[0], rows[row[0]], len(PAIRINGS[row[0]][1]))
    print(f"({time.time() - started:.0f} s, {args.jobs} processes; margin = A's points minus B's per round, "
          f"averaged over each deck's seat rotations, ±95% interval)")


if __name__ == "__main__":
    main()
