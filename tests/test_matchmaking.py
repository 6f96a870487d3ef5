"""Quick play (issue 40): tickets meet by rules, player count and rating; a cancel racing a match
has one outcome; bot fill and expiry are the sweep's, run by a real worker process; the pairing
holds on a Redis Cluster too."""

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from app import create_app
from app.matchmaking.service import SWEEP_LIMIT
from faults import start_worker, stop
from http_helpers import bearer


@pytest.fixture(scope="module")
def mm_app(redis_url):
    return create_app({"REDIS_URL": redis_url, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0,
                       "RATE_LIMIT_PER_TOKEN": 0, "BOT_QUEUE": f"mm-{uuid.uuid4().hex[:8]}"})


def player(client, name="p"):
    created = client.post("/players", json={"name": name}).json
    return created["player"]["id"], created["token"]


def ticket(client, token, **body):
    body = {"rules": "simple", "players": 2, **body}
    return client.post("/matchmaking/tickets", json={**body, "rules": {"preset": body["rules"]}},
                       headers=bearer(token))


def test_two_tickets_of_the_same_pool_meet_in_one_game_with_a_seat_each(mm_app):
    client = mm_app.test_client()
    (_, a_token), (_, b_token) = player(client, "Amina"), player(client, "Omar")
    first = ticket(client, a_token, rules="runda")
    assert first.status_code == 202 and first.json["status"] == "waiting" and first.json["pool"] == "runda-2"
    assert first.headers["Location"].endswith(first.json["id"])
    other_rules = ticket(client, b_token, rules="classic")
    assert other_rules.json["status"] == "waiting"  # another pool: no meeting
    assert client.delete(f"/matchmaking/tickets/{other_rules.json['id']}", headers=bearer(b_token)).status_code == 200
    second = ticket(client, b_token, rules="runda")
    assert second.status_code == 202 and second.json["status"] == "matched"
    waited = client.get(f"/matchmaking/tickets/{first.json['id']}?wait_seconds=5", headers=bearer(a_token)).json
    assert waited["status"] == "matched" and waited["game_id"] == second.json["game_id"]
    assert {waited["seat"], second.json["seat"]} == {0, 1}
    game_id = waited["game_id"]
    for token, seat in ((a_token, waited["seat"]), (b_token, second.json["seat"])):
        view = client.get(f"/games/{game_id}/view", headers=bearer(token)).json
        assert view["seat"] == seat and view["status"] == "active" and view["seats"][seat]["type"] == "human"
    notices = client.get("/players/me/notices?after=0&wait_seconds=0", headers=bearer(a_token)).json["notices"]
    assert next(n for n in notices if n["type"] == "matched")["game_id"] == game_id
    listed = client.get("/players/me/games?status=active", headers=bearer(b_token)).json
    assert [g["id"] for g in listed] == [game_id]
    # Someone else's ticket is not there for them.
    assert client.get(f"/matchmaking/tickets/{first.json['id']}", headers=bearer(b_token)).status_code == 404


def test_one_live_ticket_a_player_and_pool(mm_app):
    client = mm_app.test_client()
    _, token = player(client)
    first = ticket(client, token, rules="traditional", players=4)
    again = ticket(client, token, rules="traditional", players=4, rated=True)
    assert again.status_code == 409 and again.json["code"] == "ticket_exists"
    assert again.json["ticket_id"] == first.json["id"]
    cancelled = client.delete(f"/matchmaking/tickets/{first.json['id']}", headers=bearer(token))
    assert cancelled.status_code == 200 and cancelled.json["status"] == "cancelled"
    twice = client.delete(f"/matchmaking/tickets/{first.json['id']}", headers=bearer(token))
    assert twice.status_code == 409 and twice.json["status_now"] == "cancelled"
    last = ticket(client, token, rules="traditional", players=4).json
    assert last["status"] == "waiting"
    client.delete(f"/matchmaking/tickets/{last['id']}", headers=bearer(token))


QUICK = {"rules": {"preset": "classic"}, "rated": False, "turn_seconds": 30, "max_wait_seconds": 60}


def seed_rating(app, player_id, pool, rating):
    """Give a player a rating in a pool, as rated games would."""
    app.services.ladders.store.put(pool, f"player:{player_id}", rating)


