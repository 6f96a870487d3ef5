"""Chaos soak of the production shape: real processes, a realistic mix of clients, faults at
random moments, invariants checked throughout and printed at the end.

The shape: redis-server with an append-only file (as docker-compose runs it), gunicorn from the
image's settings module (`app.gunicorn_conf`, gevent, 2 workers) with the image's metrics
directory absent, and 2 `ronda worker`s; with `--cluster`, games live on a 3-master, 3-replica
Redis Cluster and the plain Redis keeps the job queues, and masters are killed and frozen too.
The harness restarts a killed `ronda worker` after a
moment, as compose's restart policy does; everything else must heal itself (gunicorn restarts its
workers, a `ronda worker` its child).

Clients: humans against bots (long polls, Idempotency-Key on every action, some actions sent
twice), humans against humans with SSE spectators, built-in bot matches, an outside bot playing a
match by long poll, and bad inputs. Faults: a crash of Redis (SIGKILL, and its append-only file,
fsynced every second, cut back to its size a second before, as a power loss leaves it: the last
second of writes is lost, bot-only matches running), SIGSTOP of Redis, SIGKILL of
a `ronda worker` and of its child, SIGKILL of a gunicorn worker, overload (both `ronda worker`s
stopped for twice the stall time while moves keep coming: a queue longer than the stall
threshold); on the cluster, masters killed and frozen, replicas killed with write replicas on
(RONDA_WRITE_REPLICAS=1), and after each master's failover, writes through an API that slept
through it.

Invariants: every game and every match finishes (all humans here play to the end); every
acknowledged action is in the game's log and no action is there twice; the ladder counts each
rated match game once (every entrant's rated games equal its matches' games); bot jobs run at
most 1.05 times the bot moves made (no move computed twice); no 5xx but 503 with Retry-After;
every idempotent retry returns the first answer; no process left dead, none outliving the one that
started it (each process started leads a process group, searched at the end); Redis connections bounded.
A violation prints the seed that replays the run's choices.

Run: .venv/bin/python bench/chaos.py --seconds 1800 --seed 1 [--cluster]   (exit 1 on any violation)
"""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import redis
import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from faults import stop_all  # noqa: E402
from processes import children  # noqa: E402
from redis_server import EverysecRedisServer, RedisClusterServers  # noqa: E402

