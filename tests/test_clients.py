"""What client teams rely on: live streams, long polling, safe retries, rate limits, CORS."""

import json
import threading
import time
import uuid

import pytest

from app import create_app
from http_helpers import act, bearer, create, in_one_window, seat_view


@pytest.fixture(scope="module")
def live_app(store_config):
    return create_app({**store_config, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0,
                       "SSE_KEEPALIVE_SECONDS": 0.2, "CORS_ORIGINS": ["https://play.example"]})


class SSEReader:
    """Reads a text/event-stream answer message by message, as EventSource does."""

    def __init__(self, response):
        self.chunks = iter(response.response)
        self.buffer = ""
        self.response = response

    def next(self):
        while "\n\n" not in self.buffer:
            self.buffer += next(self.chunks).decode()
        message, self.buffer = self.buffer.split("\n\n", 1)
        if message.startswith(":"):
            return {"comment": message[1:].strip()}
        fields = dict(line.split(": ", 1) for line in message.splitlines())
        return {"id": int(fields["id"]), "event": fields["event"], "data": json.loads(fields["data"])}

    def next_event(self):
        while "comment" in (message := self.next()):
            pass
        return message

    def close(self):
        self.response.close()


def play_one(client, game_id, tokens):
    seat = client.get(f"/games/{game_id}").json["awaiting"][0]
    view = seat_view(client, game_id, tokens[seat])
    assert act(client, game_id, tokens[seat], view["legal_actions"][0], view["version"]).status_code == 200


def test_sse_snapshot_then_events_then_resume_after_a_dropped_connection(live_app):
    client = live_app.test_client()
    game, tokens = create(client, seed="sse")
    stream = SSEReader(client.get(f"/games/{game['id']}/stream", headers=bearer(tokens[0]), buffered=False))
    snapshot = stream.next_event()
    assert snapshot["event"] == "snapshot" and snapshot["data"]["hand"] and snapshot["data"]["seat"] == 0
    assert stream.next() == {"comment": "keep-alive"}
    play_one(client, game["id"], tokens)
    first = stream.next_event()
    assert first["event"] == "event" and first["id"] == snapshot["id"] + 1 and first["data"]["type"] == "play"
    stream.close()  # the phone loses its connection here
    for _ in range(3):
        play_one(client, game["id"], tokens)
    resumed = SSEReader(client.get(f"/games/{game['id']}/stream", buffered=False,
                                   headers={**bearer(tokens[0]), "Last-Event-ID": str(first["id"])}))
    ids = []
    total = client.get(f"/games/{game['id']}").json["event_count"]
    while not ids or ids[-1] < total:
        ids.append(resumed.next_event()["id"])
    assert ids == list(range(first["id"] + 1, total + 1))  # no loss, no duplicate
    resumed.close()


def test_a_spectator_stream_hides_the_hands(live_app):
    client = live_app.test_client()
    game, _tokens = create(client, seed="sse-spectator")
    stream = SSEReader(client.get(f"/games/{game['id']}/stream", buffered=False))
    assert stream.next_event()["data"]["hand"] is None
    stream.close()


def test_long_polling_answers_as_soon_as_the_game_moves_or_when_the_wait_ends(live_app):
    client = live_app.test_client()
    game, tokens = create(client, seed="poll")
    started = time.monotonic()
    rv = client.get(f"/games/{game['id']}/view?after_version=1&wait_seconds=0.3", headers=bearer(tokens[0]))
    assert rv.status_code == 200 and rv.json["version"] == 1 and time.monotonic() - started >= 0.3
    timer = threading.Timer(0.2, play_one, args=(live_app.test_client(), game["id"], tokens))
    timer.start()
    rv = client.get(f"/games/{game['id']}/view?after_version=1&wait_seconds=10", headers=bearer(tokens[0]))
    timer.join()
    assert rv.json["version"] == 2 and time.monotonic() - started < 5


