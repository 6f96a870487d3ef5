"""Players (issue 40): a token that outlives a seat, their games, their notices, rated games and
the leaderboards of every pool, checked over HTTP against a real Redis."""

import json
import math
import random
import threading
import time
import uuid

import pytest
import requests

from app.accounts import ratings
from app.engine import game_from_dict
from app.games.moves import MOVES_TO_COUNT
from http_helpers import act, bearer, create, play_to_the_end, seat_view


def new_player(client, name="Amina", **headers):
    rv = client.post("/players", json={"name": name}, headers=headers)
    assert rv.status_code == 201, rv.json
    return rv.json["player"], rv.json["token"]


def test_a_player_token_is_shown_once_kept_as_a_hash_and_replayed_by_idempotency_key(app, client):
    key = {"Idempotency-Key": str(uuid.uuid4())}
    player, token = new_player(client, **key)
    replay = client.post("/players", json={"name": "Amina"}, headers=key)
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json["token"] == token and replay.json["player"]["id"] == player["id"]
    assert token.startswith("rply.") and player["entrant"] == f"player:{player['id']}"
    raw = app.services.players.store.redis.get(f"{{player:{player['id']}}}:doc").decode()
    assert token not in raw
    public = client.get(f"/players/{player['id']}").json
    assert public["name"] == "Amina" and (public["games"], public["wins"], public["ratings"]) == (0, 0, [])
    assert "token" not in json.dumps(public).replace("token_", "")
    assert client.get("/players/me", headers=bearer(token)).json["id"] == player["id"]
    assert client.get("/players/me", headers=bearer(token + "x")).status_code == 401
    assert client.get("/players/nobody").json["code"] == "player_not_found"


def test_a_seat_created_with_a_player_token_is_played_from_another_device_with_that_token(client):
    player, token = new_player(client)
    seats = [{"type": "human", "mine": True}, {"type": "human", "name": "Omar"}]
    game, seat_tokens = create(client, seats=seats, token=token, seed="devices")
    assert game["seats"][0]["player"] == player["id"] and game["seats"][0]["name"] == "Amina"
    assert game["seats"][1]["player"] is None
    # The seat token still works, and the player token reads the same seat's view.
    by_player, by_seat = seat_view(client, game["id"], token), seat_view(client, game["id"], seat_tokens[0])
    assert by_player["seat"] == by_seat["seat"] == 0 and by_player["hand"] == by_seat["hand"]
    listed = client.get("/players/me/games?status=active", headers=bearer(token))
    assert [g["id"] for g in listed.json] == [game["id"]]
    assert json.loads(listed.headers["X-Pagination"])["total"] == 1
    mover = by_player["awaiting"][0]
    assert listed.json[0]["your_turn"] == (mover == 0)
    mover_token = token if mover == 0 else seat_tokens[1]
    view = seat_view(client, game["id"], mover_token)
    assert act(client, game["id"], mover_token, view["legal_actions"][0], view["version"]).status_code == 200
    after = client.get("/players/me/games?status=active", headers=bearer(token)).json[0]
    assert after["your_turn"] == (0 in seat_view(client, game["id"], token)["awaiting"])
    # A player token acts only for the player's own seats: elsewhere it is 403 (valid, no seat
    # there), never 401 (clients sign their user out on 401).
    _stranger_player, stranger = new_player(client, "Youssef")
    elsewhere = client.get(f"/games/{game['id']}/view", headers=bearer(stranger))
    assert elsewhere.status_code == 403 and elsewhere.json["code"] == "no_seat"
    assert client.get("/players/me/games", headers=bearer(stranger)).json == []


def test_a_claim_with_a_player_token_is_theirs_and_one_player_takes_one_seat(client):
    _owner, owner_token = new_player(client)
    guest, guest_token = new_player(client, "Youssef")
    game, _ = create(client, seats=[{"type": "human", "mine": True}, {"type": "open"}], token=owner_token)
    assert (
        client.post(f"/games/{game['id']}/seats/1", json={}, headers=bearer(owner_token)).json["code"] == "seat_taken"
    )
    claimed = client.post(f"/games/{game['id']}/seats/1", json={}, headers=bearer(guest_token))
    assert claimed.status_code == 201 and claimed.json["game"]["seats"][1]["player"] == guest["id"]
    assert claimed.json["game"]["seats"][1]["name"] == "Youssef"
    assert seat_view(client, game["id"], guest_token)["seat"] == 1


