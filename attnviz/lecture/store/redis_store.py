"""The lecture store in a real Redis server (redis-py): what the class server's several processes share, and what
outlives any one of them (the class server runs redis-server with append-only persistence, `appendfsync always`,
so an acknowledged answer survives a crash of Redis too).

Keys, all under one prefix (default "attnviz:"):
    room:<code>       hash: plan, step, revealed (",1,3,"), step_started, started, version, keyhash, touched,
                      n:<step> (how many sessions answered the step), spent:<step> (seconds on a step left earlier),
                      owner (the browser that made it), admitted ("1": an admitted lecturer's), answered ("1")
    answers:<code>    hash: "<step>:<session>" -> the answer (one per session per step: HSET replaces)
    rooms             sorted set: code -> when last touched (the room limit, and forgetting expired rooms)
    flood:<session>   sorted set: the times of a session's answers in the last minute
    plan:<id>, plans  an uploaded plan's bytes; sorted set id -> upload order (the oldest goes first)
    plan-makers       hash: id -> "1" or "0" (an admitted lecturer's or not) followed by the owner's browser id
    link:<id>         hash: q (the query), t (when made)

Every change is one Lua script (atomic: two processes answering at once, or Next pressed on two phones, cannot
interleave). Lifetimes are checked against `clock` (injectable for the tests) and also given to Redis with EXPIRE,
so a forgotten room or link leaves no key behind. The presenter key is kept only as its SHA-256.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import math
import time
from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from attnviz.lecture.store.base import (
    Answer,
    LectureStore,
    LimitReached,
    RoomState,
    StoreError,
    StoreLimits,
    StoreUnavailable,
    WrongKey,
    answer_text,
    browser_full,
    clean_code,
    clean_key,
    clean_link_id,
    clean_owner,
    clean_plan_id,
    clean_session,
    link_query,
    new_code,
    new_key,
    plan_bytes,
    server_full,
    step_number,
)
from attnviz.lecture.store.memory import MAX_ANSWERS, link_id_of

TIMEOUT_S = 1.0  # a page waits at most about this long (twice, with the one retry) for an unreachable store

# KEYS: room, answers, rooms. ARGV: code, keyhash, plan, now, ttl, ttl_seconds, room limit, key prefix, owner,
# admitted ("1"/"0"), rooms per browser, idle seconds. Which room goes for a new one: attnviz/lecture/store/base.py.
CREATE = """
local now, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
local members = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')  -- least recently changed first
local live = {}
for i = 1, #members, 2 do
  local c, touched = members[i], tonumber(members[i + 1])
  local room = ARGV[8] .. 'room:' .. c
  if now - touched > ttl or redis.call('EXISTS', room) == 0 then
    redis.call('DEL', room, ARGV[8] .. 'answers:' .. c)
    redis.call('ZREM', KEYS[3], c)
  else
    local h = redis.call('HMGET', room, 'owner', 'admitted', 'answered')
    live[#live + 1] = {c, touched, h[1] or '', h[2] ~= '0', h[3] == '1'}
  end
end
local function drop(i)
  local c = live[i][1]
  redis.call('DEL', ARGV[8] .. 'room:' .. c, ARGV[8] .. 'answers:' .. c)
  redis.call('ZREM', KEYS[3], c)
  table.remove(live, i)
end
if ARGV[9] ~= '' then
  local own, first = 0, nil
  for i, r in ipairs(live) do
    if r[3] == ARGV[9] then
      own = own + 1
      if not first and not r[5] then first = i end
    end
  end
  if own >= tonumber(ARGV[11]) then
    if not first then return 'browser' end
    drop(first)
  end
end
if #live >= tonumber(ARGV[7]) then
  local pick = nil
  for i, r in ipairs(live) do  -- the oldest without answers not an admitted lecturer's, else an admitted one's idle
    if not r[5] then
      if not r[4] then pick = i; break end
      if not pick and now - r[2] >= tonumber(ARGV[12]) then pick = i end
    end
  end
  if not pick then return 'full' end
  drop(pick)
end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'taken' end
redis.call('HSET', KEYS[1], 'plan', ARGV[3], 'step', 1, 'revealed', ',', 'step_started', ARGV[4], 'started', ARGV[4],
           'version', 1, 'keyhash', ARGV[2], 'touched', ARGV[4], 'owner', ARGV[9], 'admitted', ARGV[10])
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
return 'ok'
"""

# What every presenter script starts with. KEYS: room, answers, rooms. ARGV: code, keyhash, step, now, ttl, ttl_seconds
PRESENTER = """
local now, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
local h = redis.call('HMGET', KEYS[1], 'keyhash', 'touched', 'step', 'revealed')
if not h[1] or now - tonumber(h[2]) > ttl then return {'gone'} end
if h[1] ~= ARGV[2] then return {'wrongkey'} end
local function touched()
  redis.call('HINCRBY', KEYS[1], 'version', 1)
  redis.call('HSET', KEYS[1], 'touched', ARGV[4])
  redis.call('EXPIRE', KEYS[1], ARGV[6])
  redis.call('EXPIRE', KEYS[2], ARGV[6])
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
end
"""
GO_TO = PRESENTER + """
if h[3] ~= ARGV[3] then
  -- the step left keeps its time so far; the step entered goes on from the time it had (a step come back to)
  local started = tonumber(redis.call('HGET', KEYS[1], 'step_started'))
  redis.call('HSET', KEYS[1], 'spent:' .. h[3], string.format('%.17g', now - started))
  local before = redis.call('HGET', KEYS[1], 'spent:' .. ARGV[3])
  local start = before and string.format('%.17g', now - tonumber(before)) or ARGV[4]
  redis.call('HSET', KEYS[1], 'step', ARGV[3], 'step_started', start)
  touched()
end
return {'ok', redis.call('HGETALL', KEYS[1])}
"""
REVEAL = PRESENTER + """
if not string.find(h[4], ',' .. ARGV[3] .. ',', 1, true) then
  redis.call('HSET', KEYS[1], 'revealed', h[4] .. ARGV[3] .. ',')
  touched()
end
return {'ok', redis.call('HGETALL', KEYS[1])}
"""

# KEYS: room, answers, rooms, flood:<session>, flood sequence.
# ARGV: code, step, session, value, now, ttl, ttl_seconds, answers a minute, answers a step keeps
ANSWER = """
local now, ttl = tonumber(ARGV[5]), tonumber(ARGV[6])
local h = redis.call('HMGET', KEYS[1], 'touched', 'revealed', 'n:' .. ARGV[2])
if not h[1] or now - tonumber(h[1]) > ttl then return {'gone'} end
if string.find(h[2], ',' .. ARGV[2] .. ',', 1, true) then return {'revealed'} end
local field = ARGV[2] .. ':' .. ARGV[3]
local had = redis.call('HEXISTS', KEYS[2], field)
if had == 0 and tonumber(h[3] or '0') >= tonumber(ARGV[9]) then return {'full'} end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. (now - 60))
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[8]) then return {'flood'} end
redis.call('ZADD', KEYS[4], now, redis.call('INCR', KEYS[5]))
redis.call('EXPIRE', KEYS[4], 61)
redis.call('HSET', KEYS[2], field, ARGV[4])
if had == 0 then redis.call('HINCRBY', KEYS[1], 'n:' .. ARGV[2], 1) end
redis.call('HSET', KEYS[1], 'answered', 1)
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'touched', ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[7])
redis.call('EXPIRE', KEYS[2], ARGV[7])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
return {'ok', redis.call('HGET', KEYS[1], 'n:' .. ARGV[2])}
"""

# KEYS: plan:<id>, plans, plans sequence, plan-makers, rooms. ARGV: id, bytes, plans kept, key prefix, owner, admitted
# ("1"/"0"), plans per browser, now, room ttl. Which plan goes for a new one: attnviz/lecture/store/base.py.
PUT_PLAN = """
local prefix = ARGV[4]
local maker = redis.call('HGET', KEYS[4], ARGV[1])
if maker or redis.call('EXISTS', KEYS[1]) == 1 then  -- the same file again: the newest; an admitted lecturer's now
  redis.call('SET', KEYS[1], ARGV[2])
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1])
  if ARGV[6] == '1' and (not maker or string.sub(maker, 1, 1) ~= '1') then
    redis.call('HSET', KEYS[4], ARGV[1], '1' .. ARGV[5])
  end
  return 'ok'
