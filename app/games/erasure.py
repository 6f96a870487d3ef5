"""A person erased from the games they sat in: each seat they held (or left to a bot, or had kept
for them by a rematch) is anonymous from then on, in the game's document, its events and its
listing line, packed or not. The game itself stays: its moves, scores and replay are the other
players' too.

Every change is made on the game's own keys (one slot) by a compare-and-set on what was read:
a live game's version moves on (a move based on the old document then answers 412 and is made
again on the new one); a packed game is written back packed."""

import json
import zlib

from ..ops.connection import RedisClient
from ..ops.connection import dump as _dump
from ..ops.keys import events_key, state_key
from .document import GameDocument
from .records import summary

ERASED_NAME = "Deleted player"

# KEYS: state hash, event list. ARGV: the version read, packed (1|0) as read, the new document (or
# packed value), its listing line ('' for none), then pairs of (event index, new event). Nothing is
# written if the game moved or was packed since it was read.
_REWRITE = """
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
local packed = redis.call('HEXISTS', KEYS[1], 'packed') == 1
if packed ~= (ARGV[2] == '1') then return 0 end
if packed then
  redis.call('HSET', KEYS[1], 'packed', ARGV[3])
else
  redis.call('HSET', KEYS[1], 'doc', ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'version', 1)
end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'listing', ARGV[4]) end
for i = 5, #ARGV, 2 do redis.call('LSET', KEYS[2], tonumber(ARGV[i]), ARGV[i + 1]) end
return 1
"""
ATTEMPTS = 20


def erase_from_document(doc: GameDocument, player_id: str) -> set[int]:
    """Take `player_id` off the document's seats, in place; the seats changed."""
    changed = set()
    for seat, info in enumerate(doc["seats"]):
        if info.get("player") == player_id:
            info["name"], info["player"] = ERASED_NAME, None
            changed.add(seat)
        if info.get("left_by") == player_id:
            info["name"], info["left_by"] = f"{info.get('bot')} bot (for {ERASED_NAME})", None
            changed.add(seat)
        kept_for = info.get("kept_for")
        if kept_for is not None and kept_for["player"] == player_id:
            kept_for["player"] = None
            changed.add(seat)
    return changed


def _erased_event(event: dict, seats: set[int]) -> bool:
    if event.get("type") == "seat_taken" and event.get("seat") in seats:
        event["name"] = ERASED_NAME
        return True
    return False


class GameErasure:
    def __init__(self, client: RedisClient):
        self.redis = client
        self._rewrite = client.register_script(_REWRITE)

    def erase(self, game_id: str, player_id: str) -> bool:
        """Take the player off one game (False: the game is gone, or held nothing of theirs)."""
        for _ in range(ATTEMPTS):
            outcome = self._erase_once(game_id, player_id)
            if outcome is not None:
                return outcome
        raise RuntimeError(f"game {game_id} kept moving while its seats were erased")

    def _erase_once(self, game_id: str, player_id: str) -> bool | None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.hmget(state_key(game_id), "version", "doc", "packed", "listing")
        pipe.lrange(events_key(game_id), 0, -1)
        (version, doc_text, packed, listing), events = pipe.execute()
        if version is None:
            return False
        whole = json.loads(zlib.decompress(packed)) if packed is not None and doc_text is None else None
        doc: GameDocument = whole["doc"] if whole else json.loads(doc_text)
        seats = erase_from_document(doc, player_id)
        if not seats:
            return False
        line = _dump(summary(doc, int(version))) if listing is not None else ""
        changed_events: list[int | str] = []
        written: bytes | str
        if whole:
            for event in whole["events"]:
                _erased_event(event, seats)
            written = zlib.compress(_dump(whole).encode(), 9)
        else:
            written = _dump(doc)
            for index, raw in enumerate(events):
                event = json.loads(raw)
                if _erased_event(event, seats):
                    changed_events += [index, _dump(event)]
        done = self._rewrite(keys=[state_key(game_id), events_key(game_id)],
                             args=[int(version), int(whole is not None), written, line, *changed_events])
        return True if done else None
