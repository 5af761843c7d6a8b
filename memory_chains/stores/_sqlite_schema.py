"""The schema of :class:`~memory_chains.stores.SQLiteStore` and the statements its methods
share: :data:`MIGRATIONS`, the read-only connection, the tombstone check every write
transaction makes, the tombstones themselves.

Example:
    >>> import sqlite3
    >>> conn = sqlite3.connect(":memory:")
    >>> for statements in MIGRATIONS:
    ...     for statement in statements:
    ...         _ = conn.execute(statement)
    >>> add_tombstone(conn, "alice", None, 1.0).forgotten_at
    1.0
    >>> refuse_forgotten(conn, "alice", "s1")
    Traceback (most recent call last):
    ...
    memory_chains.errors.ForgottenError: user 'alice' was forgotten at 1970-01-01 00:00:01 UTC...
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from memory_chains.errors import StoreError, StoreNotFoundError, StoreUnavailableError
from memory_chains.stores._values import Tombstone, forgotten_error, load_stored_json

__all__ = [
    "MIGRATIONS",
    "UPSERT_DOCUMENT",
    "add_tombstone",
    "checkpoint_wal",
    "connect_read_only",
    "connect_read_write",
    "list_tombstones",
    "load_object",
    "read_version",
    "refuse_forgotten",
    "remove_tombstones",
    "vacuum",
]

#: Ordered schema migrations; migration i (0-based) brings the schema to version i + 1.
#: Never edit a released entry: append a new one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE mc_sessions (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn_count INTEGER NOT NULL DEFAULT 0,
            last_seq INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (user_id, session_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE mc_turns (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            human TEXT NOT NULL,
            ai TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            PRIMARY KEY (user_id, session_id, seq)
        ) WITHOUT ROWID""",
        """CREATE TABLE mc_summaries (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            text TEXT NOT NULL,
            upto_seq INTEGER NOT NULL,
            data TEXT NOT NULL DEFAULT '{}',
            version INTEGER NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (user_id, session_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE mc_documents (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (namespace, key)
        ) WITHOUT ROWID""",
    ),
    (
        # forgotten users (session_id '') and sessions: ids and time only
        """CREATE TABLE mc_tombstones (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            forgotten_at REAL NOT NULL,
            PRIMARY KEY (user_id, session_id)
        ) WITHOUT ROWID""",
    ),
)

FORGOTTEN = (
    "SELECT session_id, forgotten_at FROM mc_tombstones"
    " WHERE user_id = ? AND session_id IN ('', ?) ORDER BY session_id LIMIT 1"
)


# Insert a document or replace its value (its creation time stays).
UPSERT_DOCUMENT = (
    "INSERT INTO mc_documents (namespace, key, value, created_at, updated_at)"
    " VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value,"
    " updated_at = excluded.updated_at"
)


def checkpoint_wal(conn: sqlite3.Connection, path: str, timeout: float, *, wait: bool) -> bool:
    """Checkpoint the WAL and truncate it; False if a reader prevented it.

    Without ``wait`` the busy handler is off: a failed attempt costs nothing.

    Raises:
        StoreError: SQLite failed for another reason.
    """
    try:
        if not wait:
            conn.execute("PRAGMA busy_timeout = 0")
        try:
            row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            if not wait:
                # PRAGMA takes no parameters: an int formatted in, nothing else
                conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    except sqlite3.Error as exc:
        raise StoreError(f"SQLite store {path!r} failed: {exc}") from exc
    return row is None or row[0] == 0


