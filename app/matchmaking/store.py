"""Matchmaking in Redis. An app's quick play is one hash slot, `{mm:<app>}` (app/ops/keys.py): every
pool of the app, its tickets and its players' live tickets, so one script run decides a ticket
(waiting, matched, expired or cancelled) with the player's other pools in view: no ticket is in
two games, a player has one live ticket across pools, and a cancel racing a match has one outcome.

Keys of an app (`matchmaking_key(app, part)`): `waiting:<queue>` (ticket id -> rating; a queue is
a pool, rated or casual, and a turn timer), `ticket:<id>` (a hash), `player:<id>` (their live
ticket), `due` (ticket id -> when the sweep must look at it again: its window's next widening or
its deadline, ms), `seen` (player -> when last present, ms: players with a waiting ticket),
`group:<game id>` (a match's seats, JSON, until its game is made), `unmade` (game id -> when
matched, ms). The sweep reads only what is due: its cost does not grow with the waiting tickets.
"""

import json
from typing import Any

from ..ops.connection import RedisClient
from ..ops.keys import MATCHMAKING_APPS_KEY, matchmaking_key

# Shared by every script. `window` is how far a ticket's rating reaches after waiting; a group is
# made of tickets that all reach each other through the widest window among them. A player
# not seen within the presence grace is never grouped: the sweep ends their ticket.
_GROUPING = """
local now, base, widen, widest = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local prefix, ttl, grace, recheck = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
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
local function present(player)
  local seen = redis.call('ZSCORE', prefix .. 'seen', player)
  return seen and tonumber(seen) >= now - grace
end
local function release(t, status)
  -- the ticket leaves its queue, and its player may queue again
  redis.call('HSET', prefix .. 'ticket:' .. t.id, 'status', status)
  redis.call('ZREM', prefix .. 'waiting:' .. t.queue, t.id)
  redis.call('ZREM', prefix .. 'due', t.id)
  if redis.call('GET', prefix .. 'player:' .. t.player) == t.id then
    redis.call('DEL', prefix .. 'player:' .. t.player)
    redis.call('ZREM', prefix .. 'seen', t.player)
  end
end
local function make_group(members, game_id, bots)
  -- seats: with teams, the best and the weakest partners against the two between (balanced);
  -- bots (a bot fill) take the seats left, and a game with a bot is never rated.
  local first = members[1]
  local players, teams = tonumber(first.players), first.teams == '1'
  table.sort(members, function(a, b) return tonumber(a.rating) > tonumber(b.rating) end)
  local order = {1, 2, 4, 3}
  local seats = {}
  for i, member in ipairs(members) do
    local seat = (teams and players == 4) and order[i] or i
    seats[seat] = {player = member.player, name = member.name, ticket = member.id}
    release(member, 'matched')
    redis.call('HSET', prefix .. 'ticket:' .. member.id, 'game_id', game_id, 'seat', seat - 1)
  end
  for seat = 1, players do
    if seats[seat] == nil then seats[seat] = {bot = bots} end
  end
  local group = cjson.encode({game_id = game_id, pool = first.pool, seats = seats, turn_seconds = tonumber(first.turn),
                              rated = first.rated == '1' and bots == ''})
  redis.call('SET', prefix .. 'group:' .. game_id, group, 'EX', ttl)
  redis.call('ZADD', prefix .. 'unmade', now, game_id)
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
local function try_group(me, game_id)
  -- the nearest 50 tickets on each side of `me` in its queue, within the widest reach: no other can meet it
  local queue = prefix .. 'waiting:' .. me.queue
  local rating = tonumber(me.rating)
  local near = redis.call('ZREVRANGEBYSCORE', queue, rating, rating - widest, 'LIMIT', 0, 51)
  for _, other in ipairs(redis.call('ZRANGEBYSCORE', queue, rating, rating + widest, 'LIMIT', 0, 51)) do
    table.insert(near, other)
  end
  local candidates, seen_ids = {}, {}
  for _, other in ipairs(near) do
    if other ~= me.id and not seen_ids[other] then
      seen_ids[other] = true
      local t = ticket(other)
      if t.status == 'waiting' and t.player ~= me.player and present(t.player) and reach({me, t}) then
        table.insert(candidates, t)
      end
    end
  end
  if #candidates < tonumber(me.players) - 1 then return nil end
  table.sort(candidates, function(a, b)
    local da, db = math.abs(tonumber(a.rating) - rating), math.abs(tonumber(b.rating) - rating)
    if da ~= db then return da < db end
    return tonumber(a.created) < tonumber(b.created)
  end)
  local members = {me}
  for i = 1, tonumber(me.players) - 1 do table.insert(members, candidates[i]) end
  if not reach(members) then return nil end
  return make_group(members, game_id, '')
end
local function look_again(t)
  -- the sweep looks at a ticket again when its window has widened by another `recheck` ms of
  -- waiting, and at its deadline; once at its widest only new tickets meet it (they look at it)
  local next_look = tonumber(t.deadline)
  if window(t.created) < widest then next_look = math.min(next_look, now + recheck) end
  redis.call('ZADD', prefix .. 'due', next_look, t.id)
end
"""

