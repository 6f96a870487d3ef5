"""Issue 42: what an action costs in Redis round trips, counted with MONITOR on a server of the
test's own (a script's own commands are not round trips: MONITOR marks them lua)."""

import threading
import time

import pytest
import redis

from app import create_app
from app.ops.keys import bucket_of, due_moves_key


def commands_of(url, do, whole=False) -> list[str]:
    """The commands clients sent while `do()` ran (scripts' inner commands left out): their names,
    or `whole`, each with its arguments."""
    seen, stop = [], threading.Event()

    def monitor():
        with redis.Redis.from_url(url).monitor() as feed:
            for command in feed.listen():
                if stop.is_set():
                    return
                seen.append(command)

    threading.Thread(target=monitor, daemon=True).start()
    time.sleep(0.3)
    mark = len(seen)
    do()
    time.sleep(0.3)
    stop.set()
    redis.Redis.from_url(url).ping()
    return [c["command"] if whole else c["command"].split()[0] for c in seen[mark:] if c.get("client_type") != "lua"
            and not c["command"].startswith("PING")]


def test_a_humans_action_in_a_game_with_a_bot_costs_three_round_trips(own_redis):
    """Read the game; write it with the owed bot move noted in the same script; queue the bot's job
    with RQ's one unique-enqueue script (its queue registered once a process)."""
    url = own_redis.url
    app = create_app({"REDIS_URL": url, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0, "BOT_QUEUE": "trips"})
    client = app.test_client()
    games = []
    for _ in range(2):  # the first action of a process loads scripts and registers the queue
        created = client.post("/games", json={"players": 2, "first_dealer": 1, "rules": {"preset": "simple"},
                                              "seats": [{"type": "human"}, {"type": "bot", "bot": "random"}]}).json
        token = created["tokens"][0]["token"]
        view = client.get(f"/games/{created['game']['id']}/view", headers={"Authorization": f"Bearer {token}"}).json
        games.append((created["game"]["id"], token, view))

    def act(game):
        game_id, token, view = game
        answer = client.post(f"/games/{game_id}/actions", json=view["legal_actions"][0],
                             headers={"Authorization": f"Bearer {token}", "If-Match": f'"{view["version"]}"'})
        assert answer.status_code == 200
    act(games[0])
    commands = commands_of(url, lambda: act(games[1]))
    assert commands == ["HMGET", "EVALSHA", "EVALSHA"], commands
    # The move is noted for the sweeper and its job waits in the queue.
    redis_client = redis.Redis.from_url(url)
    assert redis_client.zscore(due_moves_key(bucket_of(games[1][0])), games[1][0]) is not None
    assert f"bot-{games[1][0]}-{games[1][2]['version'] + 1}".encode() in redis_client.lrange("rq:queue:trips", 0, -1)


def test_an_action_in_a_timed_game_costs_two_round_trips_its_timer_being_the_games_note(own_redis):
    """Issue 65, 4: read the game; write it with the next turn's timer noted in the same script.
    Nothing is scheduled on the queue (RQ's scheduled-job MULTI was a third round trip): the note,
    at the timer's end, is what the workers' sweep queues the timeout from."""
    url = own_redis.url
    app = create_app({"REDIS_URL": url, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0, "BOT_QUEUE": "trips"})
    client = app.test_client()
    created = client.post("/games", json={"players": 2, "first_dealer": 1, "rules": {"preset": "simple"},
                                          "turn_timeout_seconds": 60, "seats": [{"type": "human"}] * 2}).json
    game_id, tokens = created["game"]["id"], {t["seat"]: t["token"] for t in created["tokens"]}

    def next_move():
        """The awaited seat's first legal action, ready to send (its reads made here)."""
        seat = client.get(f"/games/{game_id}").json["awaiting"][0]
        headers = {"Authorization": f"Bearer {tokens[seat]}"}
        view = client.get(f"/games/{game_id}/view", headers=headers).json
        return lambda: client.post(f"/games/{game_id}/actions", json=view["legal_actions"][0],
                                   headers={**headers, "If-Match": f'"{view["version"]}"'})
    assert next_move()().status_code == 200  # the process's scripts loaded
    move, answers = next_move(), []
    acted_at = time.time()
    assert commands_of(url, lambda: answers.append(move())) == ["HMGET", "EVALSHA"]
    assert answers[0].status_code == 200
    score = redis.Redis.from_url(url).zscore(due_moves_key(bucket_of(game_id)), game_id)
    assert score is not None and score / 1000 <= acted_at + 60  # the earliest timer: the first turn's, or this one's
    assert not redis.Redis.from_url(url).keys("rq:scheduled:*")


