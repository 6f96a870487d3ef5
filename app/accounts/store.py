"""Registered outside bots and their inboxes of turns, in Redis (keys: app/ops/keys.py)."""

import json
import time

from ..ops.connection import RedisClient
from ..ops.connection import dump as _dump
from ..ops.keys import BOT_INDEX_KEY, bot_inbox_key, bot_key, bot_registrations_key, bot_turns_channel
from .inbox import Inboxes

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
    def __init__(self, client: RedisClient, inboxes: Inboxes, idle_ttl: int):
        """`idle_ttl`: seconds a bot is kept after its token was last used."""
        self.redis, self.inboxes, self.idle_ttl = client, inboxes, idle_ttl
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
        self.inboxes.post(bot_inbox_key(bot_id), bot_turns_channel(bot_id), message)

    def inbox_after(self, bot_id: str, after: str) -> list[tuple[str, dict]]:
        return self.inboxes.after(bot_inbox_key(bot_id), after)
