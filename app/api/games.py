"""/games: create, list, view, claim seats, act, read events."""

from flask import url_for, request
from flask.views import MethodView

from . import idempotency, schemas as s
from .tenancy import admit_game, current_app_id
from .events import ActionResult, Event
from .live_streams import LAST_EVENT_ID_HEADER, game_stream
from .common import (IF_MATCH, IF_NONE_MATCH, LAST_EVENT_ID, OPTIONAL_PLAYER_TOKEN, OPTIONAL_SEAT_TOKEN, SEAT_TOKEN,
                     bearer_token, documents_problems, etag_header, if_match_version, live, not_modified,
                     services, streaming, token_first)
from .smorest import Blueprint
from ..review.service import analysis_view
from .analysis_schemas import Analysis

blp = Blueprint("games", __name__, url_prefix="/games", description="Games as resources, one view per seat")


@blp.route("")
class Games(MethodView):
    @blp.doc(operationId="listGames")
    @blp.arguments(s.ListGamesQuery, location="query")
    @blp.response(200, s.GameSummary(many=True))
    @blp.paginate()
    @documents_problems(blp, 422)
    def get(self, query, pagination_parameters):
        """List games by status, newest first

        Open games wait for players (claim a seat with claimSeat); active and finished games can be
        watched. Paginated: `page` and `page_size`, with the totals in `X-Pagination`.
        """
        games, total = services().games.list_games(query["status"], pagination_parameters.first_item,
                                                   pagination_parameters.page_size, current_app_id())
        pagination_parameters.item_count = total
        return games

    @blp.doc(operationId="createGame", security=OPTIONAL_PLAYER_TOKEN)
    @blp.arguments(s.CreateGameRequest, examples={
        "against a bot": {"value": {"players": 2, "rules": {"preset": "classic"}, "seats": [
            {"type": "human", "name": "Amina"}, {"type": "bot", "bot": "greedy"}]}},
        "open seats for others to claim": {"value": {"players": 2, "rules": {"preset": "simple"}, "seats": [
            {"type": "human", "name": "Amina"}, {"type": "open"}]}},
        "four players in teams, with a turn timer": {"value": {
            "players": 4, "rules": {"preset": "traditional", "target": 41}, "turn_timeout_seconds": 60, "seats": [
                {"type": "human", "name": "Amina"}, {"type": "bot", "bot": "expert"},
                {"type": "open"}, {"type": "bot", "bot": "expert"}]}}})
    @blp.response(201, s.GameCreated, description="The game, and one secret token per human seat (shown only here)")
    @documents_problems(blp, 422)
    def post(self, request):
        """Create a game

        Seats are humans (each gets a secret token, shown only in this answer), bots (by kind or by
        `level`), or open for claimSeat. `rules` takes a preset and any option. With a player token,
        the human seat marked `mine` is the player's (their token acts for it from any device), and
        the game can be `rated`. Send Idempotency-Key to retry safely: a replay answers the same game
        and tokens.
        """
        admit_game()
        created, tokens = services().seating.create_game(request, idempotency.resource_id(), bearer_token(),
                                                       current_app_id())
        game_id = created.doc["id"]
        body = {"game": services().games.view_of(created, None),
                "tokens": [{"seat": seat, "token": token} for seat, token in sorted(tokens.items())]}
        return body, {"Location": url_for("games.Game", game_id=game_id), **etag_header(created.version)}


@blp.route("/<game_id>")
class Game(MethodView):
    @blp.doc(operationId="getGame", parameters=[IF_NONE_MATCH])
    @blp.response(200, s.GameView, description="The spectator view: no hand, no stock order, no seed before the end")
    @documents_problems(blp, 304, 404)
    def get(self, game_id):
        """Watch a game as a spectator

        No hand, no stock order and no seed before the end. The ETag is the game's version: If-None-
        Match answers 304 while nothing changed.
        """
        cached = not_modified(services().games.version(game_id))
        if cached:
            return cached
        view, version = services().games.view(game_id)
        return view, etag_header(version)


