"""Tournaments of bots (issue 56): the pairing and tie-break rules by hand, a round robin and a
Swiss played through the API on a real worker, each game counted once through a killed worker."""

import itertools
import time
import uuid

import pytest
import requests

from app.tournaments.pairing import max_swiss_rounds, round_robin, swiss_round
from app.tournaments.standings import Played, crosstable, standings
from faults import start_worker, stop
from test_apps import serve


@pytest.mark.parametrize("entrants, cycles", [(4, 1), (5, 1), (6, 2)])
def test_a_round_robin_pairs_everyone_with_everyone_once_a_cycle_and_everyone_once_a_round(entrants, cycles):
    rounds = round_robin(entrants, cycles)
    assert len(rounds) == cycles * (entrants - 1 + entrants % 2)
    met = [frozenset((a, b)) for pairings in rounds for a, b in pairings if b is not None]
    assert sorted(map(sorted, met)) == sorted(sorted(pair) for pair in itertools.combinations(range(entrants), 2)
                                              for _ in range(cycles))
    for pairings in rounds:
        seated = [e for a, b in pairings for e in (a, b) if e is not None]
        assert sorted(seated) == list(range(entrants))  # each once a round (an odd field: one bye)


def test_a_swiss_round_never_repeats_a_pairing_and_gives_the_bye_to_the_lowest_without_one():
    ranking = [3, 0, 4, 1, 2]
    first = swiss_round(ranking, set(), set())
    assert first == [(3, 0), (4, 1), (2, None)]
    met = {frozenset(p) for p in [(3, 0), (4, 1)]}
    second = swiss_round(ranking, met, {2})
    assert (1, None) in second and all(frozenset(p) not in met for p in second if p[1] is not None)
    # Backtracking: the top entrant's best opponent is taken so that the others still pair.
    assert swiss_round([0, 1, 2, 3], {frozenset((0, 1)), frozenset((2, 3))}, set()) == [(0, 2), (1, 3)]
    assert swiss_round([0, 1], {frozenset((0, 1))}, set()) is None
    assert max_swiss_rounds(8) == 7 and max_swiss_rounds(7) == 7


def test_standings_rank_by_points_then_buchholz_then_sonneborn_berger_as_computed_by_hand():
    names = ["A", "B", "C", "D"]
    played = [Played(0, 1, 2, 0, 2), Played(2, 3, 1, 1, 2), Played(0, 2, 0, 2, 2), Played(1, 3, 2, 0, 2)]
    # Points: A 2, B 2, C 3, D 1. Buchholz: A = B + C = 5, B = A + D = 3, C = D + A = 3, D = C + B = 5.
    # Sonneborn-Berger: A = 1 × 2 (B) + 0 × 3 (C) = 2; B = 0 × 2 + 1 × 1 = 1; C = 0.5 × 1 + 1 × 2 = 2.5.
    rows = standings(names, played, {name: 1500.0 for name in names})
    assert [row["name"] for row in rows] == ["C", "A", "B", "D"]
    by_name = {row["name"]: row for row in rows}
    assert (by_name["A"]["buchholz"], by_name["B"]["buchholz"]) == (5, 3)
    assert (by_name["A"]["sonneborn_berger"], by_name["C"]["sonneborn_berger"]) == (2, 2.5)
    # Half the games won against 1500s: a 1500 performance, its interval around it.
    assert by_name["A"]["performance"] == 1500 and by_name["A"]["performance_low"] < 1500 < \
        by_name["A"]["performance_high"]
    table = {row["name"]: {cell["opponent"]: cell for cell in row["against"]} for row in crosstable(names, played)}
    assert table["A"][1] == {"opponent": 1, "wins": 2, "games": 2} and table["B"][0]["wins"] == 0


@pytest.fixture(scope="module")
def server(redis_url):
    queue = f"tournaments-{uuid.uuid4().hex[:8]}"
    http, base = serve({"REDIS_URL": redis_url, "BOT_QUEUE": queue, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0,
                        "RATE_LIMIT_PER_TOKEN": 0})
    yield base, queue
    http.shutdown()


