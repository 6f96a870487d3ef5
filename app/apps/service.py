"""Apps: made by the operator, each with a key its clients send as `X-Ronda-App`, and quotas.

A key is `rapp.<app id>.<secret>`; the app keeps only its keys' SHA-256. Rotation makes a new key
and keeps the old one valid for a grace period; revocation ends every key at once. A process
remembers an app for `CACHE_SECONDS`, so a rotation's end or a revocation holds everywhere
within that time, and a request with an app key costs no read of the store most of the time.
"""

import hmac
import secrets
import threading
import time

from ..errors import AppNotFound, InvalidAppKey, QuotaExceeded
from ..games.seats import token_digest
from ..ops.scope import PUBLIC_APP
from .store import AppStore

KEY_PREFIX = "rapp."
CACHE_SECONDS = 2.0
QUOTAS = ("requests_per_minute", "live_games", "players")


class AppService:
    def __init__(self, store: AppStore, utc_now, public_quotas: dict[str, int], default_quotas: dict[str, int]):
        """`public_quotas`: the public app's (requests without a key); `default_quotas`: a new
        app's unless its operator sets them (0: no quota)."""
        self.store, self.utc_now = store, utc_now
        self.public_quotas, self.default_quotas = public_quotas, default_quotas
        self._cache: dict[str, tuple[float, dict | None]] = {}
        self._lock = threading.Lock()

    # ----- the operator's ------------------------------------------------------------------------
    def create(self, name: str, quotas: dict[str, int] | None = None) -> tuple[dict, str]:
        app_id = secrets.token_hex(6)
        key = _new_key(app_id)
        doc = {"id": app_id, "name": name, "created_at": self.utc_now(), "revoked_at": None,
               "quotas": {**self.default_quotas, **{k: v for k, v in (quotas or {}).items() if v is not None}},
               "keys": [{"hash": token_digest(key), "expires_at": None}]}
        self.store.create(doc)
        return self.public(doc), key

    def list(self) -> list[dict]:
        return [self.public(doc) for app_id in self.store.ids() if (doc := self.store.load(app_id))]

    def show(self, app_id: str) -> dict:
        return self.public(self._load(app_id))

    def rotate(self, app_id: str, grace_seconds: int) -> tuple[dict, str]:
        """A new key; the current one still works for `grace_seconds` (0: ends now)."""
        doc = self._load(app_id)
        if doc["revoked_at"]:
            raise InvalidAppKey(f"app {app_id} is revoked: make a new app")
        key, now = _new_key(app_id), time.time()
        kept = [{**k, "expires_at": k["expires_at"] or now + grace_seconds} for k in doc["keys"]
                if (k["expires_at"] or now + grace_seconds) > now]
        doc["keys"] = [{"hash": token_digest(key), "expires_at": None}, *kept]
        self.store.save(doc)
        self._forget(app_id)
        return self.public(doc), key

    def revoke(self, app_id: str) -> dict:
        doc = self._load(app_id)
        doc["keys"], doc["revoked_at"] = [], doc["revoked_at"] or self.utc_now()
        self.store.save(doc)
        self._forget(app_id)
        return self.public(doc)

    def public(self, doc: dict) -> dict:
        now = time.time()
        return {"id": doc["id"], "name": doc["name"], "created_at": doc["created_at"], "revoked_at": doc["revoked_at"],
                "quotas": doc["quotas"], "players": self.store.players(doc["id"]),
                "keys": [{"expires_at": k["expires_at"]} for k in doc["keys"] if (k["expires_at"] or now + 1) > now]}

    # ----- a request's ---------------------------------------------------------------------------
    def app_of_key(self, key: str | None) -> str:
        """The app a request acts in: the public app without a key; 401 for a key no app holds now."""
        if key is None:
            return PUBLIC_APP
        app_id = key[len(KEY_PREFIX):].split(".", 1)[0] if key.startswith(KEY_PREFIX) else ""
        doc = self._cached(app_id) if app_id else None
        digest, now = token_digest(key), time.time()
        if doc is None or not any(hmac.compare_digest(k["hash"], digest) and (k["expires_at"] or now + 1) > now
                                  for k in doc["keys"]):
            raise InvalidAppKey("this X-Ronda-App key is not known, was revoked or its grace period ended")
        return app_id

    def quotas(self, app_id: str) -> dict[str, int]:
        if app_id == PUBLIC_APP:
            return self.public_quotas
        doc = self._cached(app_id)
        return doc["quotas"] if doc else self.default_quotas

    def admit_player(self, app_id: str):
        """Count a new player of the app; 429 when it has its quota of players."""
        quota = self.quotas(app_id)["players"]
        if not self.store.add_player(app_id, quota):
            raise QuotaExceeded(f"this app has its quota of {quota} players", budget="app_players")

    def admit_game(self, app_id: str, live_games):
        """A new game of the app, whose open and active games `live_games()` counts; 429 at its quota.
        (Two requests at once may both pass at the quota's edge: a quota, not a lock.)"""
        quota = self.quotas(app_id)["live_games"]
        if quota and live_games() >= quota:
            raise QuotaExceeded(f"this app has its quota of {quota} live games: finish or leave some",
                                budget="app_live_games")

    def _load(self, app_id: str) -> dict:
        doc = self.store.load(app_id)
        if doc is None:
            raise AppNotFound(f"no app {app_id}")
        return doc

    def _cached(self, app_id: str) -> dict | None:
        now = time.monotonic()
        with self._lock:
            found = self._cache.get(app_id)
        if found is not None and found[0] > now:
            return found[1]
        doc = self.store.load(app_id)
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[app_id] = (now + CACHE_SECONDS, doc)
        return doc

    def _forget(self, app_id: str):
        with self._lock:
            self._cache.pop(app_id, None)


def _new_key(app_id: str) -> str:
    return f"{KEY_PREFIX}{app_id}.{secrets.token_urlsafe(32)}"
