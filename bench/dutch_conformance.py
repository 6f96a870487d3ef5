"""Our Swiss pairings against bbpPairings, a FIDE-endorsed Dutch engine: FIDE's A.7 check, run on
the service's own entry point (app/tournaments/pairing.py `dutch_round`, the history fed to it as a
tournament's tables are).

bbpPairings generates random tournaments (its `-g`: ratings, results, its own pairings); for each
round of each, `dutch_round` pairs that round from the rounds before it, and every table it makes
(white, black) or bye is compared with bbpPairings'. A.7 asks at most 10 discrepant tournaments in
5,000. bbpPairings is not a dependency: build it from its repository and pass its path.

    python bench/dutch_conformance.py --bbp /path/to/bbpPairings.exe --tournaments 200
"""

import argparse
import logging
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from app.tournaments.pairing import Table, dutch_round
from app.tournaments.standings import Played

# Results only: no forfeits, retirements or half-point byes, which a tournament here never has.
CONFIG = """PlayersNumber={players}
RoundsNumber={rounds}
DrawPercentage={draws}
ForfeitRate=1000000000
RetiredRate=1000000000
HalfPointByeRate=1000000000
"""
RESULT_SHARES = {"1": (1, 0), "0": (0, 1), "=": (0, 0)}  # the white player's result: games won by each


def rounds_of(trf: str) -> list[list[tuple[Table, tuple[int, ...]]]]:
    """Each round's tables (white first, entrants from 0; a bye alone) and games won, from a TRF-16
    tournament: player lines `001`, a result block of 10 characters a round from column 92."""
    found: dict[int, dict[Table, tuple[int, ...]]] = {}
    for line in trf.replace("\r", "\n").splitlines():
        if not line.startswith("001"):
            continue
        player = int(line[4:8]) - 1
        for number, start in enumerate(range(91, len(line.rstrip()), 10)):
            opponent, colour, result = line[start:start + 10].split()
            table = found.setdefault(number, {})
            if opponent == "0000":
                table[(player,)] = (1,)
            elif colour == "w":
                table[(player, int(opponent) - 1)] = RESULT_SHARES[result]
    return [list(found[number].items()) for number in sorted(found)]


def check(bbp: str, players: int, rounds: int, seed: int, workdir: str) -> tuple[int, int, int]:
    """(rounds compared, rounds whose pairs differ, rounds whose pairs or seats differ) of one
    tournament bbpPairings generates."""
    config, trf = os.path.join(workdir, "config.txt"), os.path.join(workdir, "tournament.trf")
    with open(config, "w") as out:
        out.write(CONFIG.format(players=players, rounds=rounds, draws=random.Random(seed).randint(0, 40)))
    subprocess.run([bbp, "--dutch", "-g", config, "-o", trf, "-s", str(seed)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(trf) as text:
        played = rounds_of(text.read())
    pairs_differ = seats_differ = 0
    first_white = any(seats[0] == 0 for seats, _ in played[0])  # drawn by lot: read off round one
    for number, tables in enumerate(played):
        history = [[Played(seats, wins, 1) for seats, wins in earlier] for earlier in played[:number]]
        ours = dutch_round(range(players), history, len(played), first_white)
        theirs = [seats for seats, _ in tables]
        pairs_differ += ours is None or sorted(map(sorted, ours)) != sorted(map(sorted, theirs))
        seats_differ += ours is None or sorted(ours) != sorted(theirs)
    return len(played), pairs_differ, seats_differ


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bbp", required=True, help="the bbpPairings executable")
    parser.add_argument("--tournaments", type=int, default=200)
    parser.add_argument("--players", default="10,16,20", help="field sizes, one drawn a tournament")
    parser.add_argument("--rounds", type=int, default=0, help="rounds a tournament (default: half the field)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the library's notes on forced byes
    sizes = [int(size) for size in args.players.split(",")]
    rng = random.Random(args.seed)
    compared, pairs_differ, seats_differ, discrepant = 0, 0, 0, [0, 0]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as workdir:
        for _ in range(args.tournaments):
            players = rng.choice(sizes)
            rounds, pairs, seats = check(args.bbp, players, args.rounds or players // 2, rng.randrange(1 << 30),
                                         workdir)
            compared, pairs_differ, seats_differ = compared + rounds, pairs_differ + pairs, seats_differ + seats
            discrepant = [discrepant[0] + bool(pairs), discrepant[1] + bool(seats)]
    print(f"{args.tournaments} tournaments of {args.players} entrants, {compared} rounds compared in "
          f"{time.perf_counter() - started:.0f} s (A.7 allows 10 tournaments in 5,000):")
    print(f"  who meets whom: {pairs_differ} rounds differ, in {discrepant[0]} tournaments")
    print(f"  who meets whom and with which seat (colour): {seats_differ} rounds differ, "
          f"in {discrepant[1]} tournaments")


if __name__ == "__main__":
    main()
