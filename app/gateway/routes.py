"""The gateway's answers: the live streams' URLs, each request judged as the API judges it (the app
it acts in, its token, its rate limits, CORS, its request id; its refusals as problem+json), with
no web framework in the way. app/gateway/server.py reads the requests and writes the answers.

The streams themselves are the API's (app/api/live_streams.py): same snapshot first, same events,
same Last-Event-ID resume, same `problem` event and `retry:` hints.
"""

import json
import logging
import re
from collections.abc import Callable, Generator, Mapping
from typing import Any, NamedTuple, cast
from urllib.parse import unquote

from flask_cors.core import DEFAULT_OPTIONS, get_cors_headers, serialize_options

from ..engine.errors import RondaError
from ..errors import ServiceError
from ..live.streams import SSE_HEADERS, SSE_MEDIA_TYPE, Live
from ..ops import metrics
from ..ops.connection import StoreUnavailable
from ..ops.logs import REQUEST_ID_HEADER, request_id_of
from ..api.common import bearer_of
from ..api.health import health_of, readiness
from ..api.limits import Limits, cors_options, rate_limit_headers
from ..api.live_streams import LAST_EVENT_ID_HEADER, game_stream, notices_stream, tournament_stream, turns_stream
from ..api.problems import (CODE_BY_STATUS, PROBLEM_MEDIA_TYPE, UNEXPECTED, problem_fields, typed_problem,
                            unavailable_problem)
from ..api.tenancy import enter

log = logging.getLogger(__name__)
JSON_MEDIA_TYPE = "application/json"
SERVED_METHODS = "GET, HEAD, OPTIONS"
NOT_HERE = "no such path on the stream gateway: it serves the live streams (the API serves the rest)"


class Request(NamedTuple):
    method: str
    target: str  # the request line's, as sent: its path (percent-encoded) and query
    headers: Mapping[str, str]  # found by name whatever its case
    address: str  # the client's (the proxies' view of it, behind trusted proxies)
    outlet: Any = None  # its connection, which the hub may write while its stream waits (app/live/hub.py)


class Answer(NamedTuple):
    status: int
    headers: list[tuple[str, str]]
    body: bytes | Generator[str, None, None]  # whole, or a stream's chunks


class Route(NamedTuple):
    pattern: re.Pattern
    rule: str  # as the API names it (its metrics' `route`)
    scoped_id: str | None  # the path's id, which must be the request's app's
    open: Callable  # (live, the path's id, token, Last-Event-ID, outlet) -> the stream's chunks


ROUTES = (
    Route(re.compile(r"/games/([^/]+)/stream"), "/games/<game_id>/stream", "game_id",
          game_stream),
    Route(re.compile(r"/players/me/stream"), "/players/me/stream", None,
          lambda live, _, token, last, _outlet: notices_stream(live, token, last)),
    Route(re.compile(r"/bots/me/stream"), "/bots/me/stream", None,
          lambda live, _, token, last, _outlet: turns_stream(live, token, last)),
    Route(re.compile(r"/tournaments/([^/]+)/stream"), "/tournaments/<tournament_id>/stream", "tournament_id",
          lambda live, tournament_id, _, last, _outlet: tournament_stream(live, tournament_id, last)),
)


