"""API load: many concurrent games played over HTTP against gunicorn + a real Redis.

Prints, in one interleaved run, actions/s and action latency (p50, p99) with rate limits on and
off, and the same figures for the ceiling: a bare Flask app outside create_app (no middleware,
no schemas, no engine), served by the same gunicorn settings, that makes an action's Redis calls
(read the game, write it back with the one compare-and-set) on a real game document. Then the
actions' share of the ceiling against the goal (at least 0.8), and the CPU each server spent a
request (steadier than a rate on a shared machine, and free of what the clients on the same cores
took). First, the Redis round trips of an action and of a seat view (MONITOR).

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
sys.path.insert(0, str(ROOT / "bench"))

from processes import children, cpu_seconds  # noqa: E402


GOAL = 0.8  # actions a second, as a share of the ceiling's


def ceiling_app():
    """The ceiling, outside create_app: an action's Redis calls and nothing else (gunicorn loads this)."""
    import os

    from flask import Flask

    from app.games.store import GameStore
    from app.ops.config import Config
    from app.ops.connection import connect
    app = Flask(__name__)
    store = GameStore(connect(os.environ["REDIS_URL"], max_connections=Config.REDIS_MAX_CONNECTIONS),
                      {"open": 0, "active": 0, "finished": 0})

    @app.post("/ceiling/<game_id>")
    def ceiling(game_id):
        version, doc = store.load(game_id)
        return {"version": store.compare_and_set(game_id, version, doc, [], doc["status"])}

    return app


HOST = "127.0.0.1"  # where the servers listen (--host); the client processes, forked, read it


class Client:
    def __init__(self, port):
        self.conn = http.client.HTTPConnection(HOST, port, timeout=30)

    def call(self, method, path, body=None, headers=None):
        payload = json.dumps(body) if body is not None else None
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        self.conn.request(method, path, body=payload, headers=hdrs)
        response = self.conn.getresponse()
        data = response.read()
        return response.status, (json.loads(data) if data else None)


def play_games(port, app_port, deadline, latencies, rng, counts):
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


def hammer_ceiling(port, app_port, deadline, latencies, rng, counts):
    client = Client(port)
    _, created = Client(app_port).call("POST", "/games", {"players": 2, "seats": [{"type": "human"}] * 2})
    game_id = created["game"]["id"]
    while time.time() < deadline:
        started = time.perf_counter()
        status, _ = client.call("POST", f"/ceiling/{game_id}", {})
        latencies.append(time.perf_counter() - started)
        assert status == 200
        counts[0] += 1


def run_process(target_name, port, app_port, threads, seconds, seed, queue):
    target = globals()[target_name]
    deadline = time.time() + seconds
    latencies, counts, workers = [], [0], []
    for i in range(threads):
        worker = threading.Thread(
            target=target, args=(port, app_port, deadline, latencies, random.Random(seed * 100 + i), counts)
        )
        worker.start()
        workers.append(worker)
    for worker in workers:
        worker.join()
    queue.put((counts[0], latencies))


def measure(target_name, port, clients, seconds, server, app_port=None):
    """(requests counted, seconds, their latencies, the CPU seconds `server` and its workers spent)."""
    processes = min(4, clients)
    queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=run_process,
                                     args=(target_name, port, app_port or port, clients // processes, seconds, p,
                                           queue))
             for p in range(processes)]
    serving = [server.pid, *children(server.pid)]
    started, cpu = time.perf_counter(), cpu_seconds(*serving)
    for proc in procs:
        proc.start()
    results = [queue.get() for _ in procs]
    for proc in procs:
        proc.join()
    return (sum(r[0] for r in results), time.perf_counter() - started, [x for r in results for x in r[1]],
            cpu_seconds(*serving) - cpu)


def pooled(slices):
    """req/s, p50 and p99 ms, and the server's CPU µs a counted request, over every slice of one endpoint."""
    latencies = sorted(x for _, _, lat, _ in slices for x in lat)
    def pick(q):
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
    counted = sum(s[0] for s in slices)
    return counted / sum(s[1] for s in slices), pick(0.50), pick(0.99), sum(s[3] for s in slices) / counted * 1e6


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


LIMITS = {"on": "1000000000", "off": "0"}  # on: counted on every request, never refusing here


