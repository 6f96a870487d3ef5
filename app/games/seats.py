"""A game's seats and who may act for them.

A human seat's token is an HMAC of the server's secret: the store keeps only its salt and the
token's hash, so nothing in Redis lets anyone act for a seat, yet a replayed answer can give it
again. A registered bot acts, with its own bot token, for the seat its match gave it; a player,
with their player token, for the seat they created or claimed with it.
"""

import base64
import hashlib
import hmac
import secrets
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..bots import LEVELS
from ..errors import InvalidRequest, InvalidToken, NoSeat
from .document import GameDocument, SeatDocument

OUTSIDE_PREFIX = "bot:"  # a registered bot is `bot:<id>` wherever an entrant or a seat's bot is named


def token_digest(token: str) -> str:
    """What the store keeps of a token (seat or bot): its SHA-256."""
    return hashlib.sha256(token.encode()).hexdigest()


def outside_bot_id(entrant: str | None) -> str | None:
    """The registered bot's id in an entrant or seat name such as `bot:<id>`, else None."""
    return entrant[len(OUTSIDE_PREFIX):] if entrant and entrant.startswith(OUTSIDE_PREFIX) else None


def registered_bot_of(seat: SeatDocument) -> str | None:
    """The registered bot that plays this seat over HTTP (a human-type seat), else None."""
    return outside_bot_id(seat.get("bot")) if seat["type"] == "human" else None


def public_seats(doc: GameDocument) -> list[dict]:
    return [{"seat": s, "type": info["type"], "name": info.get("name"), "bot": info.get("bot"),
             "player": info.get("player"), "kept_for": kept["player"] if (kept := info.get("kept_for")) else None,
             "missed_turns": info.get("missed_turns", 0)}
            for s, info in enumerate(doc["seats"])]


def seat_of_player(seats: Sequence[Mapping[str, Any]], player_id: str) -> int | None:
    """The seat a player holds among `seats` (a document's, or a listing line's), in seat order."""
    return next((seat for seat, info in enumerate(seats) if info.get("player") == player_id), None)


def seat_kept_for(seats: Sequence[Mapping[str, Any]], player_id: str) -> int | None:
    """The open seat kept for a player (a rematch's) among a listing line's seats."""
    return next((seat for seat, info in enumerate(seats) if info.get("kept_for") == player_id), None)


class Seats:
    def __init__(self, secret: bytes, bot_kinds=(), outside_bots=None, players=None):
        self.secret = secret
        self.bot_kinds = tuple(bot_kinds)
        self.outside_bots, self.players = outside_bots, players

    def from_request(self, game_id: str, seat: int, spec: dict) -> SeatDocument:
        """The seat a creator asked for: a human, a built-in bot (by kind or level), or open."""
        kind = spec.get("type")
        if kind == "human":
            return self.human(game_id, seat, spec.get("name") or f"Player {seat + 1}", made_by="creation")
        if kind == "bot":
            if spec.get("level") is not None:
                spec = {**spec, "bot": LEVELS[spec["level"] - 1]}
            if spec.get("bot") not in self.bot_kinds:
                raise InvalidRequest(f"seats[{seat}].bot: unknown bot kind {spec.get('bot')!r}; "
                                     f"kinds: {', '.join(self.bot_kinds)}", field=f"seats[{seat}].bot")
            return {"type": "bot", "bot": spec["bot"], "name": spec.get("name") or f"{spec['bot']} bot"}
        return {"type": "open"}

    def derived(self, label: str) -> str:
        """A value only this deployment's secret makes from `label`, the same every time: what a
        retried request makes again (a seat's salt, a server seed) after Redis lost its first run."""
        mac = hmac.new(self.secret, f"derived:{label}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac[:24]).decode()

    def human(self, game_id: str, seat: int, name: str, player: str | None = None,
              made_by: str | None = None) -> SeatDocument:
        """A human seat: a salt, and the hash of the token derived from it; `player`, the player it
        belongs to (their token acts for it too). `made_by` names what made the seat (the game's
        creation, a claim's request): its salt then derives from it, so a retry of that request
        answers the same token even if the store lost the first; without it, a fresh salt."""
        salt = self.derived(f"seat:{game_id}:{seat}:{made_by}") if made_by else secrets.token_urlsafe(16)
        return {"type": "human", "name": name, "token_salt": salt, "player": player,
                "token_hash": token_digest(self._derive_token(game_id, seat, salt))}

    def tokens(self, doc: GameDocument, seats: Collection[int] | None = None) -> dict[int, str]:
        """The tokens of the game's human seats (or of `seats`), derived again from their salts."""
        return {seat: self._derive_token(doc["id"], seat, info["token_salt"])
                for seat, info in enumerate(doc["seats"])
                if info.get("token_salt") and (seats is None or seat in seats)}

    def seat_of(self, doc: GameDocument, token: str | None) -> int:
        """The seat `token` may act for in this game: 403 for a player's or bot's token without one
        here, 401 for any other token."""
        player_id = self.players.player_of_token(token) if self.players else None
        if player_id:
            seat = seat_of_player(doc["seats"], player_id)
            if seat is None:
                raise NoSeat("your player has no seat in this game")
            return seat
        bot_id = self.outside_bots.bot_of_token(token) if self.outside_bots else None
        if bot_id:
            for seat, info in enumerate(doc["seats"]):
                if registered_bot_of(info) == bot_id:
                    return seat
            raise NoSeat("this bot has no seat in this game")
        if token:
            digest = token_digest(token)
            for seat, info in enumerate(doc["seats"]):
                if info.get("token_hash") and hmac.compare_digest(info["token_hash"], digest):
                    return seat
        raise InvalidToken("send 'Authorization: Bearer <seat token>' with a token of this game")

    def _derive_token(self, game_id: str, seat: int, salt: str) -> str:
        mac = hmac.new(self.secret, f"{game_id}:{seat}:{salt}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
