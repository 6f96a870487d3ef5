"""Registered outside bots: their tokens, the turns they are owed, the rating ladder and the levels.

A bot token is `rbot.<bot id>.<mac>`, derived from the server's secret and a salt kept with the
bot, as seat tokens are: the store keeps only its SHA-256, and an idempotent replay of the
registration derives the same token again.
"""

import logging
import secrets
import time

from .ladders import Ladders, record
from .tokens import AccountTokens
from ..bots import LEVEL_SUMMARIES, LEVELS
from ..errors import BotNotFound, InvalidToken, TooManyBots
from ..games.seats import OUTSIDE_PREFIX, token_digest
from ..ops.connection import StoreUnavailable
from ..ops.keys import MATCH_POOL

log = logging.getLogger(__name__)

TOKEN_PREFIX = "rbot."
MAX_MOVE_SECONDS = 60  # the longest per-move time limit: an older turn has been played by the fallback


class AccountService:
    def __init__(self, store, ladders: Ladders, utc_now, secret: bytes):
        self.store, self.ladders = store, ladders
        self.utc_now = utc_now
        self.tokens = AccountTokens(secret, "bot", TOKEN_PREFIX, store.idle_ttl)

    # ----- registry ----------------------------------------------------------------------------
    def register(self, name: str, description: str | None, client: str, per_hour: int, cap: int,
                 bot_id: str | None = None) -> tuple[dict, str | None]:
        """A new bot for `client` (an address), within its limits: `per_hour` registrations, and
        `cap` bots registered within the idle ttl (0: no limit). `bot_id`, when given, is the same
        for every retry of one request: a retry after a first run that died finds its bot."""
        if bot_id is not None and (existing := self.store.load(bot_id)) is not None:
            return self._public(existing, self._match_ladder()), self._token_of(existing)
        bot_id = bot_id or secrets.token_urlsafe(9)
        refused = self.store.reserve_registration(client, bot_id, per_hour, cap)
        if refused == -1:
            raise TooManyBots(f"more than {per_hour} bots registered from this address in an hour; retry later")
        if refused == -2:
            raise TooManyBots(f"{cap} bots already registered from this address and kept; reuse them")
        salt = secrets.token_hex(16)
        token = self.tokens.derive(bot_id, salt)
        doc = {"id": bot_id, "name": name, "description": description or "", "token_salt": salt,
               "token_hash": token_digest(token), "created_at": self.utc_now()}
        self.store.register(bot_id, doc)
        return self._public(doc, self._match_ladder()), token

    def token_of(self, bot_id: str) -> str | None:
        """The bot's token, derived again (None for a bot gone, or registered before tokens were derived)."""
        doc = self.store.load(bot_id)
        return self._token_of(doc) if doc else None

    def _token_of(self, doc: dict) -> str | None:
        return self.tokens.derive(doc["id"], doc["token_salt"]) if "token_salt" in doc else None

    def get(self, bot_id: str) -> dict:
        return self._public(self._load(bot_id), self._match_ladder())

    def registered(self, offset: int, limit: int) -> tuple[list[dict], int]:
        docs, total = self.store.registered(offset, limit)
        ladder = self._match_ladder()
        return [self._public(doc, ladder) for doc in docs], total

    def exists(self, bot_id: str) -> bool:
        return self.store.load(bot_id) is not None

    def name_of(self, bot_id: str) -> str:
        return self._load(bot_id)["name"]

    def bot_of_token(self, token: str | None) -> str | None:
        """The registered bot a bot token belongs to; None for any other token; 401 for a false one."""
        return self.tokens.owner(token, lambda bot_id: self.store.load(bot_id, used=True))

    def authenticate(self, token: str | None) -> str:
        bot_id = self.bot_of_token(token)
        if bot_id is None:
            raise InvalidToken("send 'Authorization: Bearer <bot token>' with the token from createBot")
        return bot_id

    def _load(self, bot_id):
        doc = self.store.load(bot_id)
        if doc is None:
            raise BotNotFound(f"no registered bot {bot_id}")
        return doc

    def _match_ladder(self) -> dict[str, dict]:
        return self.ladders.store.everyone(MATCH_POOL)

    @staticmethod
    def _public(doc, ladder):
        rated = ladder.get(OUTSIDE_PREFIX + doc["id"])
        return {"id": doc["id"], "entrant": OUTSIDE_PREFIX + doc["id"], "name": doc["name"],
                "description": doc["description"], "created_at": doc["created_at"], **record(rated)}

    # ----- the inbox: turns, game_over, match_over ---------------------------------------------
    def notify(self, bot_id: str, notice: dict):
        """Put a notice in a bot's inbox (its stream and long poll read it). If the store fails, a
        turn's timer still moves the game on, and the game or match says it is over when read."""
        try:
            self.store.notify(bot_id, notice)
        except StoreUnavailable:
            log.warning("could not tell bot %s of %s; its turn timer stands", bot_id, notice["type"])

    @staticmethod
    def recent_cursor() -> str:
        """A turn id just before the turns that may still be played (turn ids are times in ms)."""
        return f"{int((time.time() - MAX_MOVE_SECONDS) * 1000)}-0"

    def inbox_after(self, bot_id: str, after: str) -> list[dict]:
        """The notices after `after`, oldest first, each with its id (turns kept from before
        notices had a type are turns)."""
        return [{"id": entry_id, "type": "turn", **notice}
                for entry_id, notice in self.store.inbox_after(bot_id, after)]

    # ----- the match ladder ----------------------------------------------------------------------
    def rate_game(self, game_id: str, winner: str, loser: str) -> bool:
        """Count a finished match game on the match ladder, once whatever the retries: False when it was already."""
        return self.ladders.rate(MATCH_POOL, game_id, [([winner], True), ([loser], False)])

    def ladder(self) -> list[dict]:
        return self.ladders.ladder(MATCH_POOL)

    def levels(self) -> list[dict]:
        ladder = self._match_ladder()
        return [{"level": number, "bot": bot, "summary": LEVEL_SUMMARIES[bot],
                 "rating": ladder[bot]["rating"] if bot in ladder else None}
                for number, bot in enumerate(LEVELS, start=1)]