def test_a_players_action_costs_three_round_trips_and_their_view_one(own_redis):
    """Issue 50: a player token is checked against its player at most every CHECK_SECONDS per
    process (the check keeps the player alive; issue 63 made it 2 s, a revocation's bound), not on
    every request: an action reads the game, writes it, and posts the other player's `your_turn`; a
    view only reads the game. The tokens' clock stands still here, so no check falls due mid-count."""
    url = own_redis.url
    app = create_app({"REDIS_URL": url, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    app.services.players.tokens.clock = lambda: 0.0
    client = app.test_client()
    amina, omar = (client.post("/players", json={"name": name}).json["token"] for name in ("Amina", "Omar"))
    created = client.post("/games", json={"players": 2, "first_dealer": 1, "rules": {"preset": "simple"},
                                          "turn_timeout_seconds": None,
                                          "seats": [{"type": "human", "mine": True}, {"type": "open"}]},
                          headers={"Authorization": f"Bearer {amina}"}).json
    game_id = created["game"]["id"]
    claimed = client.post(f"/games/{game_id}/seats/1", json={}, headers={"Authorization": f"Bearer {omar}"})
    assert claimed.status_code == 201
    tokens = {0: amina, 1: omar}

    def act():
        seat = client.get(f"/games/{game_id}").json["awaiting"][0]
        view = client.get(f"/games/{game_id}/view", headers={"Authorization": f"Bearer {tokens[seat]}"}).json
        answer = client.post(f"/games/{game_id}/actions", json=view["legal_actions"][0],
                             headers={"Authorization": f"Bearer {tokens[seat]}", "If-Match": f'"{view["version"]}"'})
        assert answer.status_code == 200
        return seat

    act(), act()  # each player's token checked once (and the process's scripts loaded)
    seat = client.get(f"/games/{game_id}").json["awaiting"][0]
    headers = {"Authorization": f"Bearer {tokens[seat]}"}
    assert commands_of(url, lambda: client.get(f"/games/{game_id}/view", headers=headers)) == ["HMGET"]
    view = client.get(f"/games/{game_id}/view", headers=headers).json

    def action():
        answer = client.post(f"/games/{game_id}/actions", json=view["legal_actions"][0],
                             headers={**headers, "If-Match": f'"{view["version"]}"'})
        assert answer.status_code == 200
    assert commands_of(url, action) == ["HMGET", "EVALSHA", "EVALSHA"]


def test_a_checked_token_is_checked_again_after_a_day_or_half_its_accounts_idle_time():
    from app.accounts.tokens import AccountTokens
    from app.errors import InvalidToken
    from app.games.seats import token_digest
    now = [0.0]
    tokens = AccountTokens(b"secret", "player", "rply.", idle_ttl=365 * 24 * 3600, clock=lambda: now[0])
    token = tokens.derive("p1", "salt")
    loads = []

    def load(account_id):
        loads.append(account_id)
        return {"token_hash": token_digest(token)}
    assert [tokens.owner(token, load) for _ in range(3)] == ["p1"] * 3 and loads == ["p1"]
    now[0] = 24 * 3600 + 1
    assert tokens.owner(token, load) == "p1" and loads == ["p1", "p1"]
    false = tokens.derive("p1", "other salt")
    for _ in range(2):  # a false token is never remembered
        try:
            tokens.owner(false, load)
            raise AssertionError("a false token was taken")
        except InvalidToken:
            pass
    assert loads == ["p1"] * 4
    assert AccountTokens(b"secret", "bot", "rbot.", idle_ttl=3600).recheck_seconds == 1800


@pytest.mark.slow
def test_a_listing_of_finished_games_reads_their_lines_not_their_packed_records(own_redis):
    """Issue 50: a finished game is packed with the line a listing shows of it; listing finished
    games (and a player's) reads those lines in one pipeline and never the compressed record."""
    import random

    from http_helpers import bearer, create, play_to_the_end
    url = own_redis.url
    app = create_app({"REDIS_URL": url, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    client = app.test_client()
    player = client.post("/players", json={"name": "Amina"}).json["token"]
    finished = []
    for _ in range(3):
        game, tokens = create(client, preset="simple", token=player,
                              seats=[{"type": "human", "mine": True}, {"type": "human"}])
        tokens[0] = player
        finished.append(play_to_the_end(client, game, tokens, random.Random(1))[0])
    listings = {}

    def list_them():
        listings["all"] = client.get("/games?status=finished&page_size=50").json
        listings["mine"] = client.get("/players/me/games?status=finished", headers=bearer(player)).json
    commands = commands_of(url, list_them, whole=True)
    listed = {game["id"]: game for game in listings["all"]}
    for game in finished:
        assert listed[game["id"]]["scores"] == game["scores"] and listed[game["id"]]["version"] == game["version"]
    assert {game["id"] for game in listings["mine"]} == {game["id"] for game in finished}
    assert all(game["seat"] == 0 and game["your_turn"] is False for game in listings["mine"])
    reads = [command for command in commands if command.startswith("HMGET")]
    assert len(reads) == 6 and all(read.endswith("state version listing doc") for read in reads), reads
    assert not [command for command in commands if "packed" in command], commands
