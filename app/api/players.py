"""/players and /leaderboards: people who outlive a seat token, their games and notices, and the
ladders of every pool."""

from flask import g, url_for, request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from ..accounts.ladders import pools
from ..errors import PoolNotFound
from ..live.feed import player_topic
from ..players.notices import NOTICE_TYPES
from . import idempotency
from .tenancy import acting_player, current_app_id
from .live_streams import LAST_EVENT_ID_HEADER, notices_stream
from .common import (PLAYER_TOKEN, bearer_token, documents_problems, live, request_address,
                     services, streaming, token_first)
from .smorest import Blueprint
from .player_schemas import NewTokenRequest, Player, PlayerToken, TokenCreated
from .notices import PlayerNotice
from .schemas import Answer, GameSummary, Outcome, PersonName, Record, TurnsQuery

blp = Blueprint("players", __name__, url_prefix="/players",
                description="Players: one token for every seat of a person's, their games and notices")
leaderboards_blp = Blueprint("leaderboards", __name__, url_prefix="/leaderboards",
                             description="Ratings of players and bots, one ladder per pool (preset × players)")

class CreatePlayerRequest(Schema):
    name = PersonName(required=True, metadata={"example": "Amina"})


class RenameRequest(Schema):
    name = PersonName(required=True, metadata={"example": "Amina B."})


class ExportedGame(Answer):
    id = fields.String(required=True)
    seat = fields.Integer(required=True)
    status = fields.String(required=True)
    preset = fields.String(required=True)
    players = fields.Integer(required=True)
    rated = fields.Boolean(required=True)
    scores = fields.List(fields.Integer(), required=True)
    winner = fields.Integer(allow_none=True, required=True)
    outcome = fields.Nested(Outcome, allow_none=True, required=True)
    created_at = fields.String(required=True)


class ExportedTournament(Answer):
    id = fields.String(required=True)
    format = fields.String(required=True)
    status = fields.String(required=True)
    created_at = fields.String(required=True)


class ExportedProfile(Player):
    external_id = fields.String(allow_none=True, required=True, metadata={
        "description": "the app's own id of this person (sign-in), or null"})
    suspended_at = fields.String(allow_none=True, required=True)


class PlayerExport(Answer):
    """Everything the service holds about a player (GDPR Art. 20), secrets left out."""
    profile = fields.Nested(ExportedProfile, required=True)
    tokens = fields.List(fields.Nested(PlayerToken), required=True, metadata={"description": "metadata only"})
    games = fields.List(fields.Nested(ExportedGame), required=True, metadata={
        "description": "the player's games still kept (their newest 500), each with their seat"})
    tickets = fields.List(fields.Dict(), required=True, metadata={"description": "the waiting quick-play ticket"})
    tournaments = fields.List(fields.Nested(ExportedTournament), required=True)
    notices = fields.List(fields.Dict(), required=True, metadata={"description": "the notices the inbox holds"})


class PlayerCreated(Answer):
    player = fields.Nested(Player, required=True)
    token = fields.String(required=True, metadata={
        "description": "shown once; send as Bearer to create, claim, act for and follow the player's seats"})


class PlayerGame(GameSummary):
    seat = fields.Integer(required=True, metadata={"description": "the player's seat in it"})
    your_turn = fields.Boolean(required=True)
    move_due_at = fields.Float(allow_none=True, required=True, metadata={
        "description": "seconds since the epoch when the awaited move is due (a turn timer), or null"})
    seconds_left = fields.Float(allow_none=True, required=True, metadata={
        "description": "how long the awaited turn has left (a turn timer), or null: days in correspondence play"})


class PlayerGamesQuery(Schema):
    status = fields.String(load_default="active", validate=validate.OneOf(("open", "active", "finished")))


class PlayerNotices(Answer):
    notices = fields.List(fields.Nested(PlayerNotice), required=True)
    cursor = fields.String(required=True, metadata={"description": "send as `after` next time"})


class Pool(Answer):
    name = fields.String(required=True, metadata={"example": "classic-2"})
    preset = fields.String(required=True)
    players = fields.Integer(required=True)


class LeaderboardRow(Record):
    rank = fields.Integer(required=True)
    name = fields.String(required=True, metadata={"description": "the player's name, or the bot's"})
    entrant = fields.String(required=True, metadata={
        "description": "player:<id>, a built-in bot kind, or bot:<id> (a registered bot)"})