REDIS_CONNECTION_BOUND = 250  # 2 API processes × 50 pooled + their feeds, 2 workers × a few, and this harness
DRAIN_SECONDS = 120
JOBS_PER_MOVE_BOUND = 1.05
STALL_SECONDS = 2
LOSS_SLACK_SECONDS = 0.5  # a write made before the kill may be answered after it
ORPHAN_GRACE_SECONDS = 3  # a fork checks its parent every second (app/ops/lifelines.py)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Shape:
    """The production shape's processes, and the faults done to them."""

    def __init__(self, workdir: Path, cluster: bool, ledger: "Ledger"):
        self.workdir, self.ledger = workdir, ledger
        self.cluster = RedisClusterServers(masters=3, replicas=1) if cluster else None
        self.redis_server = EverysecRedisServer()  # as docker-compose runs it
        self.api_port, self.idle_port = free_port(), free_port()
        self.base, self.idle_base = f"http://127.0.0.1:{self.api_port}", f"http://127.0.0.1:{self.idle_port}"
        self.queue = f"bots-chaos-{uuid.uuid4().hex[:6]}"
        self.worker_metrics = workdir / "worker-metrics"  # bot jobs and moves: workers' alone (gunicorn clears its own)
        self.env = {**os.environ, "RONDA_BOT_QUEUE": self.queue,
                    "PROMETHEUS_MULTIPROC_DIR": str(workdir / "metrics-not-made-yet"),
                    "RONDA_SECRET_KEY": "chaos-" + uuid.uuid4().hex, "RONDA_BOT_STALL_SECONDS": str(STALL_SECONDS),
                    # every simulated user shares one address: the per-address budget is a deployment's
                    "RONDA_RATE_LIMIT_PER_ADDRESS": "100000", "RONDA_BOT_REGISTRATIONS_PER_HOUR": "0",
                    **({"RONDA_WRITE_REPLICAS": "1"} if cluster else {})}
        self.api = self.idle_api = None
        self.workers: list[subprocess.Popen] = []
        self.groups: list[int] = []  # every process started here leads a group its forks stay in
        self.lock = threading.Lock()

    def start(self):
        self.env["REDIS_URL"] = self.redis_url = self.redis_server.start()
        if self.cluster:
            self.cluster.start()
            self.env["REDIS_CLUSTER_URL"] = self.cluster.every_node_url  # any node down, the others start a process
        self.api = self._started(
            [sys.executable, "-m", "gunicorn", "-c", "python:app.gunicorn_conf", "--workers", "2",
             "--bind", f"127.0.0.1:{self.api_port}", "--access-logfile", "/dev/null"],
            env=self.env, log=self.workdir / "api.log")
        self.workers = [self.start_worker(i) for i in range(2)]
        if self.cluster:  # a second API that only writes after a failover: it sleeps through each one
            self.idle_api = self._started(
                [sys.executable, "-m", "gunicorn", "-c", "python:app.gunicorn_conf", "--workers", "1",
                 "--bind", f"127.0.0.1:{self.idle_port}", "--access-logfile", "/dev/null"],
                env={**self.env, "PROMETHEUS_MULTIPROC_DIR": str(self.workdir / "idle-api-metrics")},
                log=self.workdir / "idle-api.log")
        for base in (self.base, *((self.idle_base,) if self.cluster else ())):
            for _ in range(300):
                try:
                    if requests.get(f"{base}/health/ready", timeout=1).status_code == 200:
                        break
                except requests.RequestException:
                    pass
                time.sleep(0.1)
            else:
                raise RuntimeError(f"the API at {base} did not start")

    def start_worker(self, index: int) -> subprocess.Popen:
        return self._started([sys.executable, "-m", "app.cli", "worker"],
                             env={**self.env, "PROMETHEUS_MULTIPROC_DIR": str(self.worker_metrics)},
                             log=self.workdir / f"worker{index}.log")

    def _started(self, command: list[str], env: dict, log: Path) -> subprocess.Popen:
        """A process in a session of its own: whatever it forks stays in its group, found at the end
        even when the process itself was killed long before. Its stderr is appended to `log`."""
        with open(log, "a") as stderr:  # the child holds its own copy of the file
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr,
                                       start_new_session=True)
        self.groups.append(process.pid)
        return process

    # ----- faults ------------------------------------------------------------------------------
    def kill_redis(self, rng):
        """A crash: SIGKILL, and the append-only file's last second gone with the page cache."""
        lost_from, lost_to, lost = self.redis_server.crash()
        with self.ledger.lock:
            if not self.cluster:  # else games, matches and records live on the cluster: nothing of theirs is lost
                self.ledger.lost_seconds.append((lost_from, lost_to))
            self.ledger.aof_bytes_lost += lost
        time.sleep(rng.uniform(0.5, 3))
        self.redis_server.launch_again()

    def freeze_redis(self, rng):
        self.redis_server.freeze()
        time.sleep(rng.uniform(1, 3))
        self.redis_server.thaw()

    def kill_worker(self, rng):
        index = rng.randrange(len(self.workers))
        self.workers[index].kill()
        self.workers[index].wait()
        time.sleep(rng.uniform(0.5, 2))  # compose's restart policy
        self.workers[index] = self.start_worker(index)

    def kill_worker_child(self, rng):
        forked = children(self.workers[rng.randrange(len(self.workers))].pid)
        if forked:
            os.kill(rng.choice(forked), signal.SIGKILL)

    def kill_api_worker(self, rng):
        api_workers = children(self.api.pid)
        if api_workers:
            os.kill(rng.choice(api_workers), signal.SIGKILL)

    def overload(self, rng):
        """Both workers stopped for twice the stall time: moves queue up past the stall threshold,
        and once they go on, every sweep finds games overdue whose jobs wait or run."""
        processes = [pid for worker in self.workers if worker.poll() is None
                     for pid in (worker.pid, *children(worker.pid))]
        for pid in processes:
            _signal(pid, signal.SIGSTOP)
        time.sleep(2 * STALL_SECONDS + rng.uniform(0, 1))
        for pid in processes:
            _signal(pid, signal.SIGCONT)

    def kill_master(self, rng):
        port = rng.choice(self._masters())
        self.cluster.kill(port)
        time.sleep(rng.uniform(1, 4))
        self.cluster.restart(port)  # it rejoins as a replica once its replica took over
        self.write_through_the_idle_api()

    def kill_replica(self, rng):
        """With write replicas on, the writes of its master's games answer 503 until it is back."""
        replicas = [port for port in self.cluster.nodes if port not in self._masters()
                    and self.cluster.nodes[port].poll() is None]
        if replicas:
            port = rng.choice(replicas)
            self.cluster.kill(port)
            time.sleep(rng.uniform(1, 4))
            self.cluster.restart(port)

    def write_through_the_idle_api(self):
        """An API process that slept through the failover (its slot map names the old master)
        writes: 201 or 503, never 500 (the ledger notes every answer)."""
        writer = Client(self.idle_base, self.ledger, random.Random(0), threading.Event())
        for _ in range(10):
            created = writer.call("POST", "/games", retry=False, json={
                "players": 2, "seats": [{"type": "human"}, {"type": "human"}]})
            if created is not None and created.status_code not in (201, 503):
                self.ledger.violate(f"the idle API answered a create {created.status_code}: {created.text[:200]}")

    def freeze_master(self, rng):
        process = self.cluster.nodes[rng.choice(self._masters())]
        process.send_signal(signal.SIGSTOP)
        time.sleep(rng.uniform(1, 3))
        process.send_signal(signal.SIGCONT)

    def _masters(self) -> list[int]:
        masters = []
        for port, process in self.cluster.nodes.items():
            try:
                if process.poll() is None and redis.Redis(port=port, socket_timeout=1).info("replication")[
                        "role"] == "master":
                    masters.append(port)
            except redis.RedisError:
                pass
        return masters

    FAULTS = ("kill_redis", "freeze_redis", "kill_worker", "kill_worker_child", "kill_api_worker", "overload")
    CLUSTER_FAULTS = ("kill_master", "freeze_master", "kill_replica")

    def dead(self) -> list[str]:
        """Processes that are down now and that nothing will start again."""
        down = [name for name, process in (("redis", self.redis_server.process), ("gunicorn", self.api))
                if process.poll() is not None]
        down += [f"ronda worker {i}" for i, w in enumerate(self.workers) if w.poll() is not None]
        check = subprocess.run([sys.executable, "-m", "app.cli", "worker", "--check"], cwd=ROOT, env=self.env,
                               capture_output=True, timeout=30)
        if check.returncode:
            down.append("a ronda worker's process (--check)")
        if len(children(self.api.pid)) < 2:
            down.append("a gunicorn worker")
        return down

    def stop(self):
        stop_all([self.api, *self.workers, *((self.idle_api,) if self.idle_api else ())])
        self.redis_server.stop()
        if self.cluster:
            self.cluster.stop()

    def orphans(self) -> list[int]:
        """Processes of the groups started here still running once every process was stopped: the
        forks of a killed `ronda worker` or gunicorn that outlived it. Then killed."""
        time.sleep(ORPHAN_GRACE_SECONDS)  # a fork whose parent just went exits within its check
        left = [pid for pid in _processes() if _group_of(pid) in self.groups]
        for group in self.groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return left


