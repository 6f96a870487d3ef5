"""Quick play: a player's ticket waits in its queue (rules preset × player count, rated or casual,
and a turn timer) until tickets whose ratings reach each other meet, their window widening the
longer they wait; a ticket past its wait gets its bot fill, or expires, and one whose player has
gone (no stream, no read of the ticket, for the presence grace) expires too. A player has one
live ticket across every queue. Pairing is one script over the app's keys
(app/matchmaking/store.py); the game a group makes is created here, from the group's record, by
whoever meets it first (the request that matched, the sweep, or a read of a ticket)."""

import logging
import secrets
import time

from ..accounts.ladders import Ladders, pool_of, pools
from ..engine.rules import PRESETS
from ..errors import InvalidRequest, LiveGameInPlay, TicketExists, TicketNotFound
from ..games.seating import Seating
from ..games.service import LIVE_TURN_SECONDS, GameService
from ..ops.keys import matchmaking_key
from ..ops.scope import app_of, in_app, unscoped
from ..players.service import PlayerService, entrant_of
from .store import MatchmakingStore

log = logging.getLogger(__name__)

BASE_WINDOW = 50.0  # rating points a new ticket reaches
WIDEN_PER_SECOND = 25.0  # how fast a waiting ticket's reach grows
WIDEST_WINDOW = 400.0  # a 400-point gap: 10 to 1 odds, the most a wait brings together
LOOK_AGAIN_SECONDS = 2.0  # the sweep looks at a waiting ticket again each 50 points its window widens
UNMADE_SECONDS = 3.0  # a group whose game is not made by then is made by the sweep
GROUP_TTL = 24 * 3600
SWEEP_LIMIT = 256  # tickets and absent players one sweep of an app looks at, at most
GAME_IDS_PER_SWEEP = 64
APP_QUIET_SECONDS = GROUP_TTL  # an app that queued nothing for this long leaves the sweep
DEFAULT_TURN_SECONDS = 30


def pool_of_ticket(ticket_id: str) -> str:
    return ticket_id.partition(".")[0]


