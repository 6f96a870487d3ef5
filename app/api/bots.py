"""/bots and /ratings: registered outside bots, their turns (SSE or long poll), the ladder, the levels."""

from flask import current_app, url_for, request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from ..bots import LEVELS
from ..live.feed import bot_topic
from . import idempotency
from .live_streams import LAST_EVENT_ID_HEADER, turns_stream
from .common import (BOT_TOKEN, bearer_token, documents_problems, live, request_address,
                     services, streaming, token_first)
from .smorest import Blueprint
from .schemas import Answer, EntrantResult, GameView, PersonName, Record, TurnsQuery

blp = Blueprint("bots", __name__, url_prefix="/bots", description="Outside bots: register, receive turns, get rated")
ratings_blp = Blueprint("ratings", __name__, url_prefix="/ratings", description="The rating ladder (Elo)")

class CreateBotRequest(Schema):
    name = PersonName(required=True, metadata={"example": "Mimoun"})
    description = fields.String(validate=validate.Length(max=200),
                                metadata={"example": "plays the rank it can follow"})


class Bot(Record):
    id = fields.String(required=True)
    entrant = fields.String(required=True, metadata={"description": "its name in a match's bots: bot:<id>"})
    name = fields.String(required=True)
    description = fields.String(required=True)
    created_at = fields.String(required=True)


class BotCreated(Answer):
    bot = fields.Nested(Bot, required=True)
    token = fields.String(required=True, metadata={"description": "shown once; send as Bearer to act and to "
                                                                  "receive turns"})


class Notice(Answer):
    id = fields.String(required=True, metadata={"description": "its id in the bot's inbox: resume after it "
                                                               "(`after`, Last-Event-ID)"})


class Turn(Notice):
    """A game awaits the bot: act on `view` (its legal actions, and its version as If-Match) before
    `deadline`. One per version that awaits the bot: a declaration or a capture that leaves the
    turn with the bot makes another."""
    type = fields.String(required=True, validate=validate.OneOf(["turn"]))
    game_id = fields.String(required=True)
    seat = fields.Integer(required=True)
    version = fields.Integer(required=True, metadata={"description": "the game's version: send it as If-Match"})
    match_id = fields.String(allow_none=True, required=True)
    move_seconds = fields.Integer(allow_none=True, required=True, metadata={"description": "the per-move time limit"})
    deadline = fields.Float(allow_none=True, required=True, metadata={
        "description": "seconds since the epoch when the fallback bot moves instead"})
    view = fields.Nested(GameView, required=True, metadata={
        "description": "the seat's view at this version, as getSeatView answers it"})


class GameOver(Notice):
    """A game the bot played is over (its final view says the scores and the winner)."""
    type = fields.String(required=True, validate=validate.OneOf(["game_over"]))
    game_id = fields.String(required=True)
    seat = fields.Integer(required=True)
    version = fields.Integer(required=True)
    match_id = fields.String(allow_none=True, required=True)
    view = fields.Nested(GameView, required=True)


class MatchOver(Notice):
    """A match the bot played is over: its standings (a forfeit counts as a loss)."""
    type = fields.String(required=True, validate=validate.OneOf(["match_over"]))
    match_id = fields.String(required=True)
    entrant = fields.Integer(required=True, metadata={"description": "the bot's entrant number in the match"})
    games_done = fields.Integer(required=True)
    forfeited_by = fields.Integer(allow_none=True, required=True)
    entrants = fields.List(fields.Nested(EntrantResult), required=True)


NOTICES = {"turn": Turn, "game_over": GameOver, "match_over": MatchOver}
ANY_NOTICE = {"oneOf": [{"$ref": f"#/components/schemas/{schema.__name__}"} for schema in NOTICES.values()]}


class Turns(Answer):
    turns = fields.List(fields.Nested(Turn), required=True, metadata={"description": "the turns among `notices`"})
    notices = fields.List(fields.Raw(metadata=ANY_NOTICE), required=True, metadata={
        "description": "everything after `after`, in order: turns, game_over and match_over (ignore a type "
                       "you do not know: more may come)"})
    cursor = fields.String(required=True, metadata={"description": "send as `after` next time"})


class Level(Answer):
    level = fields.Integer(required=True, metadata={"description": f"1 (weakest) to {len(LEVELS)}; a seat takes it as "
                                                                  "{\"type\": \"bot\", \"level\": n}"})
    bot = fields.String(required=True)
    summary = fields.String(required=True)
    rating = fields.Float(allow_none=True, required=True, metadata={"description": "on this ladder, once rated"})


class Rating(Record):
    entrant = fields.String(required=True, metadata={"description": "a built-in bot kind, or bot:<id>"})


