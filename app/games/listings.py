"""The listings of games by status: per app, per status, split into buckets (app/ops/keys.py).

They live outside each game's slot, so they follow a game's writes rather than share them: a
listing that finds a game gone, or under a status it left, mends itself.
"""

import logging
import time

from ..ops.connection import RedisClient, StoreUnavailable
from ..ops.keys import INDEX_BUCKETS, bucket_of, due_moves_key, state_key, status_index_key
from ..ops.scope import PUBLIC_APP, app_of
from ..ops.tenant_figures import LIVE_GAMES, TenantFigures

log = logging.getLogger(__name__)
MAX_LISTING_DEPTH = 1000  # a listing pages through the newest 1,000 games of a status
LIVE = frozenset({"open", "active"})


class GameListings:
    def __init__(self, client: RedisClient):
        self.redis = client
        self.figures = TenantFigures(client)

    def list_under(self, game_id: str, status: str, previous: str | None):
        """Listing indexes live outside the game's slot, so they follow the write, not atomically:
        the write stands if they fail (a listing that finds a game under a status it left moves it)."""
        pipe = self.redis.pipeline(transaction=False)
        bucket, app_id = bucket_of(game_id), app_of(game_id)
        if previous:
            pipe.zrem(status_index_key(previous, bucket, app_id), game_id)
        pipe.zadd(status_index_key(status, bucket, app_id), {game_id: time.time()})
        try:
            *removed, added = pipe.execute()
            # Counted by whoever changed the listing (a mend after a failed write included), once.
            live = (added if status in LIVE else 0) - (sum(removed) if previous in LIVE else 0)
            self.figures.add(app_id, {LIVE_GAMES: live}, spread_by=game_id)
        except StoreUnavailable:
            log.warning("game %s not moved to the %s listing", game_id, status)

    def list_ids(self, status: str, offset: int, limit: int, app_id: str = PUBLIC_APP) -> tuple[list[str], int]:
        """A page of an app's newest games of a status, merged from the buckets (at most
        `MAX_LISTING_DEPTH` deep, so a request's cost stays bounded), and how many there are."""
        pipe = self.redis.pipeline(transaction=False)
        for bucket in range(INDEX_BUCKETS):
            pipe.zcard(status_index_key(status, bucket, app_id))
        end = min(offset + limit, MAX_LISTING_DEPTH)
        if offset < end:
            for bucket in range(INDEX_BUCKETS):
                pipe.zrevrange(status_index_key(status, bucket, app_id), 0, end - 1, withscores=True)
        answers = pipe.execute()
        total = sum(answers[:INDEX_BUCKETS])
        newest = sorted((pair for bucket in answers[INDEX_BUCKETS:] for pair in bucket), key=lambda pair: -pair[1])
        return [member.decode() for member, _ in newest[offset:end]], total

    def bucket_ids(self, status: str, bucket: int, offset: int, limit: int, app_id: str = PUBLIC_APP) -> list[str]:
        """One bucket's games of a status, oldest listed first, from `offset`: a sweep's page."""
        found = self.redis.zrange(status_index_key(status, bucket, app_id), offset, offset + limit - 1)
        return [member.decode() for member in found]

    def live_count(self, app_id: str) -> int:
        """An app's open and active games (its live games quota; expired ones count until pruned)."""
        pipe = self.redis.pipeline(transaction=False)
        for status in LIVE:
            for bucket in range(INDEX_BUCKETS):
                pipe.zcard(status_index_key(status, bucket, app_id))
        return sum(pipe.execute())

    def prune_index(self, status: str, listed_before: float, limit: int, app_id: str = PUBLIC_APP) -> int:
        """Drop from an app's listing the games listed before `listed_before` that have expired since
        (a game's listing time is when it took that status, so older entries are only candidates)."""
        pipe = self.redis.pipeline(transaction=False)
        for bucket in range(INDEX_BUCKETS):
            pipe.zrangebyscore(status_index_key(status, bucket, app_id), "-inf", listed_before, start=0, num=limit)
        candidates = [member.decode() for bucket in pipe.execute() for member in bucket][:limit]
        if not candidates:
            return 0
        pipe = self.redis.pipeline(transaction=False)
        for game_id in candidates:
            pipe.exists(state_key(game_id))
        gone = [game_id for game_id, exists in zip(candidates, pipe.execute(), strict=True) if not exists]
        self.forget_missing(status, gone)
        return len(gone)

    def forget_missing(self, status: str, game_ids: list[str]):
        """Games expire; their index entries, and any move noted as due, are dropped when a listing
        finds them gone (a note can be due a day later: a long turn timer)."""
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.zrem(status_index_key(status, bucket_of(game_id), app_of(game_id)), game_id)
            pipe.zrem(due_moves_key(bucket_of(game_id)), game_id)
        removed = pipe.execute()[::2]
        if status in LIVE:
            for game_id, dropped in zip(game_ids, removed, strict=True):
                self.figures.add(app_of(game_id), {LIVE_GAMES: -dropped}, spread_by=game_id)
