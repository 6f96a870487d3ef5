"""RQ is borrowed past its public API in one module (workers/runner.py: the bot worker's job
heartbeat, registration and scheduler takeover): these tests fail when an upgrade of rq changes a
borrowed part underneath, naming it (issue 65, 6)."""

from importlib.metadata import version
from pathlib import Path
from tomllib import loads

import pytest
import rq
from rq import SimpleWorker

from borrowed import source_digest
from workers import runner


@pytest.mark.parametrize("name", sorted(runner.BORROWED_FROM_RQ))
def test_each_borrowed_part_of_rq_is_the_source_the_worker_was_written_against(name):
    digest = source_digest(rq, name)
    assert digest == runner.BORROWED_FROM_RQ[name], (
        f"rq {version('rq')} changed {name}: read it against workers/runner.py, then record its new digest {digest}")


def test_every_method_the_bot_worker_overrides_is_named_among_the_borrowed_parts():
    overridden = {f"SimpleWorker.{name}" for name, value in vars(runner.BotWorker).items()
                  if callable(value) and hasattr(SimpleWorker, name) and not name.startswith("__")}
    assert overridden and overridden <= set(runner.BORROWED_FROM_RQ)


def test_the_pin_keeps_rq_below_its_next_minor_release():
    project = loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
    assert [spec for spec in project["dependencies"] if spec.startswith("rq")] == ["rq>=3.0,<3.1"]
