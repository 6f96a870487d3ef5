"""The live hub (app/live.py): one subscription per process, each change read and rendered once
per distinct viewer, against a real Redis."""

import json
import re
import threading
import time
from pathlib import Path
import uuid

import pytest

from app.ops.keys import changes_channel
from http_helpers import act, create, seat_view


def test_many_watchers_of_a_game_share_one_subscription_and_get_each_change_once(app, client, monkeypatch):
    hub, store = app.live, app.services.store
    game, tokens = create(client)
    rendered = []
    monkeypatch.setattr(hub, "render", lambda event: rendered.append(event) or f"event {event['id']}")
    watchers = [hub.watch(game["id"], seat) for seat in (None, 0, 1) for _ in range(10)]
    try:
        assert store.redis.pubsub_numsub(changes_channel(game["id"]))[0][1] == 1
        seat = game["awaiting"][0]
        view = seat_view(client, game["id"], tokens[seat])
        assert act(client, game["id"], tokens[seat], view["legal_actions"][0], view["version"]).status_code == 200
        received = [watcher.next(5) for watcher in watchers]
        assert all(kind == "change" for kind, _ in received)
        events_per_change = len(received[0][1][1])
        assert events_per_change >= 2 and len(rendered) == 3 * events_per_change  # three viewers, not thirty
        # Each audience's events are one text, made once and handed to each of its streams as it is:
        # a stream writes it in one go.
        for audience in range(3):
            texts = [payload[2] for _, payload in received[audience * 10:(audience + 1) * 10]]
            assert len({id(text) for text in texts}) == 1
            assert texts[0] == "".join(f"event {event_id}" for event_id, _, _ in received[audience * 10][1][1])
    finally:
        for watcher in watchers:
            hub.unwatch(watcher)


def test_a_watcher_that_comes_as_the_last_one_leaves_is_still_served(app, client):
    hub = app.live
    game, tokens = create(client)
    for _ in range(20):  # the unsubscribe of the one leaving and the subscribe of the one coming cross
        hub.unwatch(hub.watch(game["id"]))
    watcher = hub.watch(game["id"], timeout=2)
    try:
        seat = game["awaiting"][0]
        view = seat_view(client, game["id"], tokens[seat])
        act(client, game["id"], tokens[seat], view["legal_actions"][0], view["version"])
        assert watcher.next(5)[0] == "change"
    finally:
        hub.unwatch(watcher)


def test_streams_that_open_after_a_snapshot_share_it_until_the_game_changes_and_miss_no_change(
        app, client, monkeypatch):
    """Issue 65, storm: a spectator snapshot read while the hub has seen every event of the game
    serves the streams that open after it (one read, not one a stream); once the game changes, the
    next stream reads anew, and every stream, on a shared snapshot or not, gets the change once."""
    from app.api.live_streams import game_stream
    from app.live.streams import Live
    games = app.services.games
    live = Live(app.services, app.live, 0.1)
    game, tokens = create(client)
    reads = []
    view_as = games.view_as
    monkeypatch.setattr(games, "view_as", lambda game_id, seat: reads.append(seat) or view_as(game_id, seat))

    def opened():
        stream = game_stream(live, game["id"], None, None)
        assert next(stream) == ": connected\n\n"
        return stream, next(stream)

    streams = [opened()]
    # The first stream's snapshot goes before the subscription is confirmed; once it is (the
    # stream waits, with a keep-alive), the snapshot is as new as the hub's count and is shared.
    assert next(streams[0][0]) == ": keep-alive\n\n" and app.live.counted(game["id"]) is not None
    streams += [opened() for _ in range(4)]
    try:
        assert len(reads) == 1 and len({snapshot for _, snapshot in streams}) == 1
        assert all(next(stream) == ": keep-alive\n\n" for stream, _ in streams[1:])
        seat = game["awaiting"][0]
        view = seat_view(client, game["id"], tokens[seat])
        assert act(client, game["id"], tokens[seat], view["legal_actions"][0], view["version"]).status_code == 200
        changes = [next(chunk for chunk in stream if chunk != ": keep-alive\n\n") for stream, _ in streams]
        assert len(set(changes)) == 1  # every stream, on the shared snapshot, got the move
        later, snapshot = opened()
        streams.append((later, snapshot))
        now = client.get(f"/games/{game['id']}").json["event_count"]
        assert now > view["event_count"] and len(reads) == 2 and snapshot.startswith(f"id: {now}\n")
    finally:
        for stream, _ in streams:
            stream.close()


