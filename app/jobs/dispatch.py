"""Who does the slow work (bot moves, turn timers, match games and hand-offs): RQ workers, or
threads in the embedded mode. Either way the work is a task of app/jobs/tasks.py, a plain call
into the services, which write through the same compare-and-set as everything else and end
quietly when what they were asked is stale.
"""

import logging
import queue
import threading
import zlib
from collections.abc import Callable

from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, InvalidJobOperation, NoSuchJobError
from rq.executions import Execution, ExecutionRegistry
from rq.job import Job, JobStatus

from ..ops.scope import SEPARATOR
from ..ops.connection import StoreUnavailable
from . import tasks

log = logging.getLogger(__name__)
JOB_TIMEOUT = 60  # seconds; an expert move takes a fraction of one
MATCH_GAME_TIMEOUT = 600
FINISHED = JobStatus.FINISHED.value.encode()
JOB_RETRY = Retry(max=2, interval=[1, 5])


def match_queue_name(live_queue: str) -> str:
    """Match games have a queue of their own, so live games' bot moves never wait behind them."""
    return f"{live_queue}-matches"


def job_safe(game_id: str) -> str:
    """A game id as RQ takes it in a job id (letters, digits, `_` and `-`): an app's game
    `<app id>~<id>` becomes `<app id>__<id>`, longer than any public game id, so none collide."""
    return game_id.replace(SEPARATOR, "__")


def analysis_queue_name(live_queue: str) -> str:
    """Game analyses: the match process takes them after its match games, the live one never."""
    return f"{live_queue}-analyses"


def webhook_queue_name(live_queue: str) -> str:
    """Webhook deliveries too, served by `ronda worker --webhooks`: a slow endpoint slows no game."""
    return f"{live_queue}-webhooks"


