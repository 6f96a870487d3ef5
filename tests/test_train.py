"""The master's training (bench/train.py) end to end on tiny settings, and resumed after a stop."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import train

from app.bots.value import FEATURES, ValueModel

pytestmark = pytest.mark.slow  # a training run: left out of the fast loop (pytest -m 'not slow')


def test_a_short_training_run_writes_loadable_weights_with_their_provenance_and_resumes_where_it_stopped(tmp_path):
    work, output = tmp_path / "run", tmp_path / "weights.json"
    args = ["--short", "--jobs", "1", "--work", str(work), "--output", str(output)]
    train.main(args)
    model = ValueModel.load(output)
    assert set(model.weights) == {"2x2", "3x3", "4x2", "4x4"}
    assert all(len(w) == len(FEATURES) for w in model.weights.values())
    assert any(w != 0 for w in model.weights["2x2"])  # it learned something
    history = model.provenance["history"]
    assert [step["generation"] for step in history] == [1, 2]
    assert all(0 <= step["greedy"]["win_rate"] <= 1 and step["positions"] > 0 for step in history)
    assert model.provenance["command"].startswith("bench/train.py --short")

    # A stop in the middle of generation 2: one chunk of its games and its model are lost.
    chunks = sorted((work / "gen2").glob("chunk*.json"))
    kept = {path: path.stat().st_mtime_ns for path in chunks[1:] + sorted((work / "gen1").glob("*.json"))}
    chunks[0].unlink()
    (work / "gen2" / "model.json").unlink()
    (work / "gen2" / "eval.json").unlink()
    output.unlink()
    train.main(args)
    assert chunks[0].exists() and output.exists()
    assert {path: path.stat().st_mtime_ns for path in kept} == kept  # nothing done twice
    resumed = ValueModel.load(output)
    assert resumed.weights == model.weights  # the same games, the same fit
    assert json.loads((work / "gen2" / "eval.json").read_text())["greedy"]["games"] == 8
