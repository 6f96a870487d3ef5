"""A game between people always ends (issue 52), against real processes: gunicorn serving the
API, a `ronda worker` running the turn timers and the matchmaking sweep, timers shortened by
settings. A seat whose timer runs out before its first move aborts the game; three missed turns
in a row after it forfeit it; a ticket lives while its player is there, one per player across
pools; a rematch is one next game whoever asks, and a decline racing an accept has one outcome."""

import json
import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
import requests

from app.games.moves import MOVES_TO_COUNT

from app.ops.keys import matchmaking_key
from app.ops.scope import app_of

from faults import start_worker, stop
from test_production_server import free_port, start_gunicorn

PRESENCE_SECONDS = 2


@pytest.fixture(scope="module")
def service(redis_url, tmp_path_factory):
    queue = f"absence-{uuid.uuid4().hex[:8]}"
    settings = {"RONDA_BOT_QUEUE": queue, "RONDA_MIN_TURN_SECONDS": "1", "RONDA_SSE_KEEPALIVE_SECONDS": "0.5",
                "RONDA_TICKET_PRESENCE_SECONDS": str(PRESENCE_SECONDS), "RONDA_RATE_LIMIT_PER_ADDRESS": "0",
                "RONDA_RATE_LIMIT_PER_TOKEN": "0"}
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}, "REDIS_URL": redis_url,
           "HOME": str(tmp_path_factory.mktemp("home")), **settings}
    api = start_gunicorn(env, port, workers=2)
    worker = start_worker(redis_url, queue, **settings)
    yield f"http://127.0.0.1:{port}"
    stop(worker)
    api.terminate()
    api.wait(timeout=10)


def player(base, name="p"):
    created = requests.post(f"{base}/players", json={"name": name}).json()
    return created["player"]["id"], {"Authorization": f"Bearer {created['token']}"}


def ticket(base, auth, **body):
    return requests.post(f"{base}/matchmaking/tickets", headers=auth,
                         json={"rules": {"preset": "simple"}, "players": 2, **body})


def until(probe, seconds=30.0, every=0.1):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"not within {seconds} s")


def matched_pair(base, rated=True, turn_seconds=1, keep=None):
    """Two players met by quick play: their game id and each one's (id, auth, seat). `keep`: the
    first player's (id, auth), a player of before."""
    (a, a_auth), (b, b_auth) = keep or player(base, "Amina"), player(base, "Omar")
    first = ticket(base, a_auth, rated=rated, turn_seconds=turn_seconds).json()
    second = ticket(base, b_auth, rated=rated, turn_seconds=turn_seconds).json()
    assert second["status"] == "matched", second
    first = requests.get(f"{base}/matchmaking/tickets/{first['id']}", headers=a_auth).json()
    return second["game_id"], {a: (a_auth, first["seat"]), b: (b_auth, second["seat"])}


def notices(base, auth):
    return requests.get(f"{base}/players/me/notices?after=0", headers=auth).json()["notices"]


def finished(base, game_id, seconds=60.0):
    return until(lambda: (g := requests.get(f"{base}/games/{game_id}").json())["status"] == "finished" and g,
                 seconds)


def test_a_game_whose_first_move_is_never_made_is_aborted_unrated_and_both_told(service):
    game_id, people = matched_pair(service)
    game = requests.get(f"{service}/games/{game_id}").json()
    assert game["turn_timeout_seconds"] == 1 and game["rated"]
    absent = game["awaiting"][0]
    over = finished(service, game_id)
    assert over["winner"] is None and over["outcome"] == {"reason": "aborted", "seat": absent}
    last = requests.get(f"{service}/games/{game_id}/events?after={over['event_count'] - 1}").json()[-1]
    assert last["type"] == "game_over" and last["reason"] == "aborted" and last["winner"] is None
    for player_id, (auth, _) in people.items():
        told = [n for n in notices(service, auth) if n["type"] == "game_over"]
        assert len(told) == 1 and told[0]["outcome"] == {"reason": "aborted", "seat": absent}
        assert not told[0]["won"]
        public = requests.get(f"{service}/players/{player_id}").json()
        assert public["ratings"] == [] and public["games"] == 0  # as if it was never played


