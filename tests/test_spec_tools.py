"""The committed spec as integrators' own tools see it (clients/spec-check): Redocly's recommended
rules and Spectral's spectral:oas find no error, and two generators the project does not ship
(@hey-api/openapi-ts and orval) give clients that compile under tsc --strict, stream messages
typed and narrowed on `event` included (clients/spec-check/use.ts)."""

import subprocess
from pathlib import Path

import pytest

from tooling import require

pytestmark = pytest.mark.slow  # generated clients: left out of the fast loop (pytest -m 'not slow')

CHECK = Path(__file__).resolve().parent.parent / "clients" / "spec-check"


def test_the_spec_lints_without_errors_and_two_generated_clients_compile_strictly():
    npm = require("npm", "Node.js 20 with npm (Debian: apt-get install nodejs npm)")
    for script in (["ci", "--no-audit", "--no-fund"], ["run", "-s", "lint"], ["run", "-s", "generate"],
                   ["run", "-s", "check"]):
        run = subprocess.run([npm, *script], cwd=CHECK, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, f"npm {' '.join(script)}:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
