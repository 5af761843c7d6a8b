"""One ``any_store`` fixture over every reachable backend, for suites written once.

In-memory and SQLite always run; Redis and PostgreSQL run when
``MEMORY_CHAINS_TEST_REDIS_URL`` / ``MEMORY_CHAINS_TEST_POSTGRES_URL`` point at a server
(``scripts/ci_services.sh``), are skipped otherwise, and fail under ``CI=true``. Each test
gets a fresh store (a new file, Redis key prefix or PostgreSQL schema).

Use it with ``from ._backends import any_store  # noqa: F401``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_chains.stores import BaseStore, InMemoryStore, SQLiteStore

from .test_stores_servers import (
    POSTGRES_ENV,
    REDIS_ENV,
    _drop_schema,
    _probe_postgres,
    _probe_redis,
    server_url,
)

BACKENDS = ["memory", "sqlite", "redis", "postgres"]


def make_store(kind: str, tmp_path: Path) -> BaseStore:
    """A fresh, set-up store of ``kind`` (skips or fails when its server is missing)."""
    store: BaseStore
    if kind == "memory":
        store = InMemoryStore()
    elif kind == "sqlite":
        store = SQLiteStore(tmp_path / f"{uuid.uuid4().hex}.sqlite3")
    elif kind == "redis":
        from memory_chains.stores import RedisStore

        store = RedisStore(
            server_url(REDIS_ENV, _probe_redis), prefix=f"mctest:{uuid.uuid4().hex}:"
        )
    elif kind == "postgres":
        from memory_chains.stores import PostgresStore

        store = PostgresStore(
            server_url(POSTGRES_ENV, _probe_postgres), schema=f"mc_test_{uuid.uuid4().hex}"
        )
    else:  # pragma: no cover - a typo in a test
        raise ValueError(kind)
    store.setup()
    return store


def drop_store(store: BaseStore) -> None:
    """Remove what a test store wrote on a server, then close it."""
    if store.scheme == "redis":
        store.clear()  # type: ignore[attr-defined]
    elif store.scheme == "postgresql":
        _drop_schema(store)  # type: ignore[arg-type]
    store.close()


@pytest.fixture(params=BACKENDS)
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseStore]:
    """A fresh store on each reachable backend."""
    store = make_store(request.param, tmp_path)
    yield store
    drop_store(store)
