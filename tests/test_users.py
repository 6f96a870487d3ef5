"""A studio's users are the service's players (issue 63): sign-in by the app's server, tokens a
person manages, the server acting for a player, rename, export and erasure. Checked over HTTP
against two API processes under gunicorn (as the Dockerfile runs them) on one real Redis, inside
an app, beside a second app."""

import json
import os
import threading
import uuid
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
import requests

from app.games.moves import MOVES_TO_COUNT

from test_production_server import free_port, start_gunicorn

OPERATOR_KEY = "users-operator-key"


@pytest.fixture(scope="module")
def apis(redis_url):
    """Two API processes sharing one secret: what one process revokes, the other refuses."""
    env = {**os.environ, "REDIS_URL": redis_url, "RONDA_OPERATOR_KEY": OPERATOR_KEY,
           "RONDA_SECRET_KEY": "users-test-secret", "RONDA_RATE_LIMIT_PER_ADDRESS": "0",
           "RONDA_RATE_LIMIT_PER_TOKEN": "0", "RONDA_WEBHOOK_PRIVATE_NETWORKS": "1"}
    ports = [free_port(), free_port()]
    processes = [start_gunicorn(env, port) for port in ports]
    yield [f"http://127.0.0.1:{port}" for port in ports]
    for process in processes:
        process.terminate()
        process.wait(timeout=10)


class App:
    """One app of the deployment: its keys, and requests as its server or its clients make them."""

    def __init__(self, base: str):
        made = requests.post(f"{base}/admin/apps", json={"name": f"Studio {uuid.uuid4().hex[:6]}"},
                             headers={"Authorization": f"Bearer {OPERATOR_KEY}"})
        assert made.status_code == 201, made.text
        self.base, self.id = base, made.json()["app"]["id"]
        self.client_key, self.server_key = made.json()["client_key"], made.json()["server_key"]

    def server(self, method, path, base=None, for_player=None, **kwargs):
        headers = {"X-Ronda-App": self.server_key, **kwargs.pop("headers", {})}
        if for_player:
            headers["Ronda-On-Behalf-Of"] = for_player
        return requests.request(method, f"{base or self.base}{path}", headers=headers, timeout=30, **kwargs)

    def client(self, method, path, token=None, base=None, **kwargs):
        headers = {"X-Ronda-App": self.client_key, **kwargs.pop("headers", {})}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return requests.request(method, f"{base or self.base}{path}", headers=headers, timeout=30, **kwargs)

    def sign_in(self, external_id, name="Amina", device="phone", base=None, **body) -> dict:
        rv = self.server("POST", "/apps/me/players/sign-in", base=base,
                         json={"external_id": external_id, "name": name, "device": device, **body})
        assert rv.status_code == 200, rv.text
        return rv.json()


@pytest.fixture(scope="module")
def studio(apis):
    return App(apis[0])


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def game_between(studio, first_token, second_token, **body) -> str:
    """A game of two players, each in a seat of their own (the first player creates it)."""
    made = studio.client("POST", "/games", first_token, json={
        "players": 2, "rules": {"preset": "simple"}, "seats": [{"type": "human", "mine": True}, {"type": "open"}],
        **body})
    assert made.status_code == 201, made.text
    game_id = made.json()["game"]["id"]
    assert studio.client("POST", f"/games/{game_id}/seats/1", second_token, json={}).status_code == 201
    return game_id


def move(studio, game_id, token) -> bool:
    """The token's seat plays its first legal action if it is its turn (True if it did)."""
    view = studio.client("GET", f"/games/{game_id}/view", token).json()
    if view["status"] != "active" or view["seat"] not in view["awaiting"]:
        return False
    rv = studio.client("POST", f"/games/{game_id}/actions", token, json=view["legal_actions"][0],
                       headers={"If-Match": f'"{view["version"]}"'})
    return rv.status_code == 200


def play_moves(studio, game_id, tokens, count):
    made = 0
    while made < count:
        made += sum(move(studio, game_id, token) for token in tokens)


