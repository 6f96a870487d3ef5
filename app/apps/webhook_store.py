"""Webhook endpoints and deliveries in Redis. An app's endpoints, deliveries and their counts share
the app's slot, so a delivery's change of status and its count move in one script; the deliveries
due for an attempt are indexed in buckets of their own (the sweep's), noted before the delivery."""

import json
import zlib

from ..ops.connection import RedisClient
from ..ops.tenant_figures import TenantFigures, delivery_figure
from ..ops.keys import (INDEX_BUCKETS, deliveries_due_key, deliveries_key, delivery_counts_key, delivery_key,
                        endpoint_failing_key, endpoint_pause_key, webhooks_key)

DELIVERY_TTL = 8 * 24 * 3600  # a delivery is kept a week past its day of retries
LISTED_DELIVERIES = 1000  # an endpoint lists its newest deliveries, this many

# KEYS: delivery hash, counts hash. ARGV: expected status ('' for a new delivery), new status,
# document, ttl. The change and its count stand together, once: a second attempt of the same
# delivery (at least once) finds the status moved on and changes nothing. Answers [] when nothing
# moved, else [the status it had].
_MOVE = """
local current = redis.call('HGET', KEYS[1], 'status') or ''
if current ~= ARGV[1] then return {} end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'doc', ARGV[3])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
if current ~= ARGV[2] then
  if current ~= '' then redis.call('HINCRBY', KEYS[2], current, -1) end
  redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
end
return {current}
"""


def _due_member(app_id: str, delivery_id: str) -> str:
    return f"{app_id}/{delivery_id}"


def _due_key(delivery_id: str) -> str:
    return deliveries_due_key(zlib.crc32(delivery_id.encode()) % INDEX_BUCKETS)


