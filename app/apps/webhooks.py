"""Signed webhooks by the Standard Webhooks spec (standardwebhooks.com), so an app's server checks
a delivery with a published `standardwebhooks` library instead of code of its own.

Every delivery carries `webhook-id` (the same on every attempt: a receiver drops repeats by it),
`webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
under the endpoint's secret `whsec_<base64>`. The body is `{"type", "timestamp", "data"}`.

Deliveries are at least once: each is noted as due before it is kept, attempted by an RQ job on
a queue of its own (a slow endpoint never holds up a bot move), and an attempt under way holds it
for `lease_seconds` only, so one cut off by a killed worker is attempted again by the sweep. A
failed attempt is tried again after the next of `retry_seconds` (about a day in all, by
default); after the last the delivery is kept as failed, and can be sent again.
"""

import base64
import hashlib
import hmac
import http.client
import json
import logging
import secrets
import ssl
import threading
import time
from typing import Any

from ..errors import DeliveryNotFound, InvalidRequest, WebhookNotFound
from ..games.records import utc_at
from ..ops.connection import StoreUnavailable
from ..ops import metrics
from . import egress
from ..ops.scope import PUBLIC_APP
from .webhook_store import WebhookStore

log = logging.getLogger(__name__)

PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
STATUSES = (PENDING, DELIVERED, FAILED)
ENDPOINT_DISABLED, WEBHOOK_TEST = "endpoint_disabled", "webhook_test"  # the app's own events, not a player's
ENDPOINT_CACHE_SECONDS = 2.0
MAX_ENDPOINTS = 10


def signature(secrets_: list[str], message_id: str, timestamp: int, body: str) -> str:
    """The `webhook-signature` value for one attempt (Standard Webhooks, scheme v1): one signature
    per secret, space-separated (an endpoint whose secret is being rotated has two)."""
    signed = f"{message_id}.{timestamp}.{body}".encode()
    macs = (hmac.new(base64.b64decode(secret.removeprefix("whsec_")), signed, hashlib.sha256).digest()
            for secret in secrets_)
    return " ".join(f"v1,{base64.b64encode(mac).decode()}" for mac in macs)


def new_secret() -> str:
    return f"whsec_{base64.b64encode(secrets.token_bytes(24)).decode()}"


