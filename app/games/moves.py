"""Moves nobody sends: a bot's, and a fallback bot's when a turn timer runs out. Each is a plain
function of (game, version): a move for a version that is gone ends quietly."""

import random
import time

from ..bots import choose_action
from ..engine import game_from_dict
from ..engine.views import seat_knowledge
from ..errors import StaleVersion
from ..ops import metrics
from .records import ACTIVE
from .service import GameService
from .store import GameMissing, LoadedGame

FALLBACK_BOT = "greedy"  # plays for a human (or a registered bot) whose turn timer ran out


class BotMoves:
    def __init__(self, games: GameService):
        self.games = games

    def play_bot_turn(self, game_id: str, version: int) -> bool:
        """Make the bot move due at `version`."""
        return self._move_for(game_id, version, "bot", lambda seat, info: (info["bot"], [])) is not None

    def expire_turn(self, game_id: str, version: int) -> int | None:
        """The turn timer ran out at `version`: a fallback bot plays for the absent seat, and says
        so. The seat it played for, or None when the turn was taken in time."""
        return self._move_for(game_id, version, "human", lambda seat, info: (
            FALLBACK_BOT, [{"type": "turn_timeout", "seat": seat, "bot": FALLBACK_BOT}]))

    def _move_for(self, game_id, version, seat_type, plan):
        try:
            loaded = self.games.store.load(game_id)
        except GameMissing:
            return None
        doc = loaded.doc
        if loaded.version != version or doc["status"] != ACTIVE:
            return None
        game = game_from_dict(doc["engine"])  # decoded once: to choose, then to apply
        seats = [s for s in game.awaiting() if doc["seats"][s]["type"] == seat_type]
        if not seats:
            return None
        kind, preamble = plan(seats[0], doc["seats"][seats[0]])
        rng = random.Random(f"{game_id}:{version}:{seats[0]}")  # a move is reproducible from the log
        knowledge = seat_knowledge(game, seats[0], self._deal_history(loaded))
        started = time.perf_counter()
        action = choose_action(kind, knowledge, rng)
        think_ms = (time.perf_counter() - started) * 1000 if seat_type == "bot" else None
        due_at = doc.get("move_due_at")
        try:
            self.games.act_as(loaded, seats[0], version, action, preamble=preamble, game=game, think_ms=think_ms)
        except StaleVersion:
            return None
        if seat_type == "bot" and due_at:
            metrics.BOT_MOVE_SECONDS.observe(max(0.0, time.time() - due_at))
        return seats[0]

    def _deal_history(self, loaded: LoadedGame) -> list[dict]:
        """The current deal's events from the log (its public history, for bots)."""
        first = loaded.doc.get("deal_event_id")
        if first is None:
            return []
        return self.games.store.events(loaded.doc["id"], first - 1, loaded.doc["event_count"] - first + 1)
