"""RQ jobs: plain functions of ids. The service does the work; a stale job ends quietly."""

from rq import get_current_job

from app.config import settings
from app.dispatch import build_service


def _service():
    job = get_current_job()
    # The next bot move goes to the queue this one came from.
    return build_service(job.connection, settings() | {"BOT_QUEUE": job.origin}, in_process=False)


def play_bot_turn(game_id: str, version: int) -> bool:
    return _service().play_bot_turn(game_id, version)
