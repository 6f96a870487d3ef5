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

import itertools
import logging
import secrets
import time
from collections import Counter
from collections.abc import Callable

from ..accounts.ladders import Ladders, pool_of
from ..engine import rules_from_request
from ..errors import (InvalidRequest, NotEntered, NotTheOwner, TournamentClosed, TournamentFull,
                      TournamentNotFound)
from ..games.records import FINISHED as GAME_FINISHED
from ..games.records import utc_at, utc_now
from ..games.seating import Seating
from ..games.seats import outside_bot_id
from ..games.service import GameService
from ..matches.service import MatchService
from ..ops.keys import MATCH_POOL
from ..ops.scope import app_of, in_app
from ..players.service import PlayerService
from .pairing import Table, always_pairable_rounds, round_robin, swiss_round
from .standings import Played, crosstable, standings
from .document import TableDocument, TournamentDocument
from .store import TournamentStore

ROUND_ROBIN, SWISS, ARENA = "round_robin", "swiss", "arena"
OPEN, RUNNING, FINISHED, CANCELLED = "open", "running", "finished", "cancelled"
log = logging.getLogger(__name__)
PERSON = "player:"  # an entrant who is a person: player:<player id>
MAX_ENTRANTS = 64  # unless the creator sets `max_entrants` (up to MOST_ENTRANTS)
MOST_ENTRANTS = 256
FILTERED_DEPTH = 1000  # a filtered listing reads this many newest tournaments at most
MAX_GAMES = 2000  # a tournament's games in all, as many as one match may have
LOOKED_AT = 64  # the matches one look at a tournament reads, the first still running first
SAVE_TRIES = 5  # then another process is moving it on


def person_of(entrant: str) -> str | None:
    return entrant[len(PERSON):] if entrant.startswith(PERSON) else None


