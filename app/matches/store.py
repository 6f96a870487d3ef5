"""A match in Redis: its request, its tallies (one atomic script per finished game) and its games."""

import json
import time

from ..games.store import GameMissing
from ..ops.connection import RedisClient
from ..ops.connection import dump as _dump
from ..ops.keys import (match_done_key, match_games_key, match_games_running_key, match_key, match_results_key,
                        match_stats_key, running_matches_key)

# KEYS: done set, stats hash, games list, rated results. ARGV: game index, game id, its rating
# (JSON, or "" when unrated), field, increment, field, increment... The standings and the ladder's
# record of a game are written together, once.
_RECORD_MATCH_GAME = """
if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('RPUSH', KEYS[3], ARGV[2])
if ARGV[3] ~= '' then redis.call('RPUSH', KEYS[4], ARGV[3]) end
for i = 4, #ARGV, 2 do redis.call('HINCRBYFLOAT', KEYS[2], ARGV[i], ARGV[i + 1]) end
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


class MatchStore:
    """A match: its request, its tallies (one atomic script per finished game) and its games."""

    def __init__(self, client: RedisClient, ttl: int, queue: str):
        """`queue`: the deployment's bot queue, whose running matches this store tracks."""
        self.redis = client
        self.ttl = ttl
        self.running_key = running_matches_key(queue)
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

    def exists(self, match_id: str) -> bool:
        return bool(self.redis.exists(match_key(match_id)))

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

    def load_many(self, match_ids: list[str]) -> dict[str, tuple[dict, dict]]:
        """The matches still kept, each as `load` gives it, in one pipeline."""
        pipe = self.redis.pipeline(transaction=False)
        for match_id in match_ids:
            pipe.get(match_key(match_id))
            pipe.hgetall(match_stats_key(match_id))
        found = pipe.execute() if match_ids else []
        return {match_id: (json.loads(raw), {k.decode(): float(v) for k, v in stats.items()})
                for match_id, raw, stats in zip(match_ids, found[::2], found[1::2], strict=True) if raw is not None}

    def record_game(self, match_id: str, index: int, game_id: str, increments: dict, rated: dict | None) -> bool:
        """Count a finished game once, however often its job runs, with its rating when it is rated."""
        keys = [match_done_key(match_id), match_stats_key(match_id), match_games_key(match_id),
                match_results_key(match_id)]
        args = [index, game_id, _dump(rated) if rated else "", *(x for item in increments.items() for x in item)]
        recorded = self._record(keys=keys, args=args)
        pipe = self.redis.pipeline(transaction=False)
        for key in keys:
            pipe.expire(key, self.ttl)
        pipe.zadd(self.running_key, {match_id: int(time.time() * 1000)}, xx=True)  # it moved
        pipe.execute()
        return bool(recorded)

    def rated_results(self, match_id: str) -> list[dict]:
        """The match's rated games so far: {game_id, winner, loser} each."""
        return [json.loads(raw) for raw in self.redis.lrange(match_results_key(match_id), 0, -1)]

    def done_indexes(self, match_id: str) -> set[int]:
        return {int(index) for index in self.redis.smembers(match_done_key(match_id))}

    def track(self, match_id: str):
        """Watch a running match: the reconciler looks at it when it has not moved for a while."""
        self.redis.zadd(self.running_key, {match_id: int(time.time() * 1000)})

    def untrack(self, match_id: str):
        self.redis.zrem(self.running_key, match_id)

    def not_moved_since(self, seconds_since_epoch: float, limit: int = 100) -> list[str]:
        """Running matches that have not moved since then, longest still first."""
        ids = self.redis.zrangebyscore(self.running_key, "-inf", int(seconds_since_epoch * 1000), 0, limit)
        return [i.decode() for i in ids]

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
