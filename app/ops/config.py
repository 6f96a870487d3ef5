"""Configuration from the environment; every setting has a default that works on a laptop."""

import os
from pathlib import Path
from typing import ClassVar

DESCRIPTION = """Ronda, the Moroccan fishing card game, as a service.

Create a game, hand each human seat its token (`Authorization: Bearer <token>`), read your
seat's view and act on it with `If-Match: "<version>"`; on 412 read the view again and decide
again, on 429 wait as long as `Retry-After` says. Every error is `application/problem+json`
with a stable `code`. The rules, every preset and option: [the rules page](/#/rules) (its source,
`docs/rules.md`, is also at `/static/rules.md`; presets as data: `GET /rules/presets`). A web
client to play in a browser: [/](/).
"""


# Where `ronda serve` keeps its embedded store without REDIS_URL (app/embedded.py).
DEFAULT_DATA_DIR = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "ronda"

class Config:
    API_TITLE = "Ronda"
    API_VERSION = "1.0.0"
    OPENAPI_VERSION = "3.1.0"
    OPENAPI_URL_PREFIX = "/"
    OPENAPI_JSON_PATH = "openapi.json"
    OPENAPI_SWAGGER_UI_PATH = "/docs"
    # Served from the package (app/static/vendor, with their licences), so the docs work offline.
    OPENAPI_SWAGGER_UI_URL = "/static/vendor/swagger-ui-5.35.0/"
    API_SPEC_OPTIONS: ClassVar[dict] = {
        "info": {"description": DESCRIPTION, "license": {"name": "MIT", "identifier": "MIT"},
                 "contact": {"name": "Ronda as a service"}},
        "components": {"securitySchemes": {
            "seatToken": {"type": "http", "scheme": "bearer",
                          "description": "the seat token from createGame or claimSeat"},
            "botToken": {"type": "http", "scheme": "bearer",
                         "description": "a registered bot's token from createBot"},
            "appClientKey": {"type": "apiKey", "in": "header", "name": "X-Ronda-App",
                             "description": "an app's client key (rapp.…), safe in a phone binary or a page: every "
                                            "request that sends it acts within that app (its players, games, lists, "
                                            "tickets and ladders); without an app key, the public app"},
            "appServerKey": {"type": "apiKey", "in": "header", "name": "X-Ronda-App",
                             "description": "an app's server key (rsrv.…), for its server alone: everything the "
                                            "client key does, and the app's webhooks, deliveries and settings "
                                            "(/apps/me). Refused from a browser (a request with an Origin)"},
            "operatorKey": {"type": "http", "scheme": "bearer",
                            "description": "the deployment's RONDA_OPERATOR_KEY, for /admin/apps"},
            "playerToken": {"type": "http", "scheme": "bearer",
                            "description": "a player's token from createPlayer, or a device's from a sign-in by "
                                           "the app's server: acts for every seat of the player's"},
            "onBehalfOf": {"type": "apiKey", "in": "header", "name": "Ronda-On-Behalf-Of",
                           "description": "a player's id, sent with the app's server key (never the client "
                                          "key, never from a browser) instead of their token: the server acts "
                                          "as that player of its app"}}},
    }
    MAX_CONTENT_LENGTH = 64 * 1024
    REDIS_URL = os.environ.get("REDIS_URL") or None
    # Nodes of a Redis Cluster, `redis://host:port,host:port,...` (any that answers will do): games,
    # events, listings, idempotency, limits and the sweeper's notes go there; REDIS_URL then serves
    # the job queues alone (RQ does not run on a cluster).
    REDIS_CLUSTER_URL = os.environ.get("REDIS_CLUSTER_URL") or None
    # Several Redis instances for the job queues, `redis://a:6379/0,redis://b:6379/0` (REDIS_URL
    # among them), with the games on REDIS_CLUSTER_URL: a game's jobs go to one, chosen by its
    # id, and each `ronda worker` serves the one its REDIS_URL names (docs/scaling.md).
    QUEUE_URLS = os.environ.get("REDIS_QUEUE_URLS") or None
    # Redis connections per API process (requests in flight, plus one for every live stream together).
    REDIS_MAX_CONNECTIONS = int(os.environ.get("RONDA_REDIS_MAX_CONNECTIONS", 50))
    # Durability: answer a write only once this many replicas have it (Redis WAIT, at most
    # REPLICA_WAIT_MS; past it, 503 outcome_unknown). 0: answer at once (replication is async).
    WRITE_REPLICAS = int(os.environ.get("RONDA_WRITE_REPLICAS", 0))
    REPLICA_WAIT_MS = int(os.environ.get("RONDA_REPLICA_WAIT_MS", 1000))
    EMBEDDED = False  # `ronda serve` without REDIS_URL: its own redis-server (app/embedded.py)
    # How long a game is kept (seconds) since its last write: open (unclaimed), active, finished.
    OPEN_GAME_TTL = int(os.environ.get("RONDA_OPEN_GAME_TTL", 24 * 3600))
    ACTIVE_GAME_TTL = int(os.environ.get("RONDA_ACTIVE_GAME_TTL", 7 * 24 * 3600))
    FINISHED_GAME_TTL = int(os.environ.get("RONDA_FINISHED_GAME_TTL", 24 * 3600))
    BOT_QUEUE = os.environ.get("RONDA_BOT_QUEUE", "bots")
    # "rq": bot moves go to RQ workers (`ronda worker`); "inprocess": threads of the API process.
    # Without REDIS_URL it is always "inprocess".
    BOT_DISPATCH = os.environ.get("RONDA_BOT_DISPATCH", "rq")
    # A bot move or turn timer overdue by this long is queued again by the sweeper (its job was lost).
    BOT_STALL_SECONDS = float(os.environ.get("RONDA_BOT_STALL_SECONDS", 5))
    # Seat tokens derive from it (only their hashes are stored); every API process must share it.
    SECRET_KEY = os.environ.get("RONDA_SECRET_KEY") or None
    IDEMPOTENCY_TTL = int(os.environ.get("RONDA_IDEMPOTENCY_TTL", 24 * 3600))
    # How long a request under way holds its Idempotency-Key: a request that died frees it then.
    IDEMPOTENCY_LEASE_SECONDS = int(os.environ.get("RONDA_IDEMPOTENCY_LEASE_SECONDS", 10))
    # Match games one client (address) may have running at once; 0 turns the cap off.
    MATCH_GAMES_PER_CLIENT = int(os.environ.get("RONDA_MATCH_GAMES_PER_CLIENT", 2000))
    # Outside bots one client (address) may register: an hour, and in all while kept (0: no limit).
    # A bot whose token is not used for BOT_IDLE_TTL seconds is removed.
    BOT_REGISTRATIONS_PER_HOUR = int(os.environ.get("RONDA_BOT_REGISTRATIONS_PER_HOUR", 20))
    BOTS_PER_ADDRESS = int(os.environ.get("RONDA_BOTS_PER_ADDRESS", 100))
    BOT_IDLE_TTL = int(os.environ.get("RONDA_BOT_IDLE_TTL", 30 * 24 * 3600))
    # A player whose token is not used for this many seconds is removed (their games stay as they are).
    PLAYER_IDLE_TTL = int(os.environ.get("RONDA_PLAYER_IDLE_TTL", 365 * 24 * 3600))
    # A quick-play ticket ends when its player has shown no presence (an open player stream, whose
    # keep-alives count, or a read of the ticket) for this long: twice the stream's keep-alive.
    TICKET_PRESENCE_SECONDS = float(os.environ.get("RONDA_TICKET_PRESENCE_SECONDS", 30))
    # The shortest turn timer a quick-play ticket may ask for (`turn_seconds`).
    MIN_TURN_SECONDS = int(os.environ.get("RONDA_MIN_TURN_SECONDS", 10))
    # Every game between people ends (docs/players.md): a rated game without a turn timer gets this
    # one (0: it must send one), an unrated one with two people or more this one unless its creator
    # sends `turn_timeout_seconds: null` (0: no default).
    RATED_TURN_SECONDS = int(os.environ.get("RONDA_RATED_TURN_SECONDS", 60))
    PEOPLE_TURN_SECONDS = int(os.environ.get("RONDA_PEOPLE_TURN_SECONDS", 24 * 3600))
    # Requests a minute; 0 turns a limit off.
    RATE_LIMIT_PER_ADDRESS = int(os.environ.get("RONDA_RATE_LIMIT_PER_ADDRESS", 1200))
    RATE_LIMIT_PER_TOKEN = int(os.environ.get("RONDA_RATE_LIMIT_PER_TOKEN", 600))
    # A registered bot's token, instead of its address's budget: a bot in a match against a fast
    # built-in bot acts up to about 50 times a second (one action per turn; turns come with views).
    RATE_LIMIT_PER_BOT_TOKEN = int(os.environ.get("RONDA_RATE_LIMIT_PER_BOT_TOKEN", 6000))
    # How many reverse proxies in front set X-Forwarded-For/-Proto/-Host: 0 trusts none (the default).
    TRUSTED_PROXIES = int(os.environ.get("RONDA_TRUSTED_PROXIES", 0))
    # Comma-separated browser origins allowed to call the API, or "*"; empty: no CORS headers.
    CORS_ORIGINS: ClassVar[list[str]] = [
        origin.strip() for origin in os.environ.get("RONDA_CORS_ORIGINS", "").split(",") if origin.strip()]
    # Apps (docs/apps.md). The operator's key guards /admin/apps; unset, the admin API answers 401
    # and apps are made with `ronda apps create`. A new app's quotas unless its operator sets them,
    # and the public app's (requests without X-Ronda-App); 0: none.
    OPERATOR_KEY = os.environ.get("RONDA_OPERATOR_KEY") or None
    APP_REQUESTS_PER_MINUTE = int(os.environ.get("RONDA_APP_REQUESTS_PER_MINUTE", 60_000))
    APP_LIVE_GAMES = int(os.environ.get("RONDA_APP_LIVE_GAMES", 10_000))
    APP_PLAYERS = int(os.environ.get("RONDA_APP_PLAYERS", 100_000))
    PUBLIC_REQUESTS_PER_MINUTE = int(os.environ.get("RONDA_PUBLIC_REQUESTS_PER_MINUTE", 0))
    PUBLIC_LIVE_GAMES = int(os.environ.get("RONDA_PUBLIC_LIVE_GAMES", 0))
    PUBLIC_PLAYERS = int(os.environ.get("RONDA_PUBLIC_PLAYERS", 0))
    # A person's live timed games at once (a quick-play ticket meanwhile is 409; 0: no limit), and
    # what a player has done before their first rated game (finished games, account age in seconds).
    # Players made a hour with the client key (or none, the public app's), from one address and for
    # the whole key (0: no cap); `client_creates_players` 0: only the app's server makes players.
    APP_PLAYERS_PER_ADDRESS_HOUR = int(os.environ.get("RONDA_APP_PLAYERS_PER_ADDRESS_HOUR", 100))
    PUBLIC_PLAYERS_PER_ADDRESS_HOUR = int(os.environ.get("RONDA_PUBLIC_PLAYERS_PER_ADDRESS_HOUR", 0))
    # Game analyses asked for in an hour, per app (0: no cap); a decision's time in each (app/review).
    APP_ANALYSES_PER_HOUR = int(os.environ.get("RONDA_APP_ANALYSES_PER_HOUR", 200))
    PUBLIC_ANALYSES_PER_HOUR = int(os.environ.get("RONDA_PUBLIC_ANALYSES_PER_HOUR", 200))
    ANALYSIS_BUDGET_MS = float(os.environ.get("RONDA_ANALYSIS_BUDGET_MS", 150))
    ANALYSIS_LEASE_SECONDS = float(os.environ.get("RONDA_ANALYSIS_LEASE_SECONDS", 30))  # a dead worker's part: redone
    APP_PLAYERS_PER_KEY_HOUR = int(os.environ.get("RONDA_APP_PLAYERS_PER_KEY_HOUR", 5000))
    PUBLIC_PLAYERS_PER_KEY_HOUR = int(os.environ.get("RONDA_PUBLIC_PLAYERS_PER_KEY_HOUR", 0))
    APP_CLIENT_CREATES_PLAYERS = int(os.environ.get("RONDA_APP_CLIENT_CREATES_PLAYERS", 1))
    PUBLIC_CLIENT_CREATES_PLAYERS = 1
    APP_LIVE_GAMES_PER_PLAYER = int(os.environ.get("RONDA_APP_LIVE_GAMES_PER_PLAYER", 1))
    PUBLIC_LIVE_GAMES_PER_PLAYER = int(os.environ.get("RONDA_PUBLIC_LIVE_GAMES_PER_PLAYER", 1))
    APP_RATED_MIN_GAMES = int(os.environ.get("RONDA_APP_RATED_MIN_GAMES", 0))
    PUBLIC_RATED_MIN_GAMES = int(os.environ.get("RONDA_PUBLIC_RATED_MIN_GAMES", 0))
    APP_RATED_MIN_ACCOUNT_SECONDS = int(os.environ.get("RONDA_APP_RATED_MIN_ACCOUNT_SECONDS", 0))
    PUBLIC_RATED_MIN_ACCOUNT_SECONDS = int(os.environ.get("RONDA_PUBLIC_RATED_MIN_ACCOUNT_SECONDS", 0))
    # How long a rotated key keeps working, by default (`ronda apps rotate --grace`).
    APP_KEY_GRACE_SECONDS = int(os.environ.get("RONDA_APP_KEY_GRACE_SECONDS", 24 * 3600))
    # Webhooks: the wait before each retry of a failed delivery (Standard Webhooks' schedule: about
    # a day in all), an attempt's timeout, and how long an attempt holds its delivery before the
    # sweep tries again (a worker killed under it).
    WEBHOOK_RETRY_SECONDS: ClassVar[list[float]] = [float(seconds) for seconds in os.environ.get(
        "RONDA_WEBHOOK_RETRY_SECONDS", "5,300,1800,7200,18000,36000,36000").split(",")]
    WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("RONDA_WEBHOOK_TIMEOUT_SECONDS", 10))
    WEBHOOK_LEASE_SECONDS = float(os.environ.get("RONDA_WEBHOOK_LEASE_SECONDS", 60))
    # An endpoint that gave no answer (timed out, refused) gets no attempt for this long: its
    # deliveries wait, and no other endpoint's wait behind its timeouts.
    WEBHOOK_PAUSE_SECONDS = float(os.environ.get("RONDA_WEBHOOK_PAUSE_SECONDS", 60))
    # 1: webhook endpoints may be on private networks and this machine (a deployment whose apps
    # are all its own); 0: such URLs are refused and never posted to (app/apps/egress.py).
    WEBHOOK_PRIVATE_NETWORKS = os.environ.get("RONDA_WEBHOOK_PRIVATE_NETWORKS", "0") == "1"
    # A webhook process's attempts at once, and at most to one endpoint (the others wait in its line).
    # An endpoint whose every attempt has failed for this long is disabled (`endpoint_disabled` tells the app).
    WEBHOOK_DISABLE_AFTER_SECONDS = float(os.environ.get("RONDA_WEBHOOK_DISABLE_AFTER_SECONDS", 5 * 24 * 3600))
    WEBHOOK_THREADS = int(os.environ.get("RONDA_WEBHOOK_THREADS", 32))
    WEBHOOK_PER_ENDPOINT = int(os.environ.get("RONDA_WEBHOOK_PER_ENDPOINT", 2))
    # An app's attempts at once, all its endpoints together: a share of the threads, so apps whose
    # receivers hang or trickle leave the others' deliveries their threads.
    WEBHOOK_PER_APP = int(os.environ.get("RONDA_WEBHOOK_PER_APP", max(1, WEBHOOK_THREADS // 4)))
    # Correspondence play: a human's turn timer may run up to 14 days; a `turn_reminder` is sent
    # when this fraction of a turn of at least TURN_REMINDER_MIN_SECONDS has passed (0: never).
    TURN_REMINDER_FRACTION = float(os.environ.get("RONDA_TURN_REMINDER_FRACTION", 0.75))
    TURN_REMINDER_MIN_SECONDS = float(os.environ.get("RONDA_TURN_REMINDER_MIN_SECONDS", 3600))
    SSE_KEEPALIVE_SECONDS = float(os.environ.get("RONDA_SSE_KEEPALIVE_SECONDS", 15))
    # The stream gateway's (`ronda streams`), under the names gunicorn's are set by (app/gunicorn_conf.py,
    # which reads them itself, before any of the app is imported, and says why these): connections the
    # kernel holds for accept, and how long a connection may take to send its request.
    BACKLOG = int(os.environ.get("RONDA_BACKLOG", 16384))
    KEEPALIVE_SECONDS = int(os.environ.get("RONDA_KEEPALIVE_SECONDS", 75))


def settings() -> dict:
    """The configuration as a plain dict, for code that runs outside a Flask app (workers, CLI)."""
    return {name: getattr(Config, name) for name in dir(Config) if name.isupper()}