class TournamentService:
    def __init__(self, store: TournamentStore, matches: MatchService, games: GameService, seating: Seating,
                 players: PlayerService, ladders: Ladders, min_turn_seconds: int,
                 clock: Callable[[], float] = time.time):
        """`min_turn_seconds`: the shortest turn timer people's games may have."""
        self.store, self.matches, self.games, self.seating = store, matches, games, seating
        self.players, self.ladders, self.clock = players, ladders, clock
        self.min_turn_seconds = min_turn_seconds

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
               "max_entrants": request.get("max_entrants") or MAX_ENTRANTS}
        if len(names) >= size:
            self._check_games(doc, len(names), "entrants")
        new = [] if opens else self._start(doc, now)
        if not self.store.create(doc, self._events(doc, new)):  # made by a retry meanwhile
            return self.view(tournament_id)
        self._open_tables(doc, new)
        return self._public(doc)

    def enter(self, tournament_id: str, player_id: str) -> dict:
        """The player enters the open tournament (once: entering again changes nothing)."""
        for _ in range(SAVE_TRIES):
            doc = self._load(tournament_id)
            entrant = PERSON + player_id
            if entrant in doc["entrants"]:
                index = doc["entrants"].index(entrant)
                if index not in doc.get("away", []) or not self._takes_entries(doc):
                    return self._public(doc)
                doc["away"].remove(index)  # back from a pause or a withdrawal: paired again from now
                if self.store.save(doc, self._events(doc, [])):
                    return self._public(doc)
                continue
            if not self._takes_entries(doc):
                raise TournamentClosed(f"tournament {tournament_id} is {doc['status']} and takes no more entries "
                                       "(an arena takes them until its end, a Swiss until half its rounds)")
            if any(outside_bot_id(name) for name in doc["entrants"]):
                raise InvalidRequest("this tournament is of registered bots, which play matches of their own: "
                                     "people enter tournaments of built-in bots and people")
            most = doc.get("max_entrants", MAX_ENTRANTS)
            if len(doc["entrants"]) >= most:
                raise TournamentFull(f"tournament {tournament_id} has its {most} entrants")
            try:
                self._check_games(doc, len(doc["entrants"]) + 1, "entrants")
            except InvalidRequest as too_many:
                raise TournamentFull(str(too_many)) from None
            doc["entrants"].append(entrant)
            doc["names"].append(self.players.name_of(player_id))
            self.players.store.entered_tournament(player_id, tournament_id)  # before: an erasure finds it
            if self.store.save(doc, self._events(doc, [])):
                return self._public(doc)
        raise TournamentClosed("the tournament is changing under many entries at once: try again")

    def erase_person(self, tournament_id: str, player_id: str, label: str) -> bool:
        """A person erased leaves an open tournament, and is `label` in one under way or over (their
        results stay: they are their opponents' too); the tournament's past events that named them
        are dropped, its standings sent again. False if they are not in it."""
        entrant = PERSON + player_id
        for _ in range(SAVE_TRIES):
            doc = self.store.load(tournament_id)
            if doc is None or entrant not in doc["entrants"]:
                return False
            index = doc["entrants"].index(entrant)
            name = doc["names"][index]
            if doc["status"] == OPEN:
                del doc["entrants"][index], doc["names"][index]
            else:
                doc["names"][index] = label
            if self.store.save(doc, self._events(doc, [])):
                self.store.drop_events_naming(tournament_id, name)
                return True
        raise TournamentClosed("the tournament is changing under many writes at once: try again")

    def withdraw(self, tournament_id: str, player_id: str) -> dict:
        """The player leaves the tournament: an open one's entry is taken back; in one under way they
        are paired no more (their game in play is resigned, a round robin's later pairings are their
        opponents' byes) and keep their results; entering again brings them back while it takes
        entries. Withdrawing again changes nothing."""
        entrant = PERSON + player_id
        for _ in range(SAVE_TRIES):
            doc = self._load(tournament_id)
            if entrant not in doc["entrants"]:
                raise NotEntered(f"you have not entered tournament {tournament_id}")
            index = doc["entrants"].index(entrant)
            if doc["status"] in (FINISHED, CANCELLED):
                raise TournamentClosed(f"tournament {tournament_id} is {doc['status']}")
            if doc["status"] == OPEN:
                del doc["entrants"][index], doc["names"][index]
            elif index in doc.setdefault("away", []):
                return self._public(doc)
            else:
                doc["away"].append(index)
            if self.store.save(doc, self._events(doc, [])):
                for game_id in self._games_in_play(doc, index):
                    self.seating.resign_player(game_id, player_id)
                return self._public(doc)
        raise TournamentClosed("the tournament is changing under many writes at once: try again")

    def cancel(self, tournament_id: str, by: str) -> dict:
        """The owner calls the tournament off, before or during it: no more pairings, and its
        people's games in play end unrated (aborted). Cancelling again changes nothing."""
        for _ in range(SAVE_TRIES):
            doc = self._load(tournament_id)
            if not doc.get("owner") or doc["owner"] != by:
                raise NotTheOwner("only the tournament's owner (the player or the app's server that made it) "
                                  "may cancel it")
            if doc["status"] == CANCELLED:
                return self._public(doc)
            if doc["status"] == FINISHED:
                raise TournamentClosed(f"tournament {tournament_id} is over")
            in_play = [game_id for index in range(len(doc["entrants"])) for game_id in self._games_in_play(doc, index)]
            doc["status"] = CANCELLED
            if self.store.save(doc, self._events(doc, [])):
                self.store.finished(tournament_id)
                self._tell_people(doc, RUNNING)
                for game_id in dict.fromkeys(in_play):
                    self.seating.call_off(game_id)
                return self._public(doc)
        raise TournamentClosed("the tournament is changing under many writes at once: try again")

    def _tell_people(self, doc: TournamentDocument, was: str):
        """Its people told it began, or ended: by the process whose save changed its status, once."""
        if doc["status"] == was:
            return
        people = [(index, player_id) for index, entrant in enumerate(doc["entrants"])
                  if (player_id := person_of(entrant)) is not None]
        if doc["status"] == RUNNING:
            for _, player_id in people:
                self.players.notify(player_id, {"type": "tournament_started", "tournament_id": doc["id"],
                                                "entrants": len(doc["entrants"])})
        elif doc["status"] in (FINISHED, CANCELLED):
            rows = {row["entrant"]: row for row in standings(doc["names"], played(doc), self._ratings(doc))}
            for index, player_id in people:
                self.players.notify(player_id, {
                    "type": "tournament_over", "tournament_id": doc["id"], "status": doc["status"],
                    "rank": rows[index]["rank"] if doc["status"] == FINISHED else None,
                    "points": rows[index]["points"]})

    def _takes_entries(self, doc: TournamentDocument) -> bool:
        """Open; or an arena before its end; or a Swiss before half its rounds."""
        if doc["status"] == OPEN:
            return True
        if doc["status"] != RUNNING:
            return False
        if doc["format"] == ARENA:
            return self.clock() < _ends_at(doc)
        return doc["format"] == SWISS and len(doc["rounds"]) * 2 < _rounds_total(doc)

    @staticmethod
    def _games_in_play(doc: TournamentDocument, index: int) -> list[str]:
        """The entrant's people's game in play at each table of theirs not over."""
        return [table["games"][-1] for number in doc["rounds"] for table in number["pairings"]
                if table["result"] is None and table["games"] and index in table["seats"]]

    def view(self, tournament_id: str) -> dict:
        return self._public(self.advance(tournament_id))

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
                new = self._start(doc, now)
            else:
                counted, new, missing = self._count(doc)
                paired = self._pair(doc, now)
                ended = self._finish_if_done(doc, now)  # not short-circuited: the last result ends it at once
                if not (counted or paired or new or ended):
                    self._open_tables(doc, missing)
                    return doc
                new += paired
            if self.store.save(doc, self._events(doc, new)):
                if doc["status"] in (FINISHED, CANCELLED):
                    self.store.finished(tournament_id)
                self._tell_people(doc, was)
                self._open_tables(doc, new + missing)
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
            return [self._summary(doc) for doc in self.store.load_many(ids)], total
        ids, _ = self.store.page(app_id, 0, FILTERED_DEPTH)
        kept = [doc for doc in self.store.load_many(ids)
                if status in (None, doc["status"]) and fmt in (None, doc["format"])]
        return [self._summary(doc) for doc in kept[offset:offset + limit]], len(kept)

    # ----- moving on ----------------------------------------------------------------------

    def _load(self, tournament_id: str) -> TournamentDocument:
        doc = self.store.load(tournament_id)
        if doc is None:
            raise TournamentNotFound(f"no tournament {tournament_id}")
        return doc

    def _start(self, doc: TournamentDocument, now: float) -> list[tuple[int, int]]:
        entrants = len(doc["entrants"])
        if entrants < doc["players_per_table"]:
            doc["status"] = CANCELLED
            return []
        doc["status"], doc["started_at"] = RUNNING, utc_now()
        if doc["format"] == SWISS:
            doc["rounds_total"] = min(doc["rounds_requested"] or 5, _most_rounds(doc, entrants))
        elif doc["format"] == ROUND_ROBIN:
            doc["rounds_total"] = len(round_robin(entrants, doc["cycles"] or 1))
        else:
            doc["ends_at"] = now + (doc["duration_seconds"] or 0)
        return self._pair(doc, now)

    def _check_games(self, doc: TournamentDocument, entrants: int, field: str):
        if doc["format"] == ARENA:
            return  # an arena stops pairing at MAX_GAMES
        rounds = (doc["rounds_requested"] or 5) if doc["format"] == SWISS else \
            len(round_robin(entrants, doc["cycles"] or 1))
        games = min(rounds, _most_rounds(doc, entrants)) * (entrants // doc["players_per_table"]) * \
            doc["games_per_pairing"]
        if games > MAX_GAMES:
            raise InvalidRequest(f"{field}: this tournament would play {games} games; {MAX_GAMES} at most",
                                 field=field)

    def _count(self, doc: TournamentDocument) -> tuple[bool, list[tuple[int, int]], list[tuple[int, int]]]:
        """Record the results that came in: (whether any did, the next games of people's pairings to
        create, the pairings whose match or game is missing)."""
        pending = [(r["round"], k, t) for r in doc["rounds"] for k, t in enumerate(r["pairings"])
                   if t["result"] is None]
        counted, new, missing = False, [], []
        bots = [entry for entry in pending if entry[2]["match_id"]][:LOOKED_AT]
        over, unknown = self.matches.results([t["match_id"] for _, _, t in bots if t["match_id"]])
        for number, k, table in bots:
            if table["match_id"] in over:
                wins, games = over[table["match_id"]]
                table["result"] = {"wins": wins, "games": games}
                counted = True
            elif table["match_id"] in unknown:
                missing.append((number, k))
        people = [entry for entry in pending if entry[2]["games"]]
        found, _ = self.games.summaries([_games_of(t)[-1] for _, _, t in people])
        by_id = {game["id"]: game for game in found}
        for number, k, table in people:
            game = by_id.get(_games_of(table)[-1])
            if game is None:
                missing.append((number, k))
            elif game["status"] == GAME_FINISHED:
                self._count_game(doc, table, game)
                counted = True
                if table["result"] is None:
                    new.append((number, k))
        return counted, new, missing

    def _count_game(self, doc: TournamentDocument, table: TableDocument, game: dict):
        """A game of a table with people is over: a game won to each entrant of the winning camp;
        then the next game, or the table's result."""
        order = _seated(table, len(_games_of(table)) - 1)
        outcome = game.get("outcome") or {}
        missed = outcome.get("reason") in ("forfeit", "aborted") and outcome.get("seat") is not None
        if doc["format"] == ARENA and missed:
            absent = order[outcome["seat"]]  # away from the board: paused until they enter again (Lichess)
            if person_of(doc["entrants"][absent]) and absent not in doc.setdefault("away", []):
                doc["away"].append(absent)
        for seat, entrant in enumerate(order):
            camp = seat % 2 if doc["teams"] else seat
            if game["winner"] is not None and camp == game["winner"]:
                table["wins"][table["seats"].index(entrant)] += 1
        played = len(_games_of(table))
        if played < doc["games_per_pairing"]:
            _games_of(table).append(f"{_games_of(table)[0][:-1]}{played}")
        else:
            table["result"] = {"wins": table["wins"], "games": played}

    def _pair(self, doc: TournamentDocument, now: float) -> list[tuple[int, int]]:
        """The pairings due now, added as rounds: their (round, table)s."""
        pending = [t for r in doc["rounds"] for t in r["pairings"] if t["result"] is None]
        new: list[tuple[int, int]] = []
        if doc["format"] == ARENA:
            if now < _ends_at(doc) and _games_planned(doc) + doc["games_per_pairing"] <= MAX_GAMES:
                free = arena_tables(doc, pending)
                if free:
                    new += self._add_round(doc, free)
            return new
        all_at_once = doc["format"] == ROUND_ROBIN and not self._has_people(doc)  # a round robin of bots
        if pending and not all_at_once:
            return new  # a round at a time
        if doc["format"] == ROUND_ROBIN:
            planned = round_robin(len(doc["entrants"]), doc["cycles"] or 1)
            away = set(doc.get("away", []))
            for tables in planned[len(doc["rounds"]):None if all_at_once else len(doc["rounds"]) + 1]:
                # A table with an entrant away is the other's bye; one with both away is not played.
                kept = [tuple(e for e in table if e not in away) for table in tables]
                new += self._add_round(doc, [table for table in kept if table])
        elif len(doc["rounds"]) < _rounds_total(doc):
            paired = self._swiss_tables(doc)
            if paired is None:  # a tournament made before its rounds were bounded: it ends here
                doc["rounds_total"] = len(doc["rounds"])
            else:
                new += self._add_round(doc, paired)
        return new

    def _finish_if_done(self, doc: TournamentDocument, now: float) -> bool:
        """Whether it ended now: all played, and no round (or, an arena, no time) left."""
        if any(t["result"] is None for r in doc["rounds"] for t in r["pairings"]):
            return False
        if doc["format"] == ARENA:
            done = now >= _ends_at(doc) or _games_planned(doc) + doc["games_per_pairing"] > MAX_GAMES
        else:
            done = len(doc["rounds"]) >= _rounds_total(doc)
        if done:
            doc["status"], doc["finished_at"] = FINISHED, utc_now()
        return done

    def _swiss_tables(self, doc: TournamentDocument) -> list[Table] | None:
        rows = standings(doc["entrants"], played(doc), self._ratings(doc))
        met = {frozenset(pair) for r in doc["rounds"] for t in r["pairings"]
               for pair in itertools.combinations(t["seats"], 2)}
        byes = {t["seats"][0] for r in doc["rounds"] for t in r["pairings"] if len(t["seats"]) == 1}
        away = set(doc.get("away", []))
        return swiss_round([row["entrant"] for row in rows if row["entrant"] not in away], met, byes,
                           doc["players_per_table"],
                           rounds_after=_rounds_total(doc) - len(doc["rounds"]) - 1)

    def _add_round(self, doc: TournamentDocument, seated: list[Table]) -> list[tuple[int, int]]:
        number, games = len(doc["rounds"]), doc["games_per_pairing"]
        tables: list[TableDocument] = []
        firsts = _first_seats(doc)
        for k, paired in enumerate(seated):
            # The first seat as chess balances colours: who has had it less often takes it.
            seats = paired[::-1] if len(paired) == 2 and firsts[paired[1]] < firsts[paired[0]] else paired
            at = f"{doc['id']}-r{number}-t{k}"
            if len(seats) == 1:
                tables.append({"seats": list(seats), "match_id": None, "games": None,
                               "result": {"wins": [games], "games": games}})
            elif any(person_of(doc["entrants"][e]) for e in seats):
                tables.append({"seats": list(seats), "match_id": None, "games": [f"{at}-g0"],
                               "wins": [0] * len(seats), "result": None})
            else:
                tables.append({"seats": list(seats), "match_id": at, "games": None, "result": None})
        doc["rounds"].append({"round": number, "pairings": tables})
        return [(number, k) for k, table in enumerate(tables) if len(table["seats"]) > 1]

    def _open_tables(self, doc: TournamentDocument, at: list[tuple[int, int]]):
        """Create the matches and games of these pairings (each once, whoever comes first)."""
        for number, k in at:
            table = doc["rounds"][number]["pairings"][k]
            if table["match_id"]:
                self._open_match(doc, number, k, table)
            else:
                self._open_game(doc, number, table)

    def _open_match(self, doc: TournamentDocument, number: int, k: int, table: TableDocument):
        request: dict = {"bots": [doc["entrants"][e] for e in table["seats"]],
                         "games": doc["games_per_pairing"], "rules": doc["rules"]}
        if doc["seed"]:
            request["seed"] = f"{doc['seed']}:{number}:{k}"
        self.matches.create_match(request, client=f"tournament:{doc['id']}", cap=0, match_id=table["match_id"])

    def _open_game(self, doc: TournamentDocument, number: int, table: TableDocument):
        """The pairing's next game between its people (and a built-in bot, if one is in it); each
        person told `tournament_round` once."""
        game_id, index = _games_of(table)[-1], len(_games_of(table)) - 1
        if self.games.find(game_id) is not None:
            return
        order = _seated(table, index)
        seats, owners = [], {}
        for seat, entrant in enumerate(doc["entrants"][e] for e in order):
            if (player_id := person_of(entrant)) is not None:
                seats.append({"type": "human"})
                owners[seat] = player_id
            else:
                seats.append({"type": "bot", "bot": entrant, "name": f"{entrant} bot"})
        preset = {"preset": doc["rules"]["preset"]}
        as_preset = rules_from_request(preset).to_dict() == doc["rules"]  # a rated game plays its pool's rules
        request: dict = {"players": len(order), "rules": preset if as_preset else doc["rules"], "seats": seats,
                   "turn_timeout_seconds": doc["turn_seconds"],
                   "rated": as_preset and doc["dealing"] == "server" and len(owners) == len(order)}
        if doc["seed"]:
            request["seed"] = f"{doc['seed']}:{game_id}"

        def tell_players(_):
            for seat, player_id in owners.items():
                others = ", ".join(doc["names"][e] for e in order if e != order[seat])
                self.players.notify(player_id, {"type": "tournament_round", "tournament_id": doc["id"],
                                                "round": number, "game": index, "game_id": game_id, "seat": seat,
                                                "opponent": others})
        self.seating.create_owned(request, owners, game_id, extra={"tournament": doc["id"]}, on_created=tell_players)

    def _has_people(self, doc: TournamentDocument) -> bool:
        return any(person_of(entrant) for entrant in doc["entrants"])

    # ----- reading ------------------------------------------------------------------------

    def _ratings(self, doc: TournamentDocument) -> list[float]:
        """Each entrant's rating, in entry order: a bot's on the match ladder, a person's in the pool
        of the preset."""
        bots = sorted({e for e in doc["entrants"] if not person_of(e)})
        people = sorted({player_id for e in doc["entrants"] if (player_id := person_of(e)) is not None})
        found = {name: record["rating"] for name, record in self.ladders.records(MATCH_POOL, bots).items()}
        if people:
            pool = in_app(app_of(doc["id"]), pool_of(doc["rules"]["preset"], doc["players_per_table"]))
            records = self.ladders.records(pool, people)
            found.update({PERSON + player_id: record["rating"] for player_id, record in records.items()})
        return [found[entrant] for entrant in doc["entrants"]]

    def _events(self, doc: TournamentDocument, new: list[tuple[int, int]]) -> list[dict]:
        """The events of a change: each round it added, then the standings as they now stand."""
        rounds = sorted({number for number, _ in new})
        events = [{"type": "round", "round": number, "pairings": doc["rounds"][number]["pairings"]}
                  for number in rounds]
        return [*events, {"type": "standings", "revision": doc["revision"] + 1, "status": doc["status"],
                          "rounds_played": len(doc["rounds"]),
                          "standings": standings(doc["names"], played(doc), self._ratings(doc))}]

    def _summary(self, doc: TournamentDocument) -> dict:
        return {key: doc[key] for key in ("id", "format", "status", "names", "games_per_pairing", "rounds_total",
                                          "created_at", "dealing", "turn_seconds", "duration_seconds",
                                          "players_per_table", "teams")} | {
            "entrants": doc["entrants"], "rounds_played": len(doc["rounds"]), "away": doc.get("away", []),
            "max_entrants": doc.get("max_entrants", MAX_ENTRANTS),
            "starts_at": utc_at(doc["starts_at"]), "ends_at": utc_at(doc["ends_at"]) if doc["ends_at"] else None}

    def _public(self, doc: TournamentDocument) -> dict:
        results = played(doc)
        return {**self._summary(doc), "rules": doc["rules"], "cycles": doc["cycles"], "seed": doc["seed"],
                "rated": doc["dealing"] == "server", "revision": doc["revision"],
                "standings": standings(doc["names"], results, self._ratings(doc)),
                "crosstable": crosstable(doc["names"], results), "rounds": doc["rounds"]}


def arena_tables(doc: TournamentDocument, pending: list[TableDocument]) -> list[Table]:
    """Whoever is free, by points then entry order, in tables from the top: each the best-ranked
    free entrant, then the next free who did not sit at its last table (anyone, when nobody else
    plays: those left alone meet again)."""
    busy = {e for t in pending for e in t["seats"]}
    away = set(doc.get("away", []))  # withdrawn, or paused after a missed game
    points = [0] * len(doc["entrants"])
    last: dict[int, set[int]] = {}
    for result in played(doc):
        for position, entrant in enumerate(result.seats):
            points[entrant] += result.wins[position]
            if len(result.seats) > 1:
                last[entrant] = set(result.seats) - {entrant}
    free = sorted((e for e in range(len(doc["entrants"])) if e not in busy | away), key=lambda e: (-points[e], e))
    size, tables = doc["players_per_table"], list[Table]()
    while len(free) >= size:
        seated = [free.pop(0)]
        while len(seated) < size:
            other = next((e for e in free if e not in last.get(seated[0], set())), None)
            if other is None and not busy and not tables:
                other = free[0]
            if other is None:
                return tables
            free.remove(other)
            seated.append(other)
        tables.append(tuple(seated))
    return tables


def _rounds_total(doc: TournamentDocument) -> int:
    """A running Swiss's or round robin's rounds (set when it starts)."""
    assert doc["rounds_total"] is not None, "a Swiss or round robin under way has its rounds"
    return doc["rounds_total"]


def _ends_at(doc: TournamentDocument) -> float:
    """A running arena's end (set when it starts)."""
    assert doc["ends_at"] is not None, "an arena under way has its end"
    return doc["ends_at"]


def _games_of(table: TableDocument) -> list[str]:
    """A table with a person: its games so far."""
    assert table["games"] is not None, "a table with a person plays games of its own"
    return table["games"]


def _first_seats(doc: TournamentDocument) -> Counter[int]:
    """How often each entrant has had the first seat of a game at a table of two."""
    firsts: Counter[int] = Counter()
    for number in doc["rounds"]:
        for table in number["pairings"]:
            if len(table["seats"]) == 2:
                firsts.update(_seated(table, index)[0] for index in range(doc["games_per_pairing"]))
    return firsts


def _seated(table: TableDocument, index: int) -> list[int]:
    """The entrant at each seat in a table's game `index`: one seat further round each game."""
    shift = index % len(table["seats"])
    return table["seats"][shift:] + table["seats"][:shift]


def _most_rounds(doc: TournamentDocument, entrants: int) -> int:
    """Swiss rounds a field plays: at tables of two, as many as always pair with no repeat."""
    return always_pairable_rounds(entrants) if doc["players_per_table"] == 2 else MAX_ENTRANTS


def _games_planned(doc: TournamentDocument) -> int:
    return sum(doc["games_per_pairing"] for r in doc["rounds"] for t in r["pairings"] if len(t["seats"]) > 1)


def played(doc: TournamentDocument) -> list[Played]:
    return [Played(tuple(t["seats"]), tuple(t["result"]["wins"]), t["result"]["games"], doc["teams"])
            for r in doc["rounds"] for t in r["pairings"] if t["result"] is not None]
