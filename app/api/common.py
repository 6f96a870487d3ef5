"""What every blueprint needs: the service, the seat token, the If-Match version, error docs."""

from flask import current_app, make_response, request
from flask_smorest import Blueprint

from .schemas import Problem

PROBLEM_DESCRIPTIONS = {
    304: "Not modified since the version in If-None-Match",
    401: "Missing or unknown seat token",
    404: "No such game, or no such seat",
    409: "Not your turn, game over, seat taken or game not started",
    412: "Stale If-Match version; the body gives current_version",
    422: "Invalid request, or an action the rules do not allow now (with legal_actions)",
    428: "If-Match is required",
}


def service():
    return current_app.extensions["ronda.service"]


def bearer_token() -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def if_match_version() -> int | None:
    """The version in If-Match (`"7"`, `W/"7"` or `7`); unreadable counts as stale (-1)."""
    header = request.headers.get("If-Match")
    if header is None:
        return None
    text = header.strip().removeprefix("W/").strip('"')
    return int(text) if text.isdigit() else -1


def etag_header(version: int) -> dict:
    return {"ETag": f'"{version}"'}


def not_modified(version: int):
    """A 304 when If-None-Match already names this version, else None."""
    tags = [t.strip().removeprefix("W/").strip('"') for t in request.headers.get("If-None-Match", "").split(",")]
    if str(version) in tags or "*" in tags:
        response = make_response("", 304)
        response.headers.update(etag_header(version))
        return response
    return None


def documents_problems(blp: Blueprint, *statuses):
    """Document each error status with the problem schema."""
    def decorate(view):
        for status in statuses:
            if status == 304:
                view = blp.alt_response(304, description=PROBLEM_DESCRIPTIONS[304])(view)
            else:
                view = blp.alt_response(status, schema=Problem, description=PROBLEM_DESCRIPTIONS[status],
                                        content_type="application/problem+json")(view)
        return view
    return decorate


SEAT_TOKEN = [{"seatToken": []}]
OPTIONAL_SEAT_TOKEN = [{}, {"seatToken": []}]
IF_MATCH = {"in": "header", "name": "If-Match", "required": True, "schema": {"type": "string"},
            "description": "the `version` of the view the action is based on, e.g. \"7\""}
LAST_EVENT_ID = {"in": "header", "name": "Last-Event-ID", "required": False, "schema": {"type": "string"},
                 "description": "resume after this event id (sent back by EventSource on reconnect)"}
IF_NONE_MATCH = {"in": "header", "name": "If-None-Match", "required": False, "schema": {"type": "string"}}