def _enter_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Put the database in WAL mode, waiting up to ``timeout`` for other openers.

    Switching a new file to WAL takes an exclusive lock, and SQLite answers "database is
    locked" at once, without its busy handler, when another process opens the same new
    file at that moment: the switch is retried instead. A database already in WAL mode
    needs no lock at all.
    """
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            row = conn.execute("PRAGMA journal_mode").fetchone()
            if row is not None and str(row[0]).lower() == "wal":
                return
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)


def connect_read_write(path: str, timeout: float) -> sqlite3.Connection:
    """A connection in WAL mode with ``secure_delete`` (its directory created).

    Raises:
        StoreUnavailableError: the file cannot be opened or created.
    """
    try:
        if path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            os.path.expanduser(path),
            timeout=timeout,
            isolation_level=None,  # the store issues BEGIN/COMMIT itself
            check_same_thread=False,  # guarded by the store's lock
        )
        _enter_wal(conn, timeout)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        # Deleted rows are overwritten with zeros, so that forgetting a user leaves no
        # trace of their messages in free pages (see SQLiteStore._erase_traces).
        conn.execute("PRAGMA secure_delete=ON")
    except (sqlite3.Error, OSError) as exc:
        raise StoreUnavailableError(f"cannot open the SQLite store {path!r}: {exc}") from exc
    return conn


def connect_read_only(path: str, timeout: float) -> sqlite3.Connection:
    """A ``mode=ro`` connection, or ``immutable=1`` when SQLite cannot even create
    the ``-shm`` file beside a WAL database (a directory the user may not write)."""
    file = Path(path).expanduser()
    if path == ":memory:" or not file.is_file():
        raise StoreNotFoundError(f"no store at {path!r} (no such file)")
    base = file.resolve().as_uri()
    last: sqlite3.Error | None = None
    for query in ("?mode=ro", "?mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(
                base + query,
                uri=True,
                timeout=timeout,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            last = exc
            continue
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.DatabaseError as exc:
            conn.close()
            last = exc
            if "not a database" in str(exc):
                break
    raise StoreError(f"cannot read the SQLite store {path!r}: {last}") from last


def add_tombstone(
    conn: sqlite3.Connection, user_id: str, session_id: str | None, now: float
) -> Tombstone:
    """Insert the tombstone if missing (inside a write transaction); the stored one."""
    conn.execute(
        "INSERT INTO mc_tombstones (user_id, session_id, forgotten_at) VALUES (?, ?, ?)"
        " ON CONFLICT (user_id, session_id) DO NOTHING",
        (user_id, session_id or "", now),
    )
    row = conn.execute(
        "SELECT forgotten_at FROM mc_tombstones WHERE user_id = ? AND session_id = ?",
        (user_id, session_id or ""),
    ).fetchone()
    return Tombstone(user_id, session_id, float(row[0]))


def remove_tombstones(conn: sqlite3.Connection, user_id: str, session_id: str | None) -> int:
    """Delete the user's tombstones (``session_id=None``) or one session's."""
    if session_id is None:
        cur = conn.execute("DELETE FROM mc_tombstones WHERE user_id = ?", (user_id,))
    else:
        cur = conn.execute(
            "DELETE FROM mc_tombstones WHERE user_id = ? AND session_id = ?",
            (user_id, session_id),
        )
    return int(cur.rowcount)


def list_tombstones(conn: sqlite3.Connection, user_id: str) -> list[Tombstone]:
    """The user's tombstones, unordered."""
    rows = conn.execute(
        "SELECT session_id, forgotten_at FROM mc_tombstones WHERE user_id = ?", (user_id,)
    ).fetchall()
    return [Tombstone(user_id, r[0] or None, float(r[1])) for r in rows]


def refuse_forgotten(conn: sqlite3.Connection, user_id: str | None, session_id: str | None) -> None:
    """Raise inside a write transaction if the user or session has a tombstone."""
    if user_id is None:
        return
    row = conn.execute(FORGOTTEN, (user_id, session_id or "")).fetchone()
    if row is not None:
        raise forgotten_error(user_id, row[0] or None, float(row[1]))


def load_object(text: str) -> dict[str, object]:
    value: dict[str, object] = {} if text == "{}" else load_stored_json(text)
    return value


def read_version(conn: sqlite3.Connection) -> int:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'mc_schema'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT MAX(version) FROM mc_schema").fetchone()
    return int(row[0] or 0)


def vacuum(conn: sqlite3.Connection, path: str) -> None:
    """Rebuild the file (``VACUUM``), so that no stale copy of a deleted cell stays in a
    page's free space.

    Raises:
        StoreUnavailableError: another connection kept the file busy.
        StoreError: SQLite failed for another reason.
    """
    try:
        conn.execute("VACUUM")
    except sqlite3.OperationalError as exc:
        raise StoreUnavailableError(
            f"SQLite store {path!r}: the rows are deleted, but the file could not be "
            f"rebuilt to drop stale copies of them ({exc}); retry the erasure"
        ) from exc
    except sqlite3.Error as exc:
        raise StoreError(f"SQLite store {path!r} failed: {exc}") from exc
