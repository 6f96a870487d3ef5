"""The `ronda` command: help on each command, a match without any server, a clear error."""

import subprocess
import sys


def ronda(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=120)


def test_every_command_explains_itself():
    for command in ("serve", "worker", "match", "openapi"):
        result = ronda(command, "--help")
        assert result.returncode == 0 and "usage: ronda" in result.stdout


def test_a_match_runs_without_a_server_and_prints_a_result_table():
    result = ronda("match", "--preset", "simple", "--bots", "greedy,random", "--games", "4", "--seed", "cli")
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line.split()[:1] in (["0"], ["1"])]
    assert [row[1] for row in rows] == ["greedy", "random"]
    assert sum(int(row[2]) for row in rows) == 4  # every game has exactly one winner


def test_an_impossible_match_is_refused_with_the_reason():
    result = ronda("match", "--preset", "traditional", "--bots", "random,random,random", "--games", "1")
    assert result.returncode == 2 and "deal" in result.stderr


def test_the_version_is_printed():
    result = ronda("--version")
    assert result.returncode == 0 and result.stdout.startswith("ronda 0.")


def test_bad_match_input_is_a_usage_error_without_a_traceback():
    for args in (("--games", "0"), ("--games", "x"), ("--bots", "greedy,nobody"), ("--jobs", "-1")):
        options = {"--bots": "greedy,random", "--games": "2", **dict([args])}
        result = ronda("match", *[x for pair in options.items() for x in pair])
        assert result.returncode == 2 and "Traceback" not in result.stderr and "usage" in result.stderr, args


def test_progress_to_a_pipe_is_plain_lines_with_rate_and_eta():
    result = ronda("match", "--preset", "simple", "--bots", "greedy,random", "--games", "10", "--seed", "pipe")
    assert result.returncode == 0 and "\r" not in result.stderr
    assert "10/10 games" in result.stderr and "games/s, ETA" in result.stderr
