"""The linter and the type checker the project is configured with (pyproject.toml), clean on the
service's code: ruff (pyflakes, pycodestyle, bugbear, pyupgrade, simplify, ruff's rules) and mypy."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing_in_the_service():
    checked = run("ruff", "check", "--no-cache", "app", "workers")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_mypy_finds_nothing_in_the_service():
    checked = run("mypy", "--no-incremental", "--cache-dir", "/dev/null")  # packages from pyproject.toml
    assert checked.returncode == 0, checked.stdout + checked.stderr
