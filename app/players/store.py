"""Players in Redis: a document, the games they sit in, their record and their inbox of notices,
all under the hash tag `{player:<id>}` (app/ops/keys.py)."""

import json
import time

from ..accounts.inbox import Inboxes
from ..ops.connection import RedisClient
from ..ops.connection import dump as _dump
from ..ops.keys import (player_counted_key, player_games_key, player_inbox_key, player_key, player_notices_channel,
                        player_record_key)

GAMES_KEPT = 500  # a player's listing covers their newest 500 games

# KEYS: the games counted, the record. ARGV: game id, now (s), won (1|0), how long a game is
# remembered (s). A finished game counts once in a player's record, whatever the retries.
_COUNT_GAME = """
if redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1]) == 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[4]))
redis.call('HINCRBY', KEYS[2], 'games', 1)
if ARGV[3] == '1' then redis.call('HINCRBY', KEYS[2], 'wins', 1) end
return 1
"""


class PlayerStore:
    def __init__(self, client: RedisClient, inboxes: Inboxes, idle_ttl: int, counted_ttl: int):
        """`idle_ttl`: seconds a player is kept after their token was last used; `counted_ttl`: how
        long a counted game is remembered (longer than a finished game is kept)."""
        self.redis, self.inboxes = client, inboxes
        self.idle_ttl, self.counted_ttl = idle_ttl, counted_ttl
        self._count_game = client.register_script(_COUNT_GAME)

    def create(self, player_id: str, doc: dict) -> bool:
        return bool(self.redis.set(player_key(player_id), _dump(doc), nx=True, ex=self.idle_ttl))

    def load(self, player_id: str, used: bool = False) -> dict | None:
        """A player's document; `used` (their token was presented) keeps it another idle ttl."""
        key = player_key(player_id)
        raw = self.redis.getex(key, ex=self.idle_ttl) if used else self.redis.get(key)
        return json.loads(raw) if raw else None

    def add_game(self, player_id: str, game_id: str):
        key = player_games_key(player_id)
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, {game_id: int(time.time() * 1000)}, nx=True)
            pipe.zremrangebyrank(key, 0, -GAMES_KEPT - 1)
            pipe.expire(key, self.idle_ttl)
            pipe.execute()

    def game_ids(self, player_id: str) -> list[str]:
        """The player's games, newest first."""
        return [g.decode() for g in self.redis.zrevrange(player_games_key(player_id), 0, GAMES_KEPT - 1)]

    def forget_games(self, player_id: str, game_ids: list[str]):
        if game_ids:
            self.redis.zrem(player_games_key(player_id), *game_ids)

    def count_game(self, player_id: str, game_id: str, won: bool) -> bool:
        return bool(self._count_game(keys=[player_counted_key(player_id), player_record_key(player_id)],
                                     args=[game_id, time.time(), int(won), self.counted_ttl]))

    def record(self, player_id: str) -> dict:
        found = self.redis.hgetall(player_record_key(player_id))
        return {"games": int(found.get(b"games", 0)), "wins": int(found.get(b"wins", 0))}

    def notify(self, player_id: str, notice: dict) -> str:
        return self.inboxes.post(player_inbox_key(player_id), player_notices_channel(player_id), notice)

    def inbox_after(self, player_id: str, after: str) -> list[tuple[str, dict]]:
        return self.inboxes.after(player_inbox_key(player_id), after)
