"""Bot moves on RQ workers against a real Redis: the job path, stale jobs, and a killed worker."""

import signal
import threading
import time
import uuid

import pytest
import redis
from rq import Queue
from rq.registry import ScheduledJobRegistry

from app import create_app
from app.bots import choose_action
from app.jobs.dispatch import job_safe, match_queue_name
from app.ops.connection import connect
from app.ops.keys import bucket_of, due_moves_key, state_key
from faults import start_worker
from workers.runner import BotWorker
from http_helpers import act, seat_view


@pytest.fixture
def queue_name():
    return f"bots-test-{uuid.uuid4().hex[:8]}"


def app_on_rq(redis_url, queue_name, **config):
    # No rate limits: the killed-worker story polls for up to a minute and a half.
    return create_app({"REDIS_URL": redis_url, "BOT_QUEUE": queue_name, "BOT_DISPATCH": "rq",
                       "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0, **config})


@pytest.fixture
def rq_app(redis_url, queue_name):
    return app_on_rq(redis_url, queue_name)


def run_queue(redis_url, queue_name):
    connection = connect(redis_url)
    queues = [Queue(name, connection=connection) for name in (queue_name, match_queue_name(queue_name))]
    BotWorker(queues, connection=connection).work(burst=True)  # the worker `ronda worker` runs


def test_a_bot_moves_through_the_queue_then_waits_for_the_human(rq_app, redis_url, queue_name):
    client = rq_app.test_client()
    rv = client.post("/games", json={"players": 2, "first_dealer": 0,
                                     "seats": [{"type": "human", "name": "Me"}, {"type": "bot", "bot": "greedy"}]})
    game, token = rv.json["game"], rv.json["tokens"][0]["token"]
    assert game["awaiting"] == [1] and Queue(queue_name, connection=connect(redis_url)).count == 1
    run_queue(redis_url, queue_name)
    view = seat_view(client, game["id"], token)
    assert view["version"] >= 2 and view["awaiting"] == [0]  # a declaration may come before the card
    played = [e for e in client.get(f"/games/{game['id']}/events").json if e["type"] == "play"]
    assert [e["seat"] for e in played] == [1]
    assert act(client, game["id"], token, view["legal_actions"][0], view["version"]).status_code == 200
    run_queue(redis_url, queue_name)
    after = seat_view(client, game["id"], token)
    assert after["awaiting"] == [0] and after["version"] >= view["version"] + 2


def test_a_bot_on_a_worker_reads_the_deal_history_as_its_seat_sees_it(rq_app, redis_url, queue_name, monkeypatch):
    import app.games.moves
    seen = []

    def spy(kind, knowledge, rng):
        if threading.current_thread() is threading.main_thread():  # the worker run below, not another
            seen.append(knowledge["history"])                     # test's turn timer firing late
        return choose_action(kind, knowledge, rng)

    monkeypatch.setattr(app.games.moves, "choose_action", spy)
    client = rq_app.test_client()
    rv = client.post("/games", json={"players": 2, "first_dealer": 1, "rules": {"preset": "simple"},
                                     "seats": [{"type": "human"}, {"type": "bot", "bot": "greedy"}]})
    game, token = rv.json["game"], rv.json["tokens"][0]["token"]
    view = seat_view(client, game["id"], token)
    card = view["legal_actions"][0]
    assert act(client, game["id"], token, card, view["version"]).status_code == 200
    run_queue(redis_url, queue_name)
    history = seen[0]
    assert history[0]["type"] == "deal" and "hands" not in history[0]  # the human's hand stays hidden
    assert [(e["seat"], e["card"]) for e in history if e["type"] == "play"] == [(0, card["card"])]


def test_a_job_for_a_version_that_is_gone_ends_quietly(rq_app, redis_url, queue_name):
    client = rq_app.test_client()
    rv = client.post("/games", json={"players": 2, "first_dealer": 0,
                                     "seats": [{"type": "human"}, {"type": "bot", "bot": "random"}]})
    game = rv.json["game"]
    run_queue(redis_url, queue_name)
    version = client.get(f"/games/{game['id']}").json["version"]
    moves = rq_app.services.moves
    assert version >= 2 and moves.play_bot_turn(game["id"], 1) is False  # version 1 was played already
    assert client.get(f"/games/{game['id']}").json["version"] == version


def test_bots_that_follow_each_other_play_a_whole_game(rq_app, redis_url, queue_name):
    client = rq_app.test_client()
    rv = client.post("/games", json={"players": 2, "rules": {"preset": "simple"},
                                     "seats": [{"type": "bot", "bot": "random"}, {"type": "bot", "bot": "greedy"}]})
    run_queue(redis_url, queue_name)
    final = client.get(f"/games/{rv.json['game']['id']}").json
    assert final["status"] == "finished" and final["winner"] in (0, 1)


@pytest.mark.slow
def test_the_sweeper_reads_only_games_owing_a_move_and_redispatches_a_lost_turn(own_redis, queue_name):
    """On a Redis of its own: a sweep with no stall time owes every game of the store a move, and
    those of earlier tests are not this test's to play. The bots' stall is 2 s, so that the look
    within it comes within it on a loaded machine too."""
    redis_url = own_redis.url
    stall = 2.0
    rq_app = app_on_rq(redis_url, queue_name, BOT_STALL_SECONDS=stall)
    client = rq_app.test_client()
    sweeper, store = rq_app.services.sweeper, rq_app.services.store
    queue = Queue(queue_name, connection=connect(redis_url))
    with_bot = client.post("/games", json={"players": 2, "first_dealer": 0, "seats": [
        {"type": "human"}, {"type": "bot", "bot": "greedy"}]}).json["game"]["id"]
    humans_only = client.post("/games", json={"players": 2, "seats": [{"type": "human"}] * 2}).json["game"]["id"]
    noted = dict(store.schedule.moves_due_before(time.time() + stall + 1, 10_000))
    assert with_bot in noted and humans_only not in noted
    assert with_bot not in [game_id for game_id, _, _ in sweeper.due_moves(stall)]  # its job has its stall first
    queue.empty()  # the bot's job is lost
    time.sleep(stall + 0.05)
    assert sweeper.dispatch_due(stall) >= 1 and f"bot-{job_safe(with_bot)}-1" in queue.get_job_ids()
    run_queue(redis_url, queue_name)
    assert client.get(f"/games/{with_bot}").json["awaiting"] == [0]  # the bot moved; the human is next
    time.sleep(stall + 0.05)  # the note the queueing left, to look again after a stall
    assert with_bot not in [game_id for game_id, _, _ in sweeper.due_moves(0)]
    assert with_bot not in dict(store.schedule.moves_due_before(time.time() + 1, 10_000))  # dropped on the way


def test_a_move_noted_again_is_not_dropped_by_a_sweep_that_read_the_older_note(rq_app):
    store = rq_app.services.store
    game_id = f"sweep-{uuid.uuid4().hex}"
    store.schedule.note_due_move(game_id, time.time())
    schedule = store.schedule
    (_, first_note), = [entry for entry in schedule.moves_due_before(time.time() + 1, 10_000) if entry[0] == game_id]
    time.sleep(0.01)
    store.schedule.note_due_move(game_id, time.time(), later=True)
    store.schedule.forget_due_move(game_id, first_note)
    assert game_id in dict(store.schedule.moves_due_before(time.time() + 1, 10_000))
    (_, second_note), = [entry for entry in schedule.moves_due_before(time.time() + 1, 10_000) if entry[0] == game_id]
    store.schedule.forget_due_move(game_id, second_note)
    assert game_id not in dict(store.schedule.moves_due_before(time.time() + 1, 10_000))


@pytest.mark.slow
def test_a_game_survives_its_worker_being_killed_mid_game(rq_app, redis_url, queue_name):
    client = rq_app.test_client()
    rv = client.post("/games", json={"players": 2, "rules": {"preset": "simple"},
                                     "seats": [{"type": "bot", "bot": "expert"}, {"type": "bot", "bot": "expert"}]})
    game_id = rv.json["game"]["id"]
    worker = start_worker(redis_url, queue_name)
    deadline = time.time() + 60
    while client.get(f"/games/{game_id}").json["version"] < 6 and time.time() < deadline:
        time.sleep(0.05)
    worker.send_signal(signal.SIGKILL)  # most likely in the middle of an expert's move
    worker.wait()
    stopped_at = client.get(f"/games/{game_id}").json["version"]
    assert stopped_at >= 6
    replacement = start_worker(redis_url, queue_name)
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            state = client.get(f"/games/{game_id}").json
            if state["version"] > stopped_at + 3:
                break
            time.sleep(0.2)
        assert state["version"] > stopped_at + 3, "the game stalled after the worker died"
    finally:
        replacement.terminate()
        replacement.wait()


def test_a_small_match_end_to_end_through_the_api(rq_app, redis_url, queue_name):
    client = rq_app.test_client()
    rv = client.post("/matches", json={"rules": {"preset": "classic"}, "bots": ["greedy", "random"], "games": 4,
                                       "seed": "small-match"})
    assert rv.status_code == 202 and rv.headers["Location"] == f"/matches/{rv.json['id']}"
    assert rv.json["status"] == "running" and rv.json["games_done"] == 0
    run_queue(redis_url, queue_name)
    match = client.get(rv.headers["Location"]).json
    assert match["status"] == "finished" and match["games_done"] == 4
    assert sum(e["wins"] for e in match["entrants"]) == 4
    assert all(e["win_rate_low"] <= e["win_rate"] <= e["win_rate_high"] for e in match["entrants"])
    games = client.get(f"{rv.headers['Location']}/games").json
    assert len(games) == 4 and all(g["status"] == "finished" for g in games)
    by_deck = {}
    for game in games:  # duplicate deals: each deck twice, with the bots in swapped seats
        events = client.get(f"/games/{game['id']}/events?limit=2000").json
        assert events[-1]["type"] == "game_over"
        by_deck.setdefault(events[-1]["seed"], []).append([s["bot"] for s in game["seats"]])
    assert sorted(len(v) for v in by_deck.values()) == [2, 2]
    assert connect(redis_url).ttl(state_key(games[0]["id"])) > 0  # finished when stored: it expires too
    assert all(seats[0] == seats[1][::-1] for seats in by_deck.values())


def test_a_match_game_counts_once_even_if_its_job_runs_twice(rq_app, redis_url, queue_name):
    matches = rq_app.services.matches
    match = matches.create_match({"bots": ["random", "random"], "games": 1, "rules": {"preset": "simple"}},
                                 "test-client", cap=0)
    assert matches.play_match_game(match["id"], 0) is True
    assert matches.play_match_game(match["id"], 0) is False
    assert matches.status(match["id"])["games_done"] == 1


@pytest.mark.slow
def test_a_turn_timer_is_the_games_note_and_the_sweep_queues_it_when_it_runs_out(own_redis, queue_name):
    """A move's answer schedules nothing on the queue (no RQ scheduled job: one round trip less);
    the write's note is the timer, and the workers' sweep queues the timeout once it has run out.
    On a Redis of its own, so the sweep finds no earlier test's games. The timer is 3 s, so that
    the look before it runs out comes before it on a loaded machine too."""
    redis_url = own_redis.url
    rq_app = app_on_rq(redis_url, queue_name)
    client = rq_app.test_client()
    connection = connect(redis_url)
    queue = Queue(queue_name, connection=connection)
    timer, created_at = 3, time.time()
    rv = client.post("/games", json={"players": 2, "turn_timeout_seconds": timer,
                                     "seats": [{"type": "human"}, {"type": "human"}]})
    game = rv.json["game"]
    job_id = f"timeout-{job_safe(game['id'])}-{game['version']}"
    assert ScheduledJobRegistry(queue=queue).get_job_ids() == [] and job_id not in queue.get_job_ids()
    sweeper = rq_app.services.sweeper
    assert game["id"] not in [game_id for game_id, _, _ in sweeper.due_moves(5)]  # not run out yet
    time.sleep(max(0.0, created_at + timer + 0.1 - time.time()))
    assert sweeper.dispatch_due(5) == 1 and job_id in queue.get_job_ids()
    run_queue(redis_url, queue_name)
    events = client.get(f"/games/{game['id']}/events?after={game['event_count']}").json
    # The first move never made: the timer's job aborts the game (tests/test_absence.py has the rest).
    assert events and events[0]["type"] == "game_over" and events[0]["reason"] == "aborted"
    assert events[0]["seat"] == game["awaiting"][0]


@pytest.mark.slow
def test_a_live_games_bot_reply_does_not_wait_behind_a_2000_game_match(rq_app, redis_url, queue_name):
    """One `ronda worker` with 2,000 expert games queued (about an hour and a half of work): a
    human's game still gets its bot's move at once, from the worker's live-moves process."""
    client = rq_app.test_client()
    worker = start_worker(redis_url, queue_name)
    try:
        own_address = {"REMOTE_ADDR": f"10.8.{uuid.uuid4().int % 250}.1"}  # other tests' matches hold no share
        rv = client.post("/matches", json={"bots": ["expert", "expert"], "games": 2000}, environ_base=own_address)
        assert rv.status_code == 202
        match_queue = Queue(match_queue_name(queue_name), connection=connect(redis_url))
        deadline = time.time() + 30
        while match_queue.count > 1999 - 1 and time.time() < deadline:  # the match worker took its first game
            time.sleep(0.05)
        created = time.monotonic()
        game = client.post("/games", json={"players": 2, "first_dealer": 0, "seats": [
            {"type": "human"}, {"type": "bot", "bot": "greedy"}]}).json["game"]
        while client.get(f"/games/{game['id']}").json["awaiting"] != [0] and time.monotonic() - created < 20:
            time.sleep(0.02)
        waited = time.monotonic() - created
        print(f"bot reply {waited:.2f} s after the game was created, behind {match_queue.count} match games")
        assert client.get(f"/games/{game['id']}").json["awaiting"] == [0], "the bot's move waited behind the match"
        assert match_queue.count > 1900
    finally:
        Queue(match_queue_name(queue_name), connection=connect(redis_url)).empty()
        worker.kill()  # mid-way through an expert game: stopping is not this test's (its children die with it)
        worker.wait(timeout=30)


def test_running_match_games_are_capped_per_client(redis_url, queue_name):
    app = create_app({"REDIS_URL": redis_url, "BOT_QUEUE": queue_name, "BOT_DISPATCH": "rq",
                      "MATCH_GAMES_PER_CLIENT": 10, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    client = app.test_client()
    address = {"REMOTE_ADDR": f"10.9.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"}
    body = {"bots": ["random", "random"], "rules": {"preset": "simple"}}
    assert client.post("/matches", json={**body, "games": 6}, environ_base=address).status_code == 202
    refused = client.post("/matches", json={**body, "games": 5}, environ_base=address)
    assert refused.status_code == 429 and refused.json["code"] == "too_many_match_games"
    assert refused.headers["Retry-After"] and refused.content_type == "application/problem+json"
    run_queue(redis_url, queue_name)  # the six games finish and are released
    assert client.post("/matches", json={**body, "games": 5}, environ_base=address).status_code == 202
    run_queue(redis_url, queue_name)


def test_a_move_owed_after_the_sweeper_read_its_note_is_never_forgotten(rq_app, queue_name, monkeypatch):
    """The interleaving that stranded a game on a cluster: the sweeper reads a leftover overdue
    note and loads the game (it owes nothing yet); the human's write lands then and queues
    nothing (its answer lost); then the sweeper forgets the note it read. The note the new move
    needs must survive it, and the next sweep must find the move owed."""
    services, client = rq_app.services, rq_app.test_client()
    created = client.post("/games", json={"players": 2, "first_dealer": 1, "rules": {"preset": "simple"},
                                          "seats": [{"type": "human"}, {"type": "bot", "bot": "greedy"}]}).json
    game_id, token = created["game"]["id"], created["tokens"][0]["token"]
    store, sweeper = services.store, services.sweeper
    store.schedule.note_due_move(game_id, time.time() - 60)  # a note left over from an earlier move
    view = seat_view(client, game_id, token)
    load, moved = store.load, []

    def refuse(*args):
        raise redis.ConnectionError("injected: the queue cannot be reached")

    def load_then_the_human_moves(loading_id):
        loaded = load(loading_id)
        if loading_id == game_id and not moved:
            moved.append(True)
            with monkeypatch.context() as patch:
                patch.setattr(services.dispatcher, "bot_turn", refuse)
                assert act(client, game_id, token, view["legal_actions"][0], view["version"]).status_code == 200
        return loaded

    monkeypatch.setattr(store, "load", load_then_the_human_moves)
    assert game_id not in [g for g, _, _ in sweeper.due_moves(5)]  # it saw the game owing nothing
    monkeypatch.setattr(store, "load", load)
    assert moved and store.redis.zscore(due_moves_key(bucket_of(game_id)), game_id) is not None
    assert (game_id, view["version"] + 1, "bot") in sweeper.due_moves(0)


def test_re_dispatching_a_move_whose_job_still_waits_adds_no_second_job(rq_app, redis_url, queue_name):
    """One job per game version: the sweeper queueing a waiting move again leaves one job in the
    queue; once that job ran, none either (the sweeper read the game before the job moved it: a
    second run would be work done twice); a job that failed is queued afresh."""
    dispatcher, client = rq_app.services.dispatcher, rq_app.test_client()
    created = client.post("/games", json={"players": 2, "first_dealer": 0, "rules": {"preset": "simple"},
                                          "seats": [{"type": "human"}, {"type": "bot", "bot": "greedy"}]}).json
    game_id, version = created["game"]["id"], created["game"]["version"]
    queue = Queue(queue_name, connection=connect(redis_url))
    assert queue.count == 1  # the creation queued the bot's move
    for _ in range(3):
        dispatcher.bot_turn(game_id, version)
    assert queue.count == 1
    run_queue(redis_url, queue_name)
    dispatcher.bot_turn(game_id, version)
    assert queue.count == 0
    from rq.job import Job
    queue.connection.hset(Job.key_for(f"bot-{game_id}-{version}"), "status", "failed")
    dispatcher.bot_turn(game_id, version)
    assert queue.count == 1


def ladder_of(rq_app) -> dict:
    return {row["entrant"]: row for row in rq_app.services.accounts.ladder()}


def test_a_bot_only_match_whose_jobs_were_lost_is_reconciled_and_counted_once(rq_app, redis_url, queue_name):
    """RQ never runs a job that came back `queued` with its queue's push lost (nor one it deleted):
    the match reconciler looks at the match, not at RQ, and dispatches what is owed again."""
    matches = rq_app.services.matches
    match = matches.create_match({"bots": ["greedy", "casual"], "games": 6, "rules": {"preset": "simple"}},
                                 "test-client", cap=0)
    queue = Queue(match_queue_name(queue_name), connection=connect(redis_url))
    assert queue.count == 6
    queue.connection.delete(queue.key)  # every push lost; the jobs' hashes still say queued
    before = ladder_of(rq_app)
    run_queue(redis_url, queue_name)
    assert matches.status(match["id"])["games_done"] == 0  # stuck: nothing runs them
    assert matches.reconcile(0) >= 1 and queue.count == 6
    assert matches.reconcile(0) >= 1 and queue.count == 6  # waiting: not queued twice
    run_queue(redis_url, queue_name)
    status = matches.status(match["id"])
    assert status["status"] == "finished" and sum(e["wins"] for e in status["entrants"]) == 6
    matches.reconcile(0)  # a finished match is let go, every rated game on the ladder
    after = ladder_of(rq_app)
    for bot in ("greedy", "casual"):
        assert after[bot]["games"] - before.get(bot, {}).get("games", 0) == 6
    assert match["id"] not in matches.store.not_moved_since(time.time() + 1)


def test_a_rating_lost_after_its_game_was_recorded_is_applied_once_by_the_reconciler(rq_app, redis_url):
    """Redis losing its last second can keep a game's record and lose its rating: the record
    carries the rating, and the ladder counts a game id once however often it is applied."""
    matches, accounts = rq_app.services.matches, rq_app.services.accounts
    match = matches.create_match({"bots": ["greedy", "random"], "games": 2, "rules": {"preset": "simple"}},
                                 "test-client", cap=0)
    before = ladder_of(rq_app)
    original = accounts.rate_game
    accounts.rate_game = lambda **rated: None  # the rating writes are lost
    try:
        assert matches.play_match_game(match["id"], 0) and matches.play_match_game(match["id"], 1)
    finally:
        accounts.rate_game = original
    assert ladder_of(rq_app).get("greedy", {}).get("games", 0) == before.get("greedy", {}).get("games", 0)
    assert matches.play_match_game(match["id"], 0) is False  # a replay: not counted again, but rated
    matches.reconcile(0)
    matches.reconcile(0)
    after = ladder_of(rq_app)
    assert after["greedy"]["games"] - before.get("greedy", {}).get("games", 0) == 2
    assert after["random"]["games"] - before.get("random", {}).get("games", 0) == 2


@pytest.mark.slow
def test_a_match_dealt_from_its_creators_seed_is_never_rated(rq_app):
    matches = rq_app.services.matches
    match = matches.create_match({"bots": ["expert", "random"], "games": 2, "seed": "my-own-seed",
                                  "rules": {"preset": "simple"}}, "test-client", cap=0)
    before = ladder_of(rq_app)
    assert matches.play_match_game(match["id"], 0) and matches.play_match_game(match["id"], 1)
    matches.reconcile(0)
    assert matches.status(match["id"])["games_done"] == 2
    after = ladder_of(rq_app)
    assert after.get("expert", {}).get("games") == before.get("expert", {}).get("games")


def test_a_job_that_came_back_started_by_a_worker_long_gone_is_queued_again_and_a_waiting_one_is_not(
        rq_app, redis_url, queue_name):
    """What Redis restarted from its file can hold: a job `started` with an execution whose worker
    is gone (RQ keeps the execution's entry for the job's whole timeout, and Job.delete refuses
    it), its queue's push lost. The dispatcher queues it again; a job that waits is left alone."""
    from rq.job import Job
    dispatcher = rq_app.services.dispatcher
    match_id = f"lost-{uuid.uuid4().hex[:8]}"
    dispatcher.match_game(match_id, 0)
    queue = Queue(match_queue_name(queue_name), connection=connect(redis_url))
    job_id = f"match-{match_id}-0"
    queue.connection.lrem(queue.key, 0, job_id)
    queue.connection.hset(Job.key_for(job_id), "status", "started")
    queue.connection.zadd(f"rq:executions:{job_id}", {"gone": time.time() + 600})
    assert dispatcher.match_games_again(match_id, [0]) == 1
    assert queue.get_job_ids() == [job_id] and Job.fetch(job_id, connection=queue.connection).get_status() == "queued"
    assert dispatcher.match_games_again(match_id, [0]) == 0 and queue.get_job_ids() == [job_id]


def test_a_job_whose_hash_lost_its_status_is_queued_again_not_left_for_good(rq_app, redis_url, queue_name):
    """Found by the soak (seed 41): a bot job's hash held no status (RQ then refuses to delete it),
    so every sweep failed on that game and it never moved again."""
    from rq.job import Job
    client, dispatcher = rq_app.test_client(), rq_app.services.dispatcher
    created = client.post("/games", json={"players": 2, "first_dealer": 0, "rules": {"preset": "simple"},
                                          "seats": [{"type": "human"}, {"type": "bot", "bot": "greedy"}]}).json
    game_id, version = created["game"]["id"], created["game"]["version"]
    queue = Queue(queue_name, connection=connect(redis_url))
    job_id = f"bot-{game_id}-{version}"
    queue.connection.lrem(queue.key, 0, job_id)
    queue.connection.hdel(Job.key_for(job_id), "status")
    dispatcher.bot_turn(game_id, version)
    assert queue.get_job_ids() == [job_id]
    run_queue(redis_url, queue_name)
    assert client.get(f"/games/{game_id}").json["awaiting"] == [0]  # the bot moved
