"""Live streams under load, served by the API under gunicorn as the Dockerfile runs it
(app/gunicorn_conf.py, one gevent worker) and by the stream gateway (`ronda streams`, the process
compose's router sends them to), beside an honest floor measured in the same run. `--fronts`
picks which serve the streams (both by default); actions and other clients always go to the API.

Fan-out (`--streams N,...`): N SSE streams on one game (spectators and both seats) while actions
are played and other clients keep creating games and reading views. For each N: the latency of
each action's first event on every stream (p50/p99, never clipped), and the floor: a separate
30-line gevent server outside Flask (no app, no per-stream queue) that
writes one payload to N idle sockets (bench/sse_floor.py), its latency timed from its own write.
The app's is timed from the action's answer, which the server writes right after the game's
write: a stream may see the event first, and such a latency is kept below 0. Then the ratio, the
issue's goals (p99 at most 1.5x the floor; under 250 ms at 5,000 and 1 s at 10,000) met or missed
and by how much; errors, the worker's RSS and Redis's client connections. `--profile` samples the
worker with py-spy during the largest fan-out and prints where its time went.

Storm (`--storm N,...`): N streams opened at once over `--storm-games` games (every client
reconnecting after a deploy): refused (an answer other than 200, or closed before its snapshot),
closed without a byte, first byte and snapshot p50/p99 from the first connect, and the CPU time
each server spent a stream (what a storm costs it, steadier than its latencies).

Run: .venv/bin/python bench/streams.py [--streams 1000,5000,10000] [--storm 1000,10000] [--profile]
[--fronts api,gateway] [--host H] [--port P] [--gateway-port P] [--floor-port P] [--wsgi-floor];
a storm's stream that waits past --storm-patience (60 s) is counted as not served. `--wsgi-floor`
storms a bare WSGI app under the same gunicorn conf too (bench/wsgi_floor.py): what gunicorn alone
costs a stream.
Uses REDIS_URL when set, else starts redis-server (as the tests do). --profile needs py-spy
(`.venv/bin/pip install py-spy`).
"""

import argparse
import asyncio
import collections
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis
from processes import children, cpu_seconds

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
GOALS = {"ratio": 1.5, 5000: 0.250, 10000: 1.0}  # p99 / floor p99; p99 seconds at that many streams
HOST = "127.0.0.1"  # where the servers listen (--host)
STORM_PATIENCE = 60.0  # seconds a storm's stream waits for its snapshot: then it counts as not served


class Stream(asyncio.Protocol):
    """One SSE client: when its first byte, its snapshot and each wanted event arrived (wall time)."""

    def __init__(self, streams):
        self.streams, self.buffer, self.arrived = streams, b"", {}
        self.first_byte, self.status = None, None
        self.snapshot = asyncio.get_running_loop().create_future()

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        now = time.time()
        if self.first_byte is None:
            self.first_byte, self.status = now, data.split(b" ", 2)[1] if data.startswith(b"HTTP/") else b"?"
        seen = self.buffer + data  # a marker may straddle two reads
        self.buffer = seen[-32:]
        if not self.snapshot.done() and b"event: snapshot" in seen:
            self.snapshot.set_result(now)
        for wanted in self.streams.wanted:
            if wanted not in self.arrived and b"id: %d\n" % wanted in seen:
                self.arrived[wanted] = now

    def connection_lost(self, exc):
        if not self.snapshot.done():
            self.snapshot.set_result(None)  # closed before its snapshot (a result: nobody need retrieve it)


def source_of(i: int):
    """The local address the i-th stream connects from. On loopback, 200 of them (127.0.0.2-201): a
    run's storms open tens of thousands of connections within a minute, each held in TIME_WAIT for
    60 s, and from one address they used up its ephemeral ports, which stalled a storm of 10,000's
    connects for seconds (p50 5.3 s on the gateway, where the floor, measured after those had
    expired, was not: a fault of the bench, not of a server)."""
    return (f"127.0.0.{2 + i % 200}", 0) if HOST.startswith("127.") else None


