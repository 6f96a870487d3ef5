"""Scale: the production shape's processes on plain Redis and on a Redis Cluster, measured per action.

Two workloads, each on real processes started here (gunicorn from app.gunicorn_conf with
gevent, `ronda worker`s, redis-server; the cluster is 3 masters without replicas, the queues on a
plain Redis):

- bot games: N games with two bots created at once, timed until every one is over (the
  cluster against plain Redis with the same workers; issue 26 asks for at most 1.5x);
- shapes: 1, 2 and 3 API processes with 1 and 2 workers, clients playing whole games as a human
  against greedy: actions/s, action p50/p99, bot reply latency, API CPU ms per action, and Redis
  calls and bytes per action (every game action, the human's and the bot's).

Every figure is per action or per move so shapes compare on a 2-core box, where adding
processes cannot add cores. Redis figures come from INFO commandstats and net bytes of every
node, reset before each measurement.

Run: .venv/bin/python bench/scale.py [--bot-games 300] [--seconds 20] [--stores plain,cluster]
     [--shapes 1x1,2x1,3x1,1x2,2x2,3x2]   (API processes x workers)
"""

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from faults import stop_all  # noqa: E402
from processes import children, cpu_seconds  # noqa: E402
from redis_server import RedisClusterServers, RedisServer  # noqa: E402

BOT_SEATS = [{"type": "bot", "bot": "greedy"}, {"type": "bot", "bot": "greedy"}]
HUMAN_SEATS = [{"type": "human", "name": "Bench"}, {"type": "bot", "bot": "greedy"}]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Deployment:
    """Redis (plain, or a cluster for the games beside a plain Redis for the queues), gunicorn
    with `api_processes` workers, and `workers` `ronda worker`s."""

    def __init__(self, cluster: bool, api_processes: int = 2, workers: int = 2):
        self.cluster = RedisClusterServers(masters=3) if cluster else None
        self.queue_redis = RedisServer()
        self.api_processes, self.worker_count = api_processes, workers
        self.port = free_port()

    def __enter__(self):
        redis_url = self.queue_redis.start()
        self.env = {**os.environ, "REDIS_URL": redis_url, "RONDA_BOT_QUEUE": f"bots-scale-{uuid.uuid4().hex[:6]}",
                    "RONDA_SECRET_KEY": uuid.uuid4().hex, "RONDA_RATE_LIMIT_PER_ADDRESS": "100000000",
                    "RONDA_RATE_LIMIT_PER_TOKEN": "100000000", "RONDA_BOT_REGISTRATIONS_PER_HOUR": "0"}
        self.env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        self.nodes = [redis.Redis.from_url(redis_url)]
        if self.cluster:
            self.cluster.start()
            self.env["REDIS_CLUSTER_URL"] = self.cluster.every_node_url
            self.nodes += [redis.Redis(port=port) for port in self.cluster.nodes]
        self.api = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "python:app.gunicorn_conf", "--workers",
             str(self.api_processes), "--bind", f"127.0.0.1:{self.port}", "--access-logfile", "/dev/null"],
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.workers = [subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], cwd=ROOT, env=self.env,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                        for _ in range(self.worker_count)]
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if Client(self.port).call("GET", "/health/ready")[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("the API did not start")

    def __exit__(self, *_):
        stop_all([self.api, *self.workers])
        self.queue_redis.stop()
        if self.cluster:
            self.cluster.stop()

    def reset_counters(self):
        for node in self.nodes:
            node.config_resetstat()
        self.cpu_at_reset = self.api_cpu_seconds(), self.worker_cpu_seconds()

    def redis_counters(self) -> dict:
        """Calls and bytes (in + out) since the reset, in all and on the queues' Redis alone (on
        plain Redis, one server holds both), and calls by command."""
        found = {"calls": 0, "bytes": 0, "queue_calls": 0, "commands": {}}
        for index, node in enumerate(self.nodes):
            stats, commands = node.info("stats"), node.info("commandstats")
            # Not the deployment's work: the bench's CONFIG RESETSTAT and its own two INFOs here.
            calls = {name[len("cmdstat_"):]: value["calls"] - (2 if name == "cmdstat_info" else 0)
                     for name, value in commands.items() if name != "cmdstat_config|resetstat"}
            found["calls"] += sum(calls.values())
            found["bytes"] += stats["total_net_input_bytes"] + stats["total_net_output_bytes"]
            if index == 0:
                found["queue_calls"] = sum(calls.values())
            for name, count in calls.items():
                found["commands"][name] = found["commands"].get(name, 0) + count
        return found

    def api_cpu_seconds(self) -> float:
        """User and system CPU of gunicorn and its workers."""
        return cpu_seconds(self.api.pid, *children(self.api.pid))

    def worker_cpu_seconds(self) -> float:
        """User and system CPU of the `ronda worker`s and the processes they forked."""
        return cpu_seconds(*(pid for worker in self.workers for pid in (worker.pid, *children(worker.pid))))


class Client:
    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method, path, body=None, headers=None):
        """One request on the kept-alive connection, on a new one if the server closed it while idle."""
        for attempt in (1, 2):
            try:
                self.conn.request(method, path, body=json.dumps(body) if body is not None else None,
                                  headers={"Content-Type": "application/json", **(headers or {})})
                response = self.conn.getresponse()
                data = response.read()
                return response.status, (json.loads(data) if data else None)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                if attempt == 2:
                    raise


