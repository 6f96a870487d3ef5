"""A match in Redis: its request, its tallies (one atomic script per finished game) and its games."""

import json


from ..games.store import GameMissing
from ..ops.connection import RedisClient
from ..ops.connection import dump as _dump
from ..ops.keys import match_done_key, match_games_key, match_games_running_key, match_key, match_stats_key

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


class MatchStore:
    """A match: its request, its tallies (one atomic script per finished game) and its games."""

    def __init__(self, client: RedisClient, ttl: int):
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
