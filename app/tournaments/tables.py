"""The matches and games of a tournament's new tables, opened after the save that added them, by
the process that saved (each id is the tournament's, the round's and the table's, so opening one
again finds it; a look that finds one missing opens it)."""

from ..engine import rules_from_request
from ..games.seating import Seating
from ..games.service import GameService
from ..matches.service import MatchService
from .document import TableDocument, TournamentDocument
from .rounds import newest_game, person_of


class Tables:
    def __init__(self, matches: MatchService, games: GameService, seating: Seating):
        self.matches, self.games, self.seating = matches, games, seating

    def open(self, doc: TournamentDocument, at: list[tuple[int, int]]):
        """Create the matches and games of these pairings (each once, whoever comes first)."""
        for number, k in at:
            table = doc["rounds"][number]["pairings"][k]
            if table["match_id"]:
                self._open_match(doc, number, k, table)
            else:
                self._open_game(doc, table)

    def _open_match(self, doc: TournamentDocument, number: int, k: int, table: TableDocument):
        request: dict = {"bots": [doc["entrants"][e] for e in table["seats"]],
                         "games": doc["games_per_pairing"], "rules": doc["rules"]}
        if doc["seed"]:
            request["seed"] = f"{doc['seed']}:{number}:{k}"
        self.matches.create_match(request, client=f"tournament:{doc['id']}", cap=0, match_id=table["match_id"])

    def _open_game(self, doc: TournamentDocument, table: TableDocument):
        """The pairing's next game between its people (and a built-in bot, if one is in it); they
        are told of it by app/tournaments/telling.py, once it is there."""
        game_id, _, order = newest_game(table)
        if self.games.find(game_id) is not None:
            return
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
        self.seating.create_owned(request, owners, game_id, extra={"tournament": doc["id"]})
