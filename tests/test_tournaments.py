"""Tournaments (issue 56): the pairing and tie-break rules by hand; a round robin, a Swiss and an
arena of bots played through the API on a real worker, each game counted once through a killed
worker; people entering an open tournament and playing (or not) its games; its stream."""

import itertools
import random
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from app.tournaments.pairing import (DUTCH_FIELD, always_pairable_rounds, dutch_round, round_robin, swiss_pairing,
                                     swiss_round)
from app.tournaments.standings import Played, crosstable, standings, streak_points
from faults import start_worker, stop
from test_apps import serve


@pytest.mark.parametrize("entrants, cycles", [(4, 1), (5, 1), (6, 2)])
def test_a_round_robin_pairs_everyone_with_everyone_once_a_cycle_and_everyone_once_a_round(entrants, cycles):
    rounds = round_robin(entrants, cycles)
    assert len(rounds) == cycles * (entrants - 1 + entrants % 2)
    met = [frozenset(table) for tables in rounds for table in tables if len(table) == 2]
    assert sorted(map(sorted, met)) == sorted(sorted(pair) for pair in itertools.combinations(range(entrants), 2)
                                              for _ in range(cycles))
    for tables in rounds:
        assert sorted(e for table in tables for e in table) == list(range(entrants))  # once a round, or a bye


# FIDE Handbook C.05, Annex 1: the Berger table for 5 or 6 players, pairing numbers, white first.
BERGER_6 = [[(1, 6), (2, 5), (3, 4)], [(6, 4), (5, 3), (1, 2)], [(2, 6), (3, 1), (4, 5)],
            [(6, 5), (1, 4), (2, 3)], [(3, 6), (4, 2), (5, 1)]]


def test_a_round_robin_is_fides_berger_table_white_first_and_an_odd_fields_sixth_number_is_the_bye():
    numbered = [[tuple(e + 1 for e in table) for table in tables] for tables in round_robin(6, cycles=2)]
    assert numbered[:5] == BERGER_6
    assert numbered[5:] == [[(black, white) for white, black in tables] for tables in BERGER_6]  # colours swapped
    five = [[tuple(e + 1 for e in table) for table in tables] for tables in round_robin(5)]
    assert five == [[table for table in tables if 6 not in table] + [tuple(e for e in table if e != 6)
                                                                      for table in tables if 6 in table]
                    for tables in BERGER_6]


def test_the_dutch_system_pairs_round_one_top_half_against_bottom_half_colours_alternating():
    """C.04.3: S1 = 1-4 against S2 = 5-8, the first pairing number white, colours alternating."""
    assert dutch_round(range(8), [], 5) == [(0, 4), (5, 1), (2, 6), (7, 3)]
    # E.5: the initial colour drawn black, the odd pairing numbers take it.
    assert dutch_round(range(8), [], 5, first_white=False) == [(4, 0), (1, 5), (6, 2), (3, 7)]


def test_the_dutch_system_transposes_within_a_score_group_to_meet_every_colour_preference():
    """After round one's top half all won: in the 1-point group S1 = {1, 2}, S2 = {3, 4}; 1-3 and
    2-4 would each leave a preference unmet (1 and 3 had white, 2 and 4 black), so S2 is
    transposed: 4-1 and 2-3. The 0-point group likewise: 5-8 and 7-6."""
    first = [Played(table, (1, 0) if table[0] < 4 else (0, 1), 1) for table in [(0, 4), (5, 1), (2, 6), (7, 3)]]
    second = dutch_round(range(8), [first], 5)
    assert [tuple(e + 1 for e in table) for table in second] == [(4, 1), (2, 3), (5, 8), (7, 6)]
    # A table of two games split 1-1 scores half each: then everyone is level, and round two pairs as one group.
    split = [Played(table, (1, 1), 2) for table in [(0, 4), (5, 1), (2, 6), (7, 3)]]
    assert all(frozenset(t) not in {frozenset(p.seats) for p in split} for t in dutch_round(range(8), [split], 5))


def _numbered(rounds):
    """A tournament written with pairing numbers from 1 (white first; a bye alone), with the
    white player's result (1, 0 or = for a draw), as its history of tables."""
    wins = {"1": (1, 0), "0": (0, 1), "=": (0, 0), "bye": (1,)}
    return [[Played(tuple(e - 1 for e in table), wins[result], 1) for table, result in tables]
            for tables in rounds]


def test_the_dutch_system_gives_the_bye_where_the_lowest_group_pairs_best_reading_colours_of_games_played():
    """bbpPairings (FIDE-endorsed, Dutch 2025 rules) on a field of nine, round 4 (its generated
    tournament, seed 218988355): 6, 7, 8 and 9 share the lowest score; 7, 8 and 9 had their bye.
    With the bye to 6, 5-9 and 7-8 meet every colour preference; with it to 5, 7 and 9 would both
    want black. 7's and 8's preferences are read from the games they played, a bye left out."""
    history = _numbered([
        [((1, 5), "1"), ((6, 2), "0"), ((3, 7), "1"), ((8, 4), "0"), ((9,), "bye")],
        [((4, 1), "="), ((2, 9), "1"), ((5, 3), "0"), ((7, 6), "0"), ((8,), "bye")],
        [((1, 8), "1"), ((3, 2), "="), ((9, 4), "0"), ((6, 5), "0"), ((7,), "bye")]])
    paired = dutch_round(range(9), history, 4)
    assert sorted(tuple(e + 1 for e in table) for table in paired) == [(2, 1), (4, 3), (5, 9), (6,), (8, 7)]


