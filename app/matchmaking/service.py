"""Quick play: a player's ticket waits in its pool (rules preset × player count, rated or
casual) until tickets whose ratings reach each other meet, their window widening the longer they
wait; a ticket past its wait gets its bot fill, or expires. Pairing is one script over the
pool's keys (app/matchmaking/store.py); the game a group makes is created here, from the group's
record, by whoever meets it first (the request that matched, the sweep, or a read of a ticket)."""

import logging
import secrets
import time

from ..accounts.ladders import Ladders, pool_of, pools
from ..ops.scope import app_of, in_app, unscoped
from ..engine.rules import PRESETS
from ..errors import InvalidRequest, TicketExists, TicketNotFound
from ..games.seating import Seating
from ..games.service import GameService
from ..players.service import PlayerService, entrant_of
from .store import MatchmakingStore

log = logging.getLogger(__name__)

BASE_WINDOW = 50.0  # rating points a new ticket reaches
WIDEN_PER_SECOND = 25.0  # how fast a waiting ticket's reach grows
WIDEST_WINDOW = 400.0  # a 400-point gap: 10 to 1 odds, the most a wait brings together
UNMADE_SECONDS = 3.0  # a group whose game is not made by then is made by the sweep
GROUP_TTL = 24 * 3600
GAME_IDS_PER_SWEEP = 64


def pool_of_ticket(ticket_id: str) -> str:
    return ticket_id.partition(".")[0]


class Matchmaker:
    def __init__(self, store: MatchmakingStore, games: GameService, seating: Seating, players: PlayerService,
                 ladders: Ladders):
        self.store, self.games, self.seating, self.players, self.ladders = store, games, seating, players, ladders

    def submit(self, player_id: str, request: dict, ticket_id: str | None = None) -> dict:
        """A new ticket (matched at once when a waiting one reaches it). `ticket_id`, when given, is
        the same for every retry of one request: a retry finds the ticket its first run made."""
        preset, players = request["rules"], request["players"]
        if players not in PRESETS[preset].player_counts():
            raise InvalidRequest(f"players: the {preset} preset does not deal to {players}", field="players")
        pool = in_app(app_of(player_id), pool_of(preset, players))  # an app's players meet each other only
        if ticket_id is not None and self.store.ticket(pool, f"{pool}.{ticket_id}") is not None:
            return self.ticket(f"{pool}.{ticket_id}", player_id)
        ticket_id = f"{pool}.{ticket_id or secrets.token_urlsafe(12)}"
        entrant = entrant_of(player_id)
        rating = self.ladders.records(pool, [entrant])[entrant]["rating"]
        now = time.time()
        ticket = {"id": ticket_id, "player": player_id, "name": self.players.name_of(player_id), "rating": rating,
                  "deadline": int((now + request["max_wait_seconds"]) * 1000), "bot_fill": request.get("bot_fill"),
                  "rated": request["rated"]}
        kind, found = self.store.submit(pool, self._grouping(pool, request["max_wait_seconds"]), ticket,
                                        in_app(app_of(pool), secrets.token_urlsafe(16)))
        if kind == "exists":
            raise TicketExists(f"you have a ticket waiting in {unscoped(pool)} already: {found}", ticket_id=found)
        if kind == "matched":
            self._make(pool, found)
        return self.ticket(ticket_id, player_id)

    def _grouping(self, pool: str, max_wait_seconds: float = 0) -> list:
        preset, _, players = unscoped(pool).rpartition("-")
        teams = PRESETS[preset].teams and players == "4"
        ttl = int(max_wait_seconds) + GROUP_TTL
        return [int(time.time() * 1000), int(players), BASE_WINDOW, WIDEN_PER_SECOND, WIDEST_WINDOW,
                f"{{mm:{pool}}}:", int(teams), ttl]

    def ticket(self, ticket_id: str, player_id: str) -> dict:
        """A ticket as its player sees it; a matched one's game is made if it is not yet."""
        pool = pool_of_ticket(ticket_id)
        found = self.store.ticket(pool, ticket_id) if unscoped(pool) in pools() else None
        if found is None or found["player"] != player_id:
            raise TicketNotFound(f"no ticket {ticket_id} of yours")
        if found["status"] == "matched" and self.games.find(found["game_id"]) is None:
            group = self.store.group(pool, found["game_id"])
            if group is not None:
                self._make(pool, group)
        return _public(ticket_id, pool, found)

    def cancel(self, ticket_id: str, player_id: str) -> tuple[bool, dict]:
        """(True, the ticket) when it was waiting and is now cancelled; else (False, as it stands)."""
        ticket = self.ticket(ticket_id, player_id)
        cancelled = self.store.cancel(ticket["pool"], ticket_id, player_id, ticket["rated"])
        return cancelled, self.ticket(ticket_id, player_id)

    def sweep(self) -> int:
        """Every queue: group the tickets whose windows reach by now, give expired tickets their
        bot fill or tell their players, and make any group's game still unmade. Answers the
        number of groups and expiries."""
        done = 0
        for queue in self.store.queues():
            pool = queue.rpartition(":")[0]
            game_ids = [in_app(app_of(pool), secrets.token_urlsafe(16)) for _ in range(GAME_IDS_PER_SWEEP)]
            for outcome in self.store.sweep(queue, self._grouping(pool), game_ids):
                done += 1
                if outcome[0] == "matched":
                    self._make(pool, outcome[1])
                else:
                    _, ticket_id, player_id = outcome
                    self.players.notify(player_id, {"type": "ticket_expired", "ticket_id": ticket_id})
            for game_id in self.store.unmade(pool, int((time.time() - UNMADE_SECONDS) * 1000)):
                group = self.store.group(pool, game_id)
                if group is None or self.games.find(game_id) is not None:
                    self.store.made(pool, game_id)
                else:
                    self._make(pool, group)
        return done

    def _make(self, pool: str, group: dict):
        """The group's game, created once whoever comes first (its id is the group's), then each
        player told `matched`."""
        preset, _, players = unscoped(pool).rpartition("-")
        seats, owners = [], {}
        for seat, entry in enumerate(group["seats"]):
            if "player" in entry:
                seats.append({"type": "human", "name": entry["name"]})
                owners[seat] = entry["player"]
            else:
                seats.append({"type": "bot", "bot": entry["bot"], "name": f"{entry['bot']} bot {seat + 1}"})
        request = {"players": int(players), "rules": {"preset": preset}, "rated": group["rated"], "seats": seats}
        existed = self.games.find(group["game_id"]) is not None
        self.seating.create_owned(request, owners, group["game_id"])
        self.store.made(pool, group["game_id"])
        if not existed:
            for seat, player_id in owners.items():
                self.players.notify(player_id, {"type": "matched", "ticket_id": group["seats"][seat]["ticket"],
                                                "game_id": group["game_id"], "seat": seat})


def _public(ticket_id: str, pool: str, found: dict) -> dict:
    pool = unscoped(pool)
    preset, _, players = pool.rpartition("-")
    waited = max(0.0, time.time() - int(found["created"]) / 1000)
    return {"id": ticket_id, "status": found["status"], "pool": pool, "rules": preset, "players": int(players),
            "rated": found["rated"] == "1", "bot_fill": found["bot_fill"] or None, "rating": float(found["rating"]),
            "window": min(WIDEST_WINDOW, BASE_WINDOW + WIDEN_PER_SECOND * waited),
            "created_at": int(found["created"]) / 1000, "expires_at": int(found["deadline"]) / 1000,
            "game_id": found.get("game_id"), "seat": int(found["seat"]) if "seat" in found else None}
