"""What a game's write means for the players in it, given to the writer by the wiring: their
notices, and at game over its settlement (each player's record, and the rating of a rated game)."""

import logging
import time

from ..accounts.ladders import Ladders, pool_of
from ..ops.scope import app_of, in_app
from ..engine import game_from_dict
from ..games.moves import MISSED_TURNS_TO_FORFEIT
from ..games.records import (ABANDONED, ABORTED, ACTIVE, CANCELLED, DECLINED, FINISHED, AfterWrite, Written,
                             outcome_of, settles)
from ..games.store import GameMissing
from .service import PlayerService, entrant_of

log = logging.getLogger(__name__)


def seat_players(doc, with_those_who_left: bool = False) -> list[tuple[int, str]]:
    """(seat, player id) of the seats players hold (and, when asked, those they left to a bot)."""
    found = [(seat, info.get("player") or (info.get("left_by") if with_those_who_left else None))
             for seat, info in enumerate(doc["seats"])]
    return [(seat, player_id) for seat, player_id in found if player_id]


class TellPlayers(AfterWrite):
    """`your_turn` for each version that awaits a player's seat, `turn_timeout` when a timer's bot
    played for it (and `opponent_absent` to the others), `seat_taken` when someone else sits down,
    `seat_left` when someone leaves to a bot, `game_over` at the end: into each player's inbox
    (their one stream for all their games) and their app's webhooks."""

    def __init__(self, players: PlayerService):
        self.players = players

    def __call__(self, written: Written) -> None:
        doc = written.doc
        seated = seat_players(doc)
        if not seated:
            return
        base = {"game_id": doc["id"], "version": written.version}
        if written.just_finished:
            outcome = outcome_of(doc)
            for seat, player_id in seated:
                self.players.notify(player_id, {"type": "game_over", **base, "seat": seat,
                                                "won": written.game.camp_of[seat] == doc["engine"]["winner"],
                                                "scores": doc["engine"]["scores"], "outcome": outcome})
            return
        for event in written.events:
            if event["type"] == "turn_timeout":
                missed = event.get("missed") or 1
                timer = doc.get("turn_timeout_seconds") or 0
                for seat, player_id in seated:
                    if seat == event["seat"]:
                        self.players.notify(player_id, {"type": "turn_timeout", **base, "seat": seat,
                                                        "bot": event["bot"], "missed": missed})
                    else:  # the others hear of it at once, not three timers later (Lichess's "opponent left")
                        self.players.notify(player_id, {
                            "type": "opponent_absent", **base, "seat": seat, "absent_seat": event["seat"],
                            "missed": missed, "forfeit_at": time.time() + timer * max(
                                0, MISSED_TURNS_TO_FORFEIT - missed) if timer else None})
            if event["type"] == "seat_left":
                for seat, player_id in seated:
                    if seat != event["seat"]:
                        self.players.notify(player_id, {"type": "seat_left", **base, "seat": seat,
                                                        "left_seat": event["seat"], "bot": event["bot"]})
            if event["type"] == "seat_taken":
                for seat, player_id in seated:
                    if seat != event["seat"]:
                        self.players.notify(player_id, {"type": "seat_taken", **base, "seat": seat,
                                                        "taken_seat": event["seat"], "name": event["name"]})
        if doc["status"] == ACTIVE:
            awaiting = set(written.game.awaiting())
            for seat, player_id in seated:
                if seat in awaiting:
                    self.players.notify(player_id, {"type": "your_turn", **base, "seat": seat,
                                                    "deadline": doc.get("move_due_at")})