@blp.route("/<game_id>/view")
class SeatView(MethodView):
    @token_first(SEAT_TOKEN)
    @blp.doc(operationId="getSeatView", security=SEAT_TOKEN)
    @blp.arguments(s.LongPollQuery, location="query")
    @blp.arguments(s.ConditionalHeaders, location="headers", as_kwargs=True)
    @blp.response(200, s.GameView, description="The game as the token's seat sees it, with its legal actions")
    @documents_problems(blp, 304, 401, 403, 404, 422)
    def get(self, query, game_id, **_conditional):  # If-None-Match is read by not_modified()
        """See the game from your seat (optionally waiting for a newer version)

        Your hand, the table, whose turn it is, your `legal_actions` and the `version` to send as If-
        Match. With `after_version`, a long poll: it answers as soon as the game is past that version,
        or after `wait_seconds`.
        """
        token = bearer_token() or ""
        if "after_version" in query:
            services().games.seat_for(game_id, token)  # refuse a bad token before waiting, not after
            live().wait_for_change(game_id, query["after_version"], query["wait_seconds"],
                                   lambda: services().games.version(game_id))
        view, version = services().games.view(game_id, token)
        return not_modified(version) or (view, etag_header(version))


@blp.route("/<game_id>/stream")
class Stream(MethodView):
    @blp.doc(operationId="streamGame", security=OPTIONAL_SEAT_TOKEN, parameters=[LAST_EVENT_ID])
    @blp.response(200, content_type="text/event-stream",
                  description="Server-Sent Events, answered at once with a `: connected` comment: `snapshot` (the "
                              "view) first, then `event` (each with its id); `: keep-alive` comments while idle; ends "
                              "when the game is over. A game that is not there, or a token that holds none of its "
                              "seats, ends the stream with a `problem` event (its problem+json body): do not "
                              "reconnect. A server that cannot serve it now ends it with `retry:`, and EventSource "
                              "reconnects (with Last-Event-ID)")
    @documents_problems(blp, 401, 403, 404, 422)
    def get(self, game_id):
        """Follow a game live (SSE), as a seat or a spectator

        A `snapshot` (the view) first, then every `event` this viewer may see, each with its id; Last-
        Event-ID resumes without loss or duplicates. The stream ends with the game.
        """
        return streaming(game_stream, game_id, bearer_token(), request.headers.get(LAST_EVENT_ID_HEADER))


@blp.route("/<game_id>/replay")
class Replay(MethodView):
    @blp.doc(operationId="replayGame")
    @blp.response(200, s.ReplayFrame(many=True), description="The table after the deal and after each action")
    @documents_problems(blp, 404, 409)
    def get(self, game_id):
        """A finished game, step by step, every hand shown

        The engine plays the game's log over from its seed: the table, the pile, every hand and
        the scores after the deal and after each action (hands are public once a game is over).
        409 `game_not_over` before then.
        """
        return services().games.replay(game_id)


@blp.route("/<game_id>/analysis")
class GameAnalysis(MethodView):
    @blp.doc(operationId="analyseGame")
    @blp.response(202, Analysis, description="The analysis asked for (or the one asked for before): its status")
    @documents_problems(blp, 404, 409, 429)
    def post(self, game_id):
        """Ask for a finished game's analysis

        Every decision of every seat weighed by the master from what that seat knew then, and with
        every card seen (docs/analysis.md), on the workers. Asked for once: asking again answers the
        same analysis (a failed one is asked for again). 409 `game_not_over` before the game ends;
        429 `quota_exceeded` past the app's `analyses_per_hour` (Retry-After: the hour's end).
        """
        app_id = current_app_id()
        doc, _ = services().reviews.request(game_id, admit=lambda: services().apps.admit_analyses(app_id))
        return analysis_view(doc), 202, {"Location": url_for("games.GameAnalysis", game_id=game_id)}

    @blp.doc(operationId="getGameAnalysis")
    @blp.response(200, Analysis, description="pending, running (with its progress), done or failed")
    @documents_problems(blp, 404)
    def get(self, game_id):
        """A game's analysis

        Each decision's options with their values, the choice, the best, the points given up and a
        mark; each seat's mean loss, marks and accuracy (once `done`). 404 `analysis_not_found`
        before one is asked for. Any reader of the game may read it: its hands are public once it is over.
        """
        return analysis_view(services().reviews.read(game_id))