class RQDispatcher:
    """Jobs of workers/jobs.py. Each carries the live queue it follows up on (in its meta), so the
    worker that runs it queues the next bot move where this deployment's workers listen.

    With several queue Redis instances (`connections`), a game's jobs always go to the same
    one, chosen by its id (a match's, by the match's), and each `ronda worker` serves one: the
    job queues grow past what one Redis serves, as the games do on a cluster."""

    def __init__(self, connections: list, queue_name: str):
        self.queues = [(Queue(queue_name, connection=connection),
                        Queue(match_queue_name(queue_name), connection=connection)) for connection in connections]
        self.webhooks = Queue(webhook_queue_name(queue_name), connection=connections[0])
        self.analyses = [Queue(analysis_queue_name(queue_name), connection=connection) for connection in connections]
        self._registered: set[str] = set()
        self.options = dict(job_timeout=JOB_TIMEOUT, retry=JOB_RETRY, result_ttl=60, failure_ttl=24 * 3600,
                            meta={"live_queue": queue_name})

    def _queues_of(self, game_or_match_id: str) -> tuple[Queue, Queue]:
        return self.queues[zlib.crc32(game_or_match_id.encode()) % len(self.queues)]

    def bot_turn(self, game_id: str, version: int):
        self._once(self._queues_of(game_id)[0], "workers.jobs.play_bot_turn", (game_id, version),
                   f"bot-{job_safe(game_id)}-{version}")

    def _once(self, queue: Queue, function: str, args: tuple, job_id: str, options: dict | None = None,
              waiting: set[str] | None = None) -> bool:
        """One job per game version (or match game): a re-dispatch (the reconcilers') adds none
        while the job is in hand (_in_hand), so a backlog or a slow move is never done twice. A job
        that failed or was lost (its hash may still say queued or started: its queue's push or its
        worker lost with Redis's last second, or a worker killed under it) is queued afresh.
        `waiting`: the queue's job ids, when the caller read them for many jobs at once."""
        options = options or self.options
        if waiting is not None and job_id in waiting:
            return False
        try:
            self._enqueue_unique(queue, function, args, job_id, options)
            return True
        except DuplicateJobError:
            if _in_hand(queue, job_id, waiting):
                return False
        # Executions that outlived their worker go first: Job.delete refuses a job listing one.
        queue.connection.delete(ExecutionRegistry(job_id=job_id, connection=queue.connection).key)
        try:
            Job.fetch(job_id, connection=queue.connection).delete()
        except NoSuchJobError:  # it expired meanwhile
            pass
        except InvalidJobOperation:  # a hash without its status (half of it lost, or a late heartbeat's): RQ
            queue.connection.delete(Job.key_for(job_id))  # cannot read it, so it goes as it is
        try:
            self._enqueue_unique(queue, function, args, job_id, options)
            return True
        except DuplicateJobError:  # another sweeper queued it again meanwhile: that one runs
            return False

    def _enqueue_unique(self, queue: Queue, function: str, args: tuple, job_id: str, options: dict):
        """One round trip: RQ's unique enqueue is one script; the registration of the queue in
        `rq:queues` it sends with every enqueue (a pipeline of its own: a second round trip) is
        made once a process and queue (our workers listen to named queues; only `rq info` reads it)."""
        if queue.key in self._registered:
            with queue.connection.pipeline() as unsent:  # buffers the registration; leaving it sends nothing
                queue.enqueue(function, *args, job_id=job_id, unique=True, pipeline=unsent, **options)
        else:
            queue.enqueue(function, *args, job_id=job_id, unique=True, **options)
            self._registered.add(queue.key)

    def start_turn_timer(self, game_id: str, version: int, seconds: float):
        """Nothing to queue: the write noted the game for the sweeper at the timer's end, and the
        workers' sweep queues the timeout then (Sweeper.dispatch_due), so a move's answer waits on
        no scheduling round trip."""

    def turn_timeout(self, game_id: str, version: int):
        """The timer's job, now: its turn has run out."""
        self._once(self._queues_of(game_id)[0], "workers.jobs.expire_turn", (game_id, version),
                   f"timeout-{job_safe(game_id)}-{version}")

    def deliver_webhook(self, app_id: str, delivery_id: str, lease: int):
        """An attempt of a delivery under one lease (`lease`: when it ends, ms), queued once: two
        sweeps that find the same lease ended queue one job. A job only hands its attempt to the
        process's webhook threads, so a finished job says nothing of the attempt: the next lease
        is the next job."""
        self._once(self.webhooks, "workers.jobs.deliver_webhook", (app_id, delivery_id),
                   f"webhook-{delivery_id}-{lease}", {**self.options, "retry": None})

    def analyse_game(self, game_id: str, weighed: int):
        """The next part of a game's analysis (from its `weighed`-th decision), queued once."""
        self._once(self.analyses[zlib.crc32(game_id.encode()) % len(self.analyses)], "workers.jobs.analyse_game",
                   (game_id,), f"analysis-{job_safe(game_id)}-{weighed}")

    def match_game_over(self, match_id: str, game_id: str):
        self._queues_of(match_id)[0].enqueue("workers.jobs.advance_match", match_id,
                                             job_id=f"advance-{job_safe(game_id)}", **self.options)

    def queue_depths(self) -> dict[str, int]:
        many = len(self.queues) > 1
        return {**{f"{queue.name}@{index}" if many else queue.name: queue.count
                   for index, pair in enumerate(self.queues) for queue in pair},
                self.webhooks.name: self.webhooks.count, self.analyses[0].name: sum(q.count for q in self.analyses)}

    def match_game(self, match_id: str, index: int, waiting: set[str] | None = None) -> bool:
        return self._once(self._queues_of(match_id)[1], "workers.jobs.play_match_game", (match_id, index),
                          f"match-{job_safe(match_id)}-{index}", {**self.options, "job_timeout": MATCH_GAME_TIMEOUT},
                          waiting)

    def match_games_again(self, match_id: str, indexes: list[int]) -> int:
        """The match's games not played yet, each queued again unless its job waits or runs: how many were."""
        if not indexes:
            return 0
        waiting = set(self._queues_of(match_id)[1].get_job_ids())  # read once, not once a game
        return sum(self.match_game(match_id, index, waiting) for index in indexes)


