"""TypeScript types generated from the committed spec type-check, and narrow the Event union on `type`."""

import subprocess
from pathlib import Path

import pytest

from tooling import require

pytestmark = pytest.mark.slow  # generated clients: left out of the fast loop (pytest -m 'not slow')

CLIENT = Path(__file__).resolve().parent.parent / "clients" / "typescript"


def test_generated_typescript_types_check_strictly_and_narrow_events():
    npm = require("npm", "Node.js 20 with npm (Debian: apt-get install nodejs npm)")
    for script in (["ci", "--no-audit", "--no-fund"], ["run", "-s", "generate"], ["run", "-s", "check"]):
        run = subprocess.run([npm, *script], cwd=CLIENT, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, f"npm {' '.join(script)}:\n{run.stdout}\n{run.stderr}"