def finished(base, tournament_id, seconds=120):
    deadline = time.monotonic() + seconds
    while (found := requests.get(f"{base}/tournaments/{tournament_id}").json())["status"] != "finished":
        assert time.monotonic() < deadline, found
        time.sleep(0.5)
    return found


def test_bad_tournaments_are_refused_whole(server):
    base, _ = server
    for body, field in [({"format": "swiss", "entrants": ["greedy"]}, "entrants"),
                        ({"format": "swiss", "entrants": ["greedy", "nobody"]}, "entrants"),
                        ({"format": "swiss", "entrants": ["greedy", "random", "casual", "expert"], "rounds": 4},
                         "rounds"),
                        ({"format": "arena", "entrants": ["greedy", "random"]}, "duration_seconds"),
                        ({"format": "knockout", "entrants": ["greedy", "random"]}, "format"),
                        ({"format": "swiss", "entrants": ["player:someone", "greedy"]}, "entrants"),
                        ({"format": "swiss", "entrants": ["greedy", "random"], "starts_in_seconds": 5,
                          "turn_seconds": 0}, "turn_seconds")]:
        refused = requests.post(f"{base}/tournaments", json=body).json()
        named = refused.get("field") or refused["errors"][0]["field"]
        assert refused["status"] == 422 and named == field, (body, refused)
    assert requests.get(f"{base}/tournaments/nothing-here").status_code == 404


@pytest.mark.slow
def test_a_round_robin_and_a_swiss_finish_on_a_worker_each_game_counted_once_through_a_killed_worker(
        server, redis_url):
    base, queue = server
    worker = start_worker(redis_url, queue, stall_seconds=1)
    try:
        robin = requests.post(f"{base}/tournaments", json={
            "format": "round_robin", "entrants": ["expert", "greedy", "casual", "random"], "games_per_pairing": 2,
            "rules": {"preset": "simple"}}).json()
        swiss = requests.post(f"{base}/tournaments", json={
            "format": "swiss", "entrants": ["greedy", "greedy", "casual", "casual", "random"], "rounds": 3,
            "rules": {"preset": "simple"}, "seed": "fixed"}).json()
        assert robin["rated"] and not swiss["rated"]  # a seed of the creator's: not rated
        time.sleep(1)
        worker.kill()  # mid-tournament: its games under way are lost with it
        worker.wait(timeout=10)
        worker = start_worker(redis_url, queue, stall_seconds=1)
        done = finished(base, robin["id"])
        assert sum(row["points"] for row in done["standings"]) == 6 * 2, done["rounds"]  # six pairings of two games
        assert all(row["games"] == 3 * 2 for row in done["standings"])
        ranks = {row["name"]: row["rank"] for row in done["standings"]}
        assert ranks["random"] > min(ranks["greedy"], ranks["expert"])
        cross = {row["entrant"]: {cell["opponent"]: cell["wins"] for cell in row["against"]}
                 for row in done["crosstable"]}
        for a, b in itertools.combinations(range(4), 2):
            assert cross[a][b] + cross[b][a] == 2
        listed = requests.get(f"{base}/tournaments?page_size=100").json()
        assert robin["id"] in [t["id"] for t in listed]
        played = finished(base, swiss["id"])
        pairs = [frozenset((t["a"], t["b"])) for r in played["rounds"] for t in r["pairings"] if t["b"] is not None]
        assert len(played["rounds"]) == 3 and len(pairs) == len(set(pairs))  # no pairing twice
        byes = [t["a"] for r in played["rounds"] for t in r["pairings"] if t["b"] is None]
        assert len(byes) == 3 and len(set(byes)) == 3
        assert sum(row["points"] for row in played["standings"]) == 3 * 2 * 2 + 3 * 2  # games, and the byes' wins
    finally:
        stop(worker)