@pytest.mark.slow
def test_ratings_far_apart_meet_only_once_their_windows_have_widened(mm_app):
    client = mm_app.test_client()
    (a, _), (b, _) = player(client), player(client)
    seed_rating(mm_app, a, "classic-3", 1500)  # a pool of its own: classic with 3 players is never queued
    seed_rating(mm_app, b, "classic-3", 1700)
    matchmaker = mm_app.services.matchmaker
    # Through the service (the API queues only 2 and 4 players): the same code.
    first = matchmaker.submit(a, QUICK | {"players": 3, "rated": True})
    assert first["rating"] == 1500 and first["window"] == pytest.approx(50, abs=1)
    second = matchmaker.submit(b, QUICK | {"players": 3, "rated": True})
    assert second["status"] == "waiting"  # 200 apart, reaching 50
    matchmaker.sweep()
    assert matchmaker.ticket(first["id"], a)["status"] == "waiting"
    (c, _) = player(client)
    seed_rating(mm_app, c, "classic-3", 1600)
    matchmaker.submit(c, QUICK | {"players": 3, "rated": True})
    deadline = time.monotonic() + 15
    while matchmaker.ticket(first["id"], a)["status"] == "waiting":  # 1500..1700: reached after 6 s
        assert time.monotonic() < deadline
        matchmaker.sweep()
        time.sleep(0.5)
    matched = [matchmaker.ticket(t["id"], p) for t, p in ((first, a), (second, b))]
    assert matched[0]["game_id"] == matched[1]["game_id"] and matched[0]["window"] >= 200


@pytest.mark.slow
def test_four_tickets_make_balanced_teams(mm_app):
    client = mm_app.test_client()
    ratings = {1800: None, 1400: None, 1650: None, 1550: None}
    for rating in ratings:
        ratings[rating] = player(client, str(rating))
        seed_rating(mm_app, ratings[rating][0], "classic-4", rating)
    matchmaker = mm_app.services.matchmaker
    tickets = {}
    for rating, (player_id, _) in ratings.items():
        tickets[rating] = matchmaker.submit(player_id, QUICK | {"players": 4})
    deadline = time.monotonic() + 20
    while matchmaker.ticket(tickets[1800]["id"], ratings[1800][0])["status"] == "waiting":
        assert time.monotonic() < deadline
        matchmaker.sweep()
        time.sleep(0.5)
    seats = {rating: matchmaker.ticket(tickets[rating]["id"], ratings[rating][0])["seat"] for rating in ratings}
    assert len({matchmaker.ticket(tickets[r]["id"], ratings[r][0])["game_id"] for r in ratings}) == 1
    # Partners sit across (seats 0 and 2, 1 and 3): the best with the weakest.
    assert seats[1800] % 2 == seats[1400] % 2 and seats[1650] % 2 == seats[1550] % 2 != seats[1800] % 2


def test_a_cancel_racing_a_match_has_exactly_one_outcome(mm_app):
    client = mm_app.test_client()
    outcomes = []
    for _ in range(20):
        (_, a_token), (_, b_token) = player(client), player(client)
        waiting = ticket(client, a_token, rules="classic").json
        barrier = threading.Barrier(2)

        def cancel(barrier=barrier, waiting=waiting, a_token=a_token):
            barrier.wait()
            return mm_app.test_client().delete(f"/matchmaking/tickets/{waiting['id']}", headers=bearer(a_token))

        def join(barrier=barrier, b_token=b_token):
            barrier.wait()
            return ticket(mm_app.test_client(), b_token, rules="classic")
        with ThreadPoolExecutor(2) as pool:
            cancelling, joining = pool.submit(cancel), pool.submit(join)
            cancelled, joined = cancelling.result(timeout=30), joining.result(timeout=30)
        final = client.get(f"/matchmaking/tickets/{waiting['id']}", headers=bearer(a_token)).json
        if cancelled.status_code == 200:
            assert final["status"] == "cancelled" and final["game_id"] is None
            assert joined.json["status"] == "waiting"  # b met nobody: a had left
            client.delete(f"/matchmaking/tickets/{joined.json['id']}", headers=bearer(b_token))
        else:
            assert cancelled.status_code == 409 and cancelled.json["status_now"] == "matched"
            assert final["game_id"] == joined.json["game_id"]
            game = client.get(f"/games/{final['game_id']}").json
            assert [s["type"] for s in game["seats"]] == ["human", "human"]
        outcomes.append(cancelled.status_code)
    assert set(outcomes) <= {200, 409}


@pytest.mark.slow
def test_a_worker_gives_a_ticket_its_bot_fill_or_expires_it(mm_app, redis_url):
    client = mm_app.test_client()
    worker = start_worker(redis_url, mm_app.config["BOT_QUEUE"], stall_seconds=1)
    try:
        (_, filled_token), (_, lonely_token) = player(client, "Filled"), player(client, "Lonely")
        filled = ticket(client, filled_token, rules="elaborate", players=4, max_wait_seconds=1, bot_fill=3,
                        rated=True).json
        lonely = ticket(client, lonely_token, rules="elaborate", players=2, max_wait_seconds=1).json
        got = client.get(f"/matchmaking/tickets/{filled['id']}?wait_seconds=20", headers=bearer(filled_token)).json
        assert got["status"] == "matched"
        game = client.get(f"/games/{got['game_id']}").json
        assert sorted(s["type"] for s in game["seats"]) == ["bot", "bot", "bot", "human"]
        assert {s["bot"] for s in game["seats"] if s["type"] == "bot"} == {"greedy"}
        assert len({s["name"] for s in game["seats"]}) == 4  # each seat told apart
        assert not game["rated"]  # a rated ticket filled by bots: a person's rating moves only against people
        expired = client.get(f"/matchmaking/tickets/{lonely['id']}?wait_seconds=20", headers=bearer(lonely_token)).json
        assert expired["status"] == "expired" and expired["game_id"] is None
        notices = client.get("/players/me/notices?after=0", headers=bearer(lonely_token)).json["notices"]
        assert [n["type"] for n in notices] == ["ticket_expired"] and notices[0]["ticket_id"] == lonely["id"]
        view = client.get(f"/games/{got['game_id']}/view?after_version={game['version']}&wait_seconds=10",
                          headers=bearer(filled_token)).json
        assert view["version"] > game["version"] or got["seat"] in view["awaiting"]  # the bots play
    finally:
        stop(worker)


