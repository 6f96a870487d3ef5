"""What every blueprint needs: the service, the seat token, the If-Match version, error docs."""

import sys
from functools import wraps
from typing import TYPE_CHECKING, Protocol, cast

from flask import Response, current_app, g, make_response, request
from werkzeug.exceptions import BadRequest, UnprocessableEntity

from ..errors import InvalidToken
from ..live.streams import SSE_HEADERS, SSE_MEDIA_TYPE, Live
from .bodies import ascii_integer
from .schemas import Problem
from .smorest import Blueprint

if TYPE_CHECKING:
    from ..live.hub import LiveHub
    from ..wiring import Services

PROBLEM_DESCRIPTIONS = {
    304: "Not modified since the version in If-None-Match",
    401: "Missing or unknown seat, player or bot token; unknown, rotated-out or revoked app key (X-Ronda-App); "
         "not the operator key",
    403: "A valid player or bot token that holds no seat here, or not the seat named (`no_seat`): not a reason "
         "to sign in again",
    404: "No such game, seat, match, bot, player, ticket, app, webhook or delivery (in this app)",
    409: "Not your turn, game over, seat taken, game not started, a ticket already waiting, or a rematch declined "
         "or accepted",
    412: "Stale If-Match version; the body gives current_version",
    422: "Invalid request, or an action the rules do not allow now (with legal_actions)",
    428: "If-Match is required",
    429: "Rate limit, running match games per client, or an app's quota reached (`budget` names it; see "
         "Retry-After)",
    503: "The store does not answer (see Retry-After), or it stopped answering during a write "
         "(code outcome_unknown: read the view before acting again)",
}


class ServingApp(Protocol):
    """What the app that serves these blueprints holds for them (app/web.py's RondaFlask, which
    this layer names by its shape so that it never imports the layer above it)."""

    services: "Services"
    live: "LiveHub"


def services() -> "Services":
    """This app's services, handed to it once by create_app (app/web.py)."""
    return cast(ServingApp, current_app).services


def live() -> "LiveHub":
    """The hub this app's streams and long polls wait on."""
    return cast(ServingApp, current_app).live


# The POSTs whose answers carry a token, a key or a secret (shown once): never kept by a cache on the way.
SECRET_ANSWERS = {"games.Games", "games.Seat", "games.Rematch", "bots.Bots", "players.Players", "admin.Apps",
                  "admin.RotateKey", "apps.Webhooks", "app_players.SignIn",
                  "players.MyTokens"}


def answer_headers(response):
    """Headers of every answer: its content type is not to be sniffed (a problem or an event stream
    is never run as a page), and an answer with a secret in it is not stored."""
    response.headers["X-Content-Type-Options"] = "nosniff"
    if request.method == "POST" and request.endpoint in SECRET_ANSWERS:
        response.headers["Cache-Control"] = "no-store"
    return response


def streaming(open_stream, *args) -> Response:
    """A live stream (app/api/live_streams.py) as this app's answer: `open_stream(live, *args)`.
    Under gunicorn's gevent worker, a stream ends as its client closes the connection (gunicorn
    takes its broken pipe quietly), not at its next keep-alive."""
    stream = open_stream(Live(services(), live(), current_app.config["SSE_KEEPALIVE_SECONDS"]), *args)
    connection = request.environ.get("gunicorn.socket")
    monkey = sys.modules.get("gevent.monkey")
    if connection is not None and monkey is not None and monkey.is_module_patched("socket"):
        from ..live.hangup import until_hangup
        stream = until_hangup(stream, connection)
    return Response(stream, mimetype=SSE_MEDIA_TYPE, headers=SSE_HEADERS)


def request_address() -> str:
    """The client's address (the proxy's view of it when RONDA_TRUSTED_PROXIES is set)."""
    return request.remote_addr or "unknown"


def bearer_token() -> str | None:
    """The request's token: its Bearer, or the one minted for the player its app's server acts
    for (app/api/tenancy.py, Ronda-On-Behalf-Of)."""
    acting = g.get("acting_token")
    if acting is not None:
        return acting
    return bearer_of(request.headers.get("Authorization", ""))


def bearer_of(authorization: str) -> str | None:
    """The token of an Authorization header's value, when it is a Bearer's."""
    scheme, _, token = authorization.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def entity_tags(header: str) -> list[tuple[bool, str]]:
    """An If-Match or If-None-Match list as (weak, tag) pairs: `"7", W/"6"` → [(False, "7"), (True, "6")]
    (RFC 9110 §8.8.3; a bare 7 is read as "7", as clients often send it)."""
    tags = []
    for item in header.split(","):
        item = item.strip()
        weak = item.startswith("W/")
        tags.append((weak, item.removeprefix("W/").strip('"')))
    return tags


