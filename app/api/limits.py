"""Rate limits and CORS, with the field's maintained libraries: Flask-Limiter (fixed one-minute
windows in the game store's Redis, so every process shares them) and flask-cors.

Budgets a minute, each its own bucket across every route: per client address (the real one
behind trusted proxies, see RONDA_TRUSTED_PROXIES), per seat token, and per bot token. A
registered bot's requests count on its token's budget, sized for matches, and not on its
address's (one address may run many bots); a bot token that fails to authenticate counts on the
address's. The headers show the token's budget when a token is sent, else the address's.
Probes are exempt.
"""

import hashlib

from flask import request
from flask_cors import CORS
from flask_limiter import ApplicationLimit, ExemptionScope, Limiter

from ..accounts.service import TOKEN_PREFIX
from .common import request_address

CORS_ALLOW_HEADERS = ["Authorization", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key",
                      "Last-Event-ID", "X-Request-ID"]
CORS_EXPOSE_HEADERS = ["ETag", "Location", "X-Pagination", "Retry-After", "Idempotent-Replayed", "X-Request-ID",
                       "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]


def _token_key() -> str:
    return hashlib.sha256(request.headers.get("Authorization", "").encode()).hexdigest()


def _bot_token() -> bool:
    return request.headers.get("Authorization", "").startswith(f"Bearer {TOKEN_PREFIX}")


def _seat_token() -> bool:
    return bool(request.headers.get("Authorization")) and not _bot_token()


def _storage(config, redis_client) -> tuple[str, dict]:
    """Where limits are counted: the games' Redis (through its pool), or its cluster."""
    if config["REDIS_CLUSTER_URL"]:
        return config["REDIS_CLUSTER_URL"].replace("redis://", "redis+cluster://", 1), {}
    if not config["REDIS_URL"]:
        return "memory://", {}  # the in-process store: one process, so its memory is shared enough
    return config["REDIS_URL"].replace("unix://", "redis+unix://", 1), {"connection_pool": redis_client.connection_pool}


def retry_after_where_it_means_something(response):
    """Retry-After only on 429 and 503, and never 0: Flask-Limiter writes it on every answer, as the
    whole seconds left in the window, which rounds to 0 in the window's last second."""
    if response.status_code in (429, 503):
        seconds = response.headers.get("Retry-After", "1")
        response.headers["Retry-After"] = str(max(1, int(seconds))) if seconds.isdigit() else seconds
    else:
        response.headers.pop("Retry-After", None)
    return response


def install(app, redis_client, exempt_blueprints):
    """Limits counted in the store's Redis, through its bounded connection pool."""
    config = app.config
    # Flask runs after-request functions last registered first: this one runs after the limiter's.
    app.after_request(retry_after_where_it_means_something)
    # In this order: of budgets with the same window, Flask-Limiter's headers show the first that applies.
    limits = []
    if config["RATE_LIMIT_PER_BOT_TOKEN"]:
        limits.append(ApplicationLimit(f"{config['RATE_LIMIT_PER_BOT_TOKEN']}/minute", key_function=_token_key,
                                       exempt_when=lambda: not _bot_token(), scope="bot-token"))
    if config["RATE_LIMIT_PER_TOKEN"]:
        limits.append(ApplicationLimit(f"{config['RATE_LIMIT_PER_TOKEN']}/minute", key_function=_token_key,
                                       exempt_when=lambda: not _seat_token(), scope="token"))
    if config["RATE_LIMIT_PER_ADDRESS"]:
        per_address = f"{config['RATE_LIMIT_PER_ADDRESS']}/minute"
        limits.append(ApplicationLimit(per_address, key_function=request_address, exempt_when=_bot_token,
                                       scope="address"))
        # The same bucket: a false bot token costs its address, so made-up tokens buy no budget.
        limits.append(ApplicationLimit(per_address, key_function=request_address, scope="address",
                                       exempt_when=lambda: not _bot_token(),
                                       deduct_when=lambda response: response.status_code == 401))
    storage_uri, storage_options = _storage(config, redis_client)
    limiter = Limiter(request_address, app=app, application_limits=limits, enabled=bool(limits),
                      storage_uri=storage_uri, storage_options=storage_options, headers_enabled=True,
                      strategy="fixed-window", key_prefix="ratelimit",
                      # A limit store that fails lets the request through (logged): the request's own
                      # store calls answer 503 if Redis is really down; the limiter never makes a 500.
                      swallow_errors=True)
    for exempt in exempt_blueprints:
        limiter.exempt(exempt, flags=ExemptionScope.APPLICATION | ExemptionScope.DEFAULT)
    if config["CORS_ORIGINS"]:
        CORS(app, origins=config["CORS_ORIGINS"], methods=["GET", "POST", "OPTIONS"], max_age=600,
             allow_headers=CORS_ALLOW_HEADERS, expose_headers=CORS_EXPOSE_HEADERS)
        app.after_request(_varies_by_origin)


def _varies_by_origin(response):
    """Answers differ by Origin (allowed or not): caches must keep them apart."""
    response.vary.add("Origin")
    return response

