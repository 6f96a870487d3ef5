"""Matchmaking in Redis. The atomic unit of pairing is one Lua script over one pool's keys, all
under the hash tag `{mm:<pool>}` (one slot on a Redis Cluster): a ticket is waiting, matched,
expired or cancelled by exactly one script run, so no ticket is ever in two games and a cancel
racing a match has one outcome. Scripts name the pool's other keys from their prefix (same slot).

Keys of a pool (app/ops/keys.py `matchmaking_key`): `waiting:<kind>` (ticket id -> rating, kind
rated or casual), `ticket:<id>` (a hash), `player:<id>` (their live ticket in the pool),
`group:<game id>` (a match's seats, JSON, until its game is made), `unmade` (game id -> when
matched, ms: groups whose game may not be made yet).
"""

import json
from typing import Any

from ..ops.connection import RedisClient
from ..ops.keys import MATCHMAKING_QUEUES_KEY, matchmaking_key

# Shared by both scripts. `window` is how far a ticket's rating reaches after waiting; a group
# is made of tickets that all reach each other through the widest window among them.
_GROUPING = """
local now, players = tonumber(ARGV[1]), tonumber(ARGV[2])
local base, widen, widest = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local prefix, teams, ttl = ARGV[6], ARGV[7] == '1', tonumber(ARGV[8])
local function window(created)
  return math.min(widest, base + widen * (now - tonumber(created)) / 1000)
end
local function ticket(id)
  local t = redis.call('HGETALL', prefix .. 'ticket:' .. id)
  local found = {}
  for i = 1, #t, 2 do found[t[i]] = t[i + 1] end
  found.id = id
  return found
end
local function release(member)
  -- the ticket leaves the queue, and its player may queue again in this pool
  redis.call('ZREM', KEYS[1], member.id)
  if redis.call('GET', prefix .. 'player:' .. member.player) == member.id then
    redis.call('DEL', prefix .. 'player:' .. member.player)
  end
end
local function make_group(members, game_id, bots)
  -- seats: with teams, the best and the weakest partners against the two between (balanced);
  -- bots (a bot fill) take the seats left.
  table.sort(members, function(a, b) return tonumber(a.rating) > tonumber(b.rating) end)
  local order = {1, 2, 4, 3}
  local seats = {}
  for i, member in ipairs(members) do
    local seat = (teams and players == 4) and order[i] or i
    seats[seat] = {player = member.player, name = member.name, ticket = member.id}
    redis.call('HSET', prefix .. 'ticket:' .. member.id, 'status', 'matched', 'game_id', game_id, 'seat', seat - 1)
    release(member)
  end
  for seat = 1, players do
    if seats[seat] == nil then seats[seat] = {bot = bots} end
  end
  local group = cjson.encode({game_id = game_id, seats = seats, rated = members[1].rated == '1'})
  redis.call('SET', prefix .. 'group:' .. game_id, group, 'EX', ttl)
  redis.call('ZADD', KEYS[2], now, game_id)
  return group
end
local function reach(members)
  local low, high, wide = math.huge, -math.huge, 0
  for _, m in ipairs(members) do
    local r = tonumber(m.rating)
    low, high, wide = math.min(low, r), math.max(high, r), math.max(wide, window(m.created))
  end
  return high - low <= wide
end
"""

# KEYS: the queue's waiting set, the pool's unmade games, the new ticket, the player's live ticket.
# ARGV: the grouping's 8, then ticket id, player id, name, rating, deadline (ms), bot fill, rated
# (1|0), a game id for a match. Answers {'exists', id}, {'waiting'} or {'matched', group}.
_SUBMIT = _GROUPING + """
local id, player, name, rating = ARGV[9], ARGV[10], ARGV[11], tonumber(ARGV[12])
local live = redis.call('GET', KEYS[4])
if live and redis.call('HGET', prefix .. 'ticket:' .. live, 'status') == 'waiting' then return {'exists', live} end
redis.call('HSET', KEYS[3], 'player', player, 'name', name, 'rating', ARGV[12], 'created', ARGV[1],
           'deadline', ARGV[13], 'bot_fill', ARGV[14], 'rated', ARGV[15], 'status', 'waiting')
redis.call('EXPIRE', KEYS[3], ttl)
redis.call('SET', KEYS[4], id, 'EX', ttl)
redis.call('ZADD', KEYS[1], rating, id)
local rank = redis.call('ZRANK', KEYS[1], id)
-- the 50 tickets on each side of the new one, by rating: the nearest are the ones it can meet
local near = redis.call('ZRANGE', KEYS[1], math.max(0, rank - 50), rank + 50)
local me = ticket(id)
local candidates = {}
for _, other in ipairs(near) do
  if other ~= id then
    local t = ticket(other)
    if t.player ~= player and reach({me, t}) then table.insert(candidates, t) end
  end
end
if #candidates < players - 1 then return {'waiting'} end
table.sort(candidates, function(a, b)
  local da, db = math.abs(tonumber(a.rating) - rating), math.abs(tonumber(b.rating) - rating)
  if da ~= db then return da < db end
  return tonumber(a.created) < tonumber(b.created)
end)
local members = {me}
for i = 1, players - 1 do table.insert(members, candidates[i]) end
if not reach(members) then return {'waiting'} end
return {'matched', make_group(members, ARGV[16], '')}
"""

