"""The live streams, each opened from what its request carries and nothing of Flask's: the API's
views and the stream gateway (app/gateway, a server of its own) open them alike.

An opener refuses what it can before the stream's first byte (a missing or unknown token, a
malformed Last-Event-ID: a typed error, answered as a problem) and is then the stream's chunks.
"""


from ..errors import InvalidToken
from ..live.feed import bot_topic, player_topic, tournament_topic
from ..live.streams import Live, event_stream, inbox_stream
from .bodies import integer_header, turn_id_header
from .common import BOT_TOKEN, PLAYER_TOKEN, missing_token
from .problems import problem_of

LAST_EVENT_ID_HEADER = "Last-Event-ID"


def game_stream(live: Live, game_id: str, token: str | None, last_event_id: str | None, outlet=None):
    """A game as a seat (with its token) or a spectator sees it; `outlet`: its connection, which the
    hub may write (app/live/hub.py)."""
    resume_after = integer_header(LAST_EVENT_ID_HEADER, last_event_id)
    return event_stream(live.services.games, live.hub, game_id, token, resume_after, live.keepalive, problem_of,
                        outlet)


def notices_stream(live: Live, token: str | None, last_event_id: str | None):
    """A player's notices, for every game and ticket of theirs; while it is read, they are present."""
    players, matchmaker = live.services.players, live.services.matchmaker
    player_id = players.authenticate(_required(token, PLAYER_TOKEN))
    after = turn_id_header(LAST_EVENT_ID_HEADER, last_event_id) or players.recent_cursor()
    return inbox_stream(live.hub, player_topic(player_id), lambda after: players.inbox_after(player_id, after), after,
                        live.keepalive, on_keepalive=lambda: matchmaker.present(player_id))


def turns_stream(live: Live, token: str | None, last_event_id: str | None):
    """A registered bot's turns, and its games' and matches' ends."""
    accounts = live.services.accounts
    bot_id = accounts.authenticate(_required(token, BOT_TOKEN))
    after = turn_id_header(LAST_EVENT_ID_HEADER, last_event_id) or accounts.recent_cursor()
    return inbox_stream(live.hub, bot_topic(bot_id), lambda after: accounts.inbox_after(bot_id, after), after,
                        live.keepalive)


def tournament_stream(live: Live, tournament_id: str, last_event_id: str | None):
    """A tournament's rounds and standings (public)."""
    start, read_after = live.services.tournaments.events_after(tournament_id,
                                                               turn_id_header(LAST_EVENT_ID_HEADER, last_event_id))
    return inbox_stream(live.hub, tournament_topic(tournament_id), read_after, start, live.keepalive)


def _required(token: str | None, security: list[dict]) -> str:
    if token is None:
        raise InvalidToken(missing_token(security))
    return token
