"""Rate limits per seat token and per address (fixed one-minute windows kept in Redis), and CORS."""

import hashlib
import time

from flask import current_app, request

from ..store import rate_limit_key
from .common import request_address
from .problems import problem

WINDOW = 60
CORS_ALLOW_HEADERS = "Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, Last-Event-ID"
CORS_EXPOSE_HEADERS = "ETag, Location, X-Pagination, Retry-After, Idempotent-Replayed"


UNLIMITED_BLUEPRINTS = {"health"}  # probes must see the service, not a crowded address


def enforce_rate_limits():
    if request.blueprint in UNLIMITED_BLUEPRINTS:
        return None
    config = current_app.config
    window = int(time.time() // WINDOW)
    checks = [("address", request_address(), config["RATE_LIMIT_PER_ADDRESS"])]
    token = request.headers.get("Authorization")
    if token:
        checks.append(("token", hashlib.sha256(token.encode()).hexdigest(), config["RATE_LIMIT_PER_TOKEN"]))
    checks = [c for c in checks if c[2] > 0]
    if not checks:
        return None
    redis = current_app.extensions["ronda.store"].redis
    pipe = redis.pipeline(transaction=False)
    for kind, ident, _ in checks:
        key = rate_limit_key(kind, ident, window)
        pipe.incr(key)
        pipe.expire(key, WINDOW + 5)
    counts = pipe.execute()[::2]
    for (kind, _, limit), count in zip(checks, counts):
        if count > limit:
            retry_after = str(int(WINDOW - time.time() % WINDOW) + 1)
            return problem(429, "rate_limited", "Too Many Requests",
                           f"more than {limit} requests a minute for this {kind}", headers={"Retry-After": retry_after})
    return None


def cors_preflight():
    if request.method == "OPTIONS" and _allowed_origin() and request.headers.get("Access-Control-Request-Method"):
        response = current_app.make_default_options_response()
        response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
        response.headers["Access-Control-Allow-Headers"] = CORS_ALLOW_HEADERS
        response.headers["Access-Control-Max-Age"] = "600"
        return response
    return None


def add_cors_headers(response):
    origin = _allowed_origin()
    if origin:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Expose-Headers"] = CORS_EXPOSE_HEADERS
        response.headers.add("Vary", "Origin")
    return response


def _allowed_origin():
    origin = request.headers.get("Origin")
    allowed = current_app.config["CORS_ORIGINS"]
    if not origin or not allowed:
        return None
    return origin if "*" in allowed or origin in allowed else None
