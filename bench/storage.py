"""Bytes Redis holds per game: open (just created), active (mid-game) and finished, each with
its event log, read with MEMORY USAGE. Prints the mean over a few games of each kind.

Run: .venv/bin/python bench/storage.py [--games 20]
Uses REDIS_URL when set, else starts redis-server (as the tests do).
"""

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args()
    from redis_server import RedisServer
    from app import create_app
    from app.ops.keys import events_key, state_key
    server = RedisServer()
    app = create_app({"REDIS_URL": server.start(), "BOT_DISPATCH": "inprocess"})
    service, seating, redis = app.services.games, app.services.seating, app.services.store.redis
    chooser = random.Random(1)
    sizes = {"open": [], "active": [], "finished": []}
    humans = {"players": 2, "seats": [{"type": "human"}, {"type": "human"}]}
    for _ in range(args.games):
        created, _ = seating.create_game({"players": 2, "seats": [{"type": "human"}, {"type": "open"}]})
        sizes["open"].append(created.doc["id"])
        for status, stop_after in (("active", 40), ("finished", None)):
            created, tokens = seating.create_game(humans)
            doc = created.doc
            moves = 0
            while stop_after is None or moves < stop_after:
                view, version = service.view(doc["id"])
                if view["status"] == "finished":
                    break
                seat = view["awaiting"][0]
                own, _ = service.view(doc["id"], tokens[seat])
                service.act(doc["id"], tokens[seat], version, chooser.choice(own["legal_actions"]))
                moves += 1
            sizes[status].append(doc["id"])
    print(f"bytes per game in Redis (MEMORY USAGE of state and events, mean of {args.games}):")
    for status, ids in sizes.items():
        total = [redis.memory_usage(state_key(i)) + (redis.memory_usage(events_key(i)) or 0) for i in ids]
        print(f"  {status:<9}{sum(total) / len(total):>10,.0f}")
    server.stop()


if __name__ == "__main__":
    main()
