"""The README's API walkthrough, run as written (bash, curl and python3, as a newcomer pastes it)
against a live server: it must work whichever seat the seed makes start."""

import json
import re
import os
import subprocess
import sys
from pathlib import Path

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
