"""Every error as RFC 9457 problem+json with a stable `code`: the one place errors meet HTTP."""

from http import HTTPStatus

from flask import current_app, json, make_response
from werkzeug.exceptions import HTTPException
from werkzeug.serving import WSGIRequestHandler

from ..engine.errors import RondaError
from ..errors import ServiceError
from ..ops.connection import CannotWrite, StoreUnavailable

PROBLEM_MEDIA_TYPE = "application/problem+json"

# The engine's errors know nothing of HTTP: their statuses are here, one for every engine code
# (a test checks that none is missing; an unknown code is a 500, never a silent guess).
ENGINE_STATUS = {
    "invalid_rules": 422, "invalid_setup": 422, "invalid_action": 422, "illegal_action": 422,
    "card_not_in_hand": 422, "declaration_not_held": 422, "not_your_turn": 409, "game_over": 409,
}
RETRY_AFTER_SECONDS = {503: "1", 429: "60"}  # a Redis restart is over in seconds; a match game in a minute

CODE_BY_STATUS = {
    400: "malformed_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
    406: "not_acceptable", 409: "conflict", 412: "precondition_failed", 413: "payload_too_large",
    414: "uri_too_long", 415: "unsupported_media_type", 417: "expectation_failed", 422: "validation_error",
    428: "precondition_required", 429: "too_many_requests", 431: "headers_too_large", 500: "internal_error",
    501: "not_implemented", 503: "unavailable",
}


def problem_fields(status: int, code: str, title: str, detail: str | None = None, **extensions) -> dict:
    body = {"type": f"urn:ronda:problem:{code}", "title": title, "status": status, "code": code}
    if detail:
        body["detail"] = detail
    body.update({k: v for k, v in extensions.items() if v is not None})
    return body


def problem_body(status: int, code: str, title: str, detail: str | None = None, **extensions) -> str:
    return json.dumps(problem_fields(status, code, title, detail, **extensions))


def problem(status: int, code: str, title: str, detail: str | None = None, headers=None, **extensions):
    return _answer(problem_fields(status, code, title, detail, **extensions), headers)


def _answer(fields: dict, headers=None):
    response = make_response(json.dumps(fields), fields["status"])
    response.mimetype = PROBLEM_MEDIA_TYPE
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def _typed_status(error) -> int:
    return error.status if isinstance(error, ServiceError) else ENGINE_STATUS[error.code]


def problem_of(error) -> dict:
    """A typed error's problem+json body: what its answer carries, and what a stream's `problem`
    event carries once the stream has started."""
    return problem_fields(_typed_status(error), error.code, error.code.replace("_", " ").capitalize(), error.message,
                          **error.details)


def typed_problem(error) -> tuple[dict, dict]:
    """A typed error's answer, wherever it is served: its problem body and its headers."""
    status = _typed_status(error)
    retry_after = getattr(error, "retry_after", None) or RETRY_AFTER_SECONDS.get(status)
    headers = {"Retry-After": str(retry_after)} if retry_after else {}
    if status == 401:  # RFC 9110 §11.6.1: say how to authenticate
        headers["WWW-Authenticate"] = 'Bearer realm="ronda"'
    return problem_of(error), headers


def unavailable_problem(error) -> tuple[dict, dict]:
    """The answer to a store that does not answer, or takes no writes: its problem body and its headers."""
    headers = {"Retry-After": RETRY_AFTER_SECONDS[503]}
    if isinstance(error, CannotWrite):
        return problem_fields(503, "store_cannot_write", "Service Unavailable",
                              "the game store takes no writes for now (full, or read-only); nothing was changed, "
                              "retry shortly"), headers
    return problem_fields(503, "store_unavailable", "Service Unavailable",
                          "the game store does not answer; nothing was changed, retry shortly"), headers


def _from_typed(error):
    return _answer(*typed_problem(error))


def _from_store(error):
    current_app.logger.warning("store unavailable (%s): %s", type(error).__name__, error)
    return _answer(*unavailable_problem(error))


INVALID_JSON = "Invalid JSON body."  # webargs' message for a body it cannot parse


def _from_http(error: HTTPException):
    status = error.code or 500
    code = CODE_BY_STATUS.get(status, "http_error")
    data = getattr(error, "data", None) or {}
    errors = _flatten(data.get("messages") or {})
    detail = error.description if not errors else "the request does not match the schema; see errors"
    if any(e["location"] == "json" and e["field"] is None and e["message"] == INVALID_JSON for e in errors):
        code, detail = "malformed_json", "the body is not valid JSON"
    kept = {k: v for k, v in error.get_response().headers.items() if k in ("Allow", "Retry-After")}
    return problem(status, code, error.name, detail, headers=kept, errors=errors or None)


def _flatten(messages, location=None, path=()):
    """webargs' nested messages → [{"location": "json", "field": "rules.jokers", "message": ...}]."""
    if isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        return [{"location": location, "field": ".".join(path) or None, "message": m} for m in messages]
    if isinstance(messages, dict):
        flat = []
        for key, value in messages.items():
            if location is None:
                flat += _flatten(value, str(key), ())
            else:
                flat += _flatten(value, location, (*path, str(key)))
        return flat
    return [{"location": location, "field": ".".join(path) or None, "message": str(messages)}]


UNEXPECTED = problem_fields(500, "internal_error", "Internal Server Error",
                            "the server failed; what the request changed, if anything, is unknown: read the resource "
                            "before acting again, or retry with the same Idempotency-Key")


def _unexpected(error):
    current_app.logger.exception("unexpected error", exc_info=error)
    return _answer(UNEXPECTED)


def http_problem(status: int, detail: str | None = None) -> bytes:
    """A whole HTTP answer with a problem body, for errors the HTTP server meets before the app (a
    request line or headers too large, a malformed request): it closes the connection."""
    reason = HTTPStatus(status).phrase
    body = problem_body(status, CODE_BY_STATUS.get(status, "http_error"), reason, detail).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: {PROBLEM_MEDIA_TYPE}\r\n"
            f"X-Content-Type-Options: nosniff\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1") + body


def write_gunicorn_problem(sock, status: int, reason: str, detail: str):
    """gunicorn's `util.write_error` answers in HTML and has no hook of its own: its workers call
    this instead (app/gunicorn_conf.py)."""
    from gunicorn.util import write_nonblock
    write_nonblock(sock, http_problem(status, detail or None))


class ProblemRequestHandler(WSGIRequestHandler):
    """The development server's handler: what it refuses before the app (431, 414, 400) is a problem too."""

    def send_error(self, code, message=None, explain=None):
        self.log_error("code %d, message %s", code, message)
        self.close_connection = True
        self.wfile.write(http_problem(code, message))


def register(app):
    app.register_error_handler(RondaError, _from_typed)
    app.register_error_handler(ServiceError, _from_typed)
    app.register_error_handler(HTTPException, _from_http)
    for unavailable in StoreUnavailable:
        app.register_error_handler(unavailable, _from_store)
    app.register_error_handler(Exception, _unexpected)
