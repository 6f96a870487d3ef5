"""Request bodies and headers refused before any work when no schema could read them safely.

The JSON parser itself fails on a body nested thousands deep (RecursionError) or an integer of
thousands of digits (ValueError): both are answered here as 422 problems, never a 500.
"""

import json

from flask import request

from ..errors import InvalidRequest

MAX_JSON_DEPTH = 32
MAX_HEADER_INTEGER_DIGITS = 15  # ids and versions stay far below 10^15


def check_json_body():
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
    text = request.headers.get(name)
    if text is None:
        return None
    value = ascii_integer(text.strip())
    if value is None:
        raise InvalidRequest(f"{name}: not an event id (ASCII digits, at most {MAX_HEADER_INTEGER_DIGITS})",
                             field=name)
    return value
