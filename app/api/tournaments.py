"""/tournaments: round robin, Swiss and arena, of bots and of people, with standings, a crosstable
and a stream of their changes."""

from flask import Response, url_for, request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from ..errors import ServiceError
from ..games.moves import MISSED_TURNS_TO_FORFEIT
from ..tournaments.service import (ARENA, CANCELLED, DUTCH_FIELD, FINISHED, MAX_ENTRANTS, MOST_ENTRANTS, OPEN, PERSON,
                                   ROUND_ROBIN, RUNNING, SWISS)
from . import idempotency
from . import schemas as s
from .live_streams import LAST_EVENT_ID_HEADER, tournament_stream
from .common import (OPTIONAL_PLAYER_TOKEN, PLAYER_TOKEN, bearer_token, documents_problems, services,
                     streaming, token_first)
from .smorest import Blueprint
from .tenancy import current_app_id, server_app

blp = Blueprint("tournaments", __name__, url_prefix="/tournaments",
                description="Tournaments of bots and people: round robin, Swiss and arena, with standings, a "
                            "crosstable and a stream of their changes")
FORMATS = (ROUND_ROBIN, SWISS, ARENA)
STATUSES = (OPEN, RUNNING, FINISHED, CANCELLED)


class CreateTournamentRequest(Schema):
    format = fields.String(required=True, validate=validate.OneOf(FORMATS), metadata={
        "description": "round_robin: everyone meets everyone (`cycles` times), by FIDE's Berger tables; swiss: "
                       "`rounds` rounds, at tables of two by FIDE's Dutch system (the first seat as white); "
                       "arena: for `duration_seconds`, whoever is free meets whoever else is"})
    rules = fields.Nested(s.RuleOptions, metadata={"example": {"preset": "classic"}})
    entrants = fields.List(fields.String(validate=validate.Length(max=60)), load_default=list,
                           validate=validate.Length(max=MAX_ENTRANTS), metadata={
                               "description": "bots, as a match takes them: built-in bot kinds (a kind may enter "
                                              "more than once) and bot:<id> for registered bots; two at least, "
                                              "unless people enter (`starts_in_seconds`)"})
    scoring = fields.String(load_default="games", validate=validate.OneOf(("games", "streaks")), metadata={
        "description": "games: a point a game won; streaks (an arena of one game a table): Lichess's arena scoring, "
                       "2 a win, 4 a win after two wins in a row"})
    max_entrants = s.Integer(validate=validate.Range(min=2, max=MOST_ENTRANTS), metadata={
        "description": f"the most entrants it takes (people entering; default {MAX_ENTRANTS}; a Swiss at tables "
                       f"of two: {DUTCH_FIELD} at most)"})
    starts_in_seconds = s.Integer(validate=validate.Range(min=0, max=7 * 86400), metadata={
        "description": "open it to people (enterTournament) for this long, then start it with whoever entered; "
                       "without it, it starts at once"})
    games_per_pairing = s.Integer(load_default=2, validate=validate.Range(min=1, max=100), metadata={
        "description": "games each pairing plays: seats alternate (and, bots with bots, each deck is dealt from "
                       "both seats, so an even number lets luck cancel)"})
    rounds = s.Integer(validate=validate.Range(min=1, max=MAX_ENTRANTS), metadata={
        "description": "swiss: how many (default: 5, or fewer when the field is small); at tables of two, at most "
                       "half the entrants, rounded up (every round then pairs, nobody meeting twice)"})
    cycles = s.Integer(load_default=1, validate=validate.Range(min=1, max=2), metadata={
        "description": "round_robin: 2 for a double round robin"})
    players_per_table = s.Integer(load_default=2, validate=validate.Range(min=2, max=4), metadata={
        "description": "2, or 3 or 4 for Swiss and arena (at 4, the rules' teams make partners of seats across)"})
    duration_seconds = s.Integer(validate=validate.Range(min=5, max=86400), metadata={
        "description": "arena: how long it pairs (its last pairings then play out)"})
    turn_seconds = s.Integer(load_default=60, validate=validate.Range(max=14 * 86400), metadata={
        "description": "the turn timer of people's games (at least the deployment's RONDA_MIN_TURN_SECONDS): a "
                       f"seat that never moves loses the game, {MISSED_TURNS_TO_FORFEIT} missed turns in a row "
                       "forfeit it"})
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


