"""The README's API walkthrough, run as written (bash, curl and python3, as a newcomer pastes it)
against a live server: it must work whichever seat the seed makes start. And every shell block of
README.md and docs/, run in order against the server the README's first command starts."""

import json
import re
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_production_server import free_port
from tooling import require

ROOT = Path(__file__).resolve().parent.parent


def walkthrough() -> str:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- walkthrough -->\s*```sh\n(.*?)```\s*<!-- /walkthrough -->", readme, re.S)
    assert block, "README.md has no marked walkthrough block"
    return block.group(1)


def answers(output: str) -> list:
    """Every JSON value the walkthrough printed, in order (curl ends none with a newline)."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while (at := _next_value(output, at)) < len(output):
        value, at = decoder.raw_decode(output, at)
        values.append(value)
    return values


def _next_value(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def test_the_readme_walkthrough_runs_as_written_whichever_seat_starts(live_server):
    require("curl", "apt-get install curl")
    script = walkthrough().replace("localhost:8000", live_server.removeprefix("http://"))
    starters = set()
    for _ in range(40):  # the seed picks the first dealer: run until both seats have started a game
        run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True,
                             timeout=60, env={"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
        assert run.returncode == 0, run.stderr
        values = answers(run.stdout)
        problems = [v for v in values if isinstance(v, dict) and str(v.get("type", "")).startswith("urn:ronda:problem")]
        assert not problems, problems
        acted = next(v for v in values if isinstance(v, dict) and set(v) == {"game", "events"})
        assert acted["events"] and acted["events"][0]["type"] in ("play", "declaration", "pass")
        claimed = next(v for v in values if isinstance(v, dict) and v.get("seat") == 1 and "token" in v)
        assert claimed["game"]["status"] == "active"
        starters.add(acted["game"]["seat"])
        if starters == {0, 1}:
            return
    raise AssertionError(f"40 games all started with seat {starters}")


SHELL_BLOCK = re.compile(r"```(?:sh|bash)\n(.*?)```", re.S)
# The two commands that set up (they install; CI runs the second) and the benchmarks (minutes each,
# run by hand): checked for their syntax only.
NOT_RUN_HERE = ("pip install", "bench/")
# curl as a careful script runs it: an HTTP error stops the run (a timeout, as a stream's
# --max-time, does not).
STRICT_CURL = """curl() { command curl --fail-with-body "$@"; local status=$?
  if [ "$status" = 22 ]; then echo "an HTTP error from: curl $*" >&2; exit 22; fi; return 0; }
"""


def shell_blocks() -> list[tuple[str, str]]:
    """(where, text) of every sh or bash block of README.md, then of docs/*.md, in order."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        found += [(path.name, block) for block in SHELL_BLOCK.findall(path.read_text())]
    return found


@pytest.mark.slow
def test_every_shell_block_of_the_readme_and_docs_runs_as_pasted(tmp_path):
    """Issue 53: against the server the README's first command starts (`ronda serve`, its embedded
    store), with nothing else set up, every block runs in one shell, in order, as a newcomer pastes
    them: the variables one block sets are the next one's."""
    require("curl", "apt-get install curl")
    blocks = shell_blocks()
    run_here = [(where, block) for where, block in blocks if not any(mark in block for mark in NOT_RUN_HERE)]
    for where, block in blocks:
        checked = subprocess.run(["bash", "-n", "-c", block], capture_output=True, text=True)
        assert checked.returncode == 0, f"{where}: {checked.stderr}"
    assert {where for where, _ in run_here} >= {"README.md", "apps.md"}
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)  # where the first command installs
    port = free_port()
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "HOME": str(tmp_path),
           "XDG_DATA_HOME": str(tmp_path / "data")}
    server = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port)], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{port}")
        script = STRICT_CURL + "\n".join(block for _, block in run_here)
        run = subprocess.run(["bash", "-c", script.replace("localhost:8000", f"127.0.0.1:{port}")], cwd=tmp_path,
                             capture_output=True, text=True, timeout=240, env=env)
        assert run.returncode == 0, run.stderr[-3000:]
        assert "Traceback" not in run.stderr, run.stderr[-3000:]
        assert "urn:ronda:problem" not in run.stdout  # no answer was a problem (a stream's `problem` event too)
        assert '"verified": true' in run.stdout  # `ronda webhooks listen` got its test event, signed
    finally:
        server.terminate()
        server.wait(timeout=30)


def wait_ready(base: str, seconds: float = 120):
    import time
    import urllib.request
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(f"{base}/health/ready", timeout=1)
            return
        except OSError:
            assert time.monotonic() < deadline, "ronda serve did not start"
            time.sleep(0.2)
