"""Apps in Redis: each app's document and players count in its own slot (`{app:<id>}`), and the
list of every app."""

import json
import time

from ..ops.connection import RedisClient
from ..ops.keys import APPS_KEY, app_key, app_players_key, app_hour_count_key


class AppStore:
    def __init__(self, client: RedisClient):
        self.redis = client

    def create(self, doc: dict):
        pipe = self.redis.pipeline(transaction=False)
        pipe.set(app_key(doc["id"]), json.dumps(doc))
        pipe.zadd(APPS_KEY, {doc["id"]: int(time.time() * 1000)})
        pipe.execute()

    def save(self, doc: dict):
        self.redis.set(app_key(doc["id"]), json.dumps(doc))

    def load(self, app_id: str) -> dict | None:
        found = self.redis.get(app_key(app_id))
        return json.loads(found) if found else None

    def ids(self) -> list[str]:
        return [member.decode() for member in self.redis.zrange(APPS_KEY, 0, -1)]

    def add_player(self, app_id: str, quota: int) -> bool:
        """Count one more player, unless the app has `quota` already (0: no quota)."""
        count = self.redis.incr(app_players_key(app_id))
        if quota and count > quota:
            self.redis.decr(app_players_key(app_id))
            return False
        return True

    def count_in_hour(self, app_id: str, scope: str, hour: int, cap: int, count: int = 1) -> bool:
        """`count` more made or asked for by `scope` (an address, the client key, analyses) in this
        hour, unless that passes `cap`; its count expires with the hour."""
        key = app_hour_count_key(app_id, scope, hour)
        pipe = self.redis.pipeline(transaction=True)
        pipe.incrby(key, count)
        pipe.expire(key, 2 * 3600)
        if pipe.execute()[0] > cap:
            self.redis.decrby(key, count)
            return False
        return True

    def remove_player(self, app_id: str):
        self.redis.decr(app_players_key(app_id))

    def players(self, app_id: str) -> int:
        return int(self.redis.get(app_players_key(app_id)) or 0)
