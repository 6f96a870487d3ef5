"""Rating ladders, one per pool (a rules preset × a player count, and the ladder of bot matches):
players, built-in bots and registered bots on the same scale (app/accounts/ratings.py), each rated
game applied once whatever the retries. A pool's keys share one hash slot (app/ops/keys.py)."""

from ..engine.rules import PRESETS
from ..ops.connection import RedisClient
from ..ops.keys import MATCH_POOL, leaderboard_key, rated_games_key, ratings_key
from . import ratings

FIELDS = ("rating", "deviation", "games", "wins", "losses")
Camp = tuple[list[str], bool]  # a camp's entrants, and whether it won


def pool_of(preset: str, players: int) -> str:
    return f"{preset}-{players}"


def pools() -> list[str]:
    """Every pool a rated game can be in: each preset with each player count it deals to."""
    return [pool_of(name, players) for name, rules in PRESETS.items() for players in rules.player_counts()]


class LadderStore:
    def __init__(self, client: RedisClient, rated_ttl: int):
        """`rated_ttl`: seconds a pool remembers a game it counted (longer than anything that can replay it)."""
        self.redis, self.rated_ttl = client, rated_ttl

    def rate(self, pool: str, game_id: str, now: float, camps: list[Camp]) -> bool:
        """Count one game in `pool`, once: its entrants' ratings are read, rated and written in one
        transaction on the pool's keys (WATCH: a game finishing meanwhile in the pool makes this one
        read again), so no game is rated from ratings another has already changed. False when the
        pool had counted it."""
        records, rated, board = ratings_key(pool), rated_games_key(pool), leaderboard_key(pool)
        entrants = [entrant for team, _ in camps for entrant in team]

        def rate_once(pipe) -> bool:
            if pipe.zscore(rated, game_id) is not None:
                return False
            before = _records(entrants, pipe.hmget(records, _fields(entrants)))
            after = ratings.rate_camps([([(before[e]["rating"], before[e]["deviation"]) for e in team], won)
                                        for team, won in camps])
            pipe.multi()
            pipe.zadd(rated, {game_id: now})
            pipe.zremrangebyscore(rated, "-inf", now - self.rated_ttl)
            for (team, won), rated_team in zip(camps, after, strict=True):
                for entrant, (rating, deviation) in zip(team, rated_team, strict=True):
                    pipe.hset(records, mapping={f"{entrant}:rating": rating, f"{entrant}:deviation": deviation,
                                                f"{entrant}:games": before[entrant]["games"] + 1})
                    pipe.hincrby(records, f"{entrant}:{'wins' if won else 'losses'}", 1)
                    pipe.zadd(board, {entrant: rating})
            return True
        return self.redis.transaction(rate_once, records, rated, value_from_callable=True)

    def put(self, pool: str, entrant: str, rating: float, deviation: float = ratings.INITIAL_DEVIATION):
        """Set an entrant's rating (an operator's correction, a test's or a benchmark's starting ladder)."""
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(ratings_key(pool), mapping={f"{entrant}:rating": rating, f"{entrant}:deviation": deviation})
            pipe.zadd(leaderboard_key(pool), {entrant: rating})
            pipe.execute()

    def remove(self, pool: str, entrant: str):
        """The entrant leaves the pool's ladder (an erased person); the games rated stay counted."""
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hdel(ratings_key(pool), *_fields([entrant]))
            pipe.zrem(leaderboard_key(pool), entrant)
            pipe.execute()

    def records(self, pool: str, entrants: list[str]) -> dict[str, dict]:
        """The records of `entrants` in `pool` (those never rated there are absent)."""
        if not entrants:
            return {}
        found = _records(entrants, self.redis.hmget(ratings_key(pool), _fields(entrants)))
        return {entrant: record for entrant, record in found.items() if record["known"]}

    def everyone(self, pool: str) -> dict[str, dict]:
        ladder: dict[str, dict] = {}
        for field, value in self.redis.hgetall(ratings_key(pool)).items():
            entrant, _, name = field.decode().rpartition(":")
            ladder.setdefault(entrant, {})[name] = float(value)
        return {entrant: _record(found) for entrant, found in ladder.items()}

    def board(self, pool: str, offset: int, limit: int) -> tuple[list[str], int]:
        """A page of the pool's entrants, best first, and how many there are."""
        key = leaderboard_key(pool)
        total = self.redis.zcard(key)
        if offset >= total:
            return [], total
        return [e.decode() for e in self.redis.zrevrange(key, offset, offset + limit - 1)], total


def _fields(entrants: list[str]) -> list[str]:
    return [f"{entrant}:{field}" for entrant in entrants for field in FIELDS]


def _records(entrants: list[str], values: list) -> dict[str, dict]:
    return {entrant: _record({field: float(value) for field, value
                              in zip(FIELDS, values[index * len(FIELDS):(index + 1) * len(FIELDS)], strict=True)
                              if value is not None})
            for index, entrant in enumerate(entrants)}


def _record(found: dict[str, float]) -> dict:
    """An entrant's record from its fields: a record kept under Elo (no deviation) gets the one its
    number of games gives (ratings.migrated_deviation); one never rated, the initial rating."""
    games = int(found.get("games", 0))
    deviation = found.get("deviation")
    if deviation is None:
        deviation = ratings.migrated_deviation(games) if "rating" in found else ratings.INITIAL_DEVIATION
    return {"rating": found.get("rating", ratings.INITIAL_RATING), "deviation": deviation, "games": games,
            "wins": int(found.get("wins", 0)), "losses": int(found.get("losses", 0)), "known": "rating" in found}


class Ladders:
    def __init__(self, store: LadderStore, clock):
        self.store, self.clock = store, clock

    def rate(self, pool: str, game_id: str, camps: list[Camp]) -> bool:
        """Count a finished game (each camp's entrants, and whether it won) in `pool`, once: False
        when it was already."""
        return self.store.rate(pool, game_id, self.clock(), camps)

    def records(self, pool: str, entrants: list[str]) -> dict[str, dict]:
        """Every entrant's record in `pool` (an unrated one's starting record)."""
        known = self.store.records(pool, entrants)
        return {entrant: record(known.get(entrant)) for entrant in entrants}

    def ladder(self, pool: str = MATCH_POOL) -> list[dict]:
        rows = [{"entrant": entrant, **record(rated)} for entrant, rated in self.store.everyone(pool).items()]
        return sorted(rows, key=lambda row: -row["rating"])

    def board(self, pool: str, offset: int, limit: int) -> tuple[list[dict], int]:
        entrants, total = self.store.board(pool, offset, limit)
        records = self.records(pool, entrants)
        return [{"rank": offset + index + 1, "entrant": entrant, **records[entrant]}
                for index, entrant in enumerate(entrants)], total


def record(rated: dict | None) -> dict:
    """A record as answers show it (None: never rated in the pool)."""
    rated = rated or _record({})
    return {"rating": rated["rating"], "deviation": rated["deviation"], "games": rated["games"],
            "wins": rated["wins"], "losses": rated["losses"], "provisional": ratings.provisional(rated["deviation"])}