def test_the_dutch_system_reads_the_last_different_colours_back_from_the_games_each_played():
    """bbpPairings, nine entrants, round 4 (seed 462742284): 4 (black, white, bye) and 9 (bye,
    black, white) both mildly want black; read back game by game their colours never differed
    (E.3 has nothing), so the higher-ranked 9 gets its preference (E.4): 4 has white. Read round by
    round, round 2 would have given 9 white."""
    history = _numbered([
        [((1, 5), "="), ((6, 2), "="), ((3, 7), "0"), ((8, 4), "1"), ((9,), "bye")],
        [((4, 1), "0"), ((2, 8), "1"), ((5, 6), "1"), ((7, 9), "="), ((3,), "bye")],
        [((1, 7), "1"), ((9, 2), "0"), ((6, 3), "0"), ((8, 5), "="), ((4,), "bye")]])
    assert (3, 8) in dutch_round(range(9), history, 4)


def test_where_the_dutch_rules_pair_nobody_the_arbiter_pairs_the_round_with_no_repeat():
    """Four rounds of six: the Dutch absolute colour criteria leave no round five, though one with
    no repeat exists; the arbiter's pairing is that one (each from the top meets the best-ranked
    it has not met)."""
    results = [[((0, 3), (0, 1)), ((4, 1), (0, 1)), ((2, 5), (0, 1))],
               [((1, 3), (1, 0)), ((5, 0), (0, 1)), ((4, 2), (0, 1))],
               [((2, 1), (0, 1)), ((3, 5), (0, 1)), ((0, 4), (1, 0))],
               [((1, 5), (0, 1)), ((2, 0), (1, 0)), ((3, 4), (0, 1))]]
    history = [[Played(seats, wins, 1) for seats, wins in tables] for tables in results]
    assert dutch_round(range(6), history, 5) is None
    assert swiss_pairing(range(6), history, 5) == ([(0, 1), (2, 3), (4, 5)], False)


def test_a_swiss_of_six_plays_three_rounds_as_three_dutch_rounds_can_leave_no_fourth():
    """Issue 64, 2: the rounds accepted always pair. Here three Dutch rounds leave two triangles of
    entrants yet to meet ({0, 2, 4}, {1, 3, 5}): no fourth round without a repeat exists."""
    results = [[((0, 3), (1, 0)), ((4, 1), (1, 0)), ((2, 5), (0, 1))],
               [((5, 0), (0, 1)), ((3, 4), (1, 0)), ((1, 2), (1, 0))],
               [((0, 1), (0, 1)), ((4, 5), (0, 1)), ((2, 3), (1, 0))]]
    history = [[Played(seats, wins, 1) for seats, wins in tables] for tables in results]
    assert [dutch_round(range(6), history[:number], 5) for number in range(3)] == [[seats for seats, _ in r]
                                                                                    for r in results]
    assert swiss_pairing(range(6), history, 5) == (None, False)
    assert always_pairable_rounds(6) == 3 and always_pairable_rounds(7) == 4


def test_the_arbiters_swiss_round_never_repeats_a_pairing_and_gives_the_bye_to_the_lowest_without_one():
    ranking = [3, 0, 4, 1, 2]
    first = swiss_round(ranking, set(), set())
    assert first == [(3, 0), (4, 1), (2,)]
    met = {frozenset(p) for p in [(3, 0), (4, 1)]}
    second = swiss_round(ranking, met, {2})
    assert (1,) in second and all(frozenset(t) not in met for t in second if len(t) == 2)
    # Backtracking: the top entrant's best opponent is taken so that the others still pair.
    assert swiss_round([0, 1, 2, 3], {frozenset((0, 1)), frozenset((2, 3))}, set()) == [(0, 2), (1, 3)]
    assert swiss_round([0, 1], {frozenset((0, 1))}, set()) is None


@pytest.mark.parametrize("entrants", [5, 6, 7, 8, 9, 10, 12, 15])
def test_a_swiss_plays_every_round_it_accepts_whatever_the_results(entrants):
    """Issue 64, 2: a Swiss of 6 asking 5 rounds ended after 3 (nobody left to meet). It accepts
    the rounds that always pair (half the field, Dirac), and pairs each, the Dutch system's way or
    the arbiter's, with nobody meeting twice or having a second bye."""
    rounds = always_pairable_rounds(entrants)
    for trial in range(12):
        results = random.Random(trial)
        history: list[list[Played]] = []
        for number in range(rounds):
            ranking = results.sample(range(entrants), entrants)  # any standings the games could make
            tables, _ = swiss_pairing(ranking, history, rounds)
            assert tables is not None, (entrants, trial, number)
            assert sorted(e for table in tables for e in table) == list(range(entrants))
            before = [table.seats for played in history for table in played]
            for table in tables:
                assert table not in before and table[::-1] not in before, "met twice, or a second bye"
            history.append([Played(table, (1,) if len(table) == 1 else results.choice([(1, 0), (0, 1), (0, 0)]), 1)
                            for table in tables])


def test_swiss_tables_of_four_seat_the_leaders_together_avoid_old_tablemates_and_bye_the_rest():
    ranking = [5, 0, 1, 2, 3, 4, 6, 7, 8]
    assert swiss_round(ranking, set(), set(), size=4) == [(5, 0, 1, 2), (3, 4, 6, 7), (8,)]
    met = {frozenset(pair) for table in [(5, 0, 1, 2), (3, 4, 6, 7)] for pair in itertools.combinations(table, 2)}
    second = swiss_round(ranking, met, {8}, size=4)
    assert second[0] == (5, 3, 8, 0)  # the leader, then the best who sat with none of them; 0 only when nobody is left
    assert (7,) in second, "the lowest-ranked without a bye"


