"""Bot matches as resources, with built-in bots, registered outside bots, or both.

Between built-in bots, every game is queued at once and played whole on the workers. With a
registered bot, the games are live games played one after another: its seats act over HTTP
(with its bot token) under the match's per-move time limit; the next game starts when one
ends. Such a match deals every game a deck of its own (duplicate decks would show a bot that
remembers its opponent's hands in the paired game), and shows its seed only once it is over.
Game `i` seats the same entrants, and deals the same deck, for the same seed and format.
"""

import logging
import secrets
import time

from ..engine import Game, game_from_dict, new_seed, rules_from_dict, rules_from_request
from ..errors import GameNotFound, InvalidRequest, TooManyMatchGames
from .play import PlayedGame, deck_seed, play_game, seating, standings, tally
from ..games.seats import outside_bot_id, registered_bot_of
from ..games.moves import FALLBACK_BOT
from ..games.records import FINISHED, utc_now
from ..games.document import SeatDocument
from ..games.seating import Seating
from ..games.service import GameService
from ..games.store import GameExists, GameMissing
from ..games.writer import GameWriter
from .store import MatchStore
from ..ops.connection import StoreUnavailable

log = logging.getLogger(__name__)

MAX_GAMES = 2000
FORFEIT_TIMEOUTS = 5  # a registered bot whose turn timer runs out this often in a match forfeits it


def match_game_id(match_id: str, index: int) -> str:
    return f"{match_id}-{index}"


def _rating_of(doc: dict, game_id: str, played: PlayedGame) -> dict | None:
    """The ladder's record of a finished match game, or None when it is not rated: Elo rates two
    different entrants, and never a game dealt from a seed its creator chose (it could be stacked)."""
    names = [doc["bots"][entrant] for entrant in played.entrants]
    if len(names) != 2 or names[0] == names[1] or doc.get("dealing", "server") != "server":
        return None
    winner = played.winner
    if winner is None:
        return None
    return {"game_id": game_id, "winner": names[winner], "loser": names[1 - winner]}


LIVE_SEATING = "seats rotate every game; every game deals a deck of its own (no duplicate with an outside bot)"


