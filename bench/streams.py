"""Live streams under load: N concurrent SSE streams on one game, against gunicorn as the
Dockerfile runs it (app/gunicorn_conf.py, one gevent worker), while actions are played and
other clients keep creating games and reading views.

Prints, for each N: fan-out latency p50/p99 (from an action's answer to its first event on
every stream), and in the same run the floor: the same worker writing one pre-encoded payload
to N idle streams of a bare endpoint (`bench_app`), p50/p99 and the ratio; errors (streams,
actions, other clients), the worker's RSS and Redis's client connections.
`--storm N,...`: N streams opened at once over `--storm-games` games (every client reconnecting
after a deploy): refused (not a 200, or closed before the snapshot), snapshot p50/p99 from the
first connect.
Run: .venv/bin/python bench/streams.py [--streams 100,1000,5000] [--actions 10] [--storm 10000]
Uses REDIS_URL when set, else starts redis-server (as the tests do).
"""

import argparse
import asyncio
import json
import os
import queue
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def bench_app():
    """The real app plus the floor: streams of a bare endpoint that only wait, and a POST that
    writes one pre-encoded payload to every one of them (gunicorn loads this factory)."""
    from flask import Response

    from app import create_app
    app = create_app()
    idle: list[queue.SimpleQueue] = []

    @app.get("/bench/floor/stream")
    def floor_stream():
        inbox: queue.SimpleQueue = queue.SimpleQueue()
        idle.append(inbox)

        def chunks():
            yield ": connected\n\nevent: snapshot\ndata: {}\n\n"
            while True:
                yield inbox.get()
        return Response(chunks(), mimetype="text/event-stream")

    @app.post("/bench/floor/<int:event_id>")
    def floor_send(event_id):
        payload = f"id: {event_id}\nevent: event\ndata: {{}}\n\n"
        for inbox in idle:
            inbox.put(payload)
        return {"sent": len(idle)}

    return app


class Stream(asyncio.Protocol):
    """One SSE client that only notes when the event with a given id arrives."""

    def __init__(self, streams):
        self.streams, self.buffer, self.arrived = streams, b"", {}
        self.snapshot = asyncio.get_running_loop().create_future()

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        now = time.monotonic()
        seen = self.buffer + data  # a marker may straddle two reads
        self.buffer = seen[-32:]
        if not self.snapshot.done() and b"event: snapshot" in seen:
            self.snapshot.set_result(now)
        for wanted in self.streams.wanted:
            if wanted not in self.arrived and b"id: %d\n" % wanted in seen:
                self.arrived[wanted] = now

    def connection_lost(self, exc):
        if not self.snapshot.done():
            self.snapshot.set_exception(ConnectionError("stream closed"))
        self.streams.lost += 1


class Streams:
    def __init__(self):
        self.wanted, self.lost, self.all = set(), 0, []


async def request(port, method, path, body=None, headers=None):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    payload = json.dumps(body).encode() if body is not None else b""
    head = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(payload)}\r\n{head}\r\n".encode() + payload)
    data = await reader.read()
    writer.close()
    status = int(data.split(b" ", 2)[1])
    return status, json.loads(data.split(b"\r\n\r\n", 1)[1] or b"null")


async def other_clients(port, stop, errors, done):
    """Creating games and reading their views, as other users do while the streams are open."""
    while not stop.is_set():
        status, created = await request(port, "POST", "/games", {"players": 2})
        if status != 201:
            errors.append(status)
            continue
        status, _ = await request(port, "GET", f"/games/{created['game']['id']}")
        errors.extend([status] if status != 200 else [])
        done.append(1)