class WebhookService:
    def __init__(self, store: WebhookStore, dispatcher, utc_now, retry_seconds: list[float], timeout_seconds: float,
                 lease_seconds: float, pause_seconds: float, private_networks: bool, disable_after_seconds: float):
        """`pause_seconds`: how long an endpoint that gave no answer gets no attempt; `private_networks`:
        whether endpoints may be on private networks (app/apps/egress.py); `disable_after_seconds`:
        how long an endpoint's attempts may all fail before it is disabled."""
        self.store, self.dispatcher, self.utc_now = store, dispatcher, utc_now
        self.retry_seconds, self.timeout_seconds, self.lease_seconds = retry_seconds, timeout_seconds, lease_seconds
        self.pause_seconds, self.disable_after_seconds = pause_seconds, disable_after_seconds
        self.private_networks = private_networks
        self._tls: ssl.SSLContext | None = None  # made at the first attempt: only webhook workers post
        self._cache: dict[str, tuple[float, dict]] = {}
        self._lock = threading.Lock()

    # ----- endpoints ---------------------------------------------------------------------------
    def register(self, app_id: str, url: str, events: list[str], endpoint_id: str | None = None) -> dict:
        """A new endpoint, with its secret (shown only here). `endpoint_id`, when given, is the
        same for every retry of one request: a retry finds the endpoint its first run made."""
        if endpoint_id is not None and (made := self.store.endpoints(app_id).get(endpoint_id)) is not None:
            return {**_public_endpoint(made), "secret": made["secret"]}
        if len(self.store.endpoints(app_id)) >= MAX_ENDPOINTS:
            raise InvalidRequest(f"an app has at most {MAX_ENDPOINTS} webhook endpoints", field="url")
        refused = None if self.private_networks else egress.refused_host(url)
        if refused:
            raise InvalidRequest(f"webhooks are not sent to private networks: {refused}", field="url")
        endpoint = {"id": endpoint_id or f"ep_{secrets.token_hex(8)}", "url": url, "events": sorted(set(events)),
                    "secret": new_secret(),
                    "created_at": self.utc_now()}
        self.store.save_endpoint(app_id, endpoint)
        self._forget(app_id)
        return endpoint

    def endpoints(self, app_id: str) -> list[dict]:
        found = self.store.endpoints(app_id)
        failing = self.store.failing(app_id, list(found))
        return sorted((_public_endpoint(e, failing.get(e["id"])) for e in found.values()),
                      key=lambda e: e["created_at"])

    def endpoint(self, app_id: str, endpoint_id: str) -> dict:
        found = self._endpoint(app_id, endpoint_id)
        return _public_endpoint(found, self.store.failing(app_id, [endpoint_id]).get(endpoint_id))

    def _endpoint(self, app_id: str, endpoint_id: str) -> dict:
        found = self.store.endpoints(app_id).get(endpoint_id)
        if found is None:
            raise WebhookNotFound(f"no webhook endpoint {endpoint_id} in this app")
        return found

    def update(self, app_id: str, endpoint_id: str, changes: dict) -> dict:
        """Change an endpoint's URL, events or whether it is enabled; its deliveries stay, and those
        pending go to the new URL. Enabling a disabled endpoint starts its failing clock again."""
        endpoint = self._endpoint(app_id, endpoint_id)
        if "url" in changes:
            refused = None if self.private_networks else egress.refused_host(changes["url"])
            if refused:
                raise InvalidRequest(f"webhooks are not sent to private networks: {refused}", field="url")
            endpoint["url"] = changes["url"]
        if "events" in changes:
            endpoint["events"] = sorted(set(changes["events"]))
        if changes.get("enabled") is True:
            endpoint["disabled_at"] = None
            self.store.answered(app_id, endpoint_id)
        elif changes.get("enabled") is False:
            endpoint["disabled_at"] = endpoint.get("disabled_at") or self.utc_now()
        self.store.save_endpoint(app_id, endpoint)
        self._forget(app_id)
        return self.endpoint(app_id, endpoint_id)

    def rotate_secret(self, app_id: str, endpoint_id: str, grace_seconds: float) -> tuple[dict, str]:
        """A new signing secret; for `grace_seconds` every delivery is signed with the old one too
        (two `v1,` signatures), so a receiver switches without missing one."""
        endpoint = self._endpoint(app_id, endpoint_id)
        now = time.time()
        kept = [old for old in endpoint.get("previous_secrets", []) if old["until"] > now]
        endpoint["previous_secrets"] = [*kept, {"secret": endpoint["secret"], "until": now + grace_seconds}]
        endpoint["secret"] = new_secret()
        self.store.save_endpoint(app_id, endpoint)
        self._forget(app_id)
        return self.endpoint(app_id, endpoint_id), endpoint["secret"]

    def secret_of(self, app_id: str, endpoint_id: str) -> str | None:
        """An endpoint's signing secret (an idempotent replay's answer); None for one removed since."""
        found = self.store.endpoints(app_id).get(endpoint_id)
        return found["secret"] if found else None

    def remove(self, app_id: str, endpoint_id: str):
        if not self.store.remove_endpoint(app_id, endpoint_id):
            raise WebhookNotFound(f"no webhook endpoint {endpoint_id} in this app")
        self._forget(app_id)

    # ----- deliveries --------------------------------------------------------------------------
    def publish(self, app_id: str, event_type: str, data: dict, once: str | None = None):
        """One delivery to each of the app's endpoints that takes `event_type`. The public app has
        none (it has no key to register them with). A store that fails loses this message only.
        `once`: the message's key; published again, it makes no second delivery while the first is
        kept, and one of the same id after. A keyed message is not given up when the store fails:
        the error goes to the caller, which publishes it again later."""
        if app_id == PUBLIC_APP:
            return
        try:
            endpoints = [e for e in self._endpoints(app_id).values()
                         if event_type in e["events"] and not e.get("disabled_at")]
            body = json.dumps({"type": event_type, "timestamp": utc_at(time.time()), "data": data},
                              separators=(",", ":"))
            for endpoint in endpoints:
                self._deliver(app_id, endpoint["id"], event_type, body, once)
        except StoreUnavailable:
            if once:
                raise
            log.warning("could not note the %s webhook of app %s", event_type, app_id)

    def send_test(self, app_id: str, endpoint_id: str) -> dict:
        """A `webhook_test` delivery to one endpoint (enabled or not), signed and retried as any."""
        self._endpoint(app_id, endpoint_id)
        body = json.dumps({"type": WEBHOOK_TEST, "timestamp": utc_at(time.time()),
                           "data": {"endpoint_id": endpoint_id}}, separators=(",", ":"))
        delivery_id = self._deliver(app_id, endpoint_id, WEBHOOK_TEST, body)
        found = self.store.delivery(app_id, delivery_id)
        assert found is not None  # kept just now
        return _public_delivery(found)

    def recover(self, app_id: str, endpoint_id: str, since: float) -> int:
        """Send again every failed delivery of the endpoint made since then (Svix's recover):
        how many were queued."""
        self._endpoint(app_id, endpoint_id)
        failed, _ = self.store.listed(app_id, endpoint_id, 0, 1_000_000, FAILED)
        chosen = [d for d in failed if d["created_ms"] >= since * 1000]
        for delivery in chosen:
            self._send_again(app_id, delivery)
        return len(chosen)

    def _deliver(self, app_id: str, endpoint_id: str, event_type: str, body: str, once: str | None = None) -> str:
        now, delivery_id = time.time(), _delivery_id(endpoint_id, once)
        delivery = {"id": delivery_id, "endpoint_id": endpoint_id, "type": event_type,
                    "payload": body, "status": PENDING, "attempts": [], "created_at": utc_at(now),
                    "created_ms": int(now * 1000), "next_attempt_at": now}
        lease = int((now + self.lease_seconds) * 1000)
        if self.store.add_delivery(app_id, delivery, lease):
            self.dispatcher.deliver_webhook(app_id, delivery_id, lease)
        return delivery_id

    def redact(self, app_id: str, needles: list[bytes], replacement: str) -> int:
        """Deliveries still kept that mention an erased person keep their shape, each mention replaced."""
        return self.store.redact(app_id, needles, replacement) if app_id != PUBLIC_APP else 0

    def deliveries(self, app_id: str, endpoint_id: str, offset: int, limit: int,
                   status: str | None = None) -> tuple[list[dict], int]:
        self._endpoint(app_id, endpoint_id)
        found, total = self.store.listed(app_id, endpoint_id, offset, limit, status)
        return [_public_delivery(d) for d in found], total

    def resend(self, app_id: str, endpoint_id: str, delivery_id: str) -> dict:
        """Send a delivery again, whatever became of it, with its `webhook-id` (a new attempt)."""
        delivery = self.store.delivery(app_id, delivery_id)
        if delivery is None or delivery["endpoint_id"] != endpoint_id:
            raise DeliveryNotFound(f"no delivery {delivery_id} of endpoint {endpoint_id}")
        return _public_delivery(self._send_again(app_id, delivery))

    def _send_again(self, app_id: str, delivery: dict) -> dict:
        delivery_id = delivery["id"]
        previous = delivery["status"]
        delivery.update(status=PENDING, next_attempt_at=time.time(), resent=delivery.get("resent", 0) + 1)
        if previous != PENDING:
            self.store.move(app_id, delivery, previous)
        lease = int((time.time() + self.lease_seconds) * 1000)
        self.store.schedule(app_id, delivery_id, lease)
        self.dispatcher.deliver_webhook(app_id, delivery_id, lease)
        return delivery

    def endpoint_of(self, app_id: str, delivery_id: str) -> str | None:
        """The endpoint a delivery goes to (None for a delivery gone)."""
        delivery = self.store.delivery(app_id, delivery_id)
        return delivery["endpoint_id"] if delivery else None

    def attempt(self, app_id: str, delivery_id: str) -> bool:
        """One attempt of a pending delivery (an RQ job): True when the endpoint took it."""
        delivery = self.store.delivery(app_id, delivery_id)
        endpoint = self.store.endpoints(app_id).get(delivery["endpoint_id"]) if delivery else None
        if delivery is None or delivery["status"] != PENDING:
            self.store.unschedule(app_id, delivery_id)
            return False
        started = time.time()
        self.store.schedule(app_id, delivery_id, int((started + self.lease_seconds) * 1000))
        outcome, paused = self._outcome(app_id, endpoint, delivery_id, delivery["payload"], started)
        outcome.update(at=utc_at(started), seconds=round(time.time() - started, 3))
        delivery["attempts"].append(outcome)
        code = outcome["status_code"]
        ok = code is not None and 200 <= code < 300
        if endpoint is not None:
            self._count(app_id, endpoint, outcome, ok)
        if ok or endpoint is None or len(delivery["attempts"]) > len(self.retry_seconds):
            delivery.update(status=DELIVERED if ok else FAILED, next_attempt_at=None)
            self.store.move(app_id, delivery, PENDING)
            self.store.unschedule(app_id, delivery_id)
        else:
            delivery["next_attempt_at"] = time.time() + max(self.retry_seconds[len(delivery["attempts"]) - 1], paused)
            self.store.move(app_id, delivery, PENDING)
            self.store.schedule(app_id, delivery_id, int(delivery["next_attempt_at"] * 1000))
        return ok

    def _count(self, app_id: str, endpoint: dict, outcome: dict, ok: bool):
        """An attempt's metrics, and the endpoint's health: one failing for `disable_after_seconds`
        is disabled, and the app told (`endpoint_disabled`, to its other endpoints)."""
        sent = not outcome.get("error", "").startswith("not sent")
        kind = "delivered" if ok else "failed" if outcome["status_code"] is not None else \
            "no_answer" if sent else "not_sent"
        metrics.WEBHOOK_ATTEMPTS.labels(app_id, endpoint["id"], kind).inc()
        if sent:
            metrics.WEBHOOK_ATTEMPT_SECONDS.labels(app_id, endpoint["id"]).observe(outcome["seconds"])
        if ok:
            self.store.answered(app_id, endpoint["id"])
            return
        now = time.time()
        if sent and now - self.store.failing_since(app_id, endpoint["id"], now) >= self.disable_after_seconds \
                and not endpoint.get("disabled_at"):
            self.update(app_id, endpoint["id"], {"enabled": False})
            self.publish(app_id, ENDPOINT_DISABLED, {"endpoint_id": endpoint["id"], "url": endpoint["url"]})

    def _outcome(self, app_id: str, endpoint: dict | None, delivery_id: str, body: str,
                 started: float) -> tuple[dict[str, Any], float]:
        """An attempt (posted, or not to a removed or paused endpoint), and the seconds its endpoint
        is paused from now (0: not). An endpoint that gives no answer (timed out, refused,
        unreachable) is paused, so that the deliveries queued behind one dead endpoint (any app's)
        do not each wait out its timeout: they count an attempt not sent and come again when the
        pause ends, when one of them tries the endpoint again."""
        if endpoint is None:
            return {"status_code": None, "error": "the endpoint was removed"}, 0.0
        paused = self.store.pause_left(app_id, endpoint["id"])
        if paused:
            return {"status_code": None,
                    "error": f"not sent: the endpoint gave no answer to an attempt; paused {paused:.1f} s more"}, paused
        outcome = self._post(endpoint, delivery_id, body, started)
        if outcome["status_code"] is not None:
            return outcome, 0.0
        self.store.pause(app_id, endpoint["id"], self.pause_seconds)
        return outcome, self.pause_seconds

    def _post(self, endpoint: dict, delivery_id: str, body: str, now: float) -> dict:
        timestamp = int(now)
        headers = {"content-type": "application/json", "user-agent": "ronda-webhooks/1",
                   "webhook-id": delivery_id, "webhook-timestamp": str(timestamp),
                   "webhook-signature": signature(
                       [endpoint["secret"], *(old["secret"] for old in endpoint.get("previous_secrets", [])
                                              if old["until"] > now)], delivery_id, timestamp, body)}
        try:
            code = egress.post(endpoint["url"], body.encode(), headers, self.timeout_seconds, self.private_networks,
                               self._tls_context())
        except (OSError, ValueError, http.client.HTTPException) as error:  # refused, unreachable, timed out
            return {"status_code": None, "error": str(error) or type(error).__name__}
        return {"status_code": code} if 200 <= code < 300 else {"status_code": code, "error": f"HTTP {code}"}

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context()
        return self._tls

    def sweep(self, limit: int = 500) -> int:
        """Queue every delivery due by now (a retry whose time came, or an attempt cut off): one job
        per lease that ended, however many sweeps find it."""
        now = time.time()
        due = self.store.due(int(now * 1000), limit)
        for app_id, delivery_id, ended in due:
            self.store.schedule(app_id, delivery_id, int((now + self.lease_seconds) * 1000))
            self.dispatcher.deliver_webhook(app_id, delivery_id, ended)
        return len(due)

    def counts(self, app_id: str) -> dict[str, int]:
        return self.store.counts(app_id)

    def _endpoints(self, app_id: str) -> dict[str, dict]:
        now = time.monotonic()
        with self._lock:
            found = self._cache.get(app_id)
        if found is not None and found[0] > now:
            return found[1]
        endpoints = self.store.endpoints(app_id)
        with self._lock:
            self._cache[app_id] = (now + ENDPOINT_CACHE_SECONDS, endpoints)
        return endpoints

    def _forget(self, app_id: str):
        with self._lock:
            self._cache.pop(app_id, None)


