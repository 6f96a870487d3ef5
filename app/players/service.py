"""Players: a name, and tokens that outlive any one seat (players/tokens.py). A player is made
by createPlayer (one token, shown once) or found or made by their app's server signing in its
own user (`external_id`, one token per device). The store keeps only the tokens' SHA-256."""

import logging
import secrets
import time
from datetime import datetime

from ..accounts.ladders import Ladders, pools, record
from ..ops.scope import PUBLIC_APP, app_of, in_app
from ..apps.webhooks import WebhookService
from ..errors import InvalidToken, PlayerNotFound, PlayerSuspended, RatedPlayLocked
from ..games.seats import token_digest
from ..ops.connection import StoreUnavailable
from .document import PlayerDocument
from .tokens import PlayerTokens

log = logging.getLogger(__name__)

PLAYER_PREFIX = "player:"  # a player is `player:<id>` wherever an entrant is named (ladders)


def entrant_of(player_id: str) -> str:
    return PLAYER_PREFIX + player_id


class PlayerService:
    def __init__(self, store, ladders: Ladders, utc_now, secret: bytes, webhooks: WebhookService,
                 app_quotas=lambda app_id: {}):
        """`app_quotas(app id)`: what an app asks of its players before rated play (rated_min_games,
        rated_min_account_seconds)."""
        self.store, self.ladders, self.webhooks = store, ladders, webhooks
        self.utc_now, self.app_quotas = utc_now, app_quotas
        self.tokens = PlayerTokens(secret, store, utc_now)

    def register(self, name: str, player_id: str | None = None, app_id: str = PUBLIC_APP,
                 admit=lambda: None) -> tuple[dict, str]:
        """A new player of app `app_id` (`admit()` counts it against the app's quota first).
        `player_id`, when given, is the same for every retry of one request."""
        retried, player_id = player_id is not None, in_app(app_id, player_id or secrets.token_urlsafe(9))
        if retried and (existing := self.store.load(player_id)) is not None:
            return self.public(existing["id"]), self.tokens.first(existing["id"], existing["token_salt"])
        admit()
        doc = self._new_document(player_id, name)
        self.store.create(player_id, doc)
        return self.public(player_id), self.tokens.first(player_id, doc["token_salt"])

    def _new_document(self, player_id: str, name: str) -> PlayerDocument:
        salt = self.tokens.first_salt(player_id)
        return {"id": player_id, "name": name, "token_salt": salt,
                "token_hash": token_digest(self.tokens.first(player_id, salt)), "created_at": self.utc_now()}

    def sign_in(self, app_id: str, external_id: str, name: str, device: str, ttl_seconds: int | None,
                admit=lambda: None, release=lambda: None) -> tuple[dict, dict, str, bool]:
        """The app's player for its own `external_id`, made at the first sign-in (`name` is theirs
        then; later sign-ins keep the player's own), and a new token for `device`: (the player,
        the token's record, the token, whether the player was made now). Two first sign-ins at once
        make one player: both claim the id with one proposal, and one document is written."""
        player_id = self.store.claim_external_id(app_id, external_id, in_app(app_id, secrets.token_urlsafe(9)))
        doc = self.store.load(player_id)
        created = False
        if doc is None:
            admit()
            # No first token: a player who signs in holds only their devices' tokens.
            made = {**self._new_document(player_id, name), "token_hash": None, "external_id": external_id}
            created = self.store.create(player_id, made)
            if not created:
                release()
            doc = self.document(player_id)
        if doc.get("suspended_at"):
            raise PlayerSuspended("this player is suspended by their app: restore them first")
        shown, token = self.tokens.issue(player_id, device, ttl_seconds)
        return self.public(player_id), shown, token, created

    def token_of(self, player_id: str) -> str | None:
        """The player's first token, derived again (None for a player gone, or that token revoked)."""
        doc = self.store.load(player_id)
        return self.tokens.first(player_id, doc["token_salt"]) if doc and doc["token_hash"] else None

    def player_of_token(self, token: str | None, erasing: bool = False) -> str | None:
        """The player a player token belongs to; None for any other token; 401 for a false one."""
        owner = self.tokens.owner(token, erasing)
        return owner[0] if owner else None

    def authenticate(self, token: str | None, erasing: bool = False) -> str:
        """The player whose token this is (`erasing`: a player being erased too, see tokens.owner)."""
        player_id = self.player_of_token(token, erasing)
        if player_id is None:
            raise InvalidToken("send 'Authorization: Bearer <player token>' with the token from createPlayer "
                               "or a sign-in")
        return player_id

    def acting_for(self, app_id: str, player_id: str, must_exist: bool = True) -> str:
        """The token a request of `app_id`'s server acts for its player with (404 for another app's
        player, or none unless not `must_exist`; 403 for a suspended one, 401 for one being erased,
        at its first use)."""
        if app_of(player_id) != app_id or (must_exist and self.store.load(player_id) is None):
            raise PlayerNotFound(f"no player {player_id} in this app")
        return self.tokens.acting(player_id)

    # ----- the player's own ------------------------------------------------------------------------
    def rename(self, player_id: str, name: str) -> dict:
        """A new name from now on: seats already taken keep the name they were taken under."""
        self._save({**self.document(player_id), "name": name})
        return self.public(player_id)

    def token_list(self, player_id: str, token: str | None) -> list[dict]:
        owner = self.tokens.owner(token)
        return self.tokens.listed(self.document(player_id), owner[1] if owner else None)

    def revoke_token(self, player_id: str, token_id: str):
        self.tokens.revoke(self.document(player_id), token_id)

    def sign_out_others(self, player_id: str, token: str | None):
        """Every token of the player but the one sent (acting for them: every one)."""
        owner = self.tokens.owner(token)
        kept = owner[1] if owner and not owner[1].startswith("~") else None
        self.tokens.revoke_all_but(self.document(player_id), kept)

    def set_suspended(self, player_id: str, suspended: bool) -> dict:
        doc = self.document(player_id)
        self._save({**doc, "suspended_at": (doc.get("suspended_at") or self.utc_now()) if suspended else None})
        self.tokens.forget(player_id)
        return self.public(player_id)

    def _save(self, doc: PlayerDocument):
        if not self.store.save(doc):
            raise PlayerNotFound(f"no player {doc['id']}")

    def admit_rated(self, player_id: str):
        """403 `rated_play_locked` unless the player has finished as many games, and has had their
        account as long, as their app asks before rated play (a throwaway account rates nobody)."""
        quotas = self.app_quotas(app_of(player_id))
        games, seconds = quotas.get("rated_min_games", 0), quotas.get("rated_min_account_seconds", 0)
        if not (games or seconds):
            return
        played = self.store.record(player_id)["games"]
        age = time.time() - datetime.fromisoformat(self.document(player_id)["created_at"]).timestamp()
        if played < games or age < seconds:
            raise RatedPlayLocked(f"rated play opens after {games} finished games and an account {seconds} s old "
                                  f"(this one: {played} games, {int(age)} s)", games_needed=games,
                                  seconds_needed=seconds)

    def name_of(self, player_id: str) -> str:
        return self.document(player_id)["name"]

    def public(self, player_id: str) -> dict:
        """What anyone may read of a player: name, finished games and wins, a rating per pool played."""
        doc = self.document(player_id)
        entrant, app_id = entrant_of(player_id), app_of(player_id)
        rated = [{"pool": pool, **record(found[entrant])} for pool in pools()
                 for found in (self.ladders.store.records(in_app(app_id, pool), [entrant]),) if entrant in found]
        return {"id": doc["id"], "name": doc["name"], "created_at": doc["created_at"], "entrant": entrant,
                "suspended": bool(doc.get("suspended_at")), **self.store.record(player_id), "ratings": rated}

    def leaderboard(self, pool: str, offset: int, limit: int, app_id: str = PUBLIC_APP) -> tuple[list[dict], int]:
        """A page of an app's ladder of a pool, each entrant named: a player by their name, a bot by its kind."""
        rows, total = self.ladders.board(in_app(app_id, pool), offset, limit)
        for row in rows:
            player_id = row["entrant"].removeprefix(PLAYER_PREFIX) if row["entrant"].startswith(PLAYER_PREFIX) else None
            doc = self.store.load(player_id) if player_id else None
            row["name"] = doc["name"] if doc else row["entrant"] if player_id or ":" in row["entrant"] \
                else f"{row['entrant']} bot"
        return rows, total

    def document(self, player_id: str) -> PlayerDocument:
        """The player's document; 404 for a player gone or being erased."""
        doc = self.store.load(player_id)
        if doc is None or doc.get("deleting_at"):
            raise PlayerNotFound(f"no player {player_id}")
        return doc

    # ----- games and notices -------------------------------------------------------------------
    def took_seat(self, player_id: str, game_id: str):
        """Listed among the player's games before the seat is written: a seat never goes unlisted,
        and a listing drops a game in which the player holds no seat after all."""
        self.store.add_game(player_id, game_id)

    def count_game(self, player_id: str, game_id: str, won: bool) -> bool:
        return self.store.count_game(player_id, game_id, won)

    def notify(self, player_id: str, notice: dict, once: str | None = None):
        """Put a notice in a player's inbox (their stream and long poll read it), and send it to their
        app's webhooks that take its type. If the store fails, the game itself still says what
        happened when read. `once`: the notice's key, for a notice told again until it is known
        told (a tournament's): the inbox keeps one per key, and each endpoint gets one delivery per
        key, its `webhook-id` the same however often it is told (after our Redis lost its last
        second, a receiver may see that id twice, and drops the second as Standard Webhooks asks).
        Such a notice is not given up when the store fails: the error goes to its teller, which
        tells it again later."""
        notice = {**notice, "at": time.time()}
        try:
            self.store.notify(player_id, notice, once)
        except StoreUnavailable:
            if once:
                raise
            log.warning("could not tell player %s of %s", player_id, notice["type"])
        self.webhooks.publish(app_of(player_id), notice["type"], {"player_id": player_id, **notice},
                              once and f"{player_id}:{once}")

    def inbox_after(self, player_id: str, after: str) -> list[dict]:
        return [{"id": entry_id, **notice} for entry_id, notice in self.store.inbox_after(player_id, after)]

    @staticmethod
    def recent_cursor() -> str:
        """Just before the notices of the last minute (notice ids are times in ms)."""
        return f"{int((time.time() - 60) * 1000)}-0"
