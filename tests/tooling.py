"""Tools beyond Python that some tests need (Node.js, Chromium): found, or a loud skip; under CI, a failure."""

import os
import shutil

import pytest


def require(program: str, how_to_install: str) -> str:
    """The program's path; without it these tests cannot run, which CI (CI=true) must never accept."""
    path = shutil.which(program)
    if path:
        return path
    missing(f"{program} not found; install it to run these tests: {how_to_install}")


def missing(message: str, whole_module: bool = False):
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(f"SKIPPED, NOT PASSED: {message}", allow_module_level=whole_module)