def _signal(pid: int, signum: int):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:  # it ended meanwhile
        pass


def _processes() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _group_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None if fields[0] == "Z" else int(fields[2])


class Ledger:
    """What the clients saw, and what broke an invariant."""

    def __init__(self):
        self.lock = threading.Lock()
        self.statuses = Counter()
        self.violations: list[str] = []
        self.games: set[str] = set()
        self.matches: set[str] = set()
        self.created_at: dict[str, float] = {}  # game or match id -> when its creation was acknowledged
        # (game, seat) -> (card, when acknowledged), in order
        self.acked: dict[tuple[str, int], list[tuple[str, float]]] = {}
        self.retries = self.faults = self.stream_events = self.aof_bytes_lost = 0
        self.fault_counts = Counter()
        self.lost_seconds: list[tuple[float, float]] = []  # what each crash of Redis lost: (from, to)
        self.lost_to_crashes = Counter()
        self.lost_gone: set[str] = set()  # games and matches gone with a crash
        self.last_calls: dict[str, str] = {}
        self.finished_seen_at: dict[str, float] = {}  # game -> when its players saw it finished and left

    def left_after_a_lost_end(self, resource_id: str) -> bool:
        """An unfinished game its players left: allowed (and counted) only where what they left on
        was lost with a crash: made in a lost second (a retry after the crash, its record lost too,
        made it again), or seen finished in one (the game is back to a turn nobody will play)."""
        made, ended = self.created_at.get(resource_id, 0), self.finished_seen_at.get(resource_id)
        why = ("made" if self.in_a_lost_second(made) else
               "finished" if ended is not None and self.in_a_lost_second(ended) else None)
        if why is None:
            return False
        with self.lock:
            if resource_id not in self.lost_gone:
                self.lost_gone.add(resource_id)
                self.lost_to_crashes[f"games left: {why} in a lost second"] += 1
        return True

    def last_call(self, path: str, what: str):
        """What a client last met on a game or match, said when it does not finish."""
        parts = path.split("/")
        if len(parts) > 2 and parts[1] in ("games", "matches"):
            self.last_calls[parts[2]] = f"{time.strftime('%H:%M:%S')} {what}"

    def created(self, kind: str, resource_id: str):
        with self.lock:
            getattr(self, kind).add(resource_id)
            self.created_at[resource_id] = time.time()

    def in_a_lost_second(self, acknowledged_at: float) -> bool:
        """Acknowledged within the second a crash lost (a write answered just before the kill is in
        it): a loss Redis with `appendfsync everysec` allows, counted apart, never a violation."""
        return any(lost_from <= acknowledged_at <= lost_to + LOSS_SLACK_SECONDS
                   for lost_from, lost_to in self.lost_seconds)

    def lost_with_a_crash(self, kind: str, resource_id: str) -> bool:
        """A game or match that is gone: allowed (and counted) only if it was made in a lost second."""
        with self.lock:
            if resource_id in self.lost_gone:
                return True
            if not self.in_a_lost_second(self.created_at.get(resource_id, 0)):
                return False
            self.lost_gone.add(resource_id)
            self.lost_to_crashes[kind] += 1
        return True

    def note(self, response):
        with self.lock:
            self.statuses[response.status_code] += 1
        if response.status_code >= 500 and not (response.status_code == 503 and
                                                int(response.headers.get("Retry-After") or 0) >= 1):
            self.violate(f"{response.status_code} without Retry-After ≥ 1: {response.request.method} "
                         f"{response.request.path_url}: {response.text[:200]}")

    def violate(self, text: str):
        with self.lock:
            self.violations.append(text)
        print("VIOLATION:", text, file=sys.stderr, flush=True)


