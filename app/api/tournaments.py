"""/tournaments: round robins and Swiss tournaments of bots, each pairing a bot match."""

from flask import url_for
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from ..tournaments.service import MAX_ENTRANTS, ROUND_ROBIN, SWISS
from . import idempotency
from . import schemas as s
from .common import documents_problems, services
from .smorest import Blueprint

blp = Blueprint("tournaments", __name__, url_prefix="/tournaments",
                description="Tournaments of bots: round robin and Swiss, with standings and a crosstable")


class CreateTournamentRequest(Schema):
    format = fields.String(required=True, validate=validate.OneOf((ROUND_ROBIN, SWISS)), metadata={
        "description": "round_robin: everyone meets everyone (`cycles` times); swiss: `rounds` rounds, each "
                       "pairing entrants of about the same score who have not met"})
    rules = fields.Nested(s.RuleOptions, metadata={"example": {"preset": "classic"}})
    entrants = fields.List(fields.String(validate=validate.Length(max=60)), required=True,
                           validate=validate.Length(max=MAX_ENTRANTS), metadata={
                               "description": "as a match takes them: built-in bot kinds (a kind may enter more "
                                              "than once) and bot:<id> for registered bots; two at least"})
    games_per_pairing = s.Integer(load_default=2, validate=validate.Range(min=1, max=100), metadata={
        "description": "games each pairing plays: seats alternate, and each deck is dealt from both seats "
                       "(duplicate), so an even number lets luck cancel"})
    rounds = s.Integer(validate=validate.Range(min=1, max=MAX_ENTRANTS), metadata={
        "description": "swiss: how many (default: 5, or fewer when the field is small); at most one fewer than "
                       "the entrants (an even field) or as many (odd)"})
    cycles = s.Integer(load_default=1, validate=validate.Range(min=1, max=2), metadata={
        "description": "round_robin: 2 for a double round robin"})
    seed = fields.String(validate=validate.Length(min=1, max=128), metadata={
        "description": "every deck derives from it; a tournament with a seed of the creator's is not rated"})


class StandingRow(s.Answer):
    rank = fields.Integer(required=True)
    entrant = fields.Integer(required=True, metadata={"description": "its place in `entrants`"})
    name = fields.String(required=True)
    points = fields.Float(required=True, metadata={"description": "games won (a bye: the pairing's games)"})
    games = fields.Integer(required=True)
    buchholz = fields.Float(required=True, metadata={"description": "the opponents' points: the first tie-break"})
    sonneborn_berger = fields.Float(required=True, metadata={
        "description": "over opponents, the share of games won against each times its points: the second"})
    performance = fields.Float(allow_none=True, required=True, metadata={
        "description": "the opponents' mean rating (the match ladder) plus the Elo gap the share of games won means"})
    performance_low = fields.Float(allow_none=True, required=True, metadata={"description": "95% interval, low"})
    performance_high = fields.Float(allow_none=True, required=True, metadata={"description": "95% interval, high"})


class CrossCell(s.Answer):
    opponent = fields.Integer(required=True, metadata={"description": "its place in `entrants`"})
    wins = fields.Integer(required=True, metadata={"description": "games this entrant won against it"})
    games = fields.Integer(required=True)


class CrossRow(s.Answer):
    entrant = fields.Integer(required=True)
    name = fields.String(required=True)
    against = fields.List(fields.Nested(CrossCell), required=True, metadata={
        "description": "each opponent met, in entry order"})


class Table(s.Answer):
    a = fields.Integer(required=True)
    b = fields.Integer(allow_none=True, required=True, metadata={"description": "null: `a` has a bye"})
    match_id = fields.String(allow_none=True, required=True, metadata={"description": "its games: getMatch"})
    result = fields.List(fields.Integer(), allow_none=True, required=True, metadata={
        "description": "[games a won, games b won, games played] once its match is over"})


class Round(s.Answer):
    round = fields.Integer(required=True)
    pairings = fields.List(fields.Nested(Table), required=True)


class TournamentSummary(s.Answer):
    id = fields.String(required=True)
    format = fields.String(required=True, validate=validate.OneOf((ROUND_ROBIN, SWISS)))
    status = fields.String(required=True, validate=validate.OneOf(("running", "finished")))
    entrants = fields.List(fields.String(), required=True)
    games_per_pairing = fields.Integer(required=True)
    rounds_total = fields.Integer(required=True)
    rounds_played = fields.Integer(required=True, metadata={"description": "rounds paired so far"})
    dealing = fields.String(required=True, validate=validate.OneOf(("server", "creator_seed")))
    created_at = fields.String(required=True)


class Tournament(TournamentSummary):
    rules = fields.Nested(s.Rules, required=True)
    cycles = fields.Integer(allow_none=True, required=True)
    seed = fields.String(allow_none=True, required=True)
    rated = fields.Boolean(required=True, metadata={"description": "its games count on the match ladder"})
    standings = fields.List(fields.Nested(StandingRow), required=True, metadata={"description": "best first"})
    crosstable = fields.List(fields.Nested(CrossRow), required=True)
    rounds = fields.List(fields.Nested(Round), required=True)


@blp.route("")
class Tournaments(MethodView):
    @blp.doc(operationId="createTournament")
    @blp.arguments(CreateTournamentRequest, examples={
        "round robin": {"value": {"format": "round_robin", "entrants": ["expert", "greedy", "casual", "random"],
                                  "games_per_pairing": 2, "rules": {"preset": "classic"}}},
        "swiss": {"value": {"format": "swiss", "entrants": ["greedy", "greedy", "casual", "casual", "random"],
                            "rounds": 3}}})
    @blp.response(201, Tournament, description="The tournament, its first round (every round of a round robin) "
                                               "under way on the workers")
    @documents_problems(blp, 422)
    def post(self, request):
        """Start a tournament of bots

        Each pairing is a bot match (its games on the workers; a registered bot plays its own live,
        over HTTP). A Swiss pairs each round once the last is over; standings rank by points, then
        Buchholz, then Sonneborn-Berger (docs/tournaments.md). Send Idempotency-Key to retry safely.
        """
        tournament = services().tournaments.create(request, idempotency.resource_id())
        return tournament, {"Location": url_for("tournaments.TournamentResource", tournament_id=tournament["id"])}

    @blp.doc(operationId="listTournaments")
    @blp.response(200, TournamentSummary(many=True))
    @blp.paginate()
    @documents_problems(blp, 422)
    def get(self, pagination_parameters):
        """Tournaments, newest first

        Each with its format, status, entrants and rounds played (paginated); getTournament has the
        standings and the crosstable.
        """
        found, total = services().tournaments.page(pagination_parameters.first_item, pagination_parameters.page_size)
        pagination_parameters.item_count = total
        return found


@blp.route("/<tournament_id>")
class TournamentResource(MethodView):
    @blp.doc(operationId="getTournament")
    @blp.response(200, Tournament)
    @documents_problems(blp, 404)
    def get(self, tournament_id):
        """A tournament: standings, crosstable and rounds

        Standings best first with points, games, tie-breaks and a performance rating with its 95%
        interval; the crosstable by entrant; every round's pairings with their matches and results.
        """
        return services().tournaments.view(tournament_id)
