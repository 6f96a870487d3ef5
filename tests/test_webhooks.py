"""Signed webhooks (issue 44): an app's endpoint gets its players' events as Standard Webhooks
deliveries, each verified here with the `standardwebhooks` reference library as an app's server
would. Real processes: the API, a `ronda worker` (bot moves, timers, the sweep), a `ronda worker
--webhooks`, a receiver that fails, times out and recovers; a worker killed mid-attempt and a
Redis restarted lose no delivery. And correspondence play: a long turn's reminder and timeout."""

import ssl
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
import trustme
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from faults import stop_all, worker_env
from spec_helpers import validator
from test_apps import new_player, serve
from test_production_server import free_port
from trickle import TricklingReceiver

OPERATOR_KEY = "webhook-tests-operator"
ON_SPEC = validator("WebhookPayload")
# The receivers listen on this machine: private networks allowed, but where a test says otherwise.
# An endpoint that timed out is paused 0.2 s only, less than a retry: but where a test says otherwise.
SETTINGS = {"WEBHOOK_RETRY_SECONDS": [0.3, 0.6, 0.6], "WEBHOOK_TIMEOUT_SECONDS": 1.5, "WEBHOOK_LEASE_SECONDS": 3,
            "WEBHOOK_PAUSE_SECONDS": 0.2, "TURN_REMINDER_FRACTION": 0.5, "TURN_REMINDER_MIN_SECONDS": 1,
            "WEBHOOK_PRIVATE_NETWORKS": True}
ENVIRONMENT = {"RONDA_WEBHOOK_RETRY_SECONDS": "0.3,0.6,0.6", "RONDA_WEBHOOK_TIMEOUT_SECONDS": "1.5",
               "RONDA_WEBHOOK_LEASE_SECONDS": "3", "RONDA_WEBHOOK_PAUSE_SECONDS": "0.2",
               "RONDA_TURN_REMINDER_FRACTION": "0.5", "RONDA_TURN_REMINDER_MIN_SECONDS": "1",
               "RONDA_WEBHOOK_PRIVATE_NETWORKS": "1"}


class Receiver:
    """An app's server: answers each attempt as told (`plan(webhook id, attempt number)` returns
    "ok", "fail" or "hang"), and verifies every request with the endpoint's secret. `tls`: a
    server context, to listen for HTTPS."""

    def __init__(self, tls: ssl.SSLContext | None = None):
        self.received: list[dict] = []
        self.off_spec: list[tuple[dict, str]] = []
        self.secret = None
        self.plan = lambda delivery_id, attempt: "ok"
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                headers = {name.lower(): value for name, value in self.headers.items()}
                try:
                    payload = Webhook(receiver.secret).verify(body, headers)
                except WebhookVerificationError:
                    payload = None
                if payload is not None:  # issue 62, 6: every delivery is one event of the spec's union
                    receiver.off_spec += [(payload, error.message) for error in ON_SPEC.iter_errors(payload)]
                attempt = sum(r["id"] == headers["webhook-id"] for r in receiver.received)
                receiver.received.append({"id": headers["webhook-id"], "payload": payload, "body": body,
                                          "headers": headers})
                answer = receiver.plan(headers["webhook-id"], attempt)
                if answer == "hang":
                    receiver.release.wait(30)
                self.send_response(204 if answer == "ok" else 500)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.port = self.server.server_port
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}/hook"

    def verified(self, delivery_id):
        return [r for r in self.received if r["id"] == delivery_id and r["payload"] is not None]


