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
from .records import ABANDONED, ABORTED, ACTIVE, FORFEIT
from .seats import registered_bot_of
from .service import GameService
from .store import GameMissing, LoadedGame

FALLBACK_BOT = "greedy"  # plays for a human (or a registered bot) whose turn timer ran out
MISSED_TURNS_TO_FORFEIT = 3
MOVES_TO_COUNT = 2  # own moves a seat makes before its forfeit or resignation counts (else: aborted)


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
                if everyone_away(doc["seats"], seats[0]):  # nobody is left to award it to
                    return self._end(loaded, game, None, ABANDONED, seats[0])
                if not counts(info):  # a throwaway's forfeit never feeds anyone's rating
                    return self._end(loaded, game, None, ABORTED, seats[0])
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
        try:
            end_game(self.games.writer, loaded, game, winner, reason, seat)
        except StaleVersion:
            return None
        return seat

    def _deal_history(self, loaded: LoadedGame) -> list[dict]:
        """The current deal's events from the log (its public history, for bots)."""
        first = loaded.doc.get("deal_event_id")
        if first is None:
            return []
        return self.games.store.events(loaded.doc["id"], first - 1, loaded.doc["event_count"] - first + 1)


def end_game(writer, loaded: LoadedGame, game: Game, winner: int | None, reason: str, seat: int | None) -> int:
    """End the game off the table (`reason`, because of `seat`), camp `winner` awarded it or nobody:
    its new version. Timers, resignations and declined rematches all end a game here."""
    loaded.doc["ended_by"] = {"reason": reason, "seat": seat}
    version, _ = writer.write(loaded, game, end_off_the_table(game, winner, reason, seat))
    return version


def counts(info: SeatDocument) -> bool:
    """The seat played enough of its own for its forfeit or resignation to count (a game of before
    the count: one move was enough)."""
    return info.get("moves", MOVES_TO_COUNT if info.get("moved") else 0) >= MOVES_TO_COUNT


def everyone_away(seats: list[SeatDocument], absent: int) -> bool:
    """Every other person's last turn ran out too (their timers run out, not a move of their own
    since): a game every person left, which nobody wins."""
    people = [info for seat, info in enumerate(seats)
              if seat != absent and info["type"] == "human" and registered_bot_of(info) is None]
    return bool(people) and all(info.get("missed_turns", 0) > 0 for info in people)


def forfeit_winner(game: Game, absent: int) -> int:
    """The camp a forfeit awards the game to: the other camp (with more than two, the one that
    leads, and of those level the first to play after the absent seat)."""
    camps = [game.camp_of[(absent + step) % game.players] for step in range(1, game.players)]
    others = list(dict.fromkeys(camp for camp in camps if camp != game.camp_of[absent]))
    return max(others, key=lambda camp: (game.scores[camp], -others.index(camp)))
