"""Live games in Redis. Every write is a compare-and-set on the version.

One game's keys share one hash slot (app/ops/keys.py), which lets one Lua script check the
version, replace the document and append the events atomically: of two writers on the same
version exactly one wins, and nothing is half-applied. What lives outside that slot follows the
write: the sweepers' notes (`schedule`, games/schedule.py) and the status listings (`listings`,
games/listings.py).
"""

import json
import time
import zlib
from collections.abc import Sequence
from typing import NamedTuple

import redis

from ..ops.connection import (PLAIN_FEED, SHARDED_FEED, CannotWrite, RedisClient, StoreUnavailable,
                              has_sharded_pubsub)
from ..ops.connection import dump as _dump
from .document import GameDocument
from .listings import GameListings
from .schedule import NOTE_FUNCTION, GameSchedule
from ..ops.keys import bucket_of, changes_channel, due_moves_key, events_key, rematch_key, state_key, write_probe_key


# KEYS: state hash, event list, change channel, and on one Redis (not a cluster: another slot) the
# due moves set when the new state owes a move. ARGV: expected version, new document, ttl (0:
# forever), the publish command (SPUBLISH on a cluster: the notice stays on the game's shard),
# the owed move's due time (ms) and the game id (for the note), events... The owed move is noted
# in the same step as the write, before it: one round trip, and never a write without its note.
_COMPARE_AND_SET = NOTE_FUNCTION + """
if KEYS[4] then note_due(KEYS[4], ARGV[6], ARGV[5]) end
local current = redis.call('HGET', KEYS[1], 'version')
if not current then return {-1, 0} end
if current ~= ARGV[1] then return {0, tonumber(current)} end
local version = tonumber(current) + 1
redis.call('HSET', KEYS[1], 'version', version, 'doc', ARGV[2])
for i = 7, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
else
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[2])
end
redis.call(ARGV[4], KEYS[3], version)
return {1, version}
"""


# KEYS: state hash, event list. ARGV: document, ttl seconds (0: forever), events...
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'version', 1, 'doc', ARGV[1])
for i = 3, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
return 1
"""


# KEYS: state hash, event list. ARGV: the version packed, the packed game, its listing line. A
# finished game becomes one value, its document and events compressed, beside the line a listing
# shows of it (read without unpacking the rest); unless a write came since (none should).
_PACK = """
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'packed', ARGV[2], 'listing', ARGV[3])
redis.call('HDEL', KEYS[1], 'doc')
redis.call('DEL', KEYS[2])
return 1
"""



# A cluster node that no longer owns the slot (a failover) or is a replica now: nothing was written.
_REDIRECTED = (redis.exceptions.AskError, redis.exceptions.ReadOnlyError)  # AskError: MovedError's base


def _live_masters(nodes: dict) -> list[str]:
    """CLUSTER NODES' masters that own slots and are connected, not failing (host:port)."""
    return [address for address, node in nodes.items()
            if "master" in node["flags"].split(",") and node["slots"] and node["connected"]
            and "fail" not in node["flags"].split(",")]


def _online_replicas(replication: dict) -> int:
    """A master's replicas whose sync is done (INFO replication's `state=online`): one still loading
    the master's snapshot is listed, connected, and acknowledges no write yet."""
    return sum(1 for name, replica in replication.items()
               if name.startswith("slave") and isinstance(replica, dict) and replica.get("state") == "online")


def _no_master(redirected: Exception) -> Exception:
    """What a write met that went nowhere: the store is unavailable for that game (503)."""
    return redis.exceptions.ClusterDownError(f"the game's slot has no master this process can reach: {redirected}")


def _unpacked(packed: bytes) -> dict:
    return json.loads(zlib.decompress(packed))