@pytest.mark.parametrize("body, field", [
    ({"seed": "mine"}, "rated"),
    ({"rules": {"preset": "classic", "target": 11}}, "rated"),
    ({"seats": [{"type": "human", "mine": True}, {"type": "human"}]}, "rated"),
    ({"seats": [{"type": "human", "mine": True}, {"type": "bot", "bot": "greedy"}]}, "rated"),  # a person v a bot
    ({"seats": [{"type": "bot", "bot": "greedy", "mine": True}, {"type": "open"}], "rated": False}, "seats"),
])
def test_a_game_that_cannot_be_rated_fairly_is_refused_whole(client, body, field):
    _, token = new_player(client)
    request = {"players": 2, "rated": True, "rules": {"preset": "classic"},
               "seats": [{"type": "human", "mine": True}, {"type": "open"}], **body}
    before = client.get("/players/me/games?status=open", headers=bearer(token)).json
    rv = client.post("/games", json=request, headers=bearer(token))
    assert rv.status_code == 422 and rv.json["field"] == field, rv.json
    assert client.get("/players/me/games?status=open", headers=bearer(token)).json == before


def test_a_rated_game_seat_is_claimed_with_a_player_token_only(client):
    _, token = new_player(client)
    rv = client.post("/games", json={"players": 2, "rated": True, "rules": {"preset": "classic"},
                                     "seats": [{"type": "human", "mine": True}, {"type": "open"}]},
                     headers=bearer(token))
    assert rv.status_code == 201 and rv.json["game"]["rated"] is True
    game_id = rv.json["game"]["id"]
    assert client.post(f"/games/{game_id}/seats/1", json={"name": "anon"}).status_code == 401
    assert client.post("/games", json={"players": 2, "seats": [{"type": "human", "mine": True}, {"type": "open"}]}
                       ).status_code == 401  # `mine` without a player token


def test_the_notices_long_poll_tells_a_player_of_a_seat_taken_and_of_their_turn(client):
    _, token = new_player(client)
    _, guest = new_player(client, "Youssef")
    cursor = client.get("/players/me/notices?wait_seconds=0", headers=bearer(token)).json["cursor"]
    game, _ = create(client, seats=[{"type": "human", "mine": True}, {"type": "open"}], token=token, seed="n1")
    client.post(f"/games/{game['id']}/seats/1", json={}, headers=bearer(guest))
    answer = client.get(f"/players/me/notices?after={cursor}&wait_seconds=5", headers=bearer(token)).json
    types = [n["type"] for n in answer["notices"]]
    assert types[0] == "seat_taken" and answer["notices"][0]["game_id"] == game["id"]
    view = seat_view(client, game["id"], token)
    assert ("your_turn" in types) == (0 in view["awaiting"])
    later = client.get(f"/players/me/notices?after={answer['cursor']}&wait_seconds=0", headers=bearer(token)).json
    assert later["notices"] == [] and later["cursor"] == answer["cursor"]


@pytest.mark.slow
def test_one_stream_carries_the_notices_of_every_game_of_a_player(live_server):
    token = requests.post(f"{live_server}/players", json={"name": "Amina"}).json()["token"]
    games = []
    received = []
    with requests.get(f"{live_server}/players/me/stream", headers=bearer(token), stream=True, timeout=20) as stream:
        lines = stream.iter_lines(decode_unicode=True)
        assert next(lines) == ": connected"

        def read():
            for line in lines:
                if line.startswith("data: "):
                    received.append(json.loads(line[6:]))
                if len({n["game_id"] for n in received if n["type"] == "game_over"}) == 2:
                    return
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        for _ in range(2):  # two games against bots, played out with the player token alone
            rv = requests.post(f"{live_server}/games", headers=bearer(token), json={
                "players": 2, "rules": {"preset": "simple"},
                "seats": [{"type": "human", "mine": True}, {"type": "bot", "bot": "random"}]})
            games.append(rv.json()["game"]["id"])
        for game_id in games:
            play_out(live_server, game_id, token)
        reader.join(20)
    assert {n["game_id"] for n in received if n["type"] == "game_over"} == set(games)
    assert {n["game_id"] for n in received if n["type"] == "your_turn"} == set(games)
    assert all(n["seat"] == 0 for n in received)