# KEYS: the new ticket, the player's live ticket. ARGV: the grouping's 8, then ticket id, player,
# name, rating, deadline (ms), bot fill, rated (1|0), pool, players, teams (1|0), queue, turn
# seconds, a game id for a match. Answers {'exists', id}, {'waiting'} or {'matched', group}.
_SUBMIT = _GROUPING + """
local id, player = ARGV[9], ARGV[10]
local live = redis.call('GET', KEYS[2])
if live and redis.call('HGET', prefix .. 'ticket:' .. live, 'status') == 'waiting' then return {'exists', live} end
redis.call('HSET', KEYS[1], 'player', player, 'name', ARGV[11], 'rating', ARGV[12], 'created', ARGV[1],
           'deadline', ARGV[13], 'bot_fill', ARGV[14], 'rated', ARGV[15], 'pool', ARGV[16], 'players', ARGV[17],
           'teams', ARGV[18], 'queue', ARGV[19], 'turn', ARGV[20], 'status', 'waiting')
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('SET', KEYS[2], id, 'EX', ttl)
redis.call('ZADD', prefix .. 'seen', now, player)
redis.call('ZADD', prefix .. 'waiting:' .. ARGV[19], ARGV[12], id)
local me = ticket(id)
local group = try_group(me, ARGV[21])
if group then return {'matched', group} end
look_again(me)
return {'waiting'}
"""

# ARGV: the grouping's 8, then how many tickets to look at, then game ids to use. Players not
# seen within the grace lose their ticket; tickets past their deadline get their bot fill or
# expire; the others due are grouped where their widened windows reach. Answers a list of
# {'matched', group} and {'expired', ticket id, player id, why}.
_SWEEP = _GROUPING + """
local limit, next_id, out = tonumber(ARGV[9]), 10, {}
for _, player in ipairs(redis.call('ZRANGEBYSCORE', prefix .. 'seen', '-inf', now - grace, 'LIMIT', 0, limit)) do
  local live = redis.call('GET', prefix .. 'player:' .. player)
  local t = live and ticket(live)
  if t and t.status == 'waiting' then
    release(t, 'expired')
    redis.call('HSET', prefix .. 'ticket:' .. t.id, 'why', 'absent')
    table.insert(out, {'expired', t.id, player, 'absent'})
  else
    redis.call('ZREM', prefix .. 'seen', player)
  end
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', prefix .. 'due', '-inf', now, 'LIMIT', 0, limit)) do
  local t = ticket(id)
  if t.status ~= 'waiting' then
    redis.call('ZREM', prefix .. 'due', id)
  elseif tonumber(t.deadline) <= now then
    local why = present(t.player) and 'deadline' or 'absent'
    if t.bot_fill ~= '' and why == 'deadline' and ARGV[next_id] then
      table.insert(out, {'matched', make_group({t}, ARGV[next_id], t.bot_fill)})
      next_id = next_id + 1
    elseif t.bot_fill == '' or why == 'absent' then
      release(t, 'expired')
      redis.call('HSET', prefix .. 'ticket:' .. id, 'why', why)
      table.insert(out, {'expired', id, t.player, why})
    end
  elseif ARGV[next_id] and present(t.player) then
    local group = try_group(t, ARGV[next_id])
    if group then
      table.insert(out, {'matched', group})
      next_id = next_id + 1
    else
      look_again(t)
    end
  else
    look_again(t)
  end
end
return out
"""