# KEYS: a finished game's rematch record (a hash: next, declined, asks, ask:<seat>, offered:<seat>).
# ARGV: ask | decline | read, the seat, a proposed next game id, ttl (s), then the seats to offer
# the next game to (a decline: how many asks accept it, two, or one where one person plays bots).
# Answers {state, next id, created (1|0), seats to tell of the offer...}: state `declined` (final:
# nothing changes after it), `asked`, `accepted` (a decline found it accepted: too late),
# `declined_now`, `none` (a decline or read before any ask), or `open` (a read).
_DECIDE_REMATCH = """
local record, what, seat = KEYS[1], ARGV[1], ARGV[2]
local next_id = redis.call('HGET', record, 'next') or ''
if redis.call('HGET', record, 'declined') then return {'declined', next_id, 0} end
if what == 'read' then return {next_id == '' and 'none' or 'open', next_id, 0} end
if what == 'decline' then
  if next_id == '' then return {'none', '', 0} end
  if tonumber(redis.call('HGET', record, 'asks') or '0') >= tonumber(ARGV[5]) then return {'accepted', next_id, 0} end
  redis.call('HSET', record, 'declined', seat)
  return {'declined_now', next_id, 0}
end
local created = redis.call('HSETNX', record, 'next', ARGV[3])
next_id = redis.call('HGET', record, 'next')
if redis.call('HSETNX', record, 'ask:' .. seat, 1) == 1 then redis.call('HINCRBY', record, 'asks', 1) end
redis.call('HSETNX', record, 'offered:' .. seat, 1)
local answer = {'asked', next_id, created}
for i = 5, #ARGV do
  if redis.call('HSETNX', record, 'offered:' .. ARGV[i], 1) == 1 then table.insert(answer, ARGV[i]) end
end
redis.call('EXPIRE', record, ARGV[4])
return answer
"""


class RematchDecision(NamedTuple):
    state: str
    next_id: str | None
    created: bool  # this ask set the next game's id
    offer_to: list[int]  # the seats this ask is the first to offer the game to


class LoadedGame(NamedTuple):
    """A game read from the store: the version it is at, and its document."""
    version: int
    doc: GameDocument


class GameMissing(Exception):
    pass


class WriteOutcomeUnknown(Exception):
    """The store stopped answering while a compare-and-set was under way: it may have been applied."""


class GameExists(Exception):
    """A game with this id is stored already (a retried create, or a job that ran twice)."""


class VersionConflict(Exception):
    def __init__(self, current_version: int):
        super().__init__(f"the game is at version {current_version}")
        self.current_version = current_version


