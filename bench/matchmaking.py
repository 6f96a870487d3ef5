"""Quick play under load: one API process (gunicorn, one gevent worker, as the image runs it) and
one `ronda worker` (its sweep groups widening tickets and expires them), on a real Redis.

Two parts, each printing its figures:
1. A deep pool: `--waiting` tickets wait in one pool (ratings 450 apart, so no two ever meet),
   then `--probes` tickets arrive one at a time, each at the rating of a waiting one. Time to
   match once a compatible ticket exists: from the probe's POST until the waiting player's
   long poll (getTicket, wait_seconds) answers `matched`, p50/p99.
2. A stream of players: `--players` tickets arriving at `--rate` a minute, ratings drawn around
   1500 (sd 200, written to the pool's ladder first). Time to match from each POST, p50/p99; the
   rating gap of matched pairs, p50/p99; tickets unmatched; and double pairings (a seat of a game
   named by two tickets, or a game without both seats): must be 0.

Run: .venv/bin/python bench/matchmaking.py [--waiting 1000] [--probes 200] [--players 10000] [--rate 10000]
Uses REDIS_URL when set, else starts redis-server (as the tests do).
"""

import argparse
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from app.accounts.ladders import LadderStore  # noqa: E402
from app.ops.connection import connect  # noqa: E402
from bench.api_load import free_port  # noqa: E402


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def start(redis_url: str, queue: str) -> tuple[list[subprocess.Popen], str]:
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "RONDA_BOT_QUEUE": queue, "RONDA_RATE_LIMIT_PER_ADDRESS": "0",
           "RONDA_RATE_LIMIT_PER_TOKEN": "0", "RONDA_SECRET_KEY": "bench"}
    api = subprocess.Popen([sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "1",
                            "--worker-class", "gevent", "--worker-connections", "4000", "--chdir", str(ROOT),
                            "app:create_app()"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            requests.get(f"{base}/health/ready", timeout=1)
            break
        except requests.RequestException:  # not listening yet, or still loading
            time.sleep(0.05)
    return [api, worker], base


_local = threading.local()


def session() -> requests.Session:
    """This thread's own session: a requests.Session must not be shared between threads."""
    if not hasattr(_local, "session"):
        _local.session = requests.Session()
    return _local.session


def players(base: str, count: int, ladder: LadderStore, pool: str, ratings: list[float]) -> list[tuple[str, dict]]:
    """`count` players, each given their rating in `pool` (as their rated games would have)."""
    def one(index):
        created = session().post(f"{base}/players", json={"name": f"p{index}"}).json()
        player_id = created["player"]["id"]
        ladder.rate(pool, f"bench-seed-{uuid.uuid4().hex}", time.time(),
                    [(f"player:{player_id}", ratings[index] - 1500, True)])
        return created["token"]
    with ThreadPoolExecutor(16) as pool_:
        tokens = list(pool_.map(one, range(count)))
    return [(token, {"Authorization": f"Bearer {token}"}) for token in tokens]


def deep_pool(base, ladder, waiting_count, probes):
    preset, pool = "traditional", "traditional-2"
    ratings = [1500 + 450 * i for i in range(waiting_count)]
    waiting = players(base, waiting_count, ladder, pool, ratings)
    tickets = []
    for _, headers in waiting:
        tickets.append(requests.post(f"{base}/matchmaking/tickets", headers=headers, json={
            "rules": preset, "players": 2, "max_wait_seconds": 600}).json())
    assert all(t["status"] == "waiting" for t in tickets), "the deep pool met itself"
    chosen = random.Random(1).sample(range(waiting_count), probes)
    probe_players = players(base, probes, ladder, pool, [ratings[i] for i in chosen])
    waits = []
    for (_, headers), index in zip(probe_players, chosen, strict=True):
        answer = {}
        poll = threading.Thread(target=lambda i=index, answer=answer: answer.update(requests.get(
            f"{base}/matchmaking/tickets/{tickets[i]['id']}", params={"wait_seconds": 10},
            headers=waiting[i][1]).json()))
        poll.start()
        time.sleep(0.05)  # the long poll is waiting
        started = time.perf_counter()
        requests.post(f"{base}/matchmaking/tickets", headers=headers,
                      json={"rules": preset, "players": 2, "max_wait_seconds": 600})
        poll.join()
        waits.append((time.perf_counter() - started) * 1000)
        assert answer["status"] == "matched", answer
    print(f"deep pool: {waiting_count} tickets waiting in {pool}, {probes} compatible arrivals: time to match "
          f"p50 {percentile(waits, 0.5):.1f} ms, p99 {percentile(waits, 0.99):.1f} ms (goal p99 < 1,000 ms)")


def stream(base, ladder, count, per_minute):
    preset, pool = "classic", "classic-2"
    rng = random.Random(2)
    ratings = [rng.gauss(1500, 200) for _ in range(count)]
    joining = players(base, count, ladder, pool, ratings)
    results, answered = [], []
    started_at = time.perf_counter()

    def join(index):
        due = started_at + index * 60 / per_minute
        time.sleep(max(0.0, due - time.perf_counter()))
        begun = time.perf_counter()
        headers = joining[index][1]
        ticket = session().post(f"{base}/matchmaking/tickets", headers=headers,
                              json={"rules": preset, "players": 2, "max_wait_seconds": 60}).json()
        answered.append(time.perf_counter())
        while ticket["status"] == "waiting":
            ticket = session().get(f"{base}/matchmaking/tickets/{ticket['id']}", params={"wait_seconds": 25},
                                 headers=headers).json()
        results.append((ticket, (time.perf_counter() - begun) * 1000))
    with ThreadPoolExecutor(256) as pool_:
        list(pool_.map(join, range(count)))
    elapsed = max(answered) - started_at  # the last ticket taken (those left unmatched wait out their minute)
    matched = [(t, ms) for t, ms in results if t["status"] == "matched"]
    seats, by_game = {}, {}
    for ticket, _ in matched:
        seats[(ticket["game_id"], ticket["seat"])] = seats.get((ticket["game_id"], ticket["seat"]), 0) + 1
        by_game.setdefault(ticket["game_id"], []).append(ticket["rating"])
    doubles = sum(1 for n in seats.values() if n > 1) + sum(1 for r in by_game.values() if len(r) != 2)
    gaps = [abs(r[0] - r[1]) for r in by_game.values() if len(r) == 2]
    times = [ms for _, ms in matched]
    print(
        f"stream: {count} tickets taken in {elapsed:.1f} s "
        f"({count / elapsed * 60:,.0f} a minute, asked {per_minute:,}) "
        f"through 1 API process and 1 worker: matched {len(matched)}, unmatched {count - len(matched)}; "
        f"time to match p50 {percentile(times, 0.5):.0f} ms, p99 {percentile(times, 0.99):.0f} ms; "
        f"rating gap p50 {percentile(gaps, 0.5):.0f}, p99 {percentile(gaps, 0.99):.0f}; "
        f"double pairings {doubles} (must be 0)"
    )
    return doubles


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--waiting", type=int, default=1000)
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--players", type=int, default=10000)
    parser.add_argument("--rate", type=int, default=10000, help="tickets a minute")
    args = parser.parse_args(argv)
    from redis_server import RedisServer
    server = None if os.environ.get("REDIS_URL") else RedisServer()
    redis_url = os.environ.get("REDIS_URL") or server.start()
    ladder = LadderStore(connect(redis_url), rated_ttl=3600)
    processes, base = start(redis_url, f"mm-bench-{uuid.uuid4().hex[:6]}")
    try:
        deep_pool(base, ladder, args.waiting, args.probes)
        return 1 if stream(base, ladder, args.players, args.rate) else 0
    finally:
        for process in processes:
            process.terminate()
            process.wait()
        if server:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
