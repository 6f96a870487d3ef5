"""Registered outside bots: their tokens, the turns they are owed, the rating ladder and the levels.

A bot token is `rbot.<bot id>.<secret>`; the store keeps only its SHA-256, as for seat tokens.
"""

import hmac
import logging
import secrets
import time

from . import ratings
from ..bots import LEVEL_SUMMARIES, LEVELS
from ..errors import BotNotFound, InvalidToken, TooManyBots
from ..games.seats import OUTSIDE_PREFIX, token_digest
from ..ops.connection import StoreUnavailable

log = logging.getLogger(__name__)

TOKEN_PREFIX = "rbot."
MAX_MOVE_SECONDS = 60  # the longest per-move time limit: an older turn has been played by the fallback


class AccountService:
    def __init__(self, store, utc_now):
        self.store = store
        self.utc_now = utc_now

    # ----- registry ----------------------------------------------------------------------------
    def register(self, name: str, description: str | None, client: str, per_hour: int, cap: int) -> tuple[dict, str]:
        """A new bot for `client` (an address), within its limits: `per_hour` registrations, and
        `cap` bots registered within the idle ttl (0: no limit)."""
        bot_id = secrets.token_urlsafe(9)
        refused = self.store.reserve_registration(client, bot_id, per_hour, cap)
        if refused == -1:
            raise TooManyBots(f"more than {per_hour} bots registered from this address in an hour; retry later")
        if refused == -2:
            raise TooManyBots(f"{cap} bots already registered from this address and kept; reuse them")
        token = f"{TOKEN_PREFIX}{bot_id}.{secrets.token_urlsafe(32)}"
        doc = {"id": bot_id, "name": name, "description": description or "", "token_hash": token_digest(token),
               "created_at": self.utc_now()}
        self.store.register(bot_id, doc)
        return self._public(doc, self.store.ratings()), token

    def get(self, bot_id: str) -> dict:
        return self._public(self._load(bot_id), self.store.ratings())

    def registered(self, offset: int, limit: int) -> tuple[list[dict], int]:
        docs, total = self.store.registered(offset, limit)
        ladder = self.store.ratings()
        return [self._public(doc, ladder) for doc in docs], total

    def exists(self, bot_id: str) -> bool:
        return self.store.load(bot_id) is not None

    def name_of(self, bot_id: str) -> str:
        return self._load(bot_id)["name"]

    def bot_of_token(self, token: str | None) -> str | None:
        """The registered bot a bot token belongs to; None for any other token; 401 for a false one."""
        if not token or not token.startswith(TOKEN_PREFIX):
            return None
        bot_id = token[len(TOKEN_PREFIX):].split(".", 1)[0]
        doc = self.store.load(bot_id, used=True)
        if doc is None or not hmac.compare_digest(doc["token_hash"], token_digest(token)):
            raise InvalidToken("this bot token is not known")
        return bot_id

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

    @staticmethod
    def _public(doc, ladder):
        rated = ladder.get(OUTSIDE_PREFIX + doc["id"], {})
        return {"id": doc["id"], "entrant": OUTSIDE_PREFIX + doc["id"], "name": doc["name"],
                "description": doc["description"], "created_at": doc["created_at"], **_record(rated)}

    # ----- turns -------------------------------------------------------------------------------
    def post_turn(self, bot_id: str, turn: dict):
        """Tell a bot it must act; if the store fails, the game's turn timer still moves it on."""
        try:
            self.store.post_turn(bot_id, turn)
        except StoreUnavailable:
            log.warning("could not post game %s's turn to bot %s; its turn timer stands", turn["game_id"], bot_id)

    @staticmethod
    def recent_cursor() -> str:
        """A turn id just before the turns that may still be played (turn ids are times in ms)."""
        return f"{int((time.time() - MAX_MOVE_SECONDS) * 1000)}-0"

    def turns_after(self, bot_id: str, after: str) -> list[dict]:
        return [{"id": entry_id, **turn} for entry_id, turn in self.store.turns_after(bot_id, after)]

    # ----- ladder ------------------------------------------------------------------------------
    def rate_game(self, winner: str, loser: str):
        ladder = self.store.ratings()
        change = ratings.rating_change(_record(ladder.get(winner, {}))["rating"],
                                       _record(ladder.get(loser, {}))["rating"])
        self.store.rate_game(winner, loser, change, ratings.INITIAL_RATING)

    def ladder(self) -> list[dict]:
        rows = [{"entrant": entrant, **_record(rated)} for entrant, rated in self.store.ratings().items()]
        return sorted(rows, key=lambda row: -row["rating"])

    def levels(self) -> list[dict]:
        ladder = self.store.ratings()
        return [{"level": number, "bot": bot, "summary": LEVEL_SUMMARIES[bot],
                 "rating": ladder[bot]["rating"] if bot in ladder else None}
                for number, bot in enumerate(LEVELS, start=1)]


def _record(rated: dict) -> dict:
    return {"rating": rated.get("rating", ratings.INITIAL_RATING), "games": int(rated.get("games", 0)),
            "wins": int(rated.get("wins", 0)), "losses": int(rated.get("losses", 0))}
