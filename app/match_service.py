"""Bot-only matches as resources: created at once, played game by game on the workers."""

import secrets

from .engine import new_seed, rules_from_dict, rules_from_request
from .errors import GameNotFound, InvalidRequest, TooManyMatchGames
from .matches import play_game, seating, standings, tally
from .service import utc_now
from .store import GameMissing, VersionConflict

MAX_GAMES = 2000


class MatchService:
    def __init__(self, store, games, dispatcher):
        self.store = store
        self.games = games
        self.dispatcher = dispatcher

    def create_match(self, request: dict, client: str, cap: int) -> dict:
        """Queue a match for `client` (an address), whose running match games may not pass `cap` (0: no cap)."""
        bots = request["bots"]
        rules = rules_from_request(request.get("rules"))
        rules.check_players(len(bots))
        unknown = [b for b in bots if b not in self.games.bot_kinds]
        if unknown:
            raise InvalidRequest(f"bots: unknown bot kind(s) {unknown}; kinds: {', '.join(self.games.bot_kinds)}",
                                 field="bots")
        if cap and not self.store.reserve_games(client, request["games"], cap):
            raise TooManyMatchGames(f"more than {cap} match games would be running for this client; "
                                    "wait for its matches to finish")
        match_id = secrets.token_urlsafe(12)
        doc = {"id": match_id, "rules": rules.to_dict(), "bots": bots, "games_total": request["games"],
               "client": client if cap else None,
               "seed": request.get("seed") or new_seed(), "dealing": "creator_seed" if request.get("seed") else "server",
               "created_at": utc_now()}
        self.store.create(match_id, doc)
        for index in range(doc["games_total"]):
            self.dispatcher.match_game(match_id, index)
        return self.status(match_id)

    def play_match_game(self, match_id: str, index: int) -> bool:
        """Play game `index` of the match and count it; a job that runs twice counts once."""
        doc, _ = self._load(match_id)
        played = play_game(rules_from_dict(doc["rules"]), doc["bots"], doc["seed"], index)
        game_id = f"{match_id}-{index}"
        seats = [{"type": "bot", "bot": doc["bots"][entrant], "name": f"{doc['bots'][entrant]} #{entrant}"}
                 for entrant in played.entrants]
        try:
            self.games.store_new_game(game_id, played.game, seats, played.events,
                                      dealing=doc.get("dealing", "server"))
        except VersionConflict:
            pass  # stored by an earlier run of this job
        recorded = self.store.record_game(match_id, index, game_id, tally(played))
        if recorded and doc.get("client"):
            self.store.release_game(doc["client"])
        return recorded

    def status(self, match_id: str) -> dict:
        doc, totals = self._load(match_id)
        done = int(totals.get("games_done", 0))
        status = "finished" if done >= doc["games_total"] else "running"
        public = {key: value for key, value in doc.items() if key != "client"}  # an address is not public
        return {**public, "status": status, "games_done": done, "entrants": standings(doc["bots"], totals),
                "seating": "seats rotate every game; each deck is dealt once per rotation (duplicate)",
                "first_seating": seating(len(doc["bots"]), 0)}

    def match_games(self, match_id: str, offset: int, limit: int) -> tuple[list[dict], int]:
        self._load(match_id)
        ids, total = self.store.game_ids(match_id, offset, limit)
        return self.games.summaries(ids)[0], total

    def _load(self, match_id):
        try:
            return self.store.load(match_id)
        except GameMissing:
            raise GameNotFound(f"no match {match_id}") from None