def play_out(base, game_id, token, seed=0):
    """Play a seat with random legal actions, over HTTP with the given token, until the game ends."""
    rng = random.Random(seed)
    while True:
        view = requests.get(f"{base}/games/{game_id}/view", headers=bearer(token)).json()
        if view["status"] == "finished":
            return view
        if view["seat"] not in view["awaiting"]:
            requests.get(f"{base}/games/{game_id}/view", headers=bearer(token),
                         params={"after_version": view["version"], "wait_seconds": 5})
            continue
        requests.post(f"{base}/games/{game_id}/actions", json=rng.choice(view["legal_actions"]),
                      headers={**bearer(token), "If-Match": f'"{view["version"]}"'})


def rated_game(base, first_token, second_token, loser=1, preset="simple", http=requests):
    """A rated game between two players, the first in seat 0: each seat makes MOVES_TO_COUNT moves
    of its own (a resignation before that would abort it), then seat `loser` resigns. `http`: a session (an
    app's, with its key) or requests itself."""
    tokens = [first_token, second_token]
    game = http.post(f"{base}/games", headers=bearer(first_token), json={
        "players": 2, "rated": True, "rules": {"preset": preset},
        "seats": [{"type": "human", "mine": True}, {"type": "open"}]}).json()["game"]
    assert http.post(f"{base}/games/{game['id']}/seats/1", json={}, headers=bearer(second_token)).status_code == 201
    moved = [0, 0]
    while min(moved) < MOVES_TO_COUNT:
        for seat, token in enumerate(tokens):
            view = http.get(f"{base}/games/{game['id']}/view", headers=bearer(token)).json()
            if seat in view["awaiting"] and moved[seat] < MOVES_TO_COUNT:
                played = http.post(f"{base}/games/{game['id']}/actions", json=view["legal_actions"][0],
                                   headers={**bearer(token), "If-Match": f'"{view["version"]}"'})
                moved[seat] += played.status_code == 200
    resigned = http.post(f"{base}/games/{game['id']}/resign", headers=bearer(tokens[loser]))
    assert resigned.status_code == 200 and resigned.json()["outcome"]["reason"] == "resigned", resigned.text
    return game["id"]


def wait_finished(base, game_ids, seconds=120, http=requests):
    deadline = time.monotonic() + seconds
    for game_id in game_ids:
        while http.get(f"{base}/games/{game_id}").json()["status"] != "finished":
            assert time.monotonic() < deadline, f"game {game_id} did not finish"
            time.sleep(0.1)


def test_rated_games_rank_the_player_who_wins_them_first(live_server):
    """Ratings follow results: after 12 rated games that the same player won (the other resigning
    after a move each, whoever sat first), the winner leads the ladder and the loser trails it."""
    levels = ["loses", "wins"]
    players = {}
    for level in levels:
        created = requests.post(f"{live_server}/players", json={"name": f"{level}"}).json()
        players[level] = (created["player"]["id"], created["token"])
    games = []
    for turn in range(12):
        first, second = levels if turn % 2 else reversed(levels)
        games.append(rated_game(live_server, players[first][1], players[second][1],
                                loser=0 if first == "loses" else 1))
    wait_finished(live_server, games)
    pool = {}
    for level, (player_id, _) in players.items():
        deadline = time.monotonic() + 10
        while True:  # the settlement follows the last write
            rated = requests.get(f"{live_server}/players/{player_id}").json()["ratings"]
            if (rated and rated[0]["games"] == 12) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert [r["pool"] for r in rated] == ["simple-2"] and rated[0]["games"] == 12, rated
        pool[level] = rated[0]["rating"]
    assert pool["loses"] < ratings.INITIAL_RATING < pool["wins"], pool
    board = requests.get(f"{live_server}/leaderboards/simple-2", params={"page_size": 100}).json()
    ours = [row["entrant"] for row in board if row["entrant"] in {f"player:{p}" for p, _ in players.values()}]
    assert ours == [f"player:{players[level][0]}" for level in reversed(levels)]
    # Two players who only ever met each other keep equal deviations: what one gains the other loses.
    assert sum(pool.values()) == pytest.approx(2 * ratings.INITIAL_RATING)