@blp.route("")
class Bots(MethodView):
    @blp.doc(operationId="createBot")
    @blp.arguments(CreateBotRequest, example={"name": "Mimoun", "description": "plays the rank it can follow"})
    @blp.response(201, BotCreated, description="Registered; the token is shown only here")
    @documents_problems(blp, 422)
    def post(self, body):
        """Register an outside bot

        The answer holds the bot's token, shown only here (only its hash is kept). Enter the bot in
        matches as its `entrant`, then play from its turns.
        """
        config = current_app.config
        bot, token = services().accounts.register(body["name"], body.get("description"), request_address(),
                                         config["BOT_REGISTRATIONS_PER_HOUR"], config["BOTS_PER_ADDRESS"],
                                         idempotency.resource_id())
        return {"bot": bot, "token": token}, {"Location": url_for("bots.BotResource", bot_id=bot["id"])}

    @blp.doc(operationId="listBots")
    @blp.response(200, Bot(many=True))
    @blp.paginate()
    @documents_problems(blp)
    def get(self, pagination_parameters):
        """List the registered bots with their ratings

        Public: name, description, Elo rating and record. Paginated.
        """
        listed, total = services().accounts.registered(pagination_parameters.first_item,
                                                       pagination_parameters.page_size)
        pagination_parameters.item_count = total
        return listed


@blp.route("/levels")
class Levels(MethodView):
    @blp.doc(operationId="listLevels")
    @blp.response(200, Level(many=True))
    @documents_problems(blp)
    def get(self):
        """The bot levels a game can seat against humans, weakest first

        A seat takes a level as `{"type": "bot", "level": n}`; each level names its bot and its rating
        on the ladder.
        """
        return services().accounts.levels()


@blp.route("/me/turns")
class MyTurns(MethodView):
    @token_first(BOT_TOKEN)
    @blp.doc(operationId="waitForTurns", security=BOT_TOKEN)
    @blp.arguments(TurnsQuery, location="query")
    @blp.response(200, Turns, description="The turns after `after`, as soon as there is one (or after the wait)")
    @documents_problems(blp, 401, 422)
    def get(self, query):
        """Wait for your bot's turns (long poll)

        Answers as soon as there are notices after `after` (turns, game_over, match_over), or after
        `wait_seconds` with none. Send the answer's `cursor` as `after` next time.
        """
        bot_id = services().accounts.authenticate(bearer_token())
        after = query.get("after") or services().accounts.recent_cursor()
        accounts = services().accounts
        notices = live().wait_for_notices(bot_topic(bot_id), query["wait_seconds"],
                                          lambda: accounts.inbox_after(bot_id, after))
        return {"turns": [notice for notice in notices if notice["type"] == "turn"], "notices": notices,
                "cursor": notices[-1]["id"] if notices else after}


@blp.route("/me/stream")
class MyTurnStream(MethodView):
    @token_first(BOT_TOKEN)
    @blp.doc(operationId="streamTurns", security=BOT_TOKEN, parameters=[{
        "in": "header", "name": "Last-Event-ID", "required": False, "schema": {"type": "string"},
        "description": "resume after this turn id"}])
    @blp.response(200, content_type="text/event-stream",
                  description="Server-Sent Events, each with its notice's id: `turn` (a Turn: one per game "
                              "version awaiting the bot, with the seat's view), `game_over` (a GameOver), "
                              "`match_over` (a MatchOver); `: keep-alive` comments while idle. Ignore an event "
                              "type you do not know")
    @documents_problems(blp, 401, 422)
    def get(self):
        """Receive your bot's turns as they come (SSE)

        One `turn` per game version awaiting the bot, with the seat's view; `game_over` and
        `match_over` when a game or the match ends. Last-Event-ID resumes.
        """
        return streaming(turns_stream, bearer_token(), request.headers.get(LAST_EVENT_ID_HEADER))


@blp.route("/<bot_id>")
class BotResource(MethodView):
    @blp.doc(operationId="getBot")
    @blp.response(200, Bot)
    @documents_problems(blp, 404)
    def get(self, bot_id):
        """A registered bot, with its rating

        Public: name, description, Elo rating and record.
        """
        return services().accounts.get(bot_id)


@ratings_blp.route("")
class Ratings(MethodView):
    @ratings_blp.doc(operationId="listRatings")
    @ratings_blp.response(200, Rating(many=True), description="Every rated entrant, best first")
    @documents_problems(ratings_blp)
    def get(self):
        """The rating ladder: built-in and registered bots

        Elo from 1500, K = 24, over every finished match game between two different entrants, highest
        first.
        """
        return services().accounts.ladder()
