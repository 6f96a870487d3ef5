"""Typed errors of the service layer (the engine has its own in app.engine.errors), each with the
HTTP status and the stable `code` of its problem+json answer (app/api/problems.py)."""


class ServiceError(Exception):
    status = 500
    code = "service_error"

    def __init__(self, message: str, **details):
        super().__init__(message)
        self.message = message
        self.details = details


class GameNotFound(ServiceError):
    status, code = 404, "game_not_found"


class BotNotFound(ServiceError):
    status, code = 404, "bot_not_found"


class SeatTaken(ServiceError):
    status, code = 409, "seat_taken"


class GameNotStarted(ServiceError):
    status, code = 409, "game_not_started"


class InvalidToken(ServiceError):
    status, code = 401, "invalid_token"


class NoSeat(ServiceError):
    """A valid player or bot token, for a game (or a seat) that is not its own: not a reason to log in again."""
    status, code = 403, "no_seat"


class TournamentNotFound(ServiceError):
    status, code = 404, "tournament_not_found"


class TournamentClosed(ServiceError):
    """Entries to a tournament close when it begins."""
    status, code = 409, "tournament_closed"


class TournamentFull(ServiceError):
    status, code = 409, "tournament_full"


class NotEntered(ServiceError):
    status, code = 409, "not_entered"


class NotTheOwner(ServiceError):
    status, code = 403, "not_the_owner"


class RematchDeclined(ServiceError):
    status, code = 409, "rematch_declined"


class PreconditionRequired(ServiceError):
    status, code = 428, "if_match_required"


class StaleVersion(ServiceError):
    status, code = 412, "stale_version"

    def __init__(self, current_version: int):
        super().__init__(f"the game is at version {current_version}; reload the view and try again",
                         current_version=current_version)
        self.current_version = current_version


class InvalidRequest(ServiceError):
    status, code = 422, "invalid_request"


class TooManyMatchGames(ServiceError):
    status, code = 429, "too_many_match_games"


class TooManyBots(ServiceError):
    status, code = 429, "too_many_bots"


class RateLimited(ServiceError):
    """A rate-limit budget (`budget`: address, token, bot-token or app) is spent until its window
    ends (`retry_after` seconds)."""
    status, code = 429, "rate_limited"

    def __init__(self, message: str, retry_after: int, budget: str):
        super().__init__(message, budget=budget)
        self.retry_after = retry_after


class OutcomeUnknown(ServiceError):
    status, code = 503, "outcome_unknown"


class InvalidIdempotencyKey(ServiceError):
    status, code = 422, "invalid_idempotency_key"


class IdempotencyKeyReused(ServiceError):
    status, code = 422, "idempotency_key_reused"


class IdempotentRequestInProgress(ServiceError):
    status, code = 409, "idempotent_request_in_progress"


class PlayerNotFound(ServiceError):
    status, code = 404, "player_not_found"


class PoolNotFound(ServiceError):
    status, code = 404, "pool_not_found"


class TicketNotFound(ServiceError):
    status, code = 404, "ticket_not_found"


class TicketExists(ServiceError):
    """A player has one live ticket in a pool: the problem names it (`ticket_id`)."""
    status, code = 409, "ticket_exists"


class TicketDone(ServiceError):
    """A ticket no longer waiting cannot be cancelled: the problem says its status and game."""
    status, code = 409, "ticket_done"


class GameNotOver(ServiceError):
    status, code = 409, "game_not_over"


class RematchStarted(ServiceError):
    status, code = 409, "rematch_started"


class ReplayUnavailable(ServiceError):
    status, code = 409, "replay_unavailable"


class AnalysisNotFound(ServiceError):
    status, code = 404, "analysis_not_found"


class MatchNotOver(ServiceError):
    status, code = 409, "match_not_over"


class InvalidAppKey(ServiceError):
    status, code = 401, "invalid_app_key"


class ServerKeyRequired(ServiceError):
    """An operation of the app's server (its webhooks, deliveries, settings), asked with a key that
    is not the server key, or with the server key from a browser."""
    status, code = 403, "server_key_required"


class OperatorOnly(ServiceError):
    status, code = 401, "operator_only"


class AppNotFound(ServiceError):
    status, code = 404, "app_not_found"


class QuotaExceeded(ServiceError):
    """An app's quota (`budget`: app_live_games, app_players) is reached until some are freed."""
    status, code = 429, "quota_exceeded"

    def __init__(self, message: str, budget: str, retry_after: int = 60):
        super().__init__(message, budget=budget)
        self.retry_after = retry_after


class WebhookNotFound(ServiceError):
    status, code = 404, "webhook_not_found"


class DeliveryNotFound(ServiceError):
    status, code = 404, "delivery_not_found"


class PlayerSuspended(ServiceError):
    """The player's app suspended them: their tokens act for nothing until it restores them."""
    status, code = 403, "player_suspended"


class TokenNotFound(ServiceError):
    status, code = 404, "token_not_found"


class LiveGameInPlay(ServiceError):
    """A person is in a live timed game already (the problem names it): one at a time unless the app allows more."""
    status, code = 409, "live_game_in_play"


class RatedPlayLocked(ServiceError):
    """A player who has not yet played or been around as long as their app asks before rated play."""
    status, code = 403, "rated_play_locked"
