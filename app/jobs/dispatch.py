"""Who does the slow work (bot moves, match games): RQ workers, or threads in the embedded mode.

Either way the work is a plain call into the services, which write through the same
compare-and-set as everything else and end quietly when what they were asked is stale.
"""

import logging
import queue
import secrets
import threading
import time
from datetime import timedelta

from rq import Queue, Retry

from ..accounts.service import BotService
from ..accounts.store import BotStore
from ..bots import BOTS
from ..matches.service import MatchService
from ..games.seats import Seats
from ..games.service import GameService, utc_now
from ..games.store import GameStore
from ..matches.store import MatchStore
from ..ops.connection import StoreUnavailable, connect

log = logging.getLogger(__name__)
JOB_TIMEOUT = 60  # seconds; an expert move takes a fraction of one
MATCH_GAME_TIMEOUT = 600
JOB_RETRY = Retry(max=2, interval=[1, 5])


def match_queue_name(live_queue: str) -> str:
    """Match games have a queue of their own, so live games' bot moves never wait behind them."""
    return f"{live_queue}-matches"


class RQDispatcher:
    def __init__(self, connection, queue_name: str):
        self.queue = Queue(queue_name, connection=connection)
        self.match_queue = Queue(match_queue_name(queue_name), connection=connection)

    def bot_turn(self, game_id: str, version: int):
        # One job id per game version: a re-enqueue (the sweeper's) replaces a lost job.
        self.queue.enqueue("workers.jobs.play_bot_turn", game_id, version, job_id=f"bot-{game_id}-{version}",
                           job_timeout=JOB_TIMEOUT, retry=JOB_RETRY, result_ttl=60, failure_ttl=24 * 3600)

    def turn_timeout(self, game_id: str, version: int, seconds: float):
        """The timer's job at the end of the turn; at once when it is already over (the sweeper's)."""
        options = dict(job_id=f"timeout-{game_id}-{version}", job_timeout=JOB_TIMEOUT, retry=JOB_RETRY,
                       result_ttl=60, failure_ttl=24 * 3600)
        if seconds > 0:
            self.queue.enqueue_in(timedelta(seconds=seconds), "workers.jobs.expire_turn", game_id, version, **options)
        else:
            self.queue.enqueue("workers.jobs.expire_turn", game_id, version, **options)

    def queue_depths(self) -> dict[str, int]:
        return {self.queue.name: self.queue.count, self.match_queue.name: self.match_queue.count}

    def match_game(self, match_id: str, index: int):
        self.match_queue.enqueue("workers.jobs.play_match_game", match_id, index, job_id=f"match-{match_id}-{index}",
                                 job_timeout=MATCH_GAME_TIMEOUT, retry=JOB_RETRY, result_ttl=60,
                                 failure_ttl=24 * 3600)


class InProcessDispatcher:
    """The embedded mode's worker: the same calls, on threads of the serving process: one for live
    games' moves, one for match games, so live moves never wait behind a match. The threads are
    daemons, so stopping the server never waits for a match to end."""

    def __init__(self):
        self.live, self.match_work = _DaemonWorker("ronda-live-moves"), _DaemonWorker("ronda-matches")
        self.games = self.matches = None

    def bot_turn(self, game_id: str, version: int):
        self.live.submit(lambda: self.games.play_bot_turn(game_id, version))

    def turn_timeout(self, game_id: str, version: int, seconds: int):
        timer = threading.Timer(seconds, self.live.submit, args=(lambda: self.games.expire_turn(game_id, version),))
        timer.daemon = True
        timer.start()

    def queue_depths(self) -> dict[str, int]:
        return {"in-process live moves": self.live.work.qsize(), "in-process matches": self.match_work.work.qsize()}

    def match_game(self, match_id: str, index: int):
        self.match_work.submit(lambda: self.matches.play_match_game(match_id, index))


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


LISTING_PRUNE_SECONDS = 60


def sweep_forever(service, stall_seconds: float, stop: threading.Event):
    """A game never stalls: a bot move or turn timer overdue by `stall_seconds` gets a new job.
    Once a minute the listings drop the games that expired."""
    next_prune = 0.0
    while not stop.wait(max(0.5, stall_seconds / 3)):
        try:
            count = service.redispatch_stalled(stall_seconds)
            if count:
                log.warning("re-dispatched %d overdue move(s)", count)
            if time.monotonic() >= next_prune:
                next_prune = time.monotonic() + LISTING_PRUNE_SECONDS
                service.prune_listings()
        except StoreUnavailable as error:
            log.warning("sweep skipped, the store does not answer: %s", error)
        except Exception:
            log.exception("sweep failed")


_PROCESS_SECRET = secrets.token_bytes(32)


def secret_key(config: dict) -> bytes:
    """The server secret that seat tokens derive from. Without RONDA_SECRET_KEY, one drawn for this
    process: tokens still work everywhere (their hashes are stored), but an idempotent replay of an
    answer with tokens needs the secret that made them, so every API process must share one."""
    configured = config.get("SECRET_KEY")
    return configured.encode() if configured else _PROCESS_SECRET


def store_client(config: dict, queue_client):
    """The games' Redis: the cluster when REDIS_CLUSTER_URL is set, else the queues' own."""
    if not config.get("REDIS_CLUSTER_URL"):
        return queue_client
    return connect(config["REDIS_CLUSTER_URL"], max_connections=config["REDIS_MAX_CONNECTIONS"], cluster=True)


def build_services(client, config: dict, in_process: bool, queue_client=None) -> tuple[GameService, MatchService,
                                                                                      BotService]:
    """The services wired to their stores (on `client`) and to the dispatcher this deployment uses
    (RQ on `queue_client`, the same Redis unless the games live on a cluster)."""
    dispatcher = InProcessDispatcher() if in_process else RQDispatcher(queue_client or client, config["BOT_QUEUE"])
    ttl_by_status = {"open": config["OPEN_GAME_TTL"], "active": config["ACTIVE_GAME_TTL"],
                     "finished": config["FINISHED_GAME_TTL"]}
    store = GameStore(client, ttl_by_status, config["WRITE_REPLICAS"], config["REPLICA_WAIT_MS"])
    bots = BotService(BotStore(client, store.feed_commands[0], config["BOT_IDLE_TTL"]), utc_now)
    games = GameService(store, Seats(secret_key(config), BOTS, bots), dispatcher=dispatcher, outside_bots=bots)
    matches = MatchService(MatchStore(client, config["FINISHED_GAME_TTL"]), games, dispatcher, bots)
    if in_process:
        dispatcher.games, dispatcher.matches = games, matches
    return games, matches, bots
