"""Players: a name and a token that outlives any one seat. A player token is
`rply.<player id>.<mac>`, derived from the server's secret and a salt kept with the player, as
bot tokens are: the store keeps only its SHA-256, and an idempotent replay derives it again."""

import logging
import secrets
import time

from ..accounts.ladders import Ladders, pools, record
from ..accounts.tokens import AccountTokens
from ..ops.scope import PUBLIC_APP, app_of, in_app
from ..apps.webhooks import WebhookService
from ..errors import InvalidToken, PlayerNotFound
from ..games.seats import token_digest
from ..ops.connection import StoreUnavailable

log = logging.getLogger(__name__)

TOKEN_PREFIX = "rply."
PLAYER_PREFIX = "player:"  # a player is `player:<id>` wherever an entrant is named (ladders)


def entrant_of(player_id: str) -> str:
    return PLAYER_PREFIX + player_id


class PlayerService:
    def __init__(self, store, ladders: Ladders, utc_now, secret: bytes, webhooks: WebhookService):
        self.store, self.ladders, self.webhooks = store, ladders, webhooks
        self.utc_now = utc_now
        self.tokens = AccountTokens(secret, "player", TOKEN_PREFIX, store.idle_ttl)

    def register(self, name: str, player_id: str | None = None, app_id: str = PUBLIC_APP,
                 admit=lambda: None) -> tuple[dict, str]:
        """A new player of app `app_id` (`admit()` counts it against the app's quota first).
        `player_id`, when given, is the same for every retry of one request."""
        retried, player_id = player_id is not None, in_app(app_id, player_id or secrets.token_urlsafe(9))
        if retried and (existing := self.store.load(player_id)) is not None:
            return self.public(existing["id"]), self.tokens.derive(existing["id"], existing["token_salt"])
        admit()
        salt = secrets.token_hex(16)
        token = self.tokens.derive(player_id, salt)
        doc = {"id": player_id, "name": name, "token_salt": salt, "token_hash": token_digest(token),
               "created_at": self.utc_now()}
        self.store.create(player_id, doc)
        return self.public(player_id), token

    def token_of(self, player_id: str) -> str | None:
        """The player's token, derived again (None for a player gone)."""
        doc = self.store.load(player_id)
        return self.tokens.derive(player_id, doc["token_salt"]) if doc else None

    def player_of_token(self, token: str | None) -> str | None:
        """The player a player token belongs to; None for any other token; 401 for a false one."""
        return self.tokens.owner(token, lambda player_id: self.store.load(player_id, used=True))

    def authenticate(self, token: str | None) -> str:
        player_id = self.player_of_token(token)
        if player_id is None:
            raise InvalidToken("send 'Authorization: Bearer <player token>' with the token from createPlayer")
        return player_id

    def name_of(self, player_id: str) -> str:
        return self._load(player_id)["name"]

    def public(self, player_id: str) -> dict:
        """What anyone may read of a player: name, finished games and wins, a rating per pool played."""
        doc = self._load(player_id)
        entrant, app_id = entrant_of(player_id), app_of(player_id)
        rated = [{"pool": pool, **record(found[entrant])} for pool in pools()
                 for found in (self.ladders.store.records(in_app(app_id, pool), [entrant]),) if entrant in found]
        return {"id": doc["id"], "name": doc["name"], "created_at": doc["created_at"], "entrant": entrant,
                **self.store.record(player_id), "ratings": rated}

    def leaderboard(self, pool: str, offset: int, limit: int, app_id: str = PUBLIC_APP) -> tuple[list[dict], int]:
        """A page of an app's ladder of a pool, each entrant named: a player by their name, a bot by its kind."""
        rows, total = self.ladders.board(in_app(app_id, pool), offset, limit)
        for row in rows:
            player_id = row["entrant"].removeprefix(PLAYER_PREFIX) if row["entrant"].startswith(PLAYER_PREFIX) else None
            doc = self.store.load(player_id) if player_id else None
            row["name"] = doc["name"] if doc else row["entrant"] if player_id or ":" in row["entrant"] \
                else f"{row['entrant']} bot"
        return rows, total

    def _load(self, player_id: str) -> dict:
        doc = self.store.load(player_id)
        if doc is None:
            raise PlayerNotFound(f"no player {player_id}")
        return doc

    # ----- games and notices -------------------------------------------------------------------
    def took_seat(self, player_id: str, game_id: str):
        """Listed among the player's games before the seat is written: a seat never goes unlisted,
        and a listing drops a game in which the player holds no seat after all."""
        self.store.add_game(player_id, game_id)

    def count_game(self, player_id: str, game_id: str, won: bool) -> bool:
        return self.store.count_game(player_id, game_id, won)

    def notify(self, player_id: str, notice: dict):
        """Put a notice in a player's inbox (their stream and long poll read it), and send it to their
        app's webhooks that take its type. If the store fails, the game itself still says what
        happened when read."""
        notice = {**notice, "at": time.time()}
        try:
            self.store.notify(player_id, notice)
        except StoreUnavailable:
            log.warning("could not tell player %s of %s", player_id, notice["type"])
        self.webhooks.publish(app_of(player_id), notice["type"], {"player_id": player_id, **notice})

    def inbox_after(self, player_id: str, after: str) -> list[dict]:
        return [{"id": entry_id, **notice} for entry_id, notice in self.store.inbox_after(player_id, after)]

    @staticmethod
    def recent_cursor() -> str:
        """Just before the notices of the last minute (notice ids are times in ms)."""
        return f"{int((time.time() - 60) * 1000)}-0"
