"""Bot-only matches, pure: seat rotation with duplicate deals, one game's play-out, and the tallies.

Every deck is played once per seat rotation (the same deck with the seats swapped), so the
luck of the deal cancels out between entrants.
"""

import hashlib
import math
import random
import time
from dataclasses import dataclass, field

from ..bots import BOTS
from ..engine import Game
from ..engine.views import deal_events, seat_knowledge


def seating(players: int, game_index: int) -> list[int]:
    """The entrant at each seat: one seat further round for each game of a deck's rotation."""
    shift = game_index % players
    return [(seat + shift) % players for seat in range(players)]


def deck_seed(match_seed: str, game_index: int, players: int, duplicate: bool = True) -> str:
    """Game `game_index`'s seed: in duplicate, each deck is dealt once per rotation of the seats;
    otherwise every game has a deck of its own. A hash, so a game's seed, revealed when it ends,
    tells nothing of the match seed or of any other game's deck."""
    deck = game_index // players if duplicate else game_index
    return hashlib.sha256(f"{match_seed}:deck:{deck}".encode()).hexdigest()[:32]


@dataclass
class PlayedGame:
    game: Game
    entrants: list[int]  # the entrant at each seat
    move_ms: list[list[float]] = field(default_factory=list)  # per seat
    events: list[dict] | None = None
    forfeited_by: int | None = None  # an entrant who forfeited the match during this game

    @property
    def winner(self) -> int | None:
        """The winning camp: the game's, unless an entrant forfeited in it, which loses it whoever
        then played its seat to the end."""
        game = self.game
        if self.forfeited_by is None or self.forfeited_by not in self.entrants:
            return game.winner
        loser = game.camp_of[self.entrants.index(self.forfeited_by)]
        if game.winner != loser:
            return game.winner
        return max((camp for camp in range(game.camps) if camp != loser), key=lambda camp: game.scores[camp])


def play_game(rules, bots: list[str], match_seed: str, game_index: int, keep_events=True,
              policies=None, observe=None) -> PlayedGame:
    """One game of the match; bots read the deal's public history, so events are always recorded.

    `policies` maps a bot name to its function where it is not one of `BOTS` (a bot under
    training); `observe(game)` is called before every move (self-play records positions)."""
    policies = {**BOTS, **(policies or {})}
    players = len(bots)
    entrants = seating(players, game_index)
    game = Game(rules, players, seed=deck_seed(match_seed, game_index, players), first_dealer=0)
    rngs = [random.Random(f"{match_seed}:{game_index}:entrant{entrants[seat]}") for seat in range(players)]
    dealt = game.events
    assert dealt is not None  # a game records its events unless made with record_events=False
    played = PlayedGame(game, entrants, [[] for _ in range(players)], list(dealt) if keep_events else None)
    history = deal_events(dealt)
    while game.winner is None:
        seat = game.awaiting()[0]
        if observe is not None:
            observe(game)
        started = time.perf_counter()
        action = policies[bots[entrants[seat]]](seat_knowledge(game, seat, history), rngs[seat])
        played.move_ms[seat].append((time.perf_counter() - started) * 1000)
        events = game.apply(seat, action)
        assert events is not None
        history = deal_events(history + events)
        if played.events is not None:
            played.events.extend(events)
    return played


def wilson_interval(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    if games == 0:
        return (0.0, 1.0)
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    spread = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return (max(0.0, centre - spread), min(1.0, centre + spread))


def tally(played: PlayedGame) -> dict:
    """One game as increments of the match's running totals (summed by Redis or in memory)."""
    totals = {"games_done": 1}
    for entrant, result in enumerate(entrant_results(played)):
        for name, value in result.items():
            totals[f"e{entrant}:{name}"] = value
    return totals


def standings(bots: list[str], totals: dict) -> list[dict]:
    """Per entrant: wins, win rate with its Wilson 95% interval, mean points, mean ms per move."""
    done = int(totals.get("games_done", 0))
    rows = []
    for entrant, bot in enumerate(bots):
        wins, moves = totals.get(f"e{entrant}:wins", 0), totals.get(f"e{entrant}:moves", 0)
        low, high = wilson_interval(wins, done)
        rows.append({
            "entrant": entrant, "bot": bot, "wins": int(wins),
            "win_rate": wins / done if done else None, "win_rate_low": low, "win_rate_high": high,
            "mean_points": totals.get(f"e{entrant}:points", 0) / done if done else None,
            "mean_ms_per_move": totals.get(f"e{entrant}:ms", 0) / moves if moves else None,
            "timeouts": int(totals.get(f"e{entrant}:timeouts", 0)),
        })
    return rows


def entrant_results(played: PlayedGame) -> list[dict]:
    """Per entrant: wins (1 or 0), its camp's points, its moves and their total ms."""
    game = played.game
    out: list[dict] = [{} for _ in played.entrants]
    for seat, entrant in enumerate(played.entrants):
        camp = game.camp_of[seat]
        out[entrant] = {"wins": int(played.winner == camp), "points": game.scores[camp],
                        "moves": len(played.move_ms[seat]), "ms": sum(played.move_ms[seat])}
    return out