async def run(port, count, actions):
    loop = asyncio.get_running_loop()
    status, created = await request(port, "POST", "/games", {"players": 2, "seats": [{"type": "human"}] * 2})
    game_id, tokens = created["game"]["id"], {t["seat"]: t["token"] for t in created["tokens"]}
    streams, opening = Streams(), asyncio.Semaphore(200)

    async def open_one(i):
        async with opening:
            seat = (None, 0, 1)[i % 3]  # spectators and both seats: three distinct views
            auth = f"Authorization: Bearer {tokens[seat]}\r\n" if seat is not None else ""
            transport, stream = await loop.create_connection(lambda: Stream(streams), "127.0.0.1", port)
            transport.write(f"GET /games/{game_id}/stream HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode())
            streams.all.append(stream)
            await stream.snapshot

    opened = await asyncio.gather(*(open_one(i) for i in range(count)), return_exceptions=True)
    stream_errors = sum(isinstance(result, Exception) for result in opened)
    if stream_errors:
        print("streams that did not open:", {repr(r) for r in opened if isinstance(r, Exception)}, file=sys.stderr)
    stop, other_errors, other_done = asyncio.Event(), [], []
    others = [asyncio.create_task(other_clients(port, stop, other_errors, other_done)) for _ in range(4)]
    latencies, action_errors = [], 0
    for _ in range(actions):
        status, spectator = await request(port, "GET", f"/games/{game_id}")
        seat = spectator["awaiting"][0]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        _, view = await request(port, "GET", f"/games/{game_id}/view", headers=auth)
        first_event = view["event_count"] + 1
        streams.wanted.add(first_event)
        status, _ = await request(port, "POST", f"/games/{game_id}/actions", view["legal_actions"][0],
                                  {**auth, "If-Match": f'"{view["version"]}"'})
        answered = time.monotonic()
        if status != 200:
            action_errors += 1
            continue
        deadline = answered + 10
        live = [s for s in streams.all if not s.transport.is_closing()]
        while time.monotonic() < deadline and any(first_event not in s.arrived for s in live):
            await asyncio.sleep(0.005)
        latencies += [max(0.0, s.arrived[first_event] - answered) for s in live if first_event in s.arrived]
        stream_errors += sum(first_event not in s.arrived for s in live)
    stop.set()
    await asyncio.gather(*others)
    for stream in streams.all:
        stream.transport.close()
    return latencies, stream_errors, action_errors, other_errors, len(other_done)


async def floor(port, count, actions):
    """The same fan-out by the bare endpoint: one payload, written to every idle stream."""
    loop = asyncio.get_running_loop()
    streams, opening = Streams(), asyncio.Semaphore(200)

    async def open_one(_):
        async with opening:
            transport, stream = await loop.create_connection(lambda: Stream(streams), "127.0.0.1", port)
            transport.write(b"GET /bench/floor/stream HTTP/1.1\r\nHost: x\r\n\r\n")
            streams.all.append(stream)
            await stream.snapshot

    await asyncio.gather(*(open_one(i) for i in range(count)), return_exceptions=True)
    latencies = []
    for event_id in range(1, actions + 1):
        streams.wanted.add(event_id)
        _status, _ = await request(port, "POST", f"/bench/floor/{event_id}")
        answered = time.monotonic()
        deadline = answered + 10
        while time.monotonic() < deadline and any(event_id not in s.arrived for s in streams.all):
            await asyncio.sleep(0.005)
        latencies += [max(0.0, s.arrived[event_id] - answered) for s in streams.all if event_id in s.arrived]
    for stream in streams.all:
        stream.transport.close()
    return latencies


async def storm(port, count, games):
    """`count` streams opened at once over `games` games: (refused, snapshot latencies from the start)."""
    loop = asyncio.get_running_loop()
    ids = []
    for _ in range(games):
        _, created = await request(port, "POST", "/games", {"players": 2, "seats": [{"type": "human"}] * 2})
        ids.append(created["game"]["id"])
    streams = Streams()
    started = time.monotonic()

    async def open_one(i):
        transport, stream = await loop.create_connection(lambda: Stream(streams), "127.0.0.1", port)
        transport.write(f"GET /games/{ids[i % games]}/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        streams.all.append(stream)
        return await asyncio.wait_for(stream.snapshot, 60) - started

    opened = await asyncio.gather(*(open_one(i) for i in range(count)), return_exceptions=True)
    for stream in streams.all:
        stream.transport.close()
    return sum(isinstance(r, BaseException) for r in opened), [r for r in opened if not isinstance(r, BaseException)]


def quantiles(latencies):
    return statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [float("nan")] * 99


def worker_rss_mb(master_pid):
    children = Path(f"/proc/{master_pid}/task/{master_pid}/children").read_text().split()
    for line in Path(f"/proc/{children[0]}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", default="100,1000,5000")
    parser.add_argument("--actions", type=int, default=10)
    parser.add_argument("--storm", default="", help="streams opened at once, e.g. 1000,10000")
    parser.add_argument("--storm-games", type=int, default=50)
    args = parser.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # both ends of every stream live on this machine
    from redis_server import RedisServer
    server = RedisServer()
    redis_url = server.start()
    port = 18000 + os.getpid() % 1000
    env = {**os.environ, "REDIS_URL": redis_url, "RONDA_RATE_LIMIT_PER_ADDRESS": "0",
           "RONDA_RATE_LIMIT_PER_TOKEN": "0", "RONDA_BIND": f"127.0.0.1:{port}", "RONDA_WORKERS": "1"}
    gunicorn = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:app.gunicorn_conf",
                                 "--access-logfile", "/dev/null", "bench.streams:bench_app()"], cwd=ROOT, env=env)
    time.sleep(3)
    connections = redis.Redis.from_url(redis_url)
    try:
        for count in (int(n) for n in args.storm.split(",") if n):
            refused, snapshots = asyncio.run(storm(port, count, args.storm_games))
            cuts = quantiles(snapshots)
            print(f"storm: {count} streams opened at once over {args.storm_games} games: refused {refused}, "
                  f"snapshot p50 {cuts[49] * 1000:.0f} ms, p99 {cuts[98] * 1000:.0f} ms", flush=True)
            time.sleep(2)
        print(
            f"{'streams':>8} {'p50 ms':>8} {'p99 ms':>8} {'floor p50':>10} {'floor p99':>10} {'p99/floor':>10} "
            f"{'stream err':>11} {'action err':>11} {'others ok/err':>14} {'worker RSS MB':>14} {'Redis clients':>14}"
        )
        for count in (int(n) for n in args.streams.split(",") if n):
            latencies, stream_errors, action_errors, other_errors, other_done = asyncio.run(
                run(port, count, args.actions))
            cuts, floor_cuts = quantiles(latencies), quantiles(asyncio.run(floor(port, count, args.actions)))
            print(f"{count:>8} {cuts[49] * 1000:>8.1f} {cuts[98] * 1000:>8.1f} {floor_cuts[49] * 1000:>10.1f} "
                  f"{floor_cuts[98] * 1000:>10.1f} {cuts[98] / floor_cuts[98]:>10.2f} {stream_errors:>11} "
                  f"{action_errors:>11} {f'{other_done}/{len(other_errors)}':>14} {worker_rss_mb(gunicorn.pid):>14.0f} "
                  f"{connections.info('clients')['connected_clients']:>14}", flush=True)
            time.sleep(1)
    finally:
        gunicorn.terminate()
        gunicorn.wait()
        server.stop()


if __name__ == "__main__":
    main()