def bot_games(deployment: Deployment, games: int, rules: dict, seconds: float = 900) -> dict:
    """`games` bot-only games created at once; the time until every one is over, and the work per move."""
    client = Client(deployment.port)
    deployment.reset_counters()
    started = time.monotonic()
    ids = []
    for _ in range(games):
        status, created = client.call("POST", "/games", {"players": 2, "rules": rules, "seats": BOT_SEATS})
        assert status == 201, created
        ids.append(created["game"]["id"])
    versions, pending = {}, set(ids)
    while pending and time.monotonic() - started < seconds:
        for game_id in list(pending):
            status, game = client.call("GET", f"/games/{game_id}")
            if status == 200 and game["status"] == "finished":
                versions[game_id] = game["version"]
                pending.discard(game_id)
        if pending:
            time.sleep(2)  # the bench's own polling should not take the workers' CPU
    elapsed = time.monotonic() - started
    moves = sum(versions.values())
    worker_cpu = deployment.worker_cpu_seconds() - deployment.cpu_at_reset[1]
    counters = deployment.redis_counters()
    # RQ writes a run's result with one XADD (to rq:results:<job>), and bot-only games make no other
    # (no registered bot's inbox): XADDs counted are the bot jobs run, twice for a move done twice.
    jobs_run = counters["commands"].get("xadd", 0)
    return {"games": games, "finished": len(versions), "seconds": elapsed, "moves": moves,
            "moves_per_second": moves / elapsed, "worker_cpu_ms_per_move": 1000 * worker_cpu / max(moves, 1),
            "jobs_per_move": jobs_run / max(moves, 1), **per(counters, moves)}


def per(counters: dict, actions: int) -> dict:
    actions = max(actions, 1)
    return {"calls_per_action": counters["calls"] / actions, "bytes_per_action": counters["bytes"] / actions,
            "queue_calls_per_action": counters["queue_calls"] / actions,
            "commands_per_action": {name: count / actions for name, count in counters["commands"].items()}}