class Streams:
    def __init__(self):
        self.wanted, self.all = set(), []


async def request(port, method, path, body=None, headers=None):
    reader, writer = await asyncio.open_connection(HOST, port)
    payload = json.dumps(body).encode() if body is not None else b""
    head = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(payload)}\r\n{head}\r\n".encode() + payload)
    data = await reader.read()
    writer.close()
    status = int(data.split(b" ", 2)[1])
    return status, json.loads(data.split(b"\r\n\r\n", 1)[1] or b"null")


async def open_streams(port, count, path_of, streams):
    """`count` streams, 200 connecting at a time, each waited for until its snapshot."""
    loop, opening = asyncio.get_running_loop(), asyncio.Semaphore(200)

    async def open_one(i):
        async with opening:
            path, auth = path_of(i)
            transport, stream = await loop.create_connection(lambda: Stream(streams), HOST, port,
                                                             local_addr=source_of(i))
            transport.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode())
            streams.all.append(stream)
            if await stream.snapshot is None:
                raise ConnectionError("stream closed before its snapshot")

    opened = await asyncio.gather(*(open_one(i) for i in range(count)), return_exceptions=True)
    return sum(isinstance(result, Exception) for result in opened)


async def wait_for(streams, event_id, deadline):
    live = [s for s in streams.all if not s.transport.is_closing()]
    while time.time() < deadline and any(event_id not in s.arrived for s in live):
        await asyncio.sleep(0.005)
    return live


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


async def fan_out(port, stream_port, count, actions):
    """The app: latencies from each action's answer to its first event on every stream (opened on
    `stream_port`: the API's own, or the gateway's; the actions and other clients go to the API)."""
    status, created = await request(port, "POST", "/games", {"players": 2, "seats": [{"type": "human"}] * 2})
    game_id, tokens = created["game"]["id"], {t["seat"]: t["token"] for t in created["tokens"]}
    streams = Streams()

    def path_of(i):
        seat = (None, 0, 1)[i % 3]  # spectators and both seats: three distinct views
        return f"/games/{game_id}/stream", f"Authorization: Bearer {tokens[seat]}\r\n" if seat is not None else ""
    stream_errors = await open_streams(stream_port, count, path_of, streams)
    stop, other_errors, other_done = asyncio.Event(), [], []
    others = [asyncio.create_task(other_clients(port, stop, other_errors, other_done)) for _ in range(4)]
    latencies, action_errors = [], 0
    for _ in range(actions):
        _, spectator = await request(port, "GET", f"/games/{game_id}")
        seat = spectator["awaiting"][0]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        _, view = await request(port, "GET", f"/games/{game_id}/view", headers=auth)
        first_event = view["event_count"] + 1
        streams.wanted.add(first_event)
        status, _ = await request(port, "POST", f"/games/{game_id}/actions", view["legal_actions"][0],
                                  {**auth, "If-Match": f'"{view["version"]}"'})
        answered = time.time()
        if status != 200:
            action_errors += 1
            continue
        live = await wait_for(streams, first_event, answered + 10)
        latencies += [s.arrived[first_event] - answered for s in live if first_event in s.arrived]
        stream_errors += sum(first_event not in s.arrived for s in live)
    stop.set()
    await asyncio.gather(*others)
    for stream in streams.all:
        stream.transport.close()
    return latencies, stream_errors, action_errors, other_errors, len(other_done)


async def floor(port, count, actions):
    """The floor server: latencies from its write of each payload to its arrival on every stream."""
    streams = Streams()
    await open_streams(port, count, lambda _: ("/stream", ""), streams)
    latencies = []
    for event_id in range(1, actions + 1):
        streams.wanted.add(event_id)
        _, answer = await request(port, "POST", f"/send/{event_id}")
        live = await wait_for(streams, event_id, answer["written"] + 10)
        latencies += [s.arrived[event_id] - answer["written"] for s in live if event_id in s.arrived]
    for stream in streams.all:
        stream.transport.close()
    return latencies


