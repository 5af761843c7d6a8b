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

from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from memory_chains.errors import ConfigurationError
from memory_chains.stores._base import (
    BaseStore,
    Document,
    Namespace,
    SummaryState,
    Tombstone,
    Turn,
    validate_id,
    validate_namespace,
)
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


def open_store(url: str | None = None, *, setup: bool = True, resilient: bool = False) -> BaseStore:
    """Open the store a URL names, and (by default) create or migrate its schema.

    Args:
        url: ``memory://``, ``sqlite:///relative/path.sqlite3``,
            ``sqlite:////absolute/path.sqlite3`` (SQLAlchemy's convention) or
            ``sqlite:///:memory:``, ``redis://host:port/db`` (keys under ``mc:``) or
            ``postgresql://user@host:port/db`` (tables in ``public``); build
            :class:`RedisStore` or :class:`PostgresStore` directly for another key prefix
            or schema. ``None`` uses the settings'
            ``default_store_url`` (``MEMORY_CHAINS_STORE``, else a file under the home).
        setup: call :meth:`BaseStore.setup` before returning.
        resilient: wrap the store in a :class:`ResilientStore`: while it is unreachable,
            reads return nothing and writes are dropped (one warning per outage) instead
            of raising; an unreachable server at setup is then not an error either.

    Raises:
        ConfigurationError: unknown scheme or a URL without a path.
        SchemaVersionError: the store was written by a newer memory_chains.
        StoreUnavailableError: a Redis or PostgreSQL server cannot be reached (only when
            ``setup`` is true and ``resilient`` false: constructors do no I/O).

    Example:
        >>> open_store("memory://").scheme
        'memory'
        >>> open_store("sqlite:///:memory:").scheme
        'sqlite'
    """
    if url is None:
        from memory_chains.config import load_settings

        url = load_settings().default_store_url
    if not isinstance(url, str) or "://" not in url:
        raise ConfigurationError(
            f"store URL {url!r} is not a URL: use 'memory://', 'sqlite:///path/to/file', "
            "'redis://host:port/db' or 'postgresql://user@host/db'"
        )
    scheme = url.split("://", 1)[0].lower()
    store: BaseStore
    if scheme == "memory":
        store = InMemoryStore()
    elif scheme == "sqlite":
        # SQLAlchemy's convention: sqlite:///relative.db, sqlite:////absolute/path.db
        rest = unquote(url.split("://", 1)[1])
        path = rest[1:] if rest.startswith("/") else rest
        if not path:
            raise ConfigurationError(f"store URL {url!r} has no file path")
        from memory_chains.stores._sqlite import SQLiteStore

        store = SQLiteStore(path)
    elif scheme in ("redis", "rediss"):
        from memory_chains.stores._redis import RedisStore

        store = RedisStore(url)
    elif scheme in ("postgres", "postgresql"):
        from memory_chains.stores._postgres import PostgresStore

        store = PostgresStore(url)
    else:
        raise ConfigurationError(
            f"unknown store scheme {urlsplit(url).scheme!r} in {url!r}: use 'memory://', "
            "'sqlite:///path/to/file', 'redis://host:port/db' or 'postgresql://user@host/db'"
        )
    if resilient:
        store = ResilientStore(store)
    if setup:
        store.setup()
    return store
