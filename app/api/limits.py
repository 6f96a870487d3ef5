"""Rate limits and CORS (flask-cors).

Budgets a minute, each its own count across every route: per client address (the real one
behind trusted proxies, see RONDA_TRUSTED_PROXIES), per seat token, and per bot token; on top,
per app (its quota of requests a minute). A 429 names the budget spent (`budget`). A
registered bot's requests count on its token's budget, sized for matches, and not on its
address's (one address may run many bots, beside its people); a bot token that fails to
authenticate counts on the address's, and once such guesses alone have spent it, the address's
bot tokens are refused too. The headers show the token's budget when a token is sent, else the address's.
Probes and CORS preflights are exempt.

Counting costs a request far from its budget no Redis round trip: each process counts in memory
and shares its counts through Redis in the background; near a budget a request counts in Redis
(one round trip), so the budget holds across processes (app/ops/window_counts.py). Redis down
never fails a request here: it is then judged by this process's estimate.
"""

import hashlib
import time
from typing import NamedTuple

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


CORS_METHODS = ["GET", "POST", "PATCH", "DELETE", "OPTIONS"]
CORS_MAX_AGE = 600
BOT_BEARER = f"Bearer {TOKEN_PREFIX}"


class Budget(NamedTuple):
    scope: str  # "bot-token", "token" (a seat's) or "address"
    per_minute: int


class Shown(NamedTuple):
    """The budget an answer shows: requests a minute, left in this window, the window's end."""

    limit: int
    remaining: int
    reset: int


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
        g.rate_limit, refusal = self.judge(request.headers, request_address(), g.get("app_id"))
        if refusal is not None:
            raise refusal

    def judge(self, headers, address: str, app_id: str | None) -> tuple[Shown | None, RateLimited | None]:
        """Count a request with these headers, from this client address, in this app (None: outside
        apps): the budget its answer shows, and the refusal (429) when a budget it falls under is spent."""
        # The app's server acting for a player counts on that player's budget, not on its own address.
        authorization = headers.get("Authorization") or headers.get(ON_BEHALF_HEADER, "")
        kind = "bot-token" if authorization.startswith(BOT_BEARER) else "token" if authorization else None
        token = f"{kind}:{hashlib.sha256(authorization.encode()).hexdigest()[:32]}" if kind else None
        client = f"address:{address}"
        # A bot's requests count on its token, not its address (false bot tokens spent it: checked, not counted).
        applying = [(budget, token if token is not None and budget.scope == kind else client)
                    for budget in self.budgets
                    if budget.scope == kind or (budget.scope == "address" and kind != "bot-token")]
        window = WindowCounts.window(time.time())
        if self.address and kind == "bot-token" and \
                self.counts.estimate(_bot_guesses(address), window) >= self.address.per_minute:
            return _refusal(self.address, window)
        shown = None
        for index, (budget, name) in enumerate(applying):
            total = self.counts.spend(name, window, budget.per_minute)
            if total is None:
                return _refusal(budget, window)
            if index == 0:
                shown = Shown(budget.per_minute, max(0, budget.per_minute - total), (window + 1) * WINDOW_SECONDS)
        per_minute = self.app_quotas(app_id)["requests_per_minute"] if app_id else 0
        if per_minute and self.counts.spend(f"app:{app_id}", window, per_minute) is None:
            return _refusal(Budget("app", per_minute), window)
        return shown, None

    def after(self, response):
        """The headers of the budget shown; a false bot token costs its address."""
        self.answered(response.status_code, request.headers, request_address())
        response.headers.update(rate_limit_headers(g.pop("rate_limit", None)))
        return response

    def answered(self, status: int, headers, address: str):
        """A request was answered `status`: a false bot token (401) costs its address."""
        if status == 401 and self.address and headers.get("Authorization", "").startswith(BOT_BEARER):
            window = WindowCounts.window(time.time())
            self.counts.add(f"address:{address}", window)
            self.counts.add(_bot_guesses(address), window)


def _bot_guesses(address: str) -> str:
    """False bot tokens from an address: what refuses its bot tokens, not its people's requests."""
    return f"bot-guesses:{address}"


def rate_limit_headers(shown: Shown | None) -> dict:
    if shown is None:
        return {}
    return {"X-RateLimit-Limit": str(shown.limit), "X-RateLimit-Remaining": str(shown.remaining),
            "X-RateLimit-Reset": str(shown.reset)}


def _refusal(budget: Budget, window: int) -> tuple[Shown, RateLimited]:
    return Shown(budget.per_minute, 0, (window + 1) * WINDOW_SECONDS), RateLimited(
        f"more than {budget.per_minute} requests a minute for this {budget.scope}",
        retry_after=max(1, int((window + 1) * WINDOW_SECONDS - time.time())), budget=budget.scope)


def install(app, counts: WindowCounts, exempt_blueprints, app_quotas):
    """Limits counted in this process and shared through the store's Redis (`counts`); CORS when configured."""
    limits = Limits(app.config, counts, exempt_blueprints, app_quotas)
    app.before_request(limits.check)
    app.after_request(limits.after)
    if app.config["CORS_ORIGINS"]:
        CORS(app, **cors_options(app.config))
        app.after_request(_varies_by_origin)


def cors_options(config) -> dict:
    """flask-cors' options: the API's, and the stream gateway's (which runs flask-cors' own rules)."""
    return {"origins": config["CORS_ORIGINS"], "methods": CORS_METHODS, "max_age": CORS_MAX_AGE,
            "allow_headers": CORS_ALLOW_HEADERS, "expose_headers": CORS_EXPOSE_HEADERS}


def _varies_by_origin(response):
    """Answers differ by Origin (allowed or not): caches must keep them apart."""
    response.vary.add("Origin")
    return response