def test_tickets_racing_on_a_cluster_never_share_a_seat_nor_leave_one_empty(redis_url, cluster_url):
    app = create_app({"REDIS_URL": redis_url, "REDIS_CLUSTER_URL": cluster_url, "TESTING": True,
                      "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0, "BOT_DISPATCH": "inprocess"})
    client = app.test_client()
    players = [player(client, f"c{i}") for i in range(24)]

    def queue(entry):
        return ticket(app.test_client(), entry[1], rules="traditional", players=4).json
    with ThreadPoolExecutor(8) as pool:
        tickets = list(pool.map(queue, players))
    for _ in range(10):
        app.services.matchmaker.sweep()
    final = [
        client.get(f"/matchmaking/tickets/{t['id']}", headers=bearer(p[1])).json
        for t, p in zip(tickets, players, strict=False)
    ]
    assert all(t["status"] == "matched" for t in final), [t["status"] for t in final]
    by_game = {}
    for t in final:
        by_game.setdefault(t["game_id"], []).append(t["seat"])
    assert len(by_game) == 6 and all(sorted(seats) == [0, 1, 2, 3] for seats in by_game.values())


def hgetall_calls(store) -> int:
    """HGETALL calls the Redis server has run (its scripts' included): what a sweep reads of tickets."""
    return int(store.info("commandstats").get("cmdstat_hgetall", {}).get("calls", 0))


def test_the_sweep_reads_only_the_tickets_due_whatever_the_number_waiting(mm_app):
    """Issue 52: 2,000 tickets waiting, none due: a sweep reads none of them; once they are due, it
    reads as many as one sweep takes (SWEEP_LIMIT), never the whole waiting set."""
    matchmaker = mm_app.services.matchmaker
    store, app_id = matchmaker.store, f"sweep-{uuid.uuid4().hex[:8]}"
    grouping = matchmaker._grouping(app_id, 600)
    now = grouping[0]
    for index in range(2000):  # ratings 450 apart: none meets another
        ticket_id = f"{app_id}~classic-2.t{index}"
        store.submit(app_id, grouping, {
            "id": ticket_id, "player": f"{app_id}~p{index}", "name": "p", "rating": 1500 + 450 * index,
            "deadline": now + 600_000, "bot_fill": None, "rated": False, "pool": f"{app_id}~classic-2",
            "players": 2, "teams": False, "turn_seconds": 30, "queue": "classic-2:casual:30"}, f"g{index}")
    redis_client = matchmaker.store.redis
    before = hgetall_calls(redis_client)
    assert store.sweep(app_id, grouping, SWEEP_LIMIT, ["unused"]) == []
    assert hgetall_calls(redis_client) - before < 50  # other tests' sweeps may run meanwhile
    later = [now + 3000, *grouping[1:]]  # each ticket's next look (2 s on) has come
    before = hgetall_calls(redis_client)
    store.sweep(app_id, later, SWEEP_LIMIT, [])
    looked_at = hgetall_calls(redis_client) - before
    assert SWEEP_LIMIT <= looked_at < 2000, looked_at


@pytest.mark.slow
def test_a_ticket_whose_player_expired_is_never_matched(redis_url):
    """Players kept one second when idle: a ticket outlives its player by no more than that (its
    presence grace is never longer than a player's idle time), so nobody is seated with them."""
    app = create_app({"REDIS_URL": redis_url, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0,
                      "RATE_LIMIT_PER_TOKEN": 0, "PLAYER_IDLE_TTL": 1})
    client = app.test_client()
    gone_id, gone_token = player(client, "Gone")
    waiting = ticket(client, gone_token, rules="runda", turn_seconds=77).json
    assert waiting["status"] == "waiting"
    time.sleep(1.5)  # the player's record expires; nobody has seen them since
    assert app.services.players.store.load(gone_id) is None
    _, later_token = player(client, "Later")
    later = ticket(client, later_token, rules="runda", turn_seconds=77)
    assert later.status_code == 202 and later.json["status"] == "waiting", later.json
    client.delete(f"/matchmaking/tickets/{later.json['id']}", headers=bearer(later_token))
