"""Idempotency-Key on unsafe requests: a retry with the same key gets the first answer, and
changes nothing. Keys are scoped by route and caller (seat token or address) and kept a day.
A request under way holds its key for a short lease only: one that died (its process killed)
frees the key within seconds, and the retry then runs once. An answer whose record the store
did not take (it dropped for a moment) is kept trying in the background through the lease, so
a retry meanwhile is told to wait and then gets that answer, not a second run.
"""

import base64
import hashlib
import json
import logging
import threading
import time

from flask import current_app, g, request

from ..ops.connection import StoreUnavailable
from ..ops.keys import idempotency_key
from ..ops.request_records import RequestRecords
from .tenancy import APP_HEADER, ON_BEHALF_HEADER, current_app_id
from .common import request_address, services
from ..errors import IdempotencyKeyReused, IdempotentRequestInProgress, InvalidIdempotencyKey

log = logging.getLogger(__name__)
RECORD_RETRY_SECONDS = 0.25
# The POSTs that create something or change a game.
IDEMPOTENT_ENDPOINTS = {"games.Games", "games.Seat", "games.LeaveSeat", "games.Actions", "games.Rematch",
                        "matches.Matches", "tournaments.Tournaments", "bots.Bots", "players.Players",
                        "matchmaking.Tickets",
                        "apps.Webhooks", "apps.WebhookSecret", "apps.TestEvent", "admin.Apps", "admin.RotateKey"}
IN_PROGRESS = "in-progress"
REPLAYED_HEADER = "Idempotent-Replayed"
# The header's value when the first answer was lost but its action is found applied in the game:
# the answer is the game as it is now, with the events that action caused.
APPLIED_BEFORE = "applied"
KEPT_HEADERS = ("Location", "ETag", "Content-Type")
# Their 201 answers carry seat tokens, a bot's or a player's token, never kept: a replay derives them again.
TOKEN_ANSWERS = {"games.Games", "games.Seat", "games.Rematch", "bots.Bots", "players.Players"}
# Their answers carry an app's keys or an endpoint's secret, never kept: a replay finds them again.
SECRET_FIELDS = {"admin.Apps": ("client_key", "server_key"), "admin.RotateKey": ("key",), "apps.Webhooks": ("secret",),
                 "apps.WebhookSecret": ("secret",)}


def _scope(key: str) -> str:
    caller = request.headers.get("Authorization") or request_address()
    if APP_HEADER in request.headers:  # one caller's keys in two apps are two keys
        caller += f" {request.headers[APP_HEADER]}"
    if ON_BEHALF_HEADER in request.headers:  # so are an app's server's for two players
        caller += f" for {request.headers[ON_BEHALF_HEADER]}"
    raw = f"{request.method} {request.path} {caller} {key}"
    return hashlib.sha256(raw.encode()).hexdigest()


def replay_or_reserve():
    key = request.headers.get("Idempotency-Key")
    if key is None or request.method != "POST" or request.endpoint not in IDEMPOTENT_ENDPOINTS:
        return None  # a safe method (OPTIONS, a preflight) never reserves nor replays a key
    if not 1 <= len(key) <= 255:
        raise InvalidIdempotencyKey("a key is 1 to 255 characters")
    records = services().requests
    scope = _scope(key)
    fingerprint = hashlib.sha256(request.get_data()).hexdigest()
    lease = current_app.config["IDEMPOTENCY_LEASE_SECONDS"]
    if records.reserve(scope, {"state": IN_PROGRESS, "fingerprint": fingerprint}, lease):
        g.idempotency = (scope, fingerprint)
        return None
    stored = records.read(scope)
    if stored is None:
        raise IdempotentRequestInProgress("retry in a moment")
    if stored["fingerprint"] != fingerprint:
        raise IdempotencyKeyReused("this key was used with another request body")
    if stored["state"] == IN_PROGRESS:
        raise IdempotentRequestInProgress("the first request with this key is still running; retry in a moment")
    body = stored["body"] if stored.get("token_seats") is None else _with_tokens(stored["body"], stored["token_seats"])
    response = current_app.response_class(body, status=stored["status"])
    response.headers.update(stored["headers"])
    response.headers[REPLAYED_HEADER] = "true"
    return response