async def game_streams(port, games):
    """The stream paths of `games` new games."""
    paths = []
    for _ in range(games):
        _, created = await request(port, "POST", "/games", {"players": 2, "seats": [{"type": "human"}] * 2})
        paths.append(f"/games/{created['game']['id']}/stream")
    return paths


async def storm(port, count, paths):
    """`count` streams opened at once over `paths`, each timed from the first connect."""
    loop = asyncio.get_running_loop()
    streams = Streams()
    started = time.time()

    async def open_one(i):
        transport, stream = await loop.create_connection(lambda: Stream(streams), HOST, port, local_addr=source_of(i))
        transport.write(f"GET {paths[i % len(paths)]} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        streams.all.append(stream)
        # shielded: a stream still waiting when its patience ends is counted as not served, and its
        # future is left for a late answer (cancelling it made that answer, or the count, raise)
        await asyncio.wait_for(asyncio.shield(stream.snapshot), STORM_PATIENCE)

    await asyncio.gather(*(open_one(i) for i in range(count)), return_exceptions=True)
    for stream in streams.all:
        stream.transport.close()
    served = [s for s in streams.all if s.status == b"200" and s.snapshot.done() and s.snapshot.result() is not None]
    answered = sum(s.first_byte is not None for s in streams.all)
    return {"refused": count - len(served), "without a byte": count - answered,
            "first byte": [s.first_byte - started for s in streams.all if s.first_byte is not None],
            "snapshot": [s.snapshot.result() - started for s in served]}


def quantiles(latencies):
    return statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [float("nan")] * 99


def worker_pid(master_pid):
    """gunicorn's (first) worker."""
    return children(master_pid)[0]


def rss_mb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def goals_said(count, p99, floor_p99):
    """Each goal this fan-out is held to: met, or missed and by how much."""
    said = []
    ratio = p99 / floor_p99
    said.append(f"p99/floor {ratio:.2f} " + ("met (<= 1.5)" if ratio <= GOALS["ratio"]
                                             else f"MISSED by {ratio / GOALS['ratio']:.2f}x"))
    if count in GOALS:
        said.append(f"p99 {p99 * 1000:.0f} ms " + (f"met (< {GOALS[count] * 1000:.0f} ms)" if p99 < GOALS[count]
                                                    else f"MISSED by {(p99 - GOALS[count]) * 1000:.0f} ms"))
    return "; ".join(said)


def profiled(pid, seconds):
    """py-spy's samples of `pid` for `seconds`, in the background: a process that writes them."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    out = Path(tempfile.mkdtemp()) / "samples.txt"
    process = subprocess.Popen([spy, "record", "--pid", str(pid), "--duration", str(seconds), "--format", "raw",
                                "--output", str(out), "--nonblocking"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    return process, out


def say_where_the_time_went(spy, during: str):
    spy[0].wait()
    own, within = where_the_time_went(spy[1])
    print(f"where the worker's time went during {during} (py-spy): self time", flush=True)
    print("\n".join(own), flush=True)
    print("and the service's own functions, with all they call:", flush=True)
    print("\n".join(within), flush=True)


def where_the_time_went(out: Path, top=10):
    """From py-spy's collapsed stacks: the frames most often on top of the stack (self time), and
    the service's own functions (app/) by the share of samples they are anywhere in."""
    own, within, total = collections.Counter(), collections.Counter(), 0
    for line in out.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        own[frames[-1]] += int(count)
        for frame in {frame for frame in frames if "(app/" in frame}:
            within[frame] += int(count)
        total += int(count)
    return ([f"{count / total:6.1%}  {frame}" for frame, count in own.most_common(top)],
            [f"{count / total:6.1%}  {frame}" for frame, count in within.most_common(top)])


def main():
    global HOST, STORM_PATIENCE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", default="1000,5000,10000")
    parser.add_argument("--actions", type=int, default=10)
    parser.add_argument("--storm", default="", help="streams opened at once, e.g. 1000,10000")
    parser.add_argument("--storm-games", type=int, default=50)
    parser.add_argument("--profile", action="store_true", help="py-spy the worker during the largest fan-out")
    parser.add_argument("--host", default=HOST, help="the address both servers listen on")
    parser.add_argument("--port", type=int, default=0, help="the app's port (default: one free)")
    parser.add_argument("--floor-port", type=int, default=0, help="the floor server's port (default: one free)")
    parser.add_argument("--gateway-port", type=int, default=0, help="`ronda streams`' port (default: one free)")
    parser.add_argument("--fronts", default="api,gateway",
                        help="what serves the streams measured: the API's own routes, the gateway, or both")
    parser.add_argument("--wsgi-floor", action="store_true",
                        help="storm a bare WSGI app under the same gunicorn conf too (bench/wsgi_floor.py)")
    parser.add_argument("--wsgi-floor-port", type=int, default=0, help="its port (default: one free)")
    parser.add_argument("--storm-patience", type=float, default=STORM_PATIENCE,
                        help="seconds a storm's stream waits for its snapshot before it counts as not served")
    args = parser.parse_args()
    HOST, STORM_PATIENCE = args.host, args.storm_patience
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # both ends of every stream live on this machine
    from redis_server import RedisServer
    server = RedisServer()
    redis_url = server.start()
    from test_production_server import free_port
    port, floor_port = args.port or free_port(), args.floor_port or free_port()
    gateway_port = args.gateway_port or free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "RONDA_RATE_LIMIT_PER_ADDRESS": "0",
           "RONDA_RATE_LIMIT_PER_TOKEN": "0", "RONDA_BIND": f"{HOST}:{port}", "RONDA_WORKERS": "1",
           "RONDA_WORKER_CONNECTIONS": "12000", "RONDA_SECRET_KEY": "bench-streams"}
    gunicorn = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:app.gunicorn_conf",
                                 "--access-logfile", "/dev/null"], cwd=ROOT, env=env)
    gateway = subprocess.Popen([sys.executable, "-c", "from app.cli import main; main()", "streams", "--host", HOST,
                                "--port", str(gateway_port)], cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    wsgi_port = args.wsgi_floor_port or free_port()
    bare_gunicorn = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:app.gunicorn_conf",
                                      "--access-logfile", "/dev/null", "bench.wsgi_floor:app"],
                                     cwd=ROOT, env={**env, "RONDA_BIND": f"{HOST}:{wsgi_port}"}) if args.wsgi_floor \
        else None
    floor_process = subprocess.Popen([sys.executable, str(ROOT / "bench" / "sse_floor.py"), str(floor_port), HOST])
    time.sleep(3)
    connections = redis.Redis.from_url(redis_url)
    fronts = {"api": ("the API (gunicorn, Flask)", port, lambda: worker_pid(gunicorn.pid)),
              "gateway": ("the gateway (ronda streams)", gateway_port, lambda: gateway.pid)}
    fronts = {name: fronts[name] for name in args.fronts.split(",")}
    try:
        storms = [int(n) for n in args.storm.split(",") if n]
        for count in storms:
            paths = asyncio.run(game_streams(port, args.storm_games))
            found = {}
            for name, (said, stream_port, pid) in fronts.items():
                spy = profiled(pid(), 10) if args.profile and count == max(storms) else None
                cpu = cpu_seconds(pid())
                found[name] = asyncio.run(storm(stream_port, count, paths))
                cpu = cpu_seconds(pid()) - cpu
                first, snapshot = quantiles(found[name]["first byte"]), quantiles(found[name]["snapshot"])
                print(f"storm: {count} streams opened at once over {args.storm_games} games on {said}: refused "
                      f"{found[name]['refused']}, closed without a byte {found[name]['without a byte']}; first byte "
                      f"p50 {first[49] * 1000:.0f} ms, p99 {first[98] * 1000:.0f} ms; snapshot p50 "
                      f"{snapshot[49] * 1000:.0f} ms, p99 {snapshot[98] * 1000:.0f} ms; its CPU "
                      f"{cpu / count * 1e6:.0f} us a stream", flush=True)
                if spy is not None:
                    say_where_the_time_went(spy, f"the storm of {count} on {said}")
                time.sleep(2)
            cpu = cpu_seconds(floor_process.pid)
            floor_found = asyncio.run(storm(floor_port, count, ["/stream"]))
            cpu = cpu_seconds(floor_process.pid) - cpu
            floor_snapshot = quantiles(floor_found["snapshot"])
            print(f"  floor: refused {floor_found['refused']}, snapshot p50 {floor_snapshot[49] * 1000:.0f} ms, "
                  f"p99 {floor_snapshot[98] * 1000:.0f} ms; its CPU {cpu / count * 1e6:.0f} us a stream", flush=True)
            for name, (said, _, _) in fronts.items():
                snapshot = quantiles(found[name]["snapshot"])
                ratio = snapshot[98] / floor_snapshot[98] if found[name]["snapshot"] else float("inf")
                print(f"  goals, {said}: all served "
                      + ("met" if found[name]["refused"] == 0 else f"MISSED ({found[name]['refused']} not served)")
                      + f", snapshot p99/floor {ratio:.2f} " + ("met (<= 1.5)" if ratio <= GOALS["ratio"]
                                                                else f"MISSED by {ratio / GOALS['ratio']:.2f}x"),
                      flush=True)
            if bare_gunicorn is not None:
                time.sleep(2)
                bare = asyncio.run(storm(wsgi_port, count, ["/stream"]))
                bare_snapshot = quantiles(bare["snapshot"])
                print(f"  bare WSGI app under the same gunicorn conf: refused {bare['refused']}, snapshot p50 "
                      f"{bare_snapshot[49] * 1000:.0f} ms, p99 {bare_snapshot[98] * 1000:.0f} ms "
                      f"({bare_snapshot[98] / floor_snapshot[98]:.2f}x the floor)", flush=True)
            time.sleep(2)
        counts = [int(n) for n in args.streams.split(",") if n]
        print(f"{'streams on':>10} {'streams':>8} {'p50 ms':>8} {'p99 ms':>8} {'floor p50':>10} {'floor p99':>10} "
              f"{'stream err':>11} {'action err':>11} {'others ok/err':>14} {'RSS MB':>8} "
              f"{'Redis clients':>14}  goals")
        for count in counts:
            floor_cuts = quantiles(asyncio.run(floor(floor_port, count, args.actions)))
            for name, (said, stream_port, pid) in fronts.items():
                spy = profiled(pid(), 20) if args.profile and count == max(counts) else None
                latencies, stream_errors, action_errors, other_errors, other_done = asyncio.run(
                    fan_out(port, stream_port, count, args.actions))
                cuts = quantiles(latencies)
                print(f"{name:>10} {count:>8} {cuts[49] * 1000:>8.1f} {cuts[98] * 1000:>8.1f} "
                      f"{floor_cuts[49] * 1000:>10.1f} {floor_cuts[98] * 1000:>10.1f} {stream_errors:>11} "
                      f"{action_errors:>11} {f'{other_done}/{len(other_errors)}':>14} {rss_mb(pid()):>8.0f} "
                      f"{connections.info('clients')['connected_clients']:>14}  "
                      f"{goals_said(count, cuts[98], floor_cuts[98])}", flush=True)
                if spy is not None:
                    say_where_the_time_went(spy, f"{count} streams on {said}")
                time.sleep(1)
    finally:
        for process in (gunicorn, gateway, floor_process, bare_gunicorn):
            if process is not None:
                process.terminate()
                process.wait()
        server.stop()


if __name__ == "__main__":
    main()