def test_an_action_retried_with_the_same_idempotency_key_is_applied_once(live_app):
    client = live_app.test_client()
    game, tokens = create(client, seed="retry")
    seat = game["awaiting"][0]
    view = seat_view(client, game["id"], tokens[seat])
    headers = {**bearer(tokens[seat]), "If-Match": f'"{view["version"]}"', "Idempotency-Key": "tap-1"}
    first = client.post(f"/games/{game['id']}/actions", json=view["legal_actions"][0], headers=headers)
    again = client.post(f"/games/{game['id']}/actions", json=view["legal_actions"][0], headers=headers)
    assert first.status_code == again.status_code == 200 and first.json == again.json
    assert again.headers["Idempotent-Replayed"] == "true"
    assert client.get(f"/games/{game['id']}").json["version"] == view["version"] + 1
    other = client.post(f"/games/{game['id']}/actions", json={"type": "pass"}, headers=headers)
    assert other.status_code == 422 and other.json["code"] == "idempotency_key_reused"


def test_creating_a_game_twice_with_one_key_gives_one_game(live_app):
    client = live_app.test_client()
    body = {"players": 2, "seats": [{"type": "human"}, {"type": "human"}]}
    first = client.post("/games", json=body, headers={"Idempotency-Key": "create-42"})
    again = client.post("/games", json=body, headers={"Idempotency-Key": "create-42"})
    assert first.status_code == again.status_code == 201
    assert (
        first.json["game"]["id"] == again.json["game"]["id"] and first.headers["Location"] == again.headers["Location"]
    )


