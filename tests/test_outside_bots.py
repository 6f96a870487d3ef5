"""Registered outside bots, their turns, matches they play over HTTP, the rating ladder and levels."""

import json
import re
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis
import requests

from app.accounts import ratings
from app.accounts.inbox import Inboxes
from app.accounts.ladders import Ladders, LadderStore
from app.accounts.store import AccountStore
from app.ops.keys import ratings_key
from app.engine import Game, rules_from_request
from app.matches.play import deck_seed
from tooling import require

ROOT = Path(__file__).resolve().parent.parent


def register(base, name="Test bot"):
    answer = requests.post(f"{base}/bots", json={"name": name, "description": "plays nothing"})
    assert answer.status_code == 201, answer.text
    return answer.json()


def start_match(base, bots, **options):
    answer = requests.post(f"{base}/matches", json={"bots": bots, "games": options.pop("games", 1),
                                                    "rules": {"preset": "simple"}, **options})
    assert answer.status_code == 202, answer.text
    return answer.json()


def wait_for_match(base, match_id, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        match = requests.get(f"{base}/matches/{match_id}").json()
        if match["status"] == "finished":
            return match
        time.sleep(0.2)
    raise AssertionError(f"match {match_id} did not finish: {match}")


def test_the_ladder_applies_each_rated_game_once_and_exactly(redis_url):
    from app.accounts.service import AccountService
    client = redis.Redis.from_url(redis_url)
    bots = AccountService(
        AccountStore(client, Inboxes(client, "PUBLISH"), 3600),
        Ladders(LadderStore(client, 3600), time.time),
        utc_now=lambda: "now",
        secret=b"test",
    )
    a, b = f"test-a-{uuid.uuid4().hex}", f"test-b-{uuid.uuid4().hex}"
    assert bots.rate_game(f"{a}-game-1", a, b)
    assert bots.rate_game(f"{a}-game-2", b, a)
    assert not bots.rate_game(f"{a}-game-1", a, b)  # a replay of a counted game changes nothing
    start = (ratings.INITIAL_RATING, ratings.INITIAL_DEVIATION)
    (a1,), (b1,) = ratings.rate_camps([([start], True), ([start], False)])
    (b2,), (a2,) = ratings.rate_camps([([b1], True), ([a1], False)])
    ladder = {row["entrant"]: row for row in bots.ladder()}
    assert (ladder[a]["rating"], ladder[a]["deviation"]) == pytest.approx(a2)
    assert (ladder[b]["rating"], ladder[b]["deviation"]) == pytest.approx(b2)
    assert (ladder[a]["games"], ladder[a]["wins"], ladder[a]["losses"]) == (2, 1, 1)


def test_an_elo_record_is_carried_over_with_the_deviation_its_games_leave(redis_url):
    client = redis.Redis.from_url(redis_url)
    ladders = Ladders(LadderStore(client, 3600), time.time)
    pool, veteran = f"test-pool-{uuid.uuid4().hex}", f"veteran-{uuid.uuid4().hex}"
    client.hset(ratings_key(pool), mapping={f"{veteran}:rating": 1620.5, f"{veteran}:games": 30,
                                            f"{veteran}:wins": 20, f"{veteran}:losses": 10})  # as Elo kept it
    record = ladders.records(pool, [veteran])[veteran]
    assert record["rating"] == 1620.5 and record["deviation"] == pytest.approx(ratings.migrated_deviation(30))
    assert not record["provisional"] and record["games"] == 30
    assert ladders.rate(pool, "first-game-since", [([veteran], True), ([f"newcomer-{uuid.uuid4().hex}"], False)])
    (expected,), _ = ratings.rate_camps([([(1620.5, ratings.migrated_deviation(30))], True),
                                         ([(ratings.INITIAL_RATING, ratings.INITIAL_DEVIATION)], False)])
    after = ladders.records(pool, [veteran])[veteran]
    assert (after["rating"], after["deviation"]) == pytest.approx(expected) and after["wins"] == 21


def test_games_finishing_at_once_in_a_pool_are_each_rated_from_the_ratings_the_one_before_left(redis_url):
    """Sixteen games of one entrant against sixteen newcomers, rated from sixteen threads at once:
    each is rated inside the pool's transaction, so the entrant ends where sixteen wins in a row
    take it (a game rated from ratings read before another's write would land elsewhere)."""
    ladders = Ladders(LadderStore(redis.Redis.from_url(redis_url), 3600), time.time)
    pool, star = f"test-pool-{uuid.uuid4().hex}", f"star-{uuid.uuid4().hex}"
    barrier = threading.Barrier(16)

    def play(index):
        barrier.wait()
        return ladders.rate(pool, f"game-{index}", [([star], True), ([f"newcomer-{index}"], False)])
    with ThreadPoolExecutor(16) as threads:
        assert all(threads.map(play, range(16)))
    expected = (ratings.INITIAL_RATING, ratings.INITIAL_DEVIATION)
    for _ in range(16):
        (expected,), _ = ratings.rate_camps([([expected], True), ([(ratings.INITIAL_RATING,
                                                                   ratings.INITIAL_DEVIATION)], False)])
    record = ladders.records(pool, [star])[star]
    assert (record["rating"], record["deviation"]) == pytest.approx(expected) and record["games"] == 16


def test_a_bot_token_is_shown_once_and_kept_only_as_a_hash(live_server, redis_url):
    created = register(live_server)
    bot, token = created["bot"], created["token"]
    assert token.startswith("rbot.") and bot["entrant"] == f"bot:{bot['id']}"
    public = requests.get(f"{live_server}/bots/{bot['id']}").json()
    assert "token" not in json.dumps(public) and public["rating"] == 1500 and public["games"] == 0
    assert bot["id"] in [b["id"] for b in requests.get(f"{live_server}/bots?page_size=100&page=1").json()]
    store = redis.Redis.from_url(redis_url)
    for key in store.scan_iter(match=f"*{bot['id']}*"):
        assert token.encode() not in store.dump(key)
    assert requests.get(f"{live_server}/bots/nobody").status_code == 404
    assert requests.get(f"{live_server}/bots/me/turns?wait_seconds=0",
                        headers={"Authorization": "Bearer rbot.x.y"}).status_code == 401


def test_matches_refuse_unknown_and_doubled_registered_bots(live_server):
    bot = register(live_server)["bot"]
    for bots in (["bot:nobody", "greedy"], [bot["entrant"], bot["entrant"]]):
        answer = requests.post(f"{live_server}/matches", json={"bots": bots, "games": 1})
        assert answer.status_code == 422 and answer.json()["code"] == "invalid_request", bots


def test_turns_come_by_sse_and_long_poll_and_the_bot_token_acts_only_in_its_own_seat(live_server):
    created = register(live_server)
    auth = {"Authorization": f"Bearer {created['token']}"}
    stream = requests.get(f"{live_server}/bots/me/stream", headers=auth, stream=True, timeout=30)
    assert stream.status_code == 200
    match = start_match(live_server, [created["bot"]["entrant"], "greedy"], move_seconds=30)
    lines = stream.iter_lines(decode_unicode=True)
    message = {}
    for line in lines:
        if line.startswith(("id:", "event:", "data:")):
            field, _, value = line.partition(": ")
            message[field] = value
        elif not line and "data" in message:
            break
    stream.close()
    turn = json.loads(message["data"])
    assert message["event"] == "turn" and message["id"] == turn["id"]
    assert turn["game_id"] == f"{match['id']}-0" and turn["match_id"] == match["id"] and turn["move_seconds"] == 30
    polled = requests.get(f"{live_server}/bots/me/turns?wait_seconds=0&after=0", headers=auth).json()
    assert turn["id"] in [t["id"] for t in polled["turns"]]
    after = requests.get(f"{live_server}/bots/me/turns?wait_seconds=0&after={turn['id']}", headers=auth).json()
    assert after == {"turns": [], "notices": [], "cursor": turn["id"]}  # resumed after it: nothing repeated

    view = requests.get(f"{live_server}/games/{turn['game_id']}/view", headers=auth).json()
    assert view["seat"] == turn["seat"] and view["hand"] and turn["seat"] in view["awaiting"]
    acted = requests.post(f"{live_server}/games/{turn['game_id']}/actions", json=view["legal_actions"][0],
                          headers={**auth, "If-Match": f'"{view["version"]}"'})
    assert acted.status_code == 200
    other = requests.post(f"{live_server}/games", json={"players": 2, "seats": [{"type": "human"}, {"type": "human"}]})
    elsewhere = requests.get(f"{live_server}/games/{other.json()['game']['id']}/view", headers=auth)
    assert elsewhere.status_code == 403 and elsewhere.json()["code"] == "no_seat"  # a valid token, no seat there


@pytest.mark.slow
def test_a_registered_bot_that_keeps_timing_out_gets_fallback_moves_then_forfeits(live_server):
    bot = register(live_server)["bot"]
    match = start_match(live_server, [bot["entrant"], "greedy"], games=3, move_seconds=1)
    finished = wait_for_match(live_server, match["id"])
    assert finished["forfeited_by"] == 0 and finished["games_done"] <= 1
    assert finished["entrants"][0]["timeouts"] == 5
    # A loss for the forfeiter, whoever won the game its fallback played out; on the ladder too.
    assert (finished["entrants"][0]["wins"], finished["entrants"][1]["wins"]) == (0, finished["games_done"])
    record = requests.get(f"{live_server}/bots/{bot['id']}").json()
    assert (record["wins"], record["losses"]) == (0, finished["games_done"])
    assert all(entrant["mean_ms_per_move"] is not None for entrant in finished["entrants"])
    events = requests.get(f"{live_server}/games/{match['id']}-0/events?limit=2000").json()
    timeouts = [e for e in events if e["type"] == "turn_timeout"]
    assert len(timeouts) == 5 and all(e["bot"] == "greedy" and e["seat"] == 0 for e in timeouts)
    assert {"type": "seat_left", "seat": 0, "bot": "greedy"}.items() <= next(
        e for e in events if e["type"] == "seat_left").items()
    assert requests.get(f"{live_server}/games/{match['id']}-1").status_code == 404  # no game after the forfeit


@pytest.mark.slow
def test_no_deck_of_a_match_with_a_registered_bot_is_knowable_before_it_ends(live_server):
    """The match seed is hidden while it runs, a game's own seed (shown when that game ends) is a
    hash that gives nothing of it, and no game replays another's deck (no duplicate)."""
    bot = register(live_server)["bot"]
    match = start_match(live_server, [bot["entrant"], "greedy"], games=3, move_seconds=1)
    assert match["seed"] is None and "deck of its own" in match["seating"]
    finished = wait_for_match(live_server, match["id"])  # the bot never acts: it forfeits
    seed = finished["seed"]
    game = requests.get(f"{live_server}/games/{match['id']}-0").json()
    assert game["seed"] == deck_seed(seed, 0, 2, duplicate=False) and seed not in game["seed"]
    assert deck_seed(seed, 1, 2, duplicate=False) != deck_seed(seed, 0, 2, duplicate=False)
    events = requests.get(f"{live_server}/games/{match['id']}-0/events?limit=50").json()
    dealt = Game(rules_from_request({"preset": "simple"}), 2, seed=game["seed"], first_dealer=0)
    assert next(e["table"] for e in events if e["type"] == "deal") == next(
        e["table"] for e in dealt.events if e["type"] == "deal")


def test_levels_seat_the_bots_from_weakest_to_strongest(live_server):
    levels = requests.get(f"{live_server}/bots/levels").json()
    assert [(level["level"], level["bot"]) for level in levels] == [
        (1, "random"), (2, "casual"), (3, "greedy"), (4, "montecarlo"), (5, "expert"), (6, "master")]
    created = requests.post(f"{live_server}/games", json={"players": 2, "seats": [
        {"type": "human", "name": "A"}, {"type": "bot", "level": 2}]})
    assert created.status_code == 201 and created.json()["game"]["seats"][1]["bot"] == "casual"
    assert requests.post(f"{live_server}/games", json={"players": 2, "seats": [
        {"type": "human"}, {"type": "bot", "level": 7}]}).status_code == 422


@pytest.mark.slow
def test_a_forfeited_match_frees_its_unplayed_games_from_the_clients_cap(redis_url):
    from app import create_app
    app = create_app({"REDIS_URL": redis_url, "BOT_DISPATCH": "inprocess", "MATCH_GAMES_PER_CLIENT": 4,
                      "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    client = app.test_client()
    address = {"REMOTE_ADDR": f"10.7.{uuid.uuid4().int % 250}.1"}
    bot = client.post("/bots", json={"name": "Sleeper"}).json["bot"]
    match = client.post("/matches", json={"bots": [bot["entrant"], "greedy"], "games": 4, "move_seconds": 1,
                                          "rules": {"preset": "simple"}}, environ_base=address).json
    assert client.post("/matches", json={"bots": ["greedy", "random"], "games": 1},
                       environ_base=address).status_code == 429  # all four of the cap are the sleeper's
    deadline = time.monotonic() + 60
    while client.get(f"/matches/{match['id']}").json["status"] != "finished" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert client.get(f"/matches/{match['id']}").json["forfeited_by"] == 0
    assert client.post("/matches", json={"bots": ["greedy", "random"], "games": 4},
                       environ_base=address).status_code == 202


@pytest.mark.slow
def test_registering_is_limited_per_address_and_unused_bots_expire(redis_url):
    from app import create_app
    app = create_app({"REDIS_URL": redis_url, "BOT_DISPATCH": "inprocess", "BOT_REGISTRATIONS_PER_HOUR": 3,
                      "BOTS_PER_ADDRESS": 4, "BOT_IDLE_TTL": 2, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    client = app.test_client()
    address = {"REMOTE_ADDR": f"10.9.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"}

    def register_from(environ):
        return client.post("/bots", json={"name": "Many"}, environ_base=environ)

    created = [register_from(address) for _ in range(3)]
    assert [rv.status_code for rv in created] == [201, 201, 201]
    refused = register_from(address)
    assert refused.status_code == 429 and refused.json["code"] == "too_many_bots"
    assert int(refused.headers["Retry-After"]) >= 1
    assert register_from({"REMOTE_ADDR": "10.9.251.1"}).status_code == 201  # another address has its own

    used = created[0].json
    auth = {"Authorization": f"Bearer {used['token']}"}
    for _ in range(3):  # its token in use: kept; the others lapse after 2 s unused
        time.sleep(0.8)
        assert client.get("/bots/me/turns?wait_seconds=0", headers=auth).status_code == 200
    assert client.get(f"/bots/{used['bot']['id']}").status_code == 200
    assert client.get(f"/bots/{created[1].json['bot']['id']}").status_code == 404
    listed = [bot["id"] for bot in client.get("/bots?page_size=100").json]
    assert created[1].json["bot"]["id"] not in listed


def test_turn_ids_past_a_stream_ids_range_are_refused_not_failed(live_server):
    token = register(live_server)["token"]
    auth = {"Authorization": f"Bearer {token}"}
    for after in ("18446744073709551616", "1-18446744073709551616", "abc"):
        answer = requests.get(f"{live_server}/bots/me/turns", params={"after": after, "wait_seconds": 0}, headers=auth)
        assert answer.status_code == 422 and answer.headers["Content-Type"] == "application/problem+json", after
    largest = requests.get(f"{live_server}/bots/me/turns", headers=auth,
                           params={"after": "18446744073709551615-18446744073709551615", "wait_seconds": 0})
    assert largest.status_code == 200 and largest.json()["turns"] == []
    for last_event_id in ("abc", "²".encode().decode("latin-1"), "1" * 30):
        answer = requests.get(f"{live_server}/bots/me/stream", headers={**auth, "Last-Event-ID": last_event_id},
                              stream=True, timeout=10)
        assert answer.status_code == 422 and answer.json()["code"] == "invalid_request", last_event_id


def test_an_empty_after_is_refused_by_the_spec_as_by_the_server(live_server):
    """The spec's pattern for `after` is what the server checks: what it refuses, the spec forbids."""
    spec = requests.get(f"{live_server}/openapi.json").json()
    after = next(p for p in spec["paths"]["/bots/me/turns"]["get"]["parameters"] if p["name"] == "after")
    pattern = after["schema"]["pattern"]
    auth = {"Authorization": f"Bearer {register(live_server)['token']}"}
    for text in ("", "abc", "1-", "x1"):
        assert re.search(pattern, text) is None, text
        answer = requests.get(f"{live_server}/bots/me/turns", params={"after": text, "wait_seconds": 0}, headers=auth)
        assert answer.status_code == 422, text
    assert re.search(pattern, "1700000000000-3")


@pytest.mark.slow
def test_a_node_bot_that_follows_the_readme_plays_a_20_game_match_within_the_default_limits(redis_url):
    """examples/outside_bot.mjs (fetch and a small SSE reader, no SDK) against greedy, every limit
    at its default: each turn event carries the view, so one request a turn; no 429, no timeout,
    and game_over / match_over say when it is done."""
    node = require("node", "Node.js 18 or later (Debian: apt-get install nodejs)")
    from werkzeug.serving import make_server

    from app import create_app
    app = create_app({"REDIS_URL": redis_url, "BOT_DISPATCH": "inprocess"})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        run = subprocess.run([node, "examples/outside_bot.mjs", base, "20"], cwd=ROOT, capture_output=True, text=True,
                             timeout=600)
    finally:
        server.shutdown()
    print(run.stdout, run.stderr[-2000:])
    played = json.loads(run.stdout.strip().splitlines()[-1])
    assert played["games"] == played["games_over_events"] == 20 and played["forfeited_by"] is None
    assert played["timeouts"] == 0 and played["too_many_requests"] == 0
    assert played["requests"] <= played["turns"] + 3  # registration, stream, match: then one action a turn
    match = app.test_client().get(f"/matches/{played['match_id']}").json
    assert all(entrant["mean_ms_per_move"] is not None for entrant in match["entrants"])


def test_registering_a_bot_again_with_its_idempotency_key_answers_the_same_bot_and_a_working_token(live_server):
    key = {"Idempotency-Key": f"register-{uuid.uuid4().hex}"}
    first = requests.post(f"{live_server}/bots", json={"name": "Retried"}, headers=key)
    again = requests.post(f"{live_server}/bots", json={"name": "Retried"}, headers=key)
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert again.json() == first.json() and again.headers["Location"] == first.headers["Location"]
    auth = {"Authorization": f"Bearer {again.json()['token']}"}
    assert requests.get(f"{live_server}/bots/me/turns?wait_seconds=0", headers=auth).status_code == 200
    other = requests.post(f"{live_server}/bots", json={"name": "Retried"})
    assert other.json()["bot"]["id"] != first.json()["bot"]["id"]  # without the key, a second bot
