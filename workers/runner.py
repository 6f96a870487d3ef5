"""`ronda worker`: an RQ worker for bot moves, with a sweeper that re-dispatches overdue moves.

It outlives Redis restarts and network blips, busy or idle: RQ's loop quits on a Redis error met
outside its wait for a job (and building a worker talks to Redis), so the worker is built and
started again, with backoff, until it is asked to stop. A job cut off by the outage is not lost
for good: the sweeper queues the move again.

Two processes: the parent takes live games' bot moves alone, so they never wait behind a match
game, and sweeps; a child takes live moves first and match games when there are none. The
parent restarts the child if it dies, and every process forked here (the child, RQ's scheduler)
dies with the process that forked it, so a killed worker leaves no orphan behind.
"""

import logging
import multiprocessing
import os
import secrets
import socket
import threading
import time
from datetime import UTC, datetime

from prometheus_client import start_http_server
from rq import SimpleWorker, Worker, worker_registration
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler
from rq.scripts import release_lock
from rq.utils import utcparse
from rq.worker import WorkerStatus

from app.ops import metrics
from app import wiring
from app.jobs.dispatch import analysis_queue_name, match_queue_name, webhook_queue_name
from app.jobs.sweep import sweep_forever
from app.ops.lifelines import tie_forks_to_their_parent
from app.ops.connection import StoreUnavailable, connect

log = logging.getLogger(__name__)
MAX_BACKOFF_SECONDS = 5.0
SUPERVISE_SECONDS = 1.0
# RQ heartbeats an idle worker every `worker_ttl - 15` s (its default, 420, would be every 6.75 minutes).
WORKER_TTL = 30
HEARTBEAT_WITHIN_SECONDS = 60
HEARTBEAT_SECONDS = 5  # while a job runs, its execution is said alive this often...
EXECUTION_TTL = 3 * HEARTBEAT_SECONDS  # ...and kept this long after the last time
LIVE, MATCHES, WEBHOOKS = "live", "matches", "webhooks"
PUBSUB_WAKE_SECONDS = 1.0
REGISTER_AGAIN_SECONDS = 5.0
# RQ's scheduler beats each second; one silent this long is dead (SIGKILLed, its host gone). RQ
# itself waits out its lock (61 s) and then its next maintenance (10 minutes) before another worker
# schedules: every scheduled job of the deployment (a failed job's retry) ran late meanwhile.
SCHEDULER_SILENT_SECONDS = 5.0


# What the worker borrows from RQ below its public API, each with its source's digest for the rq
# pinned in pyproject.toml: tests/test_rq_borrowed.py fails when an upgrade changes one, naming it,
# so the override is read against the new source before the upgrade ships (as app/api/smorest.py
# does for flask-smorest).
BORROWED_FROM_RQ: dict[str, str] = {
    "SimpleWorker.execute_job": "eae0f23110aeb280",  # replaced: a thread beats while the job runs
    "SimpleWorker.prepare_execution": "899b4eaa689fcf35",  # called by the replacement
    "SimpleWorker.perform_job": "1f0e40678ae519cf",  # likewise
    "SimpleWorker.maintain_heartbeats": "b73451c9b97f7247",  # called by the beat
    "SimpleWorker.get_heartbeat_ttl": "f83449c2eebaacb1",  # replaced: a short execution ttl
    "SimpleWorker.heartbeat": "63b1089fd146d19c",  # extended: the registration written again
    "SimpleWorker.subscribe": "3437c20bb267958f",  # replaced: the command thread wakes each second
    "SimpleWorker.request_stop": "f934e7e7e6eecfee",  # extended: the request remembered
    "SimpleWorker._start_scheduler": "49c229109608aa31",  # extended: dead schedulers' locks freed first
    "scheduler.RQScheduler.acquire_locks": "4d15324e1639d356",  # called to take a dead scheduler over
    "scripts.release_lock": "123c77fa8917d08b",  # called to free a dead scheduler's lock
    "worker_registration.register": "757bc1c839a259c8",  # called to register again
}


