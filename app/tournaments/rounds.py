"""A tournament's rounds, worked out on its document: who meets whom next, the results come in,
when it is over. The document is changed in place; the service saves it (app/tournaments/service.py)
and the tables' matches and games are opened after (app/tournaments/tables.py)."""

import itertools
import logging
from collections import Counter
from collections.abc import Callable

from ..errors import InvalidRequest
from ..games.records import FINISHED as GAME_FINISHED
from ..games.records import utc_now
from ..games.service import GameService
from ..matches.service import MatchService
from .document import TableDocument, TournamentDocument
from .pairing import Table, always_pairable_rounds, round_robin, swiss_pairing, swiss_round
from .standings import Played

log = logging.getLogger(__name__)
ROUND_ROBIN, SWISS, ARENA = "round_robin", "swiss", "arena"
OPEN, RUNNING, FINISHED, CANCELLED = "open", "running", "finished", "cancelled"
PERSON = "player:"  # an entrant who is a person: player:<player id>
GAMES, STREAKS = "games", "streaks"  # scoring: a point a game won, or Lichess's arena streaks
MAX_ENTRANTS = 64  # unless the creator sets `max_entrants` (up to MOST_ENTRANTS)
MOST_ENTRANTS = 256
MAX_GAMES = 2000  # a tournament's games in all, as many as one match may have
LOOKED_AT = 64  # the matches one look at a tournament reads, the first still running first


def person_of(entrant: str) -> str | None:
    return entrant[len(PERSON):] if entrant.startswith(PERSON) else None


def has_people(doc: TournamentDocument) -> bool:
    return any(person_of(entrant) for entrant in doc["entrants"])


class Rounds:
    """`standings(doc)`: its standings, best first, which rank a Swiss round."""

    def __init__(self, matches: MatchService, games: GameService,
                 standings: Callable[[TournamentDocument], list[dict]]):
        self.matches, self.games, self.standings = matches, games, standings

    def start(self, doc: TournamentDocument, now: float) -> list[tuple[int, int]]:
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
        return self.pair(doc, now)

    def check_games(self, doc: TournamentDocument, entrants: int, field: str):
        if doc["format"] == ARENA:
            return  # an arena stops pairing at MAX_GAMES
        rounds = (doc["rounds_requested"] or 5) if doc["format"] == SWISS else \
            len(round_robin(entrants, doc["cycles"] or 1))
        games = min(rounds, _most_rounds(doc, entrants)) * (entrants // doc["players_per_table"]) * \
            doc["games_per_pairing"]
        if games > MAX_GAMES:
            raise InvalidRequest(f"{field}: this tournament would play {games} games; {MAX_GAMES} at most",
                                 field=field)

    def count(self, doc: TournamentDocument) -> tuple[bool, list[tuple[int, int]], list[tuple[int, int]]]:
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
                self.count_game(doc, table, game)
                counted = True
                if table["result"] is None:
                    new.append((number, k))
        return counted, new, missing

    def count_game(self, doc: TournamentDocument, table: TableDocument, game: dict):
        """A game of a table with people is over: a game won to each entrant of the winning camp;
        then the next game, or the table's result."""
        _, _, order = newest_game(table)
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

    def pair(self, doc: TournamentDocument, now: float) -> list[tuple[int, int]]:
        """The pairings due now, added as rounds: their (round, table)s."""
        pending = [t for r in doc["rounds"] for t in r["pairings"] if t["result"] is None]
        new: list[tuple[int, int]] = []
        if doc["format"] == ARENA:
            if now < _ends_at(doc) and _games_planned(doc) + doc["games_per_pairing"] <= MAX_GAMES:
                free = arena_tables(doc, pending)
                if free:
                    new += self.add_round(doc, free)
            return new
        all_at_once = doc["format"] == ROUND_ROBIN and not has_people(doc)  # a round robin of bots
        if pending and not all_at_once:
            return new  # a round at a time
        if doc["format"] == ROUND_ROBIN:
            planned = round_robin(len(doc["entrants"]), doc["cycles"] or 1)
            away = set(doc.get("away", []))
            for tables in planned[len(doc["rounds"]):None if all_at_once else len(doc["rounds"]) + 1]:
                # A table with an entrant away is the other's bye; one with both away is not played.
                kept = [tuple(e for e in table if e not in away) for table in tables]
                new += self.add_round(doc, [table for table in kept if table], seats_given=True)
        elif len(doc["rounds"]) < _rounds_total(doc):
            paired, seats_given = self.swiss_tables(doc)
            if paired is None:  # a tournament made before its rounds were bounded: it ends here
                doc["rounds_total"] = len(doc["rounds"])
            else:
                new += self.add_round(doc, paired, seats_given)
        return new

    def finish_if_done(self, doc: TournamentDocument, now: float) -> bool:
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

    def swiss_tables(self, doc: TournamentDocument) -> tuple[list[Table] | None, bool]:
        """The next Swiss round, and whether its seats are the pairing's own (the Dutch system's
        colours) rather than to be balanced here."""
        away = set(doc.get("away", []))
        ranking = [row["entrant"] for row in self.standings(doc) if row["entrant"] not in away]
        if doc["players_per_table"] == 2:
            history = [[_played(doc, table) for table in number["pairings"] if table["result"] is not None]
                       for number in doc["rounds"]]
            paired, dutch = swiss_pairing(ranking, history, _rounds_total(doc))
            if not dutch:
                log.warning("tournament %s: the Dutch rules pair nobody in round %d; paired as an arbiter would",
                            doc["id"], len(doc["rounds"]) + 1)
            return paired, dutch
        met = {frozenset(pair) for r in doc["rounds"] for t in r["pairings"]
               for pair in itertools.combinations(t["seats"], 2)}
        byes = {t["seats"][0] for r in doc["rounds"] for t in r["pairings"] if len(t["seats"]) == 1}
        return swiss_round(ranking, met, byes, doc["players_per_table"]), False

    def add_round(self, doc: TournamentDocument, seated: list[Table],
                  seats_given: bool = False) -> list[tuple[int, int]]:
        """`seats_given`: the pairing chose who sits first (the Berger tables, the Dutch system);
        else who has had the first seat less often takes it, as colours are balanced in chess."""
        number, games = len(doc["rounds"]), doc["games_per_pairing"]
        tables: list[TableDocument] = []
        firsts = _first_seats(doc)
        for k, paired in enumerate(seated):
            balance = not seats_given and len(paired) == 2 and firsts[paired[1]] < firsts[paired[0]]
            seats = paired[::-1] if balance else paired
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


def newest_game(table: TableDocument) -> tuple[str, int, list[int]]:
    """A table with a person: its newest game's id, its index among the table's games, and the
    entrant at each of its seats."""
    games = _games_of(table)
    return games[-1], len(games) - 1, _seated(table, len(games) - 1)


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
    return [_played(doc, t) for r in doc["rounds"] for t in r["pairings"] if t["result"] is not None]


def _played(doc: TournamentDocument, table: TableDocument) -> Played:
    assert table["result"] is not None, "a table played"
    return Played(tuple(table["seats"]), tuple(table["result"]["wins"]), table["result"]["games"], doc["teams"])
