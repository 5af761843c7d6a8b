"""Where memories are persisted: one interface (:class:`BaseStore`), one module per backend.

* :class:`InMemoryStore` (``memory://``): a dict, for tests and notebooks.
* :class:`SQLiteStore` (``sqlite:///path/to/file.sqlite3``): the embedded default, stdlib
  ``sqlite3`` in WAL mode, one file.
* :class:`RedisStore` (``redis://host:port/db``, ``rediss://``): keys under a prefix
  (``"mc:"``), atomic Lua scripts; needs the ``redis`` extra.
* :class:`PostgresStore` (``postgresql://user@host:port/db``, ``postgres://``): tables in
  the ``public`` schema through a connection pool; needs the ``postgres`` extra.
* :class:`ResilientStore` wraps any of them so that a conversation goes on, without
  memory, while the store is unreachable (``open_store(url, resilient=True)``).

:func:`open_store` maps a URL to a backend; backends' drivers are imported only when chosen.
:func:`export_user` and :func:`forget_user` gather or erase everything a store holds about
a user, on any backend; :func:`forget_session` erases one session. Both leave a
:class:`Tombstone` so that nothing more is stored about them until :func:`readmit_user` /
:func:`readmit_session`.

Example:
    >>> store = open_store("memory://")
    >>> store.append_turn("alice", "s1", "Hello", "Hi Alice").seq
    1
    >>> store.get_summary("alice", "s1").version
    0
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from memory_chains.errors import ConfigurationError, StoreNotFoundError
from memory_chains.stores._base import BaseStore
from memory_chains.stores._memory import InMemoryStore
from memory_chains.stores._privacy import (
    ForgetResult,
    export_user,
    forget_session,
    forget_user,
    readmit_session,
    readmit_user,
)
from memory_chains.stores._resilient import ResilienceStats, ResilientStore
from memory_chains.stores._values import (
    Document,
    Namespace,
    SummaryState,
    Tombstone,
    Turn,
    validate_id,
    validate_namespace,
)

if TYPE_CHECKING:
    from memory_chains.stores._postgres import PostgresStore
    from memory_chains.stores._redis import RedisStore
    from memory_chains.stores._sqlite import SQLiteStore

__all__ = [
    "BaseStore",
    "Document",
    "ForgetResult",
    "InMemoryStore",
    "Namespace",
    "PostgresStore",
    "RedisStore",
    "ResilienceStats",
    "ResilientStore",
    "SQLiteStore",
    "SummaryState",
    "Tombstone",
    "Turn",
    "export_user",
    "forget_session",
    "forget_user",
    "open_store",
    "readmit_session",
    "readmit_user",
    "validate_id",
    "validate_namespace",
]


_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


def __getattr__(name: str) -> Any:
    if name == "SQLiteStore":
        from memory_chains.stores._sqlite import SQLiteStore

        return SQLiteStore
    if name == "RedisStore":
        from memory_chains.stores._redis import RedisStore

        return RedisStore
    if name == "PostgresStore":
        from memory_chains.stores._postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module 'memory_chains.stores' has no attribute {name!r}")


def open_store(
    url: str | None = None,
    *,
    setup: bool = True,
    resilient: bool = False,
    read_only: bool = False,
    must_exist: bool | None = None,
) -> BaseStore:
    """Open the store a URL names, and (by default) create or migrate its schema.

    Args:
        url: ``memory://``, ``sqlite:///relative/path.sqlite3``,
            ``sqlite:////absolute/path.sqlite3`` (SQLAlchemy's convention; the path is
            percent-decoded, ``%20`` is a space) or ``sqlite:///:memory:``,
            ``redis://host:port/db`` (keys under ``mc:``) or
            ``postgresql://user@host:port/db`` (tables in ``public``); build
            :class:`RedisStore` or :class:`PostgresStore` directly for another key prefix
            or schema. ``None`` uses ``MEMORY_CHAINS_STORE``, else the file
            ``memory.sqlite3`` under ``MEMORY_CHAINS_HOME`` (taken as a path, never
            decoded as a URL).
        setup: call :meth:`BaseStore.setup` before returning.
        resilient: wrap the store in a :class:`ResilientStore`: while it is unreachable,
            reads return nothing and writes are dropped (one warning per outage) instead
            of raising; an unreachable server at setup is then not an error either.
        read_only: open an existing store without writing anything (SQLite ``mode=ro``,
            PostgreSQL read-only transactions); writes raise
            :class:`~memory_chains.errors.ReadOnlyStoreError`. For reading commands
            (export, listing, metrics), and files the user may only read.
        must_exist: refuse a store that does not exist yet instead of creating it
            (defaults to ``read_only``); for commands where a typo in the URL must not
            silently create an empty store (forget, merge…). Checked at setup.

    Raises:
        ConfigurationError: unknown scheme, a URL without a path or with control
            characters (NUL…).
        StoreNotFoundError: ``must_exist`` (or ``read_only``) and there is no store
            there; nothing was created.
        SchemaVersionError: the store was written by a newer memory_chains.
        StoreUnavailableError: a Redis or PostgreSQL server cannot be reached (only when
            ``setup`` is true and ``resilient`` false: constructors do no I/O).

    Example:
        >>> open_store("memory://").scheme
        'memory'
        >>> open_store("sqlite:///:memory:").scheme
        'sqlite'
        >>> open_store("sqlite:////no/such/dir/memory.sqlite3", read_only=True)
        Traceback (most recent call last):
        ...
        memory_chains.errors.StoreNotFoundError: no store at '/no/such/dir/memory.sqlite3' ...
    """
    if must_exist is None:
        must_exist = read_only
    store = _make_store(url, read_only)
    if must_exist and setup and not read_only and not store.exists():
        store.close()
        where = getattr(store, "path", None)
        raise StoreNotFoundError(
            f"no store at {where!r}: nothing was created" if where else f"no store in {store!r}"
        )
    if resilient:
        store = ResilientStore(store)
    if setup:
        store.setup()
    return store


def _make_store(url: str | None, read_only: bool) -> BaseStore:
    """The backend a URL names (no I/O); ``None``: the settings' default store."""
    if url is None:
        from memory_chains.config import load_settings

        settings = load_settings()
        if not settings.store_url:
            from memory_chains.stores._sqlite import SQLiteStore

            # a path, not a URL: a home holding "%2e%2e" stays under that very name
            return SQLiteStore(settings.home / "memory.sqlite3", read_only=read_only)
        url = settings.store_url
    if not isinstance(url, str) or "://" not in url:
        raise ConfigurationError(
            f"store URL {url!r:.200} is not a URL: use 'memory://', 'sqlite:///path/to/file', "
            "'redis://host:port/db' or 'postgresql://user@host/db'"
        )
    if _CONTROL_RE.search(url):
        raise ConfigurationError(
            f"store URL {url[:200]!r} holds a control character (NUL, newline…): "
            "percent-encode it (%00…) if it is really part of a path"
        )
    scheme = url.split("://", 1)[0].lower()
    store: BaseStore
    if scheme == "memory":
        store = InMemoryStore()
        store.read_only = read_only
    elif scheme == "sqlite":
        # SQLAlchemy's convention: sqlite:///relative.db, sqlite:////absolute/path.db
        rest = unquote(url.split("://", 1)[1])
        path = rest[1:] if rest.startswith("/") else rest
        if not path or "\x00" in path:
            raise ConfigurationError(f"store URL {url!r} has no file path (or a NUL in it)")
        from memory_chains.stores._sqlite import SQLiteStore

        store = SQLiteStore(path, read_only=read_only)
    elif scheme in ("redis", "rediss"):
        from memory_chains.stores._redis import RedisStore

        store = RedisStore(url, read_only=read_only)
    elif scheme in ("postgres", "postgresql"):
        from memory_chains.stores._postgres import PostgresStore

        store = PostgresStore(url, read_only=read_only)
    else:
        raise ConfigurationError(
            f"unknown store scheme {scheme!r} in {url[:200]!r}: use 'memory://', "
            "'sqlite:///path/to/file', 'redis://host:port/db' or 'postgresql://user@host/db'"
        )
    return store