def play_if_awaited(service, game_id, auth, seat) -> bool:
    """The seat plays its first legal action if it is its turn (True if it did); None once the game is over."""
    view = requests.get(f"{service}/games/{game_id}/view", headers=auth).json()
    if view["status"] == "finished":
        return None
    if view["status"] == "active" and seat in view["awaiting"]:
        return requests.post(f"{service}/games/{game_id}/actions", json=view["legal_actions"][0],
                             headers={**auth, "If-Match": f'"{view["version"]}"'}).status_code == 200
    return False


def moves_made(service, game_id, auths: dict, count: int):
    """Each seat of `auths` makes `count` moves of its own, each in its turn."""
    made = dict.fromkeys(auths, 0)
    while min(made.values()) < count:
        for seat, auth in auths.items():
            if made[seat] < count and play_if_awaited(service, game_id, auth, seat):
                made[seat] += 1
        time.sleep(0.02)


@pytest.mark.slow
def test_three_missed_turns_in_a_row_forfeit_the_game_to_the_player_who_stayed(service):
    game_id, people = matched_pair(service, turn_seconds=2)
    (stayer, (stayer_auth, stayer_seat)), (leaver, (leaver_auth, leaver_seat)) = people.items()
    moves_made(service, game_id, {leaver_seat: leaver_auth, stayer_seat: stayer_auth}, MOVES_TO_COUNT)
    until(lambda: play_if_awaited(service, game_id, stayer_auth, stayer_seat) is None, seconds=60, every=0.05)
    over = requests.get(f"{service}/games/{game_id}").json()
    assert over["outcome"] == {"reason": "forfeit", "seat": leaver_seat}
    assert over["winner"] == stayer_seat  # two players: a seat is its camp
    events = requests.get(f"{service}/games/{game_id}/events?limit=1000").json()
    missed = [e["missed"] for e in events if e["type"] == "turn_timeout"]
    assert missed == [1, 2] and all(e["seat"] == leaver_seat for e in events if e["type"] == "turn_timeout")
    assert events[-1] == {**events[-1], "type": "game_over", "reason": "forfeit", "seat": leaver_seat}
    absent = [n for n in notices(service, stayer_auth) if n["type"] == "opponent_absent"]  # told at once
    assert [(n["absent_seat"], n["missed"]) for n in absent] == [(leaver_seat, 1), (leaver_seat, 2)]
    assert all(n["forfeit_at"] > n["at"] for n in absent)
    assert not [n for n in notices(service, leaver_auth) if n["type"] == "opponent_absent"]
    won = {n["seat"]: n["won"] for auth in (stayer_auth, leaver_auth) for n in notices(service, auth)
           if n["type"] == "game_over"}
    assert won == {stayer_seat: True, leaver_seat: False}
    ratings = {who: until(lambda who=who: requests.get(f"{service}/players/{who}").json()["ratings"])[0]
               for who in (stayer, leaver)}
    assert ratings[stayer]["wins"] == 1 and ratings[leaver]["losses"] == 1  # a forfeit is rated
    assert ratings[stayer]["rating"] > 1500 > ratings[leaver]["rating"]


def test_tickets_meet_only_tickets_of_the_same_turn_timer(service):
    (_, a), (_, b), (_, c) = player(service), player(service), player(service)
    quick = ticket(service, a, turn_seconds=30).json()
    slow = ticket(service, b, turn_seconds=86400).json()
    assert quick["status"] == slow["status"] == "waiting" and slow["turn_seconds"] == 86400
    assert quick["rules"] == {"preset": "simple"}  # the form a game's rules take
    met = ticket(service, c, turn_seconds=30).json()
    assert met["status"] == "matched"
    game = requests.get(f"{service}/games/{met['game_id']}").json()
    assert game["turn_timeout_seconds"] == 30
    assert requests.get(f"{service}/matchmaking/tickets/{slow['id']}", headers=b).json()["status"] == "waiting"
    requests.delete(f"{service}/matchmaking/tickets/{slow['id']}", headers=b)
    too_short = ticket(service, a, turn_seconds=0)
    assert too_short.status_code == 422


