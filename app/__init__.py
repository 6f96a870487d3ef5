"""The Ronda service: `create_app()` builds the Flask app around the engine, the store and the bots."""

from flask import Flask, request
from flask_smorest import Api
from werkzeug.exceptions import UnsupportedMediaType

from .api import games, problems, rules
from .config import Config
from .service import GameService
from .store import GameStore, connect


def create_app(overrides: dict | None = None) -> Flask:
    app = Flask(__name__)
    app.config.from_object(Config)
    app.config.update(overrides or {})
    api = Api(app)
    api.register_blueprint(games.blp)
    api.register_blueprint(rules.blp)
    problems.register(app)

    store = GameStore(connect(app.config["REDIS_URL"]), app.config["FINISHED_GAME_TTL"])
    app.extensions["ronda.store"] = store
    app.extensions["ronda.service"] = GameService(store)

    @app.before_request
    def require_json_bodies():
        if request.method in ("POST", "PUT", "PATCH") and request.content_length and not request.is_json:
            raise UnsupportedMediaType("send the body as application/json")

    return app
