"""A player's tokens, each acting for the player on one device until it is revoked or expires.

- The **first** token, createPlayer's: `rply.<player id>.<mac>`, derived from the server's secret
  and a salt kept with the player (a replayed createPlayer derives it again). Its id is `first`.
- A **device** token, made by a sign-in: `rply.<player id>.<token id>.<secret>`, random; the store
  keeps its SHA-256 with its label (the device), creation time and optional expiry.
- An **acting** token, never shown to anyone: `rply.<player id>.~<expiry>.<mac>`, minted for one
  request of the app's server that acts for a player (`Ronda-On-Behalf-Of`), so every service
  that takes a player token takes it with no second path. It lasts a minute or two.

A token checked against the store is remembered by this process for CHECK_SECONDS: a revocation,
a suspension or an erasure holds on every process within that time, and a request costs one round
trip to the player's slot at most that often per token and process. That check also keeps the
player alive (their idle time starts again) and notes the token's last use, to the minute.
"""

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict

from ..accounts.tokens import AccountTokens
from ..errors import InvalidToken, PlayerSuspended, TokenNotFound
from ..games.records import utc_at
from ..games.seats import token_digest
from .document import PlayerDocument, TokenRecord

TOKEN_PREFIX = "rply."
FIRST_TOKEN = "first"
CHECK_SECONDS = 2.0
LAST_USE_SECONDS = 60
ACTING_SECONDS = 60  # an acting token is the same for a minute (one rate-limit budget), then lasts one more
ACTING_MARK = "~"  # never in a token id (hex) or a secret (URL-safe base64)
REMEMBERED = 100_000


