"""/apps/me/players: an app's server's, with its server key: its own users as players (sign-in by
its external id), and their suspension. Acting for one of them is every player operation with
`Ronda-On-Behalf-Of` (app/api/tenancy.py)."""

from flask.views import MethodView
from marshmallow import fields, validate

from .common import documents_problems, services
from .player_schemas import NewTokenRequest, Player, TokenCreated
from .schemas import PersonName
from .smorest import Blueprint
from .tenancy import server_app

blp = Blueprint("app_players", __name__, url_prefix="/apps/me/players",
                description="An app's server's: its own users as players: sign-in, suspension "
                            "(X-Ronda-App: <server key>; acting for a player: Ronda-On-Behalf-Of)")


class SignInRequest(NewTokenRequest):
    external_id = fields.String(required=True, validate=[validate.Length(min=1, max=128), validate.Regexp(
        r"^[!-~]+$", error="1 to 128 visible ASCII characters (no space)")], metadata={
        "description": "your own id of this person (your database's): one player per id in your app, for good. "
                       "Case as given; never shown to clients", "example": "user-8812"})
    name = PersonName(required=True, metadata={"description": "the player's name if this sign-in makes them "
                                                              "(later sign-ins keep theirs: renameMe)"})


class SignedIn(TokenCreated):
    player = fields.Nested(Player, required=True)
    created = fields.Boolean(required=True, metadata={"description": "this sign-in made the player"})


@blp.route("/sign-in")
class SignIn(MethodView):
    @blp.doc(operationId="signInPlayer", security=[{"appServerKey": []}])
    @blp.arguments(SignInRequest, example={"external_id": "user-8812", "name": "Amina",
                                                       "device": "Amina's phone"})
    @blp.response(200, SignedIn, description="The player (made now, or found) and a new token")
    @documents_problems(blp, 401, 403, 422)
    def post(self, body):
        """Sign one of your users in: find or make their player, and a token for one device

        Your server's call (the server key): the player for your `external_id` is made at its first
        sign-in and found at every later one, on any device, for as long as the player lives. Each
        sign-in answers a new token (list and revoke them: listMyTokens). Two first sign-ins of one
        id at once make one player.
        """
        app_id = server_app()
        player, info, token, created = services().players.sign_in(
            app_id, body["external_id"], body["name"], body["device"], body["ttl_seconds"],
            admit=lambda: services().apps.admit_player(app_id), release=lambda: services().apps.release_player(app_id))
        return {"player": player, "created": created, "token": token, "token_info": {**info, "current": False}}


@blp.route("/<player_id>/suspend")
class Suspend(MethodView):
    @blp.doc(operationId="suspendPlayer", security=[{"appServerKey": []}])
    @blp.response(200, Player)
    @documents_problems(blp, 401, 403, 404)
    def post(self, player_id):
        """Suspend one of your players: their tokens answer 403 `player_suspended`, their live games are
        resigned and their waiting ticket cancelled, until restorePlayer"""
        return services().people.suspend(server_app(), player_id)


@blp.route("/<player_id>/restore")
class Restore(MethodView):
    @blp.doc(operationId="restorePlayer", security=[{"appServerKey": []}])
    @blp.response(200, Player)
    @documents_problems(blp, 401, 403, 404)
    def post(self, player_id):
        """Lift a suspension: the player's tokens act again"""
        return services().people.restore(server_app(), player_id)
