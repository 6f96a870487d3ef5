"""Registered outside bots, their inboxes of turns, and the rating ladder, in Redis (keys: store.py)."""

import json
import time

import redis

from .store import BOT_INDEX_KEY, RATINGS_KEY, _dump, bot_inbox_key, bot_key

INBOX_LENGTH = 1000  # turns kept per bot: a bot away for longer reads its games' views instead
INBOX_TTL = 24 * 3600
BLOCK_MS = 800  # under the store's 1 s socket timeout; longer waits are several reads

# KEYS: the ratings hash. ARGV: winner, loser, points moved, initial rating. One rated game, whole.
_RATE_GAME = """
for i, entrant in ipairs({ARGV[1], ARGV[2]}) do
  local sign = i == 1 and 1 or -1
  redis.call('HSETNX', KEYS[1], entrant .. ':rating', ARGV[4])
  redis.call('HINCRBYFLOAT', KEYS[1], entrant .. ':rating', sign * tonumber(ARGV[3]))
  redis.call('HINCRBY', KEYS[1], entrant .. ':games', 1)
  redis.call('HINCRBY', KEYS[1], entrant .. (i == 1 and ':wins' or ':losses'), 1)
end
"""


class BotStore:
    def __init__(self, client: redis.Redis):
        self.redis = client
        self._rate_game = client.register_script(_RATE_GAME)

    def register(self, bot_id: str, doc: dict) -> bool:
        if not self.redis.set(bot_key(bot_id), _dump(doc), nx=True):
            return False
        self.redis.zadd(BOT_INDEX_KEY, {bot_id: time.time()})
        return True

    def load(self, bot_id: str) -> dict | None:
        raw = self.redis.get(bot_key(bot_id))
        return json.loads(raw) if raw else None

    def registered(self, offset: int, limit: int) -> tuple[list[dict], int]:
        total = self.redis.zcard(BOT_INDEX_KEY)
        if offset >= total:  # also a page number past any Redis index
            return [], total
        ids = [i.decode() for i in self.redis.zrange(BOT_INDEX_KEY, offset, offset + limit - 1)]
        return [doc for doc in map(self.load, ids) if doc], total

    def post_turn(self, bot_id: str, message: dict):
        key = bot_inbox_key(bot_id)
        self.redis.xadd(key, {"message": _dump(message)}, maxlen=INBOX_LENGTH, approximate=True)
        self.redis.expire(key, INBOX_TTL)

    def turns_after(self, bot_id: str, after: str, wait_seconds: float) -> list[tuple[str, dict]]:
        """The turns posted after stream id `after` ("0": all kept), waiting up to `wait_seconds` for one."""
        deadline = time.monotonic() + wait_seconds
        while True:
            block = max(1, min(BLOCK_MS, int((deadline - time.monotonic()) * 1000)))
            answer = self.redis.xread({bot_inbox_key(bot_id): after}, count=100,
                                      block=block if wait_seconds > 0 else None)
            entries = answer[0][1] if answer else []
            if entries or time.monotonic() >= deadline:
                return [(entry_id.decode(), json.loads(fields[b"message"])) for entry_id, fields in entries]

    def ratings(self) -> dict[str, dict]:
        """Every rated entrant: rating, games, wins, losses."""
        ladder: dict[str, dict] = {}
        for field, value in self.redis.hgetall(RATINGS_KEY).items():
            entrant, _, name = field.decode().rpartition(":")
            ladder.setdefault(entrant, {})[name] = float(value)
        return ladder

    def rate_game(self, winner: str, loser: str, change: float, initial: float):
        """One rated game: `change` points from loser to winner, both counted (one atomic step)."""
        self._rate_game(keys=[RATINGS_KEY], args=[winner, loser, change, initial])
