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
* ``{prefix}schema``: the layout version (:data:`SCHEMA_VERSION`);
* ``{prefix}tomb/{user}``: hash of the user's tombstones, field ``*`` for the whole user
  and one field per forgotten session, the value the time it was forgotten. Every write
  script reads it first and refuses the write (Redis runs one script at a time, so no
  write lands after the tombstone).

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
from typing import TYPE_CHECKING, cast

from memory_chains.errors import (
    ConfigurationError,
    SchemaVersionError,
    StoreError,
    StoreNotFoundError,
    StoreUnavailableError,
)
from memory_chains.stores._base import BaseStore
from memory_chains.stores._redis_layout import (
    AFTER_SEPS,
    APPEND,
    DELETE_SESSION,
    KEY_SEP,
    LABEL_SEP,
    PUT,
    REPLACE_SUMMARY,
    doc_member,
    glob_escape,
    parse_turn,
    refuse_forgotten,
)
from memory_chains.stores._values import (
    Document,
    Namespace,
    SummaryState,
    Tombstone,
    Turn,
    document_owner,
    load_stored_json,
)

if TYPE_CHECKING:
    import redis

__all__ = ["SCHEMA_VERSION", "RedisStore"]

#: Version of the key layout described in the module docstring, kept in ``{prefix}schema``.
#: 2 added the tombstones: a library of layout 1 would not check them, so it is refused.
SCHEMA_VERSION = 2


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
        read_only: never write: :meth:`setup` only checks that the prefix holds a store
            (:class:`~memory_chains.errors.StoreNotFoundError` if not), writes raise
            :class:`~memory_chains.errors.ReadOnlyStoreError`.

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
        read_only: bool = False,
    ) -> None:
        super().__init__()
        self.read_only = bool(read_only)
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
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # from_url does no I/O: connections are made by the pool on first command. No
        # automatic retry: an append whose reply was lost may have run, and sending it
        # again would store the turn twice; the caller gets StoreUnavailableError instead.
        try:
            self._client: redis.Redis = redis.Redis.from_url(
                url,
                decode_responses=True,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=Retry(NoBackoff(), 0),
            )
        except (ValueError, TypeError) as exc:
            raise ConfigurationError(f"bad Redis URL {_redact(str(url))!r}: {exc}") from exc
        self._append = self._client.register_script(APPEND)
        self._replace = self._client.register_script(REPLACE_SUMMARY)
        self._delete_sess = self._client.register_script(DELETE_SESSION)
        self._put_script = self._client.register_script(PUT)

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
            for key in r.scan_iter(match=glob_escape(self.prefix) + "*", count=500):
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

    def exists(self) -> bool:
        """True when the prefix holds a store (its ``schema`` key); nothing is written."""
        return self.schema_version() > 0

    def _setup(self) -> None:
        key = f"{self.prefix}schema"
        with self._io() as r:
            if not self.read_only:
                r.setnx(key, SCHEMA_VERSION)
            version = int(r.get(key) or 0)
            if 0 < version < SCHEMA_VERSION and not self.read_only:
                r.set(key, SCHEMA_VERSION)  # layout 2 only adds keys
        if version == 0:
            raise StoreNotFoundError(
                f"no store under the prefix {self.prefix!r} of {_redact(self.url)}"
            )
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
            self._k("tomb", user_id),
            self._k("count", user_id, session_id),
            self._k("turns", user_id, session_id),
            self._k("sessions", user_id),
        ]
        with self._io():
            result = self._append(keys=keys, args=[self._ttl_ms, session_id, body])
        refuse_forgotten(result, user_id)
        return Turn(int(result), human, ai, now, json.loads(metadata_json))

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
        return [parse_turn(m) for m in cast("list[str]", members)]

    def _count_turns(self, user_id: str, session_id: str) -> tuple[int, int]:
        with self._io() as r:
            n, last = r.hmget(self._k("count", user_id, session_id), ["n", "last"])
        return int(n or 0), int(last or 0)

    def _delete_session(self, user_id: str, session_id: str) -> int:
        keys = [
            self._k("tomb", user_id),
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
            data=load_stored_json(h["data"]),
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
            self._k("tomb", user_id),
            self._k("summary", user_id, session_id),
            self._k("count", user_id, session_id),
            self._k("turns", user_id, session_id),
            self._k("sessions", user_id),
        ]
        args: list[str | int] = [
            self._ttl_ms, session_id, expected_version, text, upto_seq, data_json, repr(now),
        ]  # fmt: skip
        with self._io():
            result = self._replace(keys=keys, args=args)
        refuse_forgotten(result, user_id)
        version = int(result)
        if version < 0:
            return None
        return SummaryState(text, upto_seq, json.loads(data_json), version, now)

    # -- documents -----------------------------------------------------------------------

    def _doc_keys(self) -> tuple[str, str, str, str]:
        p = self.prefix
        return f"{p}docs:index", f"{p}docs:value", f"{p}docs:created", f"{p}docs:updated"

    def _put(self, namespace: Namespace, key: str, value_json: str, now: float) -> None:
        self._write_document(namespace, key, value_json, now, None)

    def _put_if(
        self, namespace: Namespace, key: str, value_json: str, expected_json: str | None, now: float
    ) -> bool:
        return self._write_document(namespace, key, value_json, now, expected_json or "")

    def _write_document(
        self, namespace: Namespace, key: str, value_json: str, now: float, expected: str | None
    ) -> bool:
        """One script: the owner's tombstones, the compare (when ``expected`` is not
        None; ``""`` = no document yet) and the write."""
        user, session = document_owner(namespace, key)
        # a document owned by nobody reads an empty tombstone hash
        tomb = self._k("tomb", user) if user is not None else f"{self.prefix}tomb:none"
        args: list[str | int] = [
            "",
            session or "",
            doc_member(namespace, key),
            value_json,
            repr(now),
        ]
        if expected is not None:
            args.append(expected)
        with self._io():
            result = self._put_script(keys=[tomb, *self._doc_keys()], args=args)
        if user is not None:
            refuse_forgotten(result, user)
        return int(result) == 1

    def _get(self, namespace: Namespace, key: str) -> Document | None:
        member = doc_member(namespace, key)
        _, values, created, updated = self._doc_keys()
        with self._io() as r:
            pipe = r.pipeline(transaction=True)
            pipe.hget(values, member)
            pipe.hget(created, member)
            pipe.hget(updated, member)
            value, c, u = pipe.execute()
        if value is None:
            return None
        return Document(namespace, key, load_stored_json(value), float(c or 0), float(u or 0))

    def _list(self, prefix: Namespace, limit: int | None) -> list[Document]:
        index, values, created, updated = self._doc_keys()
        if prefix:
            joined = LABEL_SEP.join(prefix)
            lo, hi = f"[{joined}{KEY_SEP}", f"({joined}{AFTER_SEPS}"
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
            ns, _, key = member.partition(KEY_SEP)
            value_obj = load_stored_json(value)
            docs.append(
                Document(tuple(ns.split(LABEL_SEP)), key, value_obj, float(c or 0), float(u or 0))
            )
        return docs

    def _delete(self, namespace: Namespace, key: str) -> bool:
        member = doc_member(namespace, key)
        index, values, created, updated = self._doc_keys()
        with self._io() as r:
            pipe = r.pipeline(transaction=True)
            pipe.zrem(index, member)
            pipe.hdel(values, member)
            pipe.hdel(created, member)
            pipe.hdel(updated, member)
            removed = pipe.execute()[0]
        return bool(removed)

    # -- tombstones ----------------------------------------------------------------------

    def _add_tombstone(self, user_id: str, session_id: str | None, now: float) -> Tombstone:
        key, field = self._k("tomb", user_id), session_id or "*"
        with self._io() as r:
            pipe = r.pipeline(transaction=True)
            pipe.hsetnx(key, field, repr(now))
            pipe.hget(key, field)
            at = pipe.execute()[1]
        return Tombstone(user_id, session_id, float(at))

    def _remove_tombstones(self, user_id: str, session_id: str | None) -> int:
        key = self._k("tomb", user_id)
        with self._io() as r:
            if session_id is not None:
                return int(r.hdel(key, session_id))
            pipe = r.pipeline(transaction=True)
            pipe.hlen(key)
            pipe.delete(key)
            return int(pipe.execute()[0])

    def _tombstones(self, user_id: str) -> list[Tombstone]:
        with self._io() as r:
            fields = cast("dict[str, str]", r.hgetall(self._k("tomb", user_id)))
        return [Tombstone(user_id, None if f == "*" else f, float(at)) for f, at in fields.items()]


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    if "@" not in url:
        return url
    scheme, _, rest = url.partition("://")
    return f"{scheme}://***@{rest.rsplit('@', 1)[1]}"
