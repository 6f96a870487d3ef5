"""The linter and the type checker the project is configured with (pyproject.toml): ruff (pyflakes,
pycodestyle, bugbear, pyupgrade, simplify, ruff's rules) clean on the service, its tests and its
benchmarks; mypy clean on the service, checking the bodies of unannotated functions too."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing_in_the_service_its_tests_or_its_benchmarks():
    checked = run("ruff", "check", "--no-cache", "app", "workers", "tests", "bench")
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow
def test_mypy_finds_nothing_in_the_service():
    checked = run("mypy", "--no-incremental", "--cache-dir", "/dev/null")  # packages from pyproject.toml
    assert checked.returncode == 0, checked.stdout + checked.stderr
