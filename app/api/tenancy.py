"""Which app a request acts in, and keeping it there: `X-Ronda-App: <app key>` names the app
(none: the public app). Every game, player and ticket named in the path, and every player token
sent, must be the app's (a name carries its app, app/ops/scope.py): another app's is a 404 (a
token, a 401), as if it did not exist. No read of the store: the app's key is checked against its
app, remembered for two seconds (app/apps/service.py)."""

from typing import NamedTuple

from flask import g, request

from ..ops.scope import PUBLIC_APP, app_of
from ..apps.service import BOTH, SERVER
from ..errors import (GameNotFound, InvalidAppKey, InvalidRequest, InvalidToken, PlayerNotFound, ServerKeyRequired,
                      TicketNotFound, TournamentNotFound)
from ..ops import metrics
from ..players.tokens import TOKEN_PREFIX as PLAYER_TOKEN_PREFIX
from .common import bearer_of, services

APP_HEADER = "X-Ronda-App"
# With the app's server key: act as that player of the app, as if with their token (docs/players.md).
ON_BEHALF_HEADER = "Ronda-On-Behalf-Of"
SCOPED_PATH_IDS = {"game_id": GameNotFound, "player_id": PlayerNotFound, "ticket_id": TicketNotFound,
                   "tournament_id": TournamentNotFound}


# Blueprints outside any app (probes, the operator's, the web client's pages), and those of the app's
# server (its settings and webhooks: the server key only).
OUTSIDE_APPS = ("health", "admin", "web_client")
SERVER_ONLY = ("apps", "app_players")


class Entered(NamedTuple):
    """Where a request acts: its app, the kind of key that named it (None: the public app), and the
    player its app's server acts for, with the token minted for them."""

    app_id: str
    key_kind: str | None
    acting_player: str | None = None
    acting_token: str | None = None


def enter(services, headers, path_ids: dict, erasing: bool = False) -> Entered:
    """The app a request with these headers, and these ids in its path, acts in, or the typed error
    that refuses it: the one judgement behind every route, Flask's (install) and the stream
    gateway's (app/gateway). `erasing`: the request erases its player (an erased player: 204 again)."""
    app_id, key_kind = services.apps.app_of_key(headers.get(APP_HEADER))
    metrics.series(metrics.APP_REQUESTS, app_id).inc()
    for name, not_found in SCOPED_PATH_IDS.items():
        scoped = path_ids.get(name)
        if scoped is not None and app_of(scoped) != app_id:
            raise not_found(f"no {name.removesuffix('_id')} {scoped} in this app")
    entered = Entered(app_id, key_kind)
    if ON_BEHALF_HEADER in headers:
        player_id = headers[ON_BEHALF_HEADER]
        server_app_of(app_id, key_kind, headers.get("Origin"))
        if headers.get("Authorization"):
            raise InvalidRequest(f"send either {ON_BEHALF_HEADER} (acting for a player) or Authorization, not both",
                                 field=ON_BEHALF_HEADER)
        entered = entered._replace(acting_player=player_id, acting_token=services.players.acting_for(
            app_id, player_id, must_exist=not erasing))
    token = entered.acting_token or bearer_of(headers.get("Authorization", ""))
    if token and token.startswith(PLAYER_TOKEN_PREFIX) and \
            app_of(token[len(PLAYER_TOKEN_PREFIX):].split(".", 1)[0]) != app_id:
        raise InvalidToken(f"this player token belongs to another app: send its app's {APP_HEADER}")
    return entered


def current_app_id() -> str:
    return g.get("app_id", PUBLIC_APP)


def acting_player() -> str | None:
    """The player the app's server acts for in this request (Ronda-On-Behalf-Of), or None."""
    return g.get("acting_player")


def server_app() -> str:
    """The request's app, for an operation of the app's server: 403 unless its server key was sent,
    and not from a browser (a page's script could hand it anyone)."""
    return server_app_of(current_app_id(), g.get("key_kind"), request.headers.get("Origin"))


def server_app_of(app_id: str, key_kind: str | None, origin: str | None) -> str:
    if app_id == PUBLIC_APP:
        raise InvalidAppKey(f"send '{APP_HEADER}: <server key>': the public app has no settings of its own")
    if key_kind not in (SERVER, BOTH):
        raise ServerKeyRequired(f"this is the app's server's: send its server key (rsrv.…), not its {key_kind} key")
    if origin:
        raise ServerKeyRequired("a server key is not taken from a browser (this request has an Origin): "
                                "keep it on the app's server")
    return app_id


def install(app):
    """Before every request (and before its rate limits, which count the app's budget) except
    those of the OUTSIDE_APPS blueprints."""

    @app.before_request
    def enter_app():
        if request.blueprint in OUTSIDE_APPS or request.method == "OPTIONS":
            return
        erasing = request.endpoint == "players.Me" and request.method == "DELETE"
        g.app_id, g.key_kind, g.acting_player, g.acting_token = enter(services(), request.headers,
                                                                      request.view_args or {}, erasing)


def admit_game():
    """The request's app may start one more game (its live games quota)."""
    app_id = current_app_id()
    services().apps.admit_game(app_id, lambda: services().store.listings.live_count(app_id))
