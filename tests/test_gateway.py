"""Issue 65, item 1: the stream gateway (`ronda streams`) serves the live streams apart from the API,
as the API serves them: the same bytes of every stream, the same resume, the same answers to what
it refuses (problems, statuses, headers, CORS, rate limits, an app's scope and its server acting for
its player), and it holds a storm while its loop cannot run. Each test runs the real processes: the
API under gunicorn and the gateway, on one Redis."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
import redis
import requests

from app.ops.keys import changes_channel, player_notices_channel
from app.ops.window_counts import SHARE_BETWEEN_SYNCS
from http_helpers import in_one_window
from test_production_server import ROOT, free_port, raw_answer, read_to_close, read_until, ready, start_gunicorn

pytestmark = pytest.mark.slow  # processes started and stopped: left out of the fast loop

OPERATOR_KEY = "operator-key-for-the-gateway-tests"
ORIGIN = "https://table.example"
TOKEN_BUDGET = 400  # a seat token's requests a minute: a whole game's, and the rate-limit test spends one token's


def launch_gateway(env, port) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "from app.cli import main; main()", "streams", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_gateway(env, port) -> subprocess.Popen:
    return ready(launch_gateway(env, port), port, "ronda streams")


@pytest.fixture(scope="module")
def env(redis_url):
    return {**os.environ, "REDIS_URL": redis_url, "RONDA_SECRET_KEY": "gateway-tests-secret",
            "RONDA_OPERATOR_KEY": OPERATOR_KEY, "RONDA_SSE_KEEPALIVE_SECONDS": "1", "RONDA_CORS_ORIGINS": ORIGIN,
            "RONDA_BOT_DISPATCH": "inprocess", "RONDA_RATE_LIMIT_PER_TOKEN": str(TOKEN_BUDGET),
            "RONDA_RATE_LIMIT_PER_ADDRESS": "100000"}  # every request here comes from one address


@pytest.fixture(scope="module")
def fronts(env):
    """(the API's base URL, the gateway's base URL, the gateway's process)"""
    api_port, gateway_port = free_port(), free_port()
    api = start_gunicorn(env, api_port)
    gateway = start_gateway(env, gateway_port)
    yield f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{gateway_port}", gateway
    for process in (api, gateway):
        process.terminate()
        process.wait(timeout=15)


def new_game(api) -> tuple[str, list[str]]:
    created = requests.post(f"{api}/games", json={"players": 2, "seats": [{"type": "human"}] * 2}).json()
    return created["game"]["id"], [t["token"] for t in sorted(created["tokens"], key=lambda t: t["seat"])]


def play(api, game_id, tokens, moves, in_app: dict | None = None):
    """`moves` first legal moves; `in_app`: the app's header, for a game inside one."""
    for _ in range(moves):
        game = requests.get(f"{api}/games/{game_id}", headers=in_app).json()
        seat = {**(in_app or {}), "Authorization": f"Bearer {tokens[game['awaiting'][0]]}"}
        view = requests.get(f"{api}/games/{game_id}/view", headers=seat).json()
        assert "legal_actions" in view, view
        answer = requests.post(f"{api}/games/{game_id}/actions", json=view["legal_actions"][0],
                               headers={**seat, "If-Match": f'"{view["version"]}"'})
        assert answer.status_code == 200, answer.text


def messages(base, path, headers, count=None, until: str | None = None) -> list[str]:
    """The first `count` messages of a stream (keep-alive comments aside), as sent; or those up to
    the first holding `until`."""
    found: list[str] = []
    deadline = time.monotonic() + 60  # keep-alives would hold a stream whose message never comes
    with requests.get(f"{base}{path}", headers=headers, stream=True, timeout=20) as stream:
        assert stream.status_code == 200, stream.text
        text = ""
        for chunk in stream.iter_content(chunk_size=None, decode_unicode=True):
            assert time.monotonic() < deadline, f"still waiting after {found}"
            text += chunk
            *complete, text = text.split("\n\n")
            found += [message for message in complete if message != ": keep-alive"]
            if until is not None and any(until in message for message in found):
                return found[:next(i for i, message in enumerate(found) if until in message) + 1]
            if count is not None and len(found) >= count:
                return found[:count]
    raise AssertionError(f"the stream ended after {found}")


def test_every_stream_of_a_game_is_the_same_bytes_from_the_gateway_as_from_the_api_and_resumes_alike(fronts):
    api, gateway, _ = fronts
    game_id, tokens = new_game(api)
    play(api, game_id, tokens, 4)
    events = requests.get(f"{api}/games/{game_id}").json()["event_count"]
    for viewer in ({"Authorization": f"Bearer {tokens[0]}"}, {"Authorization": f"Bearer {tokens[1]}"}, {}):
        first = messages(api, f"/games/{game_id}/stream", viewer, 2)  # ": connected", the snapshot
        assert first[0] == ": connected" and "event: snapshot" in first[1]
        assert messages(gateway, f"/games/{game_id}/stream", viewer, 2) == first
        after = events // 2
        resumed = messages(api, f"/games/{game_id}/stream", {**viewer, "Last-Event-ID": str(after)},
                           1 + events - after)
        assert [line.split("\n")[0] for line in resumed[1:]] == [f"id: {i}" for i in range(after + 1, events + 1)]
        assert messages(gateway, f"/games/{game_id}/stream", {**viewer, "Last-Event-ID": str(after)},
                        1 + events - after) == resumed


def test_a_bot_tournament_inside_an_app_streams_the_same_from_the_gateway_as_from_the_api_to_its_end(fronts):
    """A bot tournament made by an app's server, its stream read with the app's client key from its
    first change: the gateway sends every round and standings the API does, the same bytes, up to
    the finished standings; and resumed from the second, the same rest."""
    api, gateway, _ = fronts
    made = requests.post(f"{api}/admin/apps", json={"name": "Club night"},
                         headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json()
    created = requests.post(f"{api}/tournaments", headers={"X-Ronda-App": made["server_key"]}, json={
        "format": "round_robin", "entrants": ["random", "random", "random"], "games_per_pairing": 1,
        "rules": {"preset": "simple"}})
    assert created.status_code == 201, created.text
    tournament, in_app = f"/tournaments/{created.json()['id']}", {"X-Ronda-App": made["client_key"]}
    deadline = time.monotonic() + 60  # a read moves it on (no worker here), as the sweeper would
    while requests.get(f"{api}{tournament}", headers=in_app).json()["status"] != "finished":
        assert time.monotonic() < deadline
        time.sleep(0.5)
    path, finished = f"{tournament}/stream", '"status":"finished"'
    from_api = messages(api, path, {**in_app, "Last-Event-ID": "0-0"}, until=finished)
    assert messages(gateway, path, {**in_app, "Last-Event-ID": "0-0"}, until=finished) == from_api
    assert sum("event: round" in message for message in from_api) == 3  # three entrants: three rounds
    second = from_api[2].split("\n", 1)[0].removeprefix("id: ")
    assert messages(gateway, path, {**in_app, "Last-Event-ID": second}, until=finished)[1:] == from_api[3:]


def test_a_change_reaches_the_gateways_streams_once_each_in_order(fronts):
    api, gateway, _ = fronts
    game_id, tokens = new_game(api)
    before = requests.get(f"{api}/games/{game_id}").json()["event_count"]
    socks = [socket.create_connection(("127.0.0.1", int(gateway.rsplit(":", 1)[1])), timeout=20) for _ in range(30)]
    for sock in socks:
        sock.sendall(f"GET /games/{game_id}/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        read_until(sock, b"event: snapshot", 1)
    play(api, game_id, tokens, 2)
    after = requests.get(f"{api}/games/{game_id}").json()["event_count"]
    for sock in socks:
        data = read_until(sock, f"id: {after}\n".encode(), 1)
        ids = [int(line[4:]) for line in data.decode().split("\n") if line.startswith("id: ")]
        assert ids == list(range(before + 1, after + 1))
        sock.close()


def answer_of(base, method, path, headers):
    """(status, media type, problem code or None, the headers a client reads) of one request."""
    with requests.request(method, f"{base}{path}", headers=headers, stream=True, timeout=20) as answer:
        media = answer.headers.get("Content-Type", "").split(";")[0] if method != "OPTIONS" else None  # no body
        code = answer.json()["code"] if media == "application/problem+json" else None
        kept = {name: answer.headers.get(name) for name in (
            "WWW-Authenticate", "Retry-After", "Access-Control-Allow-Origin", "Access-Control-Allow-Headers",
            "Access-Control-Max-Age", "X-Content-Type-Options", "X-RateLimit-Limit", "Cache-Control")}
        kept["Allow"] = sorted(answer.headers.get("Allow", "").replace(" ", "").split(","))
        kept["Access-Control-Allow-Methods"] = sorted(
            answer.headers.get("Access-Control-Allow-Methods", "").replace(" ", "").split(","))
        kept["Access-Control-Expose-Headers"] = sorted(
            answer.headers.get("Access-Control-Expose-Headers", "").replace(" ", "").split(","))
        kept["Vary"] = "Origin" in answer.headers.get("Vary", "")
        kept["X-Request-ID"] = answer.headers.get("X-Request-ID") == "asked-for-7"
        return answer.status_code, media, code, kept


def test_the_gateway_answers_every_refusal_and_header_as_the_api_does(fronts):
    api, gateway, _ = fronts
    made = requests.post(f"{api}/admin/apps", json={"name": "Cafe"},
                         headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json()
    client_key, server_key = made["client_key"], made["server_key"]
    other_key = requests.post(f"{api}/admin/apps", json={"name": "Next door"},
                              headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json()["client_key"]
    app_player = requests.post(f"{api}/players", json={"name": "Amina"}, headers={"X-Ronda-App": client_key}).json()
    app_game = requests.post(f"{api}/games", json={"players": 2}, headers={"X-Ronda-App": client_key}).json()
    game_id, tokens = new_game(api)
    asked = {"X-Request-ID": "asked-for-7"}
    cases = [
        ("GET", f"/games/{game_id}/stream", {"Origin": ORIGIN}),
        ("GET", f"/games/{game_id}/stream", {"Origin": "https://elsewhere.example"}),
        ("OPTIONS", f"/games/{game_id}/stream", {"Origin": ORIGIN, "Access-Control-Request-Method": "GET",
                                                  "Access-Control-Request-Headers": "Authorization, Last-Event-ID"}),
        ("HEAD", f"/games/{game_id}/stream", {"Authorization": f"Bearer {tokens[0]}"}),
        ("POST", f"/games/{game_id}/stream", {}),
        ("GET", f"/games/{game_id}/stream", {"Last-Event-ID": "seven"}),
        ("GET", f"/games/{app_game['game']['id']}/stream", {}),  # another app's game
        ("GET", f"/games/{app_game['game']['id']}/stream", {"X-Ronda-App": client_key}),
        ("GET", f"/games/{game_id}/stream", {"X-Ronda-App": "rcli.not-a-key"}),
        ("GET", f"/games/{app_game['game']['id']}/stream", {"X-Ronda-App": other_key}),  # a second tenant
        ("GET", "/players/me/stream", {"Authorization": f"Bearer {app_player['token']}", "X-Ronda-App": other_key}),
        ("GET", "/players/me/stream", {}),
        ("GET", "/players/me/stream", {"Authorization": "Bearer nobody"}),
        ("GET", "/players/me/stream", {"Authorization": f"Bearer {app_player['token']}"}),  # no app named
        ("GET", "/players/me/stream", {"Authorization": f"Bearer {app_player['token']}", "X-Ronda-App": client_key}),
        ("GET", "/players/me/stream", {"X-Ronda-App": client_key, "Ronda-On-Behalf-Of": app_player["player"]["id"]}),
        ("GET", "/players/me/stream", {"X-Ronda-App": server_key, "Ronda-On-Behalf-Of": app_player["player"]["id"]}),
        ("GET", "/players/me/stream", {"X-Ronda-App": server_key, "Ronda-On-Behalf-Of": "no-such-player"}),
        ("GET", "/players/me/stream", {"X-Ronda-App": server_key, "Ronda-On-Behalf-Of": app_player["player"]["id"],
                                       "Origin": ORIGIN}),
        ("GET", "/players/me/stream", {"Authorization": f"Bearer {app_player['token']}", "X-Ronda-App": client_key,
                                       "Last-Event-ID": "not-an-id"}),
        ("GET", "/bots/me/stream", {}),
        ("GET", "/bots/me/stream", {"Authorization": "Bearer rbot.nothing"}),
        ("GET", "/tournaments/nothing/stream", {}),
        ("GET", "/games//stream", {}),
    ]
    differing = [(method, path, headers, from_api, from_gateway) for method, path, headers in cases
                 if (from_api := answer_of(api, method, path, {**asked, **headers}))
                 != (from_gateway := answer_of(gateway, method, path, {**asked, **headers}))]
    assert not differing, "\n".join(f"{method} {path} {headers}: {api_answer[:3]} {gateway_answer[:3]} " + str({
        name: (value, gateway_answer[3][name]) for name, value in api_answer[3].items()
        if value != gateway_answer[3][name]}) for method, path, headers, api_answer, gateway_answer in differing)
    statuses = {answer_of(api, method, path, headers)[0] for method, path, headers in cases}
    assert {200, 401, 403, 404, 405, 422} <= statuses  # the table covers each kind of answer


def test_an_apps_server_acting_for_its_player_gets_their_notices_from_the_gateway(fronts):
    api, gateway, _ = fronts
    made = requests.post(f"{api}/admin/apps", json={"name": "Studio"},
                         headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json()
    server = {"X-Ronda-App": made["server_key"]}
    signed = requests.post(f"{api}/apps/me/players/sign-in", json={"external_id": "user-1", "name": "Amina"},
                           headers=server).json()
    acting = {**server, "Ronda-On-Behalf-Of": signed["player"]["id"]}
    with requests.get(f"{gateway}/players/me/stream", headers=acting, stream=True, timeout=20) as stream:
        lines = stream.iter_lines(decode_unicode=True)
        assert next(lines) == ": connected"
        game = requests.post(f"{api}/games", headers=acting, json={
            "players": 2, "seats": [{"type": "human", "mine": True}, {"type": "bot", "bot": "random"}]}).json()
        for line in lines:
            if line.startswith("data: "):
                notice = json.loads(line[6:])
                assert notice["type"] == "your_turn" and notice["game_id"] == game["game"]["id"]
                break


def test_a_seat_tokens_budget_is_spent_on_the_gateway_too(fronts):
    api, gateway, _ = fronts
    game_id, tokens = new_game(api)
    seat = {"Authorization": f"Bearer {tokens[0]}"}
    in_one_window(30)
    statuses = [requests.head(f"{gateway}/games/{game_id}/stream", headers=seat, timeout=10).status_code
                for _ in range(TOKEN_BUDGET)]
    assert statuses == [200] * TOKEN_BUDGET
    refused = requests.get(f"{gateway}/games/{game_id}/stream", headers=seat, timeout=10)
    assert refused.status_code == 429 and refused.json()["budget"] == "token"
    assert int(refused.headers["Retry-After"]) >= 1 and refused.headers["X-RateLimit-Remaining"] == "0"
    # One budget across both: the API, which has not counted this token itself, refuses it once it
    # has taken at most its share between syncs (app/ops/window_counts.py), where alone it would take 400.
    from_api = [requests.get(f"{api}/games/{game_id}/view", headers=seat, timeout=10).status_code
                for _ in range(int(TOKEN_BUDGET * SHARE_BETWEEN_SYNCS) + 1)]
    assert 429 in from_api


@pytest.mark.parametrize("request_bytes, status", [
    (b"GET /players/me/stream HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n", 431),
    (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    (b"GET /players/me/stream HTTP/9\r\nHost: x\r\n\r\n", 400),
    (b"GET /players/me/stream HTTP/1.1\r\nHost x\r\n\r\n", 400),
])
def test_what_the_gateway_cannot_read_is_a_problem(fronts, request_bytes, status):
    _, gateway, _ = fronts
    answered, headers, body = raw_answer(int(gateway.rsplit(":", 1)[1]), request_bytes)
    assert answered == status and headers["Content-Type"] == "application/problem+json"
    assert json.loads(body)["status"] == status


def test_the_gateways_probes_answer_as_the_apis(fronts):
    api, gateway, _ = fronts
    assert requests.get(f"{gateway}/health/ready").json() == requests.get(f"{api}/health/ready").json()
    assert requests.get(f"{gateway}/health/live").json() == requests.get(f"{api}/health/live").json()
    figures = requests.get(f"{gateway}/metrics").text
    assert "ronda_open_streams" in figures and 'app="' not in figures  # no tenant's figures
    assert requests.get(f"{gateway}/games").status_code == 404  # the API's other routes are not here


def open_raw(port, path, headers: dict | None = None) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    fields = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{fields}\r\n".encode())
    return sock


def test_a_storm_that_arrives_while_the_gateway_cannot_run_is_all_served(fronts, env):
    """Several hundred streams opened while the gateway's loop cannot run at all (SIGSTOP: a loop
    held busy, as a storm holds it): the kernel queues them, and once it runs each gets its
    snapshot, none a reconnect hint (its patience counts from when it could be served)."""
    api, _, _ = fronts
    port = free_port()
    gateway = start_gateway({**env, "RONDA_RATE_LIMIT_PER_ADDRESS": "0"}, port)
    try:
        games = [new_game(api)[0] for _ in range(5)]
        gateway.send_signal(signal.SIGSTOP)
        try:
            streams = [open_raw(port, f"/games/{games[i % 5]}/stream") for i in range(400)]
            time.sleep(2)
        finally:
            gateway.send_signal(signal.SIGCONT)
        for sock in streams:
            data = read_until(sock, b"event: snapshot", 1)
            assert data.startswith(b"HTTP/1.1 200") and b"retry:" not in data
            sock.close()
    finally:
        gateway.terminate()
        gateway.wait(timeout=15)


def test_sigterm_ends_the_gateways_streams_with_jittered_reconnect_hints_and_it_exits(fronts, env):
    api, _, _ = fronts
    port = free_port()
    gateway = start_gateway(env, port)
    game_id, _ = new_game(api)
    streams = [open_raw(port, f"/games/{game_id}/stream") for _ in range(30)]
    for sock in streams:
        read_until(sock, b"event: snapshot", 1)
    gateway.send_signal(signal.SIGTERM)
    hints = []
    for sock in streams:
        tail = read_to_close(sock).decode()
        hints.append(int(tail.split("retry: ", 1)[1].split("\n", 1)[0]))
    gateway.wait(timeout=10)
    assert all(1000 <= hint <= 5000 for hint in hints) and len(set(hints)) > 1


def open_streams_of(base) -> float:
    metric = re.search(r"^ronda_open_streams (\S+)$", requests.get(f"{base}/metrics").text, re.M)
    assert metric is not None
    return float(metric.group(1))


def leaving_streams(api, scope: str) -> tuple[list[tuple[str, dict]], list[str]]:
    """Twenty streams' (path, header fields), and the channels they subscribe to: of a public game
    (spectators); or inside an app, of its game (each seat's own and spectators) and its player's
    notices, every one sent with the app's key."""
    if scope == "public":
        game_id = new_game(api)[0]
        return [(f"/games/{game_id}/stream", {})] * 20, [changes_channel(game_id)]
    made = requests.post(f"{api}/admin/apps", json={"name": "Hangups"},
                         headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json()
    in_app = {"X-Ronda-App": made["client_key"]}
    player = requests.post(f"{api}/players", json={"name": "Amina"}, headers=in_app).json()
    created = requests.post(f"{api}/games", json={"players": 2, "seats": [{"type": "human"}] * 2},
                            headers=in_app).json()
    game_id = created["game"]["id"]
    seats = [{**in_app, "Authorization": f"Bearer {t['token']}"} for t in created["tokens"]]
    streams = [(f"/games/{game_id}/stream", fields) for fields in [*seats, in_app] * 3]
    streams += [("/players/me/stream", {**in_app, "Authorization": f"Bearer {player['token']}"})] * 11
    return streams, [changes_channel(game_id), player_notices_channel(player["player"]["id"])]


@pytest.mark.parametrize("scope", ["public", "app"])
@pytest.mark.parametrize("front", ["gateway", "api"])
def test_a_stream_is_let_go_as_its_client_closes_it_not_at_its_next_keep_alive(fronts, env, redis_url, front, scope):
    """Issue 65, storm: twenty clients close their streams (of a public game; or inside an app, its
    game's seats and spectators and its player's notices); the server (the gateway, or the API
    under its gunicorn gevent worker), whose keep-alive is five minutes away, lets go of each (its
    count of open streams, the channels they listened to) as they close, and the stream still open
    gets the next move."""
    api, _, _ = fronts
    port = free_port()
    quiet = {**env, "RONDA_SSE_KEEPALIVE_SECONDS": "300"}
    server = start_gateway(quiet, port) if front == "gateway" else start_gunicorn(quiet, port)
    base = f"http://127.0.0.1:{port}"
    try:
        (streams, channels), kept = leaving_streams(api, scope), new_game(api)
        leaving = [open_raw(port, path, fields) for path, fields in streams]
        staying = open_raw(port, f"/games/{kept[0]}/stream")
        for sock, (path, _) in zip([*leaving, staying], [*streams, ("/games/", {})], strict=True):
            read_until(sock, b"event: snapshot" if path.startswith("/games/") else b": connected", 1)
        store = redis.Redis.from_url(redis_url)

        def listened() -> int:
            return sum(count for _, count in store.pubsub_numsub(*channels))

        # the gauge counts game streams; each channel, a subscription however many streams listen
        # (made while the streams got their snapshot: it may come just after)
        assert open_streams_of(base) == 1 + sum(path.startswith("/games/") for path, _ in streams)
        subscribing = time.monotonic() + 30
        while listened() < len(channels) and time.monotonic() < subscribing:
            time.sleep(0.05)
        assert listened() == len(channels)
        for sock in leaving:
            sock.close()
        deadline = time.monotonic() + 60  # far from the keep-alive: only a close seen at once passes
        while (open_streams_of(base) > 1 or listened()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert open_streams_of(base) == 1 and listened() == 0
        after = requests.get(f"{api}/games/{kept[0]}").json()["event_count"] + 1
        play(api, kept[0], kept[1], 1)
        assert f"id: {after}\n".encode() in read_until(staying, f"id: {after}\n".encode(), 1)
        staying.close()
    finally:
        server.terminate()
        server.wait(timeout=15)


def sent_events(data: bytes) -> list[tuple[int, dict]]:
    """(id, event) of each `event` message in a stream's bytes."""
    found = []
    for message in data.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in message.split("\n") if ": " in line)
        if fields.get("event") == "event":
            found.append((int(fields["id"]), json.loads(fields["data"])))
    return found


def test_a_killed_gateways_streams_resume_on_the_next_one_with_exactly_what_they_missed_inside_an_app(fronts, env):
    """Issue 65, through a kill: the gateway SIGKILLed (no goodbye, no reconnect hint) while an
    app's game is streamed to each seat and a spectator, each with the app's key; moves go on
    through the API, a deal among them; a new gateway on the same port serves each stream resumed
    with Last-Event-ID exactly the events it missed, once each and in order, each as the viewer's
    own event log shows it (its own new hand, no one else's)."""
    api, _, _ = fronts
    port = free_port()
    made = requests.post(f"{api}/admin/apps", json={"name": "Kill and resume"},
                         headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json()
    in_app = {"X-Ronda-App": made["client_key"]}
    created = requests.post(f"{api}/games", json={"players": 2, "seats": [{"type": "human"}] * 2},
                            headers=in_app).json()
    game_id = created["game"]["id"]
    tokens = [t["token"] for t in sorted(created["tokens"], key=lambda t: t["seat"])]
    viewers = [{**in_app, "Authorization": f"Bearer {token}"} for token in tokens] + [in_app]
    gateway = start_gateway(env, port)
    try:
        streams = [open_raw(port, f"/games/{game_id}/stream", viewer) for viewer in viewers]
        for sock in streams:
            read_until(sock, b"event: snapshot", 1)
        play(api, game_id, tokens, 2, in_app)
        seen = requests.get(f"{api}/games/{game_id}", headers=in_app).json()["event_count"]
        for sock in streams:
            assert sent_events(read_until(sock, f"id: {seen}\n".encode(), 1))[-1][0] == seen
        gateway.kill()
        gateway.wait(timeout=15)
        for sock in streams:
            assert not read_to_close(sock).strip(), "a killed gateway says nothing more"
            sock.close()
        play(api, game_id, tokens, 9, in_app)  # 8 cards a deal in a game of two: a new deal among them
        last = requests.get(f"{api}/games/{game_id}", headers=in_app).json()["event_count"]
        gateway = start_gateway(env, port)
        for viewer in viewers:
            with open_raw(port, f"/games/{game_id}/stream", {**viewer, "Last-Event-ID": str(seen)}) as sock:
                resumed = sent_events(read_until(sock, f"id: {last}\n".encode(), 1))
            logged = requests.get(f"{api}/games/{game_id}/events", params={"after": seen}, headers=viewer).json()
            assert resumed == [(event["id"], event) for event in logged]
            assert [event_id for event_id, _ in resumed] == list(range(seen + 1, last + 1))
            assert any(event["type"] == "deal" for _, event in resumed)
    finally:
        gateway.kill()
        gateway.wait(timeout=15)


def test_a_client_that_stops_reading_holds_up_no_other_stream_of_the_gateway(fronts):
    """Issue 65, 2: the hub writes each change to every waiting stream's socket itself, never
    waiting on one: a client that reads nothing (its receive buffer the smallest there is) while
    sixty moves are played, and twenty that read, each get every event in order, once."""
    api, gateway, _ = fronts
    port = int(gateway.rsplit(":", 1)[1])
    game_id, tokens = new_game(api)
    first = requests.get(f"{api}/games/{game_id}").json()["event_count"] + 1
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
    stalled.connect(("127.0.0.1", port))
    stalled.sendall(f"GET /games/{game_id}/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    readers = [open_raw(port, f"/games/{game_id}/stream") for _ in range(20)]
    for sock in readers:
        read_until(sock, b"event: snapshot", 1)
    play(api, game_id, tokens, 60)
    last = requests.get(f"{api}/games/{game_id}").json()["event_count"]
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)  # and now it reads
    for sock in [*readers, stalled]:  # the stalled one last: the others needed nothing of it
        data = read_until(sock, f"id: {last}\n".encode(), 1).decode()
        ids = [int(line[4:]) for line in data.split("\n") if line.startswith("id: ")]
        assert ids[-(last - first + 1):] == list(range(first, last + 1)) and len(set(ids)) == len(ids)
        sock.close()


def test_an_outlet_keeps_in_order_what_the_socket_does_not_take_and_wakes_its_stream_once():
    """The hub's writes through a connection that takes little: what the socket does not take is
    kept, in order, behind what it took, and its stream is woken once to write it; the changes after
    are handed over to the stream, in order, and past the watcher's backlog it is dropped."""
    from gevent import socket as green
    from app.gateway import server
    from app.live import hub as hub_module
    near, far = green.socketpair()
    near.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    outlet = server.ConnectionOutlet(near, chunked=False)
    watcher = hub_module.Watcher("g", None, wants_events=True)
    watcher.outlet, watcher.expecting = outlet, 1
    texts = [f"id: {i}\nevent: event\ndata: {'x' * 1000}\n\n" for i in range(1, 2000)]
    for i, text in enumerate(texts, start=1):
        watcher.hand(("change", (i, [(i, "play", text)], text)))
    queued = []
    while not watcher.inbox.empty():
        queued.append(watcher.inbox.get())
    assert queued[0] == hub_module.FLUSH and hub_module.FLUSH not in queued[1:]
    handed = [payload[2] for kind, payload in queued[1:]]
    assert watcher.dropped and len(queued) == hub_module.BACKLOG
    far.setblocking(False)
    taken = b""
    try:
        while chunk := far.recv(1 << 20):
            taken += chunk
    except BlockingIOError:
        pass
    written = (taken + outlet.kept).decode()
    assert taken and outlet.kept
    assert written + "".join(handed) == "".join(texts[:len(written + "".join(handed)) // len(texts[0])])
    assert watcher.expecting == written.count("id: ") + 1


def test_behind_its_trusted_proxies_the_gateway_counts_the_address_the_first_of_them_saw():
    """As werkzeug's ProxyFix reads X-Forwarded-For for the API (RONDA_TRUSTED_PROXIES): compose's
    router is one proxy, so a client's budget is its own address, not the router's, and what a
    client wrote into the header itself is not believed."""
    from app.gateway.server import GatewayServer, HeadFields
    headers = HeadFields()
    headers.add("x-forwarded-for", "6.6.6.6")  # written by the client
    headers.add("X-Forwarded-For", "203.0.113.7")  # appended by the router
    assert headers["X-FORWARDED-FOR"] == "6.6.6.6, 203.0.113.7" and "x-Forwarded-for" in headers
    behind_one = GatewayServer.__new__(GatewayServer)
    behind_one.trusted_proxies = 1
    assert behind_one._address(headers, ("10.0.0.2", 5000)) == "203.0.113.7"
    behind_one.trusted_proxies = 0
    assert behind_one._address(headers, ("10.0.0.2", 5000)) == "10.0.0.2"
    behind_one.trusted_proxies = 3  # fewer hops than proxies: the peer is all that is known
    assert behind_one._address(headers, ("10.0.0.2", 5000)) == "10.0.0.2"


def test_a_fresh_gateway_opens_its_store_connections_before_its_first_stream_and_starts_with_its_store_down(
        env, own_redis):
    """A deploy's storm of reconnects comes to a fresh gateway: its store connections are open
    before then (bench/streams.py's first storm). A store down as it starts does not keep it from
    starting: it answers, not ready (503), until the store is back."""
    import redis

    from app.gateway.server import STORE_CONNECTIONS_AHEAD
    store = redis.Redis.from_url(own_redis.url)
    port = free_port()
    gateway = start_gateway({**env, "REDIS_URL": own_redis.url}, port)
    try:
        assert len(store.client_list()) >= STORE_CONNECTIONS_AHEAD + 1  # theirs, and this test's
    finally:
        gateway.terminate()
        gateway.wait(timeout=15)
    own_redis.kill()
    port = free_port()
    gateway = launch_gateway({**env, "REDIS_URL": own_redis.url}, port)
    try:
        answer = None
        for _ in range(100):
            try:
                answer = requests.get(f"http://127.0.0.1:{port}/health/ready", timeout=5)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        assert answer is not None and answer.status_code == 503
        own_redis.restart()
        ready(gateway, port, "ronda streams")
    finally:
        gateway.terminate()
        gateway.wait(timeout=15)
