"""Faults met as an operator meets them, injected into real processes: a Redis call failing at
each step of a move, Redis killed, frozen and restarted under API and `ronda worker` processes,
a request that died holding its Idempotency-Key. No fakes: real redis-server processes."""

import json
import threading
import time
import uuid

import pytest
import redis
import requests

from app import create_app
from faults import FaultyRedis, play_human_until_over, start_worker, stop
from redis_server import EverysecRedisServer
from http_helpers import act, seat_view

pytestmark = pytest.mark.slow  # processes killed and restarted: left out of the fast loop (pytest -m 'not slow')

PROBLEM = "application/problem+json"
NO_LIMITS = {"RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0}


@pytest.fixture
def queue_name():
    return f"bots-faults-{uuid.uuid4().hex[:8]}"


def human_against_greedy(client, **rules):
    rv = client.post("/games", json={"players": 2, "first_dealer": 1, "rules": {"preset": "simple", **rules},
                                     "seats": [{"type": "human"}, {"type": "bot", "bot": "greedy"}]})
    assert rv.status_code == 201, rv.json
    return rv.json["game"]["id"], rv.json["tokens"][0]["token"]


def test_a_redis_failure_at_any_call_of_a_move_never_strands_the_game(redis_url, queue_name, monkeypatch):
    """Each Redis call of a human's move (read, note, compare-and-set, queueing the bot's job) fails
    in turn, refused or with its answer lost: the answer is 200 or a 503 problem, and the game
    still finishes, the bot's move made by a real `ronda worker` (its sweeper when the job was lost)."""
    faulty = FaultyRedis.to(redis_url)
    monkeypatch.setattr("app.wiring.connect", lambda url, **options: faulty)
    app = create_app({"REDIS_URL": redis_url, "BOT_QUEUE": queue_name, "BOT_DISPATCH": "rq", **NO_LIMITS})
    client = app.test_client()
    worker = start_worker(redis_url, queue_name)
    try:
        game_id, token = human_against_greedy(client)
        view = seat_view(client, game_id, token)
        before = faulty.calls
        assert act(client, game_id, token, view["legal_actions"][0], view["version"]).status_code == 200
        calls_of_a_move = faulty.calls - before
        assert calls_of_a_move >= 4  # read, note, compare-and-set, queue
        answers = []
        for nth in range(1, calls_of_a_move + 1):
            for after in (False, True):
                game_id, token = human_against_greedy(client, target=3)
                view = seat_view(client, game_id, token)
                faulty.fail(nth, after)
                rv = act(client, game_id, token, view["legal_actions"][0], view["version"])
                faulty.fail_at = None  # a move that made fewer calls was not hit
                assert rv.status_code in (200, 503), rv.get_data(as_text=True)
                if rv.status_code == 503:
                    assert rv.content_type == PROBLEM and rv.headers["Retry-After"]
                    assert rv.json["code"] in ("store_unavailable", "outcome_unknown")
                answers.append((nth, after, rv.status_code, rv.json.get("code")))
                started = time.monotonic()
                final = play_human_until_over(client, game_id, token)
                assert final["winner"] in (0, 1)
                print(f"call {nth} failing {'after' if after else 'before'} it ran: answer {answers[-1][2:]}, "
                      f"game over {time.monotonic() - started:.1f} s later")
        assert {status for _, _, status, _ in answers} == {200, 503}
        assert ("outcome_unknown" in {code for _, _, _, code in answers})
    finally:
        stop(worker)


def test_redis_down_or_frozen_answers_503_with_retry_after_within_two_seconds(own_redis):
    app = create_app({"REDIS_URL": own_redis.url, "BOT_DISPATCH": "inprocess", **NO_LIMITS})
    client = app.test_client()
    game_id, _token = human_against_greedy(client)
    for fault, mend in ((own_redis.freeze, own_redis.thaw), (own_redis.kill, own_redis.restart)):
        fault()
        for method, path in (("get", f"/games/{game_id}"), ("get", "/health/ready"), ("post", "/games")):
            started = time.monotonic()
            rv = getattr(client, method)(path, json={"players": 2} if method == "post" else None)
            took = time.monotonic() - started
            assert rv.status_code == 503 and rv.content_type == PROBLEM, (fault.__name__, path, rv.status_code)
            assert rv.headers["Retry-After"] == "1" and took < 2.5, (path, took)
            print(f"Redis {fault.__name__}: {method.upper()} {path.split('/')[1]} answered 503 in {took:.2f} s")
        assert client.get("/health/live").status_code == 200
        mend() if mend != own_redis.restart else own_redis.launch_again()
        assert client.get("/health/ready").status_code == 200
        assert client.get(f"/games/{game_id}").status_code == 200


def test_workers_outlive_a_redis_restart_mid_game_and_a_killed_workers_move_is_made_again(own_redis, queue_name):
    """Redis is killed and restarted under two running workers in the middle of a bot game: the
    game finishes and both workers are still running. Then one worker is killed in the middle of
    a game: the other's sweeper makes the lost move again (time printed)."""
    app = create_app({"REDIS_URL": own_redis.url, "BOT_QUEUE": queue_name, "BOT_DISPATCH": "rq", **NO_LIMITS})
    client = app.test_client()
    workers = [start_worker(own_redis.url, queue_name) for _ in range(2)]
    try:
        rv = client.post("/games", json={"players": 2, "rules": {"preset": "simple", "target": 21},
                                         "seats": [{"type": "bot", "bot": "expert"}, {"type": "bot", "bot": "expert"}]})
        game_id = rv.json["game"]["id"]
        wait_for(lambda: client.get(f"/games/{game_id}").json["version"] >= 5, 60)
        own_redis.restart()
        restarted = time.monotonic()
        wait_for(lambda: client.get(f"/games/{game_id}").json["status"] == "finished", 120)
        print(f"bot game finished {time.monotonic() - restarted:.1f} s after the Redis restart")
        assert all(worker.poll() is None for worker in workers), "a worker quit on the restart"

        rv = client.post("/games", json={"players": 2, "rules": {"preset": "simple"},
                                         "seats": [{"type": "bot", "bot": "expert"}, {"type": "bot", "bot": "expert"}]})
        game_id = rv.json["game"]["id"]
        wait_for(lambda: client.get(f"/games/{game_id}").json["version"] >= 5, 60)
        workers[0].kill()
        workers[0].wait()
        killed_at, version = time.monotonic(), client.get(f"/games/{game_id}").json["version"]
        wait_for(lambda: client.get(f"/games/{game_id}").json["version"] > version + 2, 60)
        print(f"the game moved on {time.monotonic() - killed_at:.1f} s after a worker was killed")
    finally:
        for worker in workers:
            if worker.poll() is None:
                stop(worker)


def wait_for(condition, seconds, what="the condition"):
    """`condition()`'s answer once it is truthy; Redis restarting meanwhile is waited out."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            answer = condition()
            if answer:
                return answer
        except (redis.ConnectionError, redis.TimeoutError, KeyError, TypeError, json.JSONDecodeError):
            pass  # a 503 while Redis restarts
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


def test_a_request_that_died_holding_its_idempotency_key_frees_it_after_the_lease(redis_url, monkeypatch):
    """The record of a request under way is left as a killed process leaves it (its game written,
    the write of its answer failing); a retry is told to wait, and after the lease the retry
    answers that same game: exactly one game for one key."""
    faulty = FaultyRedis.to(redis_url)
    monkeypatch.setattr("app.wiring.connect", lambda url, **options: faulty)
    monkeypatch.setattr("app.api.idempotency._keep_trying", lambda *args: None)  # a dead process tries no more
    app = create_app({"REDIS_URL": redis_url, "BOT_DISPATCH": "inprocess", "IDEMPOTENCY_LEASE_SECONDS": 1,
                      **NO_LIMITS})
    client = app.test_client()
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    body = {"players": 2, "seats": [{"type": "human"}, {"type": "human"}]}

    def create():
        return client.post("/games", json=body, headers=headers)

    client.post("/games", json=body)  # Lua scripts loaded: every create makes the same calls from here
    calls_before = faulty.calls
    first = create()
    calls_of_a_create = faulty.calls - calls_before
    assert first.status_code == 201
    headers["Idempotency-Key"] = uuid.uuid4().hex
    faulty.fail(calls_of_a_create, after=False)  # the last call: keeping the answer
    died = create()
    assert died.status_code == 201 and faulty.calls >= faulty.fail_at
    waiting = create()
    assert waiting.status_code == 409 and waiting.json["code"] == "idempotent_request_in_progress"
    time.sleep(1.2)
    retried, replayed = create(), create()
    assert retried.status_code == 201 and "Idempotent-Replayed" not in retried.headers
    assert retried.json["game"]["id"] == died.json["game"]["id"], "the retry created a second game"
    assert retried.json["tokens"] == died.json["tokens"]
    assert replayed.headers["Idempotent-Replayed"] == "true" and replayed.json == retried.json
    assert replayed.json["tokens"][0]["token"]
    assert seat_view(client, replayed.json["game"]["id"], replayed.json["tokens"][0]["token"])["seat"] == 0


def test_an_answer_whose_record_the_store_dropped_is_still_what_a_retry_gets(redis_url, monkeypatch):
    """The store drops the write of an action's idempotency record: the record follows in the
    background, and a retry with the key gets the first answer, not a 412 from running again."""
    client = redis.Redis.from_url(redis_url, socket_timeout=1.0)
    keep = client.set
    dropped = []

    def set_dropping_the_first_record(name, value, *args, **options):
        if not dropped and '"state": "done"' in str(value):
            dropped.append(name)
            raise redis.ConnectionError("injected: Redis dropped the record's write")
        return keep(name, value, *args, **options)

    monkeypatch.setattr(client, "set", set_dropping_the_first_record)
    monkeypatch.setattr("app.wiring.connect", lambda url, **options: client)
    app = create_app({"REDIS_URL": redis_url, "BOT_DISPATCH": "inprocess", **NO_LIMITS})
    http = app.test_client()
    created = http.post("/games", json={"players": 2, "seats": [{"type": "human"}, {"type": "human"}]}).json
    seat = created["game"]["awaiting"][0]
    token = created["tokens"][seat]["token"]
    view = seat_view(http, created["game"]["id"], token)
    headers = {"Authorization": f"Bearer {token}", "If-Match": f'"{view["version"]}"',
               "Idempotency-Key": uuid.uuid4().hex}
    path, action = f"/games/{created['game']['id']}/actions", view["legal_actions"][0]
    first = http.post(path, json=action, headers=headers)
    assert first.status_code == 200 and dropped
    deadline = time.monotonic() + 5
    while (retry := http.post(path, json=action, headers=headers)).status_code == 409 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert retry.status_code == 200 and retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json == first.json


def test_no_seat_token_can_be_read_from_redis(app, client, redis_url):
    """Creates, claims and their idempotent retries; then every key in Redis is read: no token."""
    tokens = []
    for _ in range(3):
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        body = {"players": 2, "seats": [{"type": "human"}, {"type": "open"}]}
        created = [client.post("/games", json=body, headers=headers) for _ in range(2)]
        assert created[0].json == created[1].json
        game_id = created[0].json["game"]["id"]
        tokens.append(created[0].json["tokens"][0]["token"])
        claim_headers = {"Idempotency-Key": uuid.uuid4().hex}
        claims = [client.post(f"/games/{game_id}/seats/1", json={"name": "B"}, headers=claim_headers)
                  for _ in range(2)]
        assert claims[0].status_code == 201 and claims[0].json["token"] == claims[1].json["token"]
        tokens.append(claims[0].json["token"])
        assert seat_view(client, game_id, tokens[-1])["seat"] == 1
    store = redis.Redis.from_url(redis_url)
    dump = []
    for key in store.scan_iter(count=1000):
        kind = store.type(key).decode()
        read = {"string": store.get, "hash": store.hgetall, "list": lambda k: store.lrange(k, 0, -1),
                "set": store.smembers, "zset": lambda k: store.zrange(k, 0, -1)}.get(kind)
        dump.append(repr(key) + repr(read(key) if read else None))
    text = "".join(dump)
    assert all(token not in text for token in tokens)


def test_with_limits_on_and_redis_down_every_request_is_a_503_problem_never_a_500(own_redis):
    """The rate limiter counts in the store's Redis: when it fails, the request goes on (the
    limiter lets it through) and its own store calls answer 503 with Retry-After; nothing is a 500."""
    app = create_app({"REDIS_URL": own_redis.url, "BOT_DISPATCH": "inprocess", "RATE_LIMIT_PER_ADDRESS": 100,
                      "RATE_LIMIT_PER_TOKEN": 100, "RATE_LIMIT_PER_BOT_TOKEN": 100})
    client = app.test_client()
    game_id, token = human_against_greedy(client)
    own_redis.kill()
    answers = [client.get("/games"), client.get(f"/games/{game_id}"),
               client.get(f"/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"}),
               client.post(f"/games/{game_id}/actions", json={"type": "pass"},
                           headers={"Authorization": f"Bearer {token}", "If-Match": '"1"'}),
               client.get("/bots/me/turns?wait_seconds=0", headers={"Authorization": "Bearer rbot.x.y"}),
               client.post("/games", json={"players": 2})]
    assert [rv.status_code for rv in answers] == [503] * len(answers)
    assert all(rv.content_type == PROBLEM and int(rv.headers["Retry-After"]) >= 1 for rv in answers)
    assert client.get("/health/live").status_code == 200


def test_a_match_and_a_tournament_finish_and_count_each_game_once_after_redis_loses_its_last_second(queue_name):
    """Redis with AOF everysec crashed mid-match and mid-tournament under two busy `ronda worker`s
    (SIGKILLed, its file cut back to a second before, as a power loss leaves it), restarted from
    its file 2 s later: whatever RQ's jobs came back as (queued in no queue, started by nobody),
    the match and the tournament finish, and the standings and the ladder count each game once."""
    server = EverysecRedisServer()
    url = server.start()
    app = create_app({"REDIS_URL": url, "BOT_QUEUE": queue_name, "BOT_DISPATCH": "rq", **NO_LIMITS})
    matches, tournaments = app.services.matches, app.services.tournaments
    workers = [start_worker(url, queue_name, stall_seconds=2) for _ in range(2)]
    try:
        match_id = matches.create_match({"bots": ["greedy", "random"], "games": 120, "rules": {"preset": "simple"}},
                                        "fault-test", cap=0)["id"]
        tournament_id = tournaments.create({"format": "round_robin", "entrants": ["casual", "greedy", "random"],
                                            "cycles": 2, "games_per_pairing": 14, "turn_seconds": 60,
                                            "players_per_table": 2, "rules": {"preset": "simple"}}, "public")["id"]
        wait_for(lambda: matches.status(match_id)["games_done"] >= 50, 300, "50 games played")
        assert tournaments.view(tournament_id)["status"] == "running"
        assert server.crash()[2] > 0, "the last second held writes to lose"
        time.sleep(2)
        server.launch_again()
        status = wait_for(lambda: (s := matches.status(match_id))["status"] == "finished" and s, 600,
                          "the match finished")
        assert status["games_done"] == 120
        assert sum(entrant["wins"] for entrant in status["entrants"]) == 120
        ids, total = matches.store.game_ids(match_id, 0, 1000)
        assert total == 120 and len(set(ids)) == 120
        done = wait_for(lambda: (t := tournaments.view(tournament_id))["status"] == "finished" and t, 600,
                        "the tournament finished")
        tables = [t for r in done["rounds"] for t in r["pairings"] if len(t["seats"]) == 2]
        assert len(tables) == 6 and all(t["result"]["games"] == sum(t["result"]["wins"]) == 14 for t in tables)
        assert sum(row["points"] for row in done["standings"]) == 6 * 14 + 6 * 14  # games won; the byes' pairings
        played = {name: sum(t["result"]["games"] for t in tables if done["entrants"].index(name) in t["seats"])
                  for name in ("casual", "greedy", "random")}
        expected = {"casual": played["casual"], "greedy": 120 + played["greedy"], "random": 120 + played["random"]}
        ladder = wait_for(lambda: (rows := {r["entrant"]: r["games"] for r in app.services.accounts.ladder()})
                          and all(rows.get(name, 0) >= games for name, games in expected.items()) and rows, 300,
                          "the ladder counted them")
        time.sleep(3)  # reconciler passes after both ended add nothing
        ladder = {row["entrant"]: row for row in app.services.accounts.ladder()}
        assert {name: ladder[name]["games"] for name in expected} == expected
        assert sum(ladder[name]["wins"] for name in expected) == 120 + 6 * 14
    finally:
        for worker in workers:
            stop(worker)
        server.stop()


def test_a_redis_at_its_maxmemory_answers_every_write_503_says_so_in_readiness_and_recovers(own_redis):
    """A real redis-server full at its maxmemory (noeviction, as production keeps games) refuses
    every write with OOM: the limiter's count, the store's scripts, players. Each is a 503 problem
    with Retry-After, nothing half-applied; readiness names the reason; freed memory ends it."""
    app = create_app({"REDIS_URL": own_redis.url, "BOT_DISPATCH": "inprocess", "RATE_LIMIT_PER_ADDRESS": 1000,
                      "RATE_LIMIT_PER_TOKEN": 1000})
    client = app.test_client()
    created = client.post("/games", json={"players": 2, "seats": [{"type": "human"}, {"type": "human"}]}).json
    game_id, tokens = created["game"]["id"], {t["seat"]: t["token"] for t in created["tokens"]}
    seat = created["game"]["awaiting"][0]
    view = seat_view(client, game_id, tokens[seat])
    server = redis.Redis.from_url(own_redis.url)
    server.config_set("maxmemory-policy", "noeviction")
    server.config_set("maxmemory", max(1, int(server.info("memory")["used_memory"]) // 2))
    try:
        writes = [
            client.post("/games", json={"players": 2}),
            act(client, game_id, tokens[seat], view["legal_actions"][0], view["version"]),
            client.post(f"/games/{game_id}/seats/{seat}/leave", headers={"Authorization": f"Bearer {tokens[seat]}"}),
            client.post("/players", json={"name": "Amina"}),
            client.post("/bots", json={"name": "Mimoun"}),
        ]
        assert [rv.status_code for rv in writes] == [503] * len(writes), [rv.json for rv in writes]
        for rv in writes:
            assert rv.content_type == PROBLEM and rv.json["code"] == "store_cannot_write", rv.json
            assert int(rv.headers["Retry-After"]) >= 1
        # Reads still answer, and show nothing applied.
        assert seat_view(client, game_id, tokens[seat])["version"] == view["version"]
        ready = client.get("/health/ready")
        assert ready.status_code == 200 and ready.json["status"] == "degraded", ready.json
        assert any("takes no writes" in reason and "maxmemory" in reason for reason in ready.json["reasons"])
    finally:
        server.config_set("maxmemory", 0)
    assert client.get("/health/ready").json == {"status": "ok", "store": "redis"}
    assert act(client, game_id, tokens[seat], view["legal_actions"][0], view["version"]).status_code == 200
    assert client.post("/players", json={"name": "Amina"}).status_code == 201


def test_a_creation_retried_after_redis_lost_its_second_makes_what_the_client_was_told(tmp_path):
    """Issue 61, 6: Redis (AOF everysec) loses the second in which a game and a player were made
    (its file cut back, as a power loss leaves it); the client retries with its Idempotency-Key and
    gets the same game id, seat tokens and deal, the same player and token: not a new game under the
    old id with tokens that answer 401."""
    server = EverysecRedisServer()
    url = server.start()
    client = create_app({"REDIS_URL": url, "SECRET_KEY": "lost-second", **NO_LIMITS}).test_client()
    try:
        keys = {"game": str(uuid.uuid4()), "player": str(uuid.uuid4()), "claim": str(uuid.uuid4())}
        body = {"players": 2, "seats": [{"type": "human", "name": "Amina"}, {"type": "open"}]}
        crashed = {}

        def made_in_the_lost_second():
            game = client.post("/games", json=body, headers={"Idempotency-Key": keys["game"]})
            player = client.post("/players", json={"name": "Omar"}, headers={"Idempotency-Key": keys["player"]})
            claim = client.post(f"/games/{game.json['game']['id']}/seats/1", json={"name": "Omar"},
                                headers={"Idempotency-Key": keys["claim"]})
            return game.json, player.json, claim.json

        crash = threading.Thread(target=lambda: crashed.update(lost=server.crash()))
        crash.start()
        first_game, first_player, first_claim = made_in_the_lost_second()
        crash.join()
        assert crashed["lost"][2] > 0, "the lost second held the creations"
        server.launch_again()
        assert client.get(f"/games/{first_game['game']['id']}").status_code == 404  # lost with the second
        again_game, again_player, again_claim = made_in_the_lost_second()
        assert again_game["game"]["id"] == first_game["game"]["id"]
        assert again_game["tokens"] == first_game["tokens"]
        assert again_game["game"]["seed_commitment"] == first_game["game"]["seed_commitment"]
        assert again_player["player"]["id"] == first_player["player"]["id"]
        assert again_player["token"] == first_player["token"]
        assert again_claim["token"] == first_claim["token"]
        assert client.get("/players/me", headers={"Authorization": f"Bearer {first_player['token']}"}).status_code \
            == 200
        mine = client.get(f"/games/{first_game['game']['id']}/view",
                          headers={"Authorization": f"Bearer {first_claim['token']}"}).json
        assert mine["seat"] == 1 and mine["hand"] == first_claim["game"]["hand"]  # the same deal
        # A claim whose answer's record was lost (not its write) is found applied: its seat and token again.
        store = redis.Redis.from_url(url)
        store.delete(*store.keys("idempotency:*"))
        found = client.post(f"/games/{first_game['game']['id']}/seats/1", json={"name": "Omar"},
                            headers={"Idempotency-Key": keys["claim"]})
        assert found.status_code == 201 and found.headers["Idempotent-Replayed"] == "applied"
        assert found.json["token"] == first_claim["token"]
    finally:
        server.stop()


def test_a_tournament_tells_each_notice_once_through_killed_workers_and_a_redis_that_lost_its_last_second():
    """Issue 64, 5: a round robin of three people of an app (none ever moves: each game is lost on
    the turn timer) and a bot, its endpoint taking every tournament event. It starts inside the
    second a Redis with AOF everysec loses (SIGKILLed, its file cut back), both `ronda worker`s
    SIGKILLed with it: the start, the first games and their notices are gone, and are made again.
    Each person's inbox holds one `tournament_started`, one `tournament_round` for each game they
    sat at, one `tournament_over`; the endpoint got each of those under one `webhook-id` (a
    message sent before the loss comes again under its id, which the receiver drops)."""
    from test_apps import in_app, new_player
    from test_webhooks import Deployment

    server = EverysecRedisServer()
    deployment = Deployment(server.start(), events=("tournament_started", "tournament_round", "tournament_over"),
                            server_settings={"MIN_TURN_SECONDS": 1})
    try:
        base, key = deployment.base, deployment.key
        people = [new_player(base, key, name) for name in ("Nadia", "Omar", "Rim")]
        made = requests.post(f"{base}/tournaments", headers={"X-Ronda-App": deployment.server_key}, json={
            "format": "round_robin", "entrants": ["random"], "starts_in_seconds": 3, "turn_seconds": 2,
            "games_per_pairing": 1, "rules": {"preset": "simple"}})
        assert made.status_code == 201, made.text
        created_at, tournament_id = time.monotonic(), made.json()["id"]
        for _, token in people:
            assert requests.post(f"{base}/tournaments/{tournament_id}/entrants",
                                 headers=in_app(key, token)).status_code == 200
        time.sleep(max(0.0, created_at + 2.6 - time.monotonic()))
        crashed: list = []
        crash = threading.Thread(target=lambda: crashed.append(server.crash()))
        crash.start()  # what Redis writes from now is lost: it runs on for a second, then dies
        time.sleep(max(0.0, created_at + 3.1 - time.monotonic()))
        look = requests.get(f"{base}/tournaments/{tournament_id}", headers={"X-Ronda-App": key})
        crash.join()
        deployment.kill_workers()
        assert look.status_code == 200 and look.json()["status"] == "running", look.text
        assert crashed[0][2] > 0, "the lost second held writes"
        server.launch_again()
        lost = json.loads(redis.Redis.from_url(server.url).get(f"{{tournament:{tournament_id}}}:doc"))
        assert lost["status"] == "open" and lost["rounds"] == [], "the start was lost with the second"
        deployment.start_workers()

        done = deployment.wait(lambda: (found := requests.get(f"{base}/tournaments/{tournament_id}",
                                                              headers={"X-Ronda-App": key}).json())
                               ["status"] == "finished" and found, 240, "the tournament's end")
        games_of = {person["id"]: {game_id for r in done["rounds"] for t in r["pairings"] if t["games"]
                                   for game_id in t["games"]
                                   if done["entrants"].index(f"player:{person['id']}") in t["seats"]}
                    for person, _ in people}
        assert all(len(games) == 3 for games in games_of.values()), games_of
        expected = {(kind, player_id, None) for player_id in games_of
                    for kind in ("tournament_started", "tournament_over")}
        expected |= {("tournament_round", player_id, game_id) for player_id, games in games_of.items()
                     for game_id in games}

        def received():
            ids: dict[tuple, set[str]] = {}
            for message in list(deployment.receiver.received):
                if message["payload"] is not None:
                    data = message["payload"]["data"]
                    ids.setdefault((message["payload"]["type"], data["player_id"], data.get("game_id")),
                                   set()).add(message["id"])
            return ids
        by_notice = deployment.wait(lambda: (ids := received()).keys() >= expected and ids, 120, "every webhook")
        assert by_notice.keys() == expected
        assert all(len(ids) == 1 for ids in by_notice.values()), {k: v for k, v in by_notice.items() if len(v) > 1}

        for person, token in people:
            notices, cursor = [], "0-0"
            while page := requests.get(f"{base}/players/me/notices", params={"after": cursor, "wait_seconds": 0},
                                       headers=in_app(key, token)).json()["notices"]:
                notices += [n for n in page if n["type"].startswith("tournament_")]
                cursor = page[-1]["id"]
            kinds = [n["type"] for n in notices]
            assert kinds.count("tournament_started") == kinds.count("tournament_over") == 1, kinds
            told = [n["game_id"] for n in notices if n["type"] == "tournament_round"]
            assert sorted(told) == sorted(games_of[person["id"]]), (told, games_of[person["id"]])
    finally:
        deployment.close()
        server.stop()