class MatchService:
    def __init__(self, store: MatchStore, games: GameService, seating: Seating, writer: GameWriter, dispatcher,
                 accounts):
        """`games` to read games, `seating` to hand a forfeiting bot's seat on, `writer` to store
        match games, `accounts` for the registered bots that play in them."""
        self.store, self.games, self.seating, self.writer = store, games, seating, writer
        self.dispatcher, self.accounts = dispatcher, accounts

    def create_match(self, request: dict, client: str, cap: int, match_id: str | None = None) -> dict:
        """Queue a match for `client` (an address), whose running match games may not pass `cap` (0: no cap).
        `match_id`, when given, is the same for every retry of one request: a retry after a first
        run that died (its answer lost) finds that match rather than starting a second one."""
        if match_id is not None and self.store.exists(match_id):
            return self.status(match_id)
        bots = request["bots"]
        rules = rules_from_request(request.get("rules"))
        rules.check_players(len(bots))
        outside = [outside_bot_id(b) for b in bots if outside_bot_id(b)]
        self.check_entrants(bots)
        if len(set(outside)) < len(outside):
            raise InvalidRequest("bots: a registered bot may hold only one seat of a match", field="bots")
        if cap and not self.store.reserve_games(client, request["games"], cap):
            raise TooManyMatchGames(f"more than {cap} match games would be running for this client; "
                                    "wait for its matches to finish")
        match_id = match_id or secrets.token_urlsafe(12)
        doc = {"id": match_id, "rules": rules.to_dict(), "bots": bots, "games_total": request["games"],
               "client": client if cap else None,
               "seed": request.get("seed") or new_seed(),
               "dealing": "creator_seed" if request.get("seed") else "server",
               "created_at": utc_now(), "live": bool(outside),
               "move_seconds": request.get("move_seconds", 10) if outside else None}
        self.store.create(match_id, doc)
        self.store.track(match_id)
        if not outside:
            for index in range(doc["games_total"]):
                self.dispatcher.match_game(match_id, index)
        return self.status(match_id)

    def check_entrants(self, bots: list[str], field: str = "bots"):
        """422 unless every entrant is a built-in bot kind or a registered bot (`bot:<id>`)."""
        unknown = [b for b in bots if b not in self.seating.bot_kinds and not
                   (outside_bot_id(b) and self.accounts.exists(outside_bot_id(b)))]
        if unknown:
            raise InvalidRequest(f"{field}: unknown bot(s) {unknown}; built-in kinds: "
                                 f"{', '.join(self.seating.bot_kinds)}, or bot:<id> for a registered bot", field=field)

    def play_match_game(self, match_id: str, index: int) -> bool:
        """Play game `index` of the match and count it; a job that runs twice counts once."""
        doc, _ = self._load(match_id)
        played = play_game(rules_from_dict(doc["rules"]), doc["bots"], doc["seed"], index)
        game_id = match_game_id(match_id, index)
        seats: list[SeatDocument] = [
            {"type": "bot", "bot": doc["bots"][entrant], "name": f"{doc['bots'][entrant]} #{entrant}"}
            for entrant in played.entrants]
        try:
            self.writer.create(game_id, played.game, seats, played.events or [], dealing=doc.get("dealing", "server"),
                               match={"id": match_id, "index": index, "entrants": played.entrants})
        except GameExists:
            pass  # stored by an earlier run of this job
        return self._record(doc, index, game_id, played)

    def _record(self, doc, index, game_id, played) -> bool:
        """Count a finished game in the match and on the rating ladder, each once: the standings
        and the game's rating are recorded together, and the ladder counts a game id once, so a
        job run again (after a lost answer, or Redis losing its last second) rates what it must."""
        rated = _rating_of(doc, game_id, played)
        recorded = self.store.record_game(doc["id"], index, game_id, tally(played), rated)
        if recorded and doc.get("client"):
            self.store.release_games(doc["client"])
        if rated:
            self.accounts.rate_game(**rated)
        return recorded

    # ----- the reconciler: no match stays stuck -----------------------------------------------
    def reconcile(self, older_than_seconds: float) -> int:
        """Look at the running matches that have not moved for `older_than_seconds`: what is owed
        is dispatched again (a game whose job is neither waiting in its queue nor running: RQ's
        state of it may have come back from a Redis restart as anything), a live match is advanced,
        and a finished one has every rated game on the ladder before it is let go. One match's
        error never ends the pass. Answers how many matches it looked at."""
        stalled = self.store.not_moved_since(time.time() - older_than_seconds)
        for match_id in stalled:
            try:
                self._reconcile(match_id)
            except StoreUnavailable:
                raise
            except Exception:
                log.exception("reconciling match %s failed", match_id)
        return len(stalled)

    def _reconcile(self, match_id: str):
        try:
            doc, totals = self.store.load(match_id)
        except GameMissing:  # expired
            self.store.untrack(match_id)
            return
        if doc.get("live"):
            doc, totals = self.advance(match_id)
        if self._over(doc, totals):
            for rated in self.store.rated_results(match_id):
                self.accounts.rate_game(**rated)
            self.store.untrack(match_id)
            return
        if not doc.get("live"):
            owed = sorted(set(range(doc["games_total"])) - self.store.done_indexes(match_id))
            queued = self.dispatcher.match_games_again(match_id, owed)
            if queued:
                log.warning("match %s: %d game(s) queued again, their jobs lost", match_id, queued)
        self.store.track(match_id)  # looked at: again after another stall

    # ----- live matches (a registered bot plays) ----------------------------------------------
    def advance(self, match_id: str) -> tuple[dict, dict]:
        """Count the live game that ended and start the next; safe to call any time, from anywhere.
        Answers the match as it is then (its document and totals)."""
        doc, totals = self._load(match_id)
        while doc.get("live") and totals.get("games_done", 0) < doc["games_total"]:
            index = int(totals.get("games_done", 0))
            game_id = match_game_id(match_id, index)
            loaded = self.games.find(game_id)
            if loaded is None:
                if "forfeited_by" not in totals:
                    self._start_live_game(doc, index, game_id)
                break
            game_doc = loaded.doc
            if game_doc["status"] != FINISHED:
                break
            game = game_from_dict(game_doc["engine"], record_events=False)
            forfeited_by = int(totals["forfeited_by"]) if "forfeited_by" in totals else None
            match = game_doc["match"]
            assert match is not None  # a match's game, by its id
            clock = match.get("move_ms") or [[] for _ in game_doc["seats"]]
            recorded = self._record(doc, index, game_id, PlayedGame(game, match["entrants"], clock,
                                                                     forfeited_by=forfeited_by))
            doc, totals = self._load(match_id)
            if recorded and self._over(doc, totals):
                self._announce_match_over(doc, totals)
        return doc, totals

    def _start_live_game(self, doc, index, game_id):
        players = len(doc["bots"])
        entrants = seating(players, index)
        # Not in duplicate: a bot that remembers game 2k would know its opponent's hands in game 2k+1.
        game = Game(rules_from_dict(doc["rules"]), players,
                    seed=deck_seed(doc["seed"], index, players, duplicate=False), first_dealer=0)
        seats: list[SeatDocument] = []
        for entrant in entrants:
            bot = doc["bots"][entrant]
            name = self.accounts.name_of(outside_bot_id(bot)) if outside_bot_id(bot) else bot
            # A registered bot's seat is played over HTTP like a human's, on the turn timer.
            seats.append({"type": "human" if outside_bot_id(bot) else "bot", "bot": bot, "name": f"{name} #{entrant}"})
        try:
            self.writer.create(game_id, game, seats, game.events or [], turn_timeout_seconds=doc["move_seconds"],
                               dealing=doc.get("dealing", "server"),
                               match={"id": doc["id"], "index": index, "entrants": entrants})
        except GameExists:
            pass  # started by another caller of advance

    def turn_timed_out(self, game_id: str, seat: int):
        """A registered bot's turn timer ran out in a match game: counted; too many forfeit the match."""
        game_doc = self.games.load(game_id).doc
        match, info = game_doc.get("match"), game_doc["seats"][seat]
        if not match or not registered_bot_of(info):
            return
        entrant = match["entrants"][seat]
        if self.store.count_timeout(match["id"], entrant) >= FORFEIT_TIMEOUTS:
            if self.store.forfeit(match["id"], entrant):
                log.info("bot %s forfeits match %s after %d timeouts", info["bot"], match["id"], FORFEIT_TIMEOUTS)
                doc, _ = self._load(match["id"])
                if doc.get("client"):  # the games that will never start hold no share of the client's cap
                    self.store.release_games(doc["client"], doc["games_total"] - match["index"] - 1)
            self.seating.hand_to_bot(self.games.load(game_id), seat, FALLBACK_BOT)

    def _over(self, doc, totals) -> bool:
        done = int(totals.get("games_done", 0))
        return done >= doc["games_total"] or ("forfeited_by" in totals and not self._game_in_play(doc, done))

    def _announce_match_over(self, doc, totals):
        """Tell each registered bot of the match that it is over, with the standings."""
        entrants = standings(doc["bots"], totals)
        forfeited_by = int(totals["forfeited_by"]) if "forfeited_by" in totals else None
        for entrant, bot in enumerate(doc["bots"]):
            if outside_bot_id(bot):
                self.accounts.notify(outside_bot_id(bot), {
                    "type": "match_over", "match_id": doc["id"], "entrant": entrant,
                    "games_done": int(totals.get("games_done", 0)), "forfeited_by": forfeited_by,
                    "entrants": entrants})

    def status(self, match_id: str) -> dict:
        doc, totals = self.advance(match_id)  # a live match: mends a hand-off that a crash cut short
        done = int(totals.get("games_done", 0))
        forfeited_by = int(totals["forfeited_by"]) if "forfeited_by" in totals else None
        over = self._over(doc, totals)
        public = {key: value for key, value in doc.items() if key not in ("client", "live")}  # an address is not public
        if doc["live"] and not over:
            public["seed"] = None  # every deck of the match derives from it: an entrant could deal them itself
        return {**public, "status": "finished" if over else "running", "games_done": done,
                "forfeited_by": forfeited_by, "entrants": standings(doc["bots"], totals),
                "seating": LIVE_SEATING if doc["live"] else "seats rotate every game; each deck is dealt once per "
                                                            "rotation (duplicate)",
                "first_seating": seating(len(doc["bots"]), 0)}

    def results(self, match_ids: list[str]) -> tuple[dict[str, tuple[list[int], int]], set[str]]:
        """The matches of `match_ids` that are over (each entrant's games won, and the games
        played), and those that do not exist (one read of them all)."""
        found, kept = {}, self.store.load_many(match_ids)
        for match_id, (doc, totals) in kept.items():
            if self._over(doc, totals):
                found[match_id] = ([int(totals.get(f"e{entrant}:wins", 0)) for entrant in range(len(doc["bots"]))],
                                   int(totals.get("games_done", 0)))
        return found, set(match_ids) - set(kept)

    def _game_in_play(self, doc, index) -> bool:
        try:
            self.games.version(match_game_id(doc["id"], index))
        except GameNotFound:
            return False
        return True

    def match_games(self, match_id: str, offset: int, limit: int) -> tuple[list[dict], int]:
        self._load(match_id)
        ids, total = self.store.game_ids(match_id, offset, limit)
        return self.games.summaries(ids)[0], total

    def _load(self, match_id):
        try:
            return self.store.load(match_id)
        except GameMissing:
            raise GameNotFound(f"no match {match_id}") from None