class Matchmaker:
    def __init__(self, store: MatchmakingStore, games: GameService, seating: Seating, players: PlayerService,
                 ladders: Ladders, app_quotas, presence_seconds: float, min_turn_seconds: int):
        """`app_quotas(app id)`: its live games per player; `presence_seconds`: how long a ticket
        outlives its player's last sign of presence; `min_turn_seconds`: the shortest turn timer a
        ticket may ask for."""
        self.store, self.games, self.seating, self.players, self.ladders = store, games, seating, players, ladders
        self.app_quotas = app_quotas
        self.presence_seconds, self.min_turn_seconds = presence_seconds, min_turn_seconds

    def submit(self, player_id: str, request: dict, ticket_id: str | None = None) -> dict:
        """A new ticket (matched at once when a waiting one reaches it). `ticket_id`, when given, is
        the same for every retry of one request: a retry finds the ticket its first run made."""
        preset, players, turn = request["rules"]["preset"], request["players"], request["turn_seconds"]
        if players not in PRESETS[preset].player_counts():
            raise InvalidRequest(f"players: the {preset} preset does not deal to {players}", field="players")
        if turn < self.min_turn_seconds:
            raise InvalidRequest(f"turn_seconds: at least {self.min_turn_seconds}", field="turn_seconds")
        app_id = app_of(player_id)
        pool = in_app(app_id, pool_of(preset, players))  # an app's players meet each other only
        if ticket_id is not None and self.store.ticket(app_id, f"{pool}.{ticket_id}") is not None:
            return self.ticket(f"{pool}.{ticket_id}", player_id)
        if request["rated"]:
            self.players.admit_rated(player_id)
        allowed = self.app_quotas(app_id).get("live_games_per_player", 0)
        if allowed and turn < LIVE_TURN_SECONDS and len(live := self.games.live_timed_games(player_id)) >= allowed:
            raise LiveGameInPlay(f"you are playing game {live[0]}: finish or resign it first (live timed games "
                                 f"at once: {allowed})", game_id=live[0])
        ticket_id = f"{pool}.{ticket_id or secrets.token_urlsafe(12)}"
        entrant = entrant_of(player_id)
        rating = self.ladders.records(pool, [entrant])[entrant]["rating"]
        now = time.time()
        self.players.name_of(player_id)  # a player gone is refused here (404)
        # No name on the ticket: its game's seat takes the player's name when it is made.
        ticket = {"id": ticket_id, "player": player_id, "name": "", "rating": rating,
                  "deadline": int((now + request["max_wait_seconds"]) * 1000), "bot_fill": request.get("bot_fill"),
                  "rated": request["rated"], "pool": pool, "players": players,
                  "teams": PRESETS[preset].teams and players == 4, "turn_seconds": turn,
                  "queue": f"{unscoped(pool)}:{'rated' if request['rated'] else 'casual'}:{turn}"}
        kind, found = self.store.submit(app_id, self._grouping(app_id, request["max_wait_seconds"]), ticket,
                                        in_app(app_id, secrets.token_urlsafe(16)))
        if kind == "exists":
            raise TicketExists(f"you have a ticket waiting already: {found}", ticket_id=found)
        if kind == "matched":
            self._make(found)
        return self.ticket(ticket_id, player_id)

    def _grouping(self, app_id: str, max_wait_seconds: float = 0) -> list:
        return [int(time.time() * 1000), BASE_WINDOW, WIDEN_PER_SECOND, WIDEST_WINDOW, matchmaking_key(app_id, ""),
                int(max_wait_seconds) + GROUP_TTL, int(self.presence_seconds * 1000), int(LOOK_AGAIN_SECONDS * 1000)]

    def present(self, player_id: str):
        """The player shows they are here (their stream, a read of their ticket): a waiting ticket
        of theirs lives on, and so does the player (their record's idle time starts again, as a
        use of their token does); a player whose record has expired is present nowhere."""
        if self.players.store.load(player_id, used=True) is None:
            return
        app_id = app_of(player_id)
        self.store.seen(app_id, self._grouping(app_id), player_id)

    def ticket(self, ticket_id: str, player_id: str) -> dict:
        """A ticket as its player sees it; a matched one's game is made if it is not yet."""
        pool = pool_of_ticket(ticket_id)
        app_id = app_of(pool)
        found = self.store.ticket(app_id, ticket_id) if unscoped(pool) in pools() else None
        if found is None or found["player"] != player_id:
            raise TicketNotFound(f"no ticket {ticket_id} of yours")
        if found["status"] == "matched" and self.games.find(found["game_id"]) is None:
            group = self.store.group(app_id, found["game_id"])
            if group is not None:
                self._make(group)
        return _public(ticket_id, found)

    def cancel(self, ticket_id: str, player_id: str) -> tuple[bool, dict]:
        """(True, the ticket) when it was waiting and is now cancelled; else (False, as it stands)."""
        self.ticket(ticket_id, player_id)
        app_id = app_of(pool_of_ticket(ticket_id))
        cancelled = self.store.cancel(app_id, self._grouping(app_id), ticket_id)
        return cancelled, self.ticket(ticket_id, player_id)

    def cancel_live(self, player_id: str) -> str | None:
        """Cancel the player's waiting ticket, if they have one: its id, or None."""
        app_id = app_of(player_id)
        ticket_id = self.store.live_ticket(app_id, player_id)
        if ticket_id is not None:
            self.store.cancel(app_id, self._grouping(app_id), ticket_id)
        return ticket_id

    def live_ticket(self, player_id: str) -> dict | None:
        ticket_id = self.store.live_ticket(app_of(player_id), player_id)
        return self.ticket(ticket_id, player_id) if ticket_id is not None else None

    def sweep(self) -> int:
        """Every app that queues: end the tickets of players gone, give expired tickets their bot
        fill or tell their players, group the tickets due a look whose windows reach by now, and
        make any group's game still unmade. Answers the number of groups and expiries."""
        done = 0
        for app_id in self.store.apps(int((time.time() - APP_QUIET_SECONDS) * 1000)):
            game_ids = [in_app(app_id, secrets.token_urlsafe(16)) for _ in range(GAME_IDS_PER_SWEEP)]
            for outcome in self.store.sweep(app_id, self._grouping(app_id), SWEEP_LIMIT, game_ids):
                done += 1
                if outcome[0] == "matched":
                    self._make(outcome[1])
                else:
                    _, ticket_id, player_id, why = outcome
                    self.players.notify(player_id, {"type": "ticket_expired", "ticket_id": ticket_id, "why": why})
            for game_id in self.store.unmade(app_id, int((time.time() - UNMADE_SECONDS) * 1000)):
                group = self.store.group(app_id, game_id)
                if group is None or self.games.find(game_id) is not None:
                    self.store.made(app_id, game_id)
                else:
                    self._make(group)
        return done

    def _make(self, group: dict):
        """The group's game, created once whoever comes first (its id is the group's), then each
        player told `matched`."""
        preset, _, players = unscoped(group["pool"]).rpartition("-")
        seats, owners = [], {}
        for seat, entry in enumerate(group["seats"]):
            if "player" in entry:
                seats.append({"type": "human"})  # named after its player (create_owned)
                owners[seat] = entry["player"]
            else:
                seats.append({"type": "bot", "bot": entry["bot"], "name": f"{entry['bot']} bot {seat + 1}"})
        request = {"players": int(players), "rules": {"preset": preset}, "rated": group["rated"], "seats": seats,
                   "turn_timeout_seconds": group["turn_seconds"]}
        def tell_players(_):
            for seat, player_id in owners.items():
                self.players.notify(player_id, {"type": "matched", "ticket_id": group["seats"][seat]["ticket"],
                                                "game_id": group["game_id"], "seat": seat})
        self.seating.create_owned(request, owners, group["game_id"], on_created=tell_players)
        self.store.made(app_of(group["pool"]), group["game_id"])


def _public(ticket_id: str, found: dict) -> dict:
    pool = unscoped(found["pool"])
    preset, _, players = pool.rpartition("-")
    waited = max(0.0, time.time() - int(found["created"]) / 1000)
    return {"id": ticket_id, "status": found["status"], "pool": pool, "rules": {"preset": preset},
            "players": int(players), "rated": found["rated"] == "1", "bot_fill": found["bot_fill"] or None,
            "turn_seconds": int(found["turn"]), "rating": float(found["rating"]),
            "window": min(WIDEST_WINDOW, BASE_WINDOW + WIDEN_PER_SECOND * waited),
            "created_at": int(found["created"]) / 1000, "expires_at": int(found["deadline"]) / 1000,
            "expired_because": found.get("why"), "game_id": found.get("game_id"),
            "seat": int(found["seat"]) if "seat" in found else None}
