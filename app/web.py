"""The Flask app: `create_app()` builds it around the engine, the store and the bots."""

import hmac
import time

from flask import Flask, g, request
from werkzeug.exceptions import NotFound, UnsupportedMediaType
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.routing import Map, MapAdapter

from . import wiring
from .api import (app_players, apps, bodies, bots, games, health, idempotency, limits, matches, matchmaking, players,
                  problems, rules, tenancy, tournaments, web_client)
from .api.common import answer_headers
from .api.conventions import SERVERS, HttpConventions
from .api.events import document_event_union
from .api.notices import document_notices
from .api.smorest import RondaApi
from .live.hub import LiveHub
from .live.streams import render_event
from .ops import logs, metrics
from .ops.config import Config
from .ops.tenant_figures import LIVE_GAMES, delivery_figure


class _ExactPathAdapter(MapAdapter):
    def match(self, path_info=None, *args, **kwargs):
        # werkzeug strips a path's leading slashes before matching, whatever merge_slashes says.
        if (self.path_info if path_info is None else path_info).startswith("//"):
            raise NotFound()
        return super().match(path_info, *args, **kwargs)


class ExactPaths(Map):
    """Routes match the path as sent: werkzeug would answer `/games//view` (and `//games`, to another
    host) with a redirect in HTML, outside the API's problem+json, and route `//games` (or `/%2fgames`,
    which servers decode to it) as `/games`; a doubled slash anywhere is a 404 instead."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{**kwargs, "merge_slashes": False})

    def bind_to_environ(self, *args, **kwargs) -> MapAdapter:  # how a request's path is matched
        adapter = super().bind_to_environ(*args, **kwargs)
        adapter.__class__ = _ExactPathAdapter
        return adapter


class RondaFlask(Flask):
    """The app, holding what its blueprints ask for (app/api/common.py's `services()` and `live()`)."""

    url_map_class = ExactPaths
    api: RondaApi
    services: wiring.Services
    live: LiveHub


def create_app(overrides: dict | None = None) -> RondaFlask:
    app = RondaFlask(__name__)
    app.config.from_object(Config)
    app.config.update(overrides or {})
    api = RondaApi(app, spec_kwargs={"extra_plugins": [HttpConventions()], "servers": SERVERS})
    document_event_union(api.spec)
    document_notices(api.spec)
    for message in (bots.GameOver, bots.MatchOver, tournaments.TournamentRoundEvent,
                    tournaments.TournamentStandingsEvent):  # named in streams and long polls, not by a view
        api.spec.components.schema(message.__name__, schema=message)
    api.register_blueprint(games.blp)
    api.register_blueprint(rules.blp)
    api.register_blueprint(matches.blp)
    api.register_blueprint(tournaments.blp)
    api.register_blueprint(bots.blp)
    api.register_blueprint(bots.ratings_blp)
    api.register_blueprint(players.blp)
    api.register_blueprint(players.leaderboards_blp)
    api.register_blueprint(app_players.blp)
    api.register_blueprint(matchmaking.blp)
    api.register_blueprint(apps.blp)
    api.register_blueprint(apps.admin_blp)
    api.register_blueprint(health.blp)
    app.register_blueprint(web_client.blp)
    app.after_request(web_client.docs_policy)
    problems.register(app)

    in_process = app.config["BOT_DISPATCH"] == "inprocess" or not app.config["REDIS_URL"]
    services = wiring.Services(app.config, in_process)
    app.api, app.services, app.live = api, services, wiring.live_hub(services, render_event)
    app.before_request(logs.assign_request_id)  # first: every answer carries it, a refusal of the app or a budget too
    tenancy.install(app)
    limits.install(app, services.window_counts, exempt_blueprints=[health.blp], app_quotas=services.apps.quotas)

    if app.config["TRUSTED_PROXIES"]:  # the client's address, scheme and host as the proxies saw them
        hops = app.config["TRUSTED_PROXIES"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]

    @app.get("/metrics")
    def prometheus_metrics():
        """Each tenant's figures (series with an `app` label) go to the operator alone, who scrapes
        with `Authorization: Bearer <RONDA_OPERATOR_KEY>`; anyone else reads the deployment's."""
        for queue, depth in services.dispatcher.queue_depths().items():
            metrics.QUEUE_DEPTH.labels(queue).set(depth)
        configured = app.config["OPERATOR_KEY"]
        operator = bool(configured) and hmac.compare_digest(request.headers.get("Authorization", ""),
                                                            f"Bearer {configured}")
        if operator:  # its Redis commands: the same for 1 app or 1,000 (app/ops/tenant_figures.py)
            figures = services.tenant_figures.read()
            for app_id in ["public", *services.apps.store.ids()]:
                metrics.APP_LIVE_GAMES.labels(app_id).set(figures[app_id][LIVE_GAMES])
                for status in ("pending", "failed"):
                    metrics.APP_DELIVERIES.labels(app_id, status).set(figures[app_id][delivery_figure(status)])
        body, content_type = metrics.exposition(tenants=operator)
        return app.response_class(body, mimetype=content_type)

    @app.before_request
    def before():
        g.started = time.perf_counter()
        if request.method in ("POST", "PUT", "PATCH") and request.content_length and not request.is_json:
            raise UnsupportedMediaType("send the body as application/json")
        bodies.check_json_body()
        return idempotency.replay_or_reserve()

    @app.after_request
    def after(response):
        route = request.url_rule.rule if request.url_rule else "unmatched"
        metrics.series(metrics.REQUESTS, route, request.method, response.status_code).inc()
        if "started" in g:
            metrics.series(metrics.REQUEST_SECONDS, route).observe(time.perf_counter() - g.started)
        return logs.echo_request_id(idempotency.remember(answer_headers(response)))

    return app