def event_count(client, game_id: str) -> int:
    return client.get(f"/games/{game_id}").json["event_count"]


def sent_ids(chunks: list[str]) -> list[int]:
    return [int(event_id) for chunk in chunks for event_id in re.findall(r"^id: (\d+)$", chunk, re.M)]


@pytest.mark.parametrize("viewer", [None, 0, 1], ids=["spectator", "seat 0", "seat 1"])
def test_a_stream_gets_its_snapshot_before_its_subscription_and_then_each_move_made_meanwhile_once(
        app, client, monkeypatch, viewer):
    """Issue 65, storm: a stream's snapshot is read while its game's subscription is made, so a
    listener held busy does not hold it back; moves made between the snapshot and the subscription
    are read from the log, and later moves come from the hub, each event once and in order, and
    each as the event log shows it to the same viewer (a seat's own cards, no one else's)."""
    from app.api.live_streams import game_stream
    from app.live.streams import Live
    hub = app.live
    game, tokens = create(client)
    count_subscribed, release = hub._count_subscribed, threading.Event()
    monkeypatch.setattr(hub, "_count_subscribed", lambda: release.wait(30) and count_subscribed())

    def move():
        seat = seat_view(client, game["id"], tokens[0])["awaiting"][0]
        view = seat_view(client, game["id"], tokens[seat])
        assert act(client, game["id"], tokens[seat], view["legal_actions"][0], view["version"]).status_code == 200

    token = None if viewer is None else tokens[viewer]
    stream = game_stream(Live(app.services, hub, 0.1), game["id"], token, None)
    try:
        assert next(stream) == ": connected\n\n"
        snapshot = next(stream)  # the listener is held: its subscription is not counted yet
        assert snapshot.startswith(f"id: {game['event_count']}\nevent: snapshot") and hub.counted(game["id"]) is None
        # moves until a new deal, while the subscription is held: the log must show each viewer its own hand
        events_since = f"/games/{game['id']}/events?after={game['event_count']}"
        for _ in range(40):
            move()
            if any(event["type"] == "deal" for event in client.get(events_since).json):
                break
        release.set()
        chunks: list[str] = []
        first = event_count(client, game["id"])
        while first not in sent_ids(chunks):
            chunks.append(next(stream))
        move()
        last = event_count(client, game["id"])
        while last not in sent_ids(chunks):
            chunks.append(next(stream))
        assert sent_ids(chunks) == list(range(game["event_count"] + 1, last + 1)), chunks
        logged = client.get(events_since, headers={} if token is None else {"Authorization": f"Bearer {token}"}).json
        sent = [json.loads(data) for chunk in chunks for data in re.findall(r"^data: (.*)$", chunk, re.M)]
        assert sent == logged
        deal = next(event for event in sent if event["type"] == "deal")
        assert deal["hand"] is None if viewer is None else len(deal["hand"]) == deal["hand_counts"][viewer] > 0
    finally:
        release.set()
        stream.close()


def test_a_game_whose_watchers_all_left_before_its_subscription_was_confirmed_is_unsubscribed(
        app, client, monkeypatch):
    """Issue 65, storm: a stream gets its snapshot before its game's subscription is confirmed, so
    its client may close it first. The hub then hears of the subscription after it let the
    unsubscription be (nothing was counted yet); it unsubscribes once it counts a game nobody
    watches, rather than hold the channel for good."""
    hub, store = app.live, app.services.store
    game, _ = create(client)
    channel = changes_channel(game["id"])
    next_notice, release = hub._feed.next_notice, threading.Event()

    def unheard(timeout):  # the feed's answers not read yet: the confirmation is still on its way
        if release.is_set():
            return next_notice(timeout)
        time.sleep(timeout)
        return None

    staying = hub.watch(create(client)[0]["id"])  # another game's stream: the hub does not go idle
    monkeypatch.setattr(hub._feed, "next_notice", unheard)
    try:
        watcher = hub.register(game["id"])
        deadline = time.monotonic() + 10
        while store.redis.pubsub_numsub(channel)[0][1] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert store.redis.pubsub_numsub(channel)[0][1] == 1
        hub.unwatch(watcher)
        while not hub._requests.empty() and time.monotonic() < deadline:  # its unsubscription is let be
            time.sleep(0.01)
        time.sleep(0.2)
    finally:
        release.set()
    try:
        # the hub stays busy with the other game, so only an unsubscription ends this one's
        while store.redis.pubsub_numsub(channel)[0][1] and time.monotonic() < deadline + 10:
            time.sleep(0.01)
        assert store.redis.pubsub_numsub(channel)[0][1] == 0 and hub.counted(game["id"]) is None
    finally:
        hub.unwatch(staying)


