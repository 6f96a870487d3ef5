"""A fault hook, loaded only by the tests that name it as gunicorn's app: the API as production
runs it, except that a request sent with `X-Test-Kill-After-Write` has its worker process killed
(SIGKILL) the moment its game write stood, before its idempotency record or its answer is written.
gunicorn's master then starts another worker, as after any crash."""

import os
import signal

from flask import has_request_context, request

from app import create_app as create_ronda_app
from app.games.store import GameStore

KILL_HEADER = "X-Test-Kill-After-Write"
_compare_and_set = GameStore.compare_and_set


def _killed_after_the_write(self, *args, **kwargs):
    version = _compare_and_set(self, *args, **kwargs)
    if has_request_context() and request.headers.get(KILL_HEADER):
        os.kill(os.getpid(), signal.SIGKILL)
    return version


GameStore.compare_and_set = _killed_after_the_write


def create_app():
    return create_ronda_app()
