"""RQ jobs: plain functions of ids. The services do the work; a stale job ends quietly."""

from rq import get_current_job

from app.ops.config import settings
from app.jobs.dispatch import build_services, match_queue_name, store_client
from app.ops.metrics import JOB_SECONDS


def _services():
    job = get_current_job()
    # Follow-up work goes to the live queue of the deployment this job came from.
    live_queue = job.origin.removesuffix(match_queue_name(""))
    config = settings() | {"BOT_QUEUE": live_queue}
    return build_services(store_client(config, job.connection), config, in_process=False, queue_client=job.connection)


def play_bot_turn(game_id: str, version: int) -> bool:
    games, _, _ = _services()
    with JOB_SECONDS.labels("bot_turn").time():
        return games.play_bot_turn(game_id, version)


def expire_turn(game_id: str, version: int) -> bool:
    games, _, _ = _services()
    with JOB_SECONDS.labels("turn_timeout").time():
        return games.expire_turn(game_id, version)


def play_match_game(match_id: str, index: int) -> bool:
    _, matches, _ = _services()
    with JOB_SECONDS.labels("match_game").time():
        return matches.play_match_game(match_id, index)
