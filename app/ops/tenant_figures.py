"""Each app's figures for the operator's /metrics, kept by the writers and read in a fixed number of
commands whatever the number of apps.

The exact figures live in each app's own slot (its games' listings, its deliveries' counts) and
answer the app itself and its quotas; a scrape reading those would cost commands an app. So every
writer, right after its exact change, adds the same change here: a hash per bucket whose fields are
`<app id>|<figure>`, a scrape reads the buckets. They are a graph's figures, not a quota's: a writer
killed between its change and its count leaves that figure one off.
"""

import zlib
from collections import defaultdict

from .connection import RedisClient
from .keys import INDEX_BUCKETS, tenant_figures_key

LIVE_GAMES = "live_games"


def delivery_figure(status: str) -> str:
    return f"deliveries_{status}"


class TenantFigures:
    def __init__(self, client: RedisClient):
        self.redis = client

    def add(self, app_id: str, changes: dict[str, int], spread_by: str):
        """Count `changes` (figure -> delta) for the app; `spread_by` (the changed game or delivery
        id) picks the bucket, so a fleet's writes spread over a cluster's shards."""
        changed = {figure: delta for figure, delta in changes.items() if delta}
        if not changed:
            return
        key = tenant_figures_key(zlib.crc32(spread_by.encode()) % INDEX_BUCKETS)
        pipe = self.redis.pipeline(transaction=False)
        for figure, delta in changed.items():
            pipe.hincrby(key, f"{app_id}|{figure}", delta)
        pipe.execute()

    def read(self) -> dict[str, dict[str, int]]:
        """Every app's figures: app id -> figure -> count, summed over the buckets."""
        pipe = self.redis.pipeline(transaction=False)
        for bucket in range(INDEX_BUCKETS):
            pipe.hgetall(tenant_figures_key(bucket))
        figures: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for counts in pipe.execute():
            for field, count in counts.items():
                app_id, _, figure = field.decode().rpartition("|")
                figures[app_id][figure] += int(count)
        return figures