def _public_endpoint(endpoint: dict, failing_since: float | None = None) -> dict:
    now = time.time()
    grace = [old["until"] for old in endpoint.get("previous_secrets", []) if old["until"] > now]
    return {**{key: endpoint[key] for key in ("id", "url", "events", "created_at")},
            "enabled": not endpoint.get("disabled_at"), "disabled_at": endpoint.get("disabled_at"),
            "failing_since": utc_at(failing_since) if failing_since else None,
            "old_secret_until": utc_at(max(grace)) if grace else None}


def _public_delivery(delivery: dict) -> dict:
    return {"id": delivery["id"], "endpoint_id": delivery["endpoint_id"], "type": delivery["type"],
            "status": delivery["status"], "created_at": delivery["created_at"],
            "next_attempt_at": utc_at(delivery["next_attempt_at"]) if delivery["next_attempt_at"] else None,
            "attempts": delivery["attempts"], "payload": json.loads(delivery["payload"])}


def _delivery_id(endpoint_id: str, once: str | None) -> str:
    """A new message's id; a keyed message's is its key's digest, the same each time it is told."""
    if once is None:
        return f"msg_{secrets.token_urlsafe(16)}"
    digest = hashlib.sha256(f"{endpoint_id}:{once}".encode()).digest()[:16]
    return f"msg_{base64.urlsafe_b64encode(digest).decode().rstrip('=')}"
