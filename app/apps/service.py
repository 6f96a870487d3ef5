"""Apps: made by the operator, each with two kinds of key, as Stripe's publishable and secret
keys or PlayFab's title id and secret key, both sent as `X-Ronda-App`:

- a **client key** (`rapp.<app id>.<secret>`), safe in a phone binary or a web page: it makes the
  app's players, games and tickets, and plays;
- a **server key** (`rsrv.<app id>.<secret>`), for the app's server only: its webhooks and their
  deliveries, and its settings and use. It is refused from a browser (a request with an Origin).

A key is an HMAC of the server's secret over the app, its kind and a salt kept with it: the app
keeps only the salt and the key's SHA-256, and an idempotent replay of the request that made a key
derives it again. Rotation makes a new key of one kind and keeps the old one of
that kind valid for a grace period; revocation stops every key at once, and the operator can undo
it. A process remembers an app for `CACHE_SECONDS`, so a rotation's end or a revocation holds
everywhere within that time, and a request with an app key costs no read of the store most of the
time. A key the process does not know is read again at once, so a key `rotate` or `restore` just
answered works on every process at its first use. A key made before there were two kinds works as
both until the app's first server key.
"""

import base64
import hashlib
import hmac
import secrets
import threading
import time

from ..errors import AppNotFound, InvalidAppKey, QuotaExceeded, ServerKeyRequired
from ..games.seats import token_digest
from ..ops.scope import PUBLIC_APP
from .store import AppStore

CLIENT, SERVER, BOTH = "client", "server", "both"
KEY_PREFIXES = {CLIENT: "rapp.", SERVER: "rsrv."}
CACHE_SECONDS = 2.0
QUOTAS = ("requests_per_minute", "live_games", "players", "live_games_per_player", "rated_min_games",
          "rated_min_account_seconds", "players_per_address_hour", "players_per_key_hour", "client_creates_players",
          "analyses_per_hour")
HOUR = 3600