def test_too_many_requests_is_429_with_retry_after(store_config):
    client = create_app({**store_config, "RATE_LIMIT_PER_TOKEN": 3, "RATE_LIMIT_PER_ADDRESS": 0}).test_client()
    game, tokens = create(client)
    statuses = [client.get(f"/games/{game['id']}/view", headers=bearer(tokens[0])).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    rv = client.get(f"/games/{game['id']}/view", headers=bearer(tokens[0]))
    assert rv.content_type == "application/problem+json" and rv.json["code"] == "rate_limited"
    assert 1 <= int(rv.headers["Retry-After"]) <= 61
    assert client.get(f"/games/{game['id']}/view", headers=bearer(tokens[1])).status_code == 200


def test_a_bot_plays_on_its_token_budget_when_its_address_is_spent_and_false_bot_tokens_spend_it_for_bots(
        store_config):
    """A registered bot counts on its token's budget, not its address's: people behind the same
    address spending theirs do not stop it. False bot tokens (401) count on the address, and once
    such guesses alone have spent it, the address's bot tokens are refused too."""
    client = create_app({**store_config, "RATE_LIMIT_PER_ADDRESS": 5, "RATE_LIMIT_PER_TOKEN": 0}).test_client()
    people, guessers = ({"REMOTE_ADDR": f"198.51.{octet}.{uuid.uuid4().int % 250}"} for octet in (103, 104))
    in_one_window(20)
    token = client.post("/bots", json={"name": "Night owl"}, environ_base=people).json["token"]
    spent = [client.get("/rules/presets", environ_base=people).status_code for _ in range(5)]
    assert spent[-1] == 429
    turns = "/bots/me/turns?wait_seconds=0"
    assert client.get(turns, headers=bearer(token), environ_base=people).status_code == 200
    assert [client.get(turns, headers=bearer("rbot.x.y"), environ_base=guessers).status_code
            for _ in range(5)] == [401] * 5
    refused = client.get(turns, headers=bearer(token), environ_base=guessers)
    assert refused.status_code == 429 and refused.json["budget"] == "address"
    assert client.get(turns, headers=bearer(token), environ_base=people).status_code == 200


def test_cors_lets_the_configured_origin_in(live_app):
    client = live_app.test_client()
    preflight = client.options("/games", headers={"Origin": "https://play.example",
                                                  "Access-Control-Request-Method": "POST",
                                                  "Access-Control-Request-Headers": "If-Match, Authorization"})
    assert preflight.status_code == 200 and "If-Match" in preflight.headers["Access-Control-Allow-Headers"]
    rv = client.get("/rules/presets", headers={"Origin": "https://play.example"})
    assert rv.headers["Access-Control-Allow-Origin"] == "https://play.example"
    assert "ETag" in rv.headers["Access-Control-Expose-Headers"]
    assert "Access-Control-Allow-Origin" not in client.get("/rules/presets", headers={"Origin": "https://evil.example"}).headers


def wait_until(check, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def timed_app(store_config):
    app = create_app({**store_config, "BOT_DISPATCH": "inprocess",
                      "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    return app


def test_when_the_turn_timer_runs_out_a_fallback_bot_plays_and_the_event_says_so(timed_app):
    client = timed_app.test_client()
    game, tokens = create(client, seed="timer", turn_timeout_seconds=2)
    for _ in range(2):  # both seats move once in time: a timeout after that is a missed turn
        seat = client.get(f"/games/{game['id']}").json["awaiting"][0]
        view = seat_view(client, game["id"], tokens[seat])
        act(client, game["id"], tokens[seat], view["legal_actions"][0], view["version"])
    moved = client.get(f"/games/{game['id']}").json
    absent = moved["awaiting"][0]
    assert wait_until(lambda: client.get(f"/games/{game['id']}").json["version"] > moved["version"])
    events = client.get(f"/games/{game['id']}/events?after={moved['event_count']}").json
    assert events[0] == {"id": events[0]["id"], "type": "turn_timeout", "seat": absent, "bot": "greedy", "missed": 1}
    assert events[1]["seat"] == absent and events[1]["type"] in ("play", "declare", "declaration")
    assert client.get(f"/games/{game['id']}").json["seats"][absent]["missed_turns"] == 1


def test_a_move_in_time_cancels_the_timer(timed_app):
    client = timed_app.test_client()
    game, tokens = create(client, seed="in-time", turn_timeout_seconds=1)
    seat = game["awaiting"][0]
    view = seat_view(client, game["id"], tokens[seat])
    act(client, game["id"], tokens[seat], view["legal_actions"][0], view["version"])
    time.sleep(1.3)  # the first timer fires on a version that is gone: nothing happens
    events = client.get(f"/games/{game['id']}/events").json
    assert all(e["seat"] != seat for e in events if e["type"] == "turn_timeout")


def test_a_seat_that_leaves_is_taken_over_by_a_bot(timed_app):
    client = timed_app.test_client()
    game, tokens = create(client, seed="leave", first_dealer=1)
    # Seat 1's token is valid, but not seat 0's: 403, not a reason to sign in again.
    assert client.post(f"/games/{game['id']}/seats/0/leave", json={}, headers=bearer(tokens[1])).status_code == 403
    rv = client.post(f"/games/{game['id']}/seats/0/leave", json={"bot": "greedy"}, headers=bearer(tokens[0]))
    assert rv.status_code == 200 and rv.json["seats"][0]["type"] == "bot"
    assert wait_until(lambda: client.get(f"/games/{game['id']}").json["awaiting"] == [1])
    assert seat_view(client, game["id"], tokens[1])["version"] >= 3
    assert client.get(f"/games/{game['id']}/view", headers=bearer(tokens[0])).status_code == 401


def test_far_from_its_budget_a_request_asks_redis_nothing_and_near_it_every_process_meets_one_count(store_config):
    """Limits cost a request far from its budget no Redis round trip (each process counts in memory
    and shares its counts in the background); near it (and every 2% of it a process counts), a
    request counts in Redis and is judged by the total there: a budget spent through one process
    is refused at once by another."""
    from app.ops.window_counts import SHARE_BETWEEN_SYNCS
    config = {**store_config, "RATE_LIMIT_PER_TOKEN": 0, "RATE_LIMIT_PER_ADDRESS": 500}
    one, other = create_app(config), create_app(config)
    asked = []
    counts = one.services.window_counts
    counts.sync = lambda: None  # its background sharing aside, what do requests ask Redis?

    def counting(command):
        def counted(*args, **kwargs):
            asked.append(args)
            return command(*args, **kwargs)
        return counted
    for name in ("pipeline", "incrby", "decrby"):
        setattr(counts.redis, name, counting(getattr(counts.redis, name)))
    address = {"REMOTE_ADDR": f"198.51.102.{uuid.uuid4().int % 250}"}
    in_one_window(20)
    assert [one.test_client().get("/rules/presets", environ_base=address).status_code for _ in range(9)] == [200] * 9
    assert asked == []  # 9 of 500: counted here alone
    statuses = [one.test_client().get("/rules/presets", environ_base=address).status_code for _ in range(491)]
    assert statuses == [200] * 491 and asked  # near the budget, counted in Redis
    share = 500 * SHARE_BETWEEN_SYNCS  # what a process may hold unsent: the most a budget is passed by, a process
    for app in (one, other):
        beyond = 0
        while (answer := app.test_client().get("/rules/presets", environ_base=address)).status_code == 200:
            beyond += 1
            assert beyond <= share, "a budget passed by more than a process's share"
        assert answer.status_code == 429 and answer.headers["X-RateLimit-Remaining"] == "0"
