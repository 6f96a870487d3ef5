"""The slow work as plain functions of ids and a process's services (app/wiring.py): RQ's jobs
(workers/jobs.py) and the embedded mode's threads run these same functions."""

from ..ops.metrics import JOB_SECONDS


def play_bot_turn(services, game_id: str, version: int) -> bool:
    with JOB_SECONDS.labels("bot_turn").time():
        return services.moves.play_bot_turn(game_id, version)


def expire_turn(services, game_id: str, version: int) -> bool:
    """A fallback move for the absent seat; a registered bot's timeouts count towards a forfeit."""
    with JOB_SECONDS.labels("turn_timeout").time():
        seat = services.moves.expire_turn(game_id, version)
        if seat is not None:
            services.matches.turn_timed_out(game_id, seat)
        return seat is not None


def play_match_game(services, match_id: str, index: int) -> bool:
    with JOB_SECONDS.labels("match_game").time():
        return services.matches.play_match_game(match_id, index)


def advance_match(services, match_id: str) -> bool:
    """A live match game ended: count it and start the next."""
    with JOB_SECONDS.labels("match_advance").time():
        services.matches.advance(match_id)
        return True


def deliver_webhook(services, app_id: str, delivery_id: str) -> bool:
    """Hand the attempt to the process's webhook threads (app/apps/attempts.py): the job ends at
    once, and the next delivery, to another endpoint, does not wait for this one's answer."""
    services.attempts.submit(app_id, delivery_id)
    return True


def analyse_game(services, game_id: str) -> bool:
    """A part of a game's analysis (a few seconds of it); the rest is queued behind other work."""
    with JOB_SECONDS.labels("analysis").time():
        return services.reviews.work(game_id)
