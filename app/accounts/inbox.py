"""Inboxes of notices, one Redis stream each (a registered bot's turns, a player's notices), each
announced on its own channel so that the process's one subscription wakes its readers."""

import json

from ..ops.connection import RedisClient
from ..ops.connection import dump as _dump

INBOX_LENGTH = 1000  # notices kept per inbox: a reader away for longer reads its games' views instead
INBOX_TTL = 24 * 3600
NOTICES_PER_READ = 100

# KEYS: the inbox stream, its channel, and (a notice told once) the set of keys told. ARGV: the
# notice, inbox length, ttl, the publish command (SPUBLISH on a cluster), the notice's key. The notice
# is kept and announced in one step, so a reader that subscribed before reading the inbox misses none
# (app/live/hub.py serves every inbox on one subscription); a key told already adds nothing.
_POST = """
if KEYS[3] then
    if redis.call('SADD', KEYS[3], ARGV[5]) == 0 then return false end
    redis.call('EXPIRE', KEYS[3], ARGV[3])
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'message', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call(ARGV[4], KEYS[2], id)
return id
"""


class Inboxes:
    def __init__(self, client: RedisClient, publish: str):
        self.redis, self.publish = client, publish
        self._post = client.register_script(_POST)

    def post(self, inbox: str, channel: str, notice: dict, once: tuple[str, str] | None = None) -> str | None:
        """The notice's id in the inbox. `once`: (the set of keys told, the notice's key): None when
        that key was told already."""
        told, key = once or (None, "")
        posted = self._post(keys=[inbox, channel, *([told] if told else [])],
                            args=[_dump(notice), INBOX_LENGTH, INBOX_TTL, self.publish, key])
        return posted.decode() if posted else None

    def after(self, inbox: str, after: str) -> list[tuple[str, dict]]:
        """The notices posted after stream id `after` ("0": all kept), at once: waiting is the live hub's."""
        answer = self.redis.xread({inbox: after}, count=NOTICES_PER_READ)
        entries = answer[0][1] if answer else []
        return [(entry_id.decode(), json.loads(fields[b"message"])) for entry_id, fields in entries]