def test_a_settlement_applied_again_changes_nothing(live_server, redis_url):
    from app import create_app
    first = requests.post(f"{live_server}/players", json={"name": "a"}).json()
    second = requests.post(f"{live_server}/players", json={"name": "b"}).json()
    game_id = rated_game(live_server, first["token"], second["token"])
    wait_finished(live_server, [game_id])
    time.sleep(0.5)
    before = [requests.get(f"{live_server}/players/{p['player']['id']}").json() for p in (first, second)]
    services = create_app({"REDIS_URL": redis_url}).services
    _, doc = services.store.load(game_id)
    services.settlement.settle(doc, game_from_dict(doc["engine"], record_events=False))
    services.store.schedule.note_settlement(game_id)
    services.settlement.settle_noted(-1)
    after = [requests.get(f"{live_server}/players/{p['player']['id']}").json() for p in (first, second)]
    assert after == before and before[0]["games"] == 1 and before[0]["ratings"][0]["games"] == 1


def all_notices(client, token):
    """Every notice a player's inbox keeps, read page by page."""
    found, cursor = [], "0"
    while page := client.get(f"/players/me/notices?after={cursor}&wait_seconds=0", headers=bearer(token)).json:
        if not page["notices"]:
            return found
        found += page["notices"]
        cursor = page["cursor"]
    return found


@pytest.mark.slow
def test_a_rematch_is_one_next_game_whoever_asks_with_the_next_dealer(client):
    amina, amina_token = new_player(client)
    _omar, omar_token = new_player(client, "Omar")
    game, tokens = create(client, seats=[{"type": "human", "mine": True}, {"type": "open"}], token=amina_token)
    client.post(f"/games/{game['id']}/seats/1", json={}, headers=bearer(omar_token))
    tokens = {0: amina_token, 1: omar_token}
    assert client.post(f"/games/{game['id']}/rematch", headers=bearer(amina_token)).json["code"] == "game_not_over"
    play_to_the_end(client, game, tokens, random.Random(2))
    first_dealer = client.get(f"/games/{game['id']}/events?limit=1").json[0]["dealer"]
    asked = client.post(f"/games/{game['id']}/rematch", headers=bearer(amina_token))
    assert asked.status_code == 201 and asked.json["seat"] == 0
    next_game = asked.json["game"]
    assert next_game["status"] == "open" and next_game["seats"][0]["player"] == amina["id"]
    assert next_game["seats"][1]["type"] == "open" and next_game["rules"] == game["rules"]
    offers = [(n["type"], n["game_id"], n["seat"], n["previous_game_id"]) for n in all_notices(client, omar_token)
              if n["type"] == "rematch_offered"]
    assert offers == [("rematch_offered", next_game["id"], 1, game["id"])]
    assert client.get(f"/games/{game['id']}/rematch").json["id"] == next_game["id"]
    # The seat is kept: a stranger cannot take it; Omar accepts by asking too.
    _, stranger = new_player(client, "Stranger")
    assert client.post(f"/games/{next_game['id']}/seats/1", json={}, headers=bearer(stranger)).status_code == 409
    again = client.post(f"/games/{game['id']}/rematch", headers=bearer(amina_token))
    assert again.json["game"]["id"] == next_game["id"] and again.json["token"] == asked.json["token"]
    accepted = client.post(f"/games/{game['id']}/rematch", headers=bearer(omar_token))
    assert accepted.status_code == 201 and accepted.json["game"]["id"] == next_game["id"]
    assert accepted.json["seat"] == 1 and accepted.json["game"]["status"] == "active"
    started = client.get(f"/games/{next_game['id']}/events?limit=1").json[0]
    assert started["dealer"] == (first_dealer + 1) % 2
    assert client.delete(f"/games/{game['id']}/rematch", headers=bearer(omar_token)).json["code"] == "rematch_started"