def test_a_table_of_four_with_teams_scores_partners_together_and_counts_only_opponents():
    names = ["A", "B", "C", "D"]
    # Seats A C partners against B D (team rules): A and C won 3 of 4 games, B and D one.
    played = [Played((0, 1, 2, 3), (3, 1, 3, 1), 4, teams=True)]
    rows = {row["name"]: row for row in standings(names, played, [1500.0] * len(names))}
    assert (rows["A"]["points"], rows["B"]["points"]) == (3, 1) and rows["A"]["rank"] == 1 and rows["C"]["rank"] == 2
    assert rows["A"]["buchholz"] == 1 + 1  # B and D, not C
    table = {row["name"]: {cell["opponent"]: cell for cell in row["against"]} for row in crosstable(names, played)}
    assert set(table["A"]) == {1, 3} and table["A"][1] == {"opponent": 1, "wins": 3, "games": 4}
    # Every player for themself: A won 2, B 1, C 1 of 4; against B, A scores 2 + (4 - 2 - 1) / 2 = 2.5 of 4.
    alone = {row["name"]: row for row in standings(names[:3], [Played((0, 1, 2), (2, 1, 1), 4)],
                                                      [1500.0] * 3)}
    assert alone["A"]["buchholz"] == 2 and alone["A"]["performance"] > 1500 > alone["B"]["performance"]


def test_streak_scoring_is_lichess_s_arena_two_a_win_doubled_after_two_wins_in_a_row():
    """Issue 64, 3: `scoring: "streaks"`: A wins three in a row (2, 2, 4), loses, wins (2): 10;
    B loses twice, then wins three in a row (2, 2, 4): 8; a loss ends the streak."""
    a, b, c = 0, 1, 2
    games = [(a, b), (a, c), (a, b), (b, a), (a, c), (b, c), (b, c)]  # winner first, in the order played
    played = [Played((winner, loser), (1, 0), 1) for winner, loser in games]
    assert streak_points(3, played) == [10.0, 8.0, 0.0]
    rows = standings(["A", "B", "C"], played, [1500.0] * 3, streaks=True)
    assert [(row["name"], row["points"]) for row in rows] == [("A", 10.0), ("B", 8.0), ("C", 0.0)]


def test_standings_rank_by_points_then_buchholz_then_sonneborn_berger_as_computed_by_hand():
    names = ["A", "B", "C", "D"]
    played = [Played((0, 1), (2, 0), 2), Played((2, 3), (1, 1), 2), Played((0, 2), (0, 2), 2),
              Played((1, 3), (2, 0), 2)]
    # Points: A 2, B 2, C 3, D 1. Buchholz: A = B + C = 5, B = A + D = 3, C = D + A = 3, D = C + B = 5.
    # Sonneborn-Berger: A = 1 × 2 (B) + 0 × 3 (C) = 2; B = 0 × 2 + 1 × 1 = 1; C = 0.5 × 1 + 1 × 2 = 2.5.
    rows = standings(names, played, [1500.0] * len(names))
    assert [row["name"] for row in rows] == ["C", "A", "B", "D"]
    by_name = {row["name"]: row for row in rows}
    assert (by_name["A"]["buchholz"], by_name["B"]["buchholz"]) == (5, 3)
    assert (by_name["A"]["sonneborn_berger"], by_name["C"]["sonneborn_berger"]) == (2, 2.5)
    # Half the games won against 1500s: a 1500 performance, its interval around it.
    assert by_name["A"]["performance"] == 1500 and by_name["A"]["performance_low"] < 1500 < \
        by_name["A"]["performance_high"]
    table = {row["name"]: {cell["opponent"]: cell for cell in row["against"]} for row in crosstable(names, played)}
    assert table["A"][1] == {"opponent": 1, "wins": 2, "games": 2} and table["B"][0]["wins"] == 0
    # Ratings go by entrant, not by name: two entrants of one name each perform against the other's.
    twins = standings(["greedy", "greedy"], [Played((0, 1), (1, 1), 2)], [1400.0, 1600.0])
    assert {row["entrant"]: row["performance"] for row in twins} == {0: 1600.0, 1: 1400.0}


@pytest.fixture(scope="module")
def server(redis_url):
    queue = f"tournaments-{uuid.uuid4().hex[:8]}"
    http, base = serve({"REDIS_URL": redis_url, "BOT_QUEUE": queue, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0,
                        "RATE_LIMIT_PER_TOKEN": 0, "MIN_TURN_SECONDS": 1, "SSE_KEEPALIVE_SECONDS": 0.5})
    yield base, queue
    http.shutdown()


