"""The gateway's answers: the live streams' URLs, each request judged as the API judges it (the app
it acts in, its token, its rate limits, CORS, its request id; its refusals as problem+json), with
no web framework in the way. app/gateway/server.py reads the requests and writes the answers.

The streams themselves are the API's (app/api/live_streams.py): same snapshot first, same events,
same Last-Event-ID resume, same `problem` event and `retry:` hints.
"""

import json
import logging
import re
from collections.abc import Callable, Generator
from typing import NamedTuple
from urllib.parse import unquote

from werkzeug.datastructures import Headers

from ..engine.errors import RondaError
from ..errors import ServiceError
from ..live.streams import SSE_HEADERS, SSE_MEDIA_TYPE, Live
from ..ops import metrics
from ..ops.connection import StoreUnavailable
from ..ops.logs import REQUEST_ID_HEADER, request_id_of
from ..api.common import bearer_of
from ..api.health import health_of, readiness
from ..api.limits import (CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE, CORS_METHODS, Limits,
                          rate_limit_headers)
from ..api.live_streams import LAST_EVENT_ID_HEADER, game_stream, notices_stream, tournament_stream, turns_stream
from ..api.problems import (CODE_BY_STATUS, PROBLEM_MEDIA_TYPE, UNEXPECTED, problem_fields, typed_problem,
                            unavailable_problem)
from ..api.tenancy import enter

log = logging.getLogger(__name__)
JSON_MEDIA_TYPE = "application/json"
SERVED_METHODS = "GET, HEAD, OPTIONS"


class Request(NamedTuple):
    method: str
    target: str  # the request line's, as sent: its path (percent-encoded) and query
    headers: Headers
    address: str  # the client's (the proxies' view of it, behind trusted proxies)


class Answer(NamedTuple):
    status: int
    headers: list[tuple[str, str]]
    body: bytes | Generator[str, None, None]  # whole, or a stream's chunks


class Route(NamedTuple):
    pattern: re.Pattern
    rule: str  # as the API names it (its metrics' `route`)
    scoped_id: str | None  # the path's id, which must be the request's app's
    open: Callable  # (live, the path's id, token, Last-Event-ID) -> the stream's chunks


ROUTES = (
    Route(re.compile(r"/games/([^/]+)/stream"), "/games/<game_id>/stream", "game_id",
          lambda live, game_id, token, last: game_stream(live, game_id, token, last)),
    Route(re.compile(r"/players/me/stream"), "/players/me/stream", None,
          lambda live, _, token, last: notices_stream(live, token, last)),
    Route(re.compile(r"/bots/me/stream"), "/bots/me/stream", None,
          lambda live, _, token, last: turns_stream(live, token, last)),
    Route(re.compile(r"/tournaments/([^/]+)/stream"), "/tournaments/<tournament_id>/stream", "tournament_id",
          lambda live, tournament_id, _, last: tournament_stream(live, tournament_id, last)),
)


class StreamGateway:
    def __init__(self, live: Live, config, limits: Limits):
        self.live, self.config, self.limits = live, config, limits
        self.cors_origins = config["CORS_ORIGINS"]

    def answer(self, request: Request) -> Answer:
        path = unquote(request.target.partition("?")[0], errors="replace")
        common = [("X-Content-Type-Options", "nosniff"),
                  (REQUEST_ID_HEADER, request_id_of(request.headers.get(REQUEST_ID_HEADER, ""))),
                  *self._cors(request)]
        if path in ("/health/live", "/health/ready", "/metrics"):
            return self._probe(path, common)
        for route in ROUTES:
            found = route.pattern.fullmatch(path)
            if found is not None:
                answer = self._stream(route, found.groups()[0] if found.groups() else None, request, common)
                metrics.REQUESTS.labels(route.rule, request.method, answer.status).inc()
                return answer
        return _problem(problem_fields(404, CODE_BY_STATUS[404], "Not Found",
                                       "no such path on the stream gateway: it serves the live streams"), common)

    def _stream(self, route: Route, path_id: str | None, request: Request, common) -> Answer:
        if request.method == "OPTIONS":
            return Answer(200, [*common, ("Allow", SERVED_METHODS), *self._preflight(request)], b"")
        if request.method not in ("GET", "HEAD"):
            return _problem(problem_fields(405, CODE_BY_STATUS[405], "Method Not Allowed",
                                           "the live streams are read with GET"), [*common, ("Allow", SERVED_METHODS)])
        shown = None
        try:
            entered = enter(self.live.services, request.headers, {route.scoped_id: path_id} if route.scoped_id else {})
            shown, refusal = self.limits.judge(request.headers, request.address, entered.app_id)
            if refusal is not None:
                raise refusal
            token = entered.acting_token or bearer_of(request.headers.get("Authorization", ""))
            chunks = route.open(self.live, path_id, token, request.headers.get(LAST_EVENT_ID_HEADER))
        except (ServiceError, RondaError) as refused:
            answer = _problem(*typed_problem(refused), [*common, *rate_limit_headers(shown).items()])
        except StoreUnavailable as error:
            log.warning("store unavailable (%s): %s", type(error).__name__, error)
            answer = _problem(*unavailable_problem(error), common)
        except Exception:
            log.exception("unexpected error")
            answer = _problem(UNEXPECTED, common)
        else:
            if request.method == "HEAD":
                chunks.close()
            return Answer(200, [("Content-Type", f"{SSE_MEDIA_TYPE}; charset=utf-8"), *SSE_HEADERS.items(), *common,
                                *rate_limit_headers(shown).items()], chunks)
        self.limits.answered(answer.status, request.headers, request.address)
        return answer

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
        """As flask-cors answers the API's requests (app/api/limits.py): an allowed Origin is named."""
        if not self.cors_origins:
            return []
        origin = request.headers.get("Origin")
        if origin is None or not ("*" in self.cors_origins or origin in self.cors_origins):
            return [("Vary", "Origin")]
        return [("Access-Control-Allow-Origin", "*" if "*" in self.cors_origins else origin),
                ("Access-Control-Expose-Headers", ", ".join(CORS_EXPOSE_HEADERS)), ("Vary", "Origin")]

    def _preflight(self, request: Request) -> list[tuple[str, str]]:
        if not any(name == "Access-Control-Allow-Origin" for name, _ in self._cors(request)) or \
                "Access-Control-Request-Method" not in request.headers:
            return []
        allowed = {name.lower() for name in CORS_ALLOW_HEADERS}
        asked = [name.strip() for name in request.headers.get("Access-Control-Request-Headers", "").split(",")]
        return [("Access-Control-Allow-Methods", ", ".join(sorted(CORS_METHODS))),
                ("Access-Control-Allow-Headers", ", ".join(name for name in asked if name.lower() in allowed)),
                ("Access-Control-Max-Age", str(CORS_MAX_AGE))]


def _problem(fields: dict, headers, common=()) -> Answer:
    """A problem answer: `fields`, with `headers` (a dict or pairs) and the `common` ones."""
    pairs = list(headers.items()) if isinstance(headers, dict) else list(headers)
    return Answer(fields["status"], [("Content-Type", PROBLEM_MEDIA_TYPE), *pairs, *common],
                  json.dumps(fields).encode())
