"""Rate limits and CORS (flask-cors).

Budgets a minute, each its own count across every route: per client address (the real one
behind trusted proxies, see RONDA_TRUSTED_PROXIES), per seat token, and per bot token; on top,
per app (its quota of requests a minute). A 429 names the budget spent (`budget`). A
registered bot's requests count on its token's budget, sized for matches, and not on its
address's (one address may run many bots); a bot token that fails to authenticate counts on the
address's. The headers show the token's budget when a token is sent, else the address's.
Probes and CORS preflights are exempt.

Counting costs a request far from its budget no Redis round trip: each process counts in memory
and shares its counts through Redis in the background; near a budget a request counts in Redis
(one round trip), so the budget holds across processes (app/ops/window_counts.py). Redis down
never fails a request here: it is then judged by this process's estimate.
"""

import hashlib
import time
from typing import NamedTuple, NoReturn

from flask import g, request
from flask_cors import CORS

from ..accounts.service import TOKEN_PREFIX
from ..errors import RateLimited
from ..ops.window_counts import WINDOW_SECONDS, WindowCounts
from .common import request_address
from .tenancy import ON_BEHALF_HEADER

CORS_ALLOW_HEADERS = ["Authorization", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key",
                      "Last-Event-ID", "X-Request-ID", "X-Ronda-App"]
CORS_EXPOSE_HEADERS = ["ETag", "Location", "X-Pagination", "Retry-After", "Idempotent-Replayed", "X-Request-ID",
                       "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]


BOT_BEARER = f"Bearer {TOKEN_PREFIX}"


class Budget(NamedTuple):
    scope: str  # "bot-token", "token" (a seat's) or "address"
    per_minute: int


def budgets(config) -> list[Budget]:
    """In the order the headers prefer: the first that applies is shown."""
    found = [Budget("bot-token", config["RATE_LIMIT_PER_BOT_TOKEN"]), Budget("token", config["RATE_LIMIT_PER_TOKEN"]),
             Budget("address", config["RATE_LIMIT_PER_ADDRESS"])]
    return [budget for budget in found if budget.per_minute]


class Limits:
    def __init__(self, config, counts: WindowCounts, exempt_blueprints, app_quotas):
        """`app_quotas(app id)`: an app's quotas, whose requests a minute count on top of the rest."""
        self.budgets, self.app_quotas = budgets(config), app_quotas
        self.address = next((b for b in self.budgets if b.scope == "address"), None)
        self.counts = counts
        self.exempt = {blueprint.name for blueprint in exempt_blueprints}

    def check(self):
        """Before a request: refuse it (429) if a budget it falls under is spent, else count it."""
        if request.method == "OPTIONS" or request.blueprint in self.exempt:
            return
        # The app's server acting for a player counts on that player's budget, not on its own address.
        authorization = request.headers.get("Authorization") or request.headers.get(ON_BEHALF_HEADER, "")
        kind = "bot-token" if authorization.startswith(BOT_BEARER) else "token" if authorization else None
        token = f"{kind}:{hashlib.sha256(authorization.encode()).hexdigest()[:32]}" if kind else None
        address = f"address:{request_address()}"
        # A bot's requests count on its token, not its address (false bot tokens spent it: checked, not counted).
        applying = [(budget, token if token is not None and budget.scope == kind else address)
                    for budget in self.budgets
                    if budget.scope == kind or (budget.scope == "address" and kind != "bot-token")]
        window = WindowCounts.window(time.time())
        if self.address and kind == "bot-token" and self.counts.estimate(address, window) >= self.address.per_minute:
            _refuse(self.address, window)  # false bot tokens from this address spent its budget
        for index, (budget, name) in enumerate(applying):
            total = self.counts.spend(name, window, budget.per_minute)
            if total is None:
                _refuse(budget, window)
            if index == 0:
                g.rate_limit = (budget.per_minute, max(0, budget.per_minute - total), (window + 1) * WINDOW_SECONDS)
        app_id = g.get("app_id")
        per_minute = self.app_quotas(app_id)["requests_per_minute"] if app_id else 0
        if per_minute and self.counts.spend(f"app:{app_id}", window, per_minute) is None:
            _refuse(Budget("app", per_minute), window)

    def after(self, response):
        """The headers of the budget shown; a false bot token costs its address."""
        if response.status_code == 401 and self.address and request.headers.get("Authorization", "").startswith(
                BOT_BEARER):
            self.counts.add(f"address:{request_address()}", WindowCounts.window(time.time()))
        shown = g.pop("rate_limit", None)
        if shown is not None:
            limit, remaining, reset = shown
            response.headers["X-RateLimit-Limit"] = str(limit)
            response.headers["X-RateLimit-Remaining"] = str(remaining)
            response.headers["X-RateLimit-Reset"] = str(reset)
        return response


def _refuse(budget: Budget, window: int) -> NoReturn:
    g.rate_limit = (budget.per_minute, 0, (window + 1) * WINDOW_SECONDS)
    raise RateLimited(f"more than {budget.per_minute} requests a minute for this {budget.scope}",
                      retry_after=max(1, int((window + 1) * WINDOW_SECONDS - time.time())), budget=budget.scope)


def install(app, counts: WindowCounts, exempt_blueprints, app_quotas):
    """Limits counted in this process and shared through the store's Redis (`counts`); CORS when configured."""
    limits = Limits(app.config, counts, exempt_blueprints, app_quotas)
    app.before_request(limits.check)
    app.after_request(limits.after)
    if app.config["CORS_ORIGINS"]:
        CORS(app, origins=app.config["CORS_ORIGINS"], methods=["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
             max_age=600, allow_headers=CORS_ALLOW_HEADERS, expose_headers=CORS_EXPOSE_HEADERS)
        app.after_request(_varies_by_origin)


def _varies_by_origin(response):
    """Answers differ by Origin (allowed or not): caches must keep them apart."""
    response.vary.add("Origin")
    return response