class GameStore:
    def __init__(self, client: RedisClient, ttl_by_status: dict[str, int], replicas: int = 0,
                 replica_wait_ms: int = 1000):
        self.redis = client
        self.ttl_by_status = ttl_by_status
        self.replicas, self.replica_wait_ms = replicas, replica_wait_ms
        self.feed_commands = SHARDED_FEED if has_sharded_pubsub(client) else PLAIN_FEED
        self.schedule, self.listings = GameSchedule(client), GameListings(client)
        self._cas = client.register_script(_COMPARE_AND_SET)
        self._create = client.register_script(_CREATE)
        self._pack = client.register_script(_PACK)
        self._decide_rematch = client.register_script(_DECIDE_REMATCH)

    def ping(self):
        """Raises StoreUnavailable unless the store answers (a readiness probe)."""
        self.redis.ping()

    def write_refusal(self) -> str | None:
        """Why the store takes no write now (full at its maxmemory, a failed snapshot, read-only),
        found by writing a probe; None when it takes them. On a cluster, the probe's own shard."""
        try:
            self.redis.set(write_probe_key(), int(time.time()), ex=60)
        except CannotWrite as error:
            return f"the store takes no writes: {error}; every write answers 503 until it does"
        return None

    def create(self, game_id: str, doc: GameDocument, events: list[dict]) -> int:
        created, replicated = self._written(self._create, game_id, [state_key(game_id), events_key(game_id)],
                                            [_dump(doc), self._ttl(doc), *map(_dump, events)])
        if not created:
            raise GameExists(game_id)
        if not replicated:
            raise WriteOutcomeUnknown()
        self.listings.list_under(game_id, doc["status"], None)
        return 1

    def decide_rematch(self, game_id: str, what: str, seat: int = -1, proposed: str = "",
                       offer_to: Sequence[int] = ()) -> "RematchDecision":
        """One step of `game_id`'s rematch, decided whole (_DECIDE_REMATCH): `ask` (for `seat`,
        proposing the next game's id, offering it to `offer_to` once each), `decline` (`offer_to`:
        [the asks that make it accepted]), or `read`."""
        answer = self._decide_rematch(keys=[rematch_key(game_id)],
                                      args=[what, seat, proposed, self.ttl_by_status["finished"], *offer_to])
        return RematchDecision(answer[0].decode(), answer[1].decode() or None, bool(int(answer[2])),
                               [int(s) for s in answer[3:]])

    def _ttl(self, doc) -> int:
        """Every game expires: open ones unclaimed, active ones without a write, finished ones at
        last; each write starts its status's time again. An active game's time starts after its
        turn timer (a correspondence game's turn may last days longer than the default)."""
        ttl = self.ttl_by_status[doc["status"]]
        timer = doc.get("turn_timeout_seconds") if doc["status"] == "active" else None
        return ttl + timer if ttl and timer else ttl

    def load(self, game_id: str) -> LoadedGame:
        version, doc, packed = self.redis.hmget(state_key(game_id), "version", "doc", "packed")
        if version is None:
            raise GameMissing(game_id)
        return LoadedGame(int(version), json.loads(doc) if doc is not None else _unpacked(packed)["doc"])

    def pack(self, game_id: str, version: int, listing: dict) -> bool:
        """Keep a finished game as one compressed value (its document and every event): about a
        seventh of the bytes, read through the same calls; `listing` (its line in a listing) is kept
        beside it, plain. False if it changed since `version`."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hget(state_key(game_id), "doc")
        pipe.lrange(events_key(game_id), 0, -1)
        doc, events = pipe.execute()
        if doc is None or not events:
            return False
        packed = zlib.compress(b'{"doc":%s,"events":[%s]}' % (doc, b",".join(events)), 9)
        return bool(self._pack(keys=[state_key(game_id), events_key(game_id)], args=[version, packed, _dump(listing)]))

    def listed(self, game_ids: list[str]) -> list[tuple[int, dict | None, GameDocument | None] | None]:
        """What a listing needs of each game, in one pipeline: (version, the listing line a finished
        game was packed with, None) without unpacking its record, else (version, None, its document);
        None for a game gone."""
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hmget(state_key(game_id), "version", "listing", "doc")
        found: list[tuple[int, dict | None, GameDocument | None] | None] = []
        for game_id, (version, listing, doc) in zip(game_ids, pipe.execute() if game_ids else [], strict=True):
            if version is None:
                found.append(None)
            elif listing is not None:
                found.append((int(version), json.loads(listing), None))
            else:  # live, or packed before listing lines were kept
                found.append((int(version), None, json.loads(doc) if doc is not None else self.load(game_id).doc))
        return found

    def version(self, game_id: str) -> int:
        version = self.redis.hget(state_key(game_id), "version")
        if version is None:
            raise GameMissing(game_id)
        return int(version)

    def compare_and_set(self, game_id: str, expected: int, doc: GameDocument, events: list[dict],
                        previous_status: str, look_at: float | None = None) -> int:
        """Write `doc` as the next version if the game is still at `expected`; else VersionConflict.
        `look_at`: the move the new state owes is noted for the sweeper to look at then, before the
        write: in the same script on one Redis, first and on its own on a cluster (its set is in another slot,
        and a shard down there does not stop the write: GameSchedule.note_due_move_apart)."""
        keys = [state_key(game_id), events_key(game_id), changes_channel(game_id)]
        if look_at is not None and isinstance(self.redis, redis.RedisCluster):
            self.schedule.note_due_move_apart(game_id, look_at)
        elif look_at is not None:
            keys.append(due_moves_key(bucket_of(game_id)))
        (outcome, version), replicated = self._written(
            self._cas, game_id, keys, [expected, _dump(doc), self._ttl(doc), self.feed_commands[0],
                                       int(look_at * 1000) if look_at is not None else 0, game_id, *map(_dump, events)])
        if outcome == -1:
            raise GameMissing(game_id)
        if outcome == 0:
            raise VersionConflict(version)
        if not replicated:
            raise WriteOutcomeUnknown()
        if doc["status"] != previous_status:
            self.listings.list_under(game_id, doc["status"], previous_status)
        return version

    def _written(self, script, game_id, keys, args):
        """Run a write script: (its answer, whether `replicas` replicas have the write). Redis
        replicates asynchronously; with `replicas` set, WAIT on the connection that wrote (on a
        cluster, the game's own shard) holds the answer until that many replicas have it, so an
        acknowledged write survives its master's failover. A store that stops answering leaves
        the write's outcome unknown.

        That pipeline goes to the node the cached slot map names. After a failover this process
        slept through, that node answers MOVED and writes nothing: the slots are learnt again and
        the write goes to the new owner, once; moved again, the store is unavailable (a 503)."""
        if not self.replicas:
            try:
                return script(keys=keys, args=args), True
            except CannotWrite:  # refused whole (full, read-only): its outcome is known, nothing
                raise
            except StoreUnavailable as error:
                raise WriteOutcomeUnknown() from error
        try:
            return self._written_and_replicated(script, keys, args)
        except _REDIRECTED as redirected:  # nothing was written
            if not isinstance(self.redis, redis.RedisCluster):
                raise _no_master(redirected) from redirected
            self.redis.nodes_manager.initialize()
        try:
            return self._written_and_replicated(script, keys, args)
        except _REDIRECTED as redirected:
            raise _no_master(redirected) from redirected

    def _written_and_replicated(self, script, keys, args):
        shard = self.redis
        if isinstance(shard, redis.RedisCluster):
            shard = shard.get_node_from_key(keys[0]).redis_connection
        pipe = shard.pipeline(transaction=False)
        script(keys=keys, args=args, client=pipe)
        pipe.execute_command("WAIT", self.replicas, self.replica_wait_ms)
        try:
            answer, acknowledged = pipe.execute()
        except CannotWrite:  # nothing written; a replica's READONLY is a redirection (_written)
            raise
        except StoreUnavailable as error:
            raise WriteOutcomeUnknown() from error
        return answer, acknowledged >= self.replicas

    def replication_gaps(self) -> list[str]:
        """With write replicas asked for, the masters that have fewer replicas than that: their
        writes cannot be acknowledged (each waits `replica_wait_ms`, then answers 503)."""
        if not self.replicas:
            return []
        if isinstance(self.redis, redis.RedisCluster):
            masters = _live_masters(self.redis.cluster_nodes())  # the cluster's own view, not the cached map
            counts = {address: _online_replicas(self._master(address).info("replication")) for address in masters}
        else:
            counts = {"redis": _online_replicas(self.redis.info("replication"))}
        return [f"master {name} has {count} of the {self.replicas} replicas each write waits for: writes of "
                "its games answer 503 until a replica is back"
                for name, count in counts.items() if count < self.replicas]

    def _master(self, address: str):
        """The client of a cluster node CLUSTER NODES named (learnt first if the cached map lacks it)."""
        host, _, port = address.rpartition(":")
        if self.redis.get_node(host=host, port=int(port)) is None:
            self.redis.nodes_manager.initialize()
        return self.redis.get_node(host=host, port=int(port)).redis_connection

    def events(self, game_id: str, after: int, limit: int) -> list[dict]:
        """The events after `after`: a live game's from its list, a finished one's from its packed
        value (one pipeline, one round trip; no script, so a node that lost its script cache after
        a failover, or another node down, does not hold the read up)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.lrange(events_key(game_id), after, after + limit - 1)
        pipe.hget(state_key(game_id), "packed")
        listed, packed = pipe.execute()
        if listed or packed is None:
            return [json.loads(item) for item in listed]
        return _unpacked(packed)["events"][after:after + limit]

    def event_counts(self, game_ids: list[str]) -> dict[str, int]:
        """How many events each game has, in one pipeline (a game has one at least: a packed game's
        list is gone; a game that is gone has none)."""
        if not game_ids:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.llen(events_key(game_id))
        counts = dict(zip(game_ids, pipe.execute(), strict=True))
        for game_id in [game_id for game_id, count in counts.items() if not count]:
            try:
                counts[game_id] = self.load(game_id).doc["event_count"]
            except GameMissing:
                counts[game_id] = 0
        return counts
