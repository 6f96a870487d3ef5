"""Webhooks under load: one API process (gunicorn, one gevent worker), one `ronda worker` and one
`ronda worker --webhooks` on a real Redis, an app with an endpoint on a local receiver, and
`--games` games of the app's players against a random bot (each a stream of `your_turn`).

Prints: deliveries received and their latency p50/p99, from the notice (`data.at`) to the
receiver; then the bot reply latency p50/p99 (bench/bot_replies.py's measure) with the endpoint
answering at once and with it hanging past the attempt's timeout: a dead endpoint must not slow
a game. Then the delivery latency again while another app's endpoint trickles its answers (a byte
every half second, so each read is within the socket timeout): no tenant may stall another. Then
tenants side by side (issue 62): a quiet app's delivery latency in healthy phases and beside two
apps of ten trickling endpoints and two of ten hanging ones, each phase in turn, with the ratio of
its p99 to the healthy p99 (the goal: 1.5 at most). And a request's cost of its app key: GET
/games?status=open p50 with and without it.

Run: .venv/bin/python bench/webhooks.py [--games 100] [--samples 100] [--tenants-only]
Uses REDIS_URL when set, else starts redis-server (as the tests do).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench.bot_replies import reply_ms  # noqa: E402
from bench.matchmaking import percentile, session  # noqa: E402
from redis_server import RedisServer, _free_port as free_port  # noqa: E402
from trickle import TricklingReceiver  # noqa: E402

OPERATOR = "bench-operator"


class Receiver:
    def __init__(self):
        self.latencies_ms: list[float] = []
        self.hang = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                receiver.latencies_ms.append((time.time() - body["data"]["at"]) * 1000)
                if receiver.hang.is_set():
                    time.sleep(15)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"


def start(redis_url: str, queue: str) -> tuple[list[subprocess.Popen], str]:
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "RONDA_BOT_QUEUE": queue, "RONDA_RATE_LIMIT_PER_ADDRESS": "0",
           "RONDA_RATE_LIMIT_PER_TOKEN": "0", "RONDA_SECRET_KEY": "bench", "RONDA_OPERATOR_KEY": OPERATOR,
           "RONDA_WEBHOOK_PRIVATE_NETWORKS": "1"}  # the receiver is on this machine
    processes = [subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:app.gunicorn_conf", "--bind",
                                   f"127.0.0.1:{port}", "--workers", "1", "--chdir", str(ROOT), "app:create_app()"],
                                  env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    for options in ((), ("--webhooks",)):
        processes.append(subprocess.Popen([sys.executable, "-m", "app.cli", "worker", *options], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    base = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            requests.get(f"{base}/health/ready", timeout=1)
            break
        except requests.RequestException:
            time.sleep(0.05)
    return processes, base


def games_of_players(base, key, count):
    """`count` games, each of a new player of the app (seat 0, first to play) against a random bot."""
    games = []
    for index in range(count):
        token = session().post(f"{base}/players", json={"name": f"p{index}"},
                               headers={"X-Ronda-App": key}).json()["token"]
        created = session().post(f"{base}/games", headers={"X-Ronda-App": key, "Authorization": f"Bearer {token}"},
                                 json={"players": 2, "first_dealer": 1, "rules": {"preset": "classic"},
                                       "seats": [{"type": "human", "mine": True}, {"type": "bot", "bot": "random"}]})
        games.append((created.json()["game"]["id"], token))
    return games


def replies(base, key, games, samples) -> list[float]:
    rng, found = random.Random(7), []
    session().headers["X-Ronda-App"] = key  # reply_ms's requests, in the app
    try:
        while len(found) < samples:
            game_id, token = rng.choice(games)
            measured = reply_ms(base, game_id, token, rng)
            if measured is not None:
                found.append(measured)
    finally:
        del session().headers["X-Ronda-App"]
    return found


def new_app(base, name: str, receivers, events=("your_turn",)) -> dict:
    """An app with an endpoint on each receiver (ten at most: an app's endpoints)."""
    made = session().post(f"{base}/admin/apps", json={"name": name}, headers={"Authorization": f"Bearer {OPERATOR}"})
    app = made.json()
    for receiver in receivers:
        session().post(f"{base}/apps/me/webhooks", json={"url": receiver.url, "events": list(events)},
                       headers={"X-Ronda-App": app["server_key"]})
    return app


def tenants(base, games: int) -> None:
    """A quiet app's deliveries, healthy, then beside 2 apps of 10 trickling endpoints and 2 of 10
    hanging ones, then healthy again: each phase's p50/p99 and its p99's ratio to the first."""
    quiet_receiver = Receiver()
    quiet = new_app(base, "quiet", [quiet_receiver])

    def phase(name: str) -> float:
        quiet_receiver.latencies_ms.clear()
        games_of_players(base, quiet["client_key"], games)
        time.sleep(3)
        got = list(quiet_receiver.latencies_ms)
        p99 = percentile(got, 0.99)
        print(f"  {name}: {len(got)} deliveries, latency ms p50 {percentile(got, 0.5):.1f} p99 {p99:.1f}", flush=True)
        return p99

    print("a quiet app beside misbehaving tenants:")
    healthy = phase("healthy")
    tricklers = [[TricklingReceiver() for _ in range(10)] for _ in range(2)]
    hangers = [[Receiver() for _ in range(10)] for _ in range(2)]
    for receivers in hangers:
        for receiver in receivers:
            receiver.hang.set()
    noisy = [new_app(base, f"noisy-{n}", receivers) for n, receivers in enumerate([*tricklers, *hangers])]
    try:
        for app in noisy:
            games_of_players(base, app["client_key"], 5)  # 5 games x 10 endpoints: 50 stuck deliveries an app
        time.sleep(2)  # the webhook workers are busy with them, as they would be
        beside = phase("beside 2 x 10 trickling and 2 x 10 hanging endpoints")
        again = phase("healthy again (the noisy endpoints paused)")
        print(f"  ratio of p99 beside them to healthy p99: {beside / healthy:.2f} (goal <= 1.5); "
              f"healthy again: {again / healthy:.2f}", flush=True)
    finally:
        for receivers in tricklers:
            for trickler in receivers:
                trickler.close()
        for receivers in hangers:
            for receiver in receivers:
                receiver.hang.clear()


def request_ms(url, headers, count=300) -> float:
    times, own = [], requests.Session()
    for _ in range(count):
        started = time.perf_counter()
        own.get(url, headers=headers)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--tenants-only", action="store_true", help="only the quiet app beside misbehaving tenants")
    args = parser.parse_args(argv)
    server = RedisServer()
    redis_url = server.start()
    processes, base = start(redis_url, f"bench-webhooks-{uuid.uuid4().hex[:6]}")
    receiver = Receiver()
    try:
        if args.tenants_only:
            tenants(base, args.games // 4)
            return 0
        made = session().post(f"{base}/admin/apps", json={"name": "bench"},
                              headers={"Authorization": f"Bearer {OPERATOR}"}).json()
        key = made["client_key"]
        session().post(f"{base}/apps/me/webhooks", json={"url": receiver.url, "events": ["your_turn", "game_over"]},
                       headers={"X-Ronda-App": made["server_key"]})
        games_of_players(base, key, 1)  # a worker's first job builds its services: not measured
        while not receiver.latencies_ms:
            time.sleep(0.05)
        receiver.latencies_ms.clear()
        games = games_of_players(base, key, args.games)
        fast = replies(base, key, games, args.samples)
        time.sleep(2)
        got = list(receiver.latencies_ms)
        print(f"deliveries received: {len(got)}; latency ms p50 {percentile(got, 0.5):.1f} "
              f"p99 {percentile(got, 0.99):.1f}")
        print(f"bot reply ms, endpoint answering: p50 {percentile(fast, 0.5):.1f} p99 {percentile(fast, 0.99):.1f}")
        receiver.hang.set()
        slow = replies(base, key, games, args.samples)
        print(f"bot reply ms, endpoint hanging:   p50 {percentile(slow, 0.5):.1f} p99 {percentile(slow, 0.99):.1f}")
        receiver.hang.clear()  # its endpoint is paused now (it gave no answer): a fresh app measures beside the trickle
        healthy, healthy_app = Receiver(), session().post(f"{base}/admin/apps", json={"name": "healthy"},
                                                          headers={"Authorization": f"Bearer {OPERATOR}"}).json()
        session().post(f"{base}/apps/me/webhooks", json={"url": healthy.url, "events": ["your_turn"]},
                       headers={"X-Ronda-App": healthy_app["server_key"]})
        trickler = TricklingReceiver()
        other = session().post(f"{base}/admin/apps", json={"name": "trickling"},
                               headers={"Authorization": f"Bearer {OPERATOR}"}).json()
        session().post(f"{base}/apps/me/webhooks", json={"url": trickler.url, "events": ["your_turn", "game_over"]},
                       headers={"X-Ronda-App": other["server_key"]})
        games_of_players(base, other["client_key"], 20)  # twenty deliveries to the trickling endpoint
        while not trickler.requests:
            time.sleep(0.05)
        time.sleep(2)  # the webhook workers are busy with it, as they would be
        games_of_players(base, healthy_app["client_key"], args.games // 4)
        time.sleep(3)
        beside = list(healthy.latencies_ms)
        trickler.close()
        print(f"deliveries with another app's endpoint trickling ({trickler.requests} attempts to it so far): "
              f"{len(beside)} received, latency ms p50 {percentile(beside, 0.5):.1f} "
              f"p99 {percentile(beside, 0.99):.1f}")
        tenants(base, args.games // 4)
        listing = f"{base}/games?status=open"
        print(f"GET /games?status=open p50 ms: public {request_ms(listing, {}):.2f}, "
              f"with an app key {request_ms(listing, {'X-Ronda-App': key}):.2f}")
    finally:
        receiver.hang.clear()
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=20)
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