@pytest.fixture
def worker(server, redis_url):
    """A `ronda worker` on the server's queue, stopped after the test."""
    process = start_worker(redis_url, server[1], stall_seconds=1)
    yield process
    stop(process)


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
                        ({"format": "swiss", "entrants": ["greedy", "random"], "scoring": "streaks"}, "scoring"),
                        ({"format": "arena", "entrants": ["greedy", "random"], "duration_seconds": 60,
                          "scoring": "streaks", "games_per_pairing": 2}, "scoring"),
                        ({"format": "knockout", "entrants": ["greedy", "random"]}, "format"),
                        ({"format": "swiss", "entrants": ["player:someone", "greedy"]}, "entrants"),
                        ({"format": "round_robin", "entrants": ["greedy", "random", "casual"],
                          "players_per_table": 3}, "players_per_table"),
                        ({"format": "swiss", "entrants": ["greedy", "random", "casual"], "players_per_table": 4},
                         "entrants"),
                        ({"format": "swiss", "entrants": ["greedy", "random"], "starts_in_seconds": 5,
                          "turn_seconds": 0}, "turn_seconds"),
                        ({"format": "swiss", "entrants": ["greedy", "random"], "starts_in_seconds": 5,
                          "max_entrants": DUTCH_FIELD + 1}, "max_entrants")]:
        refused = requests.post(f"{base}/tournaments", json=body).json()
        named = refused.get("field") or refused["errors"][0]["field"]
        assert refused["status"] == 422 and named == field, (body, refused)
    assert requests.get(f"{base}/tournaments/nothing-here").status_code == 404
    # Issue 64, 1: a registered bot entered twice was refused only once the tournament was stored.
    bot = requests.post(f"{base}/bots", json={"name": "Twice"}).json()["bot"]["entrant"]
    listed = requests.get(f"{base}/tournaments").headers["X-Pagination"]
    twice = requests.post(f"{base}/tournaments", json={"format": "round_robin", "entrants": [bot, bot, "greedy"]})
    assert twice.status_code == 422 and twice.json()["field"] == "entrants"
    assert requests.get(f"{base}/tournaments").headers["X-Pagination"] == listed  # nothing made


def test_the_sweep_moves_running_tournaments_first_and_one_that_fails_stops_no_other(app, monkeypatch):
    """Issue 64, 1: 300 open tournaments took the sweep's 20 a pass from a running arena, and one
    tournament that raised cut the pass short for every other."""
    service = app.services.tournaments
    bots = {"entrants": ["greedy", "random"], "rules": {"preset": "simple"}, "games_per_pairing": 1,
            "players_per_table": 2, "turn_seconds": 60, "cycles": 1}
    for _ in range(30):
        service.create({**bots, "format": "swiss", "starts_in_seconds": 600}, "public")
    running = [service.create({**bots, "format": "round_robin"}, "public")["id"] for _ in range(2)]
    moved = []

    def advance(tournament_id):
        moved.append(tournament_id)
        if tournament_id == running[0]:
            raise RuntimeError("a tournament that cannot move on")
        return service.store.load(tournament_id)
    monkeypatch.setattr(service, "advance", advance)
    service.reconcile(older_than_seconds=-1, limit=1000)
    assert set(running) <= set(moved)  # both running ones, the failing one's fault stopping nothing
    assert all((doc := service.store.load(t)) is None or doc["status"] != "open" for t in moved)  # not due yet


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
        pairs = [frozenset(t["seats"]) for r in played["rounds"] for t in r["pairings"] if len(t["seats"]) == 2]
        assert len(played["rounds"]) == 3 and len(pairs) == len(set(pairs))  # no pairing twice
        byes = [t["seats"][0] for r in played["rounds"] for t in r["pairings"] if len(t["seats"]) == 1]
        assert len(byes) == 3 and len(set(byes)) == 3
        assert sum(row["points"] for row in played["standings"]) == 3 * 2 * 2 + 3 * 2  # games, and the byes' wins
    finally:
        stop(worker)


def player(base, name):
    created = requests.post(f"{base}/players", json={"name": name}).json()
    return created["player"]["id"], {"Authorization": f"Bearer {created['token']}"}


def play_every_game_of(base, headers, tournament_id, seconds=180):
    """A person who plays: each `tournament_round` notice's game, its first legal action each turn,
    until the tournament is over. Their notices, in order."""
    notices, cursor, deadline = [], "0-0", time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = requests.get(f"{base}/players/me/notices", params={"after": cursor, "wait_seconds": 1},
                             headers=headers).json()
        cursor = found["cursor"]
        for notice in found["notices"]:
            notices.append(notice)
            if notice["type"] == "tournament_round":
                play_game(base, headers, notice["game_id"], deadline)
        if requests.get(f"{base}/tournaments/{tournament_id}").json()["status"] == "finished":
            return notices
    raise AssertionError(f"the tournament did not end: {notices}")


def play_game(base, headers, game_id, deadline):
    while time.monotonic() < deadline:
        view = requests.get(f"{base}/games/{game_id}/view", headers=headers).json()
        if view["status"] == "finished":
            return
        if view["seat"] in view["awaiting"]:
            requests.post(f"{base}/games/{game_id}/actions", json=view["legal_actions"][0],
                          headers={**headers, "If-Match": f'"{view["version"]}"'})
        else:
            time.sleep(0.05)


