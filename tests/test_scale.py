"""Bot games on the cluster at the load of bench/scale.py's short mode: every one finishes, and a
bot move costs the cluster what it costs plain Redis (no topology fetch, no new connection per move)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # load on a Redis Cluster: left out of the fast loop (pytest -m 'not slow')

ROOT = Path(__file__).resolve().parent.parent


def test_a_hundred_concurrent_bot_games_finish_on_the_cluster_with_no_topology_work_per_move():
    run = subprocess.run([sys.executable, "bench/scale.py", "--bot-games", "100", "--target", "11", "--seconds", "0",
                          "--stores", "cluster", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    print(run.stdout, run.stderr[-3000:])
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["finished"] == result["games"] == 100
    commands = result["commands_per_action"]
    # A long-lived cluster client per process learns the slots once: per move, no CLUSTER SLOTS,
    # no COMMAND (the 90 KB reply) and no INFO, as each job's new client did.
    topology = sum(count for name, count in commands.items() if name.split("|")[0] in ("cluster", "command"))
    assert topology < 0.01, commands
    assert result["bytes_per_action"] < 40_000, result  # 94 KB a move with a client per job