# KEYS: the queue's waiting set, the pool's unmade games. ARGV: the grouping's 8, then game ids
# to use. Tickets past their deadline get their bot fill or expire; the others, by rating, are
# grouped where their widened windows reach. Answers a list of {'matched', group} and
# {'expired', ticket id, player id}.
_SWEEP = _GROUPING + """
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local next_id, out, waiting = 9, {}, {}
for _, id in ipairs(ids) do
  local t = ticket(id)
  if t.status ~= 'waiting' then
    redis.call('ZREM', KEYS[1], id)
  elseif tonumber(t.deadline) <= now then
    if t.bot_fill ~= '' and ARGV[next_id] then
      table.insert(out, {'matched', make_group({t}, ARGV[next_id], t.bot_fill)})
      next_id = next_id + 1
    elseif t.bot_fill == '' then
      redis.call('HSET', prefix .. 'ticket:' .. id, 'status', 'expired')
      release(t)
      table.insert(out, {'expired', id, t.player})
    end
  else
    table.insert(waiting, t)
  end
end
local i = 1
while i + players - 1 <= #waiting and ARGV[next_id] do
  local members = {}
  for j = i, i + players - 1 do table.insert(members, waiting[j]) end
  if reach(members) then
    table.insert(out, {'matched', make_group(members, ARGV[next_id], '')})
    next_id = next_id + 1
    i = i + players
  else
    i = i + 1
  end
end
return out
"""

# KEYS: the ticket, the queue's waiting set, the player's live ticket. ARGV: ticket id.
# Answers 'now' when it was waiting and is cancelled now; else its status as it stands.
_CANCEL = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'waiting' then return status end
redis.call('HSET', KEYS[1], 'status', 'cancelled')
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('DEL', KEYS[3]) end
return 'now'
"""


def queue_name(pool: str, rated: bool) -> str:
    return f"{pool}:{'rated' if rated else 'casual'}"


class MatchmakingStore:
    def __init__(self, client: RedisClient):
        self.redis = client
        self._submit = client.register_script(_SUBMIT)
        self._sweep = client.register_script(_SWEEP)
        self._cancel = client.register_script(_CANCEL)

    def submit(self, pool: str, grouping: list, ticket: dict, game_id: str) -> tuple[str, Any]:
        key = lambda part: matchmaking_key(pool, part)  # noqa: E731
        self.redis.sadd(MATCHMAKING_QUEUES_KEY, queue_name(pool, ticket["rated"]))
        answer = self._submit(
            keys=[key(f"waiting:{'rated' if ticket['rated'] else 'casual'}"), key("unmade"),
                  key(f"ticket:{ticket['id']}"), key(f"player:{ticket['player']}")],
            args=[*grouping, ticket["id"], ticket["player"], ticket["name"], ticket["rating"], ticket["deadline"],
                  ticket["bot_fill"] or "", int(ticket["rated"]), game_id])
        kind = answer[0].decode()
        return kind, (json.loads(answer[1]) if kind == "matched" else answer[1].decode() if kind == "exists" else None)

    def sweep(self, queue: str, grouping: list, game_ids: list[str]) -> list[tuple]:
        pool, _, kind = queue.rpartition(":")
        answer = self._sweep(keys=[matchmaking_key(pool, f"waiting:{kind}"), matchmaking_key(pool, "unmade")],
                             args=[*grouping, *game_ids])
        found: list[tuple] = []
        for item in answer:
            if item[0] == b"matched":
                found.append(("matched", json.loads(item[1])))
            else:
                found.append(("expired", item[1].decode(), item[2].decode()))
        return found

    def cancel(self, pool: str, ticket_id: str, player_id: str, rated: bool) -> bool:
        """True when the ticket was waiting and is cancelled by this call."""
        return self._cancel(keys=[matchmaking_key(pool, f"ticket:{ticket_id}"),
                                  matchmaking_key(pool, f"waiting:{'rated' if rated else 'casual'}"),
                                  matchmaking_key(pool, f"player:{player_id}")], args=[ticket_id]) == b"now"

    def ticket(self, pool: str, ticket_id: str) -> dict | None:
        found = self.redis.hgetall(matchmaking_key(pool, f"ticket:{ticket_id}"))
        return {k.decode(): v.decode() for k, v in found.items()} or None

    def queues(self) -> list[str]:
        return sorted(q.decode() for q in self.redis.smembers(MATCHMAKING_QUEUES_KEY))

    def unmade(self, pool: str, matched_before_ms: int) -> list[str]:
        key = matchmaking_key(pool, "unmade")
        return [g.decode() for g in self.redis.zrangebyscore(key, "-inf", matched_before_ms, start=0, num=100)]

    def group(self, pool: str, game_id: str) -> dict | None:
        raw = self.redis.get(matchmaking_key(pool, f"group:{game_id}"))
        return json.loads(raw) if raw else None

    def made(self, pool: str, game_id: str):
        """The group's game exists: it leaves the unmade set (its record expires on its own)."""
        self.redis.zrem(matchmaking_key(pool, "unmade"), game_id)
