"""Issue 42: what an action costs in Redis round trips, counted with MONITOR on a server of the
test's own (a script's own commands are not round trips: MONITOR marks them lua)."""

import threading
import time

import redis

from app import create_app


def commands_of(url, do) -> list[str]:
    """The commands clients sent while `do()` ran (scripts' inner commands left out)."""
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
    return [c["command"].split()[0] for c in seen[mark:] if c.get("client_type") != "lua"
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
    assert any(redis_client.zscore(f"games:due_moves:{bucket}", games[1][0]) for bucket in range(16))
    assert f"bot-{games[1][0]}-{games[1][2]['version'] + 1}".encode() in redis_client.lrange("rq:queue:trips", 0, -1)
