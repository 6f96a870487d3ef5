"""Who is in a tournament: people entering (late, into a running arena or Swiss), withdrawing
and coming back, its owner cancelling it, and an erased person's name. Each change is saved over
the revision it was made from, tried again when another came first."""

from collections.abc import Callable

from ..errors import (InvalidRequest, NotEntered, NotTheOwner, TournamentClosed, TournamentFull,
                      TournamentNotFound)
from ..games.seating import Seating
from ..games.seats import outside_bot_id
from ..players.service import PlayerService
from .document import TournamentDocument
from .rounds import ARENA, CANCELLED, FINISHED, MAX_ENTRANTS, OPEN, PERSON, RUNNING, SWISS, Rounds, _ends_at, \
    _rounds_total
from .store import TournamentStore
from .telling import Telling
from .views import TournamentViews

SAVE_TRIES = 5  # then another process is moving it on


class Entries:
    def __init__(self, store: TournamentStore, players: PlayerService, seating: Seating, rounds: Rounds,
                 views: TournamentViews, telling: Telling, clock: Callable[[], float]):
        self.store, self.players, self.seating, self.rounds, self.views = store, players, seating, rounds, views
        self.telling, self.clock = telling, clock

    def enter(self, tournament_id: str, player_id: str) -> dict:
        """The player enters the open tournament (once: entering again changes nothing)."""
        for _ in range(SAVE_TRIES):
            doc = self._load(tournament_id)
            entrant = PERSON + player_id
            if entrant in doc["entrants"]:
                index = doc["entrants"].index(entrant)
                if index not in doc.get("away", []) or not self._takes_entries(doc):
                    return self.views.public(doc)
                doc["away"].remove(index)  # back from a pause or a withdrawal: paired again from now
                if self.store.save(doc, self.views.events(doc, [])):
                    return self.views.public(doc)
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
                self.rounds.check_games(doc, len(doc["entrants"]) + 1, "entrants")
            except InvalidRequest as too_many:
                raise TournamentFull(str(too_many)) from None
            doc["entrants"].append(entrant)
            doc["names"].append(self.players.name_of(player_id))
            self.players.store.entered_tournament(player_id, tournament_id)  # before: an erasure finds it
            if self.store.save(doc, self.views.events(doc, [])):
                return self.views.public(doc)
        raise TournamentClosed("the tournament is changing under many entries at once: try again")

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
                return self.views.public(doc)
            else:
                doc["away"].append(index)
            if self.store.save(doc, self.views.events(doc, [])):
                for game_id in self._games_in_play(doc, index):
                    self.seating.resign_player(game_id, player_id)
                return self.views.public(doc)
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
                return self.views.public(doc)
            if doc["status"] == FINISHED:
                raise TournamentClosed(f"tournament {tournament_id} is over")
            in_play = [game_id for index in range(len(doc["entrants"])) for game_id in self._games_in_play(doc, index)]
            was, doc["status"] = doc["status"], CANCELLED
            if self.store.save(doc, self.views.events(doc, []), self.telling.owed_by(doc, was, [])):
                self.store.finished(tournament_id)
                self.telling.tell_owed(tournament_id)
                for game_id in dict.fromkeys(in_play):
                    self.seating.call_off(game_id)
                return self.views.public(doc)
        raise TournamentClosed("the tournament is changing under many writes at once: try again")

    def erase_person(self, tournament_id: str, player_id: str, label: str) -> bool:
        """A person erased leaves an open tournament, and is `label` in one under way or over (their
        results stay: they are their opponents' too), paired no more in one under way; the
        tournament's past events that named them are dropped, its standings sent again. False if
        they are not in it."""
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
                if doc["status"] == RUNNING and index not in doc.setdefault("away", []):
                    doc["away"].append(index)
            if self.store.save(doc, self.views.events(doc, [])):
                self.store.drop_events_naming(tournament_id, name)
                return True
        raise TournamentClosed("the tournament is changing under many writes at once: try again")

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

    def _load(self, tournament_id: str) -> TournamentDocument:
        doc = self.store.load(tournament_id)
        if doc is None:
            raise TournamentNotFound(f"no tournament {tournament_id}")
        return doc
