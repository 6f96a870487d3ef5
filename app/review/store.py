"""An analysis is kept with its game (`analysis_key`, in the game's slot); the ones under way are
noted in bucketed indexes with the end of their lease, so a sweep finds one whose worker died."""

import json
import time
from typing import TypedDict

import redis

from ..ops.connection import RedisClient
from ..ops.keys import INDEX_BUCKETS, analyses_due_key, analysis_key, bucket_of, state_key

KEPT_AT_LEAST = 24 * 3600  # an analysis outlives a game that expires sooner by this much at most


class AnalysisDocument(TypedDict):
    game_id: str
    status: str  # pending, running, done, failed
    requested_at: float
    started_at: float | None
    finished_at: float | None
    budget_ms: float  # a decision's time
    decisions_total: int | None  # known once a worker has read the game
    decisions: list[dict]  # weighed so far, in order: a worker that stops is followed from there
    seats: list[dict] | None  # once done
    error: str | None


class AnalysisStore:
    def __init__(self, client: RedisClient):
        self.redis = client

    def load(self, game_id: str) -> AnalysisDocument | None:
        found = self.redis.get(analysis_key(game_id))
        return json.loads(found) if found else None

    def create(self, doc: AnalysisDocument, replace_failed: bool = True) -> AnalysisDocument:
        """The game's analysis: this new one, unless one is there already (a failed one is replaced)."""
        key = analysis_key(doc["game_id"])
        with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(key)
                    found = pipe.get(key)
                    if found and not (replace_failed and json.loads(found)["status"] == "failed"):
                        return json.loads(found)
                    pipe.multi()
                    pipe.set(key, json.dumps(doc), ex=self._ttl(doc["game_id"]))
                    pipe.execute()
                    return doc
                except redis.WatchError:
                    continue

    def extend(self, doc: AnalysisDocument, weighed_before: int) -> bool:
        """Write `doc` if the stored analysis still has `weighed_before` decisions: of two workers on
        one analysis (a lease ran out under a slow one), the first to write goes on, the other stops."""
        key = analysis_key(doc["game_id"])
        with self.redis.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(key)
                found = pipe.get(key)
                if not found or len(json.loads(found)["decisions"]) != weighed_before:
                    return False
                pipe.multi()
                pipe.set(key, json.dumps(doc, separators=(",", ":")), ex=self._ttl(doc["game_id"]))
                pipe.execute()
                return True
            except redis.WatchError:
                return False

    def _ttl(self, game_id: str) -> int:
        left = self.redis.ttl(state_key(game_id))
        return max(left, KEPT_AT_LEAST) if left > 0 else KEPT_AT_LEAST

    # ----- under way -------------------------------------------------------------------------
    def lease(self, game_id: str, until: float):
        self.redis.zadd(analyses_due_key(bucket_of(game_id)), {game_id: int(until * 1000)})

    def release(self, game_id: str):
        self.redis.zrem(analyses_due_key(bucket_of(game_id)), game_id)

    def lapsed(self, limit: int) -> list[str]:
        """Analyses whose lease ran out (their worker stopped or died), oldest first."""
        now = int(time.time() * 1000)
        pipe = self.redis.pipeline(transaction=False)
        for bucket in range(INDEX_BUCKETS):
            pipe.zrangebyscore(analyses_due_key(bucket), "-inf", now, start=0, num=limit)
        return [member.decode() for found in pipe.execute() for member in found][:limit]