@blp.route("")
class Players(MethodView):
    @blp.doc(operationId="createPlayer")
    @blp.arguments(CreatePlayerRequest, example={"name": "Amina"})
    @blp.response(201, PlayerCreated, description="The player; the token is shown only here")
    @documents_problems(blp, 422)
    def post(self, body):
        """Become a player

        The token, shown only here, acts for every seat the player creates or claims with it, from
        any device; it lists the player's games, streams their notices and joins quick play.
        Send Idempotency-Key to retry safely.
        """
        app_id = current_app_id()
        player, token = services().players.register(body["name"], idempotency.resource_id(), app_id,
                                                    admit=lambda: services().apps.admit_player(
                                                        app_id, g.get("key_kind"), request_address()))
        return {"player": player, "token": token}, {"Location": url_for("players.PlayerResource",
                                                                        player_id=player["id"])}


@blp.route("/me")
class Me(MethodView):
    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="getMe", security=PLAYER_TOKEN)
    @blp.response(200, Player)
    @documents_problems(blp, 401)
    def get(self):
        """The player whose token is sent

        The player your token belongs to, with their games, wins and a rating per pool. A
        player token of another app is 401.
        """
        return services().players.public(services().players.authenticate(bearer_token()))

    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="renameMe", security=PLAYER_TOKEN)
    @blp.arguments(RenameRequest, example={"name": "Amina B."})
    @blp.response(200, Player)
    @documents_problems(blp, 401, 403, 422)
    def patch(self, body):
        """Rename yourself

        Seats you take from now on carry the new name; seats of games already made keep the name
        they were taken under (the table as its players saw it).
        """
        return services().players.rename(services().players.authenticate(bearer_token()), body["name"])

    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="deleteMe", security=PLAYER_TOKEN)
    @blp.response(204, description="Erased (again: 204)")
    @documents_problems(blp, 401, 403)
    def delete(self):
        """Delete your account, for good

        Your name, external id, tokens, inbox and ratings are erased; your waiting ticket is
        cancelled, your live games resigned and your open tournament entries withdrawn. Finished
        games stay playable, your seats in them anonymous. Every token of yours answers 401 from
        then on (within seconds on every server). See docs/players.md, "Your users".
        """
        player_id = acting_player() or services().players.authenticate(bearer_token(), erasing=True)
        services().people.erase(player_id)
        return "", 204


@blp.route("/me/tokens")
class MyTokens(MethodView):
    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="listMyTokens", security=PLAYER_TOKEN)
    @blp.response(200, PlayerToken(many=True))
    @documents_problems(blp, 401, 403)
    def get(self):
        """Your tokens, one per device signed in, oldest first (never their secrets)"""
        players = services().players
        return players.token_list(players.authenticate(bearer_token()), bearer_token())

    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="createMyToken", security=PLAYER_TOKEN)
    @blp.arguments(NewTokenRequest, example={"device": "Amina's tablet"})
    @blp.response(201, TokenCreated, description="A new token for another device, shown only here")
    @documents_problems(blp, 401, 403, 422)
    def post(self, body):
        """Make a token for another device of yours

        Paste it on the other device instead of your own token: each device then signs out alone
        (revokeMyToken). `ttl_seconds` makes it expire.
        """
        players = services().players
        info, token = players.tokens.issue(players.authenticate(bearer_token()), body["device"], body["ttl_seconds"])
        return {"token": token, "token_info": {**info, "current": False}}

    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="signOutOtherDevices", security=PLAYER_TOKEN)
    @blp.response(204, description="Every other token is revoked")
    @documents_problems(blp, 401, 403)
    def delete(self):
        """Sign out everywhere but here

        Every token of yours but the one sent is revoked (your app's server acting for you: every
        one). A revoked token answers 401 within seconds on every server.
        """
        players = services().players
        players.sign_out_others(players.authenticate(bearer_token()), bearer_token())
        return "", 204


@blp.route("/me/tokens/<token_id>")
class MyToken(MethodView):
    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="revokeMyToken", security=PLAYER_TOKEN)
    @blp.response(204, description="Revoked")
    @documents_problems(blp, 401, 403, 404)
    def delete(self, token_id):
        """Sign one device out: revoke one of your tokens (this one too, if named)"""
        players = services().players
        players.revoke_token(players.authenticate(bearer_token()), token_id)
        return "", 204


@blp.route("/me/export")
class MyExport(MethodView):
    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="exportMe", security=PLAYER_TOKEN)
    @blp.response(200, PlayerExport)
    @documents_problems(blp, 401, 403)
    def get(self):
        """Everything held about you, as one JSON document (a copy of your data)

        Profile (with your app's external id), tokens' metadata (never a secret), ratings, games
        and your seat in each, your waiting ticket, tournaments entered and the notices held.
        """
        return services().people.export(services().players.authenticate(bearer_token()), bearer_token())


