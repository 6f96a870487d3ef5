"""Bot replies under load: one API process (gunicorn, one gevent worker) and one `ronda worker`
on a real Redis, with `--games` human-against-bot games open (each waiting for its human).

Prints, per bot level: reply latency p50/p99, from the human's action answered to the bot's move
written (a long poll on the view answers it), over `--samples` actions spread over the open
games; and the Redis commands one RQ bot move costs on the queue's Redis (MONITOR, scripts' own
commands left out), split into RQ's and the game's.

Run: .venv/bin/python bench/bot_replies.py [--games 1000] [--samples 200] [--levels greedy,expert]
Uses REDIS_URL when set, else starts redis-server (as the tests do).
"""

import argparse
import os
import random
import statistics
import sys
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench.matchmaking import session, start  # noqa: E402


def open_games(base, count, level):
    """`count` games against `level`, each waiting for its human (seat 0 plays first)."""
    def one(_):
        created = session().post(f"{base}/games", json={
            "players": 2, "first_dealer": 1, "rules": {"preset": "classic"},
            "seats": [{"type": "human"}, {"type": "bot", "bot": level}]}).json()
        return created["game"]["id"], created["tokens"][0]["token"]
    with ThreadPoolExecutor(16) as pool:
        return list(pool.map(one, range(count)))


def reply_ms(base, game_id, token, rng) -> float | None:
    """One human action, and how long until the bot's answer is written (None: not the human's turn)."""
    auth = {"Authorization": f"Bearer {token}"}
    view = session().get(f"{base}/games/{game_id}/view", headers=auth).json()
    if view["status"] != "active" or 0 not in view["awaiting"]:
        return None
    answer = session().post(f"{base}/games/{game_id}/actions", json=rng.choice(view["legal_actions"]),
                            headers={**auth, "If-Match": f'"{view["version"]}"'})
    answered = time.perf_counter()
    if answer.status_code != 200 or 1 not in answer.json()["game"]["awaiting"]:
        return None
    version = answer.json()["game"]["version"]
    session().get(f"{base}/games/{game_id}/view", headers=auth, params={"after_version": version, "wait_seconds": 10})
    return (time.perf_counter() - answered) * 1000


def commands_per_move(redis_url, base, games, rng, moves=20) -> tuple[float, Counter]:
    seen, stop = [], threading.Event()

    def monitor():
        with redis.Redis.from_url(redis_url).monitor() as feed:
            for command in feed.listen():
                if stop.is_set():
                    return
                seen.append(command)
    threading.Thread(target=monitor, daemon=True).start()
    time.sleep(0.5)
    done = 0
    for game_id, token in games:
        if done == moves:
            break
        done += reply_ms(base, game_id, token, rng) is not None
    time.sleep(0.5)
    stop.set()
    redis.Redis.from_url(redis_url).ping()
    worker = [c for c in seen if c.get("client_type") != "lua" and c["client_port"] in _worker_ports(seen)]
    kinds = Counter("rq" if " rq:" in f" {c['command']}" else "game" for c in worker)
    verbs = Counter(" ".join(c["command"].split()[:2])[:60] for c in worker)
    return len(worker) / max(done, 1), kinds, verbs


def _worker_ports(seen) -> set:
    """The connections that dequeued a job (BLMOVE/BLPOP/LMOVE on an rq queue): the worker's."""
    return {c["client_port"] for c in seen if c["command"].split()[0] in ("BLPOP", "BLMOVE", "LMOVE", "LPOP")
            and "rq:queue:" in c["command"]} | {c["client_port"] for c in seen if "rq:job:" in c["command"]
                                               and c["command"].startswith("HSET")}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--levels", default="greedy,expert")
    args = parser.parse_args(argv)
    from redis_server import RedisServer
    server = None if os.environ.get("REDIS_URL") else RedisServer()
    redis_url = os.environ.get("REDIS_URL") or server.start()
    processes, base = start(redis_url, f"replies-{uuid.uuid4().hex[:6]}")
    rng = random.Random(3)
    try:
        levels = args.levels.split(",")
        games = {level: open_games(base, args.games // len(levels), level) for level in levels}
        print(f"{sum(map(len, games.values()))} human-against-bot games open; 1 API process, 1 worker")
        for level, open_ in games.items():
            latencies = [ms for game_id, token in rng.sample(open_, min(args.samples, len(open_)))
                         if (ms := reply_ms(base, game_id, token, rng)) is not None]
            cuts = statistics.quantiles(latencies, n=100)
            print(f"{level:>8}: reply p50 {cuts[49]:.1f} ms, p99 {cuts[98]:.1f} ms over {len(latencies)} moves")
        per_move, kinds, verbs = commands_per_move(redis_url, base, games[levels[0]], rng)
        print(f"Redis commands an RQ bot move costs (the worker's connections): {per_move:.1f} "
              f"({', '.join(f'{k} {v}' for k, v in kinds.items())} over the sampled moves); the most sent:")
        for verb, count in verbs.most_common(12):
            print(f"  {count:>5}  {verb}")
    finally:
        for process in processes:
            process.terminate()
            process.wait()
        if server:
            server.stop()


if __name__ == "__main__":
    main()