class StreamGateway:
    def __init__(self, live: Live, config, limits: Limits):
        self.live, self.config, self.limits = live, config, limits
        self.cors = serialize_options({**DEFAULT_OPTIONS, **cors_options(config)}) if config["CORS_ORIGINS"] else None

    def answer(self, request: Request) -> Answer:
        """As the API answers: the probes as they are; then, for any other path, the request's app
        and its budgets are judged before its route (a 404 or a 405 counts as the API counts it)."""
        path = unquote(request.target.partition("?")[0], errors="replace")
        common = [("X-Content-Type-Options", "nosniff"),
                  (REQUEST_ID_HEADER, request_id_of(request.headers.get(REQUEST_ID_HEADER, ""))),
                  *self._cors(request)]
        if path in ("/health/live", "/health/ready", "/metrics"):
            return self._probe(path, common)
        route, path_id = _route(path)
        if request.method == "OPTIONS" and route is not None:
            return Answer(200, [("Allow", SERVED_METHODS), *common], b"")
        answer = self._judged(route, path_id, request, common)
        metrics.series(metrics.REQUESTS, route.rule if route else "unmatched", request.method, answer.status).inc()
        if isinstance(answer.body, bytes):
            self.limits.answered(answer.status, request.headers, request.address)
        return answer

    def _judged(self, route: "Route | None", path_id: str | None, request: Request, common) -> Answer:
        shown = None
        try:
            entered = enter(self.live.services, request.headers,
                            {route.scoped_id: path_id} if route is not None and route.scoped_id else {})
            shown, refusal = self.limits.judge(request.headers, request.address, entered.app_id)
            if refusal is not None:
                raise refusal
            if route is None:
                return _problem(problem_fields(404, CODE_BY_STATUS[404], "Not Found", NOT_HERE),
                                [*common, *rate_limit_headers(shown).items()])
            if request.method not in ("GET", "HEAD"):
                return _problem(problem_fields(405, CODE_BY_STATUS[405], "Method Not Allowed",
                                               "the live streams are read with GET"),
                                [*common, ("Allow", SERVED_METHODS), *rate_limit_headers(shown).items()])
            token = entered.acting_token or bearer_of(request.headers.get("Authorization", ""))
            chunks = route.open(self.live, path_id, token, request.headers.get(LAST_EVENT_ID_HEADER), request.outlet)
        except (ServiceError, RondaError) as refused:
            return _problem(*typed_problem(refused), [*common, *rate_limit_headers(shown).items()])
        except StoreUnavailable as error:
            log.warning("store unavailable (%s): %s", type(error).__name__, error)
            return _problem(*unavailable_problem(error), common)
        except Exception:
            log.exception("unexpected error")
            return _problem(UNEXPECTED, common)
        if request.method == "HEAD":
            chunks.close()
        return Answer(200, [("Content-Type", f"{SSE_MEDIA_TYPE}; charset=utf-8"), *SSE_HEADERS.items(), *common,
                            *rate_limit_headers(shown).items()], chunks)

    def _probe(self, path: str, common) -> Answer:
        if path == "/metrics":  # the deployment's figures; each tenant's are the API's operator's alone
            body, content_type = metrics.exposition(tenants=False)
            return Answer(200, [("Content-Type", content_type), *common], body)
        try:
            health = readiness(self.live.services.store, self.config) if path == "/health/ready" \
                else health_of(self.config)
        except StoreUnavailable as error:
            return _problem(*unavailable_problem(error), common)
        return Answer(200, [("Content-Type", JSON_MEDIA_TYPE), *common], json.dumps(health).encode())

    def _cors(self, request: Request) -> list[tuple[str, str]]:
        """By flask-cors' own rules and the API's options (app/api/limits.py); answers vary by Origin."""
        if self.cors is None:
            return []
        found = get_cors_headers(self.cors, cast(Any, request.headers), request.method)  # read by .get and `in`
        return [*((name, str(value)) for name, value in found.items(multi=True)), ("Vary", "Origin")]


def _route(path: str) -> tuple[Route | None, str | None]:
    for route in ROUTES:
        found = route.pattern.fullmatch(path)
        if found is not None:
            return route, found.group(1) if found.groups() else None
    return None, None


def _problem(fields: dict, headers, common=()) -> Answer:
    """A problem answer: `fields`, with `headers` (a dict or pairs) and the `common` ones."""
    pairs = list(headers.items()) if isinstance(headers, dict) else list(headers)
    return Answer(fields["status"], [("Content-Type", PROBLEM_MEDIA_TYPE), *pairs, *common],
                  json.dumps(fields).encode())