# ----- 1. sign-in ------------------------------------------------------------------------------------
def test_a_sign_in_makes_the_player_once_and_finds_them_on_every_device_after(studio, apis):
    external = unique("user")
    first = studio.sign_in(external, name="Amina", device="Amina's phone")
    again = studio.sign_in(external, name="Someone else", device="Amina's tablet", base=apis[1])
    assert (first["created"], again["created"]) == (True, False)
    assert first["player"]["id"] == again["player"]["id"] and again["player"]["name"] == "Amina"
    assert first["token"] != again["token"]
    for token in (first["token"], again["token"]):
        assert studio.client("GET", "/players/me", token).json()["id"] == first["player"]["id"]
    public = studio.client("GET", f"/players/{first['player']['id']}").text
    assert external not in public and "external_id" not in public


def test_only_the_apps_server_signs_in_and_never_from_a_browser(studio):
    body = {"external_id": unique("user"), "name": "Amina"}
    by_client = studio.client("POST", "/apps/me/players/sign-in", json=body)
    from_page = studio.server("POST", "/apps/me/players/sign-in", json=body, headers={"Origin": "https://x.test"})
    public = requests.post(f"{studio.base}/apps/me/players/sign-in", json=body)
    assert by_client.status_code == 403 and by_client.json()["code"] == "server_key_required"
    assert from_page.status_code == 403 and public.status_code == 401
    for external_id in ("", "has space", "x" * 129, "tab\there"):
        refused = studio.server("POST", "/apps/me/players/sign-in", json={"external_id": external_id, "name": "A"})
        assert refused.status_code == 422 and "external_id" in refused.text, external_id


def test_two_first_sign_ins_of_one_id_on_two_processes_make_one_player(studio, apis):
    before = studio.server("GET", "/apps/me").json()["app"]["players"]
    external = unique("racer")
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda i: studio.sign_in(external, name=f"Racer {i}", base=apis[i % 2]), range(16)))
    assert len({a["player"]["id"] for a in answers}) == 1
    assert sum(a["created"] for a in answers) == 1
    assert len({a["token"] for a in answers}) == 16
    assert studio.server("GET", "/apps/me").json()["app"]["players"] == before + 1
    listed = studio.client("GET", "/players/me/tokens", answers[0]["token"]).json()
    assert len(listed) == 16 and sum(t["current"] for t in listed) == 1


# ----- 2. tokens ---------------------------------------------------------------------------------------
def refused_within(call, status=401, attempts=200):
    """`call()` answers `status` before long (a revocation reaches every process within seconds)."""
    for _ in range(attempts):
        answer = call()
        if answer.status_code == status:
            return answer
        threading.Event().wait(0.05)
    raise AssertionError(f"still {answer.status_code}: {answer.text}")


@pytest.mark.slow
def test_a_device_is_signed_out_alone_and_then_every_other_on_every_process(studio, apis):
    external = unique("user")
    phone, tablet, laptop = (studio.sign_in(external, device=d) for d in ("phone", "tablet", "laptop"))
    for token in (phone["token"], tablet["token"], laptop["token"]):  # each remembered by the second process
        assert studio.client("GET", "/players/me", token, base=apis[1]).status_code == 200
    listed = studio.client("GET", "/players/me/tokens", phone["token"]).json()
    assert [t["label"] for t in listed] == ["phone", "tablet", "laptop"]
    assert [t["current"] for t in listed] == [True, False, False]
    assert all(t["last_used_at"] for t in listed) and "token" not in json.dumps(listed).replace('"tokens', "")
    revoked = studio.client("DELETE", f"/players/me/tokens/{tablet['token_info']['id']}", phone["token"])
    assert revoked.status_code == 204
    refused_within(lambda: studio.client("GET", "/players/me", tablet["token"], base=apis[1]))
    assert studio.client("GET", "/players/me", laptop["token"], base=apis[1]).status_code == 200
    assert studio.client("DELETE", "/players/me/tokens/nothing", phone["token"]).json()["code"] == "token_not_found"
    assert studio.client("DELETE", "/players/me/tokens", phone["token"]).status_code == 204
    refused_within(lambda: studio.client("GET", "/players/me", laptop["token"], base=apis[1]))
    assert studio.client("GET", "/players/me", phone["token"], base=apis[1]).status_code == 200
    assert [t["label"] for t in studio.client("GET", "/players/me/tokens", phone["token"]).json()] == ["phone"]


