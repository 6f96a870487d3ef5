"""Typed errors of the service layer (the engine has its own in app.engine.errors)."""


class ServiceError(Exception):
    code = "service_error"

    def __init__(self, message: str, **details):
        super().__init__(message)
        self.message = message
        self.details = details


class GameNotFound(ServiceError):
    code = "game_not_found"


class BotNotFound(ServiceError):
    code = "bot_not_found"


class SeatTaken(ServiceError):
    code = "seat_taken"


class GameNotStarted(ServiceError):
    code = "game_not_started"


class InvalidToken(ServiceError):
    code = "invalid_token"


class PreconditionRequired(ServiceError):
    code = "if_match_required"


class StaleVersion(ServiceError):
    code = "stale_version"

    def __init__(self, current_version: int):
        super().__init__(f"the game is at version {current_version}; reload the view and try again",
                         current_version=current_version)
        self.current_version = current_version


class InvalidRequest(ServiceError):
    code = "invalid_request"


class TooManyMatchGames(ServiceError):
    code = "too_many_match_games"


class TooManyBots(ServiceError):
    code = "too_many_bots"


class OutcomeUnknown(ServiceError):
    code = "outcome_unknown"
