"""Games played by threads while a Redis Cluster master is killed: which acknowledged moves were
lost, how long the games waited, and whether they went on. Used by tests/test_cluster.py and
bench/failover.py."""

import json
import threading
import time
from collections import Counter

import redis

from http_helpers import act, bearer


def play_through_a_failover(app, cluster, games=12, plays_before=8, seconds_after=30.0):
    """Play `games` two-human games on `app` (its store on `cluster`), kill the master that owns
    the first game's slot once every game has made `plays_before` plays (mid-game, however fast or
    slow the machine: a game to 21 takes well over a hundred), and play on until every game ends or
    `seconds_after` pass. Answers the measurements (see the keys)."""
    client = app.test_client()
    created = [client.post("/games", json={"players": 2, "rules": {"preset": "simple", "target": 21},
                                           "seats": [{"type": "human"}, {"type": "human"}]}).json
               for _ in range(games)]
    acknowledged, latencies, refused = [], [], []

    def play(game):
        player = app.test_client()
        tokens = {t["seat"]: t["token"] for t in game["tokens"]}
        while time.monotonic() < deadline[0]:
            spectator = player.get(f"/games/{game['game']['id']}")
            if spectator.status_code != 200:
                refused.append(spectator.status_code)
                time.sleep(0.05)
                continue
            if spectator.json["status"] == "finished":
                return
            seat = spectator.json["awaiting"][0]
            view = player.get(f"/games/{game['game']['id']}/view", headers=bearer(tokens[seat]))
            if view.status_code != 200 or not view.json["legal_actions"]:  # a 503, or the turn moved on
                refused.append(view.status_code)
                continue
            started = time.monotonic()
            rv = act(player, game["game"]["id"], tokens[seat], view.json["legal_actions"][0], view.json["version"])
            if rv.status_code == 200:
                latencies.append(time.monotonic() - started)
                acknowledged.extend((game["game"]["id"], event) for event in rv.json["events"])
            else:
                refused.append(rv.status_code)

    deadline = [float("inf")]
    threads = [threading.Thread(target=play, args=(game,)) for game in created]
    for thread in threads:
        thread.start()
    def mid_game():
        played = Counter(game_id for game_id, event in list(acknowledged) if event["type"] == "play")
        return all(played[game["game"]["id"]] >= plays_before for game in created)

    started = time.monotonic()
    while not mid_game() and time.monotonic() < started + 60:
        time.sleep(0.02)
    store = app.services.store.redis
    master = store.get_node_from_key("{{game:{}}}:state".format(created[0]["game"]["id"])).port
    acknowledged_before = len(acknowledged)
    master_id = redis.Redis(port=master).execute_command("CLUSTER", "MYID").decode()
    cluster.kill(master)
    killed = time.monotonic()
    deadline[0] = killed + seconds_after
    survivor = next(port for port in cluster.nodes if port != master)
    wait_for_failover(redis.Redis(port=survivor), master_id)
    failed_over = time.monotonic() - killed
    cluster.restart(master)  # as an orchestrator would: it rejoins as its successor's replica
    for thread in threads:
        thread.join()
    statuses = [client.get(f"/games/{g['game']['id']}").json["status"] for g in created]
    finished = statuses.count("finished")
    return {"lost": _lost(client, acknowledged), "acknowledged": len(acknowledged),
            "acknowledged_before_kill": acknowledged_before, "finished": finished, "games": games,
            "refused": len(refused), "seconds_to_failover": failed_over,
            "seconds_to_finish": time.monotonic() - killed, "latencies": latencies,
            "statuses": statuses}


def _lost(client, acknowledged) -> int:
    """Acknowledged events that the game's log no longer holds as they were acknowledged (compared
    by what every viewer sees of them: a seat was answered with its own hand, the log is read
    as a spectator)."""
    logs = {}
    for game_id, _ in acknowledged:
        if game_id not in logs:
            events = client.get(f"/games/{game_id}/events?limit=2000").json
            logs[game_id] = {event["id"]: _public(event) for event in events}
    return sum(logs[game_id].get(event["id"]) != _public(event) for game_id, event in acknowledged)


def _public(event) -> str:
    return json.dumps({key: event.get(key) for key in ("id", "type", "seat", "card", "camp", "points", "reason")})


def wait_for_failover(survivor, lost_master_id, seconds=30):
    """Until `survivor` sees the lost master failed, its replica promoted and the cluster whole."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        nodes = [line.split() for line in survivor.execute_command("CLUSTER", "NODES").decode().splitlines()]
        failed = any(node[0] == lost_master_id and "fail" in node[2].split(",") for node in nodes)
        replica_left = any(node[3] == lost_master_id for node in nodes)
        if failed and not replica_left and survivor.cluster("info")["cluster_state"] == "ok":
            return
        time.sleep(0.05)
    raise AssertionError("no failover")