@pytest.mark.slow
def test_create_players_first_token_keeps_working_until_revoked_and_a_token_can_expire(studio, apis):
    made = studio.client("POST", "/players", json={"name": "Omar"}).json()
    first = made["token"]
    assert first.count(".") == 2  # the old form: rply.<id>.<mac>
    assert [t["id"] for t in studio.client("GET", "/players/me/tokens", first).json()] == ["first"]
    assert studio.client("DELETE", "/players/me/tokens/first", first).status_code == 204
    refused_within(lambda: studio.client("GET", "/players/me", first, base=apis[1]))
    brief = studio.sign_in(unique("user"), ttl_seconds=1)
    assert brief["token_info"]["expires_at"] is not None
    refused_within(lambda: studio.client("GET", "/players/me", brief["token"]), attempts=400)


# ----- 3. acting for a player ----------------------------------------------------------------------------
def test_the_apps_server_acts_for_its_player_without_their_token(studio):
    amina, omar = studio.sign_in(unique("user"), name="Amina"), studio.sign_in(unique("user"), name="Omar")
    amina_id = amina["player"]["id"]
    game_id = game_between(studio, amina["token"], omar["token"])
    games = studio.server("GET", "/players/me/games?status=active", for_player=amina_id)
    assert [g["id"] for g in games.json()] == [game_id]
    assert studio.server("PATCH", "/players/me", for_player=amina_id, json={"name": "Amina B."}).json()["name"] == \
        "Amina B."
    ticket = studio.server("POST", "/matchmaking/tickets", for_player=amina_id, json={
        "rules": {"preset": "classic"}, "players": 4, "max_wait_seconds": 600})
    assert ticket.status_code == 202, ticket.text
    cancelled = studio.server("DELETE", f"/matchmaking/tickets/{ticket.json()['id']}", for_player=amina_id)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    resigned = studio.server("POST", f"/games/{game_id}/resign", for_player=amina_id)
    assert resigned.status_code == 200 and resigned.json()["status"] == "finished"
    notices = studio.server("GET", "/players/me/notices?after=0", for_player=amina_id).json()["notices"]
    assert "seat_taken" in {n["type"] for n in notices}


def test_acting_for_a_player_takes_the_server_key_its_own_app_and_no_browser(studio, apis):
    player = studio.sign_in(unique("user"))["player"]["id"]
    other = App(apis[1])
    by_client = studio.client("GET", "/players/me", headers={"Ronda-On-Behalf-Of": player})
    from_page = studio.server("GET", "/players/me", for_player=player, headers={"Origin": "https://x.test"})
    other_app = other.server("GET", "/players/me", for_player=player)
    both = studio.server("GET", "/players/me", for_player=player, headers={"Authorization": "Bearer x"})
    assert by_client.json()["code"] == "server_key_required" and from_page.json()["code"] == "server_key_required"
    assert other_app.status_code == 404 and both.status_code == 422
    assert studio.server("GET", "/players/me", for_player=f"{studio.id}~nobody").status_code == 404


def test_a_suspended_player_is_refused_their_live_games_resigned_until_restored(studio):
    amina, omar = studio.sign_in(unique("user")), studio.sign_in(unique("user"), name="Omar")
    game_id = game_between(studio, amina["token"], omar["token"])
    play_moves(studio, game_id, [amina["token"], omar["token"]], 4)
    suspended = studio.server("POST", f"/apps/me/players/{amina['player']['id']}/suspend")
    assert suspended.status_code == 200 and suspended.json()["suspended"] is True
    refused = refused_within(lambda: studio.client("GET", "/players/me", amina["token"]), status=403)
    assert refused.json()["code"] == "player_suspended"
    over = studio.client("GET", f"/games/{game_id}").json()
    assert over["status"] == "finished" and over["outcome"]["reason"] == "resigned"
    assert studio.server("POST", f"/apps/me/players/{amina['player']['id']}/restore").json()["suspended"] is False
    assert studio.client("GET", "/players/me", amina["token"]).status_code == 200


# ----- 4. rename -------------------------------------------------------------------------------------------
def test_a_rename_names_new_seats_and_leaves_the_seats_already_taken(studio):
    amina, omar = studio.sign_in(unique("user"), name="Amina"), studio.sign_in(unique("user"), name="Omar")
    before = game_between(studio, amina["token"], omar["token"])
    assert studio.client("PATCH", "/players/me", amina["token"], json={"name": " "}).status_code == 422
    assert studio.client("PATCH", "/players/me", amina["token"], json={"name": "أمينة"}).json()["name"] == "أمينة"
    after = game_between(studio, amina["token"], omar["token"])
    assert studio.client("GET", f"/games/{before}").json()["seats"][0]["name"] == "Amina"
    assert studio.client("GET", f"/games/{after}").json()["seats"][0]["name"] == "أمينة"


