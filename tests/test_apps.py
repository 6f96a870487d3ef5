"""Apps (issue 44): an operator makes apps; a request with `X-Ronda-App` acts within its app, whose
players, games, open-game lists, tickets and leaderboards no other app lists, joins, reads or
rates; per-app quotas answer 429 naming the budget; keys rotate with a grace period and are
revoked. Checked over HTTP against a real server and Redis, and through `ronda apps`."""

import json
import os
import subprocess
import sys
import threading
import time

import pytest
import requests

from app.games.seats import token_digest
from http_helpers import in_one_window
from test_players import rated_game, wait_finished

OPERATOR_KEY = "operator-secret-for-tests"


def serve(config):
    from werkzeug.serving import make_server

    from app import create_app
    app = create_app(config)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


@pytest.fixture(scope="module")
def base(redis_url):
    server, url = serve({"REDIS_URL": redis_url, "BOT_DISPATCH": "inprocess", "OPERATOR_KEY": OPERATOR_KEY,
                         "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    yield url
    server.shutdown()


def operator(**headers):
    return {"Authorization": f"Bearer {OPERATOR_KEY}", **headers}


def new_app(base, name="Cafe", **quotas) -> tuple[dict, str]:
    rv = requests.post(f"{base}/admin/apps", json={"name": name, "quotas": quotas}, headers=operator())
    assert rv.status_code == 201, rv.text
    return rv.json()["app"], rv.json()["client_key"]


def in_app(key, token=None):
    return {"X-Ronda-App": key, **({"Authorization": f"Bearer {token}"} if token else {})}


def new_player(base, key, name="Amina"):
    rv = requests.post(f"{base}/players", json={"name": name}, headers=in_app(key) if key else {})
    assert rv.status_code == 201, rv.text
    return rv.json()["player"], rv.json()["token"]


def open_game(base, key, token=None):
    seats = [{"type": "human", "mine": True}, {"type": "open"}] if token else [{"type": "open"}, {"type": "open"}]
    rv = requests.post(f"{base}/games", json={"players": 2, "rules": {"preset": "classic"}, "seats": seats},
                       headers=in_app(key, token) if key else {})
    assert rv.status_code == 201, rv.text
    return rv.json()["game"]


def listed(base, key, status="open"):
    rv = requests.get(f"{base}/games?status={status}&page_size=100", headers=in_app(key) if key else {})
    assert rv.status_code == 200, rv.text
    return {game["id"] for game in rv.json()}


def test_the_admin_api_answers_the_operator_key_only(base):
    assert requests.post(f"{base}/admin/apps", json={"name": "x"}).status_code == 401
    refused = requests.get(f"{base}/admin/apps", headers={"Authorization": "Bearer guess"})
    assert refused.status_code == 401 and refused.json()["code"] == "operator_only"
    app, key = new_app(base, "Listed")
    assert key.startswith(f"rapp.{app['id']}.")
    assert app["id"] in {found["id"] for found in requests.get(f"{base}/admin/apps", headers=operator()).json()}
    shown = requests.get(f"{base}/admin/apps/{app['id']}", headers=operator()).json()
    assert shown["name"] == "Listed" and key not in json.dumps(shown)
    assert requests.get(f"{base}/admin/apps/nothing", headers=operator()).json()["code"] == "app_not_found"


def test_an_app_never_lists_reads_or_joins_another_apps_games(base):
    (_, a_key), (_, b_key) = new_app(base, "A"), new_app(base, "B")
    a_game, b_game, public_game = open_game(base, a_key), open_game(base, b_key), open_game(base, None)
    assert a_game["id"] in listed(base, a_key) and b_game["id"] in listed(base, b_key)
    assert not {a_game["id"]} & (listed(base, b_key) | listed(base, None))
    assert public_game["id"] in listed(base, None) and public_game["id"] not in listed(base, a_key)
    for path in ("", "/events", "/view"):
        rv = requests.get(f"{base}/games/{a_game['id']}{path}", headers=in_app(b_key))
        assert rv.status_code == 404 and rv.json()["code"] == "game_not_found", path
        assert requests.get(f"{base}/games/{a_game['id']}{path}").status_code == 404, path
    claim = requests.post(f"{base}/games/{a_game['id']}/seats/0", json={"name": "Intruder"}, headers=in_app(b_key))
    assert claim.status_code == 404
    assert requests.get(f"{base}/games/{a_game['id']}", headers=in_app(a_key)).json()["seats"][0]["type"] == "open"
    joined = requests.post(f"{base}/games/{a_game['id']}/seats/0", json={"name": "Guest"}, headers=in_app(a_key))
    assert joined.status_code == 201


def test_an_apps_players_and_their_tokens_stay_in_their_app(base):
    (_, a_key), (_, b_key) = new_app(base, "A"), new_app(base, "B")
    player, token = new_player(base, a_key)
    assert requests.get(f"{base}/players/{player['id']}", headers=in_app(a_key)).json()["name"] == "Amina"
    assert requests.get(f"{base}/players/{player['id']}", headers=in_app(b_key)).status_code == 404
    assert requests.get(f"{base}/players/{player['id']}").status_code == 404
    assert requests.get(f"{base}/players/me", headers=in_app(a_key, token)).json()["id"] == player["id"]
    for elsewhere in (in_app(b_key, token), {"Authorization": f"Bearer {token}"}):
        rv = requests.get(f"{base}/players/me", headers=elsewhere)
        assert rv.status_code == 401 and rv.json()["code"] == "invalid_token"
    # A player of app B cannot take a seat of app A's game, even naming it with A's key.
    _, b_token = new_player(base, b_key, "Omar")
    a_game = open_game(base, a_key)
    rv = requests.post(f"{base}/games/{a_game['id']}/seats/1", json={}, headers=in_app(a_key, b_token))
    assert rv.status_code == 401
    mine = open_game(base, a_key, token)
    assert mine["seats"][0]["player"] == player["id"]
    games = requests.get(f"{base}/players/me/games?status=open", headers=in_app(a_key, token)).json()
    assert [game["id"] for game in games] == [mine["id"]]


@pytest.mark.slow
def test_tickets_meet_only_tickets_of_their_app(base):
    (_, a_key), (_, b_key) = new_app(base, "A"), new_app(base, "B")
    (_, a_token), (_, b_token) = new_player(base, a_key), new_player(base, b_key, "Omar")
    ticket = {"rules": {"preset": "simple"}, "players": 2, "max_wait_seconds": 30}
    a_ticket = requests.post(f"{base}/matchmaking/tickets", json=ticket, headers=in_app(a_key, a_token)).json()
    b_ticket = requests.post(f"{base}/matchmaking/tickets", json=ticket, headers=in_app(b_key, b_token)).json()
    time.sleep(1.5)  # the sweep would have paired them by now, were they in one queue
    for key, token, found in ((a_key, a_token, a_ticket), (b_key, b_token, b_ticket)):
        now = requests.get(f"{base}/matchmaking/tickets/{found['id']}", headers=in_app(key, token)).json()
        assert now["status"] == "waiting" and now["pool"] == "simple-2", now
    assert requests.get(f"{base}/matchmaking/tickets/{a_ticket['id']}", headers=in_app(b_key, b_token)).status_code in (
        401, 404)
    # A second player of app A meets the first: the game is app A's.
    _, other = new_player(base, a_key, "Yasmine")
    met = requests.post(f"{base}/matchmaking/tickets", json=ticket, headers=in_app(a_key, other)).json()
    assert met["status"] == "matched", met
    assert requests.get(f"{base}/games/{met['game_id']}", headers=in_app(a_key)).status_code == 200
    assert requests.get(f"{base}/games/{met['game_id']}", headers=in_app(b_key)).status_code == 404
    for key, token, found in ((a_key, a_token, a_ticket), (b_key, b_token, b_ticket)):
        requests.delete(f"{base}/matchmaking/tickets/{found['id']}", headers=in_app(key, token))


def test_a_rated_game_in_an_app_rates_on_that_apps_leaderboard_only(base):
    (_, a_key), (_, b_key) = new_app(base, "A"), new_app(base, "B")
    (first, first_token), (second, second_token) = new_player(base, a_key), new_player(base, a_key, "Omar")
    session = requests.Session()
    session.headers["X-Ronda-App"] = a_key
    game_id = rated_game(base, first_token, second_token, http=session)
    wait_finished(base, [game_id], http=session)
    deadline = time.monotonic() + 30
    while not (board := session.get(f"{base}/leaderboards/simple-2?page_size=100").json()):
        assert time.monotonic() < deadline, "the rating never came"
        time.sleep(0.2)
    assert {row["entrant"] for row in board} >= {f"player:{first['id']}", f"player:{second['id']}"}
    for elsewhere in ({"X-Ronda-App": b_key}, {}):
        rows = requests.get(f"{base}/leaderboards/simple-2?page_size=100", headers=elsewhere).json()
        assert not {row["entrant"] for row in rows} & {f"player:{first['id']}", f"player:{second['id']}"}
    assert session.get(f"{base}/players/{first['id']}").json()["ratings"][0]["pool"] == "simple-2"


def test_quotas_answer_429_naming_the_budget_spent(base):
    _, key = new_app(base, "Small", players=1, live_games=1)
    new_player(base, key)
    refused = requests.post(f"{base}/players", json={"name": "Second"}, headers=in_app(key))
    assert refused.status_code == 429 and refused.json()["budget"] == "app_players", refused.text
    assert "Retry-After" in refused.headers
    open_game(base, key)
    refused = requests.post(f"{base}/games", json={"players": 2, "rules": {"preset": "classic"}}, headers=in_app(key))
    assert refused.status_code == 429 and refused.json()["budget"] == "app_live_games"
    assert requests.post(f"{base}/players", json={"name": "Public"}).status_code == 201  # other apps go on


def test_an_apps_requests_a_minute_run_out_on_its_own_budget(base):
    _, key = new_app(base, "Chatty", requests_per_minute=3)
    in_one_window(10)
    answers = [requests.get(f"{base}/games?status=open", headers=in_app(key)) for _ in range(4)]
    assert [rv.status_code for rv in answers[:3]] == [200] * 3
    assert answers[3].status_code == 429 and answers[3].json()["budget"] == "app"
    assert requests.get(f"{base}/games?status=open").status_code == 200


@pytest.mark.slow
def test_a_rotated_key_works_through_its_grace_and_a_revoked_app_answers_401(base):
    app, old = new_app(base, "Rotating")
    game = open_game(base, old)
    rotated = requests.post(f"{base}/admin/apps/{app['id']}/rotate", json={"grace_seconds": 6}, headers=operator())
    new = rotated.json()["key"]
    assert new != old and sorted(k["kind"] for k in rotated.json()["app"]["keys"]) == ["client", "client", "server"]
    for key in (old, new):
        assert requests.get(f"{base}/games/{game['id']}", headers=in_app(key)).status_code == 200
    time.sleep(6 + 2.5)  # the grace, and a process's two seconds of remembering the app
    ended = requests.get(f"{base}/games/{game['id']}", headers=in_app(old))
    assert ended.status_code == 401 and ended.json()["code"] == "invalid_app_key"
    assert requests.get(f"{base}/games/{game['id']}", headers=in_app(new)).status_code == 200
    revoked = requests.post(f"{base}/admin/apps/{app['id']}/revoke", headers=operator())
    assert revoked.json()["revoked_at"]
    time.sleep(2.5)
    assert requests.get(f"{base}/games/{game['id']}", headers=in_app(new)).status_code == 401
    assert requests.get(f"{base}/games?status=open", headers=in_app("rapp.nothing.at-all")).status_code == 401


def test_metrics_count_each_apps_requests_live_games_and_deliveries(base):
    app, key = new_app(base, "Measured")
    open_game(base, key)
    open_game(base, key)
    public = requests.get(f"{base}/metrics").text  # issue 62, 2: a tenant never reads another's figures
    assert app["id"] not in public and "ronda_app_" not in public and "ronda_http_requests_total" in public
    text = requests.get(f"{base}/metrics", headers=operator()).text
    assert f'ronda_app_live_games{{app="{app["id"]}"}} 2.0' in text
    assert f'ronda_app_requests_total{{app="{app["id"]}"}} 2.0' in text
    assert f'ronda_app_webhook_deliveries{{app="{app["id"]}",status="failed"}} 0.0' in text


def ronda_apps(redis_url, *args) -> dict | list:
    done = subprocess.run([sys.executable, "-m", "app.cli", "apps", *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "REDIS_URL": redis_url})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_the_operator_cli_creates_lists_shows_rotates_and_revokes_apps(redis_url, base):
    made = ronda_apps(redis_url, "create", "From the shell", "--live-games", "5")
    app_id, key = made["app"]["id"], made["client_key"]
    assert made["server_key"].startswith("rsrv.")
    assert made["app"]["quotas"]["live_games"] == 5
    assert app_id in {found["id"] for found in ronda_apps(redis_url, "list")}
    assert ronda_apps(redis_url, "show", app_id)["name"] == "From the shell"
    assert requests.get(f"{base}/games?status=open", headers=in_app(key)).status_code == 200
    rotated = ronda_apps(redis_url, "rotate", app_id, "--grace", "0")
    time.sleep(2.5)
    assert requests.get(f"{base}/games?status=open", headers=in_app(key)).status_code == 401
    assert requests.get(f"{base}/games?status=open", headers=in_app(rotated["key"])).status_code == 200
    assert ronda_apps(redis_url, "revoke", app_id)["revoked_at"]
    time.sleep(2.5)
    assert requests.get(f"{base}/games?status=open", headers=in_app(rotated["key"])).status_code == 401


def commands_in(packed: bytes) -> int:
    """How many commands a packed write to Redis holds: each is a RESP array of bulk strings
    (`*<n>`, then n times `$<length>` and its bytes), a pipeline's one after another."""
    count = position = 0
    while position < len(packed):
        line_end = packed.index(b"\r\n", position)
        parts, position = int(packed[position + 1:line_end]), line_end + 2
        for _ in range(parts):
            line_end = packed.index(b"\r\n", position)
            position = line_end + 2 + int(packed[position + 1:line_end]) + 2
        count += 1
    return count


def test_a_metrics_scrape_sends_the_same_redis_commands_for_one_app_or_forty(own_redis, monkeypatch):
    """Issue 62, 2: a scrape read each app's listings and deliveries (37 commands with 1 app, 1,357
    with 41); the writers now keep every app's figures in a few hashes, so it reads the same number
    of commands whatever the number of apps, and its figures are the apps' own exact ones."""
    import redis.connection

    from app import create_app
    app = create_app({"REDIS_URL": own_redis.url, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0,
                      "OPERATOR_KEY": OPERATOR_KEY})
    client = app.test_client()
    sent = []
    real_send = redis.connection.AbstractConnection.send_packed_command
    scraping = threading.get_ident()

    def counted(connection, command, *args, **kwargs):
        if threading.get_ident() == scraping:  # not a background thread's (a sweep, an RQ enqueue)
            sent.append(commands_in(b"".join(command) if isinstance(command, list) else command))
        return real_send(connection, command, *args, **kwargs)
    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counted)

    def commands_of_a_scrape() -> int:
        before = len(sent)
        assert client.get("/metrics", headers=operator()).status_code == 200
        return sum(sent[before:])
    app.services.apps.create("Cafe Ronda")
    commands_of_a_scrape()  # the first scrape of a process registers what it reads
    with_one = commands_of_a_scrape()
    created = [app.services.apps.create(f"Studio {n}") for n in range(40)]
    studio = {"X-Ronda-App": created[0][1]["client"]}
    games = [client.post("/games", json={"players": 2}, headers=studio).json["game"] for _ in range(3)]
    ended = client.post(f"/games/{games[0]['id']}/seats/0", headers=studio)
    assert ended.status_code == 201, ended.json
    client.post(f"/games/{games[0]['id']}/resign", headers={**studio, "Authorization": f"Bearer {ended.json['token']}"})
    with_forty_one = commands_of_a_scrape()
    assert with_one == with_forty_one, (with_one, with_forty_one)
    text = client.get("/metrics", headers=operator()).get_data(as_text=True)
    exact = app.services.store.listings.live_count(created[0][0]["id"])
    assert exact == 2 and f'ronda_app_live_games{{app="{created[0][0]["id"]}"}} {exact}.0' in text
    assert f'ronda_app_live_games{{app="{created[1][0]["id"]}"}} 0.0' in text


def test_a_client_key_plays_and_only_the_server_key_manages_the_apps_webhooks(base):
    """Issue 53: the key in a phone binary cannot add an endpoint nor read deliveries; the server
    key can, but not from a browser (a request with an Origin)."""
    made = requests.post(f"{base}/admin/apps", json={"name": "Two keys"}, headers=operator()).json()
    client_key, server_key = made["client_key"], made["server_key"]
    assert client_key.startswith("rapp.") and server_key.startswith("rsrv.")
    assert sorted(k["kind"] for k in made["app"]["keys"]) == ["client", "server"]
    for key in (client_key, server_key):  # both play: players, games
        assert new_player(base, key)[0]["id"].startswith(made["app"]["id"])
    hook = {"url": "https://hooks.example.com/ronda", "events": ["your_turn"]}
    refused = requests.post(f"{base}/apps/me/webhooks", json=hook, headers=in_app(client_key))
    assert refused.status_code == 403 and refused.json()["code"] == "server_key_required"
    assert "client key" in refused.json()["detail"]
    for path in ("/apps/me", "/apps/me/webhooks"):
        assert requests.get(f"{base}{path}", headers=in_app(client_key)).status_code == 403
    from_a_page = requests.post(f"{base}/apps/me/webhooks", json=hook,
                                headers={**in_app(server_key), "Origin": "https://cafe.example"})
    assert from_a_page.status_code == 403 and "browser" in from_a_page.json()["detail"]
    assert requests.post(f"{base}/apps/me/webhooks", json=hook, headers=in_app(server_key)).status_code == 201
    assert requests.get(f"{base}/apps/me", headers=in_app(server_key)).json()["app"]["id"] == made["app"]["id"]


@pytest.mark.slow
def test_each_key_rotates_alone_a_replayed_creation_answers_the_same_keys_and_a_revocation_is_undone(base):
    created = [requests.post(f"{base}/admin/apps", json={"name": "Replayed"},
                             headers=operator(**{"Idempotency-Key": "make-it-once"})) for _ in range(2)]
    assert created[1].headers.get("Idempotent-Replayed") == "true"
    first, again = created[0].json(), created[1].json()
    assert again == first  # the same app, and its keys derived again (the record keeps none)
    app_id, client_key, server_key = first["app"]["id"], first["client_key"], first["server_key"]
    rotated = requests.post(f"{base}/admin/apps/{app_id}/rotate", json={"kind": "server", "grace_seconds": 0},
                            headers=operator()).json()
    assert rotated["kind"] == "server" and rotated["key"].startswith("rsrv.")
    time.sleep(2.5)  # a process remembers an app for two seconds
    assert requests.get(f"{base}/apps/me", headers=in_app(server_key)).status_code == 401
    assert requests.get(f"{base}/apps/me", headers=in_app(rotated["key"])).status_code == 200
    assert requests.get(f"{base}/games?status=open", headers=in_app(client_key)).status_code == 200  # untouched
    quotas = requests.patch(f"{base}/admin/apps/{app_id}/quotas", json={"live_games": 7}, headers=operator())
    assert quotas.status_code == 200 and quotas.json()["quotas"]["live_games"] == 7
    requests.post(f"{base}/admin/apps/{app_id}/revoke", headers=operator())
    time.sleep(2.5)
    assert requests.get(f"{base}/games?status=open", headers=in_app(client_key)).status_code == 401
    restored = requests.post(f"{base}/admin/apps/{app_id}/restore", headers=operator()).json()
    assert restored["revoked_at"] is None
    time.sleep(2.5)
    assert requests.get(f"{base}/games?status=open", headers=in_app(client_key)).status_code == 200


def test_a_key_made_before_the_two_kinds_works_as_both_until_the_apps_first_server_key(redis_url):
    from app import create_app
    app = create_app({"REDIS_URL": redis_url, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0,
                      "RATE_LIMIT_PER_TOKEN": 0})
    apps = app.services.apps
    made, _ = apps.create("Older")
    legacy = f"rapp.{made['id']}.an-old-random-key"
    doc = apps.store.load(made["id"])
    doc["keys"] = [{"hash": token_digest(legacy), "expires_at": None}]  # as an earlier release kept it
    apps.store.save(doc)
    assert apps.app_of_key(legacy) == (made["id"], "both")
    apps.rotate(made["id"], "server", 0)
    apps._forget(made["id"])
    assert apps.app_of_key(legacy) == (made["id"], "client")  # its webhooks now take the server key


@pytest.mark.parametrize("path", ["/admin/apps", "/games", "/players"])
def test_options_with_an_idempotency_key_neither_reserves_nor_replays_it(base, path):
    """Issue 62, 5 (schemathesis found it: OPTIONS with an Idempotency-Key was a 500): idempotency
    is for unsafe methods; a preflight with the key leaves it to the POST that follows."""
    key = {"Idempotency-Key": f"options-{path}-{time.time()}"}
    preflight = requests.options(f"{base}{path}", headers={**operator(), **key})
    assert preflight.status_code in (200, 204), preflight.text
    body = {"/admin/apps": {"name": "After a preflight"}, "/games": {"players": 2},
            "/players": {"name": "Amina"}}[path]
    first = requests.post(f"{base}{path}", json=body, headers={**operator(), **key})
    assert first.status_code == 201 and "Idempotent-Replayed" not in first.headers
    again = requests.post(f"{base}{path}", json=body, headers={**operator(), **key})
    assert again.headers["Idempotent-Replayed"] == "true"


def test_one_address_cannot_spend_an_apps_players_and_an_app_can_make_them_from_its_server_only(base):
    """Issue 62, 4: 291 players in 30 s from one address with a client key, no 429. Players made
    with the client key count on their address's hour (and the key's); the server's do not."""
    made = requests.post(f"{base}/admin/apps", json={"name": "Capped", "quotas": {"players_per_address_hour": 3}},
                         headers=operator()).json()
    client, server = {"X-Ronda-App": made["client_key"]}, {"X-Ronda-App": made["server_key"]}
    answers = [requests.post(f"{base}/players", json={"name": "Throwaway"}, headers=client) for _ in range(4)]
    assert [a.status_code for a in answers] == [201, 201, 201, 429]
    assert answers[-1].json()["budget"] == "players_per_address"
    assert 1 <= int(answers[-1].headers["Retry-After"]) <= 3600  # the hour's end
    assert requests.post(f"{base}/players", json={"name": "By the server"}, headers=server).status_code == 201
    changed = requests.patch(f"{base}/admin/apps/{made['app']['id']}/quotas", json={"client_creates_players": 0},
                             headers=operator())
    assert changed.status_code == 200 and changed.json()["quotas"]["client_creates_players"] == 0
    closed = requests.post(f"{base}/players", json={"name": "Client"}, headers=client)
    assert closed.status_code == 403 and closed.json()["code"] == "server_key_required"
    signed = requests.post(f"{base}/apps/me/players/sign-in", json={"external_id": "u-1", "name": "Signed"},
                           headers=server)
    assert signed.status_code == 200 and signed.json()["created"]