def _in_hand(queue: Queue, job_id: str, waiting: set[str] | None) -> bool:
    """The job needs no other: it waits in its queue, runs on a live worker, or has finished (the
    reconciler read the game or match before the job moved it on; its writes precede its finish,
    so a finished job's work was kept whatever Redis lost)."""
    if queue.connection.hget(Job.key_for(job_id), "status") == FINISHED:
        return True
    queued = job_id in waiting if waiting is not None else queue.get_job_position(job_id) is not None
    return queued or _running(queue, job_id)


def _running(queue: Queue, job_id: str) -> bool:
    """A live worker runs the job now: an execution of it is kept alive by its worker's heartbeat
    (workers/runner.py keeps it 15 s past the last beat). The execution registry is not enough: it
    keeps an entry for the job's whole timeout (ten minutes for a match game), also one that Redis
    restored from its file after the worker that ran it had gone."""
    connection = queue.connection
    return any(connection.exists(Execution(id=execution_id, job_id=job_id, connection=connection).key)
               for execution_id in ExecutionRegistry(job_id=job_id, connection=connection).get_execution_ids())


class InProcessDispatcher:
    """The embedded mode's worker: the same tasks, on threads of the serving process: one for live
    games' moves, one for match games, so live moves never wait behind a match. The threads are
    daemons, so stopping the server never waits for a match to end. `services` is the container
    being built around this dispatcher (app/wiring.py): tasks run only once it is complete."""

    def __init__(self, services):
        self.services = services
        self.live, self.match_work = _DaemonWorker("ronda-live-moves"), _DaemonWorker("ronda-matches")
        self.webhook_work = _DaemonWorker("ronda-webhooks")
        self._owed_match_games: set[tuple[str, int]] = set()  # submitted, not yet played
        self._lock = threading.Lock()

    def bot_turn(self, game_id: str, version: int):
        self.live.submit(lambda: tasks.play_bot_turn(self.services, game_id, version))

    def start_turn_timer(self, game_id: str, version: int, seconds: float):
        timer = threading.Timer(seconds, self.turn_timeout, args=(game_id, version))
        timer.daemon = True
        timer.start()

    def turn_timeout(self, game_id: str, version: int):
        self.live.submit(lambda: tasks.expire_turn(self.services, game_id, version))

    def deliver_webhook(self, app_id: str, delivery_id: str, lease: int):
        self.webhook_work.submit(lambda: tasks.deliver_webhook(self.services, app_id, delivery_id))

    def match_game_over(self, match_id: str, game_id: str):
        self.live.submit(lambda: tasks.advance_match(self.services, match_id))

    def analyse_game(self, game_id: str, weighed: int):
        self.match_work.submit(lambda: tasks.analyse_game(self.services, game_id))

    def queue_depths(self) -> dict[str, int]:
        return {"in-process live moves": self.live.work.qsize(),
                "in-process matches and analyses": self.match_work.work.qsize(),
                "in-process webhooks": self.webhook_work.work.qsize()}

    def match_game(self, match_id: str, index: int):
        with self._lock:
            self._owed_match_games.add((match_id, index))
        self.match_work.submit(lambda: self._play_match_game(match_id, index))

    def _play_match_game(self, match_id: str, index: int):
        try:
            tasks.play_match_game(self.services, match_id, index)
        finally:
            with self._lock:
                self._owed_match_games.discard((match_id, index))

    def match_games_again(self, match_id: str, indexes: list[int]) -> int:
        """Those not waiting here any more (the process restarted, or their work failed)."""
        with self._lock:
            lost = [index for index in indexes if (match_id, index) not in self._owed_match_games]
        for index in lost:
            self.match_game(match_id, index)
        return len(lost)


class _DaemonWorker:
    def __init__(self, name):
        self.work: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()
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
