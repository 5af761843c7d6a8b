"""The schema of :class:`~memory_chains.stores.PostgresStore`: :data:`MIGRATIONS`, the
advisory lock keys, and the statements shared by its methods (schema version, the
tombstone check every write makes).

Example:
    >>> len(MIGRATIONS), quote_option("my schema")
    (2, '"my\\\\ schema"')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_chains.stores._values import Tombstone, forgotten_error

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "LOCK_ID",
    "MIGRATIONS",
    "TOMB_LOCK",
    "add_tombstone",
    "list_tombstones",
    "quote_option",
    "read_version",
    "redact",
    "refuse_forgotten",
    "remove_tombstones",
]

LOCK_ID = 0x6D635F73  # advisory lock key for migrations ("mc_s")
TOMB_LOCK = 0x6D635F74  # first key of the per-user advisory locks of tombstones ("mc_t")

#: Ordered schema migrations; migration i (0-based) brings the schema to version i + 1.
#: Never edit a released entry: append a new one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE mc_sessions (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn_count BIGINT NOT NULL DEFAULT 0,
            last_seq BIGINT NOT NULL DEFAULT 0,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (user_id, session_id)
        )""",
        """CREATE TABLE mc_turns (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            human TEXT NOT NULL,
            ai TEXT NOT NULL,
            metadata JSONB NOT NULL DEFAULT '{}',
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (user_id, session_id, seq)
        )""",
        """CREATE TABLE mc_summaries (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            text TEXT NOT NULL,
            upto_seq BIGINT NOT NULL,
            data JSONB NOT NULL DEFAULT '{}',
            version BIGINT NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (user_id, session_id)
        )""",
        """CREATE TABLE mc_documents (
            namespace TEXT COLLATE "C" NOT NULL,
            key TEXT COLLATE "C" NOT NULL,
            value JSONB NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (namespace, key)
        )""",
    ),
    (
        # forgotten users (session_id '') and sessions: ids and time only
        """CREATE TABLE mc_tombstones (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            forgotten_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (user_id, session_id)
        )""",
    ),
)


def refuse_forgotten(
    conn: psycopg.Connection[Any], user_id: str | None, session_id: str | None
) -> None:
    """Inside a write transaction: take the user's advisory lock (shared) so no tombstone
    is added until commit, then raise if the user or session already has one. Two
    statements: in READ COMMITTED the check's snapshot must be taken after the lock."""
    if user_id is None:
        return
    conn.execute(
        "SELECT pg_advisory_xact_lock_shared(%s::int4, hashtext(%s))", (TOMB_LOCK, user_id)
    )
    row = conn.execute(
        "SELECT session_id, forgotten_at FROM mc_tombstones"
        " WHERE user_id = %s AND session_id IN ('', %s) ORDER BY session_id LIMIT 1",
        (user_id, session_id or ""),
    ).fetchone()
    if row is not None:
        raise forgotten_error(user_id, row[0] or None, float(row[1]))


def read_version(conn: psycopg.Connection[Any]) -> int:
    exists = conn.execute("SELECT to_regclass('mc_schema')").fetchone()
    if exists is None or exists[0] is None:
        return 0
    row = conn.execute("SELECT MAX(version) FROM mc_schema").fetchone()
    return int(row[0] or 0) if row else 0


def quote_option(schema: str) -> str:
    """The schema as a ``search_path`` value inside libpq ``options`` (quoted, escaped)."""
    quoted = '"' + schema.replace('"', '""') + '"'
    return quoted.replace("\\", "\\\\").replace(" ", "\\ ")


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    if "@" not in url:
        return url
    scheme, _, rest = url.partition("://")
    return f"{scheme}://***@{rest.rsplit('@', 1)[1]}"


def add_tombstone(
    conn: psycopg.Connection[Any], user_id: str, session_id: str | None, now: float
) -> Tombstone:
    """Insert the tombstone (if missing) under the user's exclusive advisory lock: the
    user's writes in flight commit first, later ones see it."""
    conn.execute("SELECT pg_advisory_xact_lock(%s::int4, hashtext(%s))", (TOMB_LOCK, user_id))
    conn.execute(
        "INSERT INTO mc_tombstones (user_id, session_id, forgotten_at)"
        " VALUES (%s, %s, %s) ON CONFLICT (user_id, session_id) DO NOTHING",
        (user_id, session_id or "", now),
    )
    row = conn.execute(
        "SELECT forgotten_at FROM mc_tombstones WHERE user_id = %s AND session_id = %s",
        (user_id, session_id or ""),
    ).fetchone()
    assert row is not None
    return Tombstone(user_id, session_id, float(row[0]))


def remove_tombstones(conn: psycopg.Connection[Any], user_id: str, session_id: str | None) -> int:
    """Delete the user's tombstones (``session_id=None``) or one session's."""
    if session_id is None:
        cur = conn.execute("DELETE FROM mc_tombstones WHERE user_id = %s", (user_id,))
    else:
        cur = conn.execute(
            "DELETE FROM mc_tombstones WHERE user_id = %s AND session_id = %s",
            (user_id, session_id),
        )
    return int(cur.rowcount)


def list_tombstones(conn: psycopg.Connection[Any], user_id: str) -> list[Tombstone]:
    """The user's tombstones, unordered."""
    rows = conn.execute(
        "SELECT session_id, forgotten_at FROM mc_tombstones WHERE user_id = %s", (user_id,)
    ).fetchall()
    return [Tombstone(user_id, r[0] or None, float(r[1])) for r in rows]