# ----- resigning ---------------------------------------------------------------------------------------------
def test_resigning_before_a_first_move_aborts_and_after_one_loses(studio):
    amina, omar = studio.sign_in(unique("user")), studio.sign_in(unique("user"), name="Omar")
    early = game_between(studio, amina["token"], omar["token"])
    first = studio.client("GET", f"/games/{early}").json()["awaiting"][0]
    idle = (amina, omar)[1 - first]  # the seat that has not played
    ended = studio.client("POST", f"/games/{early}/resign", idle["token"]).json()
    assert ended["outcome"] == {"reason": "aborted", "seat": 1 - first} and ended["winner"] is None
    later = game_between(studio, amina["token"], omar["token"])
    play_moves(studio, later, [amina["token"], omar["token"]], 2 * MOVES_TO_COUNT)  # a resignation counts
    lost = studio.client("POST", f"/games/{later}/resign", amina["token"]).json()
    assert lost["outcome"] == {"reason": "resigned", "seat": 0} and lost["winner"] == lost["camps"][1]
    again = studio.client("POST", f"/games/{later}/resign", amina["token"])
    assert again.status_code == 409
    assert studio.client("POST", f"/games/{later}/resign", "rply.x.y").status_code == 401


# ----- 5. export -----------------------------------------------------------------------------------------------
def test_the_export_holds_everything_about_the_player_and_no_secret(studio):
    external = unique("user")
    amina, omar = studio.sign_in(external, name="Amina"), studio.sign_in(unique("user"), name="Omar")
    game_id = game_between(studio, amina["token"], omar["token"])
    for answer in (studio.client("GET", "/players/me/export", amina["token"]),
                   studio.server("GET", "/players/me/export", for_player=amina["player"]["id"])):
        assert answer.status_code == 200, answer.text
        export = answer.json()
        assert export["profile"]["external_id"] == external and export["profile"]["name"] == "Amina"
        assert [g["id"] for g in export["games"]] == [game_id] and export["games"][0]["seat"] == 0
        assert [t["label"] for t in export["tokens"]] == ["phone"]
        assert {"seat_taken", "your_turn"} & {n["type"] for n in export["notices"]}
        assert amina["token"] not in answer.text and amina["token"].rsplit(".", 1)[1] not in answer.text


# ----- 6. erasure -------------------------------------------------------------------------------------------------
def values_of(client: redis.Redis, key: bytes) -> list[bytes]:
    """Every byte string a key holds, of whatever type; a zlib value (a packed game) unpacked too."""
    kind = client.type(key).decode()
    found: list[bytes] = []
    if kind == "string":
        found = [client.get(key) or b""]
    elif kind == "hash":
        found = [part for pair in client.hgetall(key).items() for part in pair]
    elif kind == "list":
        found = client.lrange(key, 0, -1)
    elif kind == "set":
        found = list(client.smembers(key))
    elif kind == "zset":
        found = client.zrange(key, 0, -1)
    elif kind == "stream":
        found = [part for _, fields in client.xrange(key) for pair in fields.items() for part in pair]
    unpacked = []
    for value in found:
        try:
            unpacked.append(zlib.decompress(value))
        except zlib.error:
            pass
    return [key, *found, *unpacked]


def traces(redis_url: str, needles: list[str]) -> list[str]:
    """The keys that hold any needle, as text or as JSON escapes it (a SCAN over the whole store)."""
    forms = {form for needle in needles for form in (needle.encode(), json.dumps(needle)[1:-1].encode())}
    client = redis.Redis.from_url(redis_url)
    return [key.decode() for key in client.scan_iter(count=1000)
            if any(form in value for value in values_of(client, key) for form in forms)]


