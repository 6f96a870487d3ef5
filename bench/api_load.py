"""API load: many concurrent games played over HTTP against gunicorn + a real Redis.

Prints actions/s and action latency (p50, p99), and in the same run the same figures for a
trivial endpoint that does only one Redis read and one compare-and-set write of a real game
document: the ceiling any action endpoint could reach on this machine.

Run: .venv/bin/python bench/api_load.py [--clients 32] [--seconds 2] [--rounds 8]
Uses REDIS_URL when set, else starts redis-server (as the tests do).
"""

import argparse
import http.client
import json
import multiprocessing
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def bench_app():
    """The real app plus the ceiling endpoint; gunicorn loads this factory."""
    from flask import current_app
    from app import create_app
    app = create_app()

    @app.post("/bench/ceiling/<game_id>")
    def ceiling(game_id):
        store = current_app.extensions["ronda.store"]
        version, doc = store.load(game_id)
        store.compare_and_set(game_id, version, doc, [], doc["status"])
        return {"version": version + 1}

    return app


class Client:
    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def call(self, method, path, body=None, headers=None):
        payload = json.dumps(body) if body is not None else None
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        self.conn.request(method, path, body=payload, headers=hdrs)
        response = self.conn.getresponse()
        data = response.read()
        return response.status, (json.loads(data) if data else None)


def play_games(port, deadline, latencies, rng, counts):
    client = Client(port)
    while time.time() < deadline:
        status, created = client.call("POST", "/games", {"players": 2, "seats": [{"type": "human"}] * 2})
        tokens = {t["seat"]: t["token"] for t in created["tokens"]}
        game_id, views = created["game"]["id"], {}
        awaiting, version, finished = created["game"]["awaiting"], created["game"]["version"], False
        while not finished and time.time() < deadline:
            seat = awaiting[0]
            auth = {"Authorization": f"Bearer {tokens[seat]}"}
            view = views.get(seat)
            if view is None or view["phase"] != "playing":
                _, view = client.call("GET", f"/games/{game_id}/view", headers=auth)
                version = view["version"]
            action = (rng.choice(view["legal_actions"]) if view["phase"] != "playing"
                      else {"type": "play", "card": rng.choice(view["hand"])})
            started = time.perf_counter()
            status, answer = client.call("POST", f"/games/{game_id}/actions", action,
                                         {**auth, "If-Match": f'"{version}"'})
            latencies.append(time.perf_counter() - started)
            assert status == 200, answer
            counts[0] += 1
            game = answer["game"]
            version, awaiting, finished = game["version"], game["awaiting"], game["status"] == "finished"
            if any(e["type"] in ("deal", "declarations_resolved") for e in answer["events"]):
                views.clear()  # new hands or a new phase: the other seats re-read their views
            views[seat] = game


def hammer_ceiling(port, deadline, latencies, rng, counts):
    client = Client(port)
    _, created = client.call("POST", "/games", {"players": 2, "seats": [{"type": "human"}] * 2})
    game_id = created["game"]["id"]
    while time.time() < deadline:
        started = time.perf_counter()
        status, _ = client.call("POST", f"/bench/ceiling/{game_id}", {})
        latencies.append(time.perf_counter() - started)
        assert status == 200
        counts[0] += 1


def run_process(target_name, port, threads, seconds, seed, queue):
    target = globals()[target_name]
    deadline = time.time() + seconds
    latencies, counts, workers = [], [0], []
    for i in range(threads):
        worker = threading.Thread(target=target, args=(port, deadline, latencies, random.Random(seed * 100 + i), counts))
        worker.start()
        workers.append(worker)
    for worker in workers:
        worker.join()
    queue.put((counts[0], latencies))


def measure(target_name, port, clients, seconds):
    processes = min(4, clients)
    queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=run_process,
                                     args=(target_name, port, clients // processes, seconds, p, queue))
             for p in range(processes)]
    started = time.perf_counter()
    for proc in procs:
        proc.start()
    results = [queue.get() for _ in procs]
    for proc in procs:
        proc.join()
    return sum(r[0] for r in results), time.perf_counter() - started, [x for r in results for x in r[1]]


def pooled(slices):
    """req/s, p50 and p99 ms over every slice of one endpoint."""
    latencies = sorted(x for _, _, lat in slices for x in lat)
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
    return sum(s[0] for s in slices) / sum(s[1] for s in slices), pick(0.50), pick(0.99)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=2, help="per slice")
    parser.add_argument("--rounds", type=int, default=8, help="slices of each endpoint, taking turns")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--worker-class", default="gevent", help="gevent (production) or gthread")
    parser.add_argument("--threads", type=int, default=16, help="threads per gthread worker")
    args = parser.parse_args()
    from redis_server import RedisServer
    redis_server = RedisServer()
    redis_url = redis_server.start()
    port = free_port()
    gunicorn = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", str(args.workers),
         "--worker-class", args.worker_class, "--threads", str(args.threads), "--worker-connections", "1000",
         "--chdir", str(ROOT), "bench.api_load:bench_app()"],
        # Limits stay on (their Redis round trip is part of every request) but never trip here.
        env={"REDIS_URL": redis_url, "PATH": "/usr/bin:/bin", "RONDA_RATE_LIMIT_PER_ADDRESS": "1000000000",
             "RONDA_RATE_LIMIT_PER_TOKEN": "1000000000"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                Client(port).call("GET", "/health/ready")
                break
            except OSError:
                time.sleep(0.05)
        shape = f"x {args.threads} threads" if args.worker_class == "gthread" else ""
        print(f"gunicorn {args.workers} {args.worker_class} workers {shape}, {args.clients} clients, "
              f"{args.rounds} x {args.seconds:g} s per endpoint, Redis at {redis_url}")
        # The shared machine's speed drifts within seconds: short slices of the two endpoints
        # take turns, so both see the same conditions, and the figures pool every slice.
        rounds = [(measure("hammer_ceiling", port, args.clients, args.seconds),
                   measure("play_games", port, args.clients, args.seconds)) for _ in range(args.rounds)]
        ceiling, actions = pooled([r[0] for r in rounds]), pooled([r[1] for r in rounds])
        share = lambda c, a: (a[0] / a[1]) / (c[0] / c[1])
        print(f"{'endpoint (' + str(args.rounds) + ' slices pooled)':<34}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}")
        print(f"{'ceiling (1 read + 1 CAS write)':<34}{ceiling[0]:>10,.0f}{ceiling[1]:>10.1f}{ceiling[2]:>10.1f}")
        print(f"{'POST /games/{id}/actions':<34}{actions[0]:>10,.0f}{actions[1]:>10.1f}{actions[2]:>10.1f}")
        print(f"actions/s as a share of the ceiling: {actions[0] / ceiling[0]:.0%} "
              f"(per pair of slices: {', '.join(f'{share(c, a):.0%}' for c, a in rounds)})")
    finally:
        gunicorn.terminate()
        gunicorn.wait()
        redis_server.stop()


if __name__ == "__main__":
    main()
