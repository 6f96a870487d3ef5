"""Tournaments in Redis: a document each (with its revision and its stream of changes, all in the
tournament's slot), each app's list of them, and those running for the sweep."""

import json
import time

from ..ops.connection import RedisClient, dump
from ..ops.keys import (running_tournaments_key, tournament_changes_channel, tournament_events_key, tournament_key,
                        tournament_owed_key, tournament_revision_key, tournaments_key)
from ..ops.scope import app_of
from .document import OwedNotice, TournamentDocument

EVENTS_KEPT = 200  # each standings event is whole: a reader further behind needs only the last

# KEYS: the document, its revision, its events, its channel, the notices owed. ARGV: the revision the
# change was made from (0: a new tournament), the document, the ttl, the publish command (SPUBLISH on
# a cluster), how many notices it owes, then each (its field, the notice), then the events. Saved,
# announced, owed and kept in one step, and only over the revision it was made from: two processes
# moving a tournament on at once cannot both save, nor add an entrant between.
_SAVE = """
if (tonumber(redis.call('GET', KEYS[2]) or '0')) ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
redis.call('SET', KEYS[2], tonumber(ARGV[1]) + 1, 'EX', ARGV[3])
local owed = tonumber(ARGV[5])
for i = 6, 5 + 2 * owed, 2 do
    redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1])
end
if owed > 0 then redis.call('EXPIRE', KEYS[5], ARGV[3]) end
local last = nil
for i = 6 + 2 * owed, #ARGV do
    last = redis.call('XADD', KEYS[3], 'MAXLEN', '~', '""" + str(EVENTS_KEPT) + """', '*', 'message', ARGV[i])
end
if last then
    redis.call('EXPIRE', KEYS[3], ARGV[3])
    redis.call(ARGV[4], KEYS[4], last)
end
return 1
"""


class TournamentStore:
    def __init__(self, client: RedisClient, ttl: int, queue: str, publish: str):
        """`ttl`: how long a tournament is kept after its last change (its matches' time); `queue`:
        the deployment's bot queue, whose running tournaments this store tracks (as MatchStore does
        its matches: a deployment's workers move on its own tournaments only); `publish`: the
        command that announces a change (SPUBLISH on a cluster)."""
        self.redis, self.ttl, self.publish = client, ttl, publish
        self.running_key = running_tournaments_key(queue)
        self._save = client.register_script(_SAVE)

    def create(self, doc: TournamentDocument, events: list[dict], owed: list[OwedNotice]) -> bool:
        """False when a tournament of this id exists already (a retried request)."""
        if not self.save(doc, events, owed):
            return False
        now = int(time.time() * 1000)
        listed = tournaments_key(app_of(doc["id"]))
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(listed, {doc["id"]: now})
        pipe.zremrangebyscore(listed, "-inf", now - self.ttl * 1000)
        pipe.zadd(self.running_key, {doc["id"]: max(now, int(doc["starts_at"] * 1000))})  # due at its start
        pipe.execute()
        return True

    def save(self, doc: TournamentDocument, events: list[dict], owed: list[OwedNotice] | None = None) -> bool:
        """Save `doc` over its revision, the revision then one more, with its `events` and the
        notices it `owed`: False when it was changed since it was read (read it again and redo the
        change)."""
        tournament_id, made_from = doc["id"], doc["revision"]
        doc["revision"] = made_from + 1
        notices = [part for notice in owed or [] for part in (_owed_field(notice), json.dumps(notice))]
        saved = self._save(keys=[tournament_key(tournament_id), tournament_revision_key(tournament_id),
                                 tournament_events_key(tournament_id), tournament_changes_channel(tournament_id),
                                 tournament_owed_key(tournament_id)],
                           args=[made_from, json.dumps(doc), self.ttl, self.publish, len(owed or []), *notices,
                                 *map(dump, events)])
        if not saved:
            doc["revision"] = made_from
        return bool(saved)

    def owed(self, tournament_id: str) -> list[OwedNotice]:
        """The notices its saves owe and nobody has told yet (none, but after a crash or between a
        save and its telling)."""
        return [json.loads(notice) for notice in self.redis.hvals(tournament_owed_key(tournament_id))]

    def paid(self, tournament_id: str, owed: list[OwedNotice]):
        if owed:
            self.redis.hdel(tournament_owed_key(tournament_id), *map(_owed_field, owed))

    def drop_events_naming(self, tournament_id: str, name: str):
        """Forget every kept event whose text holds `name` (an erased person's)."""
        key, needle = tournament_events_key(tournament_id), json.dumps(name)[1:-1].encode()
        naming = [entry_id for entry_id, fields in self.redis.xrange(key) if needle in fields[b"message"]]
        if naming:
            self.redis.xdel(key, *naming)

    def load(self, tournament_id: str) -> TournamentDocument | None:
        found = self.redis.get(tournament_key(tournament_id))
        return json.loads(found) if found else None

    def load_many(self, tournament_ids: list[str]) -> list[TournamentDocument]:
        """The tournaments still kept, in order, in one pipeline (their keys are in slots of their own)."""
        pipe = self.redis.pipeline(transaction=False)
        for tournament_id in tournament_ids:
            pipe.get(tournament_key(tournament_id))
        return [json.loads(found) for found in (pipe.execute() if tournament_ids else []) if found]

    def events_after(self, tournament_id: str, after: str) -> list[tuple[str, dict]]:
        """Its changes after stream id `after`, oldest first."""
        entries = self.redis.xrange(tournament_events_key(tournament_id), f"({after}", "+", count=EVENTS_KEPT)
        return [(entry_id.decode(), json.loads(fields[b"message"])) for entry_id, fields in entries]

    def before_last_event(self, tournament_id: str) -> str:
        """The stream id just before its last change (a reader that starts there reads the last only)."""
        last = self.redis.xrevrange(tournament_events_key(tournament_id), "+", "-", count=1)
        if not last:
            return "0-0"
        ms, seq = map(int, last[0][0].decode().split("-"))
        return f"{ms}-{seq - 1}" if seq else f"{ms - 1}-{2**64 - 1}"

    def page(self, app_id: str, offset: int, limit: int) -> tuple[list[str], int]:
        """An app's tournament ids, newest first, and how many there are (a page past the end: none,
        and never an offset beyond what Redis counts in)."""
        listed = tournaments_key(app_id)
        total = self.redis.zcard(listed)
        if offset >= total:
            return [], total
        return [i.decode() for i in self.redis.zrevrange(listed, offset, offset + limit - 1)], total

    def running(self, looked_at_before: float, limit: int = 100) -> list[str]:
        found = self.redis.zrangebyscore(self.running_key, "-inf", int(looked_at_before * 1000),
                                         start=0, num=limit)
        return [i.decode() for i in found]

    def looked_at(self, tournament_id: str, at: float):
        """Due again `older_than` after `at` (now; an open tournament's start)."""
        self.redis.zadd(self.running_key, {tournament_id: int(at * 1000)}, xx=True)

    def finished(self, tournament_id: str):
        self.redis.zrem(self.running_key, tournament_id)


def _owed_field(notice: OwedNotice) -> str:
    return f"{notice['player_id']} {notice['once']}"