@blp.route("/<game_id>/seats/<int:seat>")
class Seat(MethodView):
    @blp.doc(operationId="claimSeat", security=OPTIONAL_PLAYER_TOKEN)
    @blp.arguments(s.ClaimSeatRequest, example={"name": "Youssef"})
    @blp.response(201, s.SeatClaimed, description="The seat's secret token (shown only here)")
    @documents_problems(blp, 404, 409, 412, 422)
    def post(self, request, game_id, seat):
        """Take an open seat

        The seat's secret token comes only in this answer; the game starts when every seat is taken.
        With a player token the seat is the player's (a rated game's seats need one; a rematch's seat
        is claimed by its former holder). Location names your seat's view.
        """
        claimed = services().seating.claim_seat(game_id, seat, request.get("name"), bearer_token(),
                                                idempotency.resource_id())
        replayed = {idempotency.REPLAYED_HEADER: idempotency.APPLIED_BEFORE} if claimed.applied_before else {}
        return ({"seat": seat, "token": claimed.token, "game": services().games.view_of(claimed.loaded, seat)},
                {"Location": url_for("games.SeatView", game_id=game_id), **etag_header(claimed.loaded.version),
                 **replayed})


@blp.route("/<game_id>/rematch")
class Rematch(MethodView):
    @token_first(SEAT_TOKEN)
    @blp.doc(operationId="rematch", security=SEAT_TOKEN)
    @blp.response(201, s.SeatClaimed, description="The next game, your seat in it and its token (your player "
                                                  "token acts for it too)")
    @documents_problems(blp, 401, 403, 404, 409, 422)
    def post(self, game_id):
        """Ask for (or accept) a rematch of a finished game

        The next game has the same seats and rules, and the next dealer. The first ask creates it and
        offers it to the other seats (`rematch_offered` on their player stream; getRematch shows it);
        bots sit at once; every human seat is kept for its last holder, who takes it by asking too
        (or with claimSeat, with their player token or their seat token of this game). Asking again,
        by anyone, answers the same game with the asker seated (a seat already theirs answers as it
        is); each player is offered it once. After a decline: 409 `rematch_declined`. Send your seat
        token or player token of this game.
        """
        loaded, seat, token, _ = services().rematches.rematch(game_id, bearer_token())
        return ({"seat": seat, "token": token, "game": services().games.view_of(loaded, seat)},
                {"Location": url_for("games.Game", game_id=loaded.doc["id"]), **etag_header(loaded.version)})

    @blp.doc(operationId="getRematch")
    @blp.response(200, s.GameSummary, description="The rematch offered after this game")
    @documents_problems(blp, 404)
    def get(self, game_id):
        """The rematch offered after a finished game, if any (its seats say who has taken theirs)

        The next game's summary: its seats say who has taken theirs. 404 when no rematch is
        offered, or it was declined.
        """
        return services().rematches.rematch_offered(game_id)

    @token_first(SEAT_TOKEN)
    @blp.doc(operationId="declineRematch", security=SEAT_TOKEN)
    @blp.response(204, description="Declined: the offered game is gone")
    @documents_problems(blp, 401, 403, 404, 409)
    def delete(self, game_id):
        """Decline the rematch of a finished game, for good

        The offered game is gone and every later ask is 409 `rematch_declined`; declining again
        answers 204. Once another seat has accepted it (asked too), 409 `rematch_started`.
        """
        services().rematches.decline_rematch(game_id, bearer_token())
        return "", 204


