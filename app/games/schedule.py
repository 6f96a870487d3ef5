"""What a game owes later, noted outside its document for the sweepers: the move it owes (a bot's,
or a turn timer's end), the reminder of a long turn, the settlement of a game that may finish.

Each note lives in one of a few sets split by the game's bucket (app/ops/keys.py), outside the
game's own slot: a sweeper reads every bucket in one pipeline.
"""

import logging
import time

from ..ops.connection import RedisClient, StoreUnavailable
from ..ops.keys import INDEX_BUCKETS, bucket_of, due_moves_key, reminders_due_key, settlement_owed_key

log = logging.getLogger(__name__)

# A move owed at `due` (ms) by game `member`: the earliest note is kept, and its score always
# changes (one ms earlier when an earlier note stands), so a note made after a sweeper read the
# set can never match the score that sweeper would forget (_FORGET_DUE_MOVE).
NOTE_FUNCTION = """
local function note_due(key, member, due)
  local current = redis.call('ZSCORE', key, member)
  due = tonumber(due)
  if current and tonumber(current) <= due then due = tonumber(current) - 1 end
  return redis.call('ZADD', key, due, member)
end
"""


# KEYS: due moves set. ARGV: game id, due time (ms).
_NOTE_DUE_MOVE = NOTE_FUNCTION + "return note_due(KEYS[1], ARGV[1], ARGV[2])"


# KEYS: due moves set. ARGV: game id, the score it was read with. Drops it unless noted again since.
_FORGET_DUE_MOVE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""


class GameSchedule:
    def __init__(self, client: RedisClient):
        self.redis = client
        self._forget_due_move = client.register_script(_FORGET_DUE_MOVE)
        self._note_due_move = client.register_script(_NOTE_DUE_MOVE)

    def note_due_move(self, game_id: str, due_at: float, later: bool = False):
        """`game_id` may owe a move (a bot's, or a turn timer's) at `due_at` (epoch seconds): the
        sweeper looks only at games whose noted time has passed. A writer keeps the earliest note
        (one that loses its race never delays the sweep) and changes its score, so a sweeper that
        read the older note cannot forget this one; `later` (the sweeper's) moves a note forward."""
        key = due_moves_key(bucket_of(game_id))
        if later:
            self.redis.zadd(key, {game_id: int(due_at * 1000)}, gt=True)
        else:
            self._note_due_move(keys=[key], args=[game_id, int(due_at * 1000)])

    def note_due_move_apart(self, game_id: str, due_at: float):
        """The note a move's write makes first on a Redis Cluster, where the note's set is in another
        slot, often on another shard: a shard that is down (a master lost, its replica not yet
        promoted) would otherwise make every move of the games whose note it keeps a 503, though
        their own shard answers. The write goes on without it: the game's own document says what
        it owes (`move_due_at`), and the sweeper notes it again from there once it is overdue
        (Sweeper.renote_from_listings), as it does for a note lost in a failover."""
        try:
            self.note_due_move(game_id, due_at)
        except StoreUnavailable as error:
            log.warning("the move owed by game %s is not noted (%s): the sweeper notes it from the game", game_id,
                        error)

    def moves_due_before(self, seconds_since_epoch: float, limit: int) -> list[tuple[str, int]]:
        """(game id, due time in ms) of the moves due before the given time, oldest first."""
        pipe = self.redis.pipeline(transaction=False)
        for bucket in range(INDEX_BUCKETS):
            pipe.zrangebyscore(due_moves_key(bucket), "-inf", int(seconds_since_epoch * 1000),
                               start=0, num=limit, withscores=True)
        found = sorted((pair for bucket in pipe.execute() for pair in bucket), key=lambda pair: pair[1])
        return [(member.decode(), int(score)) for member, score in found[:limit]]

    def forget_due_move(self, game_id: str, due_at: int):
        """Drop a game that owes no move any more, unless a newer move was noted meanwhile."""
        self._forget_due_move(keys=[due_moves_key(bucket_of(game_id))], args=[game_id, due_at])

    def note_reminder(self, game_id: str, version: int, due_at: float):
        """A reminder owed to whoever the game awaits at `version`, at `due_at` (epoch seconds)."""
        self.redis.zadd(reminders_due_key(bucket_of(game_id)), {f"{game_id}/{version}": int(due_at * 1000)})

    def take_reminders_due(self, seconds_since_epoch: float, limit: int) -> list[tuple[str, int]]:
        """(game id, version) of the reminders due by then, each taken by one caller only."""
        pipe = self.redis.pipeline(transaction=False)
        for bucket in range(INDEX_BUCKETS):
            pipe.zrangebyscore(reminders_due_key(bucket), "-inf", int(seconds_since_epoch * 1000), start=0, num=limit)
        taken = []
        for member in (member.decode() for bucket in pipe.execute() for member in bucket):
            game_id, _, version = member.rpartition("/")
            if self.redis.zrem(reminders_due_key(bucket_of(game_id)), member):
                taken.append((game_id, int(version)))
        return taken

    def note_settlement(self, game_id: str):
        """`game_id`'s next write may finish it, and its players' records and ratings are then owed."""
        self.redis.zadd(settlement_owed_key(bucket_of(game_id)), {game_id: int(time.time() * 1000)}, nx=True)

    def settlements_noted_before(self, seconds_since_epoch: float, limit: int) -> list[str]:
        pipe = self.redis.pipeline(transaction=False)
        for bucket in range(INDEX_BUCKETS):
            pipe.zrangebyscore(settlement_owed_key(bucket), "-inf", int(seconds_since_epoch * 1000), start=0, num=limit)
        return [member.decode() for bucket in pipe.execute() for member in bucket][:limit]

    def forget_settlement(self, game_id: str):
        self.redis.zrem(settlement_owed_key(bucket_of(game_id)), game_id)