class WebhookStore:
    def __init__(self, client: RedisClient):
        self.redis = client
        self._move = client.register_script(_MOVE)
        self.figures = TenantFigures(client)

    # ----- endpoints ---------------------------------------------------------------------------
    def endpoints(self, app_id: str) -> dict[str, dict]:
        return {key.decode(): json.loads(value) for key, value in self.redis.hgetall(webhooks_key(app_id)).items()}

    def save_endpoint(self, app_id: str, endpoint: dict):
        self.redis.hset(webhooks_key(app_id), endpoint["id"], json.dumps(endpoint))

    def remove_endpoint(self, app_id: str, endpoint_id: str) -> bool:
        return bool(self.redis.hdel(webhooks_key(app_id), endpoint_id))

    def pause(self, app_id: str, endpoint_id: str, seconds: float):
        self.redis.set(endpoint_pause_key(app_id, endpoint_id), 1, px=max(1, int(seconds * 1000)))

    def pause_left(self, app_id: str, endpoint_id: str) -> float:
        """Seconds until a paused endpoint gets attempts again (0: it is not paused)."""
        return max(0, self.redis.pttl(endpoint_pause_key(app_id, endpoint_id))) / 1000

    def failing_since(self, app_id: str, endpoint_id: str, now: float) -> float:
        """An attempt failed: since when every attempt of the endpoint has (now, if this is the first)."""
        key = endpoint_failing_key(app_id, endpoint_id)
        pipe = self.redis.pipeline(transaction=True)
        pipe.set(key, now, nx=True)
        pipe.get(key)
        return float(pipe.execute()[1])

    def answered(self, app_id: str, endpoint_id: str):
        """An attempt succeeded: the endpoint is not failing."""
        self.redis.delete(endpoint_failing_key(app_id, endpoint_id))

    def failing(self, app_id: str, endpoint_ids: list[str]) -> dict[str, float]:
        if not endpoint_ids:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for endpoint_id in endpoint_ids:
            pipe.get(endpoint_failing_key(app_id, endpoint_id))
        return {endpoint_id: float(since) for endpoint_id, since in zip(endpoint_ids, pipe.execute(), strict=True)
                if since is not None}

    # ----- deliveries --------------------------------------------------------------------------
    def add_delivery(self, app_id: str, delivery: dict, due_ms: int) -> bool:
        """Noted as due first (the sweep attempts it even if what follows fails), then kept: False
        when a delivery of its id is kept already (a notice told again), which is left as it is."""
        self.redis.zadd(_due_key(delivery["id"]), {_due_member(app_id, delivery["id"]): due_ms})
        if not self.move(app_id, delivery, ""):
            return False
        listing = deliveries_key(app_id, delivery["endpoint_id"])
        pipe = self.redis.pipeline(transaction=True)
        pipe.zadd(listing, {delivery["id"]: delivery["created_ms"]})
        pipe.zremrangebyrank(listing, 0, -LISTED_DELIVERIES - 1)
        pipe.expire(listing, DELIVERY_TTL)
        pipe.execute()
        return True

    def delivery(self, app_id: str, delivery_id: str) -> dict | None:
        found = self.redis.hget(delivery_key(app_id, delivery_id), "doc")
        return json.loads(found) if found else None

    def move(self, app_id: str, delivery: dict, expected_status: str) -> bool:
        """Write the delivery with its new status if it still has `expected_status`."""
        moved = self._move(keys=[delivery_key(app_id, delivery["id"]), delivery_counts_key(app_id)],
                           args=[expected_status, delivery["status"], json.dumps(delivery), DELIVERY_TTL])
        if not moved:
            return False
        had, has = moved[0].decode(), delivery["status"]
        if had != has:
            self.figures.add(app_id, {delivery_figure(has): 1, **({delivery_figure(had): -1} if had else {})},
                             spread_by=delivery["id"])
        return True

    def listed(self, app_id: str, endpoint_id: str, offset: int, limit: int,
               status: str | None = None) -> tuple[list[dict], int]:
        """A page of an endpoint's deliveries, newest first (of one status: its newest
        LISTED_DELIVERIES read, and those of the status paged), and how many there are."""
        listing = deliveries_key(app_id, endpoint_id)
        if status is None:
            pipe = self.redis.pipeline(transaction=False)
            pipe.zcard(listing)
            pipe.zrevrange(listing, offset, offset + limit - 1)
            total, ids = pipe.execute()
            return self._loaded(app_id, ids), total
        every = self._loaded(app_id, self.redis.zrevrange(listing, 0, LISTED_DELIVERIES - 1), status)
        return every[offset:offset + limit], len(every)

    def redact(self, app_id: str, needles: list[bytes], replacement: str) -> int:
        """Every delivery of the app still kept whose payload holds any of `needles` (an erased
        person's name or id) keeps its status, attempts and shape; each string of its payload that
        holds a needle becomes `replacement`."""
        redacted = 0
        for endpoint_id in self.endpoints(app_id):
            for delivery_id in self.redis.zrange(deliveries_key(app_id, endpoint_id), 0, -1):
                key = delivery_key(app_id, delivery_id.decode())
                found = self.redis.hget(key, "doc")
                if found and any(needle in found for needle in needles):
                    delivery = json.loads(found)
                    delivery["payload"] = json.dumps(_replaced(json.loads(delivery["payload"]), needles, replacement),
                                                     separators=(",", ":"))
                    self.redis.hset(key, "doc", json.dumps(delivery))
                    redacted += 1
        return redacted

    def _loaded(self, app_id: str, ids: list[bytes], status: str | None = None) -> list[dict]:
        pipe = self.redis.pipeline(transaction=False)
        for delivery_id in ids:
            pipe.hmget(delivery_key(app_id, delivery_id.decode()), "status", "doc")
        return [json.loads(doc) for found, doc in pipe.execute()
                if doc and (status is None or found.decode() == status)]

    def counts(self, app_id: str) -> dict[str, int]:
        """The app's deliveries by status."""
        return {key.decode(): int(value) for key, value in self.redis.hgetall(delivery_counts_key(app_id)).items()}

    # ----- what is due -------------------------------------------------------------------------
    def schedule(self, app_id: str, delivery_id: str, due_ms: int):
        self.redis.zadd(_due_key(delivery_id), {_due_member(app_id, delivery_id): due_ms})

    def unschedule(self, app_id: str, delivery_id: str):
        self.redis.zrem(_due_key(delivery_id), _due_member(app_id, delivery_id))

    def due(self, now_ms: int, limit: int) -> list[tuple[str, str, int]]:
        """(app id, delivery id, when it was due in ms) of the deliveries due by now, oldest first."""
        pipe = self.redis.pipeline(transaction=False)
        for bucket in range(INDEX_BUCKETS):
            pipe.zrangebyscore(deliveries_due_key(bucket), "-inf", now_ms, start=0, num=limit, withscores=True)
        found = sorted((pair for bucket in pipe.execute() for pair in bucket), key=lambda pair: pair[1])[:limit]
        return [(app_id, delivery_id, int(due)) for (app_id, _, delivery_id), due in
                ((member.decode().partition("/"), due) for member, due in found)]


def _replaced(value, needles: list[bytes], replacement: str):
    """`value` (parsed JSON) with each string holding any of `needles` replaced."""
    if isinstance(value, dict):
        return {key: _replaced(item, needles, replacement) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, needles, replacement) for item in value]
    if isinstance(value, str) and any(needle in value.encode() for needle in needles):
        return replacement
    return value
