"""Engine speed: full games to the target with uniformly random legal actions, on one core.

Counts every applied action (plays, declarations, passes), choosing among
`legal_actions` included. Run: .venv/bin/python bench/engine.py [--seconds S]
"""

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.engine import PRESETS, Game  # noqa: E402


def play_games(rules, players, record_events, seconds, rng):
    random = rng.random
    actions = games = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        game = Game(rules, players, seed=str(rng.random()), record_events=record_events)
        while game.winner is None:
            seat = game.awaiting()[0]
            legal = game.legal_actions(seat)
            game.apply(seat, legal[int(random() * len(legal))])  # uniform, cheaper than rng.choice
            actions += 1
        games += 1
    elapsed = time.perf_counter() - started
    return actions / elapsed, games / elapsed


def machine_speed() -> float:
    """Millions of plain Python loop steps per second: lets figures from different machines be compared."""
    best = 0.0
    for _ in range(3):
        started, total = time.perf_counter(), 0
        for i in range(2_000_000):
            total += i
        best = max(best, 2 / (time.perf_counter() - started))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=1.0, help="per preset, player count and mode")
    args = parser.parse_args()
    rng = random.Random(20261130)
    print(f"machine: {machine_speed():.1f} M plain loop steps/s (the figures scale with it)")
    totals = {True: [], False: []}
    print(f"{'preset':<12}{'players':>8}{'search actions/s':>18}{'games/s':>9}{'events actions/s':>18}{'games/s':>9}")
    for name, rules in PRESETS.items():
        for players in rules.player_counts():
            row = {}
            for record in (False, True):
                row[record] = play_games(rules, players, record, args.seconds, rng)
                totals[record].append(row[record][0])
            print(f"{name:<12}{players:>8}{row[False][0]:>18,.0f}{row[False][1]:>9,.0f}"
                  f"{row[True][0]:>18,.0f}{row[True][1]:>9,.0f}")
    for record, label in ((False, "search mode (no events)"), (True, "full events")):
        rates = totals[record]
        print(f"mean over presets, {label}: {sum(rates) / len(rates):,.0f} actions/s")


if __name__ == "__main__":
    main()