def resource_id() -> str | None:
    """An id for what this request creates or changes, the same for every retry of it (same key,
    caller and body), so a retry whose first run died between its write and its record (a killed
    worker process) finds that first resource, or its action applied, instead of a second one (or
    a 412 for its own move). None without a key."""
    reserved = g.get("idempotency")
    if reserved is None:
        return None
    scope, fingerprint = reserved
    digest = hashlib.sha256(f"{idempotency_key(scope)} {fingerprint}".encode()).digest()[:16]
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _without_tokens(response) -> tuple[str, list[int] | None]:
    """The answer as kept: seat tokens left out (the seats are listed), so nothing in Redis lets
    anyone act for a seat. A replay derives them again from the server's secret."""
    text = response.get_data(as_text=True)
    if response.status_code < 300 and request.endpoint in SECRET_FIELDS:
        body = json.loads(text)
        for field in SECRET_FIELDS[request.endpoint]:
            body[field] = None
        return json.dumps(body, separators=(",", ":")), []
    if response.status_code != 201 or request.endpoint not in TOKEN_ANSWERS:
        return text, None
    body = json.loads(text)
    if "tokens" in body:
        for entry in body["tokens"]:
            entry["token"] = None
        return json.dumps(body, separators=(",", ":")), [entry["seat"] for entry in body["tokens"]]
    body["token"] = None
    if "player" in body:  # kept by id alone: the player's name is theirs to change or erase
        body["player"] = {"id": body["player"]["id"]}
    return json.dumps(body, separators=(",", ":")), [body["seat"]] if "seat" in body else []


def _with_tokens(text: str, seats: list[int]) -> str:
    body = json.loads(text)
    if "client_key" in body:  # an app's, made
        keys = services().apps.keys_of(body["app"]["id"])
        body["client_key"], body["server_key"] = keys.get("client"), keys.get("server")
        return json.dumps(body, separators=(",", ":"))
    if "kind" in body and "key" in body:  # an app's key, rotated
        body["key"] = services().apps.keys_of(body["app"]["id"]).get(body["kind"])
        return json.dumps(body, separators=(",", ":"))
    if "secret" in body:  # a webhook endpoint's, made or rotated
        endpoint_id = body["endpoint"]["id"] if "endpoint" in body else body["id"]
        body["secret"] = services().webhooks.secret_of(current_app_id(), endpoint_id)
        return json.dumps(body, separators=(",", ":"))
    if "bot" in body:  # a registered bot's (its seats are none)
        body["token"] = services().accounts.token_of(body["bot"]["id"])
        return json.dumps(body, separators=(",", ":"))
    if "player" in body:  # a player's
        body["player"] = services().players.public(body["player"]["id"])
        body["token"] = services().players.token_of(body["player"]["id"])
        return json.dumps(body, separators=(",", ":"))
    tokens = services().seating.tokens_of(body["game"]["id"], seats)
    if "tokens" in body:
        for entry in body["tokens"]:
            entry["token"] = tokens.get(entry["seat"])  # None once the seat was left to a bot
    else:
        body["token"] = tokens.get(body["seat"])
    return json.dumps(body, separators=(",", ":"))


def remember(response):
    reserved = g.pop("idempotency", None)
    if reserved is None:
        return response
    scope, fingerprint = reserved
    records = services().requests
    try:
        if response.status_code >= 500:
            records.forget(scope)  # the retry may run for real
            return response
        kept = {name: response.headers[name] for name in KEPT_HEADERS if name in response.headers}
        body, token_seats = _without_tokens(response)
        record = {"state": "done", "fingerprint": fingerprint, "status": response.status_code,
                  "headers": kept, "body": body, "token_seats": token_seats}
        ttl = current_app.config["IDEMPOTENCY_TTL"]
        try:
            records.keep(scope, record, ttl)
        except StoreUnavailable:  # the answer stands; its record follows once the store answers
            lease_ends = time.monotonic() + current_app.config["IDEMPOTENCY_LEASE_SECONDS"]
            threading.Thread(target=_keep_trying, args=(records, scope, record, ttl, lease_ends), daemon=True).start()
    except StoreUnavailable:  # the key frees itself when its lease runs out
        current_app.logger.warning("idempotency record not cleared: the store does not answer")
    return response


def _keep_trying(records: RequestRecords, scope: str, record: dict, ttl: int, lease_ends: float):
    """Write an answer's record until the store takes it or the lease is over (then a retry runs
    for real, as after a process that died)."""
    while time.monotonic() < lease_ends:
        time.sleep(RECORD_RETRY_SECONDS)
        try:
            records.keep(scope, record, ttl)
            return
        except StoreUnavailable:
            continue
    log.warning("idempotency record not kept: the store did not answer within the lease")