@pytest.mark.slow
def test_a_swiss_at_tables_of_four_in_partnerships_and_an_arena_at_tables_of_three(server, worker):
    base, _ = server
    swiss = requests.post(f"{base}/tournaments", json={
        "format": "swiss", "players_per_table": 4, "rounds": 2, "games_per_pairing": 1,
        "rules": {"preset": "classic"}, "entrants": ["greedy", "casual", "random"] * 3}).json()
    arena = requests.post(f"{base}/tournaments", json={
        "format": "arena", "players_per_table": 3, "duration_seconds": 5, "games_per_pairing": 1,
        "rules": {"preset": "simple"}, "entrants": ["greedy", "casual", "random"] * 2}).json()
    assert swiss["teams"] and not arena["teams"]
    done = finished(base, swiss["id"])
    for r in done["rounds"]:
        sizes = sorted(len(t["seats"]) for t in r["pairings"])
        assert sizes == [1, 4, 4]  # nine entrants: two tables of four and a bye
        for table in (t for t in r["pairings"] if len(t["seats"]) == 4):
            wins = table["result"]["wins"]
            assert wins[0] == wins[2] and wins[1] == wins[3] and wins[0] + wins[1] == 1, table  # partners
    first, second = ({frozenset(t["seats"]) for t in r["pairings"]} for r in done["rounds"])
    assert not first & second
    assert sum(row["points"] for row in done["standings"]) == 2 * (2 * 2 + 1)  # each game: two partners; a bye
    ended = finished(base, arena["id"])
    tables = [t for r in ended["rounds"] for t in r["pairings"]]
    assert tables and all(len(t["seats"]) == 3 and sum(t["result"]["wins"]) <= 1 for t in tables)
    assert sum(row["points"] for row in ended["standings"]) == sum(sum(t["result"]["wins"]) for t in tables)


@pytest.mark.slow
def test_people_enter_an_open_round_robin_and_one_who_never_moves_loses_each_game(server, worker):
    base, _ = server
    tournament = requests.post(f"{base}/tournaments", json={
        "format": "round_robin", "entrants": ["random"], "starts_in_seconds": 3, "games_per_pairing": 1,
        "turn_seconds": 3, "rules": {"preset": "simple"}}).json()
    assert tournament["status"] == "open" and tournament["rounds"] == []
    (amina, amina_auth), (omar, omar_auth) = player(base, "Amina"), player(base, "Omar")
    entered = requests.post(f"{base}/tournaments/{tournament['id']}/entrants", headers=amina_auth)
    assert entered.status_code == 200 and entered.json()["names"] == ["random", "Amina"]
    again = requests.post(f"{base}/tournaments/{tournament['id']}/entrants", headers=amina_auth).json()
    assert again["entrants"] == ["random", f"player:{amina}"], "entering twice changes nothing"
    with_omar = requests.post(f"{base}/tournaments/{tournament['id']}/entrants", headers=omar_auth).json()
    assert with_omar["entrants"][2] == f"player:{omar}" and with_omar["status"] == "open"
    assert requests.post(f"{base}/tournaments/{tournament['id']}/entrants").status_code == 401
    notices = play_every_game_of(base, amina_auth, tournament["id"])  # Omar never moves
    done = finished(base, tournament["id"])
    late = requests.post(f"{base}/tournaments/{tournament['id']}/entrants", headers=player(base, "Late")[1])
    assert late.status_code == 409 and late.json()["code"] == "tournament_closed"
    rounds = [n for n in notices if n["type"] == "tournament_round"]
    assert len(rounds) == 2 and {n["opponent"] for n in rounds} == {"random", "Omar"}
    # Issue 64, 4: told once when it began and once when it ended, with the place and points.
    def told():  # every notice, read page after page (a read answers a bounded number)
        found, cursor = [], "0-0"
        while page := requests.get(f"{base}/players/me/notices", params={"after": cursor, "wait_seconds": 0},
                                   headers=amina_auth).json()["notices"]:
            found += [n for n in page if n["type"].startswith("tournament_")]
            cursor = page[-1]["id"]
        return found
    deadline = time.monotonic() + 30
    while (over := told())[-1]["type"] != "tournament_over" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [n["type"] for n in over if n["type"] != "tournament_round"] == ["tournament_started", "tournament_over"]
    amina_row = next(row for row in done["standings"] if row["name"] == "Amina")
    assert (over[-1]["rank"], over[-1]["points"], over[-1]["status"]) == (amina_row["rank"], amina_row["points"],
                                                                          "finished")
    byes = [t for r in done["rounds"] for t in r["pairings"] if len(t["seats"]) == 1]
    assert len(done["rounds"]) == 3 and len(byes) == 3
    points = {row["name"]: row["points"] for row in done["standings"]}
    omar_row = next(row for row in done["crosstable"] if row["name"] == "Omar")
    assert [cell["wins"] for cell in omar_row["against"]] == [0, 0], "a seat that never moves loses each game"
    assert points["Omar"] == 1 and points["Amina"] >= 1 + 1  # the bye's game; Amina's bye and Omar's game
    meeting = next(t for r in done["rounds"] for t in r["pairings"] if set(t["seats"]) == {1, 2})
    game = requests.get(f"{base}/games/{meeting['games'][0]}").json()
    assert game["outcome"]["reason"] == "forfeit" and game["seats"][game["outcome"]["seat"]]["name"] == "Omar"
    assert game["rated"], "people's games of a tournament dealt by the server are rated"
    omar_games = requests.get(f"{base}/players/me/games", params={"status": "finished"}, headers=omar_auth).json()
    assert {g["id"] for g in omar_games} >= {t["games"][0] for r in done["rounds"] for t in r["pairings"]
                                              if t["games"] and 2 in t["seats"]}