class TableResult(s.Answer):
    wins = fields.List(fields.Integer(), required=True, metadata={
        "description": "games each entrant of `seats` won (with team rules, partners win together)"})
    games = fields.Integer(required=True)


class Table(s.Answer):
    seats = fields.List(fields.Integer(), required=True, metadata={
        "description": "its entrants (places in `entrants`), in seat order of its first game; one alone: a bye"})
    match_id = fields.String(allow_none=True, required=True, metadata={
        "description": "bots only: the match of its games (getMatch)"})
    games = fields.List(fields.String(), allow_none=True, required=True, metadata={
        "description": "a person at it: its games so far, one after another (getGame), seats rotating each game"})
    result = fields.Nested(TableResult, allow_none=True, required=True, metadata={
        "description": "once its games are over (a bye: won whole)"})
    wins = fields.List(fields.Integer(), metadata={
        "description": "a person at it: games each entrant of `seats` won so far"})


class Round(s.Answer):
    round = fields.Integer(required=True)
    pairings = fields.List(fields.Nested(Table), required=True, metadata={"description": "its tables"})


class TournamentRoundEvent(s.Answer):
    """streamTournament's `round`: a round paired."""
    id = fields.String(required=True, metadata={"description": "Last-Event-ID resumes after it"})
    type = fields.String(required=True, validate=validate.OneOf(["round"]))
    round = fields.Integer(required=True)
    pairings = fields.List(fields.Nested(Table), required=True, metadata={"description": "its tables"})


class TournamentStandingsEvent(s.Answer):
    """streamTournament's `standings`: the tournament after a change."""
    id = fields.String(required=True, metadata={"description": "Last-Event-ID resumes after it"})
    type = fields.String(required=True, validate=validate.OneOf(["standings"]))
    revision = fields.Integer(required=True, metadata={"description": "getTournament's `revision` at this change"})
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    rounds_played = fields.Integer(required=True)
    standings = fields.List(fields.Nested(StandingRow), required=True, metadata={"description": "best first"})


class TournamentSummary(s.Answer):
    id = fields.String(required=True)
    format = fields.String(required=True, validate=validate.OneOf(FORMATS))
    status = fields.String(required=True, validate=validate.OneOf(STATUSES), metadata={
        "description": "open (people may enter), running, finished; cancelled: fewer had entered than a table "
                       "seats"})
    entrants = fields.List(fields.String(), required=True, metadata={
        "description": "bot kinds, bot:<id>, and player:<id> for people"})
    names = fields.List(fields.String(), required=True, metadata={"description": "each entrant's name, in order"})
    games_per_pairing = fields.Integer(required=True)
    rounds_total = fields.Integer(allow_none=True, required=True, metadata={
        "description": "null until it starts, and for an arena"})
    rounds_played = fields.Integer(required=True, metadata={"description": "rounds paired so far"})
    dealing = fields.String(required=True, validate=validate.OneOf(("server", "creator_seed")))
    turn_seconds = fields.Integer(required=True)
    duration_seconds = fields.Integer(allow_none=True, required=True)
    players_per_table = fields.Integer(required=True)
    teams = fields.Boolean(required=True, metadata={"description": "tables of four in partnerships"})
    created_at = fields.String(required=True)
    starts_at = fields.String(required=True)
    ends_at = fields.String(allow_none=True, required=True, metadata={"description": "an arena's end"})
    away = fields.List(fields.Integer(), required=True, metadata={
        "description": "entrants (places in `entrants`) paired no more: withdrawn, or paused after a missed arena "
                       "game; entering again brings them back while it takes entries"})
    max_entrants = fields.Integer(required=True)
    scoring = fields.String(required=True, validate=validate.OneOf(("games", "streaks")))


