"""Live games in Redis. Every key name is made here; every write is a compare-and-set on the version.

One game's keys share the hash tag `{game:<id>}` so a Redis Cluster keeps them in one slot,
which lets one Lua script check the version, replace the document and append the events
atomically: of two writers on the same version exactly one wins, and nothing is half-applied.
"""

import json
import time

import redis

# KEYS: state hash, event list, change channel. ARGV: expected version, new document, ttl (0: keep), events...
_COMPARE_AND_SET = """
local current = redis.call('HGET', KEYS[1], 'version')
if not current then return {-1, 0} end
if current ~= ARGV[1] then return {0, tonumber(current)} end
local version = tonumber(current) + 1
redis.call('HSET', KEYS[1], 'version', version, 'doc', ARGV[2])
for i = 4, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
redis.call('PUBLISH', KEYS[3], version)
return {1, version}
"""

# KEYS: state hash, event list. ARGV: document, ttl seconds (0: keep), events...
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


# KEYS: bot turns set. ARGV: game id, the score it was read with. Drops it unless noted again since.
_FORGET_BOT_TURN = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""


class GameMissing(Exception):
    pass


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


def rate_limit_key(kind: str, ident: str, window: int) -> str:
    return f"ratelimit:{kind}:{ident}:{window}"


def match_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:state"


def match_stats_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:stats"


def match_done_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:done"


def match_games_key(match_id: str) -> str:
    return f"{{match:{match_id}}}:games"


def status_index_key(status: str) -> str:
    return f"games:status:{status}"


def bot_turns_key() -> str:
    return "games:waiting_on_bot"


def connect(url: str | None) -> redis.Redis:
    """A client for `url`; with no URL, the embedded in-process server (one per process)."""
    if url:
        return redis.Redis.from_url(url)
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
    def __init__(self, client: redis.Redis, finished_ttl: int):
        self.redis = client
        self.finished_ttl = finished_ttl
        self._cas = client.register_script(_COMPARE_AND_SET)
        self._create = client.register_script(_CREATE)
        self._forget_bot_turn = client.register_script(_FORGET_BOT_TURN)

    def create(self, game_id: str, doc: dict, events: list[dict]) -> int:
        created = self._create(keys=[state_key(game_id), events_key(game_id)],
                               args=[_dump(doc), self._ttl(doc), *map(_dump, events)])
        if not created:
            raise VersionConflict(1)
        self._index(game_id, doc["status"], None)
        return 1

    def _ttl(self, doc) -> int:
        """Finished games expire; live ones stay."""
        return self.finished_ttl if doc["status"] == "finished" else 0

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
        outcome, version = self._cas(keys=[state_key(game_id), events_key(game_id), changes_channel(game_id)],
                                     args=[expected, _dump(doc), self._ttl(doc), *map(_dump, events)])
        if outcome == -1:
            raise GameMissing(game_id)
        if outcome == 0:
            raise VersionConflict(version)
        if doc["status"] != previous_status:
            self._index(game_id, doc["status"], previous_status)
        return version

    def wait_for_change(self, game_id: str, after_version: int, timeout: float) -> int:
        """Block until the game passes `after_version` or `timeout` runs out; answer the version then."""
        deadline = time.monotonic() + timeout
        pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(changes_channel(game_id))
        try:
            version = self.version(game_id)  # read after subscribing, so no change slips between
            while version <= after_version and (left := deadline - time.monotonic()) > 0:
                if pubsub.get_message(timeout=min(left, 1.0)):
                    version = self.version(game_id)
            return version
        finally:
            pubsub.close()

    def events(self, game_id: str, after: int, limit: int) -> list[dict]:
        raw = self.redis.lrange(events_key(game_id), after, after + limit - 1)
        return [json.loads(item) for item in raw]

    def event_count(self, game_id: str) -> int:
        return self.redis.llen(events_key(game_id))

    def _index(self, game_id, status, previous):
        """Listing indexes live outside the game's slot, so they follow the write (not atomically)."""
        pipe = self.redis.pipeline(transaction=False)
        if previous:
            pipe.zrem(status_index_key(previous), game_id)
        pipe.zadd(status_index_key(status), {game_id: time.time()})
        pipe.execute()

    def note_bot_turn(self, game_id: str):
        """`game_id` waits on a bot from now: the sweeper looks only at games noted long enough ago."""
        self.redis.zadd(bot_turns_key(), {game_id: int(time.time() * 1000)})

    def bot_turns_noted_before(self, seconds_since_epoch: float, limit: int) -> list[tuple[str, int]]:
        """(game id, when noted in ms) of the bot turns noted before the given time, oldest first."""
        found = self.redis.zrangebyscore(bot_turns_key(), "-inf", int(seconds_since_epoch * 1000),
                                         start=0, num=limit, withscores=True)
        return [(member.decode(), int(score)) for member, score in found]

    def forget_bot_turn(self, game_id: str, noted_at: int):
        """Drop a game that no longer waits on a bot, unless a newer bot turn was noted meanwhile."""
        self._forget_bot_turn(keys=[bot_turns_key()], args=[game_id, noted_at])

    def list_ids(self, status: str, offset: int, limit: int) -> tuple[list[str], int]:
        key = status_index_key(status)
        total = self.redis.zcard(key)
        if offset >= total:  # also keeps a huge page number away from Redis's 64-bit indexes
            return [], total
        return [i.decode() for i in self.redis.zrevrange(key, offset, offset + limit - 1)], total

    def forget_missing(self, status: str, game_ids: list[str]):
        """Finished games expire; their index entries are dropped when a listing finds them gone."""
        if game_ids:
            self.redis.zrem(status_index_key(status), *game_ids)


class MatchStore:
    """A match: its request, its tallies (one atomic script per finished game) and its games."""

    def __init__(self, client: redis.Redis, ttl: int):
        self.redis = client
        self.ttl = ttl
        self._record = client.register_script(_RECORD_MATCH_GAME)

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

    def game_ids(self, match_id: str, offset: int, limit: int) -> tuple[list[str], int]:
        key = match_games_key(match_id)
        total = self.redis.llen(key)
        if offset >= total:
            return [], total
        return [i.decode() for i in self.redis.lrange(key, offset, offset + limit - 1)], total


def _dump(value) -> str:
    return json.dumps(value, separators=(",", ":"))
