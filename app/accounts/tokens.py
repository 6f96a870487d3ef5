"""Account tokens, a registered bot's and a player's: `<prefix><id>.<mac>`, the MAC an HMAC of the
server's secret over the account's kind, id and a salt kept with the account. The store keeps only
the token's SHA-256; a replay of the registration derives the same token again.

A token checked against its account is remembered by this process for a while, so a request that
presents it again costs no read of the account: the read that checks it also keeps the account
alive (its idle time starts again), and it is made at most once a day per token and process."""

import base64
import hashlib
import hmac
import threading
import time
from collections import OrderedDict

from ..errors import InvalidToken
from ..games.seats import token_digest


RECHECK_SECONDS = 24 * 3600  # a remembered token is checked against its account again after a day
REMEMBERED = 100_000  # tokens remembered at most (the least recently presented are forgotten first)


class AccountTokens:
    def __init__(self, secret: bytes, kind: str, prefix: str, idle_ttl: int, clock=time.monotonic):
        """`kind`: "bot" or "player" (in the MAC and in errors); `prefix`: how its tokens begin;
        `idle_ttl`: how long an account unused is kept. A token is checked again within half of
        that at most, so a remembered token never outlives its account."""
        self.secret, self.kind, self.prefix = secret, kind, prefix
        self.recheck_seconds = min(RECHECK_SECONDS, idle_ttl / 2)
        self.clock = clock
        self._checked: OrderedDict[str, tuple[str, float]] = OrderedDict()  # token digest -> (account, when)
        self._lock = threading.Lock()

    def derive(self, account_id: str, salt: str) -> str:
        mac = hmac.new(self.secret, f"{self.kind}:{account_id}:{salt}".encode(), hashlib.sha256).digest()
        return f"{self.prefix}{account_id}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"

    def owner(self, token: str | None, load) -> str | None:
        """The account a token of this kind belongs to (`load(id)` reads its document and keeps it
        alive, when the token is not remembered as checked); None for a token of another kind; 401
        for a false one."""
        if not token or not token.startswith(self.prefix):
            return None
        digest, now = token_digest(token), self.clock()
        with self._lock:
            remembered = self._checked.get(digest)
            if remembered is not None and now - remembered[1] < self.recheck_seconds:
                self._checked.move_to_end(digest)
                return remembered[0]
        account_id = token[len(self.prefix):].split(".", 1)[0]
        doc = load(account_id)
        if doc is None or not hmac.compare_digest(doc["token_hash"], digest):
            raise InvalidToken(f"this {self.kind} token is not known")
        with self._lock:
            self._checked[digest] = (account_id, now)
            self._checked.move_to_end(digest)
            while len(self._checked) > REMEMBERED:
                self._checked.popitem(last=False)
        return account_id
