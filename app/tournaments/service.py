"""Tournaments as resources: round robin, Swiss and arena, of bots and of people.

A table is two, three or four entrants (`players_per_table`). A table of bots is a bot match of
a few games (app/matches), so its games are played, counted once and rated as a match's are. A
table with a person at it is a few games between people (app/games) played one after another,
seats rotating, each with the tournament's turn timer: absence forfeits as in any game between
people, and a seat that never moves loses (Lichess's rule in tournaments) rather than aborting.
The tournament is what follows from those results.

A tournament moves on when it is read and when a worker's sweep looks at it. Each change is made
from the document as read and saved only over the revision it was made from (app/tournaments/
store.py), with its events; the matches and games of new pairings are created after the save, by
the process that saved (their ids are the tournament's, the round's and the table's, so creating
one again finds it). A look that finds one missing (its creator died first) creates it.
"""

import json
import logging
import secrets
import time
from collections.abc import Callable, Iterator

from ..accounts.ladders import Ladders
from ..engine import rules_from_request
from ..errors import InvalidRequest, TournamentNotFound
from ..games.records import utc_now
from ..games.seating import Seating
from ..games.seats import outside_bot_id
from ..games.service import GameService
from ..matches.service import MatchService
from ..ops.scope import in_app
from ..players.service import PlayerService
from .document import TournamentDocument
from .entries import SAVE_TRIES, Entries
from .export import game_ids, trf
from .pairing import DUTCH_FIELD, always_pairable_rounds
from .rounds import (ARENA, CANCELLED, FINISHED, GAMES, MAX_ENTRANTS, MOST_ENTRANTS, OPEN, PERSON, ROUND_ROBIN,
                     RUNNING, STREAKS, SWISS, Rounds, person_of)
from .store import TournamentStore
from .tables import Tables
from .telling import Telling
from .views import TournamentViews

__all__ = ["ARENA", "CANCELLED", "DUTCH_FIELD", "FINISHED", "MAX_ENTRANTS", "MOST_ENTRANTS", "OPEN", "PERSON",
           "ROUND_ROBIN", "RUNNING", "SWISS", "TournamentService", "person_of"]
log = logging.getLogger(__name__)
FILTERED_DEPTH = 1000  # a filtered listing reads this many newest tournaments at most