class PlayerTokens:
    def __init__(self, secret: bytes, store, utc_now, clock=time.monotonic):
        self.secret, self.store, self.utc_now, self.clock = secret, store, utc_now, clock
        self._first = AccountTokens(secret, "player", TOKEN_PREFIX, store.idle_ttl)
        # token digest -> (player, token id, when it was checked)
        self._checked: OrderedDict[str, tuple[str, str, float]] = OrderedDict()
        self._lock = threading.Lock()

    # ----- making ----------------------------------------------------------------------------------
    def first(self, player_id: str, salt: str) -> str:
        return self._first.derive(player_id, salt)

    def first_salt(self, player_id: str) -> str:
        """The first token's salt, derived from the player's id (itself from the request's
        Idempotency-Key when it has one): a retry after Redis lost the player makes the same token."""
        return hmac.new(self.secret, f"player-salt:{player_id}".encode(), hashlib.sha256).hexdigest()[:32]

    def issue(self, player_id: str, label: str, ttl_seconds: int | None) -> tuple[dict, str]:
        """A new device token: (what its owner is shown of it, the token)."""
        token_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        token = f"{TOKEN_PREFIX}{player_id}.{token_id}.{secret}"
        record: TokenRecord = {"id": token_id, "label": label, "hash": token_digest(token),
                               "created_at": self.utc_now(),
                               "expires_at": time.time() + ttl_seconds if ttl_seconds else None}
        self.store.add_token(player_id, record)
        return _shown(record, None), token

    def acting(self, player_id: str) -> str:
        """The token a request of the app's server acts for `player_id` with (see the module)."""
        expires = (int(time.time()) // ACTING_SECONDS + 2) * ACTING_SECONDS
        return f"{TOKEN_PREFIX}{player_id}.{ACTING_MARK}{expires}.{self._acting_mac(player_id, expires)}"

    def _acting_mac(self, player_id: str, expires: int) -> str:
        return hmac.new(self.secret, f"acting:{player_id}:{expires}".encode(), hashlib.sha256).hexdigest()

    # ----- checking --------------------------------------------------------------------------------
    def owner(self, token: str | None, erasing: bool = False) -> tuple[str, str] | None:
        """(the player, the token's id) for a player token; None for a token of another kind; 401
        for a false, revoked or expired one, or a player erased (`erasing`: or being erased, for the
        request that finishes an erasure cut short); 403 for a suspended player."""
        if not token or not token.startswith(TOKEN_PREFIX):
            return None
        digest, now = token_digest(token), self.clock()
        with self._lock:
            remembered = self._checked.get(digest)
        if remembered is not None and now - remembered[2] < CHECK_SECONDS and not erasing:
            return remembered[0], remembered[1]
        parts = token[len(TOKEN_PREFIX):].split(".")
        if len(parts) not in (2, 3) or not parts[0]:
            raise InvalidToken("this player token is not known")
        player_id, token_id = parts[0], (FIRST_TOKEN if len(parts) == 2 else parts[1])
        doc, record, last_used = self.store.check_token(player_id, token_id)
        erased = doc is None or (doc.get("deleting_at") and not erasing)
        if erased or not self._holds(doc, record, token_id, parts, digest):
            raise InvalidToken("this player token is not known, was revoked or expired")
        if doc.get("suspended_at"):
            raise PlayerSuspended("this player is suspended by their app")
        if not token_id.startswith(ACTING_MARK) and (last_used is None or last_used < self._stale_use()):
            self.store.mark_used(player_id, token_id, self.utc_now())
        with self._lock:
            self._checked[digest] = (player_id, token_id, now)
            self._checked.move_to_end(digest)
            while len(self._checked) > REMEMBERED:
                self._checked.popitem(last=False)
        return player_id, token_id

    def _holds(self, doc: PlayerDocument, record: TokenRecord | None, token_id: str, parts: list[str],
               digest: str) -> bool:
        if token_id == FIRST_TOKEN:
            return bool(doc["token_hash"]) and hmac.compare_digest(doc["token_hash"] or "", digest)
        if token_id.startswith(ACTING_MARK):
            expires = token_id[1:]
            return expires.isdigit() and int(expires) > time.time() and \
                hmac.compare_digest(self._acting_mac(parts[0], int(expires)), parts[2])
        return record is not None and hmac.compare_digest(record["hash"], digest) and \
            (record["expires_at"] is None or record["expires_at"] > time.time())

    @staticmethod
    def _stale_use() -> str:
        """A last use older than this (ISO) is written again."""
        return utc_at(time.time() - LAST_USE_SECONDS)

    # ----- managing --------------------------------------------------------------------------------
    def listed(self, doc: PlayerDocument, current: str | None) -> list[dict]:
        """The player's live tokens, oldest first, `current` marking the one the request came with."""
        records, uses = self.store.tokens(doc["id"])
        if doc["token_hash"]:
            records.insert(0, {"id": FIRST_TOKEN, "label": "first token (createPlayer)", "hash": doc["token_hash"],
                               "created_at": doc["created_at"], "expires_at": None})
        now = time.time()
        return [{**_shown(r, uses.get(r["id"])), "current": r["id"] == current} for r in records
                if r["expires_at"] is None or r["expires_at"] > now]

    def revoke(self, doc: PlayerDocument, token_id: str):
        """404 for a token the player does not hold (an acting token is never one)."""
        if token_id == FIRST_TOKEN and doc["token_hash"]:
            self.store.save({**doc, "token_hash": None})
        elif not self.store.remove_tokens(doc["id"], [token_id]):
            raise TokenNotFound(f"no token {token_id} of this player")
        self.forget(doc["id"])

    def revoke_all_but(self, doc: PlayerDocument, kept: str | None):
        """Every token of the player but `kept` (None: every one)."""
        records, _ = self.store.tokens(doc["id"])
        self.store.remove_tokens(doc["id"], [r["id"] for r in records if r["id"] != kept])
        if kept != FIRST_TOKEN and doc["token_hash"]:
            self.store.save({**doc, "token_hash": None})
        self.forget(doc["id"])

    def forget(self, player_id: str):
        """This process checks the player's tokens again at their next use (others within CHECK_SECONDS)."""
        with self._lock:
            for digest in [d for d, (owner, _, _) in self._checked.items() if owner == player_id]:
                del self._checked[digest]


def _shown(record: TokenRecord, last_used_at: str | None) -> dict:
    return {"id": record["id"], "label": record["label"], "created_at": record["created_at"],
            "last_used_at": last_used_at, "expires_at": record["expires_at"]}