class BotWorker(SimpleWorker):
    """SimpleWorker: no fork per job (about 2 ms instead of 11 per bot move); timeouts still apply.
    It remembers whether a signal asked it to stop, which RQ's return value does not tell.

    A job's execution is kept alive by a heartbeat while the job runs, with a short time to live,
    where SimpleWorker would keep it for the job's whole timeout (ten minutes for a match game):
    an execution whose worker died is gone within `EXECUTION_TTL`, and the reconcilers
    (app/jobs/dispatch.py) queue that job again, never one that is merely slow."""

    stop_requested = False

    def request_stop(self, signum, frame):
        self.stop_requested = True
        super().request_stop(signum, frame)

    def subscribe(self):
        """RQ's, with its command channel's thread waking each second rather than each minute:
        redis-py's PubSubWorkerThread.stop() waits for that thread, so a worker asked to stop sat
        up to 60 s in its teardown (a message still arrives at once either way)."""
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(sleep_time=PUBSUB_WAKE_SECONDS, daemon=True,
                                                       exception_handler=self._pubsub_exception_handler)  # type: ignore[assignment]

    def get_heartbeat_ttl(self, job, working_time: float = 0.0) -> int:
        return EXECUTION_TTL

    _registered_again_at = 0.0

    def heartbeat(self, timeout=None, pipeline=None):
        """RQ's beat, with the worker's registration written again now and then: a Redis that lost
        its last second (power gone before the append-only file's fsync) may have lost a
        registration made in that second, and RQ never writes it again, so the health check and
        `rq info` would call a working worker dead (the chaos soak met it)."""
        super().heartbeat(timeout, pipeline)
        self._schedule_if_nobody_does()
        if self.birth_date is None or time.monotonic() < self._registered_again_at + REGISTER_AGAIN_SECONDS:
            return
        self._registered_again_at = time.monotonic()
        connection = pipeline if pipeline is not None else self.connection
        connection.hset(self.key, mapping=self.serialize())
        worker_registration.register(self, pipeline)

    _scheduler_looked_at = 0.0

    def _start_scheduler(self, *args, **kwargs):
        self._free_dead_schedulers_locks()
        super()._start_scheduler(*args, **kwargs)

    def _schedule_if_nobody_does(self):
        """Take the scheduler over from a dead one, at most every REGISTER_AGAIN_SECONDS."""
        scheduler = self.scheduler
        if scheduler is None or time.monotonic() < self._scheduler_looked_at + REGISTER_AGAIN_SECONDS:
            return
        self._scheduler_looked_at = time.monotonic()
        if scheduler._process is not None and scheduler._process.is_alive():
            return
        self._free_dead_schedulers_locks()
        scheduler.acquire_locks(auto_start=True)

    def _free_dead_schedulers_locks(self):
        """Each of this worker's queues whose scheduler lock a silent scheduler holds is freed (only
        while it still holds it), so a live worker takes it at once."""
        for name in self.queue_names():
            key = RQScheduler.get_locking_key(name)
            found = self.connection.get(key)
            if found is None:
                continue
            holder = found.decode() if isinstance(found, bytes) else found
            beat = self.connection.hget(SCHEDULER_KEY_TEMPLATE % holder, "last_heartbeat")
            beat_at = utcparse(beat.decode() if isinstance(beat, bytes) else beat) if beat else None
            if beat_at is None or (datetime.now(UTC) - beat_at).total_seconds() > SCHEDULER_SILENT_SECONDS:
                release_lock(self.connection, key, holder)

    def execute_job(self, job, queue):
        execution = self.prepare_execution(job)
        done = threading.Event()
        beating = threading.Thread(target=self._beat, args=(job, execution, done), daemon=True)
        beating.start()
        try:
            self.perform_job(job, queue, execution)
        finally:
            done.set()
            beating.join()
        self.set_state(WorkerStatus.IDLE)

    def _beat(self, job, execution, done: threading.Event):
        while not done.wait(HEARTBEAT_SECONDS):
            try:
                self.maintain_heartbeats(job, execution)
            except Exception as error:  # the store dropped: the next beat tries again
                log.warning("job heartbeat failed: %s", error)


def worker_name(group: int, role: str) -> str:
    """`ronda.<host>.<the ronda worker's pid>.<role>.<this process's pid>.<nonce>`: what the health
    check reads to tell which process of which `ronda worker` is registered. The nonce: after Redis
    dropped, the restarted RQ worker must not wait for its own stale registration to expire (RQ
    refuses a name that is still registered)."""
    return f"ronda.{socket.gethostname()}.{group}.{role}.{os.getpid()}.{secrets.token_hex(3)}"


def run_worker(redis_url: str, queue_name: str, stall_seconds: float, burst: bool = False, metrics_port: int = 0):
    """With `metrics_port`, both processes' metrics are served there."""
    serve_metrics(metrics_port)
    tie_forks_to_their_parent()
    group = os.getpid()
    stop = threading.Event()
    matches = _MatchWorker(redis_url, [queue_name, match_queue_name(queue_name), analysis_queue_name(queue_name)],
                           group, burst, stop)
    threading.Thread(target=_sweep, args=(redis_url, queue_name, stall_seconds, stop), name="ronda-sweeper",
                     daemon=True).start()
    try:
        _work(redis_url, [queue_name], group, LIVE, burst)
    finally:
        stop.set()
        matches.stop()


