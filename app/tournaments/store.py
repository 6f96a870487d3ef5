"""Tournaments in Redis: a document each, the list of them, and those running for the sweep."""

import json
import time

from ..ops.connection import RedisClient
from ..ops.keys import TOURNAMENTS_KEY, running_tournaments_key, tournament_key


class TournamentStore:
    def __init__(self, client: RedisClient, ttl: int, queue: str):
        """`ttl`: how long a tournament is kept after its last change (its matches' time); `queue`:
        the deployment's bot queue, whose running tournaments this store tracks (as MatchStore does
        its matches: a deployment's workers move on its own tournaments only)."""
        self.redis, self.ttl = client, ttl
        self.running_key = running_tournaments_key(queue)

    def create(self, doc: dict) -> bool:
        """False when a tournament of this id exists already (a retried request)."""
        if not self.redis.set(tournament_key(doc["id"]), json.dumps(doc), nx=True, ex=self.ttl):
            return False
        now = int(time.time() * 1000)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(TOURNAMENTS_KEY, {doc["id"]: now})
        pipe.zremrangebyscore(TOURNAMENTS_KEY, "-inf", now - self.ttl * 1000)
        pipe.zadd(self.running_key, {doc["id"]: now})
        pipe.execute()
        return True

    def save(self, doc: dict):
        self.redis.set(tournament_key(doc["id"]), json.dumps(doc), ex=self.ttl)

    def load(self, tournament_id: str) -> dict | None:
        found = self.redis.get(tournament_key(tournament_id))
        return json.loads(found) if found else None

    def load_many(self, tournament_ids: list[str]) -> list[dict]:
        """The tournaments still kept, in order, in one pipeline (their keys are in slots of their own)."""
        pipe = self.redis.pipeline(transaction=False)
        for tournament_id in tournament_ids:
            pipe.get(tournament_key(tournament_id))
        return [json.loads(found) for found in (pipe.execute() if tournament_ids else []) if found]

    def page(self, offset: int, limit: int) -> tuple[list[str], int]:
        """Tournament ids, newest first, and how many there are (a page past the end: none, and
        never an offset beyond what Redis counts in)."""
        total = self.redis.zcard(TOURNAMENTS_KEY)
        if offset >= total:
            return [], total
        return [i.decode() for i in self.redis.zrevrange(TOURNAMENTS_KEY, offset, offset + limit - 1)], total

    def running(self, looked_at_before: float, limit: int = 100) -> list[str]:
        found = self.redis.zrangebyscore(self.running_key, "-inf", int(looked_at_before * 1000),
                                         start=0, num=limit)
        return [i.decode() for i in found]

    def looked_at(self, tournament_id: str):
        self.redis.zadd(self.running_key, {tournament_id: int(time.time() * 1000)}, xx=True)

    def finished(self, tournament_id: str):
        self.redis.zrem(self.running_key, tournament_id)
