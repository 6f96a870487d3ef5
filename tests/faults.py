"""Faults injected into real processes: a Redis client that fails one chosen call, and helpers
that start `ronda worker` processes and play a human seat until a game ends."""

import os
import subprocess
import sys
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from http_helpers import act, bearer


class FaultyRedis(redis.Redis):
    """A client to a real Redis that fails its `fail_at`-th call (a pipeline is one call) with the
    error an outage gives: before sending it (nothing applied) or after (applied, answer lost)."""

    calls = 0
    fail_at = None
    after = False

    @classmethod
    def to(cls, url):
        return cls.from_url(url, socket_timeout=1.0, retry=Retry(NoBackoff(), 0))

    def fail(self, nth_call_from_now: int, after: bool):
        self.fail_at, self.after = self.calls + nth_call_from_now, after

    def _count(self, run):
        self.calls += 1
        failing = self.calls == self.fail_at
        if failing and not self.after:
            raise redis.ConnectionError("injected: Redis refused the call")
        result = run()
        if failing:
            raise redis.ConnectionError("injected: the answer was lost")
        return result

    def execute_command(self, *args, **options):
        return self._count(lambda: super(FaultyRedis, self).execute_command(*args, **options))

    def pipeline(self, transaction=True, shard_hint=None):
        pipe = super().pipeline(transaction, shard_hint)
        execute = pipe.execute
        pipe.execute = lambda raise_on_error=True: self._count(lambda: execute(raise_on_error))
        return pipe


def start_worker(redis_url, queue_name, stall_seconds=1, cluster_url=None, **environment):
    return subprocess.Popen([sys.executable, "-m", "app.cli", "worker"],
                            env=worker_env(redis_url, queue_name, stall_seconds, cluster_url, **environment),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def worker_env(redis_url, queue_name, stall_seconds=1, cluster_url=None, **environment):
    return {**os.environ, "REDIS_URL": redis_url, "RONDA_BOT_QUEUE": queue_name,
            "RONDA_BOT_STALL_SECONDS": str(stall_seconds),
            **({"REDIS_CLUSTER_URL": cluster_url} if cluster_url else {}), **environment}


def worker_check(redis_url, queue_name) -> int:
    """`ronda worker --check`'s exit code, as a container's health check runs it."""
    return subprocess.run([sys.executable, "-m", "app.cli", "worker", "--check"],
                          env=worker_env(redis_url, queue_name), capture_output=True, timeout=30).returncode


def children(pid: int) -> list[int]:
    """A process's child processes (Linux: each thread lists those it forked)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task") if os.path.exists(f"/proc/{pid}/task") else ():
        try:
            with open(f"/proc/{pid}/task/{task}/children") as listing:
                found += [int(child) for child in listing.read().split()]
        except FileNotFoundError:
            pass
    return found


def stop(process):
    """SIGTERM, and the process gone within 15 s (else it is killed, and the test fails: a worker
    must stop when asked)."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        raise


def stop_all(processes, seconds: float = 15):
    """SIGTERM to every process at once, then each waited for (SIGKILL past `seconds`)."""
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.kill()


def play_human_until_over(client, game_id, token, seconds=60):
    """Act for the human seat whenever it is its turn, re-reading the view after any refusal."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        rv = client.get(f"/games/{game_id}/view", headers=bearer(token))
        view = rv.json
        if rv.status_code != 200:
            time.sleep(0.05)
        elif view["status"] == "finished":
            return view
        if view["seat"] in view["awaiting"]:
            act(client, game_id, token, view["legal_actions"][0], view["version"])
        else:
            time.sleep(0.02)
    raise AssertionError(f"game {game_id} did not finish within {seconds} s")
