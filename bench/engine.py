"""Engine speed: full games to the target with uniformly random legal actions, on one core.

Counts every applied action (plays, declarations, passes), choosing among
`legal_actions` included, and divides by the machine's plain loop speed (actions per million
loop steps), so that machines compare. Run: .venv/bin/python bench/engine.py [--seconds S]

`--instructions` prints instead the CPU instructions an action takes in each mode, a figure
that the machine's load does not move (valgrind's callgrind over a fixed set of games, less
the same run without games). `--profile` prints the bytecodes an action executes in each
function (exact, and the same on every machine).
"""

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.engine import PRESETS, Game
from bench.statement import instructions


def play_one(rules, players, record_events, rng) -> int:
    """One game to the target, every action uniformly random among the legal ones; its action count."""
    random = rng.random
    game = Game(rules, players, seed=str(random()), record_events=record_events)
    actions = 0
    while game.winner is None:
        seat = game.awaiting()[0]
        legal = game.legal_actions(seat)
        game.apply(seat, legal[int(random() * len(legal))])  # uniform, cheaper than rng.choice
        actions += 1
    return actions


def play_games(rules, players, record_events, seconds, rng):
    actions = games = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        actions += play_one(rules, players, record_events, rng)
        games += 1
    elapsed = time.perf_counter() - started
    return actions / elapsed, games / elapsed


def play_fixed(games: int, record_events: bool) -> int:
    """The same games every time: `games` per preset and player count."""
    rng = random.Random(20261201)
    return sum(play_one(rules, players, record_events, rng)
               for rules in PRESETS.values() for players in rules.player_counts() for _ in range(games))


def instructions_per_action(record_events: bool, games: int = 10) -> float:
    def counted(n):
        return instructions(__file__, "--fixed-games", str(n), *(["--events"] if record_events else []))
    return (counted(games) - counted(0)) / play_fixed(games, record_events)


def bytecode_profile(record_events: bool, games: int = 4, top: int = 16) -> list[str]:
    """Where an action's work goes, exactly and the same on every machine: Python bytecodes
    executed per action in each function (sys.settrace with opcode events), and its calls."""
    ops, calls = Counter(), Counter()

    def trace(frame, event, _):
        where = f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}"
        if event == "call":
            frame.f_trace_opcodes = True
            calls[where] += 1
        elif event == "opcode":
            ops[where] += 1
        return trace
    play_fixed(games, record_events)  # warm: caches filled as in a long run
    sys.settrace(trace)
    try:
        actions = play_fixed(games, record_events)
    finally:
        sys.settrace(None)
    lines = [f"{sum(ops.values()) / actions:.0f} bytecodes and {sum(calls.values()) / actions:.1f} "
             f"Python calls an action"]
    lines += [f"  {where:<36}{count / actions:7.1f} bytecodes{calls[where] / actions:7.2f} calls"
              for where, count in ops.most_common(top)]
    return lines


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
    parser.add_argument("--instructions", action="store_true",
                        help="instead, CPU instructions an action in each mode (needs valgrind)")
    parser.add_argument("--profile", action="store_true",
                        help="instead, the bytecodes an action executes in each function, in each mode")
    parser.add_argument("--fixed-games", type=int, help=argparse.SUPPRESS)  # what --instructions counts
    parser.add_argument("--events", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fixed_games is not None:
        play_fixed(args.fixed_games, args.events)
        return
    if args.profile:
        for record, label in ((False, "search mode (no events)"), (True, "full events")):
            print("\n".join([f"{label}:", *bytecode_profile(record)]))
        return
    if args.instructions:
        search, events = instructions_per_action(False), instructions_per_action(True)
        print(f"instructions an action: {search:,.0f} in search mode, {events:,.0f} with full events "
              f"(search/events: {search / events:.2f})")
        return
    rng = random.Random(20261130)
    # The loop speed is sampled before every row and the fastest sample taken: the machine's
    # speed when quiet, so a busy spell on a shared machine can only understate the engine.
    speeds, totals = [], {True: [], False: []}
    print(f"{'preset':<12}{'players':>8}{'search actions/s':>18}{'games/s':>9}{'events actions/s':>18}{'games/s':>9}")
    for name, rules in PRESETS.items():
        for players in rules.player_counts():
            speeds.append(machine_speed())
            row = {}
            for record in (False, True):
                row[record] = play_games(rules, players, record, args.seconds, rng)
                totals[record].append(row[record][0])
            print(f"{name:<12}{players:>8}{row[False][0]:>18,.0f}{row[False][1]:>9,.0f}"
                  f"{row[True][0]:>18,.0f}{row[True][1]:>9,.0f}")
    speed = max(speeds)
    print(f"machine: {speed:.1f} M plain loop steps/s (actions/s scale with it)")
    for record, label in ((False, "search mode (no events)"), (True, "full events")):
        mean = sum(totals[record]) / len(totals[record])
        print(f"mean over presets, {label}: {mean:,.0f} actions/s, "
              f"{mean / speed / 1000:.1f}k actions per million loop steps")


if __name__ == "__main__":
    main()