class Client:
    """One simulated user: every call is noted; a dropped connection or a 503 is retried with the
    same Idempotency-Key, as the README tells clients to."""

    def __init__(self, base: str, ledger: Ledger, rng: random.Random, stop: threading.Event):
        self.base, self.ledger, self.rng, self.stop = base, ledger, rng, stop
        self.session = requests.Session()

    def call(self, method, path, retry=True, **options):
        headers = options.pop("headers", {})
        if method == "POST":
            headers.setdefault("Idempotency-Key", uuid.uuid4().hex)
        while True:
            try:
                response = self.session.request(method, self.base + path, headers=headers, timeout=40, **options)
            except requests.RequestException as error:  # a gunicorn worker killed under the request
                response = None
                self.ledger.last_call(path, f"{method} {path}: {type(error).__name__}")
            if response is not None:
                self.ledger.last_call(path, f"{method} {path}: {response.status_code} {response.text[:80]}")
                self.ledger.note(response)
                if response.status_code not in (429, 503) and not (response.status_code == 409 and
                                                                   "in_progress" in response.text):
                    return response
                if not retry:
                    return response
                time.sleep(float(response.headers.get("Retry-After") or 1) if response.status_code != 409 else 0.5)
            elif not retry:
                return None
            else:
                time.sleep(0.5)

    def retry_compares(self, method, path, first, **options):
        """Send the same request again, same key: the answer must be the first one (unless the first
        was answered in a second a crash lost, with its record and maybe its game)."""
        first_at = time.time()
        again = self.call(method, path, **options)
        with self.ledger.lock:
            self.ledger.retries += 1
        if again.headers.get("Idempotent-Replayed") == "applied":  # the first answer's record was lost
            same = again.status_code == first.status_code and again.json().get("events") == first.json().get("events")
        else:
            same = again.status_code == first.status_code and again.json() == first.json()
        if not same and self.ledger.in_a_lost_second(first_at):
            with self.ledger.lock:
                self.ledger.lost_to_crashes["idempotency records"] += 1
        elif not same:
            self.ledger.violate(f"idempotent retry of {method} {path} answered {again.status_code} "
                                f"{again.text[:120]} after {first.status_code} {first.text[:120]}")