TOKEN_NAMES = {"seatToken": "a seat token", "playerToken": "your player token (createPlayer)",
               "botToken": "a registered bot's token"}


def missing_token(security: list[dict]) -> str:
    """What a request without a token is told: the tokens the operation takes (its `security`)."""
    schemes = {scheme for option in security for scheme in option}
    names = " or ".join(name for scheme, name in TOKEN_NAMES.items() if scheme in schemes)
    return f"send 'Authorization: Bearer <token>' with {names}"


def token_first(security: list[dict]):
    """The token is judged before the rest of the request: a request without one is told so (401,
    naming the tokens the operation takes: its `security`) before anything else of it is read,
    and one whose body or query does not hold has its token judged before it hears so (a 401 or
    403 before a 400 or 422). A valid request's token is judged by the view, once."""
    schemes = {scheme for option in security for scheme in option}
    missing = missing_token(security)

    def judge(token: str, kwargs: dict):
        if "seatToken" in schemes and "game_id" in kwargs:
            services().games.seat_for(kwargs["game_id"], token)  # player and bot tokens too
        elif "playerToken" in schemes:
            services().players.authenticate(token)
        else:
            services().accounts.authenticate(token)

    def decorate(view):
        @wraps(view)
        def checked(*args, **kwargs):
            token = bearer_token()
            if token is None:
                raise InvalidToken(missing)
            try:
                return view(*args, **kwargs)
            except (BadRequest, UnprocessableEntity):
                judge(token, kwargs)
                raise
        return checked
    return decorate


def if_match_version(current) -> int | None:
    """The version an action is conditioned on, by If-Match's strong comparison (RFC 9110 §13.1.1):
    None without the header; the game's version when one listed tag names it, or `*` (the write
    still fails with 412 if another lands first); else -1, which no version is (a 412). A weak tag
    never matches. `current()` reads the game's version, and only when one tag alone cannot say."""
    header = request.headers.get("If-Match")
    if header is None:
        return None
    if header.strip() == "*":
        return current()
    versions = {ascii_integer(tag) for weak, tag in entity_tags(header) if not weak} - {None}
    if len(versions) <= 1:
        return versions.pop() if versions else -1
    version = current()
    return version if version in versions else -1


def etag_header(version: int) -> dict:
    return {"ETag": f'"{version}"'}


def not_modified(version: int):
    """A 304 when If-None-Match names this version, by weak comparison (RFC 9110 §13.1.2), else None."""
    tags = {tag for _, tag in entity_tags(request.headers.get("If-None-Match", ""))}
    if str(version) in tags or "*" in tags:
        response = make_response("", 304)
        response.headers.update(etag_header(version))
        return response
    return None


def documents_problems(blp: Blueprint, *statuses, rate_limited=True, store=True):
    """Document each error status with the problem schema, and those most operations can answer:
    429 unless exempt from limits, 503 when they read the store."""
    statuses = (*statuses, *((429,) if rate_limited else ()), *((503,) if store else ()))

    def decorate(view):
        for status in statuses:
            if status == 304:
                view = blp.alt_response(304, description=PROBLEM_DESCRIPTIONS[304])(view)
            else:
                view = blp.alt_response(status, schema=Problem, description=PROBLEM_DESCRIPTIONS[status],
                                        content_type="application/problem+json")(view)
        return view
    return decorate


# A registered bot acts with its own token, a player with theirs.
SEAT_TOKEN: list[dict] = [{"seatToken": []}, {"playerToken": []}, {"botToken": []}]
OPTIONAL_SEAT_TOKEN: list[dict] = [{}, *SEAT_TOKEN]
PLAYER_TOKEN: list[dict] = [{"playerToken": []}]
OPTIONAL_PLAYER_TOKEN: list[dict] = [{}, *PLAYER_TOKEN]
BOT_TOKEN: list[dict] = [{"botToken": []}]
IF_MATCH = {"in": "header", "name": "If-Match", "required": True, "schema": {"type": "string"},
            "description": "the `version` of the view the action is based on, as its ETag: `\"7\"`. Compared "
                           "strongly (RFC 9110): a list matches when one tag names the game's version, a weak "
                           "tag (`W/\"7\"`) never matches, and `*` acts on whatever version the game is at "
                           "(no lock against a move you have not seen: send the version instead)",
            "examples": {"version": {"value": '"7"'}}}
LAST_EVENT_ID = {"in": "header", "name": "Last-Event-ID", "required": False, "schema": {"type": "string"},
                 "description": "resume after this event id (sent back by EventSource on reconnect)"}
IF_NONE_MATCH = {"in": "header", "name": "If-None-Match", "required": False, "schema": {"type": "string"}}