class Tournament(TournamentSummary):
    rules = fields.Nested(s.Rules, required=True)
    cycles = fields.Integer(allow_none=True, required=True)
    seed = fields.String(allow_none=True, required=True)
    rated = fields.Boolean(required=True, metadata={
        "description": "bots' games count on the match ladder, people's games between people on their pool's"})
    revision = fields.Integer(required=True, metadata={"description": "one more at each change"})
    standings = fields.List(fields.Nested(StandingRow), required=True, metadata={"description": "best first"})
    crosstable = fields.List(fields.Nested(CrossRow), required=True)
    rounds = fields.List(fields.Nested(Round), required=True)


class TournamentFilter(Schema):
    status = fields.String(validate=validate.OneOf(STATUSES))
    format = fields.String(validate=validate.OneOf(FORMATS))


@blp.route("")
class Tournaments(MethodView):
    @blp.doc(operationId="createTournament", security=OPTIONAL_PLAYER_TOKEN)
    @blp.arguments(CreateTournamentRequest, examples={
        "round robin": {"value": {"format": "round_robin", "entrants": ["expert", "greedy", "casual", "random"],
                                  "games_per_pairing": 2, "rules": {"preset": "classic"}}},
        "swiss": {"value": {"format": "swiss", "entrants": ["greedy", "greedy", "casual", "casual", "random"],
                            "rounds": 3}},
        "swiss at tables of four, in partnerships": {"value": {
            "format": "swiss", "players_per_table": 4, "rounds": 3, "rules": {"preset": "classic"},
            "entrants": ["greedy", "greedy", "casual", "casual", "random", "random", "expert", "expert"]}},
        "arena of people, open for ten minutes": {"value": {
            "format": "arena", "starts_in_seconds": 600, "duration_seconds": 1800, "games_per_pairing": 1,
            "turn_seconds": 30, "rules": {"preset": "classic"}}}})
    @blp.response(201, Tournament, description="The tournament: open to people, or its first round (every round "
                                               "of a round robin of bots) under way")
    @documents_problems(blp, 422)
    def post(self, request):
        """Create a tournament

        Two bots' pairing is a bot match (its games on the workers; a registered bot plays its own
        live, over HTTP); a pairing with a person is their games one after another, each person
        told `tournament_round`. A Swiss pairs each round once the last is over, an arena whoever
        is free; standings rank by points, then Buchholz, then Sonneborn-Berger
        (docs/tournaments.md). Send Idempotency-Key to retry safely.
        """
        tournament = services().tournaments.create(request, current_app_id(), idempotency.resource_id(),
                                                   owner=_caller())
        return tournament, {"Location": url_for("tournaments.TournamentResource", tournament_id=tournament["id"])}

    @blp.doc(operationId="listTournaments")
    @blp.arguments(TournamentFilter, location="query")
    @blp.response(200, TournamentSummary(many=True))
    @blp.paginate()
    @documents_problems(blp, 422)
    def get(self, query, pagination_parameters):
        """Tournaments, newest first

        Each with its format, status, entrants and rounds played (paginated); getTournament has the
        standings and the crosstable. `status` and `format` filter the newest 1,000.
        """
        found, total = services().tournaments.page(current_app_id(), pagination_parameters.first_item,
                                                   pagination_parameters.page_size, query.get("status"),
                                                   query.get("format"))
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


@blp.route("/<tournament_id>/entrants")
class Entrants(MethodView):
    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="enterTournament", security=PLAYER_TOKEN)
    @blp.response(200, Tournament, description="The tournament, you among its entrants")
    @documents_problems(blp, 401, 404, 409, 422)
    def post(self, tournament_id):
        """Enter a tournament

        While it is open (until its `starts_at`). Entering twice changes nothing. Your games come
        as `tournament_round` notices on your stream, each a game with your seat.
        """
        player_id = services().players.authenticate(bearer_token())
        return services().tournaments.enter(tournament_id, player_id)