def play_human_games(client: Client, opponents: list[dict]):
    """Create games against `opponents` seats and play the human seats to the end, again and again."""
    while not client.stop.is_set():
        seats = [{"type": "human", "name": "H"}, *opponents]
        body = {"players": len(seats), "rules": {"preset": client.rng.choice(["simple", "classic"]), "target": 11},
                "seats": seats}
        key = uuid.uuid4().hex
        created = client.call("POST", "/games", json=body, headers={"Idempotency-Key": key})
        if created.status_code != 201:
            client.ledger.violate(f"create answered {created.status_code}: {created.text[:200]}")
            return
        if client.rng.random() < 0.3:
            client.retry_compares("POST", "/games", created, json=body, headers={"Idempotency-Key": key})
        game_id = created.json()["game"]["id"]
        client.ledger.created("games", game_id)
        tokens = {t["seat"]: t["token"] for t in created.json()["tokens"]}
        if play_to_the_end(client, game_id, tokens) == "lost":
            # Made in a second Redis lost: the client retries its create with its key, as the README
            # says, and must get the game it was told of (same id and tokens), which it plays on.
            again = client.call("POST", "/games", json=body, headers={"Idempotency-Key": key})
            if again.status_code != 201 or again.json()["game"]["id"] != game_id or \
                    {t["seat"]: t["token"] for t in again.json()["tokens"]} != tokens:
                client.ledger.violate(f"the create of {game_id} retried after a lost second answered "
                                      f"{again.status_code} {again.text[:160]}: not what the client was told")
                return
            with client.ledger.lock:
                client.ledger.lost_to_crashes["games made again by their retry (kept)"] += 1
            play_to_the_end(client, game_id, tokens)


def play_to_the_end(client: Client, game_id: str, tokens: dict[int, str]) -> str | None:
    """"lost" when the game went with a second a crash lost (its creator may make it again)."""
    version = 0
    while True:
        for seat, token in tokens.items():
            auth = {"Authorization": f"Bearer {token}"}
            view = client.call("GET", f"/games/{game_id}/view", headers=auth,
                               params={"after_version": version, "wait_seconds": 2} if len(tokens) == 1 else None)
            if view.status_code != 200:
                # 404: made in a lost second (401 would be a remake with other tokens: never now)
                if view.status_code == 404 and client.ledger.lost_with_a_crash("games", game_id):
                    return "lost"
                client.ledger.violate(f"view of {game_id} answered {view.status_code}: {view.text[:200]}")
                return None
            state = view.json()
            version = state["version"]
            if state["status"] == "finished":
                client.ledger.finished_seen_at[game_id] = time.time()
                return None
            if seat not in state["awaiting"] or not state["legal_actions"]:
                continue
            action = client.rng.choice(state["legal_actions"])
            key = uuid.uuid4().hex
            headers = {**auth, "If-Match": f'"{version}"', "Idempotency-Key": key}
            answer = client.call("POST", f"/games/{game_id}/actions", json=action, headers=headers)
            if answer.status_code == 200:
                if action["type"] == "play":
                    with client.ledger.lock:
                        client.ledger.acked.setdefault((game_id, seat), []).append((action["card"], time.time()))
                if client.rng.random() < 0.2:
                    client.retry_compares("POST", f"/games/{game_id}/actions", answer, json=action, headers=headers)
            elif answer.status_code == 404 and client.ledger.lost_with_a_crash("games", game_id):
                return "lost"
            elif answer.status_code not in (409, 412):
                client.ledger.violate(f"action on {game_id} answered {answer.status_code}: {answer.text[:200]}")


def watch_games(client: Client):
    """A spectator on SSE: follows live games, reconnecting with Last-Event-ID."""
    while not client.stop.is_set():
        listed = client.call("GET", "/games", params={"status": "active", "page_size": 20})
        games = listed.json() if listed.status_code == 200 else []
        if not games:
            time.sleep(1)
            continue
        game_id, last = client.rng.choice(games)["id"], None
        deadline = time.monotonic() + 15
        try:
            with client.session.get(f"{client.base}/games/{game_id}/stream", stream=True, timeout=20,
                                    headers={"Last-Event-ID": str(last)} if last else {}) as stream:
                client.ledger.note(stream)
                for line in stream.iter_lines():
                    if line.startswith(b"event: "):
                        with client.ledger.lock:
                            client.ledger.stream_events += 1
                    if time.monotonic() > deadline or client.stop.is_set():
                        break
        except requests.RequestException:
            pass


def run_matches(client: Client):
    """Built-in bot matches, one after another."""
    while not client.stop.is_set():
        started = client.call("POST", "/matches", json={"bots": ["greedy", "random"], "games": 4,
                                                          "rules": {"preset": "simple", "target": 11}})
        if started.status_code != 202:
            client.ledger.violate(f"match answered {started.status_code}: {started.text[:200]}")
            return
        client.ledger.created("matches", started.json()["id"])
        wait_for_match(client, started.json()["id"])


