"""Rating ladders, one per pool (a rules preset × a player count, and the ladder of bot matches):
players, built-in bots and registered bots on the same Elo (app/accounts/ratings.py), each rated
game applied once whatever the retries. A pool's keys share one hash slot (app/ops/keys.py)."""

from ..engine.rules import PRESETS
from ..ops.connection import RedisClient
from ..ops.keys import MATCH_POOL, leaderboard_key, rated_games_key, ratings_key
from . import ratings

FIELDS = ("rating", "games", "wins", "losses")

# KEYS: the pool's records, its rated games, its board. ARGV: game id, now (s), how long a rated
# game is remembered (s), the initial rating, then (entrant, change, won 1|0) for each entrant.
# One rated game, whole, and only once.
_RATE_GAME = """
if redis.call('ZADD', KEYS[2], 'NX', ARGV[2], ARGV[1]) == 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
for i = 5, #ARGV, 3 do
  local entrant = ARGV[i]
  redis.call('HSETNX', KEYS[1], entrant .. ':rating', ARGV[4])
  local rating = redis.call('HINCRBYFLOAT', KEYS[1], entrant .. ':rating', ARGV[i + 1])
  redis.call('HINCRBY', KEYS[1], entrant .. ':games', 1)
  redis.call('HINCRBY', KEYS[1], entrant .. (ARGV[i + 2] == '1' and ':wins' or ':losses'), 1)
  redis.call('ZADD', KEYS[3], rating, entrant)
end
return 1
"""


def pool_of(preset: str, players: int) -> str:
    return f"{preset}-{players}"


def pools() -> list[str]:
    """Every pool a rated game can be in: each preset with each player count it deals to."""
    return [pool_of(name, players) for name, rules in PRESETS.items() for players in rules.player_counts()]


class LadderStore:
    def __init__(self, client: RedisClient, rated_ttl: int):
        """`rated_ttl`: seconds a pool remembers a game it counted (longer than anything that can replay it)."""
        self.redis, self.rated_ttl = client, rated_ttl
        self._rate_game = client.register_script(_RATE_GAME)

    def rate(self, pool: str, game_id: str, now: float, changes: list[tuple[str, float, bool]]) -> bool:
        args = [game_id, now, self.rated_ttl, ratings.INITIAL_RATING]
        for entrant, change, won in changes:
            args += [entrant, change, int(won)]
        return bool(self._rate_game(keys=[ratings_key(pool), rated_games_key(pool), leaderboard_key(pool)], args=args))

    def records(self, pool: str, entrants: list[str]) -> dict[str, dict]:
        """The records of `entrants` in `pool` (those never rated there are absent)."""
        if not entrants:
            return {}
        values = self.redis.hmget(ratings_key(pool), [f"{e}:{f}" for e in entrants for f in FIELDS])
        found = {}
        for index, entrant in enumerate(entrants):
            raw = values[index * len(FIELDS):(index + 1) * len(FIELDS)]
            if raw[0] is not None:
                found[entrant] = dict(zip(FIELDS, (float(v or 0) for v in raw), strict=True))
        return found

    def everyone(self, pool: str) -> dict[str, dict]:
        ladder: dict[str, dict] = {}
        for field, value in self.redis.hgetall(ratings_key(pool)).items():
            entrant, _, name = field.decode().rpartition(":")
            ladder.setdefault(entrant, {})[name] = float(value)
        return ladder

    def board(self, pool: str, offset: int, limit: int) -> tuple[list[str], int]:
        """A page of the pool's entrants, best first, and how many there are."""
        key = leaderboard_key(pool)
        total = self.redis.zcard(key)
        if offset >= total:
            return [], total
        return [e.decode() for e in self.redis.zrevrange(key, offset, offset + limit - 1)], total


class Ladders:
    def __init__(self, store: LadderStore, clock):
        self.store, self.clock = store, clock

    def rate(self, pool: str, game_id: str, results: list[tuple[str, bool]]) -> bool:
        """Count a finished game (each entrant, and whether it won) in `pool`, once: False when it was already."""
        known = self.store.records(pool, [entrant for entrant, _ in results])
        before = [(record(known.get(entrant, {}))["rating"], won) for entrant, won in results]
        changes = [(entrant, change, won) for (entrant, won), change
                   in zip(results, ratings.game_changes(before), strict=True)]
        return self.store.rate(pool, game_id, self.clock(), changes)

    def records(self, pool: str, entrants: list[str]) -> dict[str, dict]:
        """Every entrant's record in `pool` (an unrated one's starting record)."""
        known = self.store.records(pool, entrants)
        return {entrant: record(known.get(entrant, {})) for entrant in entrants}

    def ladder(self, pool: str = MATCH_POOL) -> list[dict]:
        rows = [{"entrant": entrant, **record(rated)} for entrant, rated in self.store.everyone(pool).items()]
        return sorted(rows, key=lambda row: -row["rating"])

    def board(self, pool: str, offset: int, limit: int) -> tuple[list[dict], int]:
        entrants, total = self.store.board(pool, offset, limit)
        records = self.records(pool, entrants)
        return [{"rank": offset + index + 1, "entrant": entrant, **records[entrant]}
                for index, entrant in enumerate(entrants)], total


def record(rated: dict) -> dict:
    games = int(rated.get("games", 0))
    return {"rating": rated.get("rating", ratings.INITIAL_RATING), "games": games,
            "wins": int(rated.get("wins", 0)), "losses": int(rated.get("losses", 0)),
            "provisional": ratings.provisional(games)}
