"""Analyses of finished games: asked for once, computed on the workers a few seconds at a time (so
match games and other analyses take turns with it), kept with the game, and never left `running`:
a part whose worker died is queued again when its lease runs out, and goes on where it stopped.

A decision's worlds are drawn from a seed of its own (the game and the decision's index), so a
part weighed again after a worker died is weighed as it would have been.
"""

import logging
import random
import time

from ..bots.review import DEFAULT_BUDGET_MS, review_game, seat_reviews
from ..engine.replay import ReplayDiverged, played_over
from ..errors import AnalysisNotFound, GameNotOver, MatchNotOver
from ..games.records import FINISHED, utc_at
from ..games.service import GameService
from ..games.store import GameMissing
from .store import AnalysisDocument, AnalysisStore

log = logging.getLogger(__name__)

PART_SECONDS = 2.0  # a job's share of an analysis: then it queues the rest behind other work
WORST_SHOWN = 5  # a match's review lists each bot's worst decisions, this many


class GameReviews:
    def __init__(self, store: AnalysisStore, games: GameService, matches, dispatcher,
                 budget_ms: float = DEFAULT_BUDGET_MS, lease_seconds: float = 30.0):
        """`lease_seconds`: a part not written within it is taken to have died with its worker."""
        self.store, self.games, self.matches, self.dispatcher = store, games, matches, dispatcher
        self.budget_ms, self.lease_seconds = budget_ms, lease_seconds

    # ----- asking and reading ----------------------------------------------------------------
    def request(self, game_id: str, admit=lambda: None) -> tuple[AnalysisDocument, bool]:
        """The game's analysis, asked for now unless it was already (a failed one is asked again):
        (it, whether this request made it). `admit()` is called before a new one is made (a quota)."""
        if self.games.load(game_id).doc["status"] != FINISHED:
            raise GameNotOver("a game is analysed once it is over (its hands are public then)")
        found = self.store.load(game_id)
        if found is not None and found["status"] != "failed":
            return found, False
        admit()
        doc: AnalysisDocument = {"game_id": game_id, "status": "pending", "requested_at": time.time(),
                                 "started_at": None, "finished_at": None, "budget_ms": self.budget_ms,
                                 "decisions_total": None, "decisions": [], "seats": None, "error": None}
        stored = self.store.create(doc)
        if stored is doc:
            self.store.lease(game_id, time.time() + self.lease_seconds)
            self.dispatcher.analyse_game(game_id, 0)
        return stored, stored is doc

    def read(self, game_id: str) -> AnalysisDocument:
        self.games.load(game_id)  # 404 for a game that is not there
        found = self.store.load(game_id)
        if found is None:
            raise AnalysisNotFound(f"game {game_id} has not been analysed: POST to ask for it")
        return found

    # ----- on the workers ----------------------------------------------------------------------
    def work(self, game_id: str) -> bool:
        """Weigh the game's next decisions for about PART_SECONDS, write them, and queue the rest:
        whether any is left. A part that finds another worker wrote first stops there."""
        doc = self.store.load(game_id)
        if doc is None or doc["status"] in ("done", "failed"):
            self.store.release(game_id)
            return False
        weighed = len(doc["decisions"])
        self.store.lease(game_id, time.time() + self.lease_seconds)
        try:
            log = self.games.finished_log(game_id)
            total = doc["decisions_total"] = sum(seat is not None for _, seat, _, _ in played_over(*log))
            stop_at = time.monotonic() + PART_SECONDS
            decisions = doc["decisions"]
            for decision in review_game(played_over(*log), log[4], lambda index: random.Random(f"{game_id}:{index}"),
                                        doc["budget_ms"], start=weighed):
                decisions.append(decision.as_dict())
                if time.monotonic() > stop_at:
                    break
        except (GameMissing, ReplayDiverged) as error:
            return self._failed(doc, weighed, "the game expired" if isinstance(error, GameMissing) else
                                f"the game cannot be played over: {error}")
        doc["status"], doc["started_at"] = "running", doc["started_at"] or time.time()
        done = len(doc["decisions"]) >= total
        if done:
            doc["status"], doc["finished_at"] = "done", time.time()
            doc["seats"] = [vars(seat) for seat in seat_reviews(doc["decisions"], self._players(game_id))]
        if not self.store.extend(doc, weighed):
            return False
        if done:
            self.store.release(game_id)
        else:
            self.dispatcher.analyse_game(game_id, len(doc["decisions"]))
        return not done

    def redo_lapsed(self, limit: int = 100) -> int:
        """Queue again each analysis whose part ran out of lease (its worker died): how many."""
        lapsed = self.store.lapsed(limit)
        for game_id in lapsed:
            doc = self.store.load(game_id)
            if doc is None or doc["status"] in ("done", "failed"):
                self.store.release(game_id)
                continue
            self.store.lease(game_id, time.time() + self.lease_seconds)
            self.dispatcher.analyse_game(game_id, len(doc["decisions"]))
        return len(lapsed)

    def _failed(self, doc: AnalysisDocument, weighed: int, why: str) -> bool:
        log.warning("analysis of game %s failed: %s", doc["game_id"], why)
        doc["status"], doc["error"], doc["finished_at"] = "failed", why, time.time()
        self.store.extend(doc, weighed)
        self.store.release(doc["game_id"])
        return False

    def _players(self, game_id: str) -> int:
        return self.games.load(game_id).doc["players"]

    # ----- a match's bots ----------------------------------------------------------------------
    def request_match(self, match_id: str, admit=lambda count: None) -> dict:
        """Every game of a finished match analysed (asked for where it was not), and the review of
        each bot so far."""
        status = self.matches.status(match_id)
        if status["status"] != "finished":
            raise MatchNotOver("a match is analysed once it is over")
        game_ids = self._match_game_ids(match_id)
        missing = [game_id for game_id in game_ids if self.store.load(game_id) is None]
        admit(len(missing))
        for game_id in missing:
            self.request(game_id)
        return self.match_review(match_id)

    def match_review(self, match_id: str) -> dict:
        """Per bot of the match: its decisions weighed so far, mean loss, marks, accuracy and its
        worst decisions (each with its game), over the games analysed."""
        status = self.matches.status(match_id)
        game_ids = self._match_game_ids(match_id)
        analyses = {game_id: self.store.load(game_id) for game_id in game_ids}
        done = {game_id: doc for game_id, doc in analyses.items() if doc and doc["status"] == "done"}
        entrants = status["bots"]
        per_entrant: list[list[tuple[str, dict]]] = [[] for _ in entrants]
        for game_id, doc in done.items():
            place = self.games.load(game_id).doc.get("match")
            seated = place["entrants"] if place else []
            for decision in doc["decisions"]:
                if decision["seat"] < len(seated):
                    per_entrant[seated[decision["seat"]]].append((game_id, decision))
        bots = []
        for entrant, bot in enumerate(entrants):
            decisions = [decision for _, decision in per_entrant[entrant]]
            review, = seat_reviews([{**d, "seat": 0} for d in decisions], 1)
            worst = sorted(per_entrant[entrant], key=lambda pair: -pair[1]["loss"])[:WORST_SHOWN]
            bots.append({"entrant": entrant, "bot": bot, **{k: v for k, v in vars(review).items() if k != "seat"},
                         "worst": [{"game_id": game_id, "index": d["index"], "loss": d["loss"], "mark": d["mark"],
                                    "chosen": d["chosen"], "best": d["best"]} for game_id, d in worst]})
        states = [doc["status"] if doc else "not_asked" for doc in analyses.values()]
        return {"match_id": match_id, "games": len(game_ids), "games_analysed": len(done),
                "games_pending": sum(state in ("pending", "running") for state in states),
                "games_failed": states.count("failed"), "bots": bots}

    def _match_game_ids(self, match_id: str) -> list[str]:
        games, offset = [], 0
        while True:
            page, total = self.matches.match_games(match_id, offset, 500)
            games += [game["id"] for game in page]
            offset += 500
            if offset >= total:
                return games


def analysis_view(doc: AnalysisDocument) -> dict:
    """An analysis as the API answers it: its decisions and seats once it is done."""
    done = doc["status"] == "done"
    return {"game_id": doc["game_id"], "status": doc["status"], "requested_at": utc_at(doc["requested_at"]),
            "started_at": utc_at(doc["started_at"]) if doc["started_at"] else None,
            "finished_at": utc_at(doc["finished_at"]) if doc["finished_at"] else None,
            "budget_ms": doc["budget_ms"], "error": doc["error"],
            "progress": {"decisions_done": len(doc["decisions"]), "decisions_total": doc["decisions_total"]},
            "decisions": doc["decisions"] if done else None, "seats": doc["seats"] if done else None}
