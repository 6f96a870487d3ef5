"""Tournaments as resources: each pairing a bot match of a few games (app/matches), so the games
are played, counted once and rated as a match's are, and the tournament is what follows from its
matches' results. A tournament moves on when it is read and when the sweep looks at it (a
worker's): whoever finds a round's matches all finished pairs the next one. Pairings are a pure
function of the results, and each match's id is the tournament's, the round's and the table's,
so two processes moving a tournament on at once make the same round once.
"""

import secrets
import time

from ..accounts.ladders import Ladders
from ..engine import rules_from_request
from ..errors import InvalidRequest, TournamentNotFound
from ..games.records import utc_now
from ..matches.service import MatchService
from ..ops.keys import MATCH_POOL
from .pairing import max_swiss_rounds, round_robin, swiss_round
from .standings import Played, crosstable, standings
from .store import TournamentStore

ROUND_ROBIN, SWISS = "round_robin", "swiss"
MAX_ENTRANTS = 64
MAX_GAMES = 2000  # a tournament's games in all, as many as one match may have
LOOKED_AT = 64  # the matches one look at a tournament reads, the first still running first


class TournamentService:
    def __init__(self, store: TournamentStore, matches: MatchService, ladders: Ladders):
        self.store, self.matches, self.ladders = store, matches, ladders

    def create(self, request: dict, tournament_id: str | None = None) -> dict:
        """A new tournament, its first round (every round of a round robin) under way. `tournament_id`,
        when given, is the same for every retry of one request."""
        if tournament_id is not None and self.store.load(tournament_id) is not None:
            return self.view(tournament_id)
        names = request["entrants"]
        if len(names) < 2:
            raise InvalidRequest("entrants: a tournament needs two entrants at least", field="entrants")
        self.matches.check_entrants(names, "entrants")
        rules = rules_from_request(request.get("rules"))
        rules.check_players(2)
        if request["format"] == SWISS:
            rounds = request.get("rounds") or min(max_swiss_rounds(len(names)), 5)
            if rounds > max_swiss_rounds(len(names)):
                raise InvalidRequest(f"rounds: {len(names)} entrants can play {max_swiss_rounds(len(names))} Swiss "
                                     "rounds at most without meeting twice", field="rounds")
            first = swiss_round(list(range(len(names))), set(), set())
            assert first is not None  # a first round pairs anyone
            planned = [first]
        else:
            planned = round_robin(len(names), request.get("cycles", 1))
            rounds = len(planned)
        games = rounds * (len(names) // 2) * request["games_per_pairing"]
        if games > MAX_GAMES:
            raise InvalidRequest(f"games_per_pairing: this tournament would play {games} games; {MAX_GAMES} at most",
                                 field="games_per_pairing")
        doc = {"id": tournament_id or secrets.token_urlsafe(9), "format": request["format"], "entrants": names,
               "rules": rules.to_dict(), "games_per_pairing": request["games_per_pairing"], "rounds_total": rounds,
               "cycles": request.get("cycles", 1) if request["format"] == ROUND_ROBIN else None,
               "seed": request.get("seed"), "dealing": "creator_seed" if request.get("seed") else "server",
               "created_at": utc_now(), "status": "running", "rounds": []}
        for pairings in planned:
            self._start_round(doc, pairings)
        if not self.store.create(doc):  # made by a retry meanwhile
            return self.view(doc["id"])
        return self._public(doc)

    def _start_round(self, doc: dict, pairings: list[tuple[int, int | None]]):
        number, games = len(doc["rounds"]), doc["games_per_pairing"]
        tables: list[dict] = []
        for table, (a, b) in enumerate(pairings):
            if b is None:
                tables.append({"a": a, "b": None, "match_id": None, "result": [games, 0, games]})
                continue
            match_id = f"{doc['id']}-r{number}-t{table}"
            request: dict = {"bots": [doc["entrants"][a], doc["entrants"][b]], "games": games, "rules": doc["rules"]}
            if doc["seed"]:
                request["seed"] = f"{doc['seed']}:{number}:{table}"
            self.matches.create_match(request, client=f"tournament:{doc['id']}", cap=0, match_id=match_id)
            tables.append({"a": a, "b": b, "match_id": match_id, "result": None})
        doc["rounds"].append({"round": number, "pairings": tables})

    def view(self, tournament_id: str) -> dict:
        return self._public(self.advance(tournament_id))

    def advance(self, tournament_id: str) -> dict:
        """Count the matches that finished; when a round is over, pair the next (Swiss) or end."""
        doc = self.store.load(tournament_id)
        if doc is None:
            raise TournamentNotFound(f"no tournament {tournament_id}")
        if doc["status"] == "finished":
            return doc
        changed = False
        pending = [table for round_ in doc["rounds"] for table in round_["pairings"] if table["result"] is None]
        over = self.matches.results([table["match_id"] for table in pending[:LOOKED_AT]])
        for table in pending[:LOOKED_AT]:
            if table["match_id"] in over:
                wins, games = over[table["match_id"]]
                table["result"] = [wins[0], wins[1], games]
                changed = True
        if all(t["result"] is not None for r in doc["rounds"] for t in r["pairings"]):
            if len(doc["rounds"]) < doc["rounds_total"]:
                self._pair_next(doc)
            else:
                doc["status"] = "finished"
                self.store.finished(tournament_id)
            changed = True
        if changed:
            self.store.save(doc)
        return doc

    def _pair_next(self, doc: dict):
        rows = standings(doc["entrants"], played(doc), self._ratings(doc))
        met = {frozenset((t["a"], t["b"])) for r in doc["rounds"] for t in r["pairings"] if t["b"] is not None}
        byes = {t["a"] for r in doc["rounds"] for t in r["pairings"] if t["b"] is None}
        pairings = swiss_round([row["entrant"] for row in rows], met, byes)
        if pairings is None:  # nobody left to meet without a repeat: it ends here
            doc["rounds_total"] = len(doc["rounds"])
            return
        self._start_round(doc, pairings)

    def reconcile(self, older_than_seconds: float, limit: int = 20) -> int:
        """Move on the running tournaments not looked at for `older_than_seconds`, the longest
        unseen first, `limit` of them (each costs a read of its next matches)."""
        found = self.store.running(time.time() - older_than_seconds, limit)
        for tournament_id in found:
            self.store.looked_at(tournament_id)
            try:
                self.advance(tournament_id)
            except TournamentNotFound:  # expired
                self.store.finished(tournament_id)
        return len(found)

    def page(self, offset: int, limit: int) -> tuple[list[dict], int]:
        ids, total = self.store.page(offset, limit)
        return [self._summary(doc) for doc in self.store.load_many(ids)], total

    def _ratings(self, doc: dict) -> dict[str, float]:
        names = sorted(set(doc["entrants"]))
        return {name: record["rating"] for name, record in self.ladders.records(MATCH_POOL, names).items()}

    def _summary(self, doc: dict) -> dict:
        return {key: doc[key] for key in ("id", "format", "status", "entrants", "games_per_pairing", "rounds_total",
                                          "created_at", "dealing")} | {"rounds_played": len(doc["rounds"])}

    def _public(self, doc: dict) -> dict:
        results = played(doc)
        return {**self._summary(doc), "rules": doc["rules"], "cycles": doc["cycles"], "seed": doc["seed"],
                "rated": doc["dealing"] == "server",
                "standings": standings(doc["entrants"], results, self._ratings(doc)),
                "crosstable": crosstable(doc["entrants"], results), "rounds": doc["rounds"]}


def played(doc: dict) -> list[Played]:
    return [Played(t["a"], t["b"], *t["result"]) for r in doc["rounds"] for t in r["pairings"]
            if t["result"] is not None]