@pytest.mark.slow
def test_a_listener_held_busy_loses_no_watcher_that_its_feed_answered(app, client, monkeypatch):
    """Issue 65, 3: watchers of eight games open at once with 0.2 s of patience, and the listener
    is held busy half a second on each count of the games it hears subscribed (as a loop busy with a storm holds it):
    the feed answered every subscription at once, so every watcher is served, none told to
    reconnect because its own clock ran out before the listener read the answer. The games it hears
    subscribed while busy are counted together."""
    hub, store = app.live, app.services.store
    games = [create(client)[0]["id"] for _ in range(8)]
    counted, counts = store.event_counts, []

    def held(game_ids):
        counts.append(game_ids)
        time.sleep(0.5)
        return counted(game_ids)

    monkeypatch.setattr(store, "event_counts", held)
    outcomes: dict[str, object] = {}

    def watch(game_id):
        try:
            outcomes[game_id] = hub.watch(game_id, timeout=0.2)
        except Exception as error:  # the outcome is what the test reads
            outcomes[game_id] = error

    threads = [threading.Thread(target=watch, args=(game_id,)) for game_id in games]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        assert all(not isinstance(outcome, Exception) for outcome in outcomes.values()), outcomes
        assert len(outcomes) == len(games)
        assert len(counts) < len(games)  # those heard while it was busy: counted in one round trip
    finally:
        for outcome in outcomes.values():
            if not isinstance(outcome, Exception):
                hub.unwatch(outcome)


def test_a_subscription_whose_first_count_the_store_failed_is_counted_again_and_its_watcher_served(
        app, client, monkeypatch):
    """Issue 65, 3: the listener counts a game's events once its channel is subscribed; when the
    store fails that read (a busy loop's read timing out), the count is tried again, and the
    watcher waiting on the subscription is served within its patience, not told to reconnect."""
    import redis as redis_module
    hub, store = app.live, app.services.store
    game, _ = create(client)
    counted, failed = store.event_counts, []

    def fails_once(game_ids):
        if not failed:
            failed.append(game_ids)
            raise redis_module.TimeoutError("the read timed out")
        return counted(game_ids)

    monkeypatch.setattr(store, "event_counts", fails_once)
    watcher = hub.watch(game["id"], timeout=2.0)
    try:
        assert failed == [[game["id"]]] and watcher.subscribed.is_set()
    finally:
        hub.unwatch(watcher)


def test_a_watcher_that_falls_behind_is_told_to_reconnect_and_holds_up_no_other(app, client, monkeypatch):
    """Issue 65, 2: a stream whose client stops reading holds at most BACKLOG changes (here 2),
    then is ended (CLOSED: its stream sends a reconnect hint and resumes by Last-Event-ID); a
    watcher of the same game that reads gets every change."""
    from app.live import hub as hub_module
    monkeypatch.setattr(hub_module, "BACKLOG", 2)
    hub = app.live
    game, tokens = create(client)
    stalled, reading = hub.watch(game["id"], None), hub.watch(game["id"], None)
    try:
        received = []
        for _ in range(4):
            seat = seat_view(client, game["id"], tokens[0])["awaiting"][0]
            view = seat_view(client, game["id"], tokens[seat])
            assert act(client, game["id"], tokens[seat], view["legal_actions"][0], view["version"]).status_code == 200
            received.append(reading.next(10))
        assert all(item is not None and item[0] == "change" for item in received)
        assert [item[1][0] for item in received] == sorted({item[1][0] for item in received})  # each change once
        assert stalled.next(0) == hub_module.CLOSED
    finally:
        hub.unwatch(stalled)
        hub.unwatch(reading)


