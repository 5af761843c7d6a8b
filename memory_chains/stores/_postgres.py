"""A store on a PostgreSQL server: :class:`PostgresStore` (``postgresql://`` URLs).

Only this module imports :mod:`psycopg` and :mod:`psycopg_pool` (the optional ``postgres``
extra). The schema mirrors the SQLite one and is versioned the same way: :data:`MIGRATIONS`
is an ordered list applied by :meth:`PostgresStore.setup` in one transaction (under an
advisory lock, so concurrent processes migrate once) and the version reached is recorded
in ``mc_schema``. Tables live in a configurable PostgreSQL schema (``public`` by default).

Appends are one transaction: an upsert of the session row increments ``last_seq`` and
returns it, which row-locks the session until commit, so concurrent appends get distinct,
gap-free ``seq`` values. The summary's compare-and-swap is a conditional ``UPDATE`` (or an
``INSERT … ON CONFLICT DO NOTHING`` for the first version). Documents are ``JSONB``. SQL is
parameterised; the only dynamic identifier, the schema name, goes through
:class:`psycopg.sql.Identifier`.

Forgotten users and sessions are rows of ``mc_tombstones`` (ids and time, no content).
Every write transaction first takes a shared advisory lock on its user and then checks
them; adding a tombstone takes that lock exclusively, so a write either commits before the
tombstone (and the erasure that follows sees it) or sees the tombstone and writes nothing.
``read_only=True`` makes every transaction ``READ ONLY`` on the server and skips the
migrations.

Example:
    >>> store = PostgresStore("postgresql://postgres@127.0.0.1:5433/db")  # no I/O yet
    >>> store.schema
    'public'
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from memory_chains.errors import (
    ConfigurationError,
    SchemaVersionError,
    StoreError,
    StoreNotFoundError,
    StoreUnavailableError,
)
from memory_chains.stores._base import BaseStore
from memory_chains.stores._postgres_schema import (
    LOCK_ID,
    MIGRATIONS,
    add_tombstone,
    list_tombstones,
    quote_option,
    read_version,
    redact,
    refuse_forgotten,
    remove_tombstones,
)
from memory_chains.stores._values import (
    Document,
    Namespace,
    SummaryState,
    Tombstone,
    Turn,
    document_owner,
)

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = ["MIGRATIONS", "PostgresStore"]

_SEP = "\x1f"
_SEP_NEXT = "\x20"


class PostgresStore(BaseStore):
    """Memories kept in a PostgreSQL database, through a connection pool.

    Args:
        url: a libpq URL, e.g. ``postgresql://user@host:5432/dbname``.
        schema: the PostgreSQL schema holding the ``mc_*`` tables (created if missing).
        min_size: connections the pool keeps open.
        max_size: most connections the pool opens.
        timeout: seconds to connect or to wait for a pooled connection before
            :class:`~memory_chains.errors.StoreUnavailableError`.
        read_only: every transaction read-only; :meth:`setup` only checks the schema
            holds a store (:class:`~memory_chains.errors.StoreNotFoundError` if not).

    Raises:
        ConfigurationError: ``psycopg``/``psycopg_pool`` are not installed, or bad sizes.

    Example:
        >>> import os
        >>> url = os.environ.get("MEMORY_CHAINS_TEST_POSTGRES_URL")
        >>> if url:  # needs a server: scripts/ci_services.sh starts one
        ...     with PostgresStore(url, schema="mc_doctest") as store:
        ...         print(store.append_turn("alice", "s1", "Bonjour", "Salut !").seq)
        ...         store.drop_tables()  # every mc_* table of the schema
        ... else:
        ...     print(1)
        1
    """

    scheme = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        schema: str = "public",
        min_size: int = 1,
        max_size: int = 4,
        timeout: float = 5.0,
        read_only: bool = False,
    ) -> None:
        super().__init__()
        self.read_only = bool(read_only)
        if not isinstance(url, str) or "\x00" in url:
            raise ConfigurationError("the PostgreSQL URL must be a string without NUL")
        if not isinstance(schema, str) or not schema or "\x00" in schema:
            raise ConfigurationError("the PostgreSQL schema must be a non-empty string")
        if not 0 <= min_size <= max_size or max_size < 1:
            raise ConfigurationError(f"bad pool sizes: min_size={min_size}, max_size={max_size}")
        try:
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ConfigurationError(
                "the PostgreSQL store needs psycopg 3 and psycopg-pool: "
                "pip install 'memory_chains[postgres]'"
            ) from exc
        self.url = url
        self.schema = schema
        self.min_size = min_size
        self.max_size = max_size
        self.timeout = timeout
        self._pool: ConnectionPool[Any] | None = None
        self._pool_lock = threading.Lock()
        self._has_tombstones = True  # False for an old schema opened read-only

    def __repr__(self) -> str:
        return f"PostgresStore({redact(self.url)!r}, schema={self.schema!r})"

    # -- connections ---------------------------------------------------------------------

    def _get_pool(self) -> ConnectionPool[Any]:
        with self._pool_lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool, PoolTimeout

                pool: ConnectionPool[Any] = ConnectionPool(
                    self.url,
                    min_size=self.min_size,
                    max_size=self.max_size,
                    timeout=self.timeout,
                    open=False,
                    # drop connections a server restart broke, so the store recovers
                    check=ConnectionPool.check_connection,
                    name="memory_chains",
                    kwargs={
                        "connect_timeout": max(1, int(self.timeout)),
                        "options": f"-c search_path={quote_option(self.schema)}"
                        + (" -c default_transaction_read_only=on" if self.read_only else ""),
                    },
                )
                try:
                    pool.open(wait=True, timeout=self.timeout)
                except PoolTimeout as exc:
                    pool.close()
                    raise StoreUnavailableError(
                        f"cannot connect to the PostgreSQL store {redact(self.url)} "
                        f"within {self.timeout:g} s"
                    ) from exc
                self._pool = pool
            return self._pool

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection inside one transaction (rolled back on any error)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._get_pool().connection() as conn:  # commits, or rolls back on error
                yield conn
        except PoolTimeout as exc:
            raise StoreUnavailableError(
                f"no PostgreSQL connection available for {redact(self.url)}: {exc}"
            ) from exc
        except psycopg.OperationalError as exc:
            raise StoreUnavailableError(
                f"cannot reach the PostgreSQL store {redact(self.url)}: {exc}"
            ) from exc
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL store {redact(self.url)} failed: {exc}") from exc

    def close(self) -> None:
        """Close the pool; a later call opens a new one."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
        self._setup_done = False

    # -- schema --------------------------------------------------------------------------

    def schema_version(self) -> int:
        """The schema version recorded in ``mc_schema`` (0 before :meth:`setup`)."""
        with self._tx() as conn:
            return read_version(conn)

    def exists(self) -> bool:
        """True when the schema holds the ``mc_*`` tables; nothing is written."""
        with self._tx() as conn:
            return read_version(conn) > 0

    def _setup(self) -> None:
        from psycopg import sql

        if self.read_only:
            with self._tx() as conn:
                version = read_version(conn)
            if version == 0:
                raise StoreNotFoundError(
                    f"no store in schema {self.schema!r} of {redact(self.url)}"
                )
            if version > len(MIGRATIONS):
                raise SchemaVersionError(
                    f"schema {self.schema!r} has version {version}, newer than the "
                    f"{len(MIGRATIONS)} this memory_chains knows: upgrade memory_chains"
                )
            self._has_tombstones = version >= 2
            return
        with self._tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_ID,))
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
            )
            conn.execute("CREATE TABLE IF NOT EXISTS mc_schema (version INTEGER NOT NULL)")
            version = read_version(conn)
            if version > len(MIGRATIONS):
                raise SchemaVersionError(
                    f"schema {self.schema!r} has version {version}, newer than the "
                    f"{len(MIGRATIONS)} this memory_chains knows: upgrade memory_chains"
                )
            for statements in MIGRATIONS[version:]:
                for statement in statements:
                    conn.execute(statement)  # constant SQL
            if version < len(MIGRATIONS):
                conn.execute("DELETE FROM mc_schema")
                conn.execute("INSERT INTO mc_schema (version) VALUES (%s)", (len(MIGRATIONS),))

    def drop_tables(self) -> None:
        """Drop every ``mc_*`` table of the schema — all users' data — in one transaction.

        For tests and decommissioning; :func:`~memory_chains.stores.forget_user` erases
        one user. The schema itself is kept; the next use runs :meth:`setup` again.
        """
        with self._tx() as conn:
            conn.execute(
                "DROP TABLE IF EXISTS mc_turns, mc_sessions, mc_summaries, mc_documents, mc_schema,"
                " mc_tombstones"
            )
        self._setup_done = False

    # -- turn log ------------------------------------------------------------------------

    def _append_turn(
        self, user_id: str, session_id: str, human: str, ai: str, metadata_json: str, now: float
    ) -> Turn:
        with self._tx() as conn:
            refuse_forgotten(conn, user_id, session_id)
            # the upsert row-locks the session until commit: appends are serialised per session
            row = conn.execute(
                "INSERT INTO mc_sessions"
                " (user_id, session_id, turn_count, last_seq, created_at, updated_at)"
                " VALUES (%s, %s, 1, 1, %s, %s)"
                " ON CONFLICT (user_id, session_id) DO UPDATE SET"
                " turn_count = mc_sessions.turn_count + 1,"
                " last_seq = mc_sessions.last_seq + 1, updated_at = excluded.updated_at"
                " RETURNING last_seq",
                (user_id, session_id, now, now),
            ).fetchone()
            assert row is not None
            seq = int(row[0])
            conn.execute(
                "INSERT INTO mc_turns (user_id, session_id, seq, human, ai, metadata, created_at)"
                " VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s)",
                (user_id, session_id, seq, human, ai, metadata_json, now),
            )
        return Turn(seq, human, ai, now, json.loads(metadata_json))

    def _read_turns(
        self, user_id: str, session_id: str, after_seq: int, last: int | None
    ) -> list[Turn]:
        with self._tx() as conn:
            if last is None:
                rows = conn.execute(
                    "SELECT seq, human, ai, created_at, metadata FROM mc_turns"
                    " WHERE user_id = %s AND session_id = %s AND seq > %s ORDER BY seq",
                    (user_id, session_id, after_seq),
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT seq, human, ai, created_at, metadata FROM mc_turns"
                    " WHERE user_id = %s AND session_id = %s AND seq > %s"
                    " ORDER BY seq DESC LIMIT %s",
                    (user_id, session_id, after_seq, last),
                ).fetchall()
                rows.reverse()
        return [Turn(int(r[0]), r[1], r[2], r[3], r[4]) for r in rows]

    def _count_turns(self, user_id: str, session_id: str) -> tuple[int, int]:
        with self._tx() as conn:
            row = conn.execute(
                "SELECT turn_count, last_seq FROM mc_sessions"
                " WHERE user_id = %s AND session_id = %s",
                (user_id, session_id),
            ).fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def _delete_session(self, user_id: str, session_id: str) -> int:
        with self._tx() as conn:
            conn.execute(
                "SELECT 1 FROM mc_sessions WHERE user_id = %s AND session_id = %s FOR UPDATE",
                (user_id, session_id),
            )
            deleted = conn.execute(
                "DELETE FROM mc_turns WHERE user_id = %s AND session_id = %s",
                (user_id, session_id),
            ).rowcount
            conn.execute(
                "DELETE FROM mc_sessions WHERE user_id = %s AND session_id = %s",
                (user_id, session_id),
            )
            # reset rather than delete: the version advances, so a compaction of the old
            # turns still running elsewhere fails its compare-and-swap
            conn.execute(
                "INSERT INTO mc_summaries"
                " (user_id, session_id, text, upto_seq, data, version, updated_at)"
                " VALUES (%s, %s, '', 0, '{}', 1, %s)"
                " ON CONFLICT (user_id, session_id) DO UPDATE SET text = '', upto_seq = 0,"
                " data = '{}', version = mc_summaries.version + 1,"
                " updated_at = excluded.updated_at",
                (user_id, session_id, time.time()),
            )
        return int(deleted)

    def _list_sessions(self, user_id: str) -> list[str]:
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT session_id FROM (SELECT session_id FROM mc_sessions WHERE user_id = %s"
                " UNION SELECT session_id FROM mc_summaries WHERE user_id = %s AND upto_seq > 0)"
                ' AS s ORDER BY session_id COLLATE "C"',
                (user_id, user_id),
            ).fetchall()
        return [r[0] for r in rows]

    # -- running summary -----------------------------------------------------------------

    def _get_summary(self, user_id: str, session_id: str) -> SummaryState | None:
        with self._tx() as conn:
            row = conn.execute(
                "SELECT text, upto_seq, data, version, updated_at FROM mc_summaries"
                " WHERE user_id = %s AND session_id = %s",
                (user_id, session_id),
            ).fetchone()
        if row is None:
            return None
        return SummaryState(row[0], int(row[1]), row[2], int(row[3]), row[4])

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
        params = (text, upto_seq, data_json, expected_version + 1, now, user_id, session_id)
        with self._tx() as conn:
            refuse_forgotten(conn, user_id, session_id)
            if expected_version == 0:
                cur = conn.execute(
                    "INSERT INTO mc_summaries"
                    " (text, upto_seq, data, version, updated_at, user_id, session_id)"
                    " VALUES (%s, %s, %s::jsonb, %s, %s, %s, %s)"
                    " ON CONFLICT (user_id, session_id) DO NOTHING",
                    params,
                )
            else:
                cur = conn.execute(
                    "UPDATE mc_summaries SET text = %s, upto_seq = %s, data = %s::jsonb,"
                    " version = %s, updated_at = %s"
                    " WHERE user_id = %s AND session_id = %s AND version = %s",
                    (*params, expected_version),
                )
            if cur.rowcount != 1:
                return None
        return SummaryState(text, upto_seq, json.loads(data_json), expected_version + 1, now)

    # -- documents -----------------------------------------------------------------------

    def _put(self, namespace: Namespace, key: str, value_json: str, now: float) -> None:
        with self._tx() as conn:
            refuse_forgotten(conn, *document_owner(namespace, key))
            conn.execute(
                "INSERT INTO mc_documents (namespace, key, value, created_at, updated_at)"
                " VALUES (%s, %s, %s::jsonb, %s, %s)"
                " ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value,"
                " updated_at = excluded.updated_at",
                (_SEP.join(namespace), key, value_json, now, now),
            )

    def _put_if(
        self, namespace: Namespace, key: str, value_json: str, expected_json: str | None, now: float
    ) -> bool:
        ns = _SEP.join(namespace)
        with self._tx() as conn:
            refuse_forgotten(conn, *document_owner(namespace, key))
            if expected_json is None:
                cur = conn.execute(
                    "INSERT INTO mc_documents (namespace, key, value, created_at, updated_at)"
                    " VALUES (%s, %s, %s::jsonb, %s, %s) ON CONFLICT (namespace, key) DO NOTHING",
                    (ns, key, value_json, now, now),
                )
            else:  # the row lock makes a concurrent UPDATE re-check the value after ours
                cur = conn.execute(
                    "UPDATE mc_documents SET value = %s::jsonb, updated_at = %s"
                    " WHERE namespace = %s AND key = %s AND value = %s::jsonb",
                    (value_json, now, ns, key, expected_json),
                )
            return cur.rowcount == 1

    def _get(self, namespace: Namespace, key: str) -> Document | None:
        with self._tx() as conn:
            row = conn.execute(
                "SELECT value, created_at, updated_at FROM mc_documents"
                " WHERE namespace = %s AND key = %s",
                (_SEP.join(namespace), key),
            ).fetchone()
        if row is None:
            return None
        return Document(namespace, key, row[0], row[1], row[2])

    def _list(self, prefix: Namespace, limit: int | None) -> list[Document]:
        query = "SELECT namespace, key, value, created_at, updated_at FROM mc_documents"
        params: list[object] = []
        if prefix:
            joined = _SEP.join(prefix)
            query += " WHERE namespace = %s OR (namespace >= %s AND namespace < %s)"
            params += [joined, joined + _SEP, joined + _SEP_NEXT]
        query += " ORDER BY namespace, key"
        if limit is not None:
            query += " LIMIT %s"
            params.append(limit)
        with self._tx() as conn:
            rows = conn.execute(query, params).fetchall()
        return [Document(tuple(r[0].split(_SEP)), r[1], r[2], r[3], r[4]) for r in rows]

    def _delete(self, namespace: Namespace, key: str) -> bool:
        with self._tx() as conn:
            count = conn.execute(
                "DELETE FROM mc_documents WHERE namespace = %s AND key = %s",
                (_SEP.join(namespace), key),
            ).rowcount
        return count > 0

    # -- tombstones ----------------------------------------------------------------------

    def _add_tombstone(self, user_id: str, session_id: str | None, now: float) -> Tombstone:
        with self._tx() as conn:
            return add_tombstone(conn, user_id, session_id, now)

    def _remove_tombstones(self, user_id: str, session_id: str | None) -> int:
        with self._tx() as conn:
            return remove_tombstones(conn, user_id, session_id)

    def _tombstones(self, user_id: str) -> list[Tombstone]:
        if not self._has_tombstones:
            return []
        with self._tx() as conn:
            return list_tombstones(conn, user_id)