@blp.route("/me/games")
class MyGames(MethodView):
    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="listMyGames", security=PLAYER_TOKEN)
    @blp.arguments(PlayerGamesQuery, location="query")
    @blp.response(200, PlayerGame(many=True))
    @blp.paginate()
    @documents_problems(blp, 401, 422)
    def get(self, query, pagination_parameters):
        """Your games by status, newest first, each saying whether it is your turn

        Act in any of them with your player token (getSeatView, playAction). Paginated.
        """
        player_id = services().players.authenticate(bearer_token())
        games, total = services().games.games_of_player(player_id, query["status"], pagination_parameters.first_item,
                                                        pagination_parameters.page_size)
        pagination_parameters.item_count = total
        return games


@blp.route("/me/notices")
class MyNotices(MethodView):
    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="waitForNotices", security=PLAYER_TOKEN)
    @blp.arguments(TurnsQuery, location="query")
    @blp.response(200, PlayerNotices, description="The notices after `after`, as soon as there is one")
    @documents_problems(blp, 401, 422)
    def get(self, query):
        """Wait for notices of all your games and tickets (long poll)

        Answers as soon as there are notices after `after` (without it: those of the last minute),
        or after `wait_seconds` with none. Send the answer's `cursor` as `after` next time.
        """
        players = services().players
        player_id = players.authenticate(bearer_token())
        after = query.get("after") or players.recent_cursor()
        services().matchmaker.present(player_id)
        notices = live().wait_for_notices(player_topic(player_id), query["wait_seconds"],
                                          lambda: players.inbox_after(player_id, after))
        return {"notices": notices, "cursor": notices[-1]["id"] if notices else after}


@blp.route("/me/stream")
class MyStream(MethodView):
    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="streamNotices", security=PLAYER_TOKEN, parameters=[{
        "in": "header", "name": "Last-Event-ID", "required": False, "schema": {"type": "string"},
        "description": "resume after this notice id"}])
    @blp.response(200, content_type="text/event-stream", description=(
        "Server-Sent Events, each a PlayerNotice named by its type (" + ", ".join(NOTICE_TYPES) +
        "), with its id; `: keep-alive` comments while idle. Ignore a type you do not know"))
    @documents_problems(blp, 401, 422)
    def get(self):
        """One stream for all your games (SSE)

        `your_turn`, `turn_reminder`, `turn_timeout`, `game_over`, `seat_taken`, `matched`,
        `ticket_expired`, `rematch_offered`, `rematch_declined` for every game and ticket of yours:
        a phone keeps this one connection. Last-Event-ID resumes.
        """
        return streaming(notices_stream, bearer_token(), request.headers.get(LAST_EVENT_ID_HEADER))


@blp.route("/<player_id>")
class PlayerResource(MethodView):
    @blp.doc(operationId="getPlayer")
    @blp.response(200, Player)
    @documents_problems(blp, 404)
    def get(self, player_id):
        """A player: name, games, wins and a rating per pool (public)

        Public: anyone may read it. A rating per pool played, each with its deviation and
        whether it is still provisional.
        """
        return services().players.public(player_id)


@leaderboards_blp.route("")
class Pools(MethodView):
    @leaderboards_blp.doc(operationId="listPools")
    @leaderboards_blp.response(200, Pool(many=True), description="Every pool a rated game can be in")
    @documents_problems(leaderboards_blp, store=False)
    def get(self):
        """The pools: each preset with each player count it deals to (`classic-2`, `traditional-4`...)

        A pool is a preset and a player count: its own leaderboard and quick-play queues.
        """
        return [{"name": pool, "preset": pool.rpartition("-")[0], "players": int(pool.rpartition("-")[2])}
                for pool in pools()]


@leaderboards_blp.route("/<pool>")
class Leaderboard(MethodView):
    @leaderboards_blp.doc(operationId="getLeaderboard")
    @leaderboards_blp.response(200, LeaderboardRow(many=True))
    @leaderboards_blp.paginate()
    @documents_problems(leaderboards_blp, 404)
    def get(self, pool, pagination_parameters):
        """A pool's ladder, best first: players and bots on one scale (docs/ratings.md)

        Provisional entrants (fewer than 10 rated games) are listed, and say so. Paginated.
        """
        if pool not in pools():
            raise PoolNotFound(f"no pool {pool}; pools: {', '.join(pools())}")
        rows, total = services().players.leaderboard(pool, pagination_parameters.first_item,
                                                     pagination_parameters.page_size, current_app_id())
        pagination_parameters.item_count = total
        return rows