class Deployment:
    """The API (in this process, on a real HTTP server), a `ronda worker` and a `ronda worker
    --webhooks`, on one Redis, and one app with an endpoint on the receiver."""

    def __init__(self, redis_url, events=("your_turn", "turn_reminder", "turn_timeout", "game_over"),
                 server_settings=None, **environment):
        """`server_settings`: the API's where they differ from SETTINGS; `environment`: the workers'
        where they differ from ENVIRONMENT."""
        self.redis_url, self.queue = redis_url, f"webhooks-{uuid.uuid4().hex[:8]}"
        self.environment = {**ENVIRONMENT, **environment}
        self.server, self.base = serve({"REDIS_URL": redis_url, "BOT_QUEUE": self.queue, "OPERATOR_KEY": OPERATOR_KEY,
                                        "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0,
                                        **SETTINGS, **(server_settings or {})})
        self.start_workers()
        made = requests.post(f"{self.base}/admin/apps", json={"name": "Hooked"},
                             headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json()
        self.app_id, self.key, self.server_key = made["app"]["id"], made["client_key"], made["server_key"]
        self.receiver = Receiver()
        endpoint = requests.post(
            f"{self.base}/apps/me/webhooks",
            json={"url": self.receiver.url, "events": list(events)},
            headers={"X-Ronda-App": self.server_key},
        )
        assert endpoint.status_code == 201, endpoint.text
        self.endpoint, self.receiver.secret = endpoint.json(), endpoint.json()["secret"]

    def _worker(self, *options):
        metrics = {"RONDA_METRICS_PORT": str(self.metrics_port)} if "--webhooks" in options else {}
        return subprocess.Popen([sys.executable, "-m", "app.cli", "worker", *options],
                                env=worker_env(self.redis_url, self.queue, 1, **self.environment, **metrics),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def kill_workers(self):
        """Both workers SIGKILLed, as a machine that lost power leaves them."""
        for worker in self.workers:
            worker.kill()
            worker.wait(timeout=10)

    def start_workers(self):
        self.metrics_port = free_port()  # the webhook worker's
        self.workers = [self._worker(), self._worker("--webhooks")]

    def kill_webhook_worker(self):
        self.workers[1].kill()
        self.workers[1].wait(timeout=10)
        self.metrics_port = free_port()
        self.workers[1] = self._worker("--webhooks")

    def deliveries(self) -> list[dict]:
        rv = requests.get(f"{self.base}/apps/me/webhooks/{self.endpoint['id']}/deliveries?page_size=100",
                          headers={"X-Ronda-App": self.server_key})
        assert rv.status_code == 200, rv.text
        return rv.json()

    def wait(self, condition, seconds=60, what="the deliveries"):
        deadline = time.monotonic() + seconds
        while not (found := condition()):
            assert time.monotonic() < deadline, f"{what} never came: {self.deliveries()}"
            time.sleep(0.2)
        return found

    def player_game_against_a_bot(self, **extra):
        """A player of the app against a random bot: their `your_turn` comes at once or after its move."""
        player, token = new_player(self.base, self.key)
        rv = requests.post(f"{self.base}/games", json={
            "players": 2, "rules": {"preset": "classic"}, **extra,
            "seats": [{"type": "human", "mine": True}, {"type": "bot", "bot": "random"}]},
            headers={"X-Ronda-App": self.key, "Authorization": f"Bearer {token}"})
        assert rv.status_code == 201, rv.text
        return player, token, rv.json()["game"]

    def close(self):
        self.receiver.release.set()
        stop_all(self.workers)
        self.server.shutdown()
        self.receiver.server.shutdown()


@pytest.fixture
def deployment(redis_url):
    made = Deployment(redis_url)
    yield made
    made.close()
    assert not made.receiver.off_spec, made.receiver.off_spec[0]


def first_delivery(deployment, kind="your_turn"):
    return deployment.wait(lambda: next((d for d in deployment.deliveries() if d["type"] == kind), None))


@pytest.mark.slow
def test_a_delivery_verifies_with_standard_webhooks_and_is_retried_with_the_same_id_until_taken(deployment):
    plans = {0: "fail", 1: "hang"}  # a 500, then longer than the attempt's timeout, then taken
    deployment.receiver.plan = lambda delivery_id, attempt: plans.get(attempt, "ok")
    player, _, game = deployment.player_game_against_a_bot()
    delivery = first_delivery(deployment)
    done = deployment.wait(lambda: next((d for d in deployment.deliveries()
                                         if d["id"] == delivery["id"] and d["status"] == "delivered"), None))
    assert [a["status_code"] for a in done["attempts"]] == [500, None, 204], done["attempts"]
    verified = deployment.receiver.verified(delivery["id"])
    assert len(verified) == 3 and len({r["body"] for r in verified}) == 1  # one message, one id, three attempts
    payload = verified[0]["payload"]
    assert payload["type"] == "your_turn" and payload["data"]["game_id"] == game["id"]
    assert payload["data"]["player_id"] == player["id"] and payload == done["payload"]
    # A body changed in transit, or checked with another endpoint's secret, does not verify.
    tampered = verified[0]["body"].replace(b"your_turn", b"game_over")
    with pytest.raises(WebhookVerificationError):
        Webhook(deployment.receiver.secret).verify(tampered, verified[0]["headers"])
    with pytest.raises(WebhookVerificationError):
        Webhook("whsec_" + "QUJD" * 8).verify(verified[0]["body"], verified[0]["headers"])


@pytest.mark.slow
def test_a_delivery_that_never_succeeds_is_kept_as_failed_and_can_be_sent_again(deployment):
    deployment.receiver.plan = lambda delivery_id, attempt: "fail"
    deployment.player_game_against_a_bot()
    delivery = first_delivery(deployment)
    failed = deployment.wait(lambda: next((d for d in deployment.deliveries()
                                           if d["id"] == delivery["id"] and d["status"] == "failed"), None))
    assert len(failed["attempts"]) == 1 + len(SETTINGS["WEBHOOK_RETRY_SECONDS"]) and failed["next_attempt_at"] is None
    use = requests.get(f"{deployment.base}/apps/me", headers={"X-Ronda-App": deployment.server_key}).json()
    assert use["deliveries"]["failed"] >= 1
    metrics = requests.get(f"{deployment.base}/metrics", headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).text
    # The operator's figure, kept by the writers, is the app's own exact count.
    assert f'ronda_app_webhook_deliveries{{app="{deployment.app_id}",status="failed"}} ' \
           f'{use["deliveries"]["failed"]}.0' in metrics
    deployment.receiver.plan = lambda delivery_id, attempt: "ok"
    resent = requests.post(f"{deployment.base}/apps/me/webhooks/{deployment.endpoint['id']}/deliveries/"
                           f"{delivery['id']}/resend", headers={"X-Ronda-App": deployment.server_key})
    assert resent.status_code == 202 and resent.json()["status"] == "pending"
    deployment.wait(lambda: next((d for d in deployment.deliveries()
                                  if d["id"] == delivery["id"] and d["status"] == "delivered"), None))
    assert deployment.receiver.verified(delivery["id"])


@pytest.mark.slow
def test_no_delivery_is_lost_when_the_webhook_worker_is_killed_mid_attempt(deployment):
    deployment.receiver.plan = lambda delivery_id, attempt: "hang" if attempt == 0 else "ok"
    deployment.player_game_against_a_bot()
    deployment.wait(lambda: deployment.receiver.received, what="the first attempt")
    held = deployment.receiver.received[0]["id"]
    deployment.kill_webhook_worker()  # while the receiver holds its request
    deployment.receiver.release.set()
    deployment.wait(lambda: len(deployment.receiver.verified(held)) >= 2, what="the attempt after the kill")
    delivered = deployment.wait(lambda: next((d for d in deployment.deliveries()
                                              if d["id"] == held and d["status"] == "delivered"), None))
    assert [a["status_code"] for a in delivered["attempts"]] == [204]  # the killed attempt left no record


@pytest.mark.slow
def test_no_delivery_is_lost_across_a_redis_restart(own_redis):
    deployment = Deployment(own_redis.url)
    try:
        deployment.receiver.plan = lambda delivery_id, attempt: "fail" if attempt < 2 else "ok"
        _player, _token, _game = deployment.player_game_against_a_bot()
        deployment.wait(lambda: deployment.receiver.received, what="the first attempt")
        own_redis.restart()
        listed = deployment.wait(lambda: (found := deployment.deliveries()) and all(
            d["status"] == "delivered" for d in found) and found, seconds=90)
        for delivery in listed:
            assert deployment.receiver.verified(delivery["id"]), delivery
    finally:
        deployment.close()


def server_call(deployment, method, path, **options):
    """A call of the app's server (its server key) to /apps/me…"""
    return requests.request(method, f"{deployment.base}/apps/me{path}", headers={"X-Ronda-App": deployment.server_key},
                            **options)


@pytest.mark.slow
def test_an_endpoint_is_kept_as_svix_keeps_one_rotated_updated_tested_filtered_and_recovered(deployment):
    """Issue 53: a secret rotated with a grace signs deliveries with both secrets; an endpoint whose
    URL changes keeps its deliveries; a test event arrives; deliveries filter by status; failed
    ones are sent again in bulk; the webhook worker's metrics count each endpoint's attempts."""
    endpoint_id, old_secret = deployment.endpoint["id"], deployment.receiver.secret
    rotated = server_call(deployment, "POST", f"/webhooks/{endpoint_id}/secret", json={"grace_seconds": 600}).json()
    new_secret = rotated["secret"]
    assert new_secret != old_secret and rotated["endpoint"]["old_secret_until"]
    tested = server_call(deployment, "POST", f"/webhooks/{endpoint_id}/test")
    assert tested.status_code == 202 and tested.json()["type"] == "webhook_test"
    deployment.wait(lambda: deployment.receiver.received, what="the test event")
    got = deployment.receiver.received[0]
    assert len(got["headers"]["webhook-signature"].split()) == 2  # both secrets sign during the grace
    for secret in (old_secret, new_secret):
        assert Webhook(secret).verify(got["body"], got["headers"])["type"] == "webhook_test"
    # Moved to another receiver that fails: the deliveries stay, new ones go there and fail.
    failing = Receiver()
    failing.secret, failing.plan = new_secret, (lambda delivery_id, attempt: "fail")
    try:
        moved = server_call(deployment, "PATCH", f"/webhooks/{endpoint_id}", json={"url": failing.url})
        assert moved.status_code == 200 and moved.json()["url"] == failing.url
        since = datetime.now(UTC).isoformat()
        deployment.player_game_against_a_bot(first_dealer=1)
        deployment.wait(lambda: [d for d in deployment.deliveries() if d["status"] == "failed"], what="a failure")
        failed = server_call(deployment, "GET", f"/webhooks/{endpoint_id}/deliveries?status=failed").json()
        assert failed and {d["status"] for d in failed} == {"failed"}
        delivered = server_call(deployment, "GET", f"/webhooks/{endpoint_id}/deliveries?status=delivered").json()
        assert [d["id"] for d in delivered] == [tested.json()["id"]]  # kept through the move
        assert server_call(deployment, "GET", f"/webhooks/{endpoint_id}").json()["failing_since"]
        failing.plan = lambda delivery_id, attempt: "ok"
        recovered = server_call(deployment, "POST", f"/webhooks/{endpoint_id}/recover", json={"since": since})
        assert recovered.status_code == 202 and recovered.json()["queued"] == len(failed)
        deployment.wait(lambda: all(failing.verified(d["id"]) for d in failed), what="the recovered deliveries")
    finally:
        failing.server.shutdown()
    text = requests.get(f"http://127.0.0.1:{deployment.metrics_port}/metrics").text
    labels = f'app="{deployment.app_id}",endpoint="{endpoint_id}"'
    assert f'ronda_webhook_attempts_total{{{labels},outcome="failed"}}' in text
    assert f'ronda_webhook_attempts_total{{{labels},outcome="delivered"}}' in text
    assert f'ronda_webhook_attempt_seconds_count{{{labels}}}' in text


@pytest.mark.slow
def test_an_endpoint_failing_longer_than_allowed_is_disabled_and_the_app_told(redis_url):
    deployment = Deployment(redis_url, events=("your_turn", "endpoint_disabled"),
                            RONDA_WEBHOOK_DISABLE_AFTER_SECONDS="1.5")
    broken = Receiver()
    broken.plan = lambda delivery_id, attempt: "fail"
    try:
        made = server_call(deployment, "POST", "/webhooks", json={"url": broken.url, "events": ["your_turn"]}).json()
        deployment.player_game_against_a_bot(first_dealer=1)
        disabled = deployment.wait(lambda: (e := server_call(deployment, "GET", f"/webhooks/{made['id']}").json())
                                   and not e["enabled"] and e, what="the endpoint disabled")
        assert disabled["disabled_at"] and disabled["failing_since"]
        told = deployment.wait(lambda: [r for r in deployment.receiver.received
                                        if r["payload"] and r["payload"]["type"] == "endpoint_disabled"],
                               what="endpoint_disabled on the app's other endpoint")
        assert told[0]["payload"]["data"]["endpoint_id"] == made["id"]
        before = len(broken.received)
        deployment.player_game_against_a_bot(first_dealer=1)
        time.sleep(2)
        assert len(broken.received) == before  # a disabled endpoint gets nothing
        enabled = server_call(deployment, "PATCH", f"/webhooks/{made['id']}", json={"enabled": True}).json()
        assert enabled["enabled"] and enabled["failing_since"] is None
    finally:
        broken.server.shutdown()
        deployment.close()


@pytest.mark.slow
def test_a_trickling_endpoint_stalls_no_other_endpoint_and_is_cut_off_at_its_deadline(deployment):
    """Issue 53: one app's endpoint trickles its answer (each byte within the 1.5 s socket timeout);
    another app's healthy endpoint gets its delivery within a second or two of its notice, and the
    trickling attempt ends at its deadline (timeout + 0.5 s), its endpoint paused."""
    trickling = TricklingReceiver()
    try:
        made = requests.post(f"{deployment.base}/admin/apps", json={"name": "Trickle"},
                             headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json()
        slow_key = made["client_key"]
        endpoint = requests.post(f"{deployment.base}/apps/me/webhooks", headers={"X-Ronda-App": made["server_key"]},
                                 json={"url": trickling.url, "events": ["your_turn"]}).json()
        for _ in range(3):  # deliveries to the trickling endpoint first
            _, token = new_player(deployment.base, slow_key)
            requests.post(f"{deployment.base}/games", headers={"X-Ronda-App": slow_key,
                                                               "Authorization": f"Bearer {token}"},
                          json={"players": 2, "first_dealer": 1,
                                "seats": [{"type": "human", "mine": True}, {"type": "bot", "bot": "random"}]})
        deployment.wait(lambda: trickling.requests, what="the trickling endpoint's first request")
        noticed = time.monotonic()
        deployment.player_game_against_a_bot(first_dealer=1)  # seat 0 plays first: your_turn at once
        deployment.wait(lambda: deployment.receiver.received, seconds=30, what="the healthy delivery")
        assert time.monotonic() - noticed < 2.5  # not behind the trickle (about 15 s before)
        listed = deployment.wait(lambda: [d for d in requests.get(
            f"{deployment.base}/apps/me/webhooks/{endpoint['id']}/deliveries",
            headers={"X-Ronda-App": made["server_key"]}).json() if d["attempts"]], what="an attempt's record")
        first = listed[-1]["attempts"][0]
        assert first["status_code"] is None and "deadline" in first["error"], first
        assert first["seconds"] < 1.5 + 0.5 + 1  # the deadline, not the trickle's 12 s
    finally:
        trickling.close()


@pytest.mark.slow
def test_a_long_turn_sends_a_reminder_then_its_timeout_by_stream_and_webhook(deployment):
    """A reminder at half the turn (TURN_REMINDER_FRACTION 0.5 here): 4 s before the timeout, room
    for a late sweep on a loaded machine (a reminder after the turn ended is rightly not sent)."""
    _player, token, game = deployment.player_game_against_a_bot(turn_timeout_seconds=8)
    headers = {"X-Ronda-App": deployment.key, "Authorization": f"Bearer {token}"}

    def my_turn():
        return [g for g in requests.get(f"{deployment.base}/players/me/games?status=active", headers=headers).json()
                if g["your_turn"]]
    deployment.wait(my_turn)
    view = requests.get(f"{deployment.base}/games/{game['id']}/view", headers=headers).json()
    moved = requests.post(f"{deployment.base}/games/{game['id']}/actions", json=view["legal_actions"][0],
                          headers={**headers, "If-Match": f'"{view["version"]}"'})
    assert moved.status_code == 200  # the player's first move: a timeout after it is a missed turn, not an abort
    listing = deployment.wait(lambda: [g for g in my_turn() if g["version"] > moved.json()["game"]["version"]])
    assert 0 < listing[0]["seconds_left"] <= 8
    reminder = first_delivery(deployment, "turn_reminder")
    timeout = first_delivery(deployment, "turn_timeout")
    assert reminder["payload"]["data"]["game_id"] == timeout["payload"]["data"]["game_id"] == game["id"]
    assert 0 < reminder["payload"]["data"]["seconds_left"] <= 4 + 0.5
    assert timeout["payload"]["data"]["bot"]
    notices = requests.get(f"{deployment.base}/players/me/notices?wait_seconds=0", headers=headers).json()["notices"]
    assert {"turn_reminder", "turn_timeout"} <= {notice["type"] for notice in notices}


def test_a_turn_timer_runs_up_to_14_days_and_the_game_is_kept_past_it(client, app):
    days = 14 * 24 * 3600
    too_long = client.post("/games", json={"players": 2, "turn_timeout_seconds": days + 1})
    assert too_long.status_code == 422
    rv = client.post("/games", json={"players": 2, "turn_timeout_seconds": days,
                                     "seats": [{"type": "human"}, {"type": "human"}]})
    assert rv.status_code == 201, rv.json
    game_id = rv.json["game"]["id"]
    ttl = app.services.store.redis.ttl(f"{{game:{game_id}}}:state")
    assert ttl > days, "an active game outlives its turn's timer"
    assert rv.json["game"]["turn_timeout_seconds"] == days
    assert app.services.games.load(game_id).doc["move_due_at"] - time.time() > days - 60


PRIVATE_URLS = ["http://127.0.0.1:9/hook", "http://[::1]/hook", "http://10.1.2.3/hook", "http://192.168.0.10/hook",
                "http://169.254.169.254/latest/meta-data", "http://localhost:8080/hook", "http://[fd00::1]:8000/hook",
                # Issue 62, 5: every numeric form a resolver reads, and IPv4 carried inside IPv6.
                "http://2130706433/", "http://0x7f000001/", "http://0/", "http://0177.0.0.1/", "http://127.1/",
                "http://localhost./", "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::]/",
                "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "http://[::ffff:10.0.0.1]/"]


def in_process(redis_url, **settings):
    """The API in this process, its RQ jobs queued for nobody: a test makes its attempts itself."""
    from app import create_app
    return create_app({"REDIS_URL": redis_url, "BOT_QUEUE": f"egress-{uuid.uuid4().hex[:8]}",
                       "OPERATOR_KEY": OPERATOR_KEY, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": 0,
                       "RATE_LIMIT_PER_TOKEN": 0, **SETTINGS, **settings})


def new_app_key(app) -> tuple[str, str]:
    made = app.test_client().post("/admin/apps", json={"name": "Egress"},
                                  headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json
    return made["app"]["id"], made["server_key"]


def register(app, key, url, events=("your_turn",)):
    return app.test_client().post("/apps/me/webhooks", json={"url": url, "events": list(events)},
                                  headers={"X-Ronda-App": key})


def delivery_of(app, app_id, endpoint_id) -> str:
    app.services.webhooks.publish(app_id, "your_turn", {"game_id": "g", "seat": 0})
    found, _ = app.services.webhooks.deliveries(app_id, endpoint_id, 0, 10)
    return found[0]["id"]


def test_endpoints_on_private_networks_are_refused_unless_the_operator_allows_them(redis_url):
    guarded, allowing = in_process(redis_url, WEBHOOK_PRIVATE_NETWORKS=False), in_process(redis_url)
    _, key = new_app_key(guarded)
    for url in PRIVATE_URLS:
        refused = register(guarded, key, url)
        assert refused.status_code == 422 and names_the_url(refused.json), (url, refused.json)
        allowed = register(allowing, new_app_key(allowing)[1], url)  # unless the URL check refuses it already
        assert allowed.status_code == 201 or (names_the_url(allowed.json) and "Not a valid URL" in allowed.text), url
    assert register(guarded, key, "https://hooks.example.com/ronda").status_code == 201
    key = new_app_key(guarded)[1]  # an app has 10 endpoints at most
    for public in ("http://[64:ff9b::808:808]/hook", "https://1password.com/hook", "http://8.8.8.8/hook"):
        assert register(guarded, key, public).status_code == 201, public  # what they carry is public
    endpoint = register(guarded, key, "https://hooks.example.com/moved").json
    moved = guarded.test_client().patch(f"/apps/me/webhooks/{endpoint['id']}", json={"url": "http://0x7f000001/"},
                                        headers={"X-Ronda-App": key})
    assert moved.status_code == 422 and names_the_url(moved.json)  # a PATCH is judged as a registration


def names_the_url(problem: dict) -> bool:
    """A 422 naming `url`: refused by the egress guard, or by the schema's URL check."""
    return problem.get("field") == "url" or "url" in [error["field"] for error in problem.get("errors", [])]


def test_a_name_that_resolves_to_a_private_address_is_never_posted_to(redis_url):
    """A name is judged by what it resolves to at each attempt: an endpoint registered while
    private networks were allowed (or a public name moved to a private address) gets nothing."""
    guarded, allowing = in_process(redis_url, WEBHOOK_PRIVATE_NETWORKS=False), in_process(redis_url)
    app_id, key = new_app_key(allowing)
    receiver = Receiver()
    try:
        endpoint = register(allowing, key, f"http://localhost:{receiver.port}/hook").json
        receiver.secret = endpoint["secret"]
        delivery_id = delivery_of(guarded, app_id, endpoint["id"])
        assert guarded.services.webhooks.attempt(app_id, delivery_id) is False
        attempt = guarded.services.webhooks.store.delivery(app_id, delivery_id)["attempts"][0]
        assert attempt["status_code"] is None and "not a public address" in attempt["error"], attempt
        assert receiver.received == []
        time.sleep(SETTINGS["WEBHOOK_PAUSE_SECONDS"] + 0.1)  # an endpoint that gave no answer is paused
        assert allowing.services.webhooks.attempt(app_id, delivery_id) is True
        assert receiver.verified(delivery_id)
    finally:
        receiver.server.shutdown()


def test_https_endpoints_are_verified_against_the_urls_host_name(redis_url, tmp_path, monkeypatch):
    """The connection goes to the address checked, the certificate is checked against the URL's
    name: a certificate for localhost serves https://localhost and not https://127.0.0.1."""
    authority = trustme.CA()
    authority.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))  # the only authority trusted
    listening = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("localhost").configure_cert(listening)
    receiver = Receiver(tls=listening)
    app = in_process(redis_url)
    app_id, key = new_app_key(app)
    try:
        by_name = register(app, key, f"https://localhost:{receiver.port}/hook").json
        by_address = register(app, key, receiver.url).json
        receiver.secret = by_name["secret"]
        named, addressed = delivery_of(app, app_id, by_name["id"]), delivery_of(app, app_id, by_address["id"])
        assert app.services.webhooks.attempt(app_id, named) is True
        assert receiver.verified(named)
        assert app.services.webhooks.attempt(app_id, addressed) is False
        attempt = app.services.webhooks.store.delivery(app_id, addressed)["attempts"][0]
        assert "certificate" in attempt["error"].lower() and attempt["status_code"] is None, attempt
        assert [r["id"] for r in receiver.received] == [named]
    finally:
        receiver.server.shutdown()


def test_every_notice_of_a_player_is_a_webhook_event_an_endpoint_may_take(redis_url):
    """seat_taken, as every notice type: the owner of a game hears its open seat was taken."""
    from app.players.notices import NOTICE_TYPES
    app = in_process(redis_url)
    app_id, key = new_app_key(app)
    client = app.test_client()
    endpoint = register(app, key, "https://hooks.example.com/ronda", NOTICE_TYPES)
    assert endpoint.status_code == 201 and endpoint.json["events"] == sorted(NOTICE_TYPES)
    owner, guest = (client.post("/players", json={"name": name}, headers={"X-Ronda-App": key}).json
                    for name in ("Owner", "Guest"))
    game = client.post("/games", json={"players": 2, "seats": [{"type": "human", "mine": True}, {"type": "open"}]},
                       headers={"X-Ronda-App": key, "Authorization": f"Bearer {owner['token']}"}).json["game"]
    assert client.post(f"/games/{game['id']}/seats/1", json={}, headers={
        "X-Ronda-App": key, "Authorization": f"Bearer {guest['token']}"}).status_code == 201
    found, _ = app.services.webhooks.deliveries(app_id, endpoint.json["id"], 0, 10)
    taken = [d for d in found if d["type"] == "seat_taken"]
    assert [d["payload"]["data"]["player_id"] for d in taken] == [owner["player"]["id"]], found
    assert taken[0]["payload"]["data"]["game_id"] == game["id"]


@pytest.mark.slow
def test_an_endpoint_that_gives_no_answer_is_paused_and_no_other_delivery_waits_out_its_timeouts(redis_url):
    """A dead endpoint costs the webhook worker one timeout a pause for each of its attempts at once
    (RONDA_WEBHOOK_PER_ENDPOINT, 2), not one a delivery: the deliveries queued behind those are not
    sent to it (an attempt not sent, to come again after the pause), and another app's delivery
    queued after them is delivered."""
    deployment = Deployment(redis_url, RONDA_WEBHOOK_PAUSE_SECONDS="600")
    other = Receiver()
    try:
        deployment.receiver.plan = lambda delivery_id, attempt: "hang"
        other_id, other_key = new_app_key(deployment.server.app)
        other_endpoint = register(deployment.server.app, other_key, other.url).json
        other.secret = other_endpoint["secret"]
        webhooks = deployment.server.app.services.webhooks
        for seat in range(4):
            webhooks.publish(deployment.app_id, "your_turn", {"game_id": "dead-end", "seat": seat})
        webhooks.publish(other_id, "your_turn", {"game_id": "alive", "seat": 0})
        deployment.wait(lambda: other.received, what="the other app's delivery")
        (delivered,), _ = webhooks.deliveries(other_id, other_endpoint["id"], 0, 10)
        assert delivered["status"] == "delivered" and other.verified(delivered["id"])
        waiting = deployment.wait(lambda: (found := deployment.deliveries()) and all(d["attempts"] for d in found)
                                  and found, what="an attempt of each (those in the endpoint's line after the two)")
        assert len(deployment.receiver.received) == 2  # the first two deliveries', which timed out
        errors = [d["attempts"][0]["error"] for d in waiting]
        assert len(errors) == 4 and sum(e.startswith("not sent: the endpoint gave no answer") for e in errors) == 2, (
            errors
        )
        for delivery in waiting:
            next_attempt = datetime.fromisoformat(delivery["next_attempt_at"].replace("Z", "+00:00")).timestamp()
            assert delivery["status"] == "pending" and next_attempt > time.time() + 500, delivery
    finally:
        other.server.shutdown()
        deployment.close()


@pytest.mark.slow
def test_an_answer_whose_head_the_deadline_cut_is_a_failed_attempt_whatever_its_status_line_said():
    """Issue 62, 1: a receiver that answers `HTTP/1.1 200 OK` at once, then trickles its headers,
    was recorded delivered (http.client ends a head cut short without a word and keeps the 200)."""
    import ssl

    from app.apps import egress
    receiver = TricklingReceiver(head=b"HTTP/1.1 200 OK\r\n")
    try:
        with pytest.raises(TimeoutError):  # each byte within the socket timeout: the deadline cuts the head
            egress.post(receiver.url, b"{}", {"Content-Type": "application/json"}, timeout=1.0,
                        private_allowed=True, context=ssl.create_default_context())
        assert receiver.requests == 1
    finally:
        receiver.close()


def test_apps_whose_receivers_all_hang_leave_another_app_its_attempts():
    """Issue 62, 1: two apps of ten trickling endpoints and two of ten hanging ones (attempts that
    never end) hold at most their share of the pool each, and the pool's last threads are kept for
    an app with none under way: a quiet app's delivery is attempted while they all still hang."""
    from app.apps.attempts import ConcurrentAttempts
    release, quiet_done = threading.Event(), threading.Event()
    started: list[str] = []

    def attempt(app_id, delivery_id):
        started.append(app_id)
        if app_id == "quiet":
            quiet_done.set()
        else:
            release.wait(60)
        return True

    attempts = ConcurrentAttempts(attempt, lambda app_id, delivery_id: delivery_id.split("/")[0],
                                  threads=8, per_endpoint=2, per_app=2)
    try:
        for app_id in NOISY:
            for endpoint in range(10):
                for n in range(3):
                    attempts.submit(app_id, f"{endpoint}/{n}")
        attempts.submit("quiet", "0/0")
        assert quiet_done.wait(30), f"the quiet app waited behind {len(started)} hung attempts"
        assert all(started.count(app_id) <= 2 for app_id in NOISY)  # each held to its share
    finally:
        release.set()
        attempts.pool.shutdown(wait=True)
    assert all(started.count(app_id) == 30 for app_id in NOISY)  # every delivery attempted in the end


NOISY = ("trickling-1", "trickling-2", "hanging-1", "hanging-2")
