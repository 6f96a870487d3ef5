"""Tournaments on one worker: a 64-bot Swiss of 7 rounds and a 16-bot double round robin, beside a
plain match of as many games. One API process (in this process, as the tests run it) and one
`ronda worker` on a Redis of the bench's own.

Prints for each: games, wall time, games a second, and Redis commands a game (the server's
total_commands_processed over the run: the workers' sweeps included, as for the match).

Run: .venv/bin/python bench/tournaments.py [--games-per-pairing 2] [--bots random,casual,greedy]

`--entrants 256` instead measures what a tournament of that many people costs to pair and to look
at (issue 64): a Swiss round and an arena's tables paired (pure), 256 players entering an open
arena, its start, and a look (what the sweep does each pass) with all its tables in play.
"""

import argparse
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from faults import start_worker, stop  # noqa: E402
from redis_server import RedisServer  # noqa: E402

from app import create_app  # noqa: E402


def commands(app) -> int:
    return int(app.services.store.redis.info("stats")["total_commands_processed"])


def run(app, label: str, start, finished, games: int):
    before, started = commands(app), time.perf_counter()
    resource = start()
    while not finished(resource):
        time.sleep(0.2)
    seconds = time.perf_counter() - started
    print(f"{label}: {games} games in {seconds:.1f} s, {games / seconds:.1f} games/s, "
          f"{(commands(app) - before) / games:.0f} Redis commands a game")


def people(entrants: int, looks: int = 20):
    """The pairing and look costs of a tournament of `entrants` people."""
    import random

    from app.tournaments.pairing import DUTCH_FIELD, swiss_pairing
    from app.tournaments.rounds import arena_tables
    from app.tournaments.standings import Played
    rng = random.Random(1)
    field = min(entrants, DUTCH_FIELD)  # the largest Swiss at tables of two
    history: list[list[Played]] = []
    for _ in range(5):
        started = time.perf_counter()
        tables, dutch = swiss_pairing(rng.sample(range(field), field), history, 5)
        assert tables is not None
        history.append([Played(table, (1,) if len(table) == 1 else rng.choice([(1, 0), (0, 1)]), 1)
                        for table in tables])
        print(f"Swiss of {field}, round {len(history)}: paired in {(time.perf_counter() - started) * 1000:.0f} ms "
              f"({'Dutch' if dutch else 'arbiter'})")
    doc = {"entrants": ["random"] * entrants, "rounds": [], "players_per_table": 2, "away": []}
    started = time.perf_counter()
    tables = arena_tables(doc, [])  # type: ignore[arg-type]
    print(f"arena of {entrants}: {len(tables)} tables paired in {(time.perf_counter() - started) * 1000:.1f} ms")
    server = RedisServer()
    app = create_app({"REDIS_URL": server.start(), "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    try:
        tournaments = app.services.tournaments
        made = tournaments.create({"format": "arena", "entrants": [], "starts_in_seconds": 3600,
                                   "duration_seconds": 3600, "games_per_pairing": 1, "turn_seconds": 600,
                                   "players_per_table": 2, "max_entrants": entrants,
                                   "rules": {"preset": "classic"}}, "public")
        ids = [app.services.players.register(f"P{n}")[0]["id"] for n in range(entrants)]
        started = time.perf_counter()
        for player_id in ids:
            tournaments.enter(made["id"], player_id)
        print(f"{entrants} entries in {time.perf_counter() - started:.1f} s")
        doc = tournaments.store.load(made["id"])
        doc["starts_at"] = time.time()
        tournaments.store.save(doc, [])
        started = time.perf_counter()
        view = tournaments.view(made["id"])
        print(f"its start: {len(view['rounds'][0]['pairings'])} tables, their games made, "
              f"in {time.perf_counter() - started:.1f} s")
        before, started = commands(app), time.perf_counter()
        for _ in range(looks):
            tournaments.advance(made["id"])
        print(f"a look with every table in play: {(time.perf_counter() - started) / looks * 1000:.0f} ms, "
              f"{(commands(app) - before) / looks:.0f} Redis commands")
    finally:
        server.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games-per-pairing", type=int, default=2)
    parser.add_argument("--bots", default="random,casual,greedy", help="the kinds the entrants are drawn from")
    parser.add_argument("--entrants", type=int, help="measure a tournament of this many people instead")
    args = parser.parse_args(argv)
    if args.entrants:
        people(args.entrants)
        return 0
    kinds, per = args.bots.split(","), args.games_per_pairing
    server = RedisServer()
    redis_url = server.start()
    queue = f"bench-tournaments-{uuid.uuid4().hex[:6]}"
    app = create_app({"REDIS_URL": redis_url, "BOT_QUEUE": queue, "RATE_LIMIT_PER_ADDRESS": 0,
                      "RATE_LIMIT_PER_TOKEN": 0, "MATCH_GAMES_PER_CLIENT": 0})
    worker = start_worker(redis_url, queue, stall_seconds=1)
    tournaments = app.services.tournaments
    try:
        for label, request, games in (
                ("Swiss, 64 bots, 7 rounds", {"format": "swiss", "rounds": 7,
                                              "entrants": [kinds[i % len(kinds)] for i in range(64)]}, 32 * 7 * per),
                ("double round robin, 16 bots", {"format": "round_robin", "cycles": 2,
                                                 "entrants": [kinds[i % len(kinds)] for i in range(16)]},
                 16 * 15 * per)):
            run(app, label, lambda request=request: tournaments.create(
                {**request, "games_per_pairing": per, "turn_seconds": 60, "players_per_table": 2,
                 "rules": {"preset": "classic"}}, "public"),
                lambda made: tournaments.view(made["id"])["status"] == "finished", games)
        run(app, "a plain match", lambda: app.services.matches.create_match(
            {"bots": kinds[:2], "games": 16 * 15 * per, "rules": {"preset": "classic"}}, "bench", 0),
            lambda made: app.services.matches.status(made["id"])["status"] == "finished", 16 * 15 * per)
    finally:
        stop(worker)
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