# KEYS: the ticket. ARGV: the grouping's 8. Answers 'now' when it was waiting and is cancelled
# now; else its status as it stands.
_CANCEL = _GROUPING + """
local t = ticket(ARGV[9])
if t.status ~= 'waiting' then return t.status end
release(t, 'cancelled')
return 'now'
"""

# ARGV: the grouping's 8, then the player. They are here: their waiting ticket stays.
_SEEN = _GROUPING + """
return redis.call('ZADD', prefix .. 'seen', 'XX', 'CH', now, ARGV[9])
"""


class MatchmakingStore:
    def __init__(self, client: RedisClient):
        self.redis = client
        self._submit = client.register_script(_SUBMIT)
        self._sweep = client.register_script(_SWEEP)
        self._cancel = client.register_script(_CANCEL)
        self._seen = client.register_script(_SEEN)

    def submit(self, app_id: str, grouping: list, ticket: dict, game_id: str) -> tuple[str, Any]:
        key = lambda part: matchmaking_key(app_id, part)  # noqa: E731
        self.redis.zadd(MATCHMAKING_APPS_KEY, {app_id: grouping[0]})
        answer = self._submit(
            keys=[key(f"ticket:{ticket['id']}"), key(f"player:{ticket['player']}")],
            args=[*grouping, ticket["id"], ticket["player"], ticket["name"], ticket["rating"], ticket["deadline"],
                  ticket["bot_fill"] or "", int(ticket["rated"]), ticket["pool"], ticket["players"],
                  int(ticket["teams"]), ticket["queue"], ticket["turn_seconds"], game_id])
        kind = answer[0].decode()
        return kind, (json.loads(answer[1]) if kind == "matched" else answer[1].decode() if kind == "exists" else None)

    def sweep(self, app_id: str, grouping: list, limit: int, game_ids: list[str]) -> list[tuple]:
        answer = self._sweep(keys=[matchmaking_key(app_id, "due")], args=[*grouping, limit, *game_ids])
        found: list[tuple] = []
        for item in answer:
            if item[0] == b"matched":
                found.append(("matched", json.loads(item[1])))
            else:
                found.append(("expired", item[1].decode(), item[2].decode(), item[3].decode()))
        return found

    def cancel(self, app_id: str, grouping: list, ticket_id: str) -> bool:
        """True when the ticket was waiting and is cancelled by this call."""
        return self._cancel(keys=[matchmaking_key(app_id, f"ticket:{ticket_id}")],
                            args=[*grouping, ticket_id]) == b"now"

    def seen(self, app_id: str, grouping: list, player_id: str):
        """The player is here (a stream of theirs, a read of their ticket): a waiting ticket stays."""
        self._seen(keys=[matchmaking_key(app_id, "seen")], args=[*grouping, player_id])

    def ticket(self, app_id: str, ticket_id: str) -> dict | None:
        found = self.redis.hgetall(matchmaking_key(app_id, f"ticket:{ticket_id}"))
        return {k.decode(): v.decode() for k, v in found.items()} or None

    def live_ticket(self, app_id: str, player_id: str) -> str | None:
        """The player's waiting ticket's id (a player has one at most across the app's pools)."""
        found = self.redis.get(matchmaking_key(app_id, f"player:{player_id}"))
        return found.decode() if found else None

    def apps(self, active_since_ms: int) -> list[str]:
        """The apps that queued a ticket since then (those quiet longer are forgotten)."""
        self.redis.zremrangebyscore(MATCHMAKING_APPS_KEY, "-inf", f"({active_since_ms}")
        return [app.decode() for app in self.redis.zrange(MATCHMAKING_APPS_KEY, 0, -1)]

    def unmade(self, app_id: str, matched_before_ms: int) -> list[str]:
        key = matchmaking_key(app_id, "unmade")
        return [g.decode() for g in self.redis.zrangebyscore(key, "-inf", matched_before_ms, start=0, num=100)]

    def group(self, app_id: str, game_id: str) -> dict | None:
        raw = self.redis.get(matchmaking_key(app_id, f"group:{game_id}"))
        return json.loads(raw) if raw else None

    def made(self, app_id: str, game_id: str):
        """The group's game exists: it leaves the unmade set (its record expires on its own)."""
        self.redis.zrem(matchmaking_key(app_id, "unmade"), game_id)