def test_metrics_count_requests_actions_and_open_streams(client):
    game, tokens = create(client)
    seat = game["awaiting"][0]
    view = seat_view(client, game["id"], tokens[seat])
    act(client, game["id"], tokens[seat], view["legal_actions"][0], view["version"])
    act(client, game["id"], tokens[seat], view["legal_actions"][0], view["version"])  # stale now: 412
    text = client.get("/metrics").get_data(as_text=True)
    assert 'ronda_http_requests_total{method="POST",route="/games/<game_id>/actions",status="412"}' in text
    assert 'ronda_actions_applied_total{by="human"}' in text and "ronda_stale_versions_total" in text
    assert "ronda_open_streams" in text and "ronda_games_created_total" in text and "ronda_queue_depth" in text


def test_a_request_id_is_echoed_or_made(client):
    assert client.get("/rules/presets", headers={"X-Request-ID": "abc-123"}).headers["X-Request-ID"] == "abc-123"
    made = client.get("/rules/presets", headers={"X-Request-ID": "bad id\u00e9"}).headers["X-Request-ID"]
    assert len(made) == 32 and made != "bad id\u00e9"


def test_behind_a_trusted_proxy_limits_see_the_real_client(redis_url):
    from app import create_app
    app = create_app({"REDIS_URL": redis_url, "TRUSTED_PROXIES": 1, "RATE_LIMIT_PER_ADDRESS": 2,
                      "RATE_LIMIT_PER_TOKEN": 0})
    client = app.test_client()
    real = f"198.51.100.{int(time.time()) % 250}"
    statuses = [client.get("/rules/presets", headers={"X-Forwarded-For": real}).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    other = client.get("/rules/presets", headers={"X-Forwarded-For": "203.0.113.9"})
    assert other.status_code == 200  # another client behind the same proxy has its own bucket


def test_retry_after_comes_only_with_429_and_503_and_is_never_zero(redis_url):
    from app import create_app
    app = create_app({"REDIS_URL": redis_url, "RATE_LIMIT_PER_ADDRESS": 1, "RATE_LIMIT_PER_TOKEN": 0})
    client = app.test_client()
    address = {"REMOTE_ADDR": f"198.51.101.{uuid.uuid4().int % 250}"}
    ok = client.get("/rules/presets", environ_base=address)
    assert ok.status_code == 200 and "Retry-After" not in ok.headers
    refused = client.get("/rules/presets", environ_base=address)
    assert refused.status_code == 429 and 1 <= int(refused.headers["Retry-After"]) <= 60
    assert int(refused.headers["X-RateLimit-Reset"]) - time.time() <= 60


def test_a_stream_whose_change_feed_does_not_answer_starts_then_ends_with_a_reconnect_hint(redis_url, monkeypatch):
    """Issue 50: never a 503 for want of a subscription (EventSource does not retry a 503): the
    first byte goes at once, and the stream ends with `retry:` so the client reconnects."""
    import redis
    from app import create_app
    app = create_app({"REDIS_URL": redis_url, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0})
    client = app.test_client()
    game_id = client.post("/games", json={"players": 2}).json["game"]["id"]

    def silent(*args, **options):
        raise redis.ConnectionError("the change feed did not answer")

    monkeypatch.setattr(app.live, "until_subscribed", silent)
    answers = [client.get(f"/games/{game_id}/stream") for _ in range(12)]
    assert all(a.status_code == 200 and a.mimetype == "text/event-stream" for a in answers)
    texts = [a.get_data(as_text=True) for a in answers]
    # The snapshot is read while the subscription is asked for: it comes, then the hint.
    assert all(re.fullmatch(r": connected\n\nid: \d+\nevent: snapshot\ndata: .*\n\nretry: \d+\n\n", text)
               for text in texts), texts
    hints = [int(text.split("retry: ")[1]) for text in texts]
    # Issue 65, 3: each hint drawn from 1-5 s, so the streams a busy server ends come back spread out.
    assert all(1000 <= hint <= 5000 for hint in hints) and len(set(hints)) > 1, hints


def problem_events(text: str) -> list[dict]:
    return [json.loads(block.split("data: ", 1)[1]) for block in text.split("\n\n") if "event: problem" in block]


def test_a_stream_of_no_such_game_or_with_a_false_token_ends_with_its_problem_event(client):
    """The first byte goes before the store is asked, so what the store refuses is said in the
    stream: a `problem` event with the problem+json body, and the stream ends (no reconnect hint)."""
    missing = client.get("/games/no-such-game/stream").get_data(as_text=True)
    assert missing.startswith(": connected\n\n") and "retry:" not in missing
    assert [(p["status"], p["code"]) for p in problem_events(missing)] == [(404, "game_not_found")]
    spec = json.loads((Path(__file__).resolve().parent.parent / "openapi" / "openapi.json").read_text())
    assert set(spec["components"]["schemas"]["Problem"]["required"]) <= set(problem_events(missing)[0])
    game_id = client.post("/games", json={"players": 2}).json["game"]["id"]
    false_token = client.get(f"/games/{game_id}/stream", headers={"Authorization": "Bearer not-a-seat"})
    refused = problem_events(false_token.get_data(as_text=True))
    assert [(p["status"], p["code"]) for p in refused] == [(401, "invalid_token")]
    resumed = client.get("/games/no-such-game/stream", headers={"Last-Event-ID": "3"}).get_data(as_text=True)
    assert resumed.startswith(": resumed\n\n") and [p["status"] for p in problem_events(resumed)] == [404]


def test_cors_answers_vary_by_origin_and_expose_what_a_browser_client_reads(redis_url):
    from app import create_app
    app = create_app({"REDIS_URL": redis_url, "CORS_ORIGINS": ["https://client.example"]})
    answer = app.test_client().get("/rules/presets", headers={"Origin": "https://client.example"})
    assert "Origin" in answer.headers["Vary"]
    exposed = {name.strip() for name in answer.headers["Access-Control-Expose-Headers"].split(",")}
    assert {"ETag", "Location", "Retry-After", "X-RateLimit-Remaining"} <= exposed


def test_a_hangup_the_stream_swallowed_where_it_waited_is_raised_again_where_it_next_waits():
    """The API's streams end with ClientGone as their client closes them (app/live/hangup.py). When
    it lands inside a Redis read, redis-py makes it its own ConnectionError, which the stream's read
    retries after a pause: the hang-up is raised again in that pause, and the stream ends then, not
    at its next keep-alive."""
    import gevent
    import gevent.event
    import redis
    from gevent import socket as green

    from app.live.hangup import ClientGone, until_hangup

    near, far = green.socketpair()
    unanswered, reads, ended = gevent.event.Event(), [], []

    def chunks():
        try:
            yield ": connected\n\n"
            while True:  # a read retried while the store does not answer
                reads.append(1)
                try:
                    try:
                        unanswered.wait()
                    except ClientGone as gone:  # what redis-py does with an error inside its read
                        raise redis.exceptions.ConnectionError("Error while reading from socket") from gone
                except redis.exceptions.ConnectionError:
                    gevent.sleep(0.05)
        finally:
            ended.append(True)

    def write_all():
        for chunk in until_hangup(chunks(), near):
            near.sendall(chunk.encode())

    writer = gevent.spawn(write_all)
    gevent.sleep(0.1)  # the stream waits on its read
    far.close()
    writer.join(timeout=5)
    assert writer.dead and isinstance(writer.exception, ClientGone)
    assert ended == [True] and reads == [1]


def test_a_shared_read_whose_reader_is_ended_before_its_answer_is_read_anew_by_those_waiting():
    """A stream whose client went is ended where it stands (the gateway's GreenletExit), perhaps
    while it reads for other streams: those waiting for that read read anew, none is left without
    an answer."""
    from app.live.streams import SingleFlight

    class Ended(BaseException):
        pass

    shared, reading, release, answers = SingleFlight(), threading.Event(), threading.Event(), []

    def ended_read():
        reading.set()
        release.wait(10)
        raise Ended

    def first():
        try:
            shared.run("view", ended_read)
        except Ended:
            answers.append("ended")

    threads = [threading.Thread(target=first),
               threading.Thread(target=lambda: reading.wait(10) and answers.append(shared.run("view", lambda: "anew")))]
    for thread in threads:
        thread.start()
    time.sleep(0.2)  # the second waits on the first's read by now
    release.set()
    for thread in threads:
        thread.join(10)
    assert sorted(answers) == ["anew", "ended"]
