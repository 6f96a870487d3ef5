"""Request bodies and headers refused before any work when no schema could read them safely.

The JSON parser itself fails on a body nested thousands deep (RecursionError) or an integer of
thousands of digits (ValueError): both are answered here as 422 problems, never a 500.
"""

import json

from flask import g, request
from marshmallow import missing
from webargs.flaskparser import FlaskParser

from ..errors import InvalidRequest
from .schemas import valid_turn_id

MAX_JSON_DEPTH = 32
MAX_HEADER_INTEGER_DIGITS = 15  # ids and versions stay far below 10^15


def check_json_body():
    """Parse a JSON body once, refusing one nested too deep; the arguments' parser takes it from
    here (`BodyOnceParser`) instead of parsing it again."""
    if not request.is_json or not request.content_length:
        return
    try:
        body = json.loads(request.get_data(cache=True))
    except json.JSONDecodeError:
        return  # malformed: the schema's parser answers 400
    except (RecursionError, ValueError) as error:
        message = "JSON nested too deep" if isinstance(error, RecursionError) else f"unreadable JSON ({error})"
        raise InvalidRequest(f"body: {message[:200]}", field="body") from None
    if _depth(body) > MAX_JSON_DEPTH:
        raise InvalidRequest(f"body: JSON nested deeper than {MAX_JSON_DEPTH} levels", field="body")
    g.json_body = body


class BodyOnceParser(FlaskParser):
    """webargs, taking the body `check_json_body` parsed (a malformed one it parses and refuses)."""

    def _raw_load_json(self, req):
        body = g.get("json_body", missing)
        return super()._raw_load_json(req) if body is missing else body


def _depth(value) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def ascii_integer(text: str) -> int | None:
    """`text` as a non-negative integer if it is one in ASCII digits ('²' is a digit to str.isdigit)."""
    if text.isascii() and text.isdigit() and len(text) <= MAX_HEADER_INTEGER_DIGITS:
        return int(text)
    return None


def header_integer(name: str) -> int | None:
    """A header holding a non-negative integer; None when absent; 422 otherwise."""
    return integer_header(name, request.headers.get(name))


def integer_header(name: str, text: str | None) -> int | None:
    """Header `name`'s value `text` as header_integer reads it, wherever the header was read."""
    if text is None:
        return None
    value = ascii_integer(text.strip())
    if value is None:
        raise InvalidRequest(f"{name}: not an event id (ASCII digits, at most {MAX_HEADER_INTEGER_DIGITS})",
                             field=name)
    return value


def header_turn_id(name: str) -> str | None:
    return turn_id_header(name, request.headers.get(name))


def turn_id_header(name: str, text: str | None) -> str | None:
    """Header `name`'s value `text` as a turn (or notice) id; None when absent; 422 otherwise."""
    text = (text or "").strip()
    if text and not valid_turn_id(text):
        raise InvalidRequest(f"{name}: not a turn id (<ms>-<n>, each at most 2^64 - 1)", field=name)
    return text or None