class RemindPlayers(AfterWrite):
    """A long turn of a player's (correspondence play) gets a `turn_reminder` once `fraction` of it
    has passed: noted at the write that starts the turn, sent by the sweep (`remind_due`) if the
    game still awaits that version then."""

    def __init__(self, store, players: PlayerService, fraction: float, min_seconds: float):
        self.store, self.players, self.fraction, self.min_seconds = store, players, fraction, min_seconds

    def __call__(self, written: Written) -> None:
        if written.owed is None or written.owed[0] != "timer" or not self.fraction:
            return
        seconds = written.owed[1]
        if seconds >= self.min_seconds and seat_players(written.doc):
            self.store.schedule.note_reminder(written.doc["id"], written.version, time.time() + self.fraction * seconds)

    def remind_due(self, limit: int = 1000) -> int:
        sent = 0
        for game_id, version in self.store.schedule.take_reminders_due(time.time(), limit):
            try:
                current, doc = self.store.load(game_id)
            except GameMissing:
                continue
            if current != version or doc["status"] != ACTIVE:
                continue  # the turn was played meanwhile
            awaiting = set(game_from_dict(doc["engine"], record_events=False).awaiting())
            for seat, player_id in seat_players(doc):
                if seat in awaiting:
                    sent += 1
                    self.players.notify(player_id, {
                        "type": "turn_reminder", "game_id": game_id, "version": version, "seat": seat,
                        "deadline": doc.get("move_due_at"),
                        "seconds_left": max(0.0, round((doc.get("move_due_at") or 0) - time.time(), 1))})
        return sent


# Games that end unplayed, left by all or called off: in no record, never rated.
UNCOUNTED = (ABORTED, ABANDONED, DECLINED, CANCELLED)


class Settlement(AfterWrite):
    """A finished game with players counts once in each player's record, and a rated one once in its
    pool. The writer notes the settlement before the game's last write; this effect settles it
    after, and the sweeper settles whatever a failure left noted (`settle_noted`)."""

    def __init__(self, store, players: PlayerService, ladders: Ladders):
        self.store, self.players, self.ladders = store, players, ladders

    def __call__(self, written: Written) -> None:
        if written.just_finished and settles(written.doc):
            self.settle(written.doc, written.game)

    def settle(self, doc, game):
        winner = doc["engine"]["winner"]
        if (doc.get("ended_by") or {}).get("reason") in UNCOUNTED:  # as if it was never played
            self.store.schedule.forget_settlement(doc["id"])
            return
        for seat, player_id in seat_players(doc, with_those_who_left=True):
            self.players.count_game(player_id, doc["id"], game.camp_of[seat] == winner)
        if doc.get("rated"):
            camps = rating_camps(doc, game)
            if camps:
                pool = in_app(app_of(doc["id"]), pool_of(doc["rules"]["preset"], doc["players"]))
                self.ladders.rate(pool, doc["id"], camps)
        self.store.schedule.forget_settlement(doc["id"])

    def settle_noted(self, older_than_seconds: float, limit: int = 1000) -> int:
        """Settle every noted game that finished; forget the notes of games that did not (their
        finishing write lost its race, and the write that finishes them notes again)."""
        noted = self.store.schedule.settlements_noted_before(time.time() - older_than_seconds, limit)
        for game_id in noted:
            try:
                _, doc = self.store.load(game_id)
            except GameMissing:
                self.store.schedule.forget_settlement(game_id)
                continue
            if doc["status"] == FINISHED:
                self.settle(doc, game_from_dict(doc["engine"], record_events=False))
            else:
                self.store.schedule.forget_settlement(game_id)
        return len(noted)


def rating_camps(doc, game) -> list[tuple[list[str], bool]]:
    """Each camp's entrants, and whether it won: the people at the table (also one who left their
    seat to a bot). A game with a seat no person holds rates nobody: a person's rating moves only
    against people; nor does a game nobody won (aborted), nor one with a person on both sides."""
    winner = doc["engine"]["winner"]
    players = dict(seat_players(doc, with_those_who_left=True))
    if winner is None or len(players) < len(doc["seats"]):
        return []
    camps: dict[int, list[str]] = {}
    for seat, player_id in sorted(players.items()):
        camps.setdefault(game.camp_of[seat], []).append(entrant_of(player_id))
    if len(set(players.values())) < len(players):
        return []
    return [(team, camp == winner) for camp, team in sorted(camps.items())]