@pytest.mark.slow
def test_an_anonymous_seat_takes_its_rematch_seat_with_its_old_seat_token(client):
    game, tokens = create(client, seats=[{"type": "human", "name": "Nadia"}, {"type": "human", "name": "Karim"}])
    play_to_the_end(client, game, tokens, random.Random(4))
    asked = client.post(f"/games/{game['id']}/rematch", headers=bearer(tokens[1])).json
    assert asked["seat"] == 1 and asked["game"]["seats"][1]["name"] == "Karim" and asked["token"] != tokens[1]
    next_id = asked["game"]["id"]
    assert client.post(f"/games/{next_id}/seats/0", json={}).json["code"] == "seat_taken"  # kept for Nadia
    claimed = client.post(f"/games/{next_id}/seats/0", json={}, headers=bearer(tokens[0]))
    assert claimed.status_code == 201 and claimed.json["game"]["status"] == "active"


def test_a_declined_rematch_is_called_off(client):
    game, tokens = create(client, seats=[{"type": "human", "name": "A"}, {"type": "human", "name": "B"}])
    play_to_the_end(client, game, tokens, random.Random(5))
    next_id = client.post(f"/games/{game['id']}/rematch", headers=bearer(tokens[0])).json["game"]["id"]
    assert client.delete(f"/games/{game['id']}/rematch", headers=bearer(tokens[1])).status_code == 204
    called_off = client.get(f"/games/{next_id}").json  # the asker's table says so
    assert called_off["status"] == "finished" and called_off["outcome"] == {"reason": "declined", "seat": 1}
    assert client.get(f"/games/{game['id']}/rematch").json["code"] == "game_not_found"


def test_bots_accept_a_rematch_at_once(live_server):
    token = requests.post(f"{live_server}/players", json={"name": "Solo"}).json()["token"]
    game_id = requests.post(f"{live_server}/games", headers=bearer(token), json={
        "players": 2, "rules": {"preset": "simple"},
        "seats": [{"type": "human", "mine": True}, {"type": "bot", "bot": "random"}]}).json()["game"]["id"]
    play_out(live_server, game_id, token)
    rematch = requests.post(f"{live_server}/games/{game_id}/rematch", headers=bearer(token)).json()
    assert rematch["game"]["status"] == "active" and rematch["game"]["seats"][1]["bot"] == "random"