@pytest.mark.slow
def test_an_erased_player_leaves_no_trace_of_their_name_or_external_id(studio, redis_url):
    external, name, old_name = unique("ext"), unique("Zanzibar"), unique("Quux")
    webhook = studio.server("POST", "/apps/me/webhooks", json={"url": "http://127.0.0.1:9/hook",
                                                               "events": ["seat_taken", "game_over"]})
    assert webhook.status_code == 201, webhook.text
    erased = studio.sign_in(external, name=old_name)
    omar, karim = studio.sign_in(unique("user"), name="Omar"), studio.sign_in(unique("user"), name="Karim")
    token, erased_id = erased["token"], erased["player"]["id"]
    finished = game_between(studio, token, omar["token"], rated=True, turn_timeout_seconds=600)
    play_moves(studio, finished, [token, omar["token"]], 4)
    assert studio.client("POST", f"/games/{finished}/resign", omar["token"]).status_code == 200
    omar_rating = studio.client("GET", f"/players/{omar['player']['id']}").json()["ratings"]
    assert studio.client("PATCH", "/players/me", token, json={"name": name}).status_code == 200
    live = game_between(studio, karim["token"], token)
    play_moves(studio, live, [token, karim["token"]], 2)
    left = game_between(studio, token, omar["token"])
    assert studio.client("POST", f"/games/{left}/seats/0/leave", token, json={"bot": "random"}).status_code == 200
    open_game = studio.client("POST", "/games", token, json={
        "players": 2, "seats": [{"type": "human", "mine": True}, {"type": "open"}]}).json()["game"]["id"]
    tournament = studio.client("POST", "/tournaments", json={"format": "round_robin", "starts_in_seconds": 3600,
                                                              "rules": {"preset": "simple"}}).json()
    assert studio.client("POST", f"/tournaments/{tournament['id']}/entrants", token).status_code in (200, 201)
    ticket = studio.client("POST", "/matchmaking/tickets", token, json={
        "rules": {"preset": "classic"}, "players": 4, "max_wait_seconds": 600})
    assert ticket.status_code == 202, ticket.text
    assert traces(redis_url, [name, old_name, external]), "the scenario wrote no name to erase"

    assert studio.client("DELETE", "/players/me", token).status_code == 204

    assert traces(redis_url, [name, old_name, external]) == []
    assert studio.client("GET", "/players/me", token).status_code == 401
    assert studio.client("GET", f"/players/{erased_id}").status_code == 404
    assert studio.server("DELETE", "/players/me", for_player=erased_id).status_code == 204  # again: the same
    for game_id in (finished, live, left, open_game):
        game = studio.client("GET", f"/games/{game_id}").json()
        assert game["status"] == "finished" or game_id == left, game_id
        assert erased_id not in json.dumps(game["seats"])
    assert "Deleted player" in json.dumps(studio.client("GET", f"/games/{finished}").json()["seats"])
    replay = studio.client("GET", f"/games/{finished}/replay")
    assert replay.status_code == 200 and replay.json(), replay.text
    assert studio.client("GET", f"/players/{omar['player']['id']}").json()["ratings"] == omar_rating
    assert studio.client("GET", f"/tournaments/{tournament['id']}").json()["entrants"] == []
    assert studio.client("GET", f"/matchmaking/tickets/{ticket.json()['id']}", token).status_code == 401
    again = studio.sign_in(external, name="New")
    assert again["created"] is True and again["player"]["id"] != erased_id


@pytest.mark.slow
def test_an_erasure_racing_the_players_moves_ends_with_the_game_resigned_and_anonymous(studio, apis, redis_url):
    name = unique("Racer")
    racer, omar = studio.sign_in(unique("user"), name=name), studio.sign_in(unique("user"), name="Omar")
    game_id = game_between(studio, racer["token"], omar["token"])
    play_moves(studio, game_id, [racer["token"], omar["token"]], 2 * MOVES_TO_COUNT)
    stop = threading.Event()

    def keep_moving():
        while not stop.is_set():
            for token, base in ((racer["token"], apis[1]), (omar["token"], apis[0])):
                view = studio.client("GET", f"/games/{game_id}/view", token, base=base)
                if view.status_code != 200 or view.json()["status"] != "active":
                    return
                if view.json()["seat"] in view.json()["awaiting"]:
                    studio.client("POST", f"/games/{game_id}/actions", token, base=base,
                                  json=view.json()["legal_actions"][0],
                                  headers={"If-Match": f'"{view.json()["version"]}"'})

    mover = threading.Thread(target=keep_moving)
    mover.start()
    try:
        assert studio.client("DELETE", "/players/me", racer["token"]).status_code == 204
    finally:
        stop.set()
        mover.join(timeout=30)
    game = studio.client("GET", f"/games/{game_id}").json()
    assert game["status"] == "finished" and game["outcome"]["reason"] == "resigned"
    assert game["seats"][0]["name"] == "Deleted player" and game["seats"][0]["player"] is None
    assert traces(redis_url, [name]) == []
    refused_within(lambda: studio.client("GET", "/players/me", racer["token"], base=apis[1]))