def start_server(redis_url: str, limits: str, args, offset: int,
                 app="app:create_app()") -> tuple[subprocess.Popen, int]:
    """gunicorn under the production conf (app/gunicorn_conf.py), its shape from the options, on
    `--port` + `offset` (a free port without `--port`)."""
    port = args.port + offset if args.port else free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "python:app.gunicorn_conf", "--bind", f"{args.host}:{port}",
         "--workers", str(args.workers), "--worker-class", args.worker_class, "--threads", str(args.threads),
         "--worker-connections", "1000", "--access-logfile", "/dev/null", "--chdir", str(ROOT), app],
        env={"REDIS_URL": redis_url, "PATH": "/usr/bin:/bin", "RONDA_RATE_LIMIT_PER_ADDRESS": LIMITS[limits],
             "RONDA_RATE_LIMIT_PER_TOKEN": LIMITS[limits], "RONDA_RATE_LIMIT_PER_BOT_TOKEN": LIMITS[limits]},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection((args.host, port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    time.sleep(1)  # its workers booting
    return server, port


def round_trips(redis_url: str, port: int, actions: int = 60) -> dict:
    """Redis round trips per action and per seat view, from MONITOR: a script's own commands are
    not round trips (MONITOR marks them lua), nor is the limiter's background sync (counted apart)."""
    import redis
    seen, stop = [], threading.Event()

    def monitor():
        with redis.Redis.from_url(redis_url).monitor() as feed:
            for command in feed.listen():
                seen.append(command)
                if stop.is_set():
                    return

    threading.Thread(target=monitor, daemon=True).start()
    time.sleep(0.5)
    client = Client(port)
    _, created = client.call("POST", "/games", {"players": 2, "seats": [{"type": "human"}] * 2})
    tokens = {t["seat"]: t["token"] for t in created["tokens"]}
    game_id, counted = created["game"]["id"], {"action": [], "view": []}
    for _ in range(actions):
        _, game = client.call("GET", f"/games/{game_id}")
        if game["status"] == "finished":
            break
        auth = {"Authorization": f"Bearer {tokens[game['awaiting'][0]]}"}
        mark = len(seen)
        _, view = client.call("GET", f"/games/{game_id}/view", headers=auth)
        time.sleep(0.05)
        counted["view"].append(seen[mark:])
        mark = len(seen)
        client.call("POST", f"/games/{game_id}/actions", view["legal_actions"][0],
                    {**auth, "If-Match": f'"{view["version"]}"'})
        time.sleep(0.05)
        counted["action"].append(seen[mark:])
    stop.set()
    redis.Redis.from_url(redis_url).ping()  # wakes the monitor so it sees the stop

    def is_sync(command):
        return " ratelimit:" in f" {command['command']}"

    result = {}
    for kind, batches in counted.items():
        requests = [[c for c in batch if c.get("client_type") != "lua" and not is_sync(c)] for batch in batches]
        result[kind] = sum(map(len, requests)) / max(len(requests), 1)
        result[f"{kind}_sync"] = sum(is_sync(c) for batch in batches for c in batch) / max(len(batches), 1)
    return result


def main():
    global HOST
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=2, help="per slice")
    parser.add_argument("--rounds", type=int, default=8, help="slices of each endpoint, taking turns")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--worker-class", default="gevent", help="gevent (production) or gthread")
    parser.add_argument("--threads", type=int, default=16, help="threads per gthread worker")
    parser.add_argument("--profile", action="store_true", help="py-spy an API worker during the actions, limits on")
    parser.add_argument("--host", default="127.0.0.1", help="the address the servers listen on")
    parser.add_argument("--port", type=int, default=0,
                        help="the servers' first port: limits on there, off one above, the ceiling two above "
                             "(default: free ports)")
    args = parser.parse_args()
    HOST = args.host
    from redis_server import RedisServer
    redis_server = RedisServer()
    redis_url = redis_server.start()
    limited, on_port = start_server(redis_url, "on", args, 0)
    free, off_port = start_server(redis_url, "off", args, 1)
    bare, ceiling_port = start_server(redis_url, "off", args, 2, "bench.api_load:ceiling_app()")
    try:
        trips = round_trips(redis_url, on_port)
        print(f"Redis round trips with limits on (MONITOR, scripts' own commands left out): "
              f"{trips['action']:.2f} an action, {trips['view']:.2f} a seat view; the limiter's background "
              f"sync: {trips['action_sync']:.2f} commands in an action's time, {trips['view_sync']:.2f} in a view's")
        shape = f"x {args.threads} threads" if args.worker_class == "gthread" else ""
        print(f"gunicorn {args.workers} {args.worker_class} workers {shape}, {args.clients} clients, "
              f"{args.rounds} x {args.seconds:g} s per endpoint, Redis at {redis_url}")
        # The shared machine's speed drifts within seconds: short slices of the endpoints take
        # turns, so all see the same conditions, and the figures pool every slice.
        rounds = [(measure("hammer_ceiling", ceiling_port, args.clients, args.seconds, bare, app_port=off_port),
                   measure("play_games", on_port, args.clients, args.seconds, limited),
                   measure("play_games", off_port, args.clients, args.seconds, free)) for _ in range(args.rounds)]
        ceiling, on, off = (pooled([r[i] for r in rounds]) for i in range(3))
        if args.profile:  # where an action's time goes, beside the ceiling's calls
            from streams import profiled, say_where_the_time_went, worker_pid
            spy = profiled(worker_pid(limited.pid), max(2, int(args.seconds)))
            measure("play_games", on_port, args.clients, args.seconds, limited)
            say_where_the_time_went(spy, "actions with limits on")
        print(f"{'endpoint (' + str(args.rounds) + ' slices pooled)':<40}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}"
              f"{'server CPU us':>15}")
        for label, (rate, p50, p99, cpu) in (("ceiling (bare Flask: 1 read + 1 CAS)", ceiling),
                                             ("actions, limits on", on), ("actions, limits off", off)):
            print(f"{label:<40}{rate:>10,.0f}{p50:>10.1f}{p99:>10.1f}{cpu:>15.0f}")
        share = on[0] / ceiling[0]
        print(f"limits on / off: {on[0] / off[0]:.0%}; limits on / ceiling: {share:.2f} "
              + (f"(goal >= {GOAL}: met)" if share >= GOAL else f"(goal >= {GOAL}: MISSED by {GOAL - share:.2f})")
              + f"; limits off / ceiling: {off[0] / ceiling[0]:.2f}")
        print(f"the servers' CPU a request (an action's share of its game's views and creation included): "
              f"the ceiling's / an action's {ceiling[3] / on[3]:.2f} with limits on, {ceiling[3] / off[3]:.2f} off")
    finally:
        for server in (limited, free, bare):
            server.terminate()
            server.wait()
        redis_server.stop()


if __name__ == "__main__":
    main()