end
local running = {}  -- the plans a live room runs
local members = redis.call('ZRANGE', KEYS[5], 0, -1, 'WITHSCORES')
for i = 1, #members, 2 do
  if tonumber(ARGV[8]) - tonumber(members[i + 1]) <= tonumber(ARGV[9]) then
    local p = redis.call('HGET', prefix .. 'room:' .. members[i], 'plan')
    if p then running[p] = true end
  end
end
local info = {}
for i, p in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do  -- oldest first
  local m = redis.call('HGET', KEYS[4], p) or '1'  -- kept before makers were recorded: an admitted lecturer's
  info[i] = {p, string.sub(m, 1, 1) == '1', string.sub(m, 2)}
end
local function drop(i)
  local p = info[i][1]
  redis.call('DEL', prefix .. 'plan:' .. p)
  redis.call('ZREM', KEYS[2], p)
  redis.call('HDEL', KEYS[4], p)
  table.remove(info, i)
end
if ARGV[5] ~= '' then
  local own, first = 0, nil
  for i, r in ipairs(info) do
    if r[3] == ARGV[5] then
      own = own + 1
      if not first and not running[r[1]] then first = i end
    end
  end
  if own >= tonumber(ARGV[7]) then
    if not first then return 'browser' end
    drop(first)
  end
