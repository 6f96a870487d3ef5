"""Registered outside bots, their inboxes of turns, and the rating ladder, in Redis (keys: store.py)."""

import json
import time


from ..ops.connection import RedisClient
from ..ops.connection import dump as _dump
from ..ops.keys import (BOT_INDEX_KEY, RATED_GAMES_KEY, RATINGS_KEY, bot_inbox_key, bot_key, bot_registrations_key,
                        bot_turns_channel)

INBOX_LENGTH = 1000  # turns kept per bot: a bot away for longer reads its games' views instead
INBOX_TTL = 24 * 3600
TURNS_PER_READ = 100

# KEYS: the inbox stream, its channel. ARGV: the turn, inbox length, ttl, the publish command
# (SPUBLISH on a cluster). The turn is kept and announced in one step, so a reader that subscribed
# before reading the inbox misses none (app/live.py serves every bot stream on one subscription).
_NOTIFY = """
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'message', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call(ARGV[4], KEYS[2], id)
return id
"""

# KEYS: the ratings hash, the rated games. ARGV: game id, winner, loser, points moved, initial
# rating, now (s), how long a rated game is remembered (s). One rated game, whole, and only once.
_RATE_GAME = """
if redis.call('ZADD', KEYS[2], 'NX', ARGV[6], ARGV[1]) == 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[6]) - tonumber(ARGV[7]))
table.remove(ARGV, 1)
for i, entrant in ipairs({ARGV[1], ARGV[2]}) do
  local sign = i == 1 and 1 or -1
  redis.call('HSETNX', KEYS[1], entrant .. ':rating', ARGV[4])
  redis.call('HINCRBYFLOAT', KEYS[1], entrant .. ':rating', sign * tonumber(ARGV[3]))
  redis.call('HINCRBY', KEYS[1], entrant .. ':games', 1)
  redis.call('HINCRBY', KEYS[1], entrant .. (i == 1 and ':wins' or ':losses'), 1)
end
return 1
"""


# KEYS: a client's registrations (bot id -> when, in ms). ARGV: now, bot id, per hour, cap, window (ms).
# 1 registered; -1 over the hourly rate; -2 over the cap of bots within the window (0: no limit).
_REGISTER_FOR_CLIENT = """
local now, window = tonumber(ARGV[1]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local per_hour, cap = tonumber(ARGV[3]), tonumber(ARGV[4])
if per_hour > 0 and redis.call('ZCOUNT', KEYS[1], now - 3600000, '+inf') >= per_hour then return -1 end
if cap > 0 and redis.call('ZCARD', KEYS[1]) >= cap then return -2 end
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('PEXPIRE', KEYS[1], window)
return 1
"""


class AccountStore:
    def __init__(self, client: RedisClient, publish: str, idle_ttl: int, rated_ttl: int = 7 * 24 * 3600):
        """`idle_ttl`: seconds a bot is kept after its token was last used; `rated_ttl`: seconds the
        ladder remembers a game it counted (longer than a match's records, which can replay it)."""
        self.redis = client
        self.publish, self.idle_ttl, self.rated_ttl = publish, idle_ttl, rated_ttl
        self._rate_game = client.register_script(_RATE_GAME)
        self._notify = client.register_script(_NOTIFY)
        self._register_for_client = client.register_script(_REGISTER_FOR_CLIENT)

    def reserve_registration(self, client: str, bot_id: str, per_hour: int, cap: int) -> int:
        """Count a registration for `client`: 1, or -1 over `per_hour`, -2 over `cap` bots in the idle ttl."""
        return self._register_for_client(keys=[bot_registrations_key(client)],
                                         args=[int(time.time() * 1000), bot_id, per_hour, cap, self.idle_ttl * 1000])

    def register(self, bot_id: str, doc: dict) -> bool:
        if not self.redis.set(bot_key(bot_id), _dump(doc), nx=True, ex=self.idle_ttl):
            return False
        self.redis.zadd(BOT_INDEX_KEY, {bot_id: time.time()})
        return True

    def load(self, bot_id: str, used: bool = False) -> dict | None:
        """A bot's document; `used` (its token was presented) keeps it another idle ttl, in the same call."""
        raw = self.redis.getex(bot_key(bot_id), ex=self.idle_ttl) if used else self.redis.get(bot_key(bot_id))
        return json.loads(raw) if raw else None

    def registered(self, offset: int, limit: int) -> tuple[list[dict], int]:
        """A page of the bots, oldest first; bots that lapsed leave the index when a page finds them gone."""
        total = self.redis.zcard(BOT_INDEX_KEY)
        if offset >= total:  # also a page number past any Redis index
            return [], total
        ids = [i.decode() for i in self.redis.zrange(BOT_INDEX_KEY, offset, offset + limit - 1)]
        docs = dict(zip(ids, map(self.load, ids), strict=True))
        lapsed = [bot_id for bot_id, doc in docs.items() if doc is None]
        if lapsed:
            self.redis.zrem(BOT_INDEX_KEY, *lapsed)
        return [doc for doc in docs.values() if doc], total - len(lapsed)

    def notify(self, bot_id: str, message: dict):
        self._notify(keys=[bot_inbox_key(bot_id), bot_turns_channel(bot_id)],
                        args=[_dump(message), INBOX_LENGTH, INBOX_TTL, self.publish])

    def inbox_after(self, bot_id: str, after: str) -> list[tuple[str, dict]]:
        """The turns posted after stream id `after` ("0": all kept), at once: waiting is the live hub's."""
        answer = self.redis.xread({bot_inbox_key(bot_id): after}, count=TURNS_PER_READ)
        entries = answer[0][1] if answer else []
        return [(entry_id.decode(), json.loads(fields[b"message"])) for entry_id, fields in entries]

    def ratings(self) -> dict[str, dict]:
        """Every rated entrant: rating, games, wins, losses."""
        ladder: dict[str, dict] = {}
        for field, value in self.redis.hgetall(RATINGS_KEY).items():
            entrant, _, name = field.decode().rpartition(":")
            ladder.setdefault(entrant, {})[name] = float(value)
        return ladder

    def rate_game(self, game_id: str, winner: str, loser: str, change: float, initial: float) -> bool:
        """One rated game: `change` points from loser to winner, both counted (one atomic step),
        unless the ladder counted this game already (remembered as long as its match's records)."""
        return bool(self._rate_game(keys=[RATINGS_KEY, RATED_GAMES_KEY],
                                    args=[game_id, winner, loser, change, initial, time.time(), self.rated_ttl]))