def wait_for_match(client, match_id, seconds=None):
    deadline = time.monotonic() + (seconds or 1e9)
    while time.monotonic() < deadline and not client.stop.is_set():
        if client.call("GET", f"/matches/{match_id}").json().get("status") == "finished":
            return True
        time.sleep(1)
    return False


def outside_bot(client: Client):
    """A registered bot that does what the README says: long-poll its turns, read the view, act."""
    bot = client.call("POST", "/bots", json={"name": "Chaos bot"}).json()
    auth = {"Authorization": f"Bearer {bot['token']}"}
    while not client.stop.is_set():
        match = client.call(
            "POST",
            "/matches",
            json={
                "bots": [bot["bot"]["entrant"], "greedy"],
                "games": 2,
                "move_seconds": 3,  # a match left mid-game at the end forfeits within 5 × 3 s
                "rules": {"preset": "simple", "target": 11},
            },
        )
        client.ledger.created("matches", match.json()["id"])
        cursor = None
        while client.call("GET", f"/matches/{match.json()['id']}").json()["status"] != "finished":
            if client.stop.is_set():
                return
            turns = client.call("GET", "/bots/me/turns", headers=auth,
                                params={"wait_seconds": 2, **({"after": cursor} if cursor else {})}).json()
            cursor = turns["cursor"]
            for turn in turns["turns"]:
                view = client.call("GET", f"/games/{turn['game_id']}/view", headers=auth).json()
                if view.get("status") == "active" and view["seat"] in view["awaiting"]:
                    client.call(
                        "POST",
                        f"/games/{turn['game_id']}/actions",
                        json=client.rng.choice(view["legal_actions"]),
                        headers={**auth, "If-Match": f'"{view["version"]}"'},
                    )


BAD_INPUTS = [
    ("GET", "/bots/me/turns?after=18446744073709551616", {}),
    ("POST", "/games", {"data": "{not json", "headers": {"Content-Type": "application/json"}}),
    ("POST", "/games", {"json": {"players": 9}}),
    ("POST", "/games", {"json": {"players": 2, "rules": {"preset": "nope"}}}),
    ("GET", "/games/%00%ff", {}),
    ("GET", "/games?page=-1", {}),
    ("POST", "/matches", {"json": {"bots": ["greedy"] * 5}}),
    ("GET", "/games/x/stream", {"headers": {"Last-Event-ID": "abc"}}),
    ("POST", "/games/x/actions", {"json": {"type": "play"}, "headers": {"If-Match": "*"}}),
]


def bad_inputs(client: Client):
    while not client.stop.wait(0.5):
        method, path, options = client.rng.choice(BAD_INPUTS)
        answer = client.call(method, path, retry=False, **options)
        if answer is not None and answer.status_code < 400:
            client.ledger.violate(f"bad input {method} {path} answered {answer.status_code}")


def inject_faults(shape: Shape, ledger: Ledger, rng: random.Random, stop: threading.Event, every: float):
    faults = Shape.FAULTS + (Shape.CLUSTER_FAULTS if shape.cluster else ())
    while not stop.wait(rng.expovariate(1 / every)):
        fault = rng.choice(faults)
        print(f"{time.strftime('%H:%M:%S')} fault: {fault}", file=sys.stderr, flush=True)
        getattr(shape, fault)(rng)
        ledger.fault_counts[fault] += 1


def sample_connections(shape: Shape, ledger: Ledger, stop: threading.Event, peak: list[int]):
    while not stop.wait(1):
        try:
            peak[0] = max(peak[0], redis.Redis.from_url(shape.redis_url, socket_timeout=1).info("clients")[
                "connected_clients"])
        except redis.RedisError:
            pass


def check_logs(shape: Shape, ledger: Ledger):
    """Every acknowledged play is in its game's log, in order; no card is played twice."""
    reader = Client(shape.base, ledger, random.Random(0), threading.Event())
    for game_id in sorted(ledger.games):
        events = []
        while True:
            page = reader.call("GET", f"/games/{game_id}/events", params={"after": len(events), "limit": 500})
            if page.status_code != 200:
                break
            events += page.json()
            if len(page.json()) < 500:
                break
        if page.status_code == 404 and game_id in ledger.lost_gone:
            continue  # made in a second a crash lost: counted by _wait_finished
        played = [(e["seat"], e["card"]) for e in events if e["type"] == "play"]
        for (acked_game, seat), cards in ledger.acked.items():
            if acked_game != game_id:
                continue
            logged = [card for s, card in played if s == seat]
            position = 0
            for card, acknowledged_at in cards:
                if ledger.in_a_lost_second(acknowledged_at):
                    # Maybe lost, maybe kept: it places nothing after it (played again later, the
                    # same card would move the search past the plays made since the crash).
                    if card not in logged[position:]:
                        ledger.lost_to_crashes["plays"] += 1
                    continue
                try:
                    position = logged.index(card, position) + 1
                except ValueError:
                    ledger.violate(f"game {game_id}: acknowledged play {card} of seat {seat} is not in the log")
        by_round = Counter((e.get("round"), e["card"]) for e in _with_rounds(events) if e["type"] == "play")
        if any(count > 1 for count in by_round.values()):
            ledger.violate(f"game {game_id}: a card played twice in one round")


