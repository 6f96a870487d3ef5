"""Moves nobody sends: a bot's, and what a turn timer's end does. Each is a plain function of
(game, version): a move for a version that is gone ends quietly.

A person's turn timer running out (outside bot matches, which count their own timeouts) is judged
as Lichess judges an absent player. Before the seat's first move, it aborts the game: nobody wins
and nothing is rated (in a tournament's game, that seat loses it). After it, a fallback bot plays
the missed turn, and the MISSED_TURNS_TO_FORFEIT-th missed turn in a row forfeits the game: the
best-placed other camp wins, and a rated game is rated. A move of the seat's own sets its count back to nought."""

import random
import time

from ..bots import choose_action
from ..engine import Game, end_off_the_table, game_from_dict
from ..engine.views import seat_knowledge
from ..errors import StaleVersion
from ..ops import metrics
from .document import SeatDocument
from .records import ABORTED, ACTIVE, FORFEIT
from .seats import registered_bot_of
from .service import GameService
from .store import GameMissing, LoadedGame

FALLBACK_BOT = "greedy"  # plays for a human (or a registered bot) whose turn timer ran out
MISSED_TURNS_TO_FORFEIT = 3


class BotMoves:
    def __init__(self, games: GameService):
        self.games = games

    def play_bot_turn(self, game_id: str, version: int) -> bool:
        """Make the bot move due at `version`."""
        return self._move_for(game_id, version, "bot", lambda seat, info: (info["bot"], [])) is not None

    def expire_turn(self, game_id: str, version: int) -> int | None:
        """The turn timer ran out at `version`: the game is aborted or forfeited (see the module),
        or a fallback bot plays for the absent seat, and says so. The seat it judged, or None
        when the turn was taken in time."""
        def plan(seat: int, info: SeatDocument):
            missed = info.get("missed_turns", 0) + 1
            info["missed_turns"] = missed
            return FALLBACK_BOT, [{"type": "turn_timeout", "seat": seat, "bot": FALLBACK_BOT, "missed": missed}]
        return self._move_for(game_id, version, "human", plan, judge_absence=True)

    def _move_for(self, game_id, version, seat_type, plan, judge_absence: bool = False):
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
        info = doc["seats"][seats[0]]
        if judge_absence and doc["match"] is None and registered_bot_of(info) is None:
            if not info.get("moved") and not doc.get("tournament"):
                return self._end(loaded, game, None, ABORTED, seats[0])
            if not info.get("moved"):  # a tournament's game: whoever never starts loses it
                return self._end(loaded, game, forfeit_winner(game, seats[0]), FORFEIT, seats[0])
            if info.get("missed_turns", 0) + 1 >= MISSED_TURNS_TO_FORFEIT:
                info["missed_turns"] = MISSED_TURNS_TO_FORFEIT
                return self._end(loaded, game, forfeit_winner(game, seats[0]), FORFEIT, seats[0])
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

    def _end(self, loaded: LoadedGame, game: Game, winner: int | None, reason: str, seat: int) -> int | None:
        loaded.doc["ended_by"] = {"reason": reason, "seat": seat}
        try:
            self.games.writer.write(loaded, game, end_off_the_table(game, winner, reason, seat))
        except StaleVersion:
            return None
        return seat

    def _deal_history(self, loaded: LoadedGame) -> list[dict]:
        """The current deal's events from the log (its public history, for bots)."""
        first = loaded.doc.get("deal_event_id")
        if first is None:
            return []
        return self.games.store.events(loaded.doc["id"], first - 1, loaded.doc["event_count"] - first + 1)


def forfeit_winner(game: Game, absent: int) -> int:
    """The camp a forfeit awards the game to: the other camp (with more than two, the one that
    leads, and of those level the first to play after the absent seat)."""
    camps = [game.camp_of[(absent + step) % game.players] for step in range(1, game.players)]
    others = list(dict.fromkeys(camp for camp in camps if camp != game.camp_of[absent]))
    return max(others, key=lambda camp: (game.scores[camp], -others.index(camp)))