class TournamentService:
    def __init__(self, store: TournamentStore, matches: MatchService, games: GameService, seating: Seating,
                 players: PlayerService, ladders: Ladders, min_turn_seconds: int,
                 clock: Callable[[], float] = time.time):
        """`min_turn_seconds`: the shortest turn timer people's games may have."""
        self.store, self.matches, self.games, self.clock = store, matches, games, clock
        self.min_turn_seconds = min_turn_seconds
        self.views = TournamentViews(ladders)
        self.rounds = Rounds(matches, games, self.views.standings)
        self.tables = Tables(matches, games, seating)
        self.telling = Telling(store, players, self.views.standings)
        self.entries = Entries(store, players, seating, self.rounds, self.views, self.telling, clock)
        self.enter, self.withdraw, self.cancel = self.entries.enter, self.entries.withdraw, self.entries.cancel
        self.erase_person = self.entries.erase_person

    def create(self, request: dict, app_id: str, tournament_id: str | None = None, owner: str | None = None) -> dict:
        """A new tournament: open to people until `starts_in_seconds`, or under way at once. A
        `tournament_id` is the same for every retry of one request. `owner` (player:<id>, or
        app:<id> for the app's server) may cancel it."""
        tournament_id = in_app(app_id, tournament_id or secrets.token_urlsafe(9))
        if self.store.load(tournament_id) is not None:
            return self.view(tournament_id)
        names, opens = request["entrants"], request.get("starts_in_seconds") is not None
        size = request["players_per_table"]
        if len(names) < size and not opens:
            raise InvalidRequest(f"entrants: tables of {size} need {size} entrants at least (or `starts_in_seconds`, "
                                 "for people to enter until then)", field="entrants")
        if any(person_of(name) for name in names):
            raise InvalidRequest("entrants: people enter with their own player token "
                                 "(POST /tournaments/{id}/entrants)", field="entrants")
        registered = [name for name in names if outside_bot_id(name)]
        if len(set(registered)) < len(registered):
            raise InvalidRequest("entrants: a registered bot enters once (it plays its own seat of every game)",
                                 field="entrants")
        self.matches.check_entrants(names, "entrants")
        rules = rules_from_request(request.get("rules"))
        rules.check_players(size)
        fmt, rounds = request["format"], request.get("rounds")
        if fmt == ROUND_ROBIN and size != 2:
            raise InvalidRequest("players_per_table: a round robin meets in pairs (Swiss and arena seat 3 or 4)",
                                 field="players_per_table")
        if request["turn_seconds"] < self.min_turn_seconds:
            raise InvalidRequest(f"turn_seconds: at least {self.min_turn_seconds}", field="turn_seconds")
        if fmt == ARENA and not request.get("duration_seconds"):
            raise InvalidRequest("duration_seconds: an arena runs for a set time", field="duration_seconds")
        scoring = request.get("scoring") or GAMES
        if scoring == STREAKS and (fmt != ARENA or request["games_per_pairing"] != 1):
            raise InvalidRequest("scoring: streaks score an arena's games one a table (`games_per_pairing`: 1)",
                                 field="scoring")
        most = request.get("max_entrants") or MAX_ENTRANTS
        if fmt == SWISS and size == 2 and max(most, len(names)) > DUTCH_FIELD:
            raise InvalidRequest(f"max_entrants: a Swiss at tables of two takes {DUTCH_FIELD} entrants at most "
                                 "(its Dutch pairings cost about the cube of the field)", field="max_entrants")
        if fmt == SWISS and size == 2 and rounds and not opens and rounds > always_pairable_rounds(len(names)):
            raise InvalidRequest(f"rounds: {len(names)} entrants play {always_pairable_rounds(len(names))} Swiss "
                                 "rounds at most (every round pairable, nobody meeting twice, whatever the results)",
                                 field="rounds")
        now = self.clock()
        shown = [self.matches.accounts.name_of(bot_id) if (bot_id := outside_bot_id(name)) else name
                 for name in names]
        doc: TournamentDocument = {"id": tournament_id, "format": fmt, "entrants": list(names), "names": shown,
               "rules": rules.to_dict(), "games_per_pairing": request["games_per_pairing"], "players_per_table": size,
               "teams": size == 4 and rules.teams,
               "rounds_requested": rounds, "rounds_total": None,
               "cycles": request["cycles"] if fmt == ROUND_ROBIN else None,
               "duration_seconds": request.get("duration_seconds") if fmt == ARENA else None,
               "turn_seconds": request["turn_seconds"], "seed": request.get("seed"),
               "dealing": "creator_seed" if request.get("seed") else "server", "created_at": utc_now(),
               "starts_at": now + request["starts_in_seconds"] if opens else now, "ends_at": None,
               "status": OPEN, "rounds": [], "revision": 0, "owner": owner, "away": [],
               "max_entrants": most, "scoring": scoring}
        if len(names) >= size:
            self.rounds.check_games(doc, len(names), "entrants")
        new = [] if opens else self.rounds.start(doc, now)
        if not self.store.create(doc, self.views.events(doc, new), self.telling.owed_by(doc, OPEN, new)):
            return self.view(tournament_id)  # made by a retry meanwhile
        self.tables.open(doc, new)
        self.telling.tell_owed(tournament_id)
        return self.views.public(doc)

    def view(self, tournament_id: str) -> dict:
        return self.views.public(self.advance(tournament_id))

    def advance(self, tournament_id: str) -> TournamentDocument:
        """Count what finished; start an open tournament whose time came; pair what is due; end it
        when all is played (see the module)."""
        for _ in range(SAVE_TRIES):
            doc = self._load(tournament_id)
            if doc["status"] in (FINISHED, CANCELLED):
                return doc
            now, was = self.clock(), doc["status"]
            missing: list[tuple[int, int]] = []
            if doc["status"] == OPEN:
                if now < doc["starts_at"]:
                    return doc
                new = self.rounds.start(doc, now)
            else:
                counted, new, missing = self.rounds.count(doc)
                paired = self.rounds.pair(doc, now)
                ended = self.rounds.finish_if_done(doc, now)  # not short-circuited: the last result ends it at once
                if not (counted or paired or new or ended):
                    self.tables.open(doc, missing)
                    self.telling.tell_owed(tournament_id)
                    return doc
                new += paired
            if self.store.save(doc, self.views.events(doc, new), self.telling.owed_by(doc, was, new)):
                if doc["status"] in (FINISHED, CANCELLED):
                    self.store.finished(tournament_id)
                self.tables.open(doc, new + missing)
                self.telling.tell_owed(tournament_id)
                return doc
        return self._load(tournament_id)

    def events_after(self, tournament_id: str, after: str | None) -> tuple[str, Callable[[str], list[dict]]]:
        """Where a stream of its changes starts (after `after`; None: its last change), and how it reads on."""
        self._load(tournament_id)
        start = after or self.store.before_last_event(tournament_id)
        return start, lambda cursor: [{"id": entry_id, **event} for entry_id, event in
                                      self.store.events_after(tournament_id, cursor)]

    def reconcile(self, older_than_seconds: float, limit: int = 20) -> int:
        """Move on the running tournaments not looked at for `older_than_seconds`, the longest
        unseen first, `limit` of them (each costs a read of its next matches). An open tournament
        is due only at its start, so however many wait to start, the running ones are the pass's.
        One that fails is logged and left for the next pass; the others still move."""
        found = self.store.running(self.clock() - older_than_seconds, limit)
        for tournament_id in found:
            self.store.looked_at(tournament_id, self.clock())
            try:
                doc = self.advance(tournament_id)
            except TournamentNotFound:  # expired
                self.store.finished(tournament_id)
                continue
            except Exception:
                log.exception("tournament %s could not move on; the sweep goes on with the others", tournament_id)
                continue
            if doc["status"] == OPEN:
                self.store.looked_at(tournament_id, doc["starts_at"])
        return len(found)

    def page(self, app_id: str, offset: int, limit: int, status: str | None = None,
             fmt: str | None = None) -> tuple[list[dict], int]:
        """A page of the app's tournaments, newest first; with a `status` or a format, of those
        among its newest FILTERED_DEPTH (a listing's cost stays bounded)."""
        if status is None and fmt is None:
            ids, total = self.store.page(app_id, offset, limit)
            return [self.views.summary(doc) for doc in self.store.load_many(ids)], total
        ids, _ = self.store.page(app_id, 0, FILTERED_DEPTH)
        kept = [doc for doc in self.store.load_many(ids)
                if status in (None, doc["status"]) and fmt in (None, doc["format"])]
        return [self.views.summary(doc) for doc in kept[offset:offset + limit]], len(kept)

    # ----- moving on ----------------------------------------------------------------------

    def _load(self, tournament_id: str) -> TournamentDocument:
        doc = self.store.load(tournament_id)
        if doc is None:
            raise TournamentNotFound(f"no tournament {tournament_id}")
        return doc

    def export(self, tournament_id: str, kind: str) -> Iterator[str]:
        """The tournament written out: `trf` (TRF-16, a Swiss or round robin at tables of two) or
        `jsonl` (a line a game: its round, table, seats and events)."""
        doc = self._load(tournament_id)
        if kind == "trf":
            if doc["format"] == ARENA or doc["players_per_table"] != 2:
                raise InvalidRequest("format: TRF-16 reports a Swiss or a round robin at tables of two",
                                     field="format")
            return iter([trf(doc, self.views.ratings(doc))])
        return (json.dumps({"round": number, "table": k, "game_id": game_id,
                            "events": self.games.store.events(game_id, 0, 100_000)}) + "\n"
                for number, k, game_id in game_ids(doc, self._match_game_ids))

    def _match_game_ids(self, match_id: str) -> list[str]:
        return [game["id"] for game in self.matches.match_games(match_id, 0, 10_000)[0]]