def test_a_player_token_is_rate_limited_like_a_seat_token(redis_url):
    from app import create_app
    client = create_app({"REDIS_URL": redis_url, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0,
                         "RATE_LIMIT_PER_TOKEN": 3}).test_client()
    token = client.post("/players", json={"name": "Busy"}).json["token"]
    answers = [client.get("/players/me", headers=bearer(token)) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert answers[0].headers["X-RateLimit-Limit"] == "3" and answers[-1].json["code"] == "rate_limited"


def test_the_player_stream_resumes_after_last_event_id(live_server):
    token = requests.post(f"{live_server}/players", json={"name": "Resumer"}).json()["token"]
    requests.post(f"{live_server}/games", headers=bearer(token), json={
        "players": 2, "rules": {"preset": "simple"}, "first_dealer": 1,
        "seats": [{"type": "human", "mine": True}, {"type": "open"}]})
    other = requests.post(f"{live_server}/players", json={"name": "Joiner"}).json()["token"]
    game_id = requests.get(f"{live_server}/players/me/games?status=open", headers=bearer(token)).json()[0]["id"]
    requests.post(f"{live_server}/games/{game_id}/seats/1", json={}, headers=bearer(other))
    notices = requests.get(f"{live_server}/players/me/notices?after=0", headers=bearer(token)).json()["notices"]
    assert [n["type"] for n in notices] == ["seat_taken", "your_turn"]
    with requests.get(f"{live_server}/players/me/stream", headers={**bearer(token), "Last-Event-ID": notices[0]["id"]},
                      stream=True, timeout=10) as stream:
        lines = stream.iter_lines(decode_unicode=True)
        assert next(lines) == ": connected"
        first = [next(lines) for _ in range(3)]
        assert f"id: {notices[1]['id']}" in first and "event: your_turn" in first


@pytest.mark.slow
def test_a_settlement_lost_with_the_store_is_made_by_a_worker_sweeper(redis_url):
    """The rating's write fails after the game's last write stood (Redis dropped it): the note made
    before the write brings a real worker's sweeper to settle the game, once."""
    import uuid as uuid_

    from app import create_app
    import redis
    from faults import start_worker, stop
    queue = f"settle-{uuid_.uuid4().hex[:8]}"
    app = create_app({"REDIS_URL": redis_url, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0,
                      "RATE_LIMIT_PER_TOKEN": 0, "BOT_QUEUE": queue})
    client = app.test_client()
    (a, a_token), (b, b_token) = new_player(client, "a"), new_player(client, "b")
    created = client.post("/games", headers=bearer(a_token), json={
        "players": 2, "rated": True, "rules": {"preset": "simple"},
        "seats": [{"type": "human", "mine": True}, {"type": "open"}]}).json["game"]
    client.post(f"/games/{created['id']}/seats/1", json={}, headers=bearer(b_token))

    def lost(*args, **kwargs):
        raise redis.exceptions.ConnectionError("dropped")
    app.services.ladders.rate = lost  # the effect's rating write is lost; its note stands
    play_to_the_end(client, created, {0: a_token, 1: b_token}, random.Random(9))
    assert client.get(f"/players/{a['id']}").json["ratings"] == []
    worker = start_worker(redis_url, queue, stall_seconds=1)
    try:
        deadline = time.monotonic() + 30
        while not (rated := client.get(f"/players/{a['id']}").json["ratings"]):
            assert time.monotonic() < deadline, "the sweeper did not settle the game"
            time.sleep(0.2)
        time.sleep(3)  # further sweeps change nothing
        assert client.get(f"/players/{a['id']}").json["ratings"] == rated and rated[0]["games"] == 1
        assert client.get(f"/players/{b['id']}").json["ratings"][0]["games"] == 1
    finally:
        stop(worker)


def test_a_rated_game_moves_ratings_by_weng_lin_plackett_luce_as_computed_by_hand():
    # Two players at 1500 ± 350 (beta 175, tau 3.5 added first): c = sqrt(2 (350² + 3.5² + 175²)),
    # and each moves by (350² + 3.5²) / (2c), the winner up, the loser down (Weng & Lin 2011, alg. 4).
    variance = 350.0 ** 2 + 3.5 ** 2
    c = math.sqrt(2 * (variance + 175.0 ** 2))
    step = variance / (2 * c)
    shrink = math.sqrt(variance * (1 - (math.sqrt(variance) / c) * variance / c ** 2 * 0.25))
    (winner,), (loser,) = ratings.rate_camps([([(1500.0, 350.0)], True), ([(1500.0, 350.0)], False)])
    assert winner == pytest.approx((1500 + step, shrink), abs=1e-6)
    assert loser == pytest.approx((1500 - step, shrink), abs=1e-6)
    # An upset moves more than the expected result; partners in a camp move together.
    (upset,), _ = ratings.rate_camps([([(1400.0, 100.0)], True), ([(1600.0, 100.0)], False)])
    (expected,), _ = ratings.rate_camps([([(1600.0, 100.0)], True), ([(1400.0, 100.0)], False)])
    assert upset[0] - 1400 > expected[0] - 1600 > 0
    winners, losers = ratings.rate_camps([([(1500.0, 350.0)] * 2, True), ([(1500.0, 350.0)] * 2, False)])
    assert winners[0] == winners[1] and losers[0] == losers[1] and winners[0][0] - 1500 == pytest.approx(
        1500 - losers[0][0])
    # Provisional by deviation, not by a count: a new entrant is, one with a narrow deviation is not.
    assert ratings.provisional(350) and not ratings.provisional(200)
    # An Elo record (no deviation) keeps its rating and gets the deviation its games leave.
    assert ratings.migrated_deviation(0) == 350 and ratings.migrated_deviation(40) < ratings.migrated_deviation(10)
