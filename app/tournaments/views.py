"""What a tournament shows (its standings, crosstable and summary) and what its stream says at
each change."""

from ..accounts.ladders import Ladders, pool_of
from ..games.records import utc_at
from ..ops.keys import MATCH_POOL
from ..ops.scope import app_of, in_app
from .document import TournamentDocument
from .rounds import GAMES, MAX_ENTRANTS, PERSON, STREAKS, person_of, played
from .standings import Played, crosstable, standings


class TournamentViews:
    def __init__(self, ladders: Ladders):
        self.ladders = ladders

    def ratings(self, doc: TournamentDocument) -> list[float]:
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

    def standings(self, doc: TournamentDocument, results: list[Played] | None = None) -> list[dict]:
        """Its standings, best first, as its scoring counts them."""
        return standings(doc["names"], played(doc) if results is None else results, self.ratings(doc),
                         streaks=doc.get("scoring") == STREAKS)

    def events(self, doc: TournamentDocument, new: list[tuple[int, int]]) -> list[dict]:
        """The events of a change: each round it added, then the standings as they now stand."""
        rounds = sorted({number for number, _ in new})
        events = [{"type": "round", "round": number, "pairings": doc["rounds"][number]["pairings"]}
                  for number in rounds]
        return [*events, {"type": "standings", "revision": doc["revision"] + 1, "status": doc["status"],
                          "rounds_played": len(doc["rounds"]),
                          "standings": self.standings(doc)}]

    def summary(self, doc: TournamentDocument) -> dict:
        return {key: doc[key] for key in ("id", "format", "status", "names", "games_per_pairing", "rounds_total",
                                          "created_at", "dealing", "turn_seconds", "duration_seconds",
                                          "players_per_table", "teams")} | {
            "entrants": doc["entrants"], "rounds_played": len(doc["rounds"]), "away": doc.get("away", []),
            "max_entrants": doc.get("max_entrants", MAX_ENTRANTS), "scoring": doc.get("scoring", GAMES),
            "starts_at": utc_at(doc["starts_at"]), "ends_at": utc_at(doc["ends_at"]) if doc["ends_at"] else None}

    def public(self, doc: TournamentDocument) -> dict:
        results = played(doc)
        return {**self.summary(doc), "rules": doc["rules"], "cycles": doc["cycles"], "seed": doc["seed"],
                "rated": doc["dealing"] == "server", "revision": doc["revision"],
                "standings": self.standings(doc, results),
                "crosstable": crosstable(doc["names"], results), "rounds": doc["rounds"]}
