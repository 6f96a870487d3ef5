"""RQ jobs: plain functions of ids, run on this worker process's services (built at its first job
for the deployment the job came from, then kept). The tasks do the work; a stale job ends quietly."""

from rq import get_current_job

from app import wiring
from app.jobs import tasks


def _services():
    job = get_current_job()
    if job is None:
        raise RuntimeError("a job function runs inside an RQ job")
    return wiring.job_services(job.meta["live_queue"], job.connection)


def play_bot_turn(game_id: str, version: int) -> bool:
    return tasks.play_bot_turn(_services(), game_id, version)


def expire_turn(game_id: str, version: int) -> bool:
    return tasks.expire_turn(_services(), game_id, version)


def play_match_game(match_id: str, index: int) -> bool:
    return tasks.play_match_game(_services(), match_id, index)


def advance_match(match_id: str) -> bool:
    return tasks.advance_match(_services(), match_id)


def deliver_webhook(app_id: str, delivery_id: str) -> bool:
    return tasks.deliver_webhook(_services(), app_id, delivery_id)


def analyse_game(game_id: str) -> bool:
    return tasks.analyse_game(_services(), game_id)
