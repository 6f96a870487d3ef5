"""The production shape: gunicorn with gevent workers holds many open event streams at once."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STREAMS = 40


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def gunicorn(redis_url):
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "RONDA_SSE_KEEPALIVE_SECONDS": "1"}
    process = subprocess.Popen([sys.executable, "-m", "gunicorn", "--worker-class", "gevent", "--worker-connections",
                                "1000", "--workers", "1", "--bind", f"127.0.0.1:{port}", "app:create_app()"],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(f"{base}/health/ready", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    yield base, port
    process.terminate()
    process.wait(timeout=10)


def call(base, method, path, body=None, headers=None):
    request = urllib.request.Request(f"{base}{path}", method=method, data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def open_stream(port, game_id):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"GET /games/{game_id}/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode())
    return sock


def read_until(sock, needle: bytes, count: int) -> bytes:
    data = b""
    while data.count(needle) < count:
        chunk = sock.recv(65536)
        assert chunk, "the stream closed"
        data += chunk
    return data


def test_many_streams_stay_open_and_each_gets_every_event(gunicorn):
    base, port = gunicorn
    created = call(base, "POST", "/games", {"players": 2, "seats": [{"type": "human"}, {"type": "human"}]})
    game_id, seat = created["game"]["id"], created["game"]["awaiting"][0]
    token = next(t["token"] for t in created["tokens"] if t["seat"] == seat)
    streams = [open_stream(port, game_id) for _ in range(STREAMS)]
    for sock in streams:
        assert b"event: snapshot" in read_until(sock, b"event: snapshot", 1)
    view = call(base, "GET", f"/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"})
    call(base, "POST", f"/games/{game_id}/actions", view["legal_actions"][0],
         {"Authorization": f"Bearer {token}", "If-Match": f'"{view["version"]}"'})
    for sock in streams:
        data = read_until(sock, b"event: event", 2)  # the play, then its capture or drop
        assert b'"type":"play"' in data
        sock.close()
