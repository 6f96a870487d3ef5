"""The chaos soak's short mode: the production shape (redis-server with an append-only file,
gunicorn from the image's settings, two `ronda worker`s) under a realistic mix of clients, with
Redis, worker, worker-child and API-worker faults at random moments (a fixed seed). Every
invariant of bench/chaos.py must hold."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a soak: left out of the fast loop (pytest -m 'not slow')

ROOT = Path(__file__).resolve().parent.parent


def test_a_short_chaos_soak_breaks_no_invariant():
    run = subprocess.run([sys.executable, "bench/chaos.py", "--seconds", "30", "--seed", "7", "--fault-every", "4"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    report = json.loads(run.stdout[run.stdout.index("{"):run.stdout.rindex("}") + 1])
    print(run.stdout)
    assert report["violations"] == [], run.stderr[-3000:]
    assert run.returncode == 0
    # Invariants only: how much the soak gets done in its time depends on the machine. It did
    # something of each kind, and its faults come by the clock, not by the work done.
    assert sum(report["faults"].values()) >= 5
    assert report["games"] > 0 and report["acknowledged_plays"] > 0 and report["stream_events"] > 0