def test_sign_in_tokens_and_erasure_are_in_the_spec(apis):
    spec = requests.get(f"{apis[0]}/openapi.json").json()
    operations = {op["operationId"]: op for path in spec["paths"].values() for op in path.values()
                  if isinstance(op, dict) and "operationId" in op}
    for name in ("signInPlayer", "listMyTokens", "revokeMyToken", "signOutOtherDevices", "renameMe", "deleteMe",
                 "exportMe", "suspendPlayer", "restorePlayer", "resignGame"):
        assert name in operations, name
    assert {"appServerKey": [], "onBehalfOf": []} in operations["listMyGames"]["security"]
    assert {"appServerKey": [], "onBehalfOf": []} not in operations["signInPlayer"]["security"]



def test_a_studios_user_is_signed_in_plays_and_is_erased_on_one_redis_and_on_a_cluster(store_config):
    """Every key of a player in the player's slot, the external ids in the app's: the same story
    on a Redis Cluster as on one Redis."""
    from app import create_app
    client = create_app({**store_config, "OPERATOR_KEY": OPERATOR_KEY, "RATE_LIMIT_PER_ADDRESS": 0,
                         "RATE_LIMIT_PER_TOKEN": 0}).test_client()
    made = client.post("/admin/apps", json={"name": "Cluster studio"},
                       headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json
    server, app_key = {"X-Ronda-App": made["server_key"]}, {"X-Ronda-App": made["client_key"]}
    name = unique("Clustered")
    signed = [client.post("/apps/me/players/sign-in", headers=server,
                          json={"external_id": unique("user"), "name": who}).json for who in (name, "Omar")]
    tokens = [{**app_key, "Authorization": f"Bearer {s['token']}"} for s in signed]
    game = client.post("/games", headers=tokens[0], json={
        "players": 2, "seats": [{"type": "human", "mine": True}, {"type": "open"}]}).json["game"]
    assert client.post(f"/games/{game['id']}/seats/1", headers=tokens[1], json={}).status_code == 201
    assert client.post(f"/games/{game['id']}/resign", headers=tokens[1]).status_code == 200
    assert client.delete("/players/me", headers=tokens[0]).status_code == 204
    seats = client.get(f"/games/{game['id']}", headers=app_key).json["seats"]
    assert seats[0]["name"] == "Deleted player" and seats[0]["player"] is None and seats[1]["name"] == "Omar"
    assert name not in client.get(f"/games/{game['id']}/events", headers=app_key).get_data(as_text=True)
    assert client.get("/players/me", headers=tokens[0]).status_code == 401
    assert client.get("/players/me", headers=tokens[1]).status_code == 200


# ----- issue 61: a rematch between players, asked with seat tokens --------------------------------------
def test_a_rematch_asked_with_seat_tokens_keeps_each_seats_player_and_name(studio):
    amina, omar = studio.sign_in(unique("user"), name="Amina"), studio.sign_in(unique("user"), name="Omar")
    made = studio.client("POST", "/games", amina["token"], json={
        "players": 2, "rules": {"preset": "simple"}, "seats": [{"type": "human", "mine": True}, {"type": "open"}]})
    game_id, seat_tokens = made.json()["game"]["id"], {0: made.json()["tokens"][0]["token"]}
    seat_tokens[1] = studio.client("POST", f"/games/{game_id}/seats/1", omar["token"], json={}).json()["token"]
    play_moves(studio, game_id, [amina["token"], omar["token"]], 4)
    assert studio.client("POST", f"/games/{game_id}/resign", omar["token"]).status_code == 200
    asked = studio.client("POST", f"/games/{game_id}/rematch", seat_tokens[0])  # as the web client asks
    assert asked.status_code == 201, asked.text
    next_id = asked.json()["game"]["id"]
    offer = next(n for n in studio.client("GET", "/players/me/notices?after=0", omar["token"]).json()["notices"]
                 if n["type"] == "rematch_offered")
    assert offer["asked_by"] == {"seat": 0, "name": "Amina"}
    waiting = studio.client("GET", "/players/me/games?status=open", omar["token"]).json()
    assert [g["id"] for g in waiting] == [next_id] and waiting[0]["seat"] == 1  # on every device of his
    assert studio.client("POST", f"/games/{game_id}/rematch", seat_tokens[1]).status_code == 201
    seats = studio.client("GET", f"/games/{next_id}").json()["seats"]
    assert [(s["name"], s["player"]) for s in seats] == [("Amina", amina["player"]["id"]),
                                                         ("Omar", omar["player"]["id"])]


def test_a_declined_rematch_tells_every_player_and_ends_the_waiting_table(studio):
    amina, omar = studio.sign_in(unique("user"), name="Amina"), studio.sign_in(unique("user"), name="Omar")
    game_id = game_between(studio, amina["token"], omar["token"])
    play_moves(studio, game_id, [amina["token"], omar["token"]], 4)
    assert studio.client("POST", f"/games/{game_id}/resign", omar["token"]).status_code == 200
    next_id = studio.client("POST", f"/games/{game_id}/rematch", amina["token"]).json()["game"]["id"]
    assert studio.client("DELETE", f"/games/{game_id}/rematch", omar["token"]).status_code == 204
    told = [n for n in studio.client("GET", "/players/me/notices?after=0", amina["token"]).json()["notices"]
            if n["type"] == "rematch_declined"]
    assert len(told) == 1 and told[0]["declined_by"] == {"seat": 1, "name": "Omar"}
    table = studio.client("GET", f"/games/{next_id}").json()  # what the asker's waiting table reads
    assert table["status"] == "finished" and table["outcome"] == {"reason": "declined", "seat": 1}
    assert studio.client("GET", f"/games/{game_id}/rematch").status_code == 404
    assert studio.client("POST", f"/games/{game_id}/rematch", omar["token"]).json()["code"] == "rematch_declined"


def quick_play_game(app: App, first_token, second_token, **ticket) -> str:
    body = {"rules": {"preset": "simple"}, "players": 2, "turn_seconds": 30, "max_wait_seconds": 60, **ticket}
    assert app.client("POST", "/matchmaking/tickets", first_token, json=body).status_code == 202
    matched = app.client("POST", "/matchmaking/tickets", second_token, json=body).json()
    assert matched["status"] == "matched", matched
    return matched["game_id"]


def set_quotas(app: App, **quotas):
    changed = requests.patch(f"{app.base}/admin/apps/{app.id}/quotas", json=quotas,
                             headers={"Authorization": f"Bearer {OPERATOR_KEY}"})
    assert changed.status_code == 200, changed.text


def test_one_live_timed_game_at_a_time_unless_the_app_allows_more(apis):
    app = App(apis[0])
    amina, omar = app.sign_in(unique("user"), name="Amina"), app.sign_in(unique("user"), name="Omar")
    game_id = quick_play_game(app, amina["token"], omar["token"])
    again = app.client("POST", "/matchmaking/tickets", amina["token"], json={
        "rules": {"preset": "classic"}, "players": 2, "turn_seconds": 30})
    assert again.status_code == 409 and again.json()["code"] == "live_game_in_play"
    assert again.json()["game_id"] == game_id
    correspondence = app.client("POST", "/matchmaking/tickets", amina["token"], json={
        "rules": {"preset": "classic"}, "players": 2, "turn_seconds": 86400, "max_wait_seconds": 600})
    assert correspondence.status_code == 202  # a day a turn is no live game: it waits beside the live one
    assert app.client("DELETE", f"/matchmaking/tickets/{correspondence.json()['id']}", amina["token"]).ok
    set_quotas(app, live_games_per_player=2)
    allowed = app.client("POST", "/matchmaking/tickets", amina["token"], json={
        "rules": {"preset": "classic"}, "players": 2, "turn_seconds": 30, "max_wait_seconds": 600})
    assert allowed.status_code == 202, allowed.text
    assert app.client("DELETE", f"/matchmaking/tickets/{allowed.json()['id']}", amina["token"]).status_code == 200


def test_an_app_can_ask_finished_games_before_rated_play(apis):
    app = App(apis[0])
    set_quotas(app, rated_min_games=1)
    amina, omar = app.sign_in(unique("user"), name="Amina"), app.sign_in(unique("user"), name="Omar")
    rated = {"rules": {"preset": "simple"}, "players": 2, "rated": True, "turn_seconds": 30}
    locked = app.client("POST", "/matchmaking/tickets", amina["token"], json=rated)
    assert locked.status_code == 403 and locked.json()["code"] == "rated_play_locked"
    made = app.client("POST", "/games", amina["token"], json={"players": 2, "rated": True, "rules": {
        "preset": "simple"}, "seats": [{"type": "human", "mine": True}, {"type": "open"}]})
    assert made.status_code == 403 and made.json()["code"] == "rated_play_locked"
    casual = game_between(app, amina["token"], omar["token"])  # a casual game first, played to its end
    play_moves(app, casual, [amina["token"], omar["token"]], 2 * MOVES_TO_COUNT)
    assert app.client("POST", f"/games/{casual}/resign", omar["token"]).status_code == 200
    refused_within(lambda: app.client("POST", "/matchmaking/tickets", amina["token"], json=rated), status=202)


def test_a_move_whose_note_a_failover_lost_is_noted_again_from_the_game_itself(store_config):
    """Issue 61, 9: on a Redis Cluster the note that a game owes a move lives in another slot than
    the game; a master lost before it replicated takes the note with it (here it is gone as such a
    loss leaves it), and the game would owe a move nobody looks for. The sweeper reads the active
    games themselves, a page a pass, and notes the overdue move again; the move is then made."""
    import time as clock

    from app import create_app
    from app.ops.keys import bucket_of, due_moves_key
    app = create_app({**store_config, "BOT_DISPATCH": "rq", "BOT_QUEUE": f"nobody-{uuid.uuid4().hex[:8]}",
                      "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    services = app.services
    game = app.test_client().post("/games", json={"players": 2, "turn_timeout_seconds": 1, "seats": [
        {"type": "human", "name": "Amina"}, {"type": "human", "name": "Omar"}]}).json["game"]
    note = due_moves_key(bucket_of(game["id"]))
    services.store.redis.zrem(note, game["id"])
    clock.sleep(1.2)
    noted = {game_id for game_id, _ in services.store.schedule.moves_due_before(clock.time(), 100_000)}
    assert game["id"] not in noted  # no note: the sweeper of before never finds it
    passes = 16 * (1 + len(services.apps.store.ids())) + 1  # every bucket of every app, once
    for _ in range(passes):
        services.sweeper.renote_from_listings(0.1)
        if services.store.redis.zscore(note, game["id"]) is not None:
            break
    assert services.store.redis.zscore(note, game["id"]) is not None
    assert game["id"] in {game_id for game_id, _, _ in services.sweeper.due_moves(0.1, limit=100_000)}
    services.moves.expire_turn(game["id"], game["version"])  # what the queued timer job does
    assert app.test_client().get(f"/games/{game['id']}").json["outcome"]["reason"] == "aborted"


def test_the_others_hear_at_once_that_a_seat_was_left_to_a_bot(studio):
    amina, omar = studio.sign_in(unique("user"), name="Amina"), studio.sign_in(unique("user"), name="Omar")
    game_id = game_between(studio, amina["token"], omar["token"])
    assert studio.client("POST", f"/games/{game_id}/seats/1/leave", omar["token"], json={"bot": "random"}).ok
    told = [n for n in studio.client("GET", "/players/me/notices?after=0", amina["token"]).json()["notices"]
            if n["type"] == "seat_left"]
    assert [(n["game_id"], n["left_seat"], n["bot"]) for n in told] == [(game_id, 1, "random")]


def test_a_key_rotate_answers_works_at_once_on_every_process(apis):
    """Issue 62, 3: a process that remembered the app refused the new key for up to 2 s (23 of 48
    requests after 8 rotations); a key it does not know is now read again before a 401."""
    app = App(apis[0])
    for _ in range(4):
        for base in apis:  # each process remembers the app with its current keys
            assert app.client("GET", "/players/me/tokens", base=base).status_code == 401  # the key is fine
        rotated = requests.post(f"{apis[0]}/admin/apps/{app.id}/rotate", json={"kind": "client", "grace_seconds": 0},
                                headers={"Authorization": f"Bearer {OPERATOR_KEY}"})
        assert rotated.status_code == 200, rotated.text
        app.client_key = rotated.json()["key"]
        for base in reversed(apis):
            answer = app.client("POST", "/players", base=base, json={"name": "At once"})
            assert answer.status_code == 201, answer.text
