"""Account tokens, a registered bot's and a player's: `<prefix><id>.<mac>`, the MAC an HMAC of the
server's secret over the account's kind, id and a salt kept with the account. The store keeps only
the token's SHA-256; a replay of the registration derives the same token again."""

import base64
import hashlib
import hmac

from ..errors import InvalidToken
from ..games.seats import token_digest


class AccountTokens:
    def __init__(self, secret: bytes, kind: str, prefix: str):
        """`kind`: "bot" or "player" (in the MAC and in errors); `prefix`: how its tokens begin."""
        self.secret, self.kind, self.prefix = secret, kind, prefix

    def derive(self, account_id: str, salt: str) -> str:
        mac = hmac.new(self.secret, f"{self.kind}:{account_id}:{salt}".encode(), hashlib.sha256).digest()
        return f"{self.prefix}{account_id}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"

    def owner(self, token: str | None, load) -> str | None:
        """The account a token of this kind belongs to (`load(id)` reads its document and keeps it
        alive); None for a token of another kind; 401 for a false one."""
        if not token or not token.startswith(self.prefix):
            return None
        account_id = token[len(self.prefix):].split(".", 1)[0]
        doc = load(account_id)
        if doc is None or not hmac.compare_digest(doc["token_hash"], token_digest(token)):
            raise InvalidToken(f"this {self.kind} token is not known")
        return account_id
