"""A retry with the same Idempotency-Key gets its first answer, whatever was killed between the
game's write and the key's record (issue 51): the API under gunicorn, its worker SIGKILLed by a
fault hook (tests/hooks/kill_after_write.py) right after the write, then the client retries."""

import http.client
import json
import os
import time
import uuid
from pathlib import Path

import pytest

from test_production_server import free_port, start_gunicorn

pytestmark = pytest.mark.slow  # gunicorn workers killed: left out of the fast loop (pytest -m 'not slow')

ROOT = Path(__file__).resolve().parent.parent
LEASE_SECONDS = 2


@pytest.fixture(scope="module")
def killable_api(redis_url):
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "PYTHONPATH": str(ROOT / "tests" / "hooks"),
           "RONDA_IDEMPOTENCY_LEASE_SECONDS": str(LEASE_SECONDS), "RONDA_RATE_LIMIT_PER_ADDRESS": "0"}
    process = start_gunicorn(env, port, app="kill_after_write:create_app()")
    yield port
    process.terminate()
    process.wait(timeout=10)


def send(port, method, path, body=None, headers=None) -> tuple[int, dict, dict | None]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None,
                           headers={"Content-Type": "application/json", **(headers or {})})
        answer = connection.getresponse()
        text = answer.read()
        return answer.status, dict(answer.headers), json.loads(text) if text else None
    finally:
        connection.close()


def killed_mid_request(port, method, path, body, headers):
    """The request whose worker the hook kills: the connection ends without an answer."""
    with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
        send(port, method, path, body, {**headers, "X-Test-Kill-After-Write": "1"})


def retried(port, method, path, body, headers) -> tuple[int, dict, dict]:
    """Retry as a client does: through the restart (refused) and the first run's lease (409 in progress)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            status, answer_headers, answer = send(port, method, path, body, headers)
        except (ConnectionRefusedError, http.client.RemoteDisconnected, ConnectionResetError):
            time.sleep(0.2)
            continue
        if status == 409 and answer["code"] == "idempotent_request_in_progress":
            time.sleep(0.2)
            continue
        return status, answer_headers, answer
    raise AssertionError("the retry never got an answer")


def two_seat_game(port, seats):
    status, _, created = send(port, "POST", "/games", {"players": 2, "seats": seats})
    assert status == 201, created
    return created


def test_an_action_whose_worker_was_killed_after_its_write_is_answered_as_applied_on_retry(killable_api):
    port = killable_api
    created = two_seat_game(port, [{"type": "human"}, {"type": "human"}])
    game_id = created["game"]["id"]
    tokens = {entry["seat"]: entry["token"] for entry in created["tokens"]}
    seat = created["game"]["awaiting"][0]
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    _, _, view = send(port, "GET", f"/games/{game_id}/view", headers=auth)
    action = view["legal_actions"][0]
    headers = {**auth, "If-Match": f'"{view["version"]}"', "Idempotency-Key": str(uuid.uuid4())}
    path = f"/games/{game_id}/actions"

    killed_mid_request(port, "POST", path, action, headers)
    status, answer_headers, first = retried(port, "POST", path, action, headers)
    assert status == 200, first
    assert answer_headers["Idempotent-Replayed"] == "applied"
    assert first["game"]["version"] == view["version"] + 1, "the action ran twice, or not at all"
    assert [event["type"] for event in first["events"]][:1] == [action["type"]]
    assert first["events"][0]["seat"] == seat and first["events"][0].get("card") == action.get("card")
    # Applied once: the log holds the action once, and the other seat's turn is next.
    _, _, log = send(port, "GET", f"/games/{game_id}/events?after=0&limit=500")
    assert sum(1 for event in log if event["type"] == action["type"] and event.get("seat") == seat) == 1
    # The answer the retry got is the key's record now: a third try gets it again.
    status, answer_headers, again = send(port, "POST", path, action, headers)
    assert (status, answer_headers["Idempotent-Replayed"], again) == (200, "true", first)


def test_a_seat_claim_whose_worker_was_killed_after_its_write_gets_the_same_seat_and_token(killable_api):
    port = killable_api
    created = two_seat_game(port, [{"type": "human"}, {"type": "open"}])
    game_id = created["game"]["id"]
    headers = {"Idempotency-Key": str(uuid.uuid4())}
    path = f"/games/{game_id}/seats/1"

    killed_mid_request(port, "POST", path, {"name": "Omar"}, headers)
    status, _, claimed = retried(port, "POST", path, {"name": "Omar"}, headers)
    assert status == 201, claimed
    assert claimed["seat"] == 1 and claimed["game"]["status"] == "active"
    status, _, view = send(
        port, "GET", f"/games/{game_id}/view", headers={"Authorization": f"Bearer {claimed['token']}"}
    )
    assert status == 200 and view["seat"] == 1
    # Another caller's claim of that seat is still refused.
    status, _, refused = send(port, "POST", path, {"name": "Someone"}, {"Idempotency-Key": str(uuid.uuid4())})
    assert status == 409 and refused["code"] == "seat_taken"


def test_a_leave_whose_worker_was_killed_after_its_write_is_answered_on_retry_though_its_token_left(killable_api):
    port = killable_api
    created = two_seat_game(port, [{"type": "human"}, {"type": "human"}])
    game_id, token = created["game"]["id"], created["tokens"][0]["token"]
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": str(uuid.uuid4())}
    path = f"/games/{game_id}/seats/0/leave"

    killed_mid_request(port, "POST", path, {"bot": "greedy"}, headers)
    status, _, view = retried(port, "POST", path, {"bot": "greedy"}, headers)
    assert status == 200, view
    assert view["seats"][0]["type"] == "bot" and view["seats"][0]["bot"] == "greedy"
    _, _, log = send(port, "GET", f"/games/{game_id}/events?after=0&limit=500")
    assert [event["type"] for event in log].count("seat_left") == 1
    # The token left with the seat: without the key's retry it is refused, as before.
    status, _, refused = send(port, "POST", path, {"bot": "greedy"}, {"Authorization": f"Bearer {token}"})
    assert status == 401, refused
