"""A Python client generated from the committed spec, unmodified, plays a game on a live server."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from app import create_app

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def generated_client(tmp_path_factory):
    out = tmp_path_factory.mktemp("sdk") / "ronda_client"
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run([str(bin_dir / "openapi-python-client"), "generate", "--path", str(ROOT / "openapi/openapi.json"),
                    "--meta", "none", "--output-path", str(out)], check=True, env=env, capture_output=True)
    sys.path.insert(0, str(out.parent))
    sys.path.insert(0, str(ROOT / "examples"))
    yield out
    sys.path.remove(str(out.parent))


@pytest.fixture(scope="module")
def live_server(redis_url):
    app = create_app({"REDIS_URL": redis_url, "BOT_DISPATCH": "inprocess",
                      "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_the_generated_client_plays_a_whole_game_against_a_bot(generated_client, live_server):
    import play_against_a_bot
    scores = play_against_a_bot.play(live_server, preset="simple")
    assert max(scores) >= 41


def test_the_generated_client_reads_problems_as_typed_objects(generated_client, live_server):
    from ronda_client import Client
    from ronda_client.api.games import get_game
    from ronda_client.models import Problem
    problem = get_game.sync("no-such-game", client=Client(base_url=live_server))
    assert isinstance(problem, Problem) and problem.code == "game_not_found" and problem.status == 404
