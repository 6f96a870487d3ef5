"""Idempotency records in Redis: what app/api/idempotency.py keeps of a request under way, and of
its answer, by the key it scoped to its route and caller. One key a record, so it sits in one
slot on a cluster."""

import json

from .keys import idempotency_key


class RequestRecords:
    def __init__(self, client):
        self._redis = client

    def reserve(self, scope: str, record: dict, lease_seconds: int) -> bool:
        """Holds `scope` for a request under way, if no one holds it: True when this one does."""
        return bool(self._redis.set(idempotency_key(scope), json.dumps(record), nx=True, ex=lease_seconds))

    def read(self, scope: str) -> dict | None:
        text = self._redis.get(idempotency_key(scope))
        return None if text is None else json.loads(text)

    def keep(self, scope: str, record: dict, ttl_seconds: int):
        self._redis.set(idempotency_key(scope), json.dumps(record), ex=ttl_seconds)

    def forget(self, scope: str):
        self._redis.delete(idempotency_key(scope))
