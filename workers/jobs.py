"""RQ jobs: plain functions of ids. The service does the work; a stale job ends quietly."""

from rq import get_current_job

from app.config import settings
from app.dispatch import build_service


def _service():
    return build_service(get_current_job().connection, settings(), in_process=False)


def play_bot_turn(game_id: str, version: int) -> bool:
    return _service().play_bot_turn(game_id, version)