@pytest.mark.slow
def test_an_arena_pairs_whoever_is_free_until_its_time_is_up_and_its_stream_resumes(server, worker):
    base, _ = server
    arena = requests.post(f"{base}/tournaments", json={
        "format": "arena", "entrants": ["greedy", "random", "casual", "greedy", "random"], "duration_seconds": 6,
        "games_per_pairing": 1, "rules": {"preset": "simple"}}).json()
    events: list[tuple[str, dict]] = []
    reader = threading.Thread(target=read_stream, args=(f"{base}/tournaments/{arena['id']}/stream", events, {}))
    reader.start()
    done = finished(base, arena["id"])
    reader.join(timeout=30)
    assert len(done["rounds"]) >= 3 and done["ends_at"]
    tables = [t for r in done["rounds"] for t in r["pairings"]]
    assert all(len(t["seats"]) == 2 and t["result"] is not None for t in tables), "an arena has no byes"
    assert sum(row["points"] for row in done["standings"]) == sum(t["result"]["games"] for t in tables)
    for entrant in range(5):  # nobody plays two pairings at once
        own = [r["round"] for r in done["rounds"] for t in r["pairings"] if entrant in t["seats"]]
        assert len(own) == len(set(own))
    standings = [data for kind, data in events if kind == "standings"]
    assert standings[-1]["status"] == "finished" and standings[-1]["revision"] == done["revision"]
    seen = [data["round"] for kind, data in events if kind == "round"]  # the stream opened after round 0
    assert seen == list(range(seen[0], len(done["rounds"]))) and seen[0] <= 1
    middle = [data["_id"] for kind, data in events if kind == "standings"][1]
    resumed: list[tuple[str, dict]] = []
    read_stream(f"{base}/tournaments/{arena['id']}/stream", resumed, {"Last-Event-ID": middle})
    assert resumed == events[[*ids_of(events)].index(middle) + 1:], "resumed just after that event"


def read_stream(url, events, headers):
    """The stream's events, (type, data), until a finished tournament's standings."""
    with requests.get(url, headers=headers, stream=True, timeout=60) as answer:
        kind = data = event_id = None
        for line in answer.iter_lines(decode_unicode=True):
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
            elif not line and kind:
                events.append((kind, {**data, "_id": event_id}))
                if kind == "standings" and data["status"] == "finished":
                    return
                kind = None


def ids_of(events):
    return [data["_id"] for _, data in events]


def test_a_tournament_of_bots_plays_inside_an_app_as_in_the_public_one(server, worker, redis_url):
    """Issue 64, 1: created with an app's key, a bots' tournament was a 500 and never started (RQ
    refuses a job id with the app separator `~`); it plays as a public one does."""
    from app import create_app
    base, _ = server
    _, keys = create_app({"REDIS_URL": redis_url}).services.apps.create("Club")  # this process's secret
    in_app = {"X-Ronda-App": keys["client"]}
    made = requests.post(f"{base}/tournaments", headers=in_app, json={
        "format": "round_robin", "entrants": ["greedy", "random"], "games_per_pairing": 2,
        "rules": {"preset": "simple", "target": 11}})
    assert made.status_code == 201, made.text
    deadline = time.monotonic() + 120
    while (found := requests.get(f"{base}/tournaments/{made.json()['id']}", headers=in_app).json())["status"] \
            != "finished":
        assert time.monotonic() < deadline, found
        time.sleep(0.5)
    assert sum(row["games"] for row in found["standings"]) == 4  # two games, each counted for both


@pytest.mark.slow
def test_looks_at_once_tell_each_person_of_each_game_once(server):
    """Issue 64, 5: two looks at one moment each created a pairing's game and each told its
    people (6 notices for 4 games): now only the look that wrote the game tells them."""
    base, _ = server
    people = [player(base, name) for name in ("Nadia", "Omar", "Rim", "Said")]
    made = requests.post(f"{base}/tournaments", json={
        "format": "round_robin", "entrants": [], "starts_in_seconds": 1, "turn_seconds": 60,
        "games_per_pairing": 1, "rules": {"preset": "simple"}}).json()
    for _, headers in people:
        assert requests.post(f"{base}/tournaments/{made['id']}/entrants", headers=headers).status_code == 200
    time.sleep(1.2)
    with ThreadPoolExecutor(max_workers=12) as looks:
        list(looks.map(lambda _: requests.get(f"{base}/tournaments/{made['id']}"), range(24)))
    for _, headers in people:
        notices = requests.get(f"{base}/players/me/notices", params={"after": "0-0", "wait_seconds": 0},
                               headers=headers).json()["notices"]
        told = [n["game_id"] for n in notices if n["type"] == "tournament_round"]
        assert len(told) == len(set(told)) == 1, told  # round one: one game each, told once


def test_a_notice_the_store_did_not_take_stays_owed_and_the_next_look_tells_it_once(app, client, monkeypatch):
    """Issue 64, 5: a tournament's notice is owed until told. The inbox write of a round's first
    notice fails (the store answers no more): the others are told, that one stays owed, and the
    next look tells it. Each person is told of each game once."""
    import redis as redis_module
    people = [client.post("/players", json={"name": name}).json for name in ("Nadia", "Omar")]
    made = client.post("/tournaments", json={"format": "round_robin", "entrants": ["random"], "starts_in_seconds": 1,
                                             "turn_seconds": 60, "games_per_pairing": 1,
                                             "rules": {"preset": "simple"}}).json
    for created in people:
        assert client.post(f"/tournaments/{made['id']}/entrants",
                           headers={"Authorization": f"Bearer {created['token']}"}).status_code == 200
    store, failed = app.services.players.store, []
    notify = store.notify

    def fails_once(player_id, notice, once=None):
        if not failed and notice["type"] == "tournament_round":
            failed.append(player_id)
            raise redis_module.ConnectionError("the store answered no more")
        return notify(player_id, notice, once)

    monkeypatch.setattr(store, "notify", fails_once)
    time.sleep(1.1)
    started = client.get(f"/tournaments/{made['id']}").json
    assert started["status"] == "running" and failed
    owed = app.services.tournaments.store.owed(made["id"])
    assert [(n["player_id"], n["notice"]["type"]) for n in owed] == [(failed[0], "tournament_round")]
    client.get(f"/tournaments/{made['id']}")  # the next look tells it
    client.get(f"/tournaments/{made['id']}")  # and one more tells nothing again
    assert app.services.tournaments.store.owed(made["id"]) == []
    games = {game_id for r in started["rounds"] for t in r["pairings"] for game_id in (t["games"] or [])}
    for created in people:
        notices = client.get("/players/me/notices", query_string={"after": "0-0", "wait_seconds": 0},
                             headers={"Authorization": f"Bearer {created['token']}"}).json["notices"]
        told = [n["game_id"] for n in notices if n["type"] == "tournament_round"]
        assert len(told) == len(set(told)) == 1 and set(told) <= games, told


