"""Who does the slow work (bot moves, turn timers, match games and hand-offs): RQ workers, or
threads in the embedded mode. Either way the work is a task of app/jobs/tasks.py, a plain call
into the services, which write through the same compare-and-set as everything else and end
quietly when what they were asked is stale.
"""

import logging
import queue
import threading
from datetime import timedelta

from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.job import Job

from ..ops.connection import StoreUnavailable
from . import tasks

log = logging.getLogger(__name__)
JOB_TIMEOUT = 60  # seconds; an expert move takes a fraction of one
MATCH_GAME_TIMEOUT = 600
JOB_RETRY = Retry(max=2, interval=[1, 5])


def match_queue_name(live_queue: str) -> str:
    """Match games have a queue of their own, so live games' bot moves never wait behind them."""
    return f"{live_queue}-matches"


class RQDispatcher:
    """Jobs of workers/jobs.py. Each carries the live queue it follows up on (in its meta), so the
    worker that runs it queues the next bot move where this deployment's workers listen."""

    def __init__(self, connection, queue_name: str):
        self.queue = Queue(queue_name, connection=connection)
        self.match_queue = Queue(match_queue_name(queue_name), connection=connection)
        self.options = dict(job_timeout=JOB_TIMEOUT, retry=JOB_RETRY, result_ttl=60, failure_ttl=24 * 3600,
                            meta={"live_queue": queue_name})

    def bot_turn(self, game_id: str, version: int):
        self._once("workers.jobs.play_bot_turn", (game_id, version), f"bot-{game_id}-{version}")

    def _once(self, function: str, args: tuple, job_id: str):
        """One job per game version. A re-dispatch (the sweeper's) of a job still waiting in the
        queue adds no second one, so a backlog never multiplies; a job that ran, failed or was lost
        (its status may still say queued or started: a worker killed under it) is queued afresh."""
        try:
            self.queue.enqueue(function, *args, job_id=job_id, unique=True, **self.options)
        except DuplicateJobError:
            if self.queue.get_job_position(job_id) is not None:
                return
            try:
                Job.fetch(job_id, connection=self.queue.connection).delete()
            except NoSuchJobError:  # it expired meanwhile
                pass
            self.queue.enqueue(function, *args, job_id=job_id, unique=True, **self.options)

    def turn_timeout(self, game_id: str, version: int, seconds: float):
        """The timer's job at the end of the turn; at once when it is already over (the sweeper's)."""
        job_id = f"timeout-{game_id}-{version}"
        if seconds > 0:
            self.queue.enqueue_in(timedelta(seconds=seconds), "workers.jobs.expire_turn", game_id, version,
                                  job_id=job_id, **self.options)
        else:
            self._once("workers.jobs.expire_turn", (game_id, version), job_id)

    def match_game_over(self, match_id: str, game_id: str):
        self.queue.enqueue("workers.jobs.advance_match", match_id, job_id=f"advance-{game_id}", **self.options)

    def queue_depths(self) -> dict[str, int]:
        return {self.queue.name: self.queue.count, self.match_queue.name: self.match_queue.count}

    def match_game(self, match_id: str, index: int):
        self.match_queue.enqueue("workers.jobs.play_match_game", match_id, index, job_id=f"match-{match_id}-{index}",
                                 **{**self.options, "job_timeout": MATCH_GAME_TIMEOUT})


class InProcessDispatcher:
    """The embedded mode's worker: the same tasks, on threads of the serving process: one for live
    games' moves, one for match games, so live moves never wait behind a match. The threads are
    daemons, so stopping the server never waits for a match to end. `services` is the container
    being built around this dispatcher (app/wiring.py): tasks run only once it is complete."""

    def __init__(self, services):
        self.services = services
        self.live, self.match_work = _DaemonWorker("ronda-live-moves"), _DaemonWorker("ronda-matches")

    def bot_turn(self, game_id: str, version: int):
        self.live.submit(lambda: tasks.play_bot_turn(self.services, game_id, version))

    def turn_timeout(self, game_id: str, version: int, seconds: float):
        timer = threading.Timer(seconds, self.live.submit,
                                args=(lambda: tasks.expire_turn(self.services, game_id, version),))
        timer.daemon = True
        timer.start()

    def match_game_over(self, match_id: str, game_id: str):
        self.live.submit(lambda: tasks.advance_match(self.services, match_id))

    def queue_depths(self) -> dict[str, int]:
        return {"in-process live moves": self.live.work.qsize(), "in-process matches": self.match_work.work.qsize()}

    def match_game(self, match_id: str, index: int):
        self.match_work.submit(lambda: tasks.play_match_game(self.services, match_id, index))


class _DaemonWorker:
    def __init__(self, name):
        self.work = queue.SimpleQueue()
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def submit(self, work):
        self.work.put(work)

    def _run(self):
        while True:
            work = self.work.get()
            try:
                work()
            except StoreUnavailable as error:  # the sweeper makes the move again once the store answers
                log.warning("background work skipped, the store does not answer: %s", error)
            except Exception:
                log.exception("background work failed")
