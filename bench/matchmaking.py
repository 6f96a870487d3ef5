"""Quick play under load: one API process (gunicorn, one gevent worker, as the image runs it) and
one `ronda worker` (its sweep ends tickets past their wait or whose player is gone, and groups
those whose windows have widened), on a real Redis. Every answer's status is checked and errors
are counted apart; the load is an open loop (each ticket has a due time, and its time to match
runs from it, so a slow answer delays no later ticket's clock); the client says when it was the
limit (it sent late).

1. An unrelated request (GET /games?status=open) with no ticket waiting: p50/p99.
2. `--waiting` tickets wait in one pool (ratings 450 apart: no two meet); the same request again,
   with the sweep running over them: the sweep reads only what is due, so it should not move.
3. A deep pool: `--probes` tickets arrive one at a time, each at the rating of a waiting one; time
   from the probe's POST until the waiting player's long poll answers `matched`, p50/p99 (goal p99
   < 1 s).
4. A stream in another pool with the waiting tickets still there: `--players` tickets due at
   `--rate` a minute, ratings around 1500 (sd 200); time to match from each ticket's due time,
   p50/p99; the rating gap of pairs; and every game checked: it exists with both its players
   seated. Goal: 10,000 matched a minute with 20,000 waiting.

The waiting players keep no stream open: the bench sets RONDA_TICKET_PRESENCE_SECONDS to an hour so
that presence does not end their tickets (it is what 20,000 players with the app open look like).

Run: .venv/bin/python bench/matchmaking.py [--waiting 20000] [--probes 200] [--players 10000] [--rate 10000]
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
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from app.accounts.ladders import LadderStore  # noqa: E402
from app.ops.connection import connect  # noqa: E402
from bench.api_load import free_port  # noqa: E402

LATE_SEND_MS = 50  # a ticket sent this long after its due time: the client, not the server, was the limit


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def start(redis_url: str, queue: str) -> tuple[list[subprocess.Popen], str]:
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "RONDA_BOT_QUEUE": queue, "RONDA_RATE_LIMIT_PER_ADDRESS": "0",
           "RONDA_RATE_LIMIT_PER_TOKEN": "0", "RONDA_SECRET_KEY": "bench", "RONDA_TICKET_PRESENCE_SECONDS": "3600"}
    api = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:app.gunicorn_conf", "--bind",
                            f"127.0.0.1:{port}", "--workers", "1", "--chdir", str(ROOT), "app:create_app()"],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
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


class Errors(Counter):
    def checked(self, method: str, url: str, expected: int, what: str, **options) -> dict | None:
        """The answer's body when its status is the one expected; else None, the error counted
        (a connection that failed too)."""
        try:
            answer = session().request(method, url, **options)
        except requests.RequestException as error:
            self[f"{what} {type(error).__name__}"] += 1
            return None
        if answer.status_code != expected:
            self[f"{what} {answer.status_code}"] += 1
            return None
        return answer.json()


def players(base: str, count: int, ladder: LadderStore, pool: str, ratings: list[float],
            errors: Errors) -> list[tuple[str, dict]]:
    """`count` players (id, auth headers), each given their rating in `pool`."""
    def one(index):
        created = errors.checked("POST", f"{base}/players", 201, "createPlayer", json={"name": f"p{index}"})
        if created is None:
            return None
        ladder.put(pool, f"player:{created['player']['id']}", ratings[index])
        return created["player"]["id"], {"Authorization": f"Bearer {created['token']}"}
    with ThreadPoolExecutor(32) as threads:
        return [p for p in threads.map(one, range(count)) if p is not None]


def unrelated_request(base: str, errors: Errors, count: int = 400) -> tuple[float, float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        errors.checked("GET", f"{base}/games?status=open&page_size=10", 200, "listGames")
        times.append((time.perf_counter() - started) * 1000)
    return percentile(times, 0.5), percentile(times, 0.99)


def fill(base, ladder, waiting_count, errors) -> tuple[list, list, list[float]]:
    ratings = [1500 + 450 * i for i in range(waiting_count)]
    waiting = players(base, waiting_count, ladder, "traditional-2", ratings, errors)

    def queue(entry):
        return errors.checked("POST", f"{base}/matchmaking/tickets", 202, "createTicket", headers=entry[1], json={
            "rules": {"preset": "traditional"}, "players": 2, "max_wait_seconds": 600})
    with ThreadPoolExecutor(32) as threads:
        tickets = list(threads.map(queue, waiting))
    met = sum(1 for t in tickets if t and t["status"] != "waiting")
    if met:
        errors["deep pool tickets that met each other"] += met
    return waiting, tickets, ratings


def deep_pool(base, ladder, waiting, tickets, ratings, probes, errors):
    chosen = random.Random(1).sample([i for i, t in enumerate(tickets) if t], probes)
    probe_players = players(base, probes, ladder, "traditional-2", [ratings[i] for i in chosen], errors)
    waits = []
    for (_, headers), index in zip(probe_players, chosen, strict=True):
        answer = {}
        poll = threading.Thread(target=lambda i=index, answer=answer: answer.update(errors.checked(
            "GET", f"{base}/matchmaking/tickets/{tickets[i]['id']}", 200, "getTicket", params={"wait_seconds": 10},
            headers=waiting[i][1]) or {}))
        poll.start()
        time.sleep(0.05)  # the long poll is waiting
        started = time.perf_counter()
        errors.checked("POST", f"{base}/matchmaking/tickets", 202, "createTicket", headers=headers, json={
            "rules": {"preset": "traditional"}, "players": 2, "max_wait_seconds": 600})
        poll.join()
        waits.append((time.perf_counter() - started) * 1000)
        if answer.get("status") != "matched":
            errors["deep pool probes not matched"] += 1
    print(f"deep pool: {len(tickets)} tickets waiting, {probes} compatible arrivals: time to match "
          f"p50 {percentile(waits, 0.5):.1f} ms, p99 {percentile(waits, 0.99):.1f} ms (goal p99 < 1,000 ms)")


def stream(base, ladder, count, per_minute, waiting_count, errors) -> int:
    rng = random.Random(2)
    joining = players(base, count, ladder, "classic-2", [rng.gauss(1500, 200) for _ in range(count)], errors)
    results, late_ms, answered = [], [], []
    started_at = time.perf_counter() + 1.0

    def join(index):
        due = started_at + index * 60 / per_minute
        time.sleep(max(0.0, due - time.perf_counter()))
        late_ms.append((time.perf_counter() - due) * 1000)
        player_id, headers = joining[index]
        ticket = errors.checked("POST", f"{base}/matchmaking/tickets", 202, "createTicket", headers=headers, json={
            "rules": {"preset": "classic"}, "players": 2, "max_wait_seconds": 60})
        while ticket and ticket["status"] == "waiting":
            ticket = errors.checked("GET", f"{base}/matchmaking/tickets/{ticket['id']}", 200, "getTicket",
                                    params={"wait_seconds": 25}, headers=headers)
        if ticket:
            results.append((player_id, ticket, (time.perf_counter() - due) * 1000))
            if ticket["status"] == "matched":
                answered.append(time.perf_counter())
    with ThreadPoolExecutor(512) as threads:
        list(threads.map(join, range(len(joining))))
    elapsed = max(answered, default=started_at + 1) - started_at  # to the last match (the unmatched wait a minute)
    matched = [(p, t, ms) for p, t, ms in results if t["status"] == "matched"]
    by_game: dict[str, list] = {}
    for player_id, ticket, _ in matched:
        by_game.setdefault(ticket["game_id"], []).append((player_id, ticket["seat"], ticket["rating"]))

    def check_game(item):
        game_id, entries = item
        game = errors.checked("GET", f"{base}/games/{game_id}", 200, "getGame")
        seated = game and sorted((s["player"], s["seat"]) for s in game["seats"])
        return seated == sorted((p, seat) for p, seat, _ in entries) and len(entries) == 2
    with ThreadPoolExecutor(32) as threads:
        bad_games = sum(1 for ok in threads.map(check_game, by_game.items()) if not ok)
    gaps = [abs(e[0][2] - e[1][2]) for e in by_game.values() if len(e) == 2]
    times = [ms for _, _, ms in matched]
    client_limited = percentile(late_ms, 0.99) > LATE_SEND_MS
    print(f"stream: {len(joining)} tickets due at {per_minute:,} a minute over {elapsed:.1f} s, with {waiting_count:,} "
          f"waiting elsewhere: matched {len(matched)} ({len(matched) / elapsed * 60:,.0f} a minute), "
          f"unmatched {len(results) - len(matched)}; time to match from due p50 {percentile(times, 0.5):.0f} ms, "
          f"p99 {percentile(times, 0.99):.0f} ms; rating gap p50 {percentile(gaps, 0.5):.0f}, "
          f"p99 {percentile(gaps, 0.99):.0f}; games without both players seated {bad_games} (must be 0); "
          f"client sent late p99 {percentile(late_ms, 0.99):.0f} ms"
          + (" — THE CLIENT WAS THE LIMIT: these figures understate the server" if client_limited else ""))
    return bad_games


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--waiting", type=int, default=20000)
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--players", type=int, default=10000)
    parser.add_argument("--rate", type=int, default=10000, help="tickets a minute")
    args = parser.parse_args(argv)
    from redis_server import RedisServer
    server = None if os.environ.get("REDIS_URL") else RedisServer()
    redis_url = os.environ.get("REDIS_URL") or server.start()
    ladder = LadderStore(connect(redis_url), rated_ttl=3600)
    processes, base = start(redis_url, f"mm-bench-{uuid.uuid4().hex[:6]}")
    errors = Errors()
    try:
        empty = unrelated_request(base, errors)
        waiting, tickets, ratings = fill(base, ladder, args.waiting, errors)
        time.sleep(3)  # sweeps run over them
        loaded = unrelated_request(base, errors)
        print(f"unrelated request (listGames): no ticket waiting p50 {empty[0]:.1f} ms, p99 {empty[1]:.1f} ms; "
              f"{len(tickets):,} waiting p50 {loaded[0]:.1f} ms, p99 {loaded[1]:.1f} ms")
        deep_pool(base, ladder, waiting, tickets, ratings, args.probes, errors)
        bad = stream(base, ladder, args.players, args.rate, len(tickets), errors)
        print(f"errors: {dict(errors) or 'none'}")
        return 1 if bad or errors else 0
    finally:
        for process in processes:
            process.terminate()
            process.wait()
        if server:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