def run_webhook_worker(redis_url: str, live_queue: str, burst: bool = False, metrics_port: int = 0):
    """`ronda worker --webhooks`: webhook deliveries alone, so an endpoint that answers slowly (or
    never, until its timeout) holds up no bot move and no match game. The sweep of a `ronda worker`
    (or of the embedded server) queues the deliveries due. With `metrics_port`, its metrics (each
    endpoint's attempts and their latency) are served there."""
    serve_metrics(metrics_port)
    _work(redis_url, [webhook_queue_name(live_queue)], os.getpid(), WEBHOOKS, burst)


def serve_metrics(port: int):
    """This process's metrics on `port` (0: none). A port that is taken costs the metrics only:
    the worker works on without them, and says so."""
    if not port:
        return
    try:
        start_http_server(port, registry=metrics.registry())
    except OSError as error:
        log.warning("metrics not served on port %d: %s", port, error)


class _MatchWorker:
    """The child process for match games, started again by a thread of the parent when it dies
    (unless in burst mode, where a child that ran out of work is done)."""

    def __init__(self, redis_url, queues, group, burst, stop: threading.Event):
        self.args = (redis_url, queues, group, MATCHES, burst)
        self.stopping = stop
        self.process = self._start()
        if not burst:
            # The supervising thread forks the restarts: the child's death signal is tied to it,
            # and it lives as long as this process.
            threading.Thread(target=self._supervise, name="ronda-supervisor", daemon=True).start()

    def _start(self):
        process = multiprocessing.get_context("fork").Process(target=_work, args=self.args, name="ronda-match-worker")
        process.start()
        return process

    def _supervise(self):
        while not self.stopping.wait(SUPERVISE_SECONDS):
            if not self.process.is_alive():
                log.warning("the match worker (pid %s) died with code %s; starting another", self.process.pid,
                            self.process.exitcode)
                self.process = self._start()

    def stop(self):
        self.process.terminate()
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()


def _sweep(redis_url, queue_name, stall_seconds, stop):
    """The sweeper, on this process's services once they can be built (on a cluster, building
    them asks Redis)."""
    backoff = 0.5
    while not stop.is_set():
        try:
            services = wiring.job_services(queue_name, connect(redis_url, socket_timeout=None))
            break
        except StoreUnavailable as error:
            log.warning("sweeper waiting for the store: %s", error)
            stop.wait(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
    else:
        return
    sweep_forever(services, stall_seconds, stop)


def _work(redis_url, queues, group, role, burst):
    """Run RQ on `queues` (in priority order) until asked to stop, starting again after any error:
    building the worker, registering it, a job's bookkeeping or tearing down may all meet a store
    that does not answer, and none of them may end the process."""
    connection = connect(redis_url, socket_timeout=None)
    backoff = 0.5
    while True:
        started = time.monotonic()
        worker = None
        try:
            worker = BotWorker(queues, connection=connection, name=worker_name(group, role), worker_ttl=WORKER_TTL)
            worker.work(burst=burst, with_scheduler=True)
        except StoreUnavailable as error:
            log.warning("worker lost the store: %s", error)
        except Exception:
            log.exception("worker stopped on an error")
        if burst or (worker is not None and worker.stop_requested):
            return
        if time.monotonic() - started > 60:
            backoff = 0.5
        log.warning("starting the worker again in %.1f s", backoff)
        time.sleep(backoff)
        backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)


def healthy(redis_url: str) -> bool:
    """The health check of a host: every running `ronda worker` here has both its processes
    registered and alive, and its live-moves process sent a heartbeat lately (a `--webhooks` one:
    its one process, beating)."""
    prefix = f"ronda.{socket.gethostname()}."
    now = datetime.now(UTC)
    roles: dict[int, set[str]] = {}
    for worker in Worker.all(connection=connect(redis_url)):
        if not worker.name.startswith(prefix):
            continue
        group, role, pid, _ = worker.name[len(prefix):].split(".")
        roles.setdefault(int(group), set())
        beating = worker.last_heartbeat and (now - worker.last_heartbeat).total_seconds() < HEARTBEAT_WITHIN_SECONDS
        if running(int(pid)) and (role == MATCHES or beating):
            roles[int(group)].add(role)
    alive = {group: found for group, found in roles.items() if running(group)}
    return bool(alive) and all(found in ({LIVE, MATCHES}, {WEBHOOKS}) for found in alive.values())


def running(pid: int) -> bool:
    """Running, not a zombie whose parent has not read its exit yet (Linux: /proc; elsewhere a signal 0)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