class AppService:
    def __init__(self, store: AppStore, utc_now, public_quotas: dict[str, int], default_quotas: dict[str, int],
                 secret: bytes):
        """`public_quotas`: the public app's (requests without a key); `default_quotas`: a new
        app's unless its operator sets them (0: no quota); `secret`: the server's, keys derive from it."""
        self.store, self.utc_now, self.secret = store, utc_now, secret
        self.public_quotas, self.default_quotas = public_quotas, default_quotas
        self._cache: dict[str, tuple[float, dict | None]] = {}
        self._lock = threading.Lock()

    # ----- the operator's ------------------------------------------------------------------------
    def create(self, name: str, quotas: dict[str, int] | None = None,
               app_id: str | None = None) -> tuple[dict, dict[str, str]]:
        """A new app and its keys ({"client": …, "server": …}, shown only here). `app_id`, when
        given, is the same for every retry of one request: a retry finds the app its first run made."""
        if app_id is not None and (made := self.store.load(app_id)) is not None:
            return self.public(made), self.keys_of(app_id)
        app_id = app_id or secrets.token_hex(6)
        entries = [self._new_key(app_id, kind) for kind in KEY_PREFIXES]
        doc = {"id": app_id, "name": name, "created_at": self.utc_now(), "revoked_at": None,
               "quotas": {**self.default_quotas, **{k: v for k, v in (quotas or {}).items() if v is not None}},
               "keys": entries}
        self.store.create(doc)
        return self.public(doc), self.keys_of(app_id)

    def keys_of(self, app_id: str) -> dict[str, str]:
        """The app's newest key of each kind, derived again (an idempotent replay's answer)."""
        newest: dict[str, str] = {}
        for entry in self._load(app_id)["keys"]:
            if entry.get("salt") and entry["kind"] not in newest:
                newest[entry["kind"]] = self._derive(app_id, entry["kind"], entry["salt"])
        return newest

    def _new_key(self, app_id: str, kind: str) -> dict:
        salt = secrets.token_urlsafe(16)
        return {"hash": token_digest(self._derive(app_id, kind, salt)), "salt": salt, "kind": kind, "expires_at": None}

    def _derive(self, app_id: str, kind: str, salt: str) -> str:
        mac = hmac.new(self.secret, f"app:{app_id}:{kind}:{salt}".encode(), hashlib.sha256).digest()
        return f"{KEY_PREFIXES[kind]}{app_id}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"

    def list(self) -> list[dict]:
        return [self.public(doc) for app_id in self.store.ids() if (doc := self.store.load(app_id))]

    def show(self, app_id: str) -> dict:
        return self.public(self._load(app_id))

    def rotate(self, app_id: str, kind: str, grace_seconds: int) -> tuple[dict, str]:
        """A new key of `kind`; the current ones of that kind still work for `grace_seconds` (0: end now).
        A key of before the two kinds is a client key here: rotating the server key leaves it be."""
        doc = self._load(app_id)
        if doc["revoked_at"]:
            raise InvalidAppKey(f"app {app_id} is revoked: restore it first")
        now = time.time()
        replaced = {SERVER} if kind == SERVER else {CLIENT, BOTH}
        kept = [{**k, "expires_at": k["expires_at"] or now + grace_seconds} if _kind(k) in replaced else k
                for k in doc["keys"]]
        doc["keys"] = [self._new_key(app_id, kind), *(k for k in kept if (k["expires_at"] or now + 1) > now)]
        self._save(doc)
        return self.public(doc), self.keys_of(app_id)[kind]

    def revoke(self, app_id: str) -> dict:
        """Every key stops at once (its games and players stay, out of reach)."""
        doc = self._load(app_id)
        doc["revoked_at"] = doc["revoked_at"] or self.utc_now()
        self._save(doc)
        return self.public(doc)

    def restore(self, app_id: str) -> dict:
        """Undo a revocation: the keys valid before it work again (a rotated key's grace kept its clock)."""
        doc = self._load(app_id)
        doc["revoked_at"] = None
        self._save(doc)
        return self.public(doc)

    def set_quotas(self, app_id: str, quotas: dict[str, int]) -> dict:
        doc = self._load(app_id)
        doc["quotas"] = {**doc["quotas"], **{k: v for k, v in quotas.items() if v is not None}}
        self._save(doc)
        return self.public(doc)

    def _save(self, doc: dict):
        self.store.save(doc)
        self._forget(doc["id"])

    def public(self, doc: dict) -> dict:
        now = time.time()
        return {"id": doc["id"], "name": doc["name"], "created_at": doc["created_at"], "revoked_at": doc["revoked_at"],
                "quotas": {**self.default_quotas, **doc["quotas"]}, "players": self.store.players(doc["id"]),
                "keys": [{"kind": _kind(k), "expires_at": k["expires_at"]} for k in doc["keys"]
                         if (k["expires_at"] or now + 1) > now]}

    # ----- a request's ---------------------------------------------------------------------------
    def app_of_key(self, key: str | None) -> tuple[str, str | None]:
        """The app a request acts in, and the kind of its key (`client`, `server`, or `both` for a
        key of before the two kinds while the app has no server key): the public app without a
        key; 401 for a key no app holds now."""
        if key is None:
            return PUBLIC_APP, None
        app_id = next((key[len(prefix):].split(".", 1)[0] for prefix in KEY_PREFIXES.values()
                       if key.startswith(prefix)), "")
        digest, now = token_digest(key), time.time()
        found, keys = _key_of(self._cached(app_id) if app_id else None, digest, now)
        if found is None and app_id:  # a key made since this process remembered the app: read it again
            self._forget(app_id)
            found, keys = _key_of(self._cached(app_id), digest, now)
        if found is None:
            raise InvalidAppKey("this X-Ronda-App key is not known, was revoked or its grace period ended")
        kind = _kind(found)
        if kind == BOTH and any(_kind(k) == SERVER for k in keys):
            kind = CLIENT
        return app_id, kind

    def quotas(self, app_id: str) -> dict[str, int]:
        if app_id == PUBLIC_APP:
            return self.public_quotas
        doc = self._cached(app_id)
        return {**self.default_quotas, **doc["quotas"]} if doc else self.default_quotas  # an app of before a quota

    def admit_player(self, app_id: str, key_kind: str | None = SERVER, address: str = ""):
        """Count a new player of the app; 429 when it has its quota of players. A player made with
        the client key (or none) also counts on its address's and its key's players this hour, so
        one address cannot spend the app's quota (429 with the hour's end as Retry-After); the app
        can leave making players to its server alone (403)."""
        quotas = self.quotas(app_id)
        if key_kind not in (SERVER, BOTH):
            if not quotas["client_creates_players"]:
                raise ServerKeyRequired("this app makes its players from its server (sign-in): not with its client key")
            hour = int(time.time() // HOUR)
            caps = (("players_per_address", f"address:{address}", quotas["players_per_address_hour"]),
                    ("players_per_key", "key", quotas["players_per_key_hour"]))
            for budget, scope, cap in caps:
                if cap and not self.store.count_in_hour(app_id, scope, hour, cap):
                    raise QuotaExceeded(f"{cap} players an hour are made here at most ({budget})", budget=budget,
                                        retry_after=max(1, int((hour + 1) * HOUR - time.time())))
        quota = quotas["players"]
        if not self.store.add_player(app_id, quota):
            raise QuotaExceeded(f"this app has its quota of {quota} players", budget="app_players")

    def admit_analyses(self, app_id: str, count: int = 1):
        """`count` more game analyses asked for in the app this hour; 429 (until the hour ends) past
        its `analyses_per_hour`."""
        cap, hour = self.quotas(app_id)["analyses_per_hour"], int(time.time() // HOUR)
        if cap and count and not self.store.count_in_hour(app_id, "analyses", hour, cap, count):
            raise QuotaExceeded(f"{cap} game analyses an hour are asked for here at most", budget="analyses",
                                retry_after=max(1, int((hour + 1) * HOUR - time.time())))

    def release_player(self, app_id: str):
        """Count back a player admitted but not made (a sign-in that lost its race)."""
        self.store.remove_player(app_id)

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


def _kind(key: dict) -> str:
    """A stored key's kind: `both` for a key of before the two kinds."""
    return key.get("kind", BOTH)


def _key_of(doc: dict | None, digest: str, now: float) -> tuple[dict | None, list[dict]]:
    """The app's live key with this digest (or None), and the app's keys (none while revoked)."""
    keys = [] if doc is None or doc["revoked_at"] else doc["keys"]
    found = next((k for k in keys if hmac.compare_digest(k["hash"], digest) and (k["expires_at"] or now + 1) > now),
                 None)
    return found, keys
