"""The Ronda service: the rules engine (`app.engine`), bots, store, services and the HTTP API.

Importing the package loads nothing of the web stack, so `app.engine` and `app.bots` stay
plain libraries; `create_app` (in `app.web`) builds the Flask app when it is called.
"""


def create_app(overrides: dict | None = None):
    from .web import create_app as build
    return build(overrides)