end
if #info >= tonumber(ARGV[3]) then
  local pick = nil
  for i, r in ipairs(info) do  -- the oldest no room runs, not an admitted lecturer's first
    if not running[r[1]] then
      if not r[2] then pick = i; break end
      if not pick and ARGV[6] == '1' then pick = i end
    end
  end
  if not pick then return 'full' end
  drop(pick)
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[6] .. ARGV[5])
return 'ok'
"""


class RedisStore(LectureStore):
    def __init__(self, url: str, limits: StoreLimits | None = None, clock=time.time, prefix: str = "attnviz:"):
        self.limits = limits or StoreLimits()
        self._clock = clock
        self._prefix = prefix
        parts = urlsplit(url)
        self.where = f"{parts.hostname or '?'}:{parts.port or 6379}"  # for messages: never the password
        try:
            self._redis = redis.Redis.from_url(
                url, socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S,
                # one immediate retry on a fresh connection: after redis-server restarts, the pooled sockets are
                # dead, and the first call on each would fail although the server is back
                retry=Retry(NoBackoff(), 1), retry_on_error=[redis.ConnectionError, redis.TimeoutError])
        except (ValueError, redis.RedisError) as err:
            raise StoreUnavailable(f"The lecture store's address is not a Redis URL ({err}): check [store] url in "
                                   ".streamlit/attnviz.toml.") from None
        self._create = self._redis.register_script(CREATE)
        self._go_to = self._redis.register_script(GO_TO)
        self._reveal = self._redis.register_script(REVEAL)
        self._answer = self._redis.register_script(ANSWER)
        self._put_plan = self._redis.register_script(PUT_PLAN)

    def close(self) -> None:
        self._redis.close()

    @contextlib.contextmanager
    def _reach(self):
        """Any redis-py failure as StoreUnavailable, worded for the screen."""
        try:
            yield
        except redis.AuthenticationError:
            raise StoreUnavailable(f"The lecture store (Redis at {self.where}) refused this server's password: "
                                   "lecture views are off until the settings match; every other page works.") from None
        except (redis.RedisError, OSError) as err:
            reason = type(err).__name__
            raise StoreUnavailable(f"The lecture store (Redis at {self.where}) cannot be reached ({reason}): lecture "
                                   "views wait for it; every other page works.") from None

    def _k(self, *parts: str) -> str:
        return self._prefix + ":".join(parts)

    def _room_keys(self, code: str) -> list[str]:
        return [self._k("room", code), self._k("answers", code), self._k("rooms")]

    @property
    def _ttl(self) -> float:
        return self.limits.room_hours * 3600

    def _ttl_seconds(self, seconds: float) -> int:
        return max(1, math.ceil(seconds))

    def _expired(self, touched: bytes | None) -> bool:
        return touched is None or self._clock() - float(touched) > self._ttl

    # rooms
    def create_room(self, plan_id: str, owner: str = "", admitted: bool = True) -> tuple[str, str]:
        plan_id, owner = clean_plan_id(plan_id), clean_owner(owner)
        key = new_key()
        for _ in range(20):
            code, now = new_code(), self._clock()
            with self._reach():
                done = self._create(keys=self._room_keys(code),
                                    args=[code, key_hash(key), plan_id, repr(now), repr(self._ttl),
                                          self._ttl_seconds(self._ttl), self.limits.rooms, self._prefix, owner,
                                          "1" if admitted else "0", self.limits.rooms_per_browser,
                                          repr(self.limits.idle_minutes * 60)])
            if done == b"browser":
                raise browser_full(self.limits.rooms_per_browser, "live rooms with answers")
            if done == b"full":
                raise server_full(self.limits.rooms, "live rooms", "store.rooms")
            if done == b"ok":
                return code, key
        raise StoreError("No free room code was found: try again.")

    def rooms_running(self, plan_id: str) -> int:
        plan_id = clean_plan_id(plan_id)
        with self._reach():
            codes = self._redis.zrange(self._k("rooms"), 0, -1)
            with self._redis.pipeline(transaction=False) as pipe:
                for code in codes:
                    pipe.hmget(self._k("room", code.decode()), "plan", "touched")
                held = pipe.execute()
        return sum(plan is not None and plan.decode() == plan_id and not self._expired(touched)
                   for plan, touched in held)

    def room(self, code: str) -> RoomState | None:
        code = clean_code(code)
        with self._reach():
            fields = self._redis.hgetall(self._k("room", code))
        return self._state(code, fields)

    def _state(self, code: str, fields: dict) -> RoomState | None:
        if not fields or self._expired(fields.get(b"touched")):
            return None
        revealed = frozenset(int(s) for s in fields[b"revealed"].decode().split(",") if s)
        return RoomState(code, fields[b"plan"].decode(), int(fields[b"step"]), revealed,
                         float(fields[b"step_started"]), float(fields[b"started"]), int(fields[b"version"]))

    def version(self, code: str) -> int | None:
        code = clean_code(code)
        with self._reach():
            version, touched = self._redis.hmget(self._k("room", code), "version", "touched")
        return None if version is None or self._expired(touched) else int(version)

    def is_presenter(self, code: str, key: str) -> bool:
        try:
            code, key = clean_code(code), clean_key(key)
        except StoreError:
            return False
        with self._reach():
            held, touched = self._redis.hmget(self._k("room", code), "keyhash", "touched")
        return held is not None and not self._expired(touched) and hmac.compare_digest(held.decode(), key_hash(key))

    def _presenter(self, script, code: str, key: str, step: object) -> RoomState:
        code = clean_code(code)
        key, step = clean_key(key), step_number(step)
        with self._reach():
            reply = script(keys=self._room_keys(code), args=[code, key_hash(key), str(step), repr(self._clock()),
                                                             repr(self._ttl), self._ttl_seconds(self._ttl)])
        if reply[0] == b"gone":
            raise StoreError(f"There is no room {code} (it may have expired): open the lecture again from the "
                             "Lecture page.")
        if reply[0] == b"wrongkey":
            raise WrongKey("This link's presenter key is not this room's: only the lecturer's link can change the "
                           "room. Nothing was changed.")
        flat = reply[1]
        return self._state(code, dict(zip(flat[::2], flat[1::2], strict=True)))

    def go_to(self, code: str, key: str, step: int) -> RoomState:
        return self._presenter(self._go_to, code, key, step)

    def reveal(self, code: str, key: str, step: int) -> RoomState:
        return self._presenter(self._reveal, code, key, step)

    # answers
    def answer(self, code: str, step: int, session: str, value: str) -> int:
        code, step = clean_code(code), step_number(step)
        value, session = answer_text(value, self.limits), clean_session(session)
        with self._reach():
            reply = self._answer(
                keys=[*self._room_keys(code), self._k("flood", session), self._k("flood-sequence")],
                args=[code, str(step), session, value, repr(self._clock()), repr(self._ttl),
                      self._ttl_seconds(self._ttl), self.limits.answers_per_minute, MAX_ANSWERS])
        status = reply[0]
        if status == b"gone":
            raise StoreError(f"There is no room {code} any more: the lecture has ended or expired.")
        if status == b"revealed":
            raise StoreError(f"Step {step} is already revealed: answers are closed.")
        if status == b"full":
            raise LimitReached(f"Step {step} already has {MAX_ANSWERS:,} answers, the most a step keeps.")
        if status == b"flood":
            raise LimitReached(f"At most {self.limits.answers_per_minute} answers a minute from one browser: wait a "
                               "moment and answer again.")
        return int(reply[1])

    def answer_count(self, code: str, step: int) -> int:
        code, step = clean_code(code), step_number(step)
        with self._reach():
            count, touched = self._redis.hmget(self._k("room", code), f"n:{step}", "touched")
        return 0 if count is None or self._expired(touched) else int(count)

    def answers(self, code: str, step: int, key: str | None = None) -> list[Answer]:
        code, step = clean_code(code), step_number(step)
        with self._reach():
            state = self.room(code)
            if state is None:
                return []
            if step not in state.revealed and not self.is_presenter(code, key or ""):
                raise WrongKey("The class's answers are shown after Reveal; before that only with the lecturer's "
                               "link.")
            held = self._redis.hscan_iter(self._k("answers", code), match=f"{step}:*", count=1000)
            return [Answer(field.decode().split(":", 1)[1], value.decode()) for field, value in held]

    def my_answer(self, code: str, step: int, session: str) -> str | None:
        code, step, session = clean_code(code), step_number(step), clean_session(session)
        with self._reach():
            touched = self._redis.hget(self._k("room", code), "touched")
            value = self._redis.hget(self._k("answers", code), f"{step}:{session}")
        return None if value is None or self._expired(touched) else value.decode()

    # uploaded plans
    def put_plan(self, plan_id: str, data: bytes, owner: str = "", admitted: bool = True) -> None:
        plan_id, data, owner = clean_plan_id(plan_id), plan_bytes(data, self.limits), clean_owner(owner)
        with self._reach():
            done = self._put_plan(keys=[self._k("plan", plan_id), self._k("plans"), self._k("plans-sequence"),
                                        self._k("plan-makers"), self._k("rooms")],
                                  args=[plan_id, data, self.limits.plans, self._prefix, owner, "1" if admitted else "0",
                                        self.limits.plans_per_browser, repr(self._clock()), repr(self._ttl)])
        if done == b"browser":
            raise browser_full(self.limits.plans_per_browser, "uploaded plans")
        if done == b"full":
            raise server_full(self.limits.plans, "uploaded plans", "store.plans")

    def plan(self, plan_id: str) -> bytes | None:
        plan_id = clean_plan_id(plan_id)
        with self._reach():
            return self._redis.get(self._k("plan", plan_id))

    # short links
    def shorten(self, query: str) -> str:
        query = link_query(query, self.limits)
        link_id = link_id_of(query)
        lifetime = self.limits.link_days * 86400
        with self._reach(), self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(self._k("link", link_id), mapping={"q": query, "t": repr(self._clock())})
            pipe.expire(self._k("link", link_id), self._ttl_seconds(lifetime))
            pipe.execute()
        return link_id

    def expand(self, link_id: str) -> str | None:
        link_id = clean_link_id(link_id)
        with self._reach():
            query, made = self._redis.hmget(self._k("link", link_id), "q", "t")
        if query is None or made is None or self._clock() - float(made) > self.limits.link_days * 86400:
            return None
        return query.decode()

    def ping(self) -> None:
        with self._reach():
            self._redis.ping()


def key_hash(key: str) -> str:
    """What Redis keeps of a presenter key: its SHA-256 (a copy of the data holds no key that moves a room)."""
    return hashlib.sha256(key.encode()).hexdigest()