def test_first_seats_are_balanced_as_colours_are(app):
    """Issue 64, 2: with one game a pairing, a round robin's entrant 0 sat first in all 7 of its
    pairings; now whoever has had the first seat less often takes it: 3 or 4 times in 7 each."""
    made = app.services.tournaments.create({
        "format": "round_robin", "entrants": ["greedy", "random", "casual", "expert"] * 2, "cycles": 1,
        "games_per_pairing": 1, "players_per_table": 2, "turn_seconds": 60, "rules": {"preset": "simple"}}, "public")
    doc = app.services.tournaments.store.load(made["id"])
    firsts = [0] * 8
    for number in doc["rounds"]:
        for table in number["pairings"]:
            firsts[table["seats"][0]] += 1
    assert len(doc["rounds"]) == 7 and sorted(firsts) == [3, 3, 3, 3, 4, 4, 4, 4], firsts


@pytest.mark.slow
def test_people_withdraw_come_back_and_enter_late_and_the_owner_cancels(server):
    """Issue 64, 3 and 4: withdraw before and during; late entry into an arena (a Swiss only before
    half its rounds); `max_entrants`; the owner (and nobody else) cancels, games in play ending
    `cancelled`, unrated."""
    base, _ = server
    (amina, amina_auth), (omar, omar_auth), (rim, rim_auth) = (player(base, n) for n in ("Amina", "Omar", "Rim"))
    small = requests.post(f"{base}/tournaments", headers=amina_auth, json={
        "format": "arena", "entrants": [], "starts_in_seconds": 600, "duration_seconds": 600, "max_entrants": 2,
        "games_per_pairing": 1, "turn_seconds": 60, "rules": {"preset": "simple"}}).json()
    for auth in (amina_auth, omar_auth):
        assert requests.post(f"{base}/tournaments/{small['id']}/entrants", headers=auth).status_code == 200
    full = requests.post(f"{base}/tournaments/{small['id']}/entrants", headers=rim_auth)
    assert full.status_code == 409 and full.json()["code"] == "tournament_full"
    left = requests.post(f"{base}/tournaments/{small['id']}/withdraw", headers=omar_auth).json()
    assert left["entrants"] == [f"player:{amina}"]  # before it starts: the entry is taken back
    assert requests.post(f"{base}/tournaments/{small['id']}/withdraw", headers=omar_auth).json()["code"] == \
        "not_entered"

    arena = requests.post(f"{base}/tournaments", headers=amina_auth, json={
        "format": "arena", "entrants": ["greedy", "random", "casual"], "duration_seconds": 600,
        "games_per_pairing": 1, "turn_seconds": 60, "rules": {"preset": "simple"}}).json()
    assert arena["status"] == "running"  # greedy and random at a table (no worker here: they stay there)
    joined = requests.post(f"{base}/tournaments/{arena['id']}/entrants", headers=omar_auth)
    assert joined.status_code == 200 and f"player:{omar}" in joined.json()["entrants"]  # late, into a running arena
    game_id = wait_for_table(base, arena["id"], 3)["games"][-1]  # Omar meets casual, free since the start
    out = requests.post(f"{base}/tournaments/{arena['id']}/withdraw", headers=omar_auth).json()
    assert out["away"] == [3]
    game = requests.get(f"{base}/games/{game_id}").json()
    assert game["status"] == "finished" and game["outcome"]["reason"] == "resigned"
    back = requests.post(f"{base}/tournaments/{arena['id']}/entrants", headers=omar_auth).json()
    assert back["away"] == []
    assert requests.post(f"{base}/tournaments/{arena['id']}/entrants", headers=rim_auth).status_code == 200
    replayed = wait_for_table(base, arena["id"], 4)
    assert set(replayed["seats"]) == {2, 4}  # casual (a point up) meets Rim: Omar was its last opponent
    assert requests.post(f"{base}/tournaments/{arena['id']}/cancel", headers=omar_auth).json()["code"] == \
        "not_the_owner"
    cancelled = requests.post(f"{base}/tournaments/{arena['id']}/cancel", headers=amina_auth).json()
    assert cancelled["status"] == "cancelled"
    called_off = requests.get(f"{base}/games/{replayed['games'][-1]}").json()
    assert called_off["outcome"] == {"reason": "cancelled", "seat": None} and called_off["winner"] is None
    assert not called_off["rated"] or requests.get(f"{base}/players/{rim}").json()["games"] == 0
    assert requests.post(f"{base}/tournaments/{arena['id']}/entrants", headers=player(base, "Sara")[1]
                         ).status_code == 409