@blp.route("/<game_id>/seats/<int:seat>/leave")
class LeaveSeat(MethodView):
    @token_first(SEAT_TOKEN)
    @blp.doc(operationId="leaveSeat", security=SEAT_TOKEN)
    @blp.arguments(s.LeaveSeatRequest, example={"bot": "greedy"})
    @blp.response(200, s.GameView, description="The spectator view; a bot now plays the seat")
    @documents_problems(blp, 401, 403, 404, 409, 412, 422)
    def post(self, request, game_id, seat):
        """Leave your seat to a bot

        A bot (greedy unless `bot` names another) plays the seat from now on; the token stops working.
        """
        left = services().seating.leave_seat(game_id, seat, bearer_token(), request["bot"], idempotency.resource_id())
        replayed = {idempotency.REPLAYED_HEADER: idempotency.APPLIED_BEFORE} if left.applied_before else {}
        return left.view, {**etag_header(left.version), **replayed}


@blp.route("/<game_id>/resign")
class Resign(MethodView):
    @token_first(SEAT_TOKEN)
    @blp.doc(operationId="resignGame", security=SEAT_TOKEN)
    @blp.response(200, s.GameView, description="Your seat's view of the game, over")
    @documents_problems(blp, 401, 403, 404, 409)
    def post(self, game_id):
        """Give the game up

        Your camp loses: the best-placed other camp wins, as a forfeit awards it, and a rated game
        is rated. Before your first move (outside a tournament), or in a game still open, the game
        is aborted instead: nobody wins and nothing is rated. Not based on a view: no If-Match.
        A game over already: 409. Your app's server can resign for you (Ronda-On-Behalf-Of).
        """
        view, version = services().seating.resign(game_id, bearer_token())
        return view, etag_header(version)


@blp.route("/<game_id>/actions")
class Actions(MethodView):
    @token_first(SEAT_TOKEN)
    @blp.doc(operationId="playAction", security=SEAT_TOKEN, parameters=[IF_MATCH])
    @blp.arguments(s.ActionRequest, examples={
        "play": {"value": {"type": "play", "card": "7o"}},
        "play and declare (on_turn)": {"value": {"type": "play", "card": "7o", "declare": True}},
        "declare": {"value": {"type": "declare"}},
        "pass": {"value": {"type": "pass"}}})
    @blp.response(200, ActionResult, description="The seat's new view and the events the action caused")
    @documents_problems(blp, 401, 403, 404, 409, 412, 422, 428)
    def post(self, action, game_id):
        """Play a card, declare or pass

        Send an action from your view's `legal_actions` with If-Match set to that view's version. 412:
        another action came first (read the view again); 422: the rules refuse it now (the problem
        lists the legal actions).
        """
        version = if_match_version(lambda: services().games.version(game_id))
        acted = services().games.act(game_id, bearer_token(), version, action, idempotency.resource_id())
        replayed = {idempotency.REPLAYED_HEADER: idempotency.APPLIED_BEFORE} if acted.applied_before else {}
        return {"game": acted.view, "events": acted.events}, {**etag_header(acted.version), **replayed}


@blp.route("/<game_id>/events")
class Events(MethodView):
    @blp.doc(operationId="listEvents", security=OPTIONAL_SEAT_TOKEN)
    @blp.arguments(s.EventsQuery, location="query")
    @blp.response(200, Event(many=True), description="Events after `after`, as this viewer may see them")
    @documents_problems(blp, 401, 403, 404, 422)
    def get(self, query, game_id):
        """Read the event log (replay and catch-up)

        Events after `after`, as this viewer may see them (hands of other seats hidden), at most
        `limit` at a time: page on with the last id.
        """
        return services().games.events(game_id, bearer_token(), query["after"], query["limit"])