def test_a_player_has_one_live_ticket_across_every_pool(service):
    _, auth = player(service)
    first = ticket(service, auth, rules={"preset": "classic"}).json()
    other_pool = ticket(service, auth, rules={"preset": "traditional"}, players=4)
    assert other_pool.status_code == 409 and other_pool.json()["ticket_id"] == first["id"]
    requests.delete(f"{service}/matchmaking/tickets/{first['id']}", headers=auth)
    assert ticket(service, auth, rules={"preset": "traditional"}, players=4).json()["status"] == "waiting"


@pytest.mark.slow
def test_a_ticket_lives_while_its_player_is_there_and_a_gone_one_is_never_matched(service, redis_url):
    (_, here), (gone_id, gone) = player(service, "Here"), player(service, "Gone")
    stream = requests.get(f"{service}/players/me/stream", headers=here, stream=True, timeout=30)
    lines = stream.iter_lines()
    assert next(lines) == b": connected"

    def keep_reading():
        try:
            for _ in lines:
                pass
        except (requests.RequestException, AttributeError):  # the stream closed under it, at the end
            pass
    threading.Thread(target=keep_reading, daemon=True).start()
    try:
        staying = ticket(service, here, rules={"preset": "elaborate"}, max_wait_seconds=600, turn_seconds=45).json()
        leaving = ticket(service, gone, rules={"preset": "runda"}, max_wait_seconds=600, turn_seconds=45).json()
        # Watched in the store: a read of the ticket by its player would show them present.
        store = redis.Redis.from_url(redis_url)
        key = matchmaking_key(app_of(leaving["id"].partition(".")[0]), f"ticket:{leaving['id']}")
        until(lambda: store.hget(key, "status") == b"expired", seconds=PRESENCE_SECONDS * 10)
        expired = requests.get(f"{service}/matchmaking/tickets/{leaving['id']}", headers=gone).json()
        assert expired["status"] == "expired" and expired["expired_because"] == "absent"
        told = [n for n in notices(service, gone) if n["type"] == "ticket_expired"]
        assert told == [{**told[0], "ticket_id": leaving["id"], "why": "absent"}]
        time.sleep(PRESENCE_SECONDS)  # the stream's keep-alives keep the other waiting
        _, late = player(service, "Late")
        met = ticket(service, late, rules={"preset": "elaborate"}, turn_seconds=45).json()
        assert met["status"] == "matched"
        assert requests.get(f"{service}/matchmaking/tickets/{staying['id']}", headers=here).json()["game_id"] == \
            met["game_id"]
        _, other = player(service, "Other")
        alone = ticket(service, other, rules={"preset": "runda"}, turn_seconds=45).json()
        assert alone["status"] == "waiting"  # the gone player's ticket is not there to meet
        game = requests.get(f"{service}/games/{met['game_id']}").json()
        assert gone_id not in [s["player"] for s in game["seats"]]
        requests.delete(f"{service}/matchmaking/tickets/{alone['id']}", headers=other)
    finally:
        stream.close()


def aborted_game(base):
    """A finished game between two players (aborted: its timer ran out before the first move)."""
    game_id, people = matched_pair(base, rated=False)
    finished(base, game_id)
    return game_id, people


def test_twenty_asks_from_both_seats_answer_one_next_game_each_asker_seated_and_one_offer(service):
    game_id, people = aborted_game(service)
    asks = [auth for auth, _ in people.values() for _ in range(10)]
    barrier = threading.Barrier(len(asks))

    def ask(auth):
        barrier.wait()
        return requests.post(f"{service}/games/{game_id}/rematch", headers=auth)
    with ThreadPoolExecutor(len(asks)) as threads:
        answers = list(threads.map(ask, asks))
    assert [a.status_code for a in answers] == [201] * len(asks), [a.text for a in answers if a.status_code != 201]
    assert len({a.json()["game"]["id"] for a in answers}) == 1
    for (_, seat), start in zip(people.values(), (0, 10), strict=True):
        assert {a.json()["seat"] for a in answers[start:start + 10]} == {seat}
    next_game = requests.get(f"{service}/games/{answers[0].json()['game']['id']}").json()
    assert next_game["status"] == "active" and next_game["rematch_of"] == game_id
    assert sorted(s["player"] for s in next_game["seats"]) == sorted(people)
    offers = [n for auth, _ in people.values() for n in notices(service, auth) if n["type"] == "rematch_offered"]
    assert len(offers) == 1  # the first ask offers it to the other player, once