def wait_for_table(base, tournament_id, entrant, after=None, seconds=30):
    """The entrant's table in play (with a game other than `after`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = requests.get(f"{base}/tournaments/{tournament_id}").json()
        for number in found["rounds"]:
            for table in number["pairings"]:
                if entrant in table["seats"] and table["result"] is None and table["games"] \
                        and table["games"][-1] != after:
                    return table
        time.sleep(0.2)
    raise AssertionError("no table in play")


@pytest.mark.slow
def test_an_arena_pauses_a_person_who_missed_a_game_until_they_enter_again(server, worker):
    """Issue 64, 3: a person who never moves was paired 12 times, each opponent waiting out the
    timer; now a missed game (its timer ran out on them) pauses them (Lichess), one call brings them back."""
    base, _ = server
    _, noor_auth = player(base, "Noor")
    arena = requests.post(f"{base}/tournaments", json={
        "format": "arena", "entrants": ["random"], "starts_in_seconds": 1, "duration_seconds": 120,
        "games_per_pairing": 1, "turn_seconds": 1, "rules": {"preset": "simple"}}).json()
    assert requests.post(f"{base}/tournaments/{arena['id']}/entrants", headers=noor_auth).status_code == 200
    deadline = time.monotonic() + 60
    while (found := requests.get(f"{base}/tournaments/{arena['id']}").json())["away"] != [1]:
        assert time.monotonic() < deadline, found
        time.sleep(0.3)
    missed = found["rounds"][0]["pairings"][0]
    assert requests.get(f"{base}/games/{missed['games'][0]}").json()["outcome"]["reason"] in ("aborted", "forfeit")
    # A look moves an arena on: random is free, so a look would seat them again were they not paused.
    assert len(requests.get(f"{base}/tournaments/{arena['id']}").json()["rounds"]) == len(found["rounds"])
    back = requests.post(f"{base}/tournaments/{arena['id']}/entrants", headers=noor_auth).json()
    assert back["away"] == []
    wait_for_table(base, arena["id"], 1, after=missed["games"][0])
    requests.post(f"{base}/tournaments/{arena['id']}/withdraw", headers=noor_auth)


def test_tournaments_are_listed_by_status_and_format(server):
    """Issue 64, 4: `GET /tournaments?status=&format=`, as a club's page lists them."""
    base, _ = server
    swiss = requests.post(f"{base}/tournaments", json={
        "format": "swiss", "entrants": ["greedy"], "starts_in_seconds": 600, "rules": {"preset": "simple"}}).json()
    arena = requests.post(f"{base}/tournaments", json={
        "format": "arena", "entrants": ["greedy", "random"], "duration_seconds": 600,
        "rules": {"preset": "simple"}}).json()
    open_swiss = requests.get(f"{base}/tournaments", params={"status": "open", "format": "swiss", "page_size": 100})
    listed = [t["id"] for t in open_swiss.json()]
    assert swiss["id"] in listed and arena["id"] not in listed
    assert all(t["status"] == "open" and t["format"] == "swiss" for t in open_swiss.json())
    assert json.loads(open_swiss.headers["X-Pagination"])["total"] == len(listed)
    assert arena["id"] in [t["id"] for t in requests.get(f"{base}/tournaments", params={"format": "arena"}).json()]
    assert requests.get(f"{base}/tournaments", params={"status": "paused"}).status_code == 422


@pytest.mark.slow
def test_a_finished_round_robin_exports_as_trf_16_and_its_games_as_json_lines(server, worker):
    """Issue 64, 4: `GET /tournaments/{id}/export?format=trf|jsonl`."""
    base, _ = server
    made = requests.post(f"{base}/tournaments", json={
        "format": "round_robin", "entrants": ["greedy", "random", "casual", "greedy"], "games_per_pairing": 1,
        "rules": {"preset": "simple"}}).json()
    done = finished(base, made["id"])
    report = requests.get(f"{base}/tournaments/{made['id']}/export", params={"format": "trf"})
    assert report.status_code == 200 and report.headers["Content-Type"].startswith("text/plain")
    players = [line for line in report.text.splitlines() if line.startswith("001")]
    assert len(players) == 4 and report.text.splitlines()[2] == "062 4"
    points = {row["entrant"]: row for row in done["standings"]}
    for number, line in enumerate(players):
        assert int(line[4:8]) == number + 1 and float(line[80:84]) == points[number]["points"]
        assert int(line[85:89]) == points[number]["rank"]
        cells = [line[91 + 10 * k:91 + 10 * k + 8] for k in range(3)]
        assert sorted(int(cell[:4]) for cell in cells) == sorted(e + 1 for e in range(4) if e != number)
        assert all(cell[5] in "wb" and cell[7] in "10=" for cell in cells)
    games = requests.get(f"{base}/tournaments/{made['id']}/export", params={"format": "jsonl"})
    lines = [json.loads(line) for line in games.text.splitlines()]
    assert len(lines) == 6 and all(line["events"][-1]["type"] == "game_over" for line in lines)
    arena = requests.post(f"{base}/tournaments", json={
        "format": "arena", "entrants": ["greedy", "random"], "duration_seconds": 60, "rules": {"preset": "simple"}})
    refused = requests.get(f"{base}/tournaments/{arena.json()['id']}/export", params={"format": "trf"})
    assert refused.status_code == 422 and refused.json()["field"] == "format"
