"""/matches: bot-only matches, played on the workers, with win rates and their intervals."""

from flask import current_app, url_for
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from ..accounts.service import MAX_MOVE_SECONDS
from ..matches.service import FORFEIT_TIMEOUTS, MAX_GAMES
from . import idempotency
from . import schemas as s
from .analysis_schemas import MatchAnalysis
from .common import documents_problems, request_address, services
from .tenancy import current_app_id
from .smorest import Blueprint

blp = Blueprint("matches", __name__, url_prefix="/matches", description="Bot-only matches for bot authors")


class CreateMatchRequest(Schema):
    rules = fields.Nested(s.RuleOptions, metadata={"example": {"preset": "classic"}})
    bots = fields.List(fields.String(validate=validate.Length(max=60)), required=True,
                       validate=validate.Length(min=2, max=4), metadata={
                           "description": "one entrant per seat: a built-in bot kind, or bot:<id> for a registered "
                                          "bot (which then plays its seats over HTTP, game after game)",
                           "example": ["expert", "greedy"]})
    move_seconds = s.Integer(validate=validate.Range(min=1, max=MAX_MOVE_SECONDS), metadata={
        "description": "per-move time limit of registered bots (default 10): past it the fallback bot "
                       f"(greedy) moves for them; {FORFEIT_TIMEOUTS} timeouts in a match forfeit it"})
    games = s.Integer(required=True, validate=validate.Range(min=1, max=MAX_GAMES), metadata={"example": 20})
    seed = fields.String(validate=validate.Length(min=1, max=128))


class Match(s.Answer):
    id = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(("running", "finished")))
    rules = fields.Nested(s.Rules, required=True)
    bots = fields.List(fields.String(), required=True)
    seed = fields.String(allow_none=True, required=True, metadata={
        "description": "every deck derives from it: null while a match with an outside bot runs"})
    dealing = fields.String(required=True, validate=validate.OneOf(("server", "creator_seed")),
                            metadata={"description": "whether the match seed is the server's or the creator's"})
    games_total = fields.Integer(required=True)
    games_done = fields.Integer(required=True)
    seating = fields.String(required=True)
    first_seating = fields.List(fields.Integer(), required=True)
    entrants = fields.List(fields.Nested(s.EntrantResult), required=True)
    move_seconds = fields.Integer(allow_none=True, required=True, metadata={
        "description": "the per-move time limit, when a registered bot plays"})
    forfeited_by = fields.Integer(allow_none=True, required=True, metadata={
        "description": "the entrant that forfeited (too many timeouts): no further game starts"})
    created_at = fields.String(required=True)


@blp.route("")
class Matches(MethodView):
    @blp.doc(operationId="createMatch")
    @blp.arguments(CreateMatchRequest, example={"bots": ["greedy", "random"], "games": 20,
                                                "rules": {"preset": "classic"}})
    @blp.response(202, Match, description="Accepted: the games run on the workers")
    @documents_problems(blp, 422)
    def post(self, request):
        """Start a bot-only match

        Built-in bots play on the workers, seats rotating and each deck dealt once per rotation
        (duplicate); a registered bot (`bot:<id>`) plays its games live over HTTP. Poll getMatch for
        the standings.
        """
        match = services().matches.create_match(request, request_address(),
                                                current_app.config["MATCH_GAMES_PER_CLIENT"], idempotency.resource_id())
        return match, {"Location": url_for("matches.MatchResource", match_id=match["id"])}


@blp.route("/<match_id>")
class MatchResource(MethodView):
    @blp.doc(operationId="getMatch")
    @blp.response(200, Match)
    @documents_problems(blp, 404)
    def get(self, match_id):
        """A match's progress and results per bot

        Wins, win rates with their Wilson 95% intervals, mean points and mean ms per move per entrant;
        `forfeited_by` when a registered bot timed out too often.
        """
        return services().matches.status(match_id)


@blp.route("/<match_id>/games")
class MatchGames(MethodView):
    @blp.doc(operationId="listMatchGames")
    @blp.response(200, s.GameSummary(many=True), description="Its finished games, each replayable via listEvents")
    @blp.paginate()
    @documents_problems(blp, 404)
    def get(self, match_id, pagination_parameters):
        """List a match's games

        Summaries of the match's games, oldest first; each is a game resource (its events replay it).
        """
        games, total = services().matches.match_games(match_id, pagination_parameters.first_item,
                                             pagination_parameters.page_size)
        pagination_parameters.item_count = total
        return games


@blp.route("/<match_id>/analysis")
class MatchAnalysisResource(MethodView):
    @blp.doc(operationId="analyseMatch")
    @blp.response(202, MatchAnalysis, description="Each game's analysis asked for; the bots' review so far")
    @documents_problems(blp, 404, 409, 429)
    def post(self, match_id):
        """Ask for every game of a finished match to be analysed

        For bot authors: each game analysed as analyseGame does; getMatchAnalysis then gives each
        bot's mean loss per decision, marks, accuracy and its worst decisions (with their games).
        Each game asked for counts on the app's `analyses_per_hour` (429 past it: none is asked for).
        """
        app_id = current_app_id()
        review = services().reviews.request_match(
            match_id, admit=lambda count: services().apps.admit_analyses(app_id, count))
        return review, 202, {"Location": url_for("matches.MatchAnalysisResource", match_id=match_id)}

    @blp.doc(operationId="getMatchAnalysis")
    @blp.response(200, MatchAnalysis, description="Each bot's review over the games analysed so far")
    @documents_problems(blp, 404)
    def get(self, match_id):
        """A match's analysis, per bot"""
        return services().reviews.match_review(match_id)
