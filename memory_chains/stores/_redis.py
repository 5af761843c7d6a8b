"""A store on a Redis server: :class:`RedisStore` (``redis://`` and ``rediss://`` URLs).

Only this module imports :mod:`redis` (the optional ``redis`` extra). Every key starts with
a configurable prefix (``"mc:"`` by default), so several applications or test runs can share
one database. Ids cannot contain ``/`` and namespace labels cannot contain control
characters, so the key layout below is unambiguous:

* ``{prefix}turns/{user}/{session}``: sorted set of the session's turns, scored by ``seq``;
  each member is ``"<seq>:<JSON>"`` (unique, never pickled);
* ``{prefix}count/{user}/{session}``: hash ``{n, last}`` — turn count and last ``seq``,
  incremented atomically (``HINCRBY``) by the append script;
* ``{prefix}summary/{user}/{session}``: hash of the running summary; the compare-and-swap
  on ``version`` runs server-side in one Lua script;
* ``{prefix}sessions/{user}``: set of the user's session ids;
* ``{prefix}schema``: the layout version (:data:`SCHEMA_VERSION`).

With ``session_ttl``, every write to a session refreshes a native expiry (``PEXPIRE``) on
that session's keys, so an idle session vanishes as a whole; the user's session set (ids
only) does not expire and drops expired ids when listed.

* ``{prefix}docs:index``: sorted set (all scores 0) of ``namespace US key`` members, so a
  namespace-prefix listing is one ``ZRANGEBYLEX``; ``{prefix}docs:value`` /
  ``docs:created`` / ``docs:updated`` are hashes keyed by the same member.

Multi-key writes are Lua scripts or ``MULTI``/``EXEC`` transactions: a reader never sees a
turn without its count, or a half-written summary. Connection failures raise
:class:`~memory_chains.errors.StoreUnavailableError`.

Note:
    The scripts touch several keys, so on Redis Cluster put the prefix in a hash tag
    (e.g. ``prefix="{mc}:"``) to keep every key in one slot.

Example:
    >>> store = RedisStore("redis://127.0.0.1:6390/0", prefix="doc:")  # no I/O yet
    >>> store.prefix
    'doc:'
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from memory_chains.errors import (
    ConfigurationError,
    SchemaVersionError,
    StoreError,
    StoreUnavailableError,
)
from memory_chains.stores._base import BaseStore, Document, Namespace, SummaryState, Turn

if TYPE_CHECKING:
    import redis

__all__ = ["SCHEMA_VERSION", "RedisStore"]

#: Version of the key layout described in the module docstring, kept in ``{prefix}schema``.
SCHEMA_VERSION = 1

_LABEL_SEP = "\x1f"  # between namespace labels
_KEY_SEP = "\x1e"  # between the namespace and the key: sorts before _LABEL_SEP
_AFTER_SEPS = "\x20"  # first character that a label may start with

# Every script ends by refreshing the TTL (ARGV[1], milliseconds; 0 = none) of the session
# keys it got, all but the last one (the user's session index, pruned on listing): a session
# expires as a whole, ``ttl`` after its last write.
_TOUCH = """
local ttl = tonumber(ARGV[1])
if ttl > 0 then
  for i = 1, #KEYS - 1 do
    if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ttl) end
  end
end
"""

# KEYS: count, turns, sessions. ARGV: ttl, session_id, JSON body of the turn.
_APPEND = (
    """
local seq = redis.call('HINCRBY', KEYS[1], 'last', 1)
redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('ZADD', KEYS[2], seq, seq .. ':' .. ARGV[3])
redis.call('SADD', KEYS[3], ARGV[2])
"""
    + _TOUCH
    + "return seq"
)

# KEYS: summary, count, turns, sessions.
# ARGV: ttl, expected, text, upto_seq, data, now, session_id.
_REPLACE_SUMMARY = (
    """
local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if version ~= tonumber(ARGV[2]) then
  return -1
end
redis.call('HSET', KEYS[1], 'text', ARGV[3], 'upto_seq', ARGV[4], 'data', ARGV[5],
  'version', version + 1, 'updated_at', ARGV[6])
if tonumber(ARGV[4]) > 0 then
  redis.call('SADD', KEYS[4], ARGV[7])
elseif redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SREM', KEYS[4], ARGV[7])
end
"""
    + _TOUCH
    + "return version + 1"
)

# KEYS: summary, turns, count, sessions. ARGV: ttl, session_id, now.
_DELETE_SESSION = (
    """
