"""The key layout of :class:`~memory_chains.stores.RedisStore`: separators, member and
turn encodings, and the Lua scripts, one per multi-key write.

Redis runs a script as one step, so a reader never sees a turn without its count or a
half-written summary, and no write lands after a tombstone: every write script but the
session deletion checks the user's tombstones first (:data:`CHECK`). The key layout is
described in :mod:`memory_chains.stores._redis`.
"""

from __future__ import annotations

from typing import Any

from memory_chains.stores._values import Namespace, Turn, forgotten_error, load_stored_json

__all__ = [
    "AFTER_SEPS",
    "APPEND",
    "CHECK",
    "DELETE_SESSION",
    "KEY_SEP",
    "LABEL_SEP",
    "PUT",
    "REPLACE_SUMMARY",
    "TOUCH",
    "doc_member",
    "glob_escape",
    "parse_turn",
    "refuse_forgotten",
]

LABEL_SEP = "\x1f"  # between namespace labels
KEY_SEP = "\x1e"  # between the namespace and the key: sorts before LABEL_SEP
AFTER_SEPS = "\x20"  # first character that a label may start with

# Every script ends by refreshing the TTL (ARGV[1], milliseconds; 0 = none) of the session
# keys it got, all but the first (the user's tombstones) and the last (the user's session
# index, pruned on listing): a session expires as a whole, ``ttl`` after its last write.
TOUCH = """
local ttl = tonumber(ARGV[1])
if ttl > 0 then
  for i = 2, #KEYS - 1 do
    if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ttl) end
  end
end
"""

# A write for a forgotten user or session returns {'forgotten', field, time} and writes
# nothing. KEYS[1]: the user's tombstones; ARGV[2]: the session ('' for none).
CHECK = """
local tomb = redis.call('HMGET', KEYS[1], '*', ARGV[2])
if tomb[1] then return {'forgotten', '*', tomb[1]} end
if ARGV[2] ~= '' and tomb[2] then return {'forgotten', ARGV[2], tomb[2]} end
"""

# KEYS: tombstones, count, turns, sessions. ARGV: ttl, session_id, JSON body of the turn.
APPEND = (
    CHECK
    + """
local seq = redis.call('HINCRBY', KEYS[2], 'last', 1)
redis.call('HINCRBY', KEYS[2], 'n', 1)
redis.call('ZADD', KEYS[3], seq, seq .. ':' .. ARGV[3])
redis.call('SADD', KEYS[4], ARGV[2])
"""
    + TOUCH
    + "return seq"
)

# KEYS: tombstones, summary, count, turns, sessions.
# ARGV: ttl, session_id, expected, text, upto_seq, data, now.
REPLACE_SUMMARY = (
    CHECK
    + """
local version = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
if version ~= tonumber(ARGV[3]) then
  return -1
end
redis.call('HSET', KEYS[2], 'text', ARGV[4], 'upto_seq', ARGV[5], 'data', ARGV[6],
  'version', version + 1, 'updated_at', ARGV[7])
if tonumber(ARGV[5]) > 0 then
  redis.call('SADD', KEYS[5], ARGV[2])
elseif redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SREM', KEYS[5], ARGV[2])
end
"""
    + TOUCH
    + "return version + 1"
)

# KEYS: tombstones (not read), summary, turns, count, sessions. ARGV: ttl, session_id, now.
DELETE_SESSION = (
    """
local deleted = redis.call('ZCARD', KEYS[3])
redis.call('DEL', KEYS[3], KEYS[4])
redis.call('SREM', KEYS[5], ARGV[2])
local version = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
redis.call('HSET', KEYS[2], 'text', '', 'upto_seq', 0, 'data', '{}',
  'version', version + 1, 'updated_at', ARGV[3])
"""
    + TOUCH
    + "return deleted"
)


# KEYS: tombstones of the owner, docs index, values, created, updated.
# ARGV: unused, session of the owner ('' = none), member, value, now,
# and for a compare-and-swap a 6th: the expected value ('' = no document yet).
PUT = (
    CHECK
    + """
if ARGV[6] then
  local current = redis.call('HGET', KEYS[3], ARGV[3])
  if ARGV[6] == '' then
    if current then return 0 end
  elseif current ~= ARGV[6] then
    return 0
  end
end
redis.call('ZADD', KEYS[2], 0, ARGV[3])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('HSETNX', KEYS[4], ARGV[3], ARGV[5])
redis.call('HSET', KEYS[5], ARGV[3], ARGV[5])
return 1
"""
)


def refuse_forgotten(result: Any, user_id: str) -> None:
    """Raise the typed error for a script that answered ``{'forgotten', field, time}``."""
    if isinstance(result, list) and result and result[0] == "forgotten":
        field, at = str(result[1]), float(result[2])
        raise forgotten_error(user_id, None if field == "*" else field, at)


def doc_member(namespace: Namespace, key: str) -> str:
    return f"{LABEL_SEP.join(namespace)}{KEY_SEP}{key}"


def parse_turn(member: str) -> Turn:
    seq, _, body = member.partition(":")
    data: dict[str, Any] = load_stored_json(body, "a turn")
    return Turn(int(seq), data["h"], data["a"], float(data["t"]), data["m"])


def glob_escape(text: str) -> str:
    """``text`` as a literal in a Redis ``MATCH`` pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
