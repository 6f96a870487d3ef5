"""Structured logs: one JSON object a line, each with the request id of the request it belongs to.

A client may send `X-Request-ID` (letters, digits and `._:-`, at most 128); otherwise one is
made. Either way it is echoed in the answer and written with every line logged for it.
"""

import json
import logging
import re
import uuid

from flask import g, has_request_context, request

REQUEST_ID_HEADER = "X-Request-ID"
_ACCEPTED_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_TERMINAL_STYLE = re.compile(r"\x1b\[[0-9;]*m")  # werkzeug colours its request lines for a terminal


def assign_request_id():
    g.request_id = request_id_of(request.headers.get(REQUEST_ID_HEADER, ""))


def request_id_of(offered: str) -> str:
    """The id of a request that offered `offered` (its X-Request-ID, or empty)."""
    return offered if _ACCEPTED_ID.fullmatch(offered) else uuid.uuid4().hex


def echo_request_id(response):
    if "request_id" in g:
        response.headers[REQUEST_ID_HEADER] = g.request_id
    return response


class JsonFormatter(logging.Formatter):
    def format(self, record):
        line = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"), "level": record.levelname,
                "logger": record.name, "message": _TERMINAL_STYLE.sub("", record.getMessage())}
        if has_request_context() and "request_id" in g:
            line["request_id"] = g.request_id
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line)


def use_json_logs(level=logging.INFO):
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