local deleted = redis.call('ZCARD', KEYS[2])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('SREM', KEYS[4], ARGV[2])
local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
redis.call('HSET', KEYS[1], 'text', '', 'upto_seq', 0, 'data', '{}',
  'version', version + 1, 'updated_at', ARGV[3])
"""
    + _TOUCH
    + "return deleted"
)


# KEYS: docs index, values, created, updated. ARGV: member, value, expected ('' = none), now.
_PUT_IF = """
local current = redis.call('HGET', KEYS[2], ARGV[1])
if ARGV[3] == '' then
  if current then return 0 end
elseif current ~= ARGV[3] then
  return 0
end
redis.call('ZADD', KEYS[1], 0, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSETNX', KEYS[3], ARGV[1], ARGV[4])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[4])
return 1
"""


class RedisStore(BaseStore):
    """Memories kept on a Redis server, every key under ``prefix``.

    Args:
        url: a redis-py URL, e.g. ``redis://127.0.0.1:6379/0`` or ``rediss://…``.
        prefix: prepended to every key; use a distinct one per application.
        timeout: seconds for connecting and for each command before
            :class:`~memory_chains.errors.StoreUnavailableError`.
        session_ttl: seconds after its last write at which a session (turns, count,
            summary) expires, natively (``PEXPIRE``); ``None`` keeps sessions forever.
            Documents never expire.

    Raises:
        ConfigurationError: the ``redis`` package is not installed, the prefix is empty or
            ``session_ttl`` is not a positive number.

    Example:
        >>> import os
        >>> url = os.environ.get("MEMORY_CHAINS_TEST_REDIS_URL")
        >>> if url:  # needs a server: scripts/ci_services.sh starts one
        ...     with RedisStore(url, prefix="doctest:") as store:
        ...         print(store.append_turn("alice", "s1", "Bonjour", "Salut !").seq)
        ...         _ = store.clear()  # every key under the prefix
        ... else:
        ...     print(1)
        1
    """

    scheme = "redis"

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "mc:",
        timeout: float = 5.0,
        session_ttl: float | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(prefix, str) or not prefix:
            raise ConfigurationError("the Redis key prefix must be a non-empty string")
        if session_ttl is not None and (
            isinstance(session_ttl, bool)
            or not isinstance(session_ttl, (int, float))
            or not 0.001 <= session_ttl < 10**9
        ):
            raise ConfigurationError(
                f"session_ttl must be a positive number of seconds, got {session_ttl!r}"
            )
        try:
            import redis
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ConfigurationError(
                "the Redis store needs the 'redis' package: pip install 'memory_chains[redis]'"
            ) from exc
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self.session_ttl = session_ttl
        self._ttl_ms = 0 if session_ttl is None else max(1, round(session_ttl * 1000))
        # from_url does no I/O: connections are made by the pool on first command
        self._client: redis.Redis = redis.Redis.from_url(
            url,
            decode_responses=True,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
        )
        self._append = self._client.register_script(_APPEND)
        self._replace = self._client.register_script(_REPLACE_SUMMARY)
        self._delete_sess = self._client.register_script(_DELETE_SESSION)
        self._put_if_script = self._client.register_script(_PUT_IF)

    def __repr__(self) -> str:
        return f"RedisStore({_redact(self.url)!r}, prefix={self.prefix!r})"

    # -- keys and errors -----------------------------------------------------------------

    def _k(self, kind: str, user_id: str, session_id: str | None = None) -> str:
        if session_id is None:
            return f"{self.prefix}{kind}/{user_id}"
        return f"{self.prefix}{kind}/{user_id}/{session_id}"

    @contextmanager
    def _io(self) -> Iterator[redis.Redis]:
        import redis

        try:
            yield self._client
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StoreUnavailableError(
                f"cannot reach the Redis store {_redact(self.url)}: {exc}"
            ) from exc
        except redis.RedisError as exc:
            raise StoreError(f"Redis store {_redact(self.url)} failed: {exc}") from exc

    def clear(self) -> int:
        """Delete every key under the prefix — all users' data — and return how many.

        For tests and decommissioning; :func:`~memory_chains.stores.forget_user` erases
        one user. The next use runs :meth:`setup` again.
        """
        deleted = 0
        with self._io() as r:
            batch: list[str] = []
            for key in r.scan_iter(match=_glob_escape(self.prefix) + "*", count=500):
                batch.append(cast(str, key))
                if len(batch) == 500:
                    deleted += int(r.unlink(*batch))
                    batch.clear()
            if batch:
                deleted += int(r.unlink(*batch))
        self._setup_done = False
        return deleted

    def close(self) -> None:
        """Close the connection pool; a later call reconnects."""
        self._client.connection_pool.disconnect()
        self._setup_done = False

    # -- schema --------------------------------------------------------------------------

    def schema_version(self) -> int:
        """The key-layout version recorded under ``{prefix}schema`` (0 before setup)."""
        with self._io() as r:
            return int(r.get(f"{self.prefix}schema") or 0)

    def _setup(self) -> None:
        with self._io() as r:
            r.setnx(f"{self.prefix}schema", SCHEMA_VERSION)
            version = int(r.get(f"{self.prefix}schema") or 0)
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"Redis prefix {self.prefix!r} has layout version {version}, newer than the "
                f"{SCHEMA_VERSION} this memory_chains knows: upgrade memory_chains"
            )

    # -- turn log ------------------------------------------------------------------------

    def _append_turn(
        self, user_id: str, session_id: str, human: str, ai: str, metadata_json: str, now: float
    ) -> Turn:
        body = json.dumps(
            {"h": human, "a": ai, "t": now, "m": json.loads(metadata_json)},
            ensure_ascii=False,
            allow_nan=False,
        )
        keys = [
            self._k("count", user_id, session_id),
            self._k("turns", user_id, session_id),
            self._k("sessions", user_id),
        ]
        with self._io():
            seq = int(self._append(keys=keys, args=[self._ttl_ms, session_id, body]))
        return Turn(seq, human, ai, now, json.loads(metadata_json))

    def _read_turns(
        self, user_id: str, session_id: str, after_seq: int, last: int | None
    ) -> list[Turn]:
        key = self._k("turns", user_id, session_id)
        with self._io() as r:
            if last is None:
                members = r.zrangebyscore(key, f"({after_seq}", "+inf")
            else:
                members = r.zrevrangebyscore(key, "+inf", f"({after_seq}", start=0, num=last)
                members.reverse()
        return [_parse_turn(m) for m in cast("list[str]", members)]

    def _count_turns(self, user_id: str, session_id: str) -> tuple[int, int]:
        with self._io() as r:
            n, last = r.hmget(self._k("count", user_id, session_id), ["n", "last"])
        return int(n or 0), int(last or 0)

    def _delete_session(self, user_id: str, session_id: str) -> int:
        keys = [
            self._k("summary", user_id, session_id),
            self._k("turns", user_id, session_id),
            self._k("count", user_id, session_id),
            self._k("sessions", user_id),
        ]
        args: list[str | int] = [self._ttl_ms, session_id, repr(time.time())]
        with self._io():
            return int(self._delete_sess(keys=keys, args=args))

    def _list_sessions(self, user_id: str) -> list[str]:
        key = self._k("sessions", user_id)
        with self._io() as r:
            members = sorted(cast("set[str]", r.smembers(key)))
            if self._ttl_ms == 0 or not members:
                return members
            # with a TTL, a session's keys may have expired before the user's set: prune
            pipe = r.pipeline(transaction=False)
            for sid in members:
                pipe.exists(self._k("count", user_id, sid))
                pipe.hget(self._k("summary", user_id, sid), "upto_seq")
            flags = pipe.execute()
            alive = [
                sid
                for i, sid in enumerate(members)
                if flags[2 * i] or int(flags[2 * i + 1] or 0) > 0
            ]
            stale = sorted(set(members) - set(alive))
            if stale:
                r.srem(key, *stale)
        return alive

    # -- running summary -----------------------------------------------------------------

    def _get_summary(self, user_id: str, session_id: str) -> SummaryState | None:
        with self._io() as r:
            h = cast("dict[str, str]", r.hgetall(self._k("summary", user_id, session_id)))
        if not h:
            return None
        return SummaryState(
            text=h["text"],
            upto_seq=int(h["upto_seq"]),
            data=json.loads(h["data"]),
            version=int(h["version"]),
            updated_at=float(h["updated_at"]),
        )

    def _replace_summary(
        self,
        user_id: str,
        session_id: str,
        text: str,
        upto_seq: int,
        data_json: str,
        expected_version: int,
        now: float,
    ) -> SummaryState | None:
        keys = [
            self._k("summary", user_id, session_id),
            self._k("count", user_id, session_id),
            self._k("turns", user_id, session_id),
            self._k("sessions", user_id),
        ]
        args: list[str | int] = [
            self._ttl_ms, expected_version, text, upto_seq, data_json, repr(now), session_id,
        ]  # fmt: skip
        with self._io():
            version = int(self._replace(keys=keys, args=args))
        if version < 0:
            return None
        return SummaryState(text, upto_seq, json.loads(data_json), version, now)

    # -- documents -----------------------------------------------------------------------

    def _doc_keys(self) -> tuple[str, str, str, str]:
        p = self.prefix
        return f"{p}docs:index", f"{p}docs:value", f"{p}docs:created", f"{p}docs:updated"

    def _put(self, namespace: Namespace, key: str, value_json: str, now: float) -> None:
        member = _member(namespace, key)
        index, values, created, updated = self._doc_keys()
        with self._io() as r:
            pipe = r.pipeline(transaction=True)  # MULTI/EXEC
            pipe.zadd(index, {member: 0})
            pipe.hset(values, member, value_json)
            pipe.hsetnx(created, member, repr(now))
            pipe.hset(updated, member, repr(now))
            pipe.execute()

    def _put_if(
        self, namespace: Namespace, key: str, value_json: str, expected_json: str | None, now: float
    ) -> bool:
        args = [_member(namespace, key), value_json, expected_json or "", repr(now)]
        with self._io():
            return int(self._put_if_script(keys=list(self._doc_keys()), args=args)) == 1

    def _get(self, namespace: Namespace, key: str) -> Document | None:
        member = _member(namespace, key)
        _, values, created, updated = self._doc_keys()
        with self._io() as r:
            pipe = r.pipeline(transaction=True)
            pipe.hget(values, member)
            pipe.hget(created, member)
            pipe.hget(updated, member)
            value, c, u = pipe.execute()
        if value is None:
            return None
        return Document(namespace, key, json.loads(value), float(c or 0), float(u or 0))

    def _list(self, prefix: Namespace, limit: int | None) -> list[Document]:
        index, values, created, updated = self._doc_keys()
        if prefix:
            joined = _LABEL_SEP.join(prefix)
            lo, hi = f"[{joined}{_KEY_SEP}", f"({joined}{_AFTER_SEPS}"
        else:
            lo, hi = "-", "+"
        with self._io() as r:
            if limit is None:
                found = r.zrangebylex(index, lo, hi)
            else:
                found = r.zrangebylex(index, lo, hi, start=0, num=limit)
            members = cast("list[str]", found)
            if not members:
                return []
            pipe = r.pipeline(transaction=True)
            pipe.hmget(values, members)
            pipe.hmget(created, members)
            pipe.hmget(updated, members)
            vals, cs, us = pipe.execute()
        docs = []
        for member, value, c, u in zip(members, vals, cs, us, strict=True):
            if value is None:  # deleted between the two round trips
                continue
            ns, _, key = member.partition(_KEY_SEP)
            value_obj = json.loads(value)
            docs.append(
                Document(tuple(ns.split(_LABEL_SEP)), key, value_obj, float(c or 0), float(u or 0))
            )
        return docs

    def _delete(self, namespace: Namespace, key: str) -> bool:
        member = _member(namespace, key)
        index, values, created, updated = self._doc_keys()
        with self._io() as r:
            pipe = r.pipeline(transaction=True)
            pipe.zrem(index, member)
            pipe.hdel(values, member)
            pipe.hdel(created, member)
            pipe.hdel(updated, member)
            removed = pipe.execute()[0]
        return bool(removed)


def _member(namespace: Namespace, key: str) -> str:
    return f"{_LABEL_SEP.join(namespace)}{_KEY_SEP}{key}"


def _parse_turn(member: str) -> Turn:
    seq, _, body = member.partition(":")
    data: dict[str, Any] = json.loads(body)
    return Turn(int(seq), data["h"], data["a"], float(data["t"]), data["m"])


def _glob_escape(text: str) -> str:
    """``text`` as a literal in a Redis ``MATCH`` pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    if "@" not in url:
        return url
    scheme, _, rest = url.partition("://")
    return f"{scheme}://***@{rest.rsplit('@', 1)[1]}"