@blp.route("/<tournament_id>/stream")
class TournamentStream(MethodView):
    @blp.doc(operationId="streamTournament", parameters=[{
        "in": "header", "name": "Last-Event-ID", "required": False, "schema": {"type": "string"},
        "description": "resume after this event id"}])
    @blp.response(200, content_type="text/event-stream", description=(
        "Server-Sent Events with ids: `round` (a round paired: its pairings) and `standings` (after every "
        "change: revision, status, rounds played, standings); `: keep-alive` comments while idle"))
    @documents_problems(blp, 404, 422)
    def get(self, tournament_id):
        """Follow a tournament (SSE)

        Starts with its last `standings`; Last-Event-ID resumes after that event (each `standings`
        is whole, so a reader far behind needs only the last).
        """
        return streaming(tournament_stream, tournament_id, request.headers.get(LAST_EVENT_ID_HEADER))


@blp.route("/<tournament_id>/withdraw")
class Withdrawal(MethodView):
    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="withdrawFromTournament", security=PLAYER_TOKEN)
    @blp.response(200, Tournament, description="The tournament, without you paired in it from now")
    @documents_problems(blp, 401, 404, 409)
    def post(self, tournament_id):
        """Withdraw from a tournament

        Before it starts, your entry is taken back. Under way, you are paired no more: your game in
        play is resigned, your results stay, and a round robin's later pairings are your opponents'
        byes. Entering again brings you back while it takes entries (an arena until its end, a Swiss
        until half its rounds). 409 `not_entered` if you are not in it. The app's server may do it
        for a player (Ronda-On-Behalf-Of).
        """
        player_id = services().players.authenticate(bearer_token())
        return services().tournaments.withdraw(tournament_id, player_id)


@blp.route("/<tournament_id>/cancel")
class Cancellation(MethodView):
    @blp.doc(operationId="cancelTournament", security=OPTIONAL_PLAYER_TOKEN)
    @blp.response(200, Tournament, description="The tournament, cancelled")
    @documents_problems(blp, 401, 403, 404, 409)
    def post(self, tournament_id):
        """Cancel a tournament (its owner)

        Its owner, the player who made it (their token) or the app's server (its server key),
        calls it off before or during it: no more pairings, and games in play end `cancelled`,
        nobody winning and nothing rated. 403 `not_the_owner` for anyone else.
        """
        return services().tournaments.cancel(tournament_id, _caller() or "")


def _caller() -> str | None:
    """Who makes or runs a tournament: the player of the token sent (player:<id>), else the app's
    server (app:<id>, its server key), else nobody in particular."""
    if bearer_token() is not None:
        return PERSON + services().players.authenticate(bearer_token())
    try:
        return f"app:{server_app()}"
    except ServiceError:
        return None


class ExportQuery(Schema):
    format = fields.String(required=True, validate=validate.OneOf(("trf", "jsonl")), metadata={
        "description": "trf: FIDE's TRF-16 (a Swiss or a round robin at tables of two); jsonl: a JSON line a game, "
                       "with its round, table and events"})


@blp.route("/<tournament_id>/export")
class Export(MethodView):
    @blp.doc(operationId="exportTournament", responses={200: {
        "description": "TRF-16 as text/plain, or JSON Lines (application/x-ndjson), one line a game",
        "content": {"text/plain": {"schema": {"type": "string"}},
                    "application/x-ndjson": {"schema": {"type": "string"}}}}})
    @blp.arguments(ExportQuery, location="query")
    @documents_problems(blp, 404, 422)
    def get(self, query, tournament_id):
        """A tournament written out

        For rating offices and pairing programs, FIDE's TRF-16 report; for an archive, its games and
        their events as JSON Lines.
        """
        lines = services().tournaments.export(tournament_id, query["format"])
        media = "text/plain" if query["format"] == "trf" else "application/x-ndjson"
        return Response(lines, mimetype=media)