def human_games(deployment: Deployment, clients: int, seconds: float) -> dict:
    """`clients` threads, each playing games as a human against greedy for `seconds`: its own
    actions timed, the bot's reply timed from the action's answer to the human's next turn."""
    deployment.reset_counters()
    latencies, replies, versions = [], [], {}
    deadline = time.monotonic() + seconds

    def play():
        client = Client(deployment.port)
        while time.monotonic() < deadline:
            status, created = client.call("POST", "/games", {"players": 2, "rules": {"preset": "classic"},
                                                             "seats": HUMAN_SEATS})
            if status != 201:
                continue
            game_id, token = created["game"]["id"], created["tokens"][0]["token"]
            auth = {"Authorization": f"Bearer {token}"}
            status, view = client.call("GET", f"/games/{game_id}/view", headers=auth)
            while time.monotonic() < deadline and view["status"] != "finished":
                if view["seat"] not in view["awaiting"]:
                    asked = time.monotonic()
                    status, view = client.call(
                        "GET", f"/games/{game_id}/view?after_version={view['version']}&wait_seconds=10", headers=auth)
                    replies.append(time.monotonic() - asked)
                    continue
                began = time.monotonic()
                status, _answer = client.call("POST", f"/games/{game_id}/actions", view["legal_actions"][0],
                                             headers={**auth, "If-Match": f'"{view["version"]}"'})
                if status == 200:
                    latencies.append(time.monotonic() - began)
                status, view = client.call("GET", f"/games/{game_id}/view", headers=auth)
            versions[game_id] = view["version"]

    threads = [threading.Thread(target=play) for _ in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    actions = sum(versions.values())
    cpu = deployment.api_cpu_seconds() - deployment.cpu_at_reset[0]
    counters = deployment.redis_counters()
    latencies.sort()
    return {"actions": actions, "actions_per_second": actions / elapsed,
            "p50_ms": 1000 * statistics.median(latencies), "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))],
            "bot_reply_ms": 1000 * statistics.median(replies) if replies else float("nan"),
            "api_cpu_ms_per_action": 1000 * cpu / max(actions, 1), **per(counters, actions)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bot-games", type=int, default=300)
    parser.add_argument("--preset", default="simple", help="the bot games' rules (to their preset's target)")
    parser.add_argument("--target", type=int, default=0, help="a shorter target for the bot games")
    parser.add_argument("--json", action="store_true", help="print the bot games' figures as JSON")
    parser.add_argument("--seconds", type=float, default=20, help="per shape of the human workload")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--stores", default="plain,cluster")
    parser.add_argument("--shapes", default="1x1,2x1,3x1,1x2,2x2,3x2")
    args = parser.parse_args()
    stores = args.stores.split(",")
    if args.bot_games:
        timed = {}
        rules = {"preset": args.preset, **({"target": args.target} if args.target else {})}
        for store in stores:
            with Deployment(cluster=store == "cluster", api_processes=2, workers=2) as deployment:
                timed[store] = result = bot_games(deployment, args.bot_games, rules)
            if args.json:
                print(json.dumps({"store": store, **result}))
                continue
            print(f"{args.bot_games} bot games (greedy v greedy, {rules}), 2 API processes, 2 workers, {store}: "
                  f"{result['finished']} finished in {result['seconds']:.1f} s, {result['moves']} moves, "
                  f"{result['moves_per_second']:.0f} moves/s; per move: {result['jobs_per_move']:.3f} jobs run, "
                  f"{result['worker_cpu_ms_per_move']:.1f} ms of "
                  f"worker CPU, {result['calls_per_action']:.1f} Redis calls "
                  f"({result['queue_calls_per_action']:.1f} on the queues' Redis), "
                  f"{result['bytes_per_action']:.0f} bytes")
            top = sorted(result["commands_per_action"].items(), key=lambda item: -item[1])[:14]
            print("  commands per move:", ", ".join(f"{name} {count:.2f}" for name, count in top))
        if len(timed) == 2 and not args.json:
            print(f"cluster / plain time: {timed['cluster']['seconds'] / timed['plain']['seconds']:.2f}")
    if args.seconds:
        print(f"\nhuman v greedy, {args.clients} clients, {args.seconds:g} s per shape")
        print(f"{'store':<8}{'API x workers':>14}{'actions/s':>11}{'p50 ms':>8}{'p99 ms':>8}{'bot ms':>8}"
              f"{'API CPU ms/act':>16}{'calls/act':>11}{'bytes/act':>11}")
        for store in stores:
            for shape in args.shapes.split(","):
                api_processes, workers = map(int, shape.split("x"))
                with Deployment(cluster=store == "cluster", api_processes=api_processes,
                                workers=workers) as deployment:
                    r = human_games(deployment, args.clients, args.seconds)
                print(f"{store:<8}{shape:>14}{r['actions_per_second']:>11.0f}{r['p50_ms']:>8.1f}{r['p99_ms']:>8.1f}"
                      f"{r['bot_reply_ms']:>8.1f}{r['api_cpu_ms_per_action']:>16.2f}{r['calls_per_action']:>11.1f}"
                      f"{r['bytes_per_action']:>11.0f}", flush=True)


if __name__ == "__main__":
    main()