def _with_rounds(events):
    round_index = None
    for event in events:
        if event["type"] == "round_start":
            round_index = event["round"]
        yield {**event, "round": round_index}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fault-every", type=float, default=8.0, help="mean seconds between faults")
    parser.add_argument("--cluster", action="store_true", help="games on a 3+3 Redis Cluster, queues on plain Redis")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="ronda-chaos-"))
    ledger, stop = Ledger(), threading.Event()
    shape = Shape(workdir, args.cluster, ledger)
    shape.start()
    started = time.monotonic()
    mix = [
        (play_human_games, [{"type": "bot", "bot": "greedy"}]),
        (play_human_games, [{"type": "bot", "bot": "random"}]),
        (play_human_games, [{"type": "bot", "bot": "greedy"}]),
        (play_human_games, [{"type": "human"}]),
        (watch_games,),
        (watch_games,),
        (run_matches,),
        (outside_bot,),
        (bad_inputs,),
    ]
    threads = []
    for index, (work, *extra) in enumerate(mix):
        client = Client(shape.base, ledger, random.Random(f"{args.seed}:{index}"), stop)
        threads.append(threading.Thread(target=work, args=(client, *extra), daemon=True))
    peak = [0]
    faults = threading.Thread(target=inject_faults, args=(shape, ledger, rng, stop, args.fault_every), daemon=True)
    background = [faults, threading.Thread(target=sample_connections, args=(shape, ledger, stop, peak), daemon=True)]
    for thread in threads + background:
        thread.start()
    jobs_per_move = None
    try:
        time.sleep(args.seconds)
        stop.set()  # clients finish the game in hand only if it ends within the drain
        faults.join()
        drain = time.monotonic() + DRAIN_SECONDS
        for thread in threads:
            thread.join(max(0.1, drain - time.monotonic()))
        unfinished = _unfinished(shape, ledger, drain)
        for game_id, seen in unfinished.items():
            ledger.violate(f"game {game_id} did not finish: {seen}")
        matches = _finished_matches(shape, ledger, time.monotonic() + DRAIN_SECONDS)
        check_ladder(shape, ledger, matches)
        jobs_per_move = check_jobs_per_move(shape, ledger)
        check_logs(shape, ledger)
        dead = shape.dead()
        for process in dead:
            ledger.violate(f"{process} is down and nothing restarts it")
        if peak[0] > REDIS_CONNECTION_BOUND:
            ledger.violate(f"{peak[0]} Redis connections (bound {REDIS_CONNECTION_BOUND})")
    finally:
        stop.set()
        shape.stop()
        orphans = shape.orphans()
    for pid in orphans:
        ledger.violate(f"process {pid} outlived the process that started it")
    report = {
        "seed": args.seed,
        "cluster": args.cluster,
        "seconds": round(time.monotonic() - started),
        "faults": dict(ledger.fault_counts),
        "games": len(ledger.games),
        "matches": len(ledger.matches),
        "jobs_per_move": jobs_per_move,
        "acknowledged_plays": sum(map(len, ledger.acked.values())),
        "idempotent_retries": ledger.retries,
        "stream_events": ledger.stream_events,
        "aof_bytes_lost": ledger.aof_bytes_lost,
        "lost_to_crashes": dict(ledger.lost_to_crashes),
        "responses": dict(sorted(ledger.statuses.items())),
        "peak_redis_connections": peak[0],
        "violations": ledger.violations,
    }
    print(json.dumps(report, indent=1))
    if ledger.violations:
        print(f"{len(ledger.violations)} violation(s): replay with --seed {args.seed} --seconds {args.seconds:g}"
              f"{' --cluster' if args.cluster else ''}; processes' logs in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if ledger.violations else 0


def _finished_matches(shape, ledger, deadline) -> list[dict]:
    """Every match the clients started, once finished; a match still running at the deadline is a
    violation (bot-only matches are reconciled whatever Redis lost; an outside bot that stopped
    playing forfeits on its timers)."""
    finished, pending = _wait_finished(shape, ledger, "matches", ledger.matches, deadline)
    for match_id, seen in pending.items():
        ledger.violate(f"match {match_id} did not finish: {seen}")
    return finished


def check_ladder(shape, ledger, matches: list[dict], seconds: float = 60):
    """Each rated match game counted once (the ladder started empty): every entrant has as many
    rated games as its finished matches between two different entrants played. Lost ratings are
    applied again by the reconcilers (within the stall time): they are waited for."""
    expected = Counter()
    for match in matches:
        if len(set(match["bots"])) == 2 and match["dealing"] == "server":
            for bot in match["bots"]:
                expected[bot] += match["games_done"]
    reader = Client(shape.base, ledger, random.Random(0), threading.Event())
    deadline = time.monotonic() + seconds
    while True:
        counted = {row["entrant"]: row["games"] for row in reader.call("GET", "/ratings").json()}
        if all(counted.get(bot, 0) == games for bot, games in expected.items()) or time.monotonic() > deadline:
            break
        time.sleep(1)
    for bot, games in expected.items():
        if counted.get(bot, 0) != games:
            ledger.violate(f"the ladder counts {counted.get(bot, 0)} rated games of {bot}, its matches played {games}")


def check_jobs_per_move(shape, ledger) -> float | None:
    """Bot jobs run (ronda_job_duration_seconds, by every worker process, the killed ones' files
    kept) against bot moves made (ronda_actions_applied_total by bot seats): no move computed twice."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(shape.worker_metrics))
    jobs = registry.get_sample_value("ronda_job_duration_seconds_count", {"job": "bot_turn"}) or 0
    moves = registry.get_sample_value("ronda_actions_applied_total", {"by": "bot"}) or 0
    if not moves:
        return None
    if jobs / moves > JOBS_PER_MOVE_BOUND:
        ledger.violate(f"{jobs:.0f} bot jobs run for {moves:.0f} bot moves: {jobs / moves:.3f} a move")
    return round(jobs / moves, 3)


def _unfinished(shape, ledger, deadline) -> dict[str, str]:
    """Games still not finished at the deadline: the clients stopped, so every game left owes
    only bots' moves, or is a human game this harness abandoned mid-way (those are left out)."""
    return _wait_finished(shape, ledger, "games", ledger.games, deadline)[1]


def _wait_finished(shape, ledger, resources: str, ids, deadline) -> tuple[list[dict], dict[str, str]]:
    """Read `/<resources>/<id>` until each is finished or the deadline passes: (the finished ones'
    last answers, the ones still not finished with what was last read of each)."""
    reader = Client(shape.base, ledger, random.Random(0), threading.Event())
    finished, pending = [], dict.fromkeys(ids, "")
    clients_last = {resource_id: ledger.last_calls.get(resource_id) for resource_id in ids}
    first_pass = True  # each is read once at least, however long the clients took to stop
    while pending and (first_pass or time.monotonic() < deadline):
        first_pass = False
        for resource_id in list(pending):
            answer = reader.call("GET", f"/{resources}/{resource_id}")
            if (answer.status_code == 404 and ledger.lost_with_a_crash(resources, resource_id)) or (
                answer.status_code == 200 and resources == "games" and ledger.left_after_a_lost_end(resource_id)
            ):
                del pending[resource_id]
            elif answer.status_code == 200 and answer.json()["status"] == "finished":
                finished.append(answer.json())
                del pending[resource_id]
            else:
                pending[resource_id] = (f"{_last_seen(answer, ledger.created_at.get(resource_id))}; a client's "
                                        f"last call: {clients_last[resource_id]}")
        time.sleep(1)
    return finished, pending


def _last_seen(answer, created_at: float | None) -> str:
    body = answer.json() if answer.status_code in (200, 404) else {}
    made = f"made {time.time() - created_at:.0f} s ago" if created_at else "made when unknown"
    if "games_done" in body:  # a match
        return (f"{answer.status_code}, {made}, status {body.get('status')}, {body['games_done']} of "
                f"{body.get('games')} games done, bots {body.get('bots')}")
    return (f"{answer.status_code}, {made}, status {body.get('status')}, version {body.get('version')}, "
            f"awaiting {body.get('awaiting')}, seats {[seat.get('type') for seat in body.get('seats') or []]}")


if __name__ == "__main__":
    sys.exit(main())
