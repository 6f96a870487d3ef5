"""Who computes bot moves: RQ workers in production, a thread pool in the embedded mode.

Either way a bot move is a plain call of `GameService.play_bot_turn(game_id, version)`,
which acts through the same compare-and-set as a human and ends quietly when stale.
"""

import logging
from concurrent.futures import ThreadPoolExecutor

from rq import Queue, Retry

from .service import GameService
from .store import GameStore

log = logging.getLogger(__name__)
BOT_JOB = "workers.jobs.play_bot_turn"
BOT_JOB_TIMEOUT = 60  # seconds; an expert move takes a fraction of one
BOT_JOB_RETRY = Retry(max=2, interval=[1, 5])


class RQDispatcher:
    def __init__(self, connection, queue_name: str):
        self.queue = Queue(queue_name, connection=connection)

    def __call__(self, game_id: str, version: int):
        # One job id per game version: a re-enqueue (the sweeper's) replaces a lost job.
        self.queue.enqueue(BOT_JOB, game_id, version, job_id=f"bot-{game_id}-{version}",
                           job_timeout=BOT_JOB_TIMEOUT, retry=BOT_JOB_RETRY, result_ttl=60, failure_ttl=24 * 3600)


class InProcessDispatcher:
    """The embedded mode's worker: bot moves on two threads of the serving process."""

    def __init__(self):
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ronda-bot")
        self.service = None

    def __call__(self, game_id: str, version: int):
        self.executor.submit(self._run, game_id, version)

    def _run(self, game_id, version):
        try:
            self.service.play_bot_turn(game_id, version)
        except Exception:
            log.exception("bot move failed for %s at version %s", game_id, version)


def build_service(client, config: dict, in_process: bool) -> GameService:
    """The service wired to its store and to the bot dispatcher the deployment uses."""
    from .bots import BOTS
    store = GameStore(client, config["FINISHED_GAME_TTL"])
    dispatcher = InProcessDispatcher() if in_process else RQDispatcher(client, config["BOT_QUEUE"])
    service = GameService(store, bot_kinds=BOTS, on_bot_turn=dispatcher)
    if in_process:
        dispatcher.service = service
    return service
