"""The embedded default store: :class:`SQLiteStore`, one SQLite file in WAL mode.

Only this module and :mod:`._sqlite_schema` import :mod:`sqlite3`. The schema is
versioned: :data:`MIGRATIONS` is an ordered list applied by :meth:`SQLiteStore.setup`
inside one transaction, and the version reached is recorded in ``mc_schema``. A file
written by a newer library (higher version) is refused with
:class:`~memory_chains.errors.SchemaVersionError` rather than misread.

``read_only=True`` opens an existing file with SQLite's ``mode=ro`` (``immutable=1`` when
not even the ``-shm`` file can be created next to it, e.g. a read-only directory): nothing
is created, a missing file raises :class:`~memory_chains.errors.StoreNotFoundError`, and
a file the user may only read can still be listed and exported.

Forgotten users and sessions are rows of ``mc_tombstones`` (ids and time, no content);
every write transaction checks them, so — writes being serialised by ``BEGIN
IMMEDIATE`` — no write of any process lands after the tombstone.

Cost per turn does not grow with the history: turns are keyed by
``(user_id, session_id, seq)`` (a clustered primary key), the last N turns are one index
range read, and the turn count and next ``seq`` live in a per-session row.

Example:
    >>> store = SQLiteStore(":memory:")
    >>> store.setup()
    >>> store.append_turn("u", "s", "q", "a").seq
    1
    >>> store.schema_version()
    2
    >>> store.close()
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory_chains.errors import (
    ConfigurationError,
    SchemaVersionError,
    StoreError,
    StoreNotFoundError,
    StoreUnavailableError,
)
from memory_chains.stores._base import BaseStore
from memory_chains.stores._sqlite_schema import (
    MIGRATIONS,
    UPSERT_DOCUMENT,
    add_tombstone,
    checkpoint_wal,
    connect_read_only,
    connect_read_write,
    list_tombstones,
    load_object,
    read_version,
    refuse_forgotten,
    remove_tombstones,
    vacuum,
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

__all__ = ["MIGRATIONS", "SQLiteStore"]

# Namespace labels are joined with the ASCII unit separator (control characters are refused
# in labels), so that a prefix query is an index range: [P, P) ∪ [P + US, P + US + 1).
_SEP = "\x1f"
_SEP_NEXT = "\x20"


class SQLiteStore(BaseStore):
    """Memories persisted in one SQLite file (WAL journal), safe across threads and processes.

    Args:
        path: the database file (its directory is created by :meth:`setup`), or
            ``":memory:"`` for a private in-memory database.
        timeout: seconds to wait for another writer before raising
            :class:`~memory_chains.errors.StoreUnavailableError`.
        read_only: open an existing file without writing anything (see the module doc).

    Raises:
        ConfigurationError: ``path`` is not a path (a NUL character, not a string).

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "memory.sqlite3")
        >>> with SQLiteStore(path) as store:
        ...     _ = store.append_turn("alice", "s1", "Bonjour", "Salut !")
        >>> with SQLiteStore(path) as store:
        ...     store.last_turns("alice", "s1", 1)[0].ai
        'Salut !'
    """

    scheme = "sqlite"

    def __init__(
        self, path: str | os.PathLike[str], *, timeout: float = 5.0, read_only: bool = False
    ) -> None:
        super().__init__()
        fspath = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
        if not isinstance(fspath, str):
            raise ConfigurationError(f"SQLite path must be a string, got {type(path).__name__}")
        self.path = fspath
        if "\x00" in self.path or not self.path:
            raise ConfigurationError(f"SQLite path {self.path[:80]!r} is empty or holds a NUL")
        self.timeout = timeout
        self.read_only = bool(read_only)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        # deleted content still in the -wal file (a reader blocked the checkpoint)
        self._traces_pending = False
        self._has_tombstones = True  # False for an old file opened read-only

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    # -- connection ----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            if self.read_only:
                self._conn = connect_read_only(self.path, self.timeout)
            else:
                self._conn = connect_read_write(self.path, self.timeout)
        return self._conn

    def exists(self) -> bool:
        """True when the file exists and holds a memory_chains schema (read-only check).

        Raises:
            StoreError: the file exists but cannot be read as a SQLite database.
        """
        if self.path == ":memory:" or not Path(self.path).expanduser().is_file():
            return False
        if self._conn is not None and self._setup_done:
            return True
        conn = connect_read_only(self.path, self.timeout)
        try:
            return read_version(conn) > 0
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the SQLite store {self.path!r}: {exc}") from exc
        finally:
            conn.close()

    @contextmanager
    def _tx(self, write: bool) -> Iterator[sqlite3.Connection]:
        """A write transaction under the process lock (rolled back on any error), or, for
        reads made of one statement, the connection in autocommit mode (already atomic)."""
        with self._lock:
            conn = self._connect()
            if self._traces_pending and not self.read_only:
                self._checkpoint(wait=False)
            try:
                if not write:
                    yield conn
                    return
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    raise StoreUnavailableError(
                        f"the SQLite store {self.path!r} is locked by another writer: {exc}"
                    ) from exc
                raise StoreError(f"SQLite store {self.path!r} failed: {exc}") from exc
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite store {self.path!r} failed: {exc}") from exc

    def close(self) -> None:
        """Close the connection; a later call reopens it."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._setup_done = False

    # -- schema --------------------------------------------------------------------------

    def schema_version(self) -> int:
        """The schema version recorded in the file (0 before :meth:`setup`)."""
        with self._tx(write=False) as conn:
            return read_version(conn)

    def _setup(self) -> None:
        if self.read_only:
            with self._tx(write=False) as conn:
                version = read_version(conn)
                self._has_tombstones = version >= 2
            if version == 0:
                raise StoreNotFoundError(f"no store at {self.path!r} (not a memory_chains file)")
            if version > len(MIGRATIONS):
                raise SchemaVersionError(
                    f"{self.path!r} has schema version {version}, newer than the "
                    f"{len(MIGRATIONS)} this memory_chains knows: upgrade memory_chains"
                )
            return
        self._has_tombstones = True
        with self._tx(write=True) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS mc_schema (version INTEGER NOT NULL)")
            version = read_version(conn)
            if version > len(MIGRATIONS):
                raise SchemaVersionError(
                    f"{self.path!r} has schema version {version}, newer than the "
                    f"{len(MIGRATIONS)} this memory_chains knows: upgrade memory_chains"
                )
            for statements in MIGRATIONS[version:]:
                for statement in statements:
                    conn.execute(statement)
            if version == 0:
                conn.execute("DELETE FROM mc_schema")
                conn.execute("INSERT INTO mc_schema (version) VALUES (?)", (len(MIGRATIONS),))
            elif version < len(MIGRATIONS):
                conn.execute("UPDATE mc_schema SET version = ?", (len(MIGRATIONS),))

    # -- turn log ------------------------------------------------------------------------

    def _append_turn(
        self, user_id: str, session_id: str, human: str, ai: str, metadata_json: str, now: float
    ) -> Turn:
        with self._tx(write=True) as conn:
            refuse_forgotten(conn, user_id, session_id)
            row = conn.execute(
                "SELECT last_seq FROM mc_sessions WHERE user_id = ? AND session_id = ?",
                (user_id, session_id),
            ).fetchone()
            seq = (row[0] if row else 0) + 1
            conn.execute(
                "INSERT INTO mc_turns (user_id, session_id, seq, human, ai, metadata, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (user_id, session_id, seq, human, ai, metadata_json, now),
            )
            conn.execute(
                "INSERT INTO mc_sessions"
                " (user_id, session_id, turn_count, last_seq, created_at, updated_at)"
                " VALUES (?, ?, 1, ?, ?, ?)"
                " ON CONFLICT (user_id, session_id) DO UPDATE SET"
                " turn_count = turn_count + 1, last_seq = excluded.last_seq,"
                " updated_at = excluded.updated_at",
                (user_id, session_id, seq, now, now),
            )
        return Turn(seq, human, ai, now, json.loads(metadata_json))

    def _read_turns(
        self, user_id: str, session_id: str, after_seq: int, last: int | None
    ) -> list[Turn]:
        with self._tx(write=False) as conn:
            if last is None:
                rows = conn.execute(
                    "SELECT seq, human, ai, created_at, metadata FROM mc_turns"
                    " WHERE user_id = ? AND session_id = ? AND seq > ? ORDER BY seq",
                    (user_id, session_id, after_seq),
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT seq, human, ai, created_at, metadata FROM mc_turns"
                    " WHERE user_id = ? AND session_id = ? AND seq > ?"
                    " ORDER BY seq DESC LIMIT ?",
                    (user_id, session_id, after_seq, last),
                ).fetchall()
                rows.reverse()
        return [Turn(r[0], r[1], r[2], r[3], load_object(r[4])) for r in rows]

    def _count_turns(self, user_id: str, session_id: str) -> tuple[int, int]:
        with self._tx(write=False) as conn:
            row = conn.execute(
                "SELECT turn_count, last_seq FROM mc_sessions WHERE user_id = ? AND session_id = ?",
                (user_id, session_id),
            ).fetchone()
        return (row[0], row[1]) if row else (0, 0)

    def _erase_traces(self) -> None:
        """Copy the WAL back into the database and truncate it, so that deleted content
        does not linger in the WAL file after a delete (with ``secure_delete`` on, the
        database pages are zeroed).

        A connection (of any process) still reading a snapshot older than the delete
        keeps the old frames alive: the checkpoint waits for it up to ``timeout``. If it
        is still reading then, the erasure is retried at every later call of this store
        (and completes when the last connection closes), and the caller is told.

        Raises:
            StoreUnavailableError: a reader prevented the truncation; the rows are deleted,
                their bytes are erased as soon as the reader is done.
        """
        with self._lock:
            self._traces_pending = True
            # the checkpoint's busy handler does not wait for every kind of reader (a
            # writer of another process between two transactions answers "busy" at
            # once): poll until the timeout
            deadline = time.monotonic() + self.timeout
            pause = 0.005
            while not self._checkpoint(wait=True) and time.monotonic() < deadline:
                time.sleep(pause)
                pause = min(pause * 2, 0.1)
            if self._traces_pending:
                raise StoreUnavailableError(
                    f"SQLite store {self.path!r}: the rows are deleted, but another "
                    f"connection has been reading an older snapshot for more than "
                    f"{self.timeout:g} s, so their bytes are still in the -wal file; they "
                    "are erased at the next call to this store once that reader is done "
                    "(retry the deletion to make sure)"
                )

    def _checkpoint(self, *, wait: bool) -> bool:
        """Checkpoint the WAL and truncate it; False if a reader prevented it."""
        done = checkpoint_wal(self._connect(), self.path, self.timeout, wait=wait)
        if done:
            self._traces_pending = False
        return done

    def _delete_session(self, user_id: str, session_id: str) -> int:
        deleted = self._delete_session_rows(user_id, session_id)
        self._erase_traces()
        return deleted

    def _after_erasure(self) -> None:
        """``VACUUM``, then truncate the WAL: ``secure_delete`` zeroes deleted rows, but a
        B-tree page split leaves a stale copy of the cells it moved in the old page's free
        space, which only rebuilding the file removes (cost: one pass over the file).

        Raises:
            StoreUnavailableError: another connection kept the file busy for ``timeout``;
                the rows are deleted, their stale copies go at the next erasure.
        """
        with self._lock:
            vacuum(self._connect(), self.path)
        self._erase_traces()

    def _delete_session_rows(self, user_id: str, session_id: str) -> int:
        with self._tx(write=True) as conn:
            deleted = conn.execute(
                "DELETE FROM mc_turns WHERE user_id = ? AND session_id = ?",
                (user_id, session_id),
            ).rowcount
            conn.execute(
                "DELETE FROM mc_sessions WHERE user_id = ? AND session_id = ?",
                (user_id, session_id),
            )
            # reset rather than delete: the version advances, so a compaction of the old
            # turns still running elsewhere fails its compare-and-swap
            conn.execute(
                "INSERT INTO mc_summaries"
                " (user_id, session_id, text, upto_seq, data, version, updated_at)"
                " VALUES (?, ?, '', 0, '{}', 1, ?)"
                " ON CONFLICT (user_id, session_id) DO UPDATE SET text = '', upto_seq = 0,"
                " data = '{}', version = version + 1, updated_at = excluded.updated_at",
                (user_id, session_id, time.time()),
            )
        return int(deleted)

    def _list_sessions(self, user_id: str) -> list[str]:
        with self._tx(write=False) as conn:
            rows = conn.execute(
                "SELECT session_id FROM mc_sessions WHERE user_id = ?"
                " UNION SELECT session_id FROM mc_summaries WHERE user_id = ? AND upto_seq > 0"
                " ORDER BY 1",
                (user_id, user_id),
            ).fetchall()
        return [r[0] for r in rows]

    # -- running summary -----------------------------------------------------------------

    def _get_summary(self, user_id: str, session_id: str) -> SummaryState | None:
        with self._tx(write=False) as conn:
            row = conn.execute(
                "SELECT text, upto_seq, data, version, updated_at FROM mc_summaries"
                " WHERE user_id = ? AND session_id = ?",
                (user_id, session_id),
            ).fetchone()
        if row is None:
            return None
        return SummaryState(row[0], row[1], load_stored_json(row[2]), row[3], row[4])

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
        with self._tx(write=True) as conn:
            refuse_forgotten(conn, user_id, session_id)
            row = conn.execute(
                "SELECT version FROM mc_summaries WHERE user_id = ? AND session_id = ?",
                (user_id, session_id),
            ).fetchone()
            if (row[0] if row else 0) != expected_version:
                return None
            conn.execute(
                "INSERT INTO mc_summaries"
                " (user_id, session_id, text, upto_seq, data, version, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (user_id, session_id) DO UPDATE SET text = excluded.text,"
                " upto_seq = excluded.upto_seq, data = excluded.data,"
                " version = excluded.version, updated_at = excluded.updated_at",
                (user_id, session_id, text, upto_seq, data_json, expected_version + 1, now),
            )
        return SummaryState(text, upto_seq, json.loads(data_json), expected_version + 1, now)

    # -- documents -----------------------------------------------------------------------

    def _put(self, namespace: Namespace, key: str, value_json: str, now: float) -> None:
        with self._tx(write=True) as conn:
            refuse_forgotten(conn, *document_owner(namespace, key))
            conn.execute(
                UPSERT_DOCUMENT,
                (_SEP.join(namespace), key, value_json, now, now),
            )

    def _put_if(
        self, namespace: Namespace, key: str, value_json: str, expected_json: str | None, now: float
    ) -> bool:
        ns = _SEP.join(namespace)
        with self._tx(write=True) as conn:  # BEGIN IMMEDIATE: no other writer until COMMIT
            refuse_forgotten(conn, *document_owner(namespace, key))
            row = conn.execute(
                "SELECT value FROM mc_documents WHERE namespace = ? AND key = ?", (ns, key)
            ).fetchone()
            if (row[0] if row else None) != expected_json:
                return False
            conn.execute(
                UPSERT_DOCUMENT,
                (ns, key, value_json, now, now),
            )
        return True

    def _get(self, namespace: Namespace, key: str) -> Document | None:
        with self._tx(write=False) as conn:
            row = conn.execute(
                "SELECT value, created_at, updated_at FROM mc_documents"
                " WHERE namespace = ? AND key = ?",
                (_SEP.join(namespace), key),
            ).fetchone()
        if row is None:
            return None
        return Document(namespace, key, load_stored_json(row[0]), row[1], row[2])

    def _list(self, prefix: Namespace, limit: int | None) -> list[Document]:
        sql = "SELECT namespace, key, value, created_at, updated_at FROM mc_documents"
        params: list[object] = []
        if prefix:
            joined = _SEP.join(prefix)
            sql += " WHERE namespace = ? OR (namespace >= ? AND namespace < ?)"
            params += [joined, joined + _SEP, joined + _SEP_NEXT]
        sql += " ORDER BY namespace, key"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self._tx(write=False) as conn:
            rows = conn.execute(sql, params).fetchall()
        return [
            Document(tuple(r[0].split(_SEP)), r[1], load_stored_json(r[2]), r[3], r[4])
            for r in rows
        ]

    def _delete(self, namespace: Namespace, key: str) -> bool:
        with self._tx(write=True) as conn:
            count = conn.execute(
                "DELETE FROM mc_documents WHERE namespace = ? AND key = ?",
                (_SEP.join(namespace), key),
            ).rowcount
        if count:
            self._erase_traces()
        return count > 0

    # -- tombstones ----------------------------------------------------------------------

    def _add_tombstone(self, user_id: str, session_id: str | None, now: float) -> Tombstone:
        with self._tx(write=True) as conn:
            return add_tombstone(conn, user_id, session_id, now)

    def _remove_tombstones(self, user_id: str, session_id: str | None) -> int:
        with self._tx(write=True) as conn:
            return remove_tombstones(conn, user_id, session_id)

    def _tombstones(self, user_id: str) -> list[Tombstone]:
        if not self._has_tombstones:
            return []
        with self._tx(write=False) as conn:
            return list_tombstones(conn, user_id)
