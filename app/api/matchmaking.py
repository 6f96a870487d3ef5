"""/matchmaking/tickets: quick play. A player's ticket waits in its pool until it meets others
(or gets its bot fill, or expires); then it names the game and the player's seat."""

from flask import url_for
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from ..bots import LEVELS
from ..engine.rules import PRESETS
from ..errors import TicketDone
from ..games.moves import MISSED_TURNS_TO_FORFEIT
from ..matchmaking.service import DEFAULT_TURN_SECONDS
from ..live.feed import player_topic
from . import idempotency
from .tenancy import admit_game
from .common import PLAYER_TOKEN, bearer_token, documents_problems, live, services, token_first
from .smorest import Blueprint
from .schemas import Answer, Boolean, Integer

blp = Blueprint("matchmaking", __name__, url_prefix="/matchmaking",
                description="Quick play: tickets that meet by rating and become games")
STATUSES = ("waiting", "matched", "expired", "cancelled")


class TicketRules(Schema):
    preset = fields.String(required=True, validate=validate.OneOf(tuple(PRESETS)), metadata={
        "description": "the preset to play, as it is (tickets meet only with tickets of the same preset)"})


class TicketRulesAnswer(TicketRules, Answer):
    pass


class TicketRequest(Schema):
    rules = fields.Nested(TicketRules, required=True, metadata={
        "description": "the rules, in the form a game's take (a preset without options: a pool plays it as it is)"})
    players = Integer(required=True, validate=validate.OneOf((2, 4)))
    rated = Boolean(load_default=False, metadata={
        "description": "meet only rated tickets, for a rated game (a game with a bot fill is never rated)"})
    max_wait_seconds = Integer(load_default=60, validate=validate.Range(min=1, max=600), metadata={
        "description": "then the ticket gets its bot fill, or expires (a `ticket_expired` notice)"})
    bot_fill = Integer(allow_none=True, load_default=None, validate=validate.Range(min=1, max=len(LEVELS)), metadata={
        "description": f"a bot level (1 to {len(LEVELS)}, listLevels) that takes the other seats after "
                       "`max_wait_seconds`; null: expire instead"})
    turn_seconds = Integer(load_default=DEFAULT_TURN_SECONDS, validate=validate.Range(max=14 * 86400), metadata={
        "description": "the game's turn timer: tickets meet only tickets of the same timer. At least 10 (the "
                       "deployment's RONDA_MIN_TURN_SECONDS); up to 14 days for correspondence. A timer that runs "
                       "out before a seat's first move aborts the game; "
                       f"{MISSED_TURNS_TO_FORFEIT} in a row after it forfeit (docs/players.md)"})


class Ticket(Answer):
    id = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    pool = fields.String(required=True, metadata={"description": "<preset>-<players>, the leaderboard it rates in"})
    rules = fields.Nested(TicketRulesAnswer, required=True)
    players = fields.Integer(required=True)
    rated = fields.Boolean(required=True)
    bot_fill = fields.String(allow_none=True, required=True, metadata={"description": "the bot kind of the fill"})
    turn_seconds = fields.Integer(required=True, metadata={"description": "the game's turn timer"})
    rating = fields.Float(required=True, metadata={"description": "the player's rating in the pool when queued"})
    window = fields.Float(required=True, metadata={
        "description": "how far from `rating` the ticket reaches now: it widens while it waits"})
    created_at = fields.Float(required=True, metadata={"description": "seconds since the epoch"})
    expires_at = fields.Float(required=True, metadata={"description": "when the wait ends (seconds since the epoch)"})
    expired_because = fields.String(allow_none=True, required=True, validate=validate.OneOf(("deadline", "absent")),
                                    metadata={"description": "an expired ticket: its wait ended (`deadline`), or its "
                                                             "player was gone (`absent`: no stream, no read of the "
                                                             "ticket, for 30 s)"})
    game_id = fields.String(allow_none=True, required=True, metadata={"description": "once matched: the game"})
    seat = fields.Integer(allow_none=True, required=True, metadata={
        "description": "once matched: the player's seat (their player token acts for it)"})


class TicketQuery(Schema):
    wait_seconds = fields.Float(load_default=0, validate=validate.Range(min=0, max=30), metadata={
        "description": "wait this long at most for the ticket to leave `waiting`"})


@blp.route("/tickets")
class Tickets(MethodView):
    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="createTicket", security=PLAYER_TOKEN)
    @blp.arguments(TicketRequest, examples={
        "two players, rated": {"value": {"rules": {"preset": "classic"}, "players": 2, "rated": True,
                                         "max_wait_seconds": 30}},
        "four players, a bot after 20 s": {"value": {"rules": {"preset": "traditional"}, "players": 4,
                                                      "max_wait_seconds": 20, "bot_fill": 3}},
        "correspondence, a day a move": {"value": {"rules": {"preset": "classic"}, "players": 2,
                                                   "turn_seconds": 86400}}})
    @blp.response(202, Ticket, description="The ticket: waiting, or matched at once")
    @documents_problems(blp, 401, 409, 422)
    def post(self, request):
        """Quick play: queue for a game

        The ticket meets tickets of the same rules, player count, ratedness and turn timer whose
        ratings it reaches (its window widens while it waits); 4-player tickets make balanced teams.
        Follow it with getTicket (`wait_seconds`) or the player stream (`matched`): the ticket lives
        while you are there, and expires (`absent`) when neither is open for 30 s. One live ticket
        per player across every pool (409 `ticket_exists` names it). Send Idempotency-Key to retry
        safely.
        """
        player_id = services().players.authenticate(bearer_token())
        if request["bot_fill"] is not None:
            request = {**request, "bot_fill": LEVELS[request["bot_fill"] - 1]}
        admit_game()
        ticket = services().matchmaker.submit(player_id, request, idempotency.resource_id())
        return ticket, {"Location": url_for("matchmaking.TicketResource", ticket_id=ticket["id"])}


@blp.route("/tickets/<ticket_id>")
class TicketResource(MethodView):
    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="getTicket", security=PLAYER_TOKEN)
    @blp.arguments(TicketQuery, location="query")
    @blp.response(200, Ticket)
    @documents_problems(blp, 401, 404, 422)
    def get(self, query, ticket_id):
        """Your ticket (optionally waiting until it is matched, expired or cancelled)

        Reading it shows you are there: a waiting ticket lives on.
        """
        matchmaker, player_id = services().matchmaker, services().players.authenticate(bearer_token())
        matchmaker.present(player_id)

        def settled():
            ticket = matchmaker.ticket(ticket_id, player_id)
            return ticket if ticket["status"] != "waiting" else None
        if query["wait_seconds"]:
            found = live().wait_for_notices(player_topic(player_id), query["wait_seconds"], settled)
            if found:
                return found
        return matchmaker.ticket(ticket_id, player_id)

    @token_first(PLAYER_TOKEN)
    @blp.doc(operationId="cancelTicket", security=PLAYER_TOKEN)
    @blp.response(200, Ticket, description="The ticket, cancelled")
    @documents_problems(blp, 401, 404, 409)
    def delete(self, ticket_id):
        """Leave the queue

        A ticket still waiting is cancelled; one already matched, expired or cancelled is a 409
        `ticket_done` naming its status (and its game): a cancel racing a match has one outcome.
        """
        cancelled, ticket = services().matchmaker.cancel(ticket_id, services().players.authenticate(bearer_token()))
        if not cancelled:
            raise TicketDone(f"the ticket is {ticket['status']} already", status_now=ticket["status"],
                             game_id=ticket["game_id"], seat=ticket["seat"])
        return ticket