@pytest.mark.slow
def test_a_decline_racing_an_accept_has_one_outcome(service):
    outcomes = []
    for _ in range(6):
        game_id, people = aborted_game(service)
        (offerer, _), (other, _) = people.values()
        offered = requests.post(f"{service}/games/{game_id}/rematch", headers=offerer).json()["game"]["id"]
        barrier = threading.Barrier(2)

        def at_once(method, auth, barrier=barrier, game_id=game_id):
            barrier.wait()
            return requests.request(method, f"{service}/games/{game_id}/rematch", headers=auth)
        with ThreadPoolExecutor(2) as threads:
            declining, accepting = threads.submit(at_once, "DELETE", offerer), threads.submit(at_once, "POST", other)
            declined, accepted = declining.result(timeout=30), accepting.result(timeout=30)
        later = requests.post(f"{service}/games/{game_id}/rematch", headers=other)
        if declined.status_code == 204:
            assert accepted.status_code == 409 and accepted.json()["code"] == "rematch_declined"
            assert later.status_code == 409 and later.json()["code"] == "rematch_declined"
            called_off = requests.get(f"{service}/games/{offered}").json()  # every table of it says so
            assert called_off["status"] == "finished" and called_off["outcome"]["reason"] == "declined"
            assert sum(1 for seat in called_off["seats"] if seat["player"]) == 1  # the accept took no seat
        else:
            assert declined.status_code == 409 and declined.json()["code"] == "rematch_started"
            assert accepted.status_code == 201 and later.status_code == 201
            assert requests.get(f"{service}/games/{offered}").json()["status"] == "active"
        outcomes.append(declined.status_code)
    assert set(outcomes) <= {204, 409}
    print(json.dumps({"declined": outcomes.count(204), "accepted": outcomes.count(409)}))


@pytest.mark.slow
def test_a_throwaway_who_moves_once_then_walks_away_feeds_nobodys_rating(service):
    """Issue 61, 5: the farm of throwaway players (each moves once, then lets their timer forfeit a
    rated game against one account) moved that account 1500 → 2066 in 30 s. A forfeit now counts
    only after MOVES_TO_COUNT moves of the forfeiter's own: before that the game is aborted, unrated."""
    farmed = None
    for _ in range(3):
        game_id, people = matched_pair(service, turn_seconds=1, keep=farmed)
        (farmer, (farmer_auth, farmer_seat)), (_, (throwaway_auth, throwaway_seat)) = people.items()
        farmed = farmed or (farmer, farmer_auth)
        moves_made(service, game_id, {throwaway_seat: throwaway_auth, farmer_seat: farmer_auth}, 1)
        over = until(lambda game_id=game_id, auth=farmer_auth, seat=farmer_seat: play_if_awaited(
            service, game_id, auth, seat) is None and requests.get(f"{service}/games/{game_id}").json(), seconds=60,
            every=0.05)
        assert over["outcome"] == {"reason": "aborted", "seat": throwaway_seat} and over["winner"] is None
    assert requests.get(f"{service}/players/{farmed[0]}").json()["ratings"] == []


@pytest.mark.slow
def test_a_game_every_person_left_is_abandoned_unrated(service):
    game_id, people = matched_pair(service, turn_seconds=1)
    auths = {seat: auth for _, (auth, seat) in people.items()}
    moves_made(service, game_id, auths, MOVES_TO_COUNT)  # both played, then both walk away
    over = finished(service, game_id)
    assert over["outcome"]["reason"] == "abandoned" and over["winner"] is None
    for player_id in people:
        public = requests.get(f"{service}/players/{player_id}").json()
        assert public["ratings"] == [] and public["games"] == 0
