"""Players in Redis: a document, the games they sit in, their record and their inbox of notices,
all under the hash tag `{player:<id>}` (app/ops/keys.py)."""

import json
import time

from ..accounts.inbox import Inboxes
from ..ops.connection import RedisClient
from ..ops.connection import dump as _dump
from ..ops.keys import (app_external_ids_key, player_counted_key, player_games_key, player_inbox_key, player_key,
                        player_keys, player_notices_channel, player_record_key, player_token_uses_key,
                        player_tokens_key, player_told_key, player_tournaments_key)
from .document import PlayerDocument, TokenRecord

GAMES_KEPT = 500  # a player's listing covers their newest 500 games

# KEYS: the games counted, the record. ARGV: game id, now (s), won (1|0), how long a game is
# remembered (s). A finished game counts once in a player's record, whatever the retries.
_COUNT_GAME = """
if redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1]) == 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[4]))
redis.call('HINCRBY', KEYS[2], 'games', 1)
if ARGV[3] == '1' then redis.call('HINCRBY', KEYS[2], 'wins', 1) end
return 1
"""


class PlayerStore:
    def __init__(self, client: RedisClient, inboxes: Inboxes, idle_ttl: int, counted_ttl: int):
        """`idle_ttl`: seconds a player is kept after their token was last used; `counted_ttl`: how
        long a counted game is remembered (longer than a finished game is kept)."""
        self.redis, self.inboxes = client, inboxes
        self.idle_ttl, self.counted_ttl = idle_ttl, counted_ttl
        self._count_game = client.register_script(_COUNT_GAME)

    def create(self, player_id: str, doc: PlayerDocument) -> bool:
        return bool(self.redis.set(player_key(player_id), _dump(doc), nx=True, ex=self.idle_ttl))

    def save(self, doc: PlayerDocument) -> bool:
        """Write an existing player's document again (False for a player gone meanwhile)."""
        return bool(self.redis.set(player_key(doc["id"]), _dump(doc), xx=True, keepttl=True))

    def load(self, player_id: str, used: bool = False) -> PlayerDocument | None:
        """A player's document; `used` (they are here) keeps it another idle ttl."""
        key = player_key(player_id)
        raw = self.redis.getex(key, ex=self.idle_ttl) if used else self.redis.get(key)
        return json.loads(raw) if raw else None

    # ----- tokens ----------------------------------------------------------------------------------
    def check_token(self, player_id: str, token_id: str) -> tuple[PlayerDocument | None, TokenRecord | None,
                                                                   str | None]:
        """(the document, the token's record, its last use) in one round trip; the player is kept
        another idle ttl (their token was presented)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.getex(player_key(player_id), ex=self.idle_ttl)
        pipe.hget(player_tokens_key(player_id), token_id)
        pipe.hget(player_token_uses_key(player_id), token_id)
        pipe.expire(player_tokens_key(player_id), self.idle_ttl)
        pipe.expire(player_token_uses_key(player_id), self.idle_ttl)
        doc, record, used = pipe.execute()[:3]
        return (json.loads(doc) if doc else None, json.loads(record) if record else None,
                used.decode() if used else None)

    def mark_used(self, player_id: str, token_id: str, when: str):
        self.redis.hset(player_token_uses_key(player_id), token_id, when)

    def add_token(self, player_id: str, record: TokenRecord):
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(player_tokens_key(player_id), record["id"], _dump(record))
        pipe.expire(player_tokens_key(player_id), self.idle_ttl)
        pipe.execute()

    def tokens(self, player_id: str) -> tuple[list[TokenRecord], dict[str, str]]:
        """The player's device tokens, oldest first, and when each token was last used."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hvals(player_tokens_key(player_id))
        pipe.hgetall(player_token_uses_key(player_id))
        records, uses = pipe.execute()
        return (sorted((json.loads(r) for r in records), key=lambda r: r["created_at"]),
                {k.decode(): v.decode() for k, v in uses.items()})

    def remove_tokens(self, player_id: str, token_ids: list[str]) -> int:
        if not token_ids:
            return 0
        pipe = self.redis.pipeline(transaction=False)
        pipe.hdel(player_tokens_key(player_id), *token_ids)
        pipe.hdel(player_token_uses_key(player_id), *token_ids)
        return pipe.execute()[0]

    # ----- an app's own ids, tournaments entered, erasure ------------------------------------------
    def claim_external_id(self, app_id: str, external_id: str, proposed: str) -> str:
        """The player the app's `external_id` names: `proposed` unless it names one already (two
        sign-ins of one new id at once agree on one player)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hsetnx(app_external_ids_key(app_id), external_id, proposed)
        pipe.hget(app_external_ids_key(app_id), external_id)
        return pipe.execute()[1].decode()

    def release_external_id(self, app_id: str, external_id: str, player_id: str):
        """The app's id names no player any more (if it still named `player_id`)."""
        key = app_external_ids_key(app_id)
        if self.redis.hget(key, external_id) == player_id.encode():
            self.redis.hdel(key, external_id)

    def entered_tournament(self, player_id: str, tournament_id: str):
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(player_tournaments_key(player_id), {tournament_id: int(time.time() * 1000)}, nx=True)
        pipe.expire(player_tournaments_key(player_id), self.idle_ttl)
        pipe.execute()

    def tournament_ids(self, player_id: str) -> list[str]:
        return [t.decode() for t in self.redis.zrange(player_tournaments_key(player_id), 0, -1)]

    def notices(self, player_id: str) -> list[tuple[str, dict]]:
        """Every notice the player's inbox still holds, oldest first."""
        return [(entry_id.decode(), json.loads(fields[b"message"]))
                for entry_id, fields in self.redis.xrange(player_inbox_key(player_id))]

    def drop_notices_naming(self, player_id: str, needles: list[bytes]) -> int:
        """Forget the notices in the player's inbox whose text holds any of `needles` (another
        person's name or id, erased)."""
        key = player_inbox_key(player_id)
        naming = [entry_id for entry_id, fields in self.redis.xrange(key)
                  if any(needle in fields[b"message"] for needle in needles)]
        return self.redis.xdel(key, *naming) if naming else 0

    def erase(self, player_id: str):
        """Every key of the player, gone (one slot: one command)."""
        self.redis.delete(*player_keys(player_id))

    def add_game(self, player_id: str, game_id: str):
        key = player_games_key(player_id)
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, {game_id: int(time.time() * 1000)}, nx=True)
            pipe.zremrangebyrank(key, 0, -GAMES_KEPT - 1)
            pipe.expire(key, self.idle_ttl)
            pipe.execute()

    def game_ids(self, player_id: str) -> list[str]:
        """The player's games, newest first."""
        return [g.decode() for g in self.redis.zrevrange(player_games_key(player_id), 0, GAMES_KEPT - 1)]

    def forget_games(self, player_id: str, game_ids: list[str]):
        if game_ids:
            self.redis.zrem(player_games_key(player_id), *game_ids)

    def count_game(self, player_id: str, game_id: str, won: bool) -> bool:
        return bool(self._count_game(keys=[player_counted_key(player_id), player_record_key(player_id)],
                                     args=[game_id, time.time(), int(won), self.counted_ttl]))

    def record(self, player_id: str) -> dict:
        found = self.redis.hgetall(player_record_key(player_id))
        return {"games": int(found.get(b"games", 0)), "wins": int(found.get(b"wins", 0))}

    def notify(self, player_id: str, notice: dict, once: str | None = None) -> str | None:
        """The notice's id in the player's inbox; `once`: its key, None when that key was told already."""
        return self.inboxes.post(player_inbox_key(player_id), player_notices_channel(player_id), notice,
                                 (player_told_key(player_id), once) if once else None)

    def inbox_after(self, player_id: str, after: str) -> list[tuple[str, dict]]:
        return self.inboxes.after(player_inbox_key(player_id), after)
